package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Hosts are "hosts" on one machine for a test: network namespaces, a
// server's (Server, at ServerAddr) and one or more clients' (Clients, at
// ClientAddrs; Client and ClientAddr are the first), each client joined to
// the server's by a veth pair on a bridge in the server's namespace. Their
// addresses (10.213.0.0/24) exist only inside these namespaces: no other
// address is reachable from them. The test's cleanup removes the
// namespaces, and the links with them.
type Hosts struct {
	Server, Client         string // namespace names
	ServerAddr, ClientAddr string
	Clients, ClientAddrs   []string
	serverDev              string // the bridge, where a delay goes
}

// TwoHosts makes a server's namespace and one client's, or skips t through
// Skip where this machine cannot (not root, no ip(8)).
func TwoHosts(t testing.TB) *Hosts { return Network(t, 1) }

// Network makes a server's namespace and n clients', or skips t through
// Skip where this machine cannot (not root, no ip(8)).
func Network(t testing.TB, n int) *Hosts {
	t.Helper()
	if os.Geteuid() != 0 {
		Skip(t, "network namespaces need root, and this test runs as uid "+fmt.Sprint(os.Geteuid()))
	}
	if _, err := exec.LookPath("ip"); err != nil {
		Skip(t, "no ip(8) (iproute2) to make network namespaces")
	}
	id := fmt.Sprintf("%d", os.Getpid()%100000)
	h := &Hosts{Server: "qpsl-" + id + "-s", ServerAddr: "10.213.0.1", serverDev: "qpbr0"}
	t.Cleanup(func() {
		for _, ns := range append([]string{h.Server}, h.Clients...) {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	steps := [][]string{
		{"netns", "add", h.Server},
		{"-n", h.Server, "link", "set", "lo", "up"},
		{"-n", h.Server, "link", "add", h.serverDev, "type", "bridge"},
		{"-n", h.Server, "addr", "add", h.ServerAddr + "/24", "dev", h.serverDev},
		{"-n", h.Server, "link", "set", h.serverDev, "up"},
	}
	for i := range n {
		ns, addr := fmt.Sprintf("qpsl-%s-c%d", id, i), fmt.Sprintf("10.213.0.%d", 2+i)
		h.Clients, h.ClientAddrs = append(h.Clients, ns), append(h.ClientAddrs, addr)
		sdev, cdev := fmt.Sprintf("qv%ss%d", id, i), fmt.Sprintf("qv%sc%d", id, i)
		steps = append(steps,
			[]string{"netns", "add", ns},
			[]string{"link", "add", sdev, "type", "veth", "peer", "name", cdev},
			[]string{"link", "set", sdev, "netns", h.Server},
			[]string{"link", "set", cdev, "netns", ns},
			[]string{"-n", h.Server, "link", "set", sdev, "master", h.serverDev},
			[]string{"-n", h.Server, "link", "set", sdev, "up"},
			[]string{"-n", ns, "addr", "add", addr + "/24", "dev", cdev},
			[]string{"-n", ns, "link", "set", cdev, "up"},
			[]string{"-n", ns, "link", "set", "lo", "up"},
		)
	}
	h.Client, h.ClientAddr = h.Clients[0], h.ClientAddrs[0]
	for _, args := range steps {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return h
}

// In is cmd run inside namespace ns (ip netns exec): its argv is prefixed.
func In(ns string, cmd *exec.Cmd) *exec.Cmd {
	c := exec.Command("ip", append([]string{"netns", "exec", ns}, cmd.Args...)...)
	c.Env, c.Dir, c.Stdin, c.Stdout, c.Stderr, c.SysProcAttr = cmd.Env, cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.SysProcAttr
	return c
}

// Delay adds delay to the server's side of the link with tc netem, or
// skips t through Skip where the kernel has no netem.
func (h *Hosts) Delay(t testing.TB, delay string) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", h.Server, "tc", "qdisc", "add", "dev", h.serverDev, "root", "netem", "delay", delay).CombinedOutput()
	if err != nil {
		Skip(t, "tc netem delay: this kernel cannot ("+strings.TrimSpace(string(out))+")")
	}
}
