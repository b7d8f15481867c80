package stacks

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/qpslab/qpslab/internal/result"
)

// PerfHz is the sampling frequency of --perf: low, so that the profile
// costs the server little (49 Hz per CPU, not a multiple of the kernel's
// tick, so it does not beat with timers).
const PerfHz = 49

// perfArgs are perf record's options: on-CPU samples from the CPU clock
// (a software event that works in VMs without hardware counters), call
// graphs unwound from each sample's copy of the stack with the binaries'
// DWARF unwind tables (.eh_frame): servers are built without frame
// pointers, which leave -g's stacks one or two frames deep.
func perfArgs(out string, pids []int) []string {
	ps := make([]string, len(pids))
	for i, p := range pids {
		ps[i] = strconv.Itoa(p)
	}
	return []string{"record", "-e", "cpu-clock", "-F", strconv.Itoa(PerfHz), "--call-graph", "dwarf,8192", "--no-buildid-cache", "--quiet", "-o", out, "-p", strings.Join(ps, ",")}
}

// CheckPerf says whether perf can record here: it is installed, and the
// kernel lets this user sample (perf_event_paranoid, a container without
// the capability, a VM without the events). The error is one line with
// the reason and the fix.
func CheckPerf(ctx context.Context) error {
	if _, err := exec.LookPath("perf"); err != nil {
		return fmt.Errorf("perf is not installed (Debian package linux-perf)")
	}
	dir, err := os.MkdirTemp("", "qpslab-perf-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, "perf", "record", "-e", "cpu-clock", "-F", strconv.Itoa(PerfHz), "-g", "--quiet", "-o", filepath.Join(dir, "perf.data"), "--", "true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("perf record fails here: %s (as root, or with kernel.perf_event_paranoid at 1 or below)", firstLine(string(out), err))
	}
	return nil
}

func firstLine(out string, err error) string {
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "[") {
			return l
		}
	}
	return err.Error()
}

// Perf records the server's process tree with perf during a window and
// folds its stacks. It is an engine.Window; a nil Perf does nothing.
type Perf struct {
	ctx context.Context
	pid int
	dir string

	mu             sync.Mutex
	opened, closed bool
	cmd            *exec.Cmd
	stderr         bytes.Buffer
	errs           []string
	exited         chan struct{}
	waitErr        error
}

// NewPerf profiles process pid's tree; its data goes to a temporary
// folder that Result removes.
func NewPerf(ctx context.Context, pid int) *Perf {
	return &Perf{ctx: ctx, pid: pid}
}

// Open starts perf record on the tree's processes (their threads, and the
// children they start, follow).
func (p *Perf) Open() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.opened || p.closed {
		return
	}
	p.opened = true
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		p.errs = append(p.errs, err.Error())
		return
	}
	pids, err := tree(fs, p.pid)
	if err != nil {
		p.errs = append(p.errs, err.Error())
		return
	}
	if p.dir, err = os.MkdirTemp("", "qpslab-perf-"); err != nil {
		p.errs = append(p.errs, err.Error())
		return
	}
	// Not CommandContext: perf must end with SIGINT to write its data;
	// Close sends it, and kills it only if it does not end.
	p.cmd = exec.Command("perf", perfArgs(filepath.Join(p.dir, "perf.data"), pids)...)
	p.cmd.Env = toolEnv()
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		p.errs = append(p.errs, "start perf record: "+err.Error())
		p.cmd = nil
		return
	}
	p.exited = make(chan struct{})
	go func() { p.waitErr = p.cmd.Wait(); close(p.exited) }()
}

// Close stops perf record: SIGINT, as Ctrl-C would, so that it writes its
// data; SIGKILL after 30 s.
func (p *Perf) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.opened || p.closed {
		p.closed = true
		return
	}
	p.closed = true
	if p.cmd == nil {
		return
	}
	select {
	case <-p.exited: // it ended early: it could not record
		p.errs = append(p.errs, "perf record ended early: "+firstLine(p.stderr.String(), fmt.Errorf("%v", p.waitErr)))
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
		p.errs = append(p.errs, "perf record did not stop on SIGINT in 30 s: killed")
	}
}

// Result folds what perf recorded (perf script): nil for a nil Perf or a
// window that never opened. It removes perf's data.
func (p *Perf) Result() *result.Stacks {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.opened || !p.closed {
		return nil
	}
	out := &result.Stacks{Source: "perf", Tool: "perf", Interval: 1.0 / PerfHz}
	if p.dir != "" {
		defer os.RemoveAll(p.dir)
	}
	if len(p.errs) == 0 && p.cmd != nil {
		cctx, cancel := context.WithTimeout(p.ctx, 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(cctx, "perf", "script", "-i", filepath.Join(p.dir, "perf.data"), "-F", "comm,tid,ip,sym")
		cmd.Env = toolEnv()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			p.errs = append(p.errs, "perf script: "+firstLine(stderr.String(), err))
		} else if samples, err := ParsePerfScript(&stdout); err != nil {
			p.errs = append(p.errs, err.Error())
		} else {
			var c Counter
			for _, s := range samples {
				c.Add(s.Frames, "R") // a CPU sample: the thread was running
			}
			out.Stacks = c.Stacks()
			out.Captures = len(samples)
		}
	}
	out.Notes = append(out.Notes, p.errs...)
	if out.Stacks == nil {
		out.Stacks = []result.Stack{}
	}
	return out
}
