package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(p, v string) {
		f := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, []byte(v), 0o644)
	}
	write("sys/net/core/somaxconn", "128\n")
	write("sys/net/ipv4/tcp_max_syn_backlog", "256\n")
	write("sys/net/ipv4/ip_local_port_range", "32768\t33767\n")
	l := ReadLimits(Roots{Proc: dir, Sys: dir})
	if l.Somaxconn != 128 || l.SynBacklog != 256 || l.Ports() != 1000 || l.NoFileSoft == 0 {
		t.Fatalf("%+v", l)
	}
	l.NoFileSoft, l.NoFileHard = 1024, 4096
	if err := l.CheckConnections(512, false); err != nil {
		t.Errorf("512 connections within 1024 files: %v", err)
	}
	err := l.CheckConnections(4096, false)
	if err == nil || !strings.Contains(err.Error(), "ulimit -n") || !strings.Contains(err.Error(), "1024") {
		t.Errorf("4096 connections within 1024 files: %v", err)
	}
	l.NoFileSoft = 1 << 20
	if err := l.CheckConnections(2000, true); err == nil || !strings.Contains(err.Error(), "ip_local_port_range") {
		t.Errorf("2000 TCP connections over 1000 ports: %v", err)
	}
	if err := l.CheckConnections(2000, false); err != nil {
		t.Errorf("2000 socket connections: %v", err)
	}
	if w := l.Warnings(2000); len(w) != 1 || !strings.Contains(w[0], "somaxconn") {
		t.Errorf("warnings %v", w)
	}
}
