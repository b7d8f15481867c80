package history

import (
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// Builds compiled from commits are points in commit-time order, one per
// build, whatever their names, versions and run times say; a build without
// a commit among them puts the series back in version order.
func TestFromRunsByCommitTime(t *testing.T) {
	qps, _ := result.MetricNamed("qps")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commit := func(build, hash, at string, v float64, started time.Time) result.Run {
		r := run(build, "15.18", "point-query", 1, v, started)
		r.Params = map[string]string{"commit": hash, "commit_time": at}
		return r
	}
	runs := []result.Run{
		// Run last, named first, committed in the middle.
		commit("pg1518_240723_aaaaaaaa", "aaaaaaaa", "2024-07-23T10:00:00Z", 90, t0.Add(3*time.Hour)),
		commit("pg1518_240724_cccccccc", "cccccccc", "2024-07-24T09:00:00Z", 70, t0),
		commit("pg1518_240722_bbbbbbbb", "bbbbbbbb", "2024-07-22T10:00:00Z", 100, t0.Add(time.Hour)),
		commit("pg1518_240724_cccccccc", "cccccccc", "2024-07-24T09:00:00Z", 72, t0.Add(2*time.Hour)),
	}
	order := func(s Series) string {
		var b []string
		for _, p := range s.Points {
			b = append(b, p.Build)
		}
		return strings.Join(b, " ")
	}
	s := FromRuns(runs, qps, func(result.Run) string { return "" })
	if len(s) != 1 || s[0].Order != OrderCommit || order(s[0]) != "pg1518_240722_bbbbbbbb pg1518_240723_aaaaaaaa pg1518_240724_cccccccc" {
		t.Fatalf("by commit time: %s %q", s[0].Order, order(s[0]))
	}
	if p := s[0].Points[2]; p.Commit != "cccccccc" || p.N != 2 || p.Value != 71 {
		t.Errorf("a build's point: %+v", p)
	}
	// A name compiled again at another commit (--replace): its newest
	// run's commit orders it and names its point, whatever the runs' order.
	replaced := append([]result.Run{}, runs...)
	replaced = append(replaced[:1], replaced[2:]...) // pg1518_240724_cccccccc: the run at t0+2h only
	replaced = append(replaced,
		commit("pg1518_240724_cccccccc", "dddddddd", "2024-07-20T09:00:00Z", 60, t0.Add(5*time.Hour)))
	replaced[1], replaced[3] = replaced[3], replaced[1]
	if s := FromRuns(replaced, qps, func(result.Run) string { return "" }); order(s[0]) != "pg1518_240724_cccccccc pg1518_240722_bbbbbbbb pg1518_240723_aaaaaaaa" ||
		s[0].Points[0].Commit != "dddddddd" {
		t.Errorf("a name of two commits: %q, %+v", order(s[0]), s[0].Points[0])
	}
	runs = append(runs, run("postgres-system", "15.18", "point-query", 1, 95, t0))
	if s := FromRuns(runs, qps, func(result.Run) string { return "" }); s[0].Order != OrderVersion {
		t.Errorf("with a build not compiled from a commit: %s", s[0].Order)
	}
}
