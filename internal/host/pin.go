package host

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CPUs is a set of CPU numbers, written as Linux writes them: "0-3,8".
type CPUs []int

// ParseCPUs reads a CPU list ("0-15", "0,2,4-7"); each CPU must exist on
// this host (0 … n-1).
func ParseCPUs(s string, n int) (CPUs, error) {
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU or a range (e.g. 0-15,24)", s, part)
		}
		for c := a; c <= b; c++ {
			if c >= n {
				return nil, fmt.Errorf("CPU list %q: CPU %d does not exist (this host has 0-%d)", s, c, n-1)
			}
			seen[c] = true
		}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("CPU list %q names no CPU", s)
	}
	var out CPUs
	for c := range seen {
		out = append(out, c)
	}
	sort.Ints(out)
	return out, nil
}

// String writes the set as a CPU list with ranges.
func (c CPUs) String() string {
	var parts []string
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", c[i], c[j]))
		} else {
			parts = append(parts, strconv.Itoa(c[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Overlap are the CPUs both sets hold.
func (c CPUs) Overlap(o CPUs) CPUs {
	in := map[int]bool{}
	for _, x := range o {
		in[x] = true
	}
	var out CPUs
	for _, x := range c {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}

func (c CPUs) set() *unix.CPUSet {
	var s unix.CPUSet
	for _, x := range c {
		s.Set(x)
	}
	return &s
}

// Pin sets the CPU affinity of every thread of process pid and of its
// descendants (a server's process tree: PostgreSQL's backends, forked
// later, inherit the postmaster's; MariaDB's new threads their creator's).
// Threads that end meanwhile are skipped.
func Pin(pid int, cpus CPUs) error {
	set := cpus.set()
	var pin func(p int) error
	pin = func(p int) error {
		tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(p), "task"))
		if err != nil {
			return fmt.Errorf("pin process %d: %w", p, err)
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("pin thread %d of process %d to CPUs %s: %w", tid, p, cpus, err)
			}
			kids, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "task", t.Name(), "children"))
			for _, k := range strings.Fields(string(kids)) {
				if kp, err := strconv.Atoi(k); err == nil {
					if err := pin(kp); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return pin(pid)
}

// PinSelf sets the CPU affinity of every thread of this process; threads
// the runtime starts later inherit it from the thread that starts them.
func PinSelf(cpus CPUs) error { return Pin(os.Getpid(), cpus) }

// Affinity reads the CPUs thread tid may run on.
func Affinity(tid int) (CPUs, error) {
	var s unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &s); err != nil {
		return nil, err
	}
	var out CPUs
	for c := 0; c < len(s)*64; c++ {
		if s.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// PinningRisk is the risk of pinning the server and the client to CPUs
// that overlap (they then compete for them, which is what pinning is meant
// to prevent); nil when they do not, or when one is not given.
func PinningRisk(server, client string, n int) (*Risk, error) {
	if server == "" || client == "" {
		return nil, nil
	}
	s, err := ParseCPUs(server, n)
	if err != nil {
		return nil, fmt.Errorf("--server-cpus: %w", err)
	}
	c, err := ParseCPUs(client, n)
	if err != nil {
		return nil, fmt.Errorf("--client-cpus: %w", err)
	}
	o := s.Overlap(c)
	if len(o) == 0 {
		return nil, nil
	}
	return &Risk{Name: "pinning-overlap", Detail: fmt.Sprintf("the server's CPUs %s and the client's %s share %s: they compete for them", s, c, o),
		Fix: "give the server and the client disjoint CPU lists (e.g. --server-cpus 0-15 --client-cpus 16-23)"}, nil
}
