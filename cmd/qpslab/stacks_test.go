package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/testenv"
)

// Every run reads the server's counters: on real MariaDB and PostgreSQL a
// write test writes redo log or WAL per op, a read test hits the buffer
// pool per op, and PostgreSQL's PSS (shared buffers once) is below its RSS
// summed over the backends. qpslab metrics shows them beside the OS's, and
// export takes them as metrics.
func TestRunServerCounters(t *testing.T) {
	for _, c := range []struct{ build, written, hits string }{
		{"mariadb-system", "innodb_os_log_written/o", "innodb_buffer_pool_read_requests/o"},
		{"postgres-system", "wal_bytes/o", "blks_hit/o"},
	} {
		t.Run(c.build, func(t *testing.T) {
			h := newHome(t)
			out := filepath.Join(t.TempDir(), "r.json")
			args := append([]string{"run", "sysbench", "--build", c.build, "--threads", "2", "--tests", "update-index_range=100,point-query_range=100", "--out", out}, quick...)
			r := qpslab(t, h, append(args, "--write-secs", "2", "--read-secs", "2")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			f, err := result.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			byTest := map[string]result.Run{}
			for _, run := range f.Runs {
				byTest[run.Test] = run
			}
			metric := func(run result.Run, name string) float64 {
				t.Helper()
				m, err := result.MetricNamed(name)
				if err != nil {
					t.Fatal(err)
				}
				v, ok := m.Of(run)
				if !ok {
					t.Fatalf("%s has no %s: %+v", run.Test, name, run.HW.Server)
				}
				return v
			}
			write, read := byTest["update-index_range=100"], byTest["point-query_range=100"]
			if v := metric(write, c.written); v <= 0 {
				t.Errorf("%s of the write test = %v, want > 0", c.written, v)
			}
			if v := metric(read, c.hits); v <= 0 {
				t.Errorf("%s of the read test = %v, want > 0", c.hits, v)
			}
			pss, rss := metric(write, "pss_mb"), metric(write, "rss_mb")
			if pss <= 0 || pss > rss {
				t.Errorf("PSS %.1f MB, RSS %.1f MB: want 0 < PSS ≤ RSS", pss, rss)
			}
			if c.build == "postgres-system" && pss >= rss {
				t.Errorf("PostgreSQL: PSS %.1f MB is not below the RSS summed over its %d processes, %.1f MB", pss, write.HW.Avg.ServerProc, rss)
			}
			label := c.build + ".default"
			m := qpslab(t, h, "metrics", label, "--test", "update-index*")
			if m.code != 0 || !strings.Contains(m.stdout, c.written) || !strings.Contains(m.stdout, "pss_mb") {
				t.Errorf("qpslab metrics shows no server figures (exit %d):\n%s%s", m.code, m.stdout, m.stderr)
			}
			dir := t.TempDir()
			e := qpslab(t, h, "export", "otava-csv", dir, "--metric", c.written, "--test", "update-index*")
			if e.code != 0 {
				t.Fatalf("export --metric %s: exit %d: %s", c.written, e.code, e.stderr)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*"))
			found := false
			for _, fn := range files {
				b, _ := os.ReadFile(fn)
				found = found || strings.Contains(string(b), c.written)
			}
			if !found {
				t.Errorf("export wrote no %s series: %v", c.written, files)
			}
		})
	}
}

// MariaDB 10.2.11 against 10.11 with --pmp: the run prints, for the write
// test, the server counters side by side, each build's top stacks and
// their diff, and the HTML report draws their flame graphs; the runs say
// they had captures; qpslab stacks exports pprof that pprof reads back.
func TestRunPMP(t *testing.T) {
	h := newHome(t)
	testenv.Build(t, h, "mariadb-10.2.11")
	out := filepath.Join(t.TempDir(), "r.json")
	html := filepath.Join(t.TempDir(), "r.html")
	args := append([]string{"run", "sysbench", "--build", "mariadb-10.2.11,mariadb-system", "--tests", "update-index_range=100", "--out", out, "--html", html}, quick...)
	r := qpslab(t, h, append(args, "--write-secs", "3", "--pmp", "0.5")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"update-index_range=100, 1 thread(s): the server's own figures",
		"innodb_os_log_written/o",
		"mariadb-10.2.11.default update-index_range=100, 1 thread(s), pmp",
		"mariadb-system.default update-index_range=100, 1 thread(s), pmp",
		"their diff (qpslab stacks diff mariadb-10.2.11.default mariadb-system.default",
		"only in B (absent in A):",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the run's output lacks %q:\n%s", want, r.stdout)
		}
	}
	f, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range f.Runs {
		if run.Params["pmp"] != "0.5" || !strings.Contains(run.Conditions(), "pmp=0.5") {
			t.Errorf("%s on %s: params %v: the captures are not a condition of the run", run.Test, run.Build, run.Params)
		}
		if s, ok := run.StacksOf("pmp"); run.Role == "" && (!ok || s.Captures < 2 || s.PauseMaxMs <= 0 || len(s.Stacks) == 0) {
			t.Errorf("%s on %s: stacks %+v", run.Test, run.Build, s)
		}
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `<svg xmlns="http://www.w3.org/2000/svg" class="flame"`); n < 3 {
		t.Errorf("%d flame graphs in the report, want each build's and the differential one", n)
	}
	// The stored stacks: the top, the diff, a pprof profile.
	s := qpslab(t, h, "stacks", "mariadb-10.2.11.default", "--test", "update-index*", "--top", "3")
	if s.code != 0 || !strings.Contains(s.stdout, "COUNT  SHARE  STATE") {
		t.Errorf("qpslab stacks: exit %d\n%s%s", s.code, s.stdout, s.stderr)
	}
	d := qpslab(t, h, "stacks", "diff", "mariadb-10.2.11.default", "mariadb-system.default", "--test", "update-index*")
	if d.code != 0 || !strings.Contains(d.stdout, "only in A (absent in B):") {
		t.Errorf("qpslab stacks diff: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	pb := filepath.Join(t.TempDir(), "p.pb.gz")
	p := qpslab(t, h, "stacks", "mariadb-system.default", "--test", "update-index*", "--format", "pprof", "--out", pb)
	if p.code != 0 {
		t.Fatalf("--format pprof: exit %d: %s", p.code, p.stderr)
	}
	fh, err := os.Open(pb)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	prof, err := profile.Parse(fh)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, smp := range prof.Sample {
		n += smp.Value[0]
	}
	if n == 0 || len(prof.Function) == 0 {
		t.Errorf("pprof profile: %d samples, %d functions", n, len(prof.Function))
	}
	// Bad input: one line each.
	for _, bad := range [][]string{
		{"stacks", "mariadb-system.default", "--source", "gdb"},
		{"stacks", "mariadb-system.default", "--format", "pprof", "--test", "update-index*"},
		{"stacks", "diff", "mariadb-system.default", "mariadb-10.2.11.default", "--threshold", "200"},
	} {
		b := qpslab(t, h, bad...)
		if b.code == 0 || strings.Count(strings.TrimSpace(b.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q: want one error line", bad, b.code, b.stderr)
		}
	}
}
