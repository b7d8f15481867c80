package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// serveTables exercises what qpslab serve keeps (migration 5) and reads:
// tokens by hash, alerts recorded once, the baseline taken once, run
// lists, hosts, tests and the generation. Both SQLite and PostgreSQL run
// it.
func serveTables(t *testing.T, s *Store) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tok := Token{ID: "0123456789ab", Name: "ci", Scopes: []string{"ingest"}, Created: t0}
	if err := s.AddToken(ctx, tok, "hash-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddToken(ctx, Token{ID: "ba9876543210", Name: "ci", Scopes: []string{"read"}, Created: t0}, "hash-2"); err == nil || !strings.Contains(err.Error(), `a token named "ci" exists`) {
		t.Errorf("a second token named ci: %v", err)
	}
	got, err := s.TokenByHash(ctx, "hash-1")
	if err != nil || got.ID != tok.ID || got.Name != "ci" || strings.Join(got.Scopes, ",") != "ingest" || !got.Created.Equal(t0) || !got.Revoked.IsZero() {
		t.Errorf("token by hash: %+v %v", got, err)
	}
	if _, err := s.TokenByHash(ctx, "nope"); err != ErrNoToken {
		t.Errorf("an unknown hash: %v", err)
	}
	if err := s.TouchToken(ctx, tok.ID, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevokeToken(ctx, "nobody", t0); err == nil {
		t.Error("revoked a token that does not exist")
	}
	rv, err := s.RevokeToken(ctx, "ci", t0.Add(2*time.Hour))
	if err != nil || rv.ID != tok.ID {
		t.Fatalf("revoke by name: %+v %v", rv, err)
	}
	if _, err := s.RevokeToken(ctx, tok.ID, t0); err == nil || !strings.Contains(err.Error(), "revoked on") {
		t.Errorf("revoked twice: %v", err)
	}
	ts, err := s.Tokens(ctx)
	if err != nil || len(ts) != 1 || ts[0].Revoked.IsZero() || !ts[0].LastUsed.Equal(t0.Add(time.Hour)) {
		t.Errorf("tokens: %+v %v", ts, err)
	}
	// A revoked token's name may be used again.
	if err := s.AddToken(ctx, Token{ID: "ba9876543210", Name: "ci", Scopes: []string{"read"}, Created: t0}, "hash-2"); err != nil {
		t.Errorf("a new ci after the old was revoked: %v", err)
	}

	// Alerts: the baseline is taken once; an alert is recorded once.
	if done, err := s.HasAlertsBaseline(ctx); err != nil || done {
		t.Fatalf("baseline before any: %v %v", done, err)
	}
	known := Alert{Key: "k1", Series: "sysbench a thr=1 qps", Kind: "regression", Magnitude: -0.2, Arrived: "b7"}
	if took, err := s.AlertsBaseline(ctx, []Alert{known}, t0); err != nil || !took {
		t.Fatalf("baseline: %v %v", took, err)
	}
	if took, err := s.AlertsBaseline(ctx, []Alert{{Key: "k9", Series: "x", Kind: "regression"}}, t0); err != nil || took {
		t.Errorf("a second baseline: %v %v", took, err)
	}
	if added, err := s.AddAlert(ctx, known, t0); err != nil || added {
		t.Errorf("a known change point added again: %v %v", added, err)
	}
	fresh := Alert{Key: "k2", Series: "sysbench b thr=1 qps", Kind: "regression", Magnitude: -0.3, Arrived: "b9"}
	if added, err := s.AddAlert(ctx, fresh, t0.Add(time.Minute)); err != nil || !added {
		t.Fatalf("a new change point: %v %v", added, err)
	}
	if added, _ := s.AddAlert(ctx, fresh, t0.Add(time.Minute)); added {
		t.Error("the same change point added twice")
	}
	if err := s.AlertDone(ctx, "k2", fmt.Errorf("the webhook answered 500"), t0); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.ClaimAlert(ctx, "k2", 5); err != nil || !ok {
		t.Errorf("claim a failed alert: %v %v", ok, err)
	}
	if ok, _ := s.ClaimAlert(ctx, "k2", 5); ok {
		t.Error("a pending alert claimed twice")
	}
	if err := s.AlertDone(ctx, "k2", nil, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	as, err := s.Alerts(ctx)
	if err != nil || len(as) != 2 {
		t.Fatalf("alerts: %+v %v", as, err)
	}
	if a := as[0]; a.Key != "k2" || a.State != AlertSent || a.Attempts != 2 || a.Error != "" || !a.Sent.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("the sent alert: %+v", a)
	}
	if a := as[1]; a.Key != "k1" || a.State != AlertKnown {
		t.Errorf("the known alert: %+v", a)
	}

	// Runs, hosts, tests and the generation.
	gen0, err := s.Generation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := finished(meta("point-query_range=100", 1), result.OK, 100, 2)
	a.Build, a.Started = "serve-a", t0
	b := a
	b.Test, b.Started, b.Status, b.Error = "update-index_range=100", t0.Add(time.Minute), result.Failed, "it failed"
	if _, err := s.Import(ctx, []result.Run{a, b}, Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	gen1, _ := s.Generation(ctx)
	if gen1 == gen0 {
		t.Error("an import did not move the generation")
	}
	// Each test's generation moves only with its own runs.
	gs0, err := s.Generations(ctx)
	if err != nil || gs0.Global != gen1 || gs0.Tests[TestKey{"sysbench", a.Test}] == "" {
		t.Fatalf("generations %+v (global %q) %v", gs0, gen1, err)
	}
	c := a
	c.Build, c.Test, c.Started = "serve-c", "update-index_range=100", t0.Add(2*time.Minute)
	if _, err := s.Import(ctx, []result.Run{c}, Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	gs1, _ := s.Generations(ctx)
	if gs1.Global == gs0.Global || gs1.Tests[TestKey{"sysbench", a.Test}] != gs0.Tests[TestKey{"sysbench", a.Test}] ||
		gs1.Tests[TestKey{"sysbench", c.Test}] == "" || gs1.Tests[TestKey{"sysbench", c.Test}] == gs0.Tests[TestKey{"sysbench", c.Test}] {
		t.Errorf("an import of update-index moved %+v to %+v", gs0, gs1)
	}
	runs, total, err := s.RunList(ctx, RunQuery{Build: "serve-a", Limit: 1})
	if err != nil || total != 2 || len(runs) != 1 || runs[0].Test != b.Test || runs[0].Status != result.Failed || runs[0].Error != "it failed" {
		t.Fatalf("run list: %d of %d %+v %v", len(runs), total, runs, err)
	}
	one, _, err := s.RunList(ctx, RunQuery{ID: runs[0].ID})
	if err != nil || len(one) != 1 || one[0].Label() != "serve-a.default" || one[0].HostID == "" {
		t.Errorf("a run by id: %+v %v", one, err)
	}
	full, err := s.Runs(ctx, Filter{ID: runs[0].ID, Status: []string{result.Failed}, Samples: true})
	if err != nil || len(full) != 1 || len(full[0].Samples) != 2 {
		t.Errorf("a run by id with its samples: %d %v", len(full), err)
	}
	hosts, err := s.Hosts(ctx)
	if err != nil || len(hosts) == 0 || hosts[0].ID != one[0].HostID || hosts[0].Runs < 2 || !strings.Contains(string(hosts[0].Fingerprint), "kernel") {
		t.Errorf("hosts: %+v %v", hosts, err)
	}
	tests, err := s.Tests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range tests {
		if ti.Test == b.Test && ti.Suite == "sysbench" {
			// its only run failed: no history
			if ti.Runs > 0 && ti.Last.Equal(b.Started) {
				t.Errorf("a failed run counts in tests: %+v", ti)
			}
		}
	}
	if !containsTest(tests, "sysbench", a.Test) {
		t.Errorf("tests lack %s: %+v", a.Test, tests)
	}
}

func containsTest(ts []TestInfo, suite, test string) bool {
	for _, t := range ts {
		if t.Suite == suite && t.Test == test {
			return true
		}
	}
	return false
}

func TestSQLiteServeTables(t *testing.T) { serveTables(t, open(t, "")) }
