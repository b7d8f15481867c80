// Package sandbox owns the lifecycle of a server under test: a build × a
// config in a folder of its own under the qpslab home. It initialises the
// datadir, starts the server on a private unix socket and a free loopback
// port, waits until it answers, creates qpslab's benchmark database, and stops
// it (gracefully, then by force). Every other part of qpslab gets servers from
// here. It never touches a folder it did not create, and it leaves no process
// behind: a cancelled context during start kills what was started, StopAll
// stops whatever is still running, and a server started for a run dies with
// the process that started it even when that process is killed outright (see
// guard.go); Recover cleans what such a death left in the home. A server that
// dies on its own is told as it is: Exited and Exit give the exit status or
// signal and the log lines that explain it.
package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"gopkg.in/yaml.v3"

	"github.com/qpslab/qpslab/internal/atomicfile"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/names"
)

// Database is the database qpslab creates in every sandbox and keeps its
// benchmark tables in.
const Database = "qpslab"

// Spec says what to start.
type Spec struct {
	Name         string // sandbox name; default BUILD.CONFIG
	Build        build.Build
	Config       config.Config
	Port         int           // 0: a free loopback port
	Datadir      string        // "": <sandbox>/data; else this folder (it must be empty or qpslab's)
	Reuse        bool          // keep an existing datadir instead of making a new one
	Detach       bool          // the server outlives this process (qpslab server start)
	StartTimeout time.Duration // default 3 minutes
	StopTimeout  time.Duration // default 2 minutes, then SIGKILL
	// AllowFiles are the files, folders and commands outside the sandbox
	// that the config may point the server at (--allow-server-file; see
	// config.CheckServerFiles): any other such setting is refused.
	AllowFiles []string
}

// SnapshotSuffix ends the folder beside a datadir that holds a copy of
// it, which a plan keeps to restore the tables between repeats (and
// removes when it ends; Recover, when its qpslab died).
const SnapshotSuffix = ".snapshot"

// State is what a sandbox folder records about its server, in sandbox.yaml.
// The file is also the mark that qpslab made the folder.
type State struct {
	Name       string          `yaml:"name"`
	Build      string          `yaml:"build"`
	Flavor     build.Flavor    `yaml:"flavor"`
	Version    string          `yaml:"version"`
	Basedir    string          `yaml:"basedir"`
	Config     string          `yaml:"config"` // name@hash
	ConfigHash string          `yaml:"config_hash"`
	Dir        string          `yaml:"dir"`
	Datadir    string          `yaml:"datadir"`
	RunDir     string          `yaml:"run_dir"`
	Log        string          `yaml:"log"`
	Endpoint   client.Endpoint `yaml:"endpoint"`
	User       string          `yaml:"user,omitempty"` // OS account of the server, if not qpslab's
	PID        int             `yaml:"pid"`            // 0 when stopped
	Started    time.Time       `yaml:"started,omitempty"`
	Stopped    time.Time       `yaml:"stopped,omitempty"`
	Detached   bool            `yaml:"detached"`
	OwnRunDir  bool            `yaml:"own_run_dir,omitempty"` // RunDir is a short /tmp folder qpslab made
	Program    string          `yaml:"program,omitempty"`     // the server binary
	Owner      string          `yaml:"owner,omitempty"`       // the qpslab process that started it: boot id/pid/start time
	Failed     string          `yaml:"failed,omitempty"`      // why the last start failed
	Died       string          `yaml:"died,omitempty"`        // how the server last ended when qpslab had not stopped it
	Scratch    bool            `yaml:"scratch,omitempty"`     // a build that is no server: a folder for a suite's own program (Scratch)
}

// Running reports whether the recorded server process is alive.
func (s State) Running() bool { return alive(s.PID, s.Datadir) }

// Status is running, stopped, failed (the last start failed) or died (the
// server ended without being stopped); scratch for the folder of a build
// that is no server (Scratch).
func (s State) Status() string {
	switch {
	case s.Scratch:
		return "scratch" // a run's folder, removed when the run ends
	case s.Running():
		return "running"
	case s.Failed != "":
		return "failed"
	case s.Died != "":
		return "died"
	}
	return "stopped"
}

const stateFile = "sandbox.yaml"

// Server is a running sandboxed server.
type Server struct {
	State
	fl       flavor
	cmd      *exec.Cmd
	exited   chan struct{}
	waitErr  error
	exit     Exit // set before exited is closed
	logStart int64
	stopping atomic.Bool // qpslab is stopping it: its end is no death
	stopOnce sync.Once
	stopErr  error
	timeout  time.Duration
}

// Endpoint is where clients reach the server, in qpslab's database.
func (s *Server) Endpoint() client.Endpoint { return s.State.Endpoint }

// Exit is how a server process ended.
type Exit struct {
	Status  string // "killed by signal 9 (SIGKILL)", "exited with status 1"
	Cause   string // the server-log lines that explain it, " | " joined; "" when none does
	Log     string // the server log
	Stopped bool   // qpslab stopped it (Stop, StopAll, a failed or cancelled start)
}

// String is the exit as one line: "killed by signal 9 (SIGKILL); log: …
// (full log: …/server.log)".
func (e Exit) String() string {
	if e.Status == "" {
		return ""
	}
	s := e.Status
	if e.Cause != "" {
		s += "; log: " + e.Cause
	}
	if e.Log != "" {
		s += " (full log: " + e.Log + ")"
	}
	return s
}

// Exited is closed when the server process has ended, for whatever reason;
// Exit then says how.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Exit says how the server process ended; the zero Exit while it runs.
func (s *Server) Exit() Exit {
	select {
	case <-s.exited:
		return s.exit
	default:
		return Exit{}
	}
}

// ExitCause is Exit as one line ("" while the server runs), for a message
// such as "server died: killed by signal 9 (SIGKILL); log: … (full log: …)".
func (s *Server) ExitCause() string { return s.Exit().String() }

// live holds the servers this process started and has not stopped yet.
var live = struct {
	sync.Mutex
	m map[*Server]struct{}
}{m: map[*Server]struct{}{}}

// StopAll stops every server this process started that is still running,
// except detached ones. Commands call it on their way out, so that no path
// (an error, SIGINT, SIGTERM) leaves a server behind.
func StopAll() error {
	live.Lock()
	var all []*Server
	for s := range live.m {
		all = append(all, s)
	}
	live.Unlock()
	var errs []error
	for _, s := range all {
		if !s.Detached {
			errs = append(errs, s.Stop())
		}
	}
	return errors.Join(errs...)
}

// Dir is the folder of sandbox name.
func Dir(h home.Home, name string) string { return filepath.Join(h.Sandboxes(), name) }

// DefaultName is BUILD.CONFIG, the label the seeds use (ma100244_rel.cz11a_bee).
func DefaultName(b build.Build, c config.Config) string { return b.Name + "." + c.Name }

// Start makes the sandbox's folder and datadir, starts the server and waits
// until it answers and holds qpslab's database. If ctx ends first, whatever was
// started is killed and ctx's error returned.
func Start(ctx context.Context, h home.Home, spec Spec) (srv *Server, err error) {
	if spec.Name == "" {
		spec.Name = DefaultName(spec.Build, spec.Config)
	}
	if err := names.Sandbox(spec.Name); err != nil {
		return nil, err
	}
	if !spec.Build.Flavor.HasServer() {
		return nil, fmt.Errorf("build %s is %s, which has no server to start: a suite runs it (qpslab run db_bench --build %s)", spec.Build.Name, spec.Build.Flavor, spec.Build.Name)
	}
	if fam := config.Family(spec.Build.Flavor.Describe().Family); fam != spec.Config.Family {
		return nil, fmt.Errorf("config %s is a %s config and build %s is %s: use a %s config", spec.Config.Name, spec.Config.Family, spec.Build.Name, spec.Build.Flavor, fam)
	}
	fl, err := flavorOf(spec.Build.Flavor)
	if err != nil {
		return nil, err
	}
	if spec.Port < 0 || spec.Port > 65535 {
		return nil, fmt.Errorf("--port %d: give a TCP port from 1 to 65535, or leave --port out for a free one", spec.Port)
	}
	if spec.StartTimeout == 0 {
		spec.StartTimeout = 3 * time.Minute
	}
	if spec.StopTimeout == 0 {
		spec.StopTimeout = 2 * time.Minute
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("start %s: %w", spec.Name, err)
		}
	}()
	layout, err := spec.Build.Layout()
	if err != nil {
		return nil, err
	}
	if err := config.CheckServerFiles(spec.Config, spec.AllowFiles); err != nil {
		return nil, err
	}
	dir := Dir(h, spec.Name)
	if err := ensureSandboxes(h); err != nil {
		return nil, err
	}
	prev, err := claimDir(dir)
	if err != nil {
		return nil, err
	}
	unlock, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if prev != nil {
		if prev, err = readState(dir); err != nil { // re-read under the lock
			return nil, err
		}
		if prev.Running() {
			return nil, fmt.Errorf("sandbox %s is already running (pid %d, port %d): stop it with qpslab server stop %s, or pass --name for another sandbox", spec.Name, prev.PID, prev.Endpoint.Port, spec.Name)
		}
	}
	// From here a failure is this sandbox's: sandbox.yaml says so, for
	// qpslab server status and prune.
	defer func() {
		if err != nil {
			if st, rerr := readState(dir); rerr == nil {
				st.PID, st.Failed = 0, oneLine(err.Error())
				writeState(dir, *st)
			}
		}
	}()
	if err := startReaper(); err != nil {
		return nil, err
	}
	as, err := serverUser(fl.accounts())
	if err != nil {
		return nil, err
	}
	if err := privateFolder(dir, as); err != nil {
		return nil, err
	}
	s := &setup{b: spec.Build, layout: layout, cfg: config.ForServer(spec.Config.Content, string(spec.Build.Flavor), spec.Build.AtLeast), dir: dir, as: as}
	if s.datadir, err = prepareDatadir(spec, prev, dir, fl); err != nil {
		return nil, err
	}
	// The datadir and the server's folders are given to the server's
	// account below (the sandbox folder lets it pass through: privateFolder);
	// the folders above them and the binaries must be reachable.
	binKnob, binExample := "QPSLAB_CACHE", filepath.Join(home.RootDefault, "cache")
	if src := spec.Build.Source; src != "maven" && src != "file" {
		binKnob, binExample = "the basedir of build "+spec.Build.Name+" (qpslab builds add "+spec.Build.Name+" --replace --basedir DIR)", "/opt/"+spec.Build.Name
	}
	for _, p := range []struct{ path, knob, example string }{
		{filepath.Dir(dir), "QPSLAB_HOME", home.RootDefault},
		{filepath.Dir(s.datadir), "--datadir", filepath.Join(home.RootDefault, "data")},
		{layout.Server, binKnob, binExample},
	} {
		if err := reachable(as, p.path, p.knob, p.example); err != nil {
			return nil, err
		}
	}
	ownRun := false
	if s.runDir, ownRun, err = makeRunDir(dir, as); err != nil {
		return nil, err
	}
	st := State{
		Name: spec.Name, Build: spec.Build.Name, Flavor: spec.Build.Flavor, Version: spec.Build.Version,
		Basedir: spec.Build.Basedir, Config: spec.Config.ID(), ConfigHash: spec.Config.Hash(),
		Dir: dir, Datadir: s.datadir, RunDir: s.runDir, OwnRunDir: ownRun,
		Log: filepath.Join(dir, "server.log"), Detached: spec.Detach, Owner: ownerToken(),
	}
	if as != nil {
		st.User = as.Name
	}
	if err := writeState(dir, st); err != nil { // from here the datadir is qpslab's
		return nil, err
	}
	if err := chownTree(as, s.datadir); err != nil {
		return nil, fmt.Errorf("give %s to user %s: %w", s.datadir, as.Name, err)
	}
	for _, d := range fl.folders(s) {
		if err := serverFolder(d, as); err != nil {
			return nil, err
		}
	}
	if !fl.initialized(s.datadir) {
		if err := initDatadir(ctx, s, fl); err != nil {
			return nil, err
		}
	}
	if err := fl.writeConfig(s); err != nil {
		return nil, fmt.Errorf("write config %s: %w", spec.Config.Name, err)
	}
	// A port picked here can be taken by someone else before the server binds
	// it; with an automatic port that is retried, with --port it is an error.
	for attempt := 1; ; attempt++ {
		if s.port, err = choosePort(spec.Port); err != nil {
			return nil, err
		}
		srv, err = launch(ctx, s, fl, st, spec)
		if err == nil || spec.Port != 0 || attempt == 3 || !errors.Is(err, errAddrInUse) {
			break
		}
	}
	if err != nil {
		if ownRun {
			os.RemoveAll(s.runDir)
		}
		return nil, err
	}
	return srv, nil
}

// claimDir makes sure dir is a sandbox folder qpslab made, or creates it. It
// returns the previous state if there was one.
func claimDir(dir string) (*State, error) {
	prev, err := readState(dir)
	if err == nil {
		return prev, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ents, rerr := os.ReadDir(dir)
	if rerr == nil && len(ents) > 0 {
		only := len(ents) == 1 && ents[0].Name() == ".lock"
		if !only {
			return nil, fmt.Errorf("%s exists and was not made by qpslab (no %s): move it away or choose another --name", dir, stateFile)
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create %s: %w", dir, unwrap(err))
	}
	// Mark the folder as qpslab's before anything goes into it.
	if err := writeState(dir, State{Name: filepath.Base(dir), Dir: dir}); err != nil {
		return nil, err
	}
	return nil, nil
}

// prepareDatadir decides where the datadir is and empties it unless it is to
// be reused. It only ever removes a datadir that qpslab made.
func prepareDatadir(spec Spec, prev *State, dir string, fl flavor) (string, error) {
	datadir := filepath.Join(dir, "data")
	if spec.Datadir != "" {
		abs, err := filepath.Abs(spec.Datadir)
		if err != nil {
			return "", fmt.Errorf("resolve --datadir %s: %w", spec.Datadir, err)
		}
		datadir = abs
	}
	ours := datadir == filepath.Join(dir, "data") || (prev != nil && prev.Datadir == datadir)
	ents, err := os.ReadDir(datadir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("datadir %s: %w", datadir, unwrap(err))
	case len(ents) > 0 && !ours:
		return "", fmt.Errorf("datadir %s is not empty and was not made by qpslab: choose an empty or new --datadir", datadir)
	case len(ents) > 0 && spec.Reuse:
		if prev != nil && prev.Flavor != spec.Build.Flavor {
			return "", fmt.Errorf("datadir %s holds a %s datadir, not %s: start without --reuse-datadir to make a new one", datadir, prev.Flavor, spec.Build.Flavor)
		}
		if !fl.initialized(datadir) {
			return "", fmt.Errorf("datadir %s is not an initialised %s datadir: start without --reuse-datadir to make a new one", datadir, spec.Build.Flavor)
		}
		return datadir, nil
	case len(ents) > 0:
		if err := os.RemoveAll(datadir); err != nil {
			return "", fmt.Errorf("remove the old datadir %s: %w", datadir, unwrap(err))
		}
	}
	if err := os.MkdirAll(datadir, 0o700); err != nil {
		return "", fmt.Errorf("datadir %s is not writable (%v): choose a writable --datadir or fix its permissions", datadir, unwrap(err))
	}
	// Root can create folders almost anywhere, but not on a read-only or
	// immutable file system: write a probe to be sure.
	probe := filepath.Join(datadir, ".qpslab-probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		return "", fmt.Errorf("datadir %s is not writable (%v): choose a writable --datadir or fix its permissions", datadir, unwrap(err))
	}
	os.Remove(probe)
	os.Chmod(datadir, 0o700) // PostgreSQL insists on 0700 or 0750
	return datadir, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// makeRunDir returns the folder for the unix socket: <sandbox>/run, or, when
// that path is too long for a socket address (108 bytes on Linux, and
// PostgreSQL appends /.s.PGSQL.NNNNN), a short folder under /tmp that qpslab
// makes and removes; private either way (serverFolder).
func makeRunDir(dir string, as *runAs) (string, bool, error) {
	run := filepath.Join(dir, "run")
	own := false
	if len(run)+len("/.s.PGSQL.65535.lock") >= 100 {
		sum := sha256.Sum256([]byte(dir))
		run = filepath.Join(os.TempDir(), "qpslab-"+hex.EncodeToString(sum[:6]))
		own = true
	}
	if err := serverFolder(run, as); err != nil {
		return "", false, fmt.Errorf("socket folder: %w", err)
	}
	return run, own, nil
}

var errAddrInUse = errors.New("address in use")

// choosePort checks that a requested port is free on loopback, or picks one.
func choosePort(want int) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(want)))
	if err != nil {
		if want != 0 && errors.Is(err, syscall.EADDRINUSE) {
			return 0, fmt.Errorf("port %d is in use on 127.0.0.1: choose another with --port, or leave --port out to get a free one", want)
		}
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port, nil
}

// initDatadir runs the flavor's init program (mariadb-install-db,
// mysql_install_db, mysqld --initialize-insecure or initdb), logging to
// init.log in the sandbox. It dies with this process (guard.go).
func initDatadir(ctx context.Context, s *setup, fl flavor) error {
	path, args := fl.initCommand(s)
	logPath := filepath.Join(s.dir, "init.log")
	logf, err := createPrivate(logPath, nil)
	if err != nil {
		return fmt.Errorf("create %s: %w", logPath, err)
	}
	defer logf.Close()
	cmd := exec.Command(path, args...)
	cmd.Dir = s.dir
	cmd.Env = append(s.layout.Env(os.Environ()), "LC_ALL=C")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr(s.as)
	if err := startTied(cmd); err != nil {
		return fmt.Errorf("run %s: %w", filepath.Base(path), err)
	}
	pgid := cmd.Process.Pid
	guardGroup(pgid, "", "", "")
	defer releaseGroup(pgid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	hook("init", pgid)
	select {
	case err = <-done:
	case <-ctx.Done():
	}
	if ctx.Err() != nil {
		// The install scripts start a bootstrap server of their own: kill the
		// whole session, not just the script.
		killGroupWait(pgid, 5*time.Second)
		<-done
		killGroupWait(pgid, 5*time.Second)
		return ctx.Err()
	}
	killGroupWait(pgid, 5*time.Second) // stragglers, if any
	if err != nil {
		return fmt.Errorf("%s failed (%v): %s (full log: %s)", filepath.Base(path), err, logTail(logPath, 3), logPath)
	}
	return nil
}

// launch starts the server process and waits until it answers. A server of a
// run dies with this process; a detached one is guarded only until it answers.
func launch(ctx context.Context, s *setup, fl flavor, st State, spec Spec) (*Server, error) {
	logPath := filepath.Join(s.dir, "server.log")
	logf, err := openLog(logPath, s.as) // the MySQL family's server opens it again (--log-error)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", logPath, err)
	}
	defer logf.Close() // the child has its own copy
	logStart, _ := logf.Seek(0, 2)
	fmt.Fprintf(logf, "---- qpslab: starting %s %s (%s) with config %s at %s\n", s.b.Name, s.b.Version, s.b.Flavor, st.Config, time.Now().UTC().Format(time.RFC3339))
	path, args := fl.serverCommand(s)
	cmd := exec.Command(path, args...)
	cmd.Dir = s.dir
	cmd.Env = append(s.layout.Env(os.Environ()), "LC_ALL=C")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr(s.as)
	start := startTied
	if spec.Detach {
		start = (*exec.Cmd).Start
	}
	if err := start(cmd); err != nil {
		return nil, fmt.Errorf("run %s: %w", filepath.Base(path), err)
	}
	guardGroup(cmd.Process.Pid, logPath, path, s.datadir)
	srv := &Server{fl: fl, cmd: cmd, exited: make(chan struct{}), timeout: spec.StopTimeout, logStart: logStart}
	st.PID = cmd.Process.Pid
	st.Program = path
	st.Started = time.Now().UTC()
	st.Stopped = time.Time{}
	st.Failed, st.Died = "", ""
	st.Endpoint = client.Endpoint{Protocol: client.Protocol(s.b.Flavor.Describe().Protocol), Socket: fl.socket(s), Host: "127.0.0.1", Port: s.port, User: fl.adminUser(), Database: Database}
	srv.State = st
	live.Lock()
	live.m[srv] = struct{}{}
	live.Unlock()
	werr := writeState(s.dir, st)
	go srv.wait() // after the state is written: a death rewrites it
	if werr != nil {
		srv.kill()
		return nil, werr
	}
	hook("launch", st.PID)
	if err := srv.waitReady(ctx, spec.StartTimeout, logPath, logStart); err != nil {
		srv.kill()
		return nil, err
	}
	if spec.Detach {
		releaseGroup(st.PID)
	}
	return srv, nil
}

// wait reaps the server process and records how it ended. An end qpslab did
// not ask for is a death: sandbox.yaml says so and the process group is
// cleared.
func (srv *Server) wait() {
	srv.waitErr = srv.cmd.Wait()
	srv.exit = Exit{
		Status:  exitStatus(srv.cmd.ProcessState),
		Cause:   explain(readLog(srv.Log, srv.logStart), 3, false),
		Log:     srv.Log,
		Stopped: srv.stopping.Load(),
	}
	close(srv.exited)
	srv.stopOnce.Do(func() { srv.finish(srv.deathOf()) })
}

// exitStatus says how a process ended: "exited with status 1", "killed by
// signal 9 (SIGKILL)".
func exitStatus(ps *os.ProcessState) string {
	if ps == nil {
		return "ended (status unknown)"
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return ps.String()
	case ws.Signaled():
		s := fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), unix.SignalName(ws.Signal()))
		if ws.CoreDump() {
			s += ", core dumped"
		}
		return s
	default:
		return fmt.Sprintf("exited with status %d", ws.ExitStatus())
	}
}

// waitReady polls the server over its socket until it answers, then creates
// qpslab's database.
func (srv *Server) waitReady(ctx context.Context, timeout time.Duration, logPath string, logStart int64) error {
	deadline := time.Now().Add(timeout)
	admin := srv.State.Endpoint.WithDatabase("")
	admin.Database = srv.fl.adminDatabase()
	var lastErr error
	for {
		if err := ctx.Err(); err != nil { // a cancel always wins, even over an exit
			return err
		}
		select {
		case <-srv.exited:
			tail := explain(readLog(logPath, logStart), 3, true)
			if srv.addrInUse(logPath, logStart) {
				return fmt.Errorf("%w: %s", errAddrInUse, tail)
			}
			return fmt.Errorf("the server exited during start (%s): %s (full log: %s)", srv.exit.Status, tail, logPath)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server did not answer within %s (last error: %v): %s (full log: %s)", timeout, lastErr, explain(readLog(logPath, logStart), 3, true), logPath)
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		lastErr = client.Ping(pctx, admin, false)
		cancel()
		if lastErr == nil {
			break
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		case <-srv.exited:
		}
	}
	db, err := client.Open(admin, false)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := srv.fl.createDatabase(ctx, db, Database); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("create database %s: %w", Database, err)
	}
	return nil
}

func (srv *Server) addrInUse(logPath string, from int64) bool {
	for _, l := range readLog(logPath, from) {
		if srv.fl.addrInUse(l) {
			return true
		}
	}
	return false
}

// kill ends the server at once (used when a start fails or is cancelled).
func (srv *Server) kill() {
	srv.stopping.Store(true)
	killGroup(srv.PID, syscall.SIGKILL)
	<-srv.exited
	srv.stopOnce.Do(func() { srv.finish("") })
}

// Stop shuts the server down gracefully, and kills it if it has not exited
// within the stop timeout. It is safe to call more than once, and after the
// server died (Exit says how).
func (srv *Server) Stop() error {
	srv.stopOnce.Do(func() {
		select {
		case <-srv.exited:
			// It ended on its own before this Stop: a death, recorded as one
			// whichever of this and the reaping goroutine gets here first.
			srv.finish(srv.deathOf())
			return
		default:
		}
		srv.stopping.Store(true)
		srv.stopErr = stopPID(srv.PID, srv.Datadir, srv.fl.stopSignal(), srv.timeout, srv.exited)
		srv.finish("")
	})
	return srv.stopErr
}

// deathOf is how the ended server died, or "" when qpslab stopped it.
func (srv *Server) deathOf() string {
	if srv.exit.Stopped {
		return ""
	}
	return srv.exit.String()
}

// finish records that the server stopped (or died: how) and cleans up after
// it.
func (srv *Server) finish(died string) {
	killGroupWait(srv.PID, 5*time.Second) // any child left in its session
	killStrays(srv.Program, srv.Datadir)  // PostgreSQL's children, after a postmaster death
	releaseGroup(srv.PID)
	live.Lock()
	delete(live.m, srv)
	live.Unlock()
	st := srv.State
	st.Died = died
	markStopped(st)
}

func markStopped(st State) {
	if st.OwnRunDir {
		removeRunDir(st)
	}
	st.PID = 0
	st.Stopped = time.Now().UTC()
	writeState(st.Dir, st)
}

// stopPID signals pid to shut down and waits for it; exited, if not nil,
// closes when the process has been reaped (this process is its parent).
func stopPID(pid int, marker string, sig syscall.Signal, timeout time.Duration, exited chan struct{}) error {
	gone := func(d time.Duration) bool {
		if exited != nil {
			select {
			case <-exited:
				return true
			case <-time.After(d):
				return false
			}
		}
		return waitGone(pid, marker, d)
	}
	if !alive(pid, marker) && gone(0) {
		return nil
	}
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal pid %d: %w", pid, err)
	}
	if gone(timeout) {
		return nil
	}
	killGroup(pid, syscall.SIGKILL)
	if !gone(10 * time.Second) {
		return fmt.Errorf("pid %d did not exit even after SIGKILL", pid)
	}
	return fmt.Errorf("the server did not shut down within %s and was killed", timeout)
}

// List returns the state of every sandbox under the home.
func List(h home.Home) ([]State, error) {
	ents, err := os.ReadDir(h.Sandboxes())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sandboxes: %w", err)
	}
	var out []State
	for _, e := range ents {
		if st, err := readState(filepath.Join(h.Sandboxes(), e.Name())); err == nil {
			out = append(out, *st)
		}
	}
	return out, nil
}

// Get returns the state of sandbox name.
func Get(h home.Home, name string) (State, error) {
	st, err := readState(Dir(h, name))
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, fmt.Errorf("no sandbox named %q: see qpslab server status", name)
	}
	if err != nil {
		return State{}, err
	}
	return *st, nil
}

// States returns the state of each named sandbox, in the order given, or
// of every sandbox under the home when no name is given.
func States(h home.Home, names ...string) ([]State, error) {
	if len(names) == 0 {
		return List(h)
	}
	out := make([]State, 0, len(names))
	for _, name := range names {
		st, err := Get(h, name)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Running returns the state of sandbox name if its server runs, and
// otherwise an error that says how to start it.
func Running(h home.Home, name string) (State, error) {
	st, err := Get(h, name)
	if err != nil {
		return State{}, err
	}
	if !st.Running() {
		cfg, _, _ := strings.Cut(st.Config, "@") // name@hash: the start command takes the name
		return State{}, fmt.Errorf("sandbox %s is not running: start it with qpslab server start %s %s", st.Name, st.Build, cfg)
	}
	return st, nil
}

// StopByName stops sandbox name, which may have been started by another
// qpslab process (qpslab server start). Stopping a stopped sandbox is not an
// error.
func StopByName(h home.Home, name string, timeout time.Duration) (bool, error) {
	st, err := Get(h, name)
	if err != nil {
		return false, err
	}
	unlock, err := lock(st.Dir)
	if err != nil {
		return false, err
	}
	defer unlock()
	if cur, err := readState(st.Dir); err == nil { // re-read under the lock
		st = *cur
	}
	if !st.Running() {
		if st.PID != 0 {
			markStopped(st)
		}
		return false, nil
	}
	if err := stopState(st, timeout); err != nil {
		return true, fmt.Errorf("stop %s: %w", name, err)
	}
	return true, nil
}

// stopState stops the running server st records (the caller holds the
// sandbox's lock) and records that it stopped.
func stopState(st State, timeout time.Duration) error {
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	sig := syscall.SIGTERM
	if fl, err := flavorOf(st.Flavor); err == nil {
		sig = fl.stopSignal()
	}
	err := stopPID(st.PID, st.Datadir, sig, timeout, nil)
	killGroupWait(st.PID, 5*time.Second)
	killStrays(st.Program, st.Datadir)
	markStopped(st)
	return err
}

func readState(dir string) (*State, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, err
	}
	var st State
	if err := yaml.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, stateFile), err)
	}
	return &st, nil
}

func writeState(dir string, st State) error {
	b, err := yaml.Marshal(st)
	if err != nil {
		return err
	}
	p := filepath.Join(dir, stateFile)
	if err := atomicfile.Write(p, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", p, unwrap(err))
	}
	return nil
}

// lock takes the sandbox folder's lock, so that two qpslab processes do not
// start or stop the same sandbox at once.
func lock(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock sandbox %s: %w", dir, unwrap(err))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox %s is being started or stopped by another qpslab process: wait for it, or use another --name", filepath.Base(dir))
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
