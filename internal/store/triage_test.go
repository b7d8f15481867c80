package store

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testdata/release-7fbc4be.db was written by the release before triage
// (commit 7fbc4be, migration 11): two sysbench imports and a token.
// Migration 14 adds the triage table: the old runs and token read back as
// they were, and a triage state is stored, replaced and read back with who
// and when.
func TestTriageOnStoreOfTheLastRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", "release-7fbc4be.db"), path)
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(ctx, Filter{})
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d runs, want the 2 imported: %v", len(runs), err)
	}
	toks, err := s.Tokens(ctx)
	if err != nil || len(toks) != 1 || toks[0].Name != "ci" {
		t.Fatalf("the token: %+v %v", toks, err)
	}
	if ts, err := s.Triages(ctx); err != nil || len(ts) != 0 {
		t.Fatalf("triage of an upgraded store: %v %v", ts, err)
	}
	triageRoundTrip(t, s)
}

// triageRoundTrip stores triage states, replaces one, and reads them back
// with who and when; a state that is none is refused.
func triageRoundTrip(t *testing.T, s *Store) {
	t.Helper()
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	if err := s.SetTriage(ctx, []Triage{{Key: "k1", State: TriageAcknowledged, Note: "looking", What: "sysbench x", Who: "alice", At: at}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTriage(ctx, []Triage{{Key: "k1", State: TriageFixed, FixedIn: "ma101103", Who: "bob", At: at.Add(time.Hour)}, {Key: "k2", State: TriageDismissed, Who: "public", At: at}}); err != nil {
		t.Fatal(err)
	}
	ts, err := s.Triages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if k1 := ts["k1"]; k1.State != TriageFixed || k1.FixedIn != "ma101103" || k1.Who != "bob" || !k1.At.Equal(at.Add(time.Hour)) || k1.Note != "" {
		t.Errorf("k1 replaced: %+v", k1)
	}
	if k2 := ts["k2"]; k2.State != TriageDismissed || k2.Who != "public" {
		t.Errorf("k2: %+v", k2)
	}
	if err := s.SetTriage(ctx, []Triage{{Key: "k3", State: "pwned", Who: "x", At: at}}); err == nil || !strings.Contains(err.Error(), "use one of open") {
		t.Errorf("a state that is none: %v", err)
	}
	if _, ok := mustTriages(t, s)["k3"]; ok {
		t.Errorf("a refused state was stored")
	}
}

func mustTriages(t *testing.T, s *Store) map[string]Triage {
	t.Helper()
	ts, err := s.Triages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
