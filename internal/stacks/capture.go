package stacks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/qpslab/qpslab/internal/result"
)

// Tools that capture every thread's stack, in order of preference:
// eu-stack attaches, unwinds and detaches in a fraction of a second; gdb
// in batch mode takes seconds (it loads every symbol table first), during
// which the threads stay stopped.
const (
	EuStack = "eu-stack"
	GDB     = "gdb"
)

// FindTool returns the capture tool to use: want if set, else eu-stack,
// else gdb; an error naming the fix when it is not installed.
func FindTool(want string) (string, error) {
	if want != "" {
		if want != EuStack && want != GDB {
			return "", fmt.Errorf("stack capture tool %s: use %s or %s", want, EuStack, GDB)
		}
		if _, err := exec.LookPath(want); err != nil {
			return "", fmt.Errorf("--pmp: %s is not installed (%v)", want, err)
		}
		return want, nil
	}
	for _, t := range []string{EuStack, GDB} {
		if _, err := exec.LookPath(t); err == nil {
			return t, nil
		}
	}
	return "", fmt.Errorf("--pmp needs eu-stack (Debian package elfutils) or gdb: install one, or leave out --pmp")
}

// captureTimeout bounds a capture that hangs: the tool is then killed
// and the process continued.
const captureTimeout = 2 * time.Minute

// Capture takes one stack of every thread of process pid with tool, and
// says how long it took (the upper bound of how long the process's
// threads were stopped).
//
// A capture, once started, is never cut short (ctx only keeps one from
// starting): a tool killed while it holds threads stopped leaves them
// stopped (ptrace's attach stops the process, and a tracer's death does
// not continue it). Only a capture that hangs for captureTimeout is
// killed, and the process is then sent SIGCONT.
func Capture(ctx context.Context, tool string, pid int) ([]Thread, time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	var cmd *exec.Cmd
	switch tool {
	case EuStack:
		cmd = exec.Command(EuStack, "-p", strconv.Itoa(pid))
	case GDB:
		cmd = exec.Command(GDB, "-p", strconv.Itoa(pid), "-batch", "-nx", "-ex", "set pagination 0", "-ex", "thread apply all bt")
	default:
		return nil, 0, fmt.Errorf("unknown capture tool %q", tool)
	}
	cmd.Env = toolEnv()
	// A process group of its own: a Ctrl-C at the terminal (which ends the
	// run) must not kill it in the middle of a capture.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("start %s: %w", tool, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(captureTimeout):
		cmd.Process.Kill()
		err = <-exited
		err = fmt.Errorf("killed after %s: %v", captureTimeout, err)
	}
	if !cmd.ProcessState.Exited() {
		// It died by a signal, perhaps holding threads stopped.
		syscall.Kill(pid, syscall.SIGCONT)
	}
	took := time.Since(t0)
	var threads []Thread
	var perr error
	if tool == EuStack {
		threads, perr = ParseEuStack(&stdout)
	} else {
		threads, perr = ParseGDB(&stdout)
	}
	if perr != nil {
		return nil, took, perr
	}
	// eu-stack exits 1 when some frames could not be unwound: the others
	// are good. No thread at all is a failure.
	if len(threads) == 0 {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i > 0 {
			msg = msg[:i]
		}
		if err == nil {
			err = errors.New("no threads in its output")
		}
		return nil, took, fmt.Errorf("%s -p %d: %v %s", tool, pid, err, msg)
	}
	return threads, took, nil
}

// toolEnv is the capture tools' environment: without debuginfod, so that
// no capture waits on the network for debug symbols while the server's
// threads are stopped.
func toolEnv() []string { return append(os.Environ(), "DEBUGINFOD_URLS=") }

// tree lists process pid and its descendants (PostgreSQL's backends), pid
// first.
func tree(fs procfs.FS, pid int) ([]int, error) {
	procs, err := fs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	children := map[int][]int{}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue
		}
		children[st.PPID] = append(children[st.PPID], p.PID)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out, nil
}

// threadStates are the states of process pid's threads by thread id (R, S,
// D, …), read before a capture stops them.
func threadStates(fs procfs.FS, pid int) map[int]string {
	out := map[int]string{}
	ts, err := fs.AllThreads(pid)
	if err != nil {
		return out
	}
	for _, t := range ts {
		if st, err := t.Stat(); err == nil {
			out[t.PID] = st.State
		}
	}
	return out
}

// PMP captures the stacks of every thread of a server's process tree every
// Interval while a measured window is open, as poor man's profiler does.
// It is an engine.Window; a nil PMP does nothing.
type PMP struct {
	ctx      context.Context
	pid      int
	interval time.Duration
	tool     string
	fs       procfs.FS

	mu             sync.Mutex
	opened, closed bool
	stopped        bool
	counts         Counter
	captures       int
	pauses         []time.Duration
	errs           []string
	stop, done     chan struct{}
}

// NewPMP captures process pid's tree every interval with tool (""
// chooses: eu-stack, else gdb). ctx ends a capture in progress.
func NewPMP(ctx context.Context, pid int, interval time.Duration, tool string) (*PMP, error) {
	t, err := FindTool(tool)
	if err != nil {
		return nil, err
	}
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, fmt.Errorf("--pmp: open /proc: %w", err)
	}
	return &PMP{ctx: ctx, pid: pid, interval: interval, tool: t, fs: fs}, nil
}

// Open starts capturing: the first capture half an interval into the
// window, then one every interval, so that a window of k intervals has k
// captures spread over it.
func (p *PMP) Open() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.opened || p.closed {
		return
	}
	p.opened = true
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go p.loop()
}

func (p *PMP) loop() {
	defer close(p.done)
	wait := p.interval / 2
	for {
		select {
		case <-p.stop:
			return
		case <-p.ctx.Done():
			return
		case <-time.After(wait):
		}
		select {
		case <-p.stop: // both were ready: stopping wins
			return
		default:
		}
		t0 := time.Now()
		p.captureTree()
		// The next capture an interval after this one began; at once when
		// a capture took longer than the interval.
		wait = max(p.interval-time.Since(t0), 0)
	}
}

// captureTree captures every process of the tree once. Its pause is the
// wall time of the whole capture.
func (p *PMP) captureTree() {
	pids, err := tree(p.fs, p.pid)
	if err != nil {
		p.fail(err)
		return
	}
	t0 := time.Now()
	var got []struct {
		threads []Thread
		states  map[int]string
	}
	var errs []error
	for _, pid := range pids {
		states := threadStates(p.fs, pid)
		threads, _, err := Capture(p.ctx, p.tool, pid)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, struct {
			threads []Thread
			states  map[int]string
		}{threads, states})
	}
	took := time.Since(t0)
	if len(got) == 0 {
		if p.ctx.Err() == nil && len(errs) > 0 {
			p.fail(errs[0])
		}
		return
	}
	// A capture that began before Stop counts: the window was open when
	// it began.
	p.mu.Lock()
	defer p.mu.Unlock()
	p.captures++
	p.pauses = append(p.pauses, took)
	for _, g := range got {
		for _, t := range g.threads {
			p.counts.Add(t.Frames, g.states[t.TID])
		}
	}
}

func (p *PMP) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) < 3 {
		p.errs = append(p.errs, err.Error())
	}
}

// Stop starts no more captures; the one in progress goes on (Capture).
// It does not wait: Close does.
func (p *PMP) Stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.opened && !p.stopped {
		p.stopped = true
		close(p.stop)
	}
}

// Close stops capturing, after the capture in progress ends.
func (p *PMP) Close() {
	if p == nil {
		return
	}
	p.Stop()
	p.mu.Lock()
	if !p.opened || p.closed {
		p.closed = true
		p.mu.Unlock()
		return
	}
	p.closed = true
	done := p.done
	p.mu.Unlock()
	<-done
}

// Result is the window's stacks: nil for a nil PMP or a window that never
// opened.
func (p *PMP) Result() *result.Stacks {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.opened || !p.closed {
		return nil
	}
	out := &result.Stacks{Source: "pmp", Tool: p.tool, Interval: p.interval.Seconds(), Captures: p.captures, Stacks: p.counts.Stacks()}
	var sum time.Duration
	for _, d := range p.pauses {
		sum += d
		out.PauseMaxMs = max(out.PauseMaxMs, float64(d)/1e6)
	}
	if len(p.pauses) > 0 {
		out.PauseMeanMs = float64(sum) / 1e6 / float64(len(p.pauses))
	}
	for _, e := range p.errs {
		out.Notes = append(out.Notes, "a capture failed: "+e)
	}
	if p.captures == 0 && len(p.errs) == 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("no capture in the window: it was shorter than half the --pmp interval (%s)", p.interval))
	}
	return out
}
