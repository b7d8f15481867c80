package target

import (
	"net"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// Local finds the target's server on this host (and in this network
// namespace): the process that listens on its unix socket, or on its TCP
// port at one of this host's addresses, and the folder it runs in (a
// MySQL-family server and PostgreSQL work in their datadir), for the
// hardware sampler, which can then measure the server's CPU, context
// switches and disk per operation as it does a sandbox's. pid is 0 where
// the server is not here: on another host, in another namespace, or in a
// process this user may not inspect.
func Local(t Target) (pid int, dir string) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, ""
	}
	inodes := map[uint64]bool{}
	if t.Socket != "" {
		nu, err := fs.NetUNIX()
		if err != nil {
			return 0, ""
		}
		for _, l := range nu.Rows {
			if l.Path == t.Socket && l.State == 1 && l.Flags&(1<<16) != 0 { // unconnected, __SO_ACCEPTCON: listening
				inodes[l.Inode] = true
			}
		}
	} else {
		local := localAddrs(t.Host)
		if local == nil {
			return 0, ""
		}
		for _, read := range []func() (procfs.NetTCP, error){fs.NetTCP, fs.NetTCP6} {
			rows, err := read()
			if err != nil {
				continue
			}
			for _, l := range rows {
				if l.St == 10 && l.LocalPort == uint64(t.Port) && (l.LocalAddr.IsUnspecified() || local[l.LocalAddr.String()]) { // 10: LISTEN
					inodes[l.Inode] = true
				}
			}
		}
	}
	if len(inodes) == 0 {
		return 0, ""
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return 0, ""
	}
	for _, p := range procs {
		fds, err := p.FileDescriptorTargets()
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if ino, ok := socketInode(fd); ok && inodes[ino] {
				dir, _ := p.Cwd()
				return p.PID, dir
			}
		}
	}
	return 0, ""
}

// socketInode reads a file descriptor's target "socket:[INODE]".
func socketInode(fd string) (uint64, bool) {
	s, ok := strings.CutPrefix(fd, "socket:[")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, "]")
	n, err := strconv.ParseUint(s, 10, 64)
	return n, ok && err == nil
}

// localAddrs are the addresses host resolves to that belong to this host
// (its interfaces', loopback included), as text; nil when none does.
func localAddrs(host string) map[string]bool {
	ips, err := net.LookupIP(host)
	if err != nil {
		return nil
	}
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	mine := map[string]bool{}
	for _, a := range ifaddrs {
		if n, ok := a.(*net.IPNet); ok {
			mine[n.IP.String()] = true
		}
	}
	out := map[string]bool{}
	for _, ip := range ips {
		if mine[ip.String()] || ip.IsLoopback() {
			out[ip.String()] = true
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
