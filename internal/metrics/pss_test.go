package metrics

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/host"
)

// PSS sums the tree's smaps_rollup; a tree whose files are missing has
// none (an error: unknown), never a part of a sum.
func TestPSS(t *testing.T) {
	reader := func(k string) *Reader {
		sp := spec
		dir := filepath.Join("testdata/snap", k)
		sp.Roots = host.Roots{Proc: filepath.Join(dir, "proc"), Sys: filepath.Join(dir, "sys")}
		r, err := NewReader(sp)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	kb, err := reader("0").PSS()
	if err != nil || kb != 64000 {
		t.Errorf("PSS of the tree = %d KB (%v), want 61234 + 2766 = 64000", kb, err)
	}
	if kb, err := reader("1").PSS(); err == nil {
		t.Errorf("a tree without smaps_rollup has PSS %d, want an error (unknown)", kb)
	}
}

// This process as the server: the sampler's PSS is read, and is below its
// RSS plus what it shares.
func TestSamplerPSS(t *testing.T) {
	s, err := NewSampler(Spec{Roots: host.Real, ServerPID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	s.every = 100e6
	s.Open()
	for end := time.Now().Add(300e6); time.Now().Before(end); {
	}
	s.Close()
	hw := s.Result(100, "statement", nil, nil)
	if hw == nil || hw.Avg.ServerPSS == 0 || hw.Avg.ServerPSS > hw.Avg.ServerRSS {
		t.Fatalf("PSS %+v", hw)
	}
}
