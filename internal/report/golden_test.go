package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/store"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from what the writers print now")

// golden compares what write prints with testdata/golden/NAME, byte for
// byte: a change to how a listing prints (its columns, its spacing, its
// empty line) shows here. go test ./internal/report -run Golden -update
// writes the files anew from the code as it is.
func golden(t *testing.T, name string, write func(w io.Writer) error) {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%s: %v (go test -run Golden -update writes it)", name, err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("%s differs from %s:\ngot:\n%s\nwant:\n%s", name, p, b.String(), want)
	}
}

var at = time.Date(2026, 11, 29, 6, 30, 0, 0, time.UTC)

// TestGoldenListings: every listing a command prints, full and empty,
// from fixed fixtures: each owner's table as Print renders it.
func TestGoldenListings(t *testing.T) {
	builds := []build.Build{
		{Name: "mariadb-10.2.11", Flavor: build.MariaDB, Version: "10.2.11", Source: "registry", Basedir: "/cache/builds/mariadb-10.2.11"},
		{Name: "rocksdb-8.1", Flavor: build.RocksDB, Version: "8.1.1", Source: "tarball", Program: "/cache/builds/rocksdb/db_bench"},
	}
	golden(t, "builds.txt", func(w io.Writer) error { return Print(w, build.ListTable(builds), "text") })
	golden(t, "builds-empty.txt", func(w io.Writer) error { return Print(w, build.ListTable(nil), "text") })

	cs := []config.Config{
		{Name: "default", Family: "mysql", Content: []byte("[mysqld]\n"), Source: "shipped"},
		{Name: "cz11a_bee", Family: "mysql", Content: []byte("[mysqld]\nx=1\n"), Base: "default", Source: "shipped"},
		{Name: "broken", Family: "mysql", Base: "gone", Source: "/home/u/broken.cnf", Err: errors.New(`config broken: base "gone" does not exist`)},
	}
	golden(t, "configs.txt", func(w io.Writer) error {
		var warn bytes.Buffer
		Warnings(&warn, config.Errors(cs))
		err := Print(w, config.ListTable(cs), "text")
		io.WriteString(w, "-- warnings:\n"+warn.String())
		return err
	})

	sts := []sandbox.State{
		{Name: "mariadb-10.2.11.default", Build: "mariadb-10.2.11", Version: "10.2.11", Config: "default@0123456789ab"},
		{Name: "pg17.tuned", Build: "pg17", Version: "17.0", Config: "tuned@ba9876543210", Failed: "the server did not answer within 60 s (log: /x/err.log)"},
		{Name: "mysql-8.4.x", Build: "mysql-8.4", Version: "8.4.3", Config: "x@aaaaaaaaaaaa", Died: "signal 9 (killed)"},
	}
	golden(t, "sandboxes.txt", func(w io.Writer) error { return Print(w, sandbox.ListTable(sts), "text") })
	golden(t, "sandboxes-empty.txt", func(w io.Writer) error { return Print(w, sandbox.ListTable(nil), "text") })

	ts := []store.Token{
		{ID: "t1", Name: "ci", Scopes: []string{"read", "ingest"}, Created: at.Add(-48 * time.Hour), LastUsed: at},
		{ID: "t2", Name: "old laptop", Scopes: []string{"read"}, Created: at.Add(-900 * time.Hour), Revoked: at.Add(-time.Hour)},
	}
	golden(t, "tokens.txt", func(w io.Writer) error { return Print(w, store.TokensTable(ts), "text") })
	golden(t, "tokens-empty.txt", func(w io.Writer) error { return Print(w, store.TokensTable(nil), "text") })

	b := store.Bisection{ID: 3, Src: "/src/mariadb", Good: "0123456789abcdef", Bad: "fedcba9876543210", Suite: "sysbench", Test: "point-query_range=100",
		Metric: "qps", Threshold: 0.05, State: "done", Started: at.Add(-2 * time.Hour), Result: "first bad commit 89abcdef (0.81 [0.78, 0.84])"}
	golden(t, "bisections.txt", func(w io.Writer) error {
		return Print(w, store.BisectionsTable([]store.Bisection{b, {ID: 4, State: "running", Started: at, Threshold: math.NaN()}}), "text")
	})
	golden(t, "bisections-empty.txt", func(w io.Writer) error { return Print(w, store.BisectionsTable(nil), "text") })
	steps := []store.BisectStep{
		{Seq: 1, Commit: b.Good, Kind: "good", Rel: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Build: "b-good", Plan: "6×2"},
		{Seq: 2, Commit: "89abcdef00000000", Base: b.Good, Build: "b-89ab", Kind: "worse", Rel: 0.81, Lo: 0.78, Hi: 0.84, Rounds: 12, Plan: "6×2", Note: "bad"},
		{Seq: 3, Commit: "1111111122222222", Base: "89abcdef00000000", Build: "b-1111", Kind: "same", Rel: 1.01, Lo: 0.97, Hi: 1.05, Rounds: 24},
	}
	golden(t, "bisect-steps.txt", func(w io.Writer) error {
		return store.WriteBisectSteps(w, b, steps, map[string]string{"89abcdef00000000": "btr: a slower search"})
	})

	fp, _ := json.Marshal(map[string]any{"cpus": 2, "mem_kb": 24700000, "cpu_model": "Intel(R)  Xeon(R) Processor"})
	hosts := []fleet.Host{
		{Name: "bench1", Labels: []string{"vm", "x86"}, HostID: "h-abc", Hostname: "bench1.lan", Fingerprint: fp, State: "working", Job: 42, Since: 5 * time.Second},
		{Name: "bench2", HostID: "h-def", Hostname: "bench2.lan", Fingerprint: json.RawMessage(`not json`), State: "lost", Since: 50 * time.Hour},
	}
	golden(t, "fleet-hosts.txt", func(w io.Writer) error { return Print(w, fleet.HostsTable(hosts), "text") })
	golden(t, "fleet-hosts-empty.txt", func(w io.Writer) error { return Print(w, fleet.HostsTable(nil), "text") })
	started, ended := at.Add(-time.Hour), at.Add(-30*time.Minute)
	jobs := []fleet.JobInfo{
		{ID: 42, Job: fleet.Job{Suite: "sysbench", Host: "bench1", Batch: "b1", Params: map[string]string{"build": "mariadb-10.2.11,mariadb-system", "repeat": "6"}},
			State: "running", Attempt: 2, MaxAttempts: 3, Created: at.Add(-2 * time.Hour), Attempted: &started,
			Errors: []fleet.AttemptError{{At: at.Add(-90 * time.Minute), Attempt: 1, Error: strings.Repeat("the server died; ", 10)}}, AttemptedBy: []string{"bench1/runner"}},
		{ID: 43, Job: fleet.Job{Suite: "ibench", Host: "bench2"}, State: "completed", Attempt: 1, MaxAttempts: 3, Created: at.Add(-3 * time.Hour), Attempted: &started, Finalized: &ended},
	}
	runs := map[int64]fleet.JobRuns{42: {1: {"ok": 3, "failed": 1}, 2: {"ok": 6, "running": 1}}, 43: {1: {"ok": 10}}}
	golden(t, "fleet-jobs.txt", func(w io.Writer) error { return Print(w, fleet.JobsTable(jobs, runs), "text") })
	golden(t, "fleet-jobs-empty.txt", func(w io.Writer) error { return Print(w, fleet.JobsTable(nil, nil), "text") })
	golden(t, "fleet-job.txt", func(w io.Writer) error { return fleet.WriteJob(w, jobs[0], runs[42]) })

	ls := []store.LabelInfo{
		{Label: "mariadb-10.2.11.demo", Suite: "sysbench", Version: "10.2.11", Runs: 528, Tests: 42, Threads: []int{1}, Hosts: []string{"h-abc"}, Sources: []string{"run"}, Status: "528 ok", Last: "2026-11-29T06:01:10.748977Z"},
		{Label: "pg.x", Suite: "sysbench", Runs: 3, Tests: 1, Threads: []int{1, 8}, Status: "2 ok, 1 aborted", Last: "2026-11-28"},
	}
	golden(t, "labels.txt", func(w io.Writer) error { return Print(w, store.LabelsTable(ls, "/home/u/qpslab.db"), "text") })
	golden(t, "labels-empty.txt", func(w io.Writer) error { return Print(w, store.LabelsTable(nil, "/home/u/qpslab.db"), "text") })
}
