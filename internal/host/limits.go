package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Limits are what bounds how many connections one client process can
// open to a server on this host: its open files, the listen backlog a
// burst of connects meets, and the ephemeral ports a TCP client takes one
// of per connection.
type Limits struct {
	NoFileSoft uint64 `json:"nofile_soft"` // this process's, as Go raised it at start (to the hard limit)
	NoFileHard uint64 `json:"nofile_hard"`
	Somaxconn  int    `json:"somaxconn,omitempty"`           // net.core.somaxconn
	SynBacklog int    `json:"tcp_max_syn_backlog,omitempty"` // net.ipv4.tcp_max_syn_backlog
	PortLo     int    `json:"port_range_lo,omitempty"`       // net.ipv4.ip_local_port_range
	PortHi     int    `json:"port_range_hi,omitempty"`
}

// Ports is how many ephemeral ports there are (0: unknown).
func (l Limits) Ports() int {
	if l.PortHi < l.PortLo || l.PortLo == 0 {
		return 0
	}
	return l.PortHi - l.PortLo + 1
}

// fdMargin are the files a client process holds beside its connections
// (the store, the results file, /proc readers, the runtime's own).
const fdMargin = 64

// ReadLimits reads the limits of the host under r and of this process.
func ReadLimits(r Roots) Limits {
	var l Limits
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil {
		l.NoFileSoft, l.NoFileHard = rl.Cur, rl.Max
	}
	num := func(p string) []int {
		b, err := os.ReadFile(filepath.Join(r.Proc, p))
		if err != nil {
			return nil
		}
		var out []int
		for _, f := range strings.Fields(string(b)) {
			n, err := strconv.Atoi(f)
			if err != nil {
				return nil
			}
			out = append(out, n)
		}
		return out
	}
	if v := num("sys/net/core/somaxconn"); len(v) == 1 {
		l.Somaxconn = v[0]
	}
	if v := num("sys/net/ipv4/tcp_max_syn_backlog"); len(v) == 1 {
		l.SynBacklog = v[0]
	}
	if v := num("sys/net/ipv4/ip_local_port_range"); len(v) == 2 {
		l.PortLo, l.PortHi = v[0], v[1]
	}
	return l
}

// CheckConnections says whether one client process may open conns
// connections (over TCP when tcp): an error naming the limit and its fix
// when the host would refuse them.
func (l Limits) CheckConnections(conns int, tcp bool) error {
	need := uint64(conns) + fdMargin
	if l.NoFileSoft > 0 && need > l.NoFileSoft {
		return fmt.Errorf("%d connections need about %d open files, and this process may open %d (hard limit %d): raise it with ulimit -n %d (or LimitNOFILE), or run fewer threads",
			conns, need, l.NoFileSoft, l.NoFileHard, max(need, l.NoFileHard))
	}
	if tcp && l.Ports() > 0 && conns > l.Ports() {
		return fmt.Errorf("%d TCP connections need as many ephemeral ports, and net.ipv4.ip_local_port_range (%d-%d) has %d: widen it (sysctl -w net.ipv4.ip_local_port_range=\"1024 65000\") or connect over the unix socket (drop --tcp)",
			conns, l.PortLo, l.PortHi, l.Ports())
	}
	return nil
}

// Warnings are the limits that do not refuse conns connections but may
// slow their opening: a listen backlog below the burst.
func (l Limits) Warnings(conns int) []string {
	var out []string
	if l.Somaxconn > 0 && conns > l.Somaxconn {
		out = append(out, fmt.Sprintf("net.core.somaxconn is %d, below the %d connections: qpslab opens them one at a time, but a server's back_log is capped at it (sysctl -w net.core.somaxconn=%d)", l.Somaxconn, conns, conns))
	}
	return out
}
