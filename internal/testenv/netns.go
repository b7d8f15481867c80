package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Hosts are two "hosts" on one machine for a test: network namespaces
// joined by a veth pair, Server at ServerAddr and Client at ClientAddr (a
// /30 of their own, which exists only inside the two namespaces: no other
// address is reachable from them). Run starts a command in one; the test's
// cleanup removes both namespaces, and the veth pair with them.
type Hosts struct {
	Server, Client         string // namespace names
	ServerAddr, ClientAddr string
	serverDev, clientDev   string
}

// TwoHosts makes the namespaces, or skips t through Skip where this
// machine cannot (not root, no ip(8)).
func TwoHosts(t testing.TB) *Hosts {
	t.Helper()
	if os.Geteuid() != 0 {
		Skip(t, "network namespaces need root, and this test runs as uid "+fmt.Sprint(os.Geteuid()))
	}
	if _, err := exec.LookPath("ip"); err != nil {
		Skip(t, "no ip(8) (iproute2) to make network namespaces")
	}
	id := fmt.Sprintf("%d", os.Getpid()%100000)
	h := &Hosts{Server: "qpsl-" + id + "-s", Client: "qpsl-" + id + "-c",
		ServerAddr: "10.213.0.1", ClientAddr: "10.213.0.2", serverDev: "qv" + id + "s", clientDev: "qv" + id + "c"}
	t.Cleanup(func() {
		for _, ns := range []string{h.Server, h.Client} {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	for _, args := range [][]string{
		{"netns", "add", h.Server},
		{"netns", "add", h.Client},
		{"link", "add", h.serverDev, "type", "veth", "peer", "name", h.clientDev},
		{"link", "set", h.serverDev, "netns", h.Server},
		{"link", "set", h.clientDev, "netns", h.Client},
		{"-n", h.Server, "addr", "add", h.ServerAddr + "/30", "dev", h.serverDev},
		{"-n", h.Client, "addr", "add", h.ClientAddr + "/30", "dev", h.clientDev},
		{"-n", h.Server, "link", "set", h.serverDev, "up"},
		{"-n", h.Client, "link", "set", h.clientDev, "up"},
		{"-n", h.Server, "link", "set", "lo", "up"},
		{"-n", h.Client, "link", "set", "lo", "up"},
	} {
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
