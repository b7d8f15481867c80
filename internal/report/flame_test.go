package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/stacks"
	"github.com/qpslab/qpslab/internal/testenv"
)

// stackRun is an ok run of update-index whose pmp stacks are s.
func stackRun(s ...result.Stack) result.Run {
	r := result.Run{Test: "update-index_range=100", Threads: 1, Status: result.OK, Totals: result.Totals{Reported: 1000, ReportedUnit: "qps"},
		HW:     &result.HW{Op: "statement", Samples: 3, OpsPerSec: 1000},
		Stacks: []result.Stacks{{Source: "pmp", Tool: "eu-stack", Interval: 1, Captures: 10, PauseMeanMs: 80, PauseMaxMs: 120, Stacks: s}}}
	return r
}

// Two labels: the base sleeps 60 % of its samples in the sleep function;
// the other waits for row locks instead, which the base never does.
func stackSets() []analysis.Set {
	return []analysis.Set{
		{Label: "old.default", Runs: []result.Run{stackRun(
			result.Stack{Frames: "start_thread;do_command;Item_func_sleep::val_int;pthread_cond_timedwait", State: "S", Count: 60},
			result.Stack{Frames: "start_thread;do_command;mysql_update;ha_update_row", State: "R", Count: 40},
		)}},
		{Label: "new.default", Runs: []result.Run{stackRun(
			result.Stack{Frames: "start_thread;do_command;mysql_update;ha_update_row", State: "R", Count: 50},
			result.Stack{Frames: "start_thread;do_command;mysql_update;lock_wait_suspend_thread", State: "S", Count: 50},
		)}},
	}
}

func TestStackSections(t *testing.T) {
	secs := StackSections(stackSets())
	if len(secs) != 1 || secs[0].Source != "pmp" || len(secs[0].Sets) != 2 || secs[0].Sets[0].Label != "old.default" || secs[0].Sets[1].Stacks.Samples() != 100 {
		t.Fatalf("sections: %+v", secs)
	}
	var b bytes.Buffer
	if err := StackTop(&b, secs[0].Sets, 1, "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"10 capture(s) by eu-stack every 1 s", "up to 120 ms (mean 80 ms)", "thread states: S 60.0%, R 40.0%",
		"60     60.0%  S      pthread_cond_timedwait,Item_func_sleep::val_int,do_command,start_thread"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("top lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	d := StackDiff{A: secs[0].Sets[0], B: secs[0].Sets[1], Diff: stacks.Compare(secs[0].Sets[0].Stacks, secs[0].Sets[1].Stacks, 0.01, 5)}
	if err := StackDiffs(&b, []StackDiff{d}, "text"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"old.default (A, 100 samples) against new.default (B, 100 samples)",
		"only in B (absent in A):\n    A     B      CHANGE  STACK (innermost first)\n    0.0%  50.0%  +50.0   lock_wait_suspend_thread,mysql_update,do_command,start_thread",
		"only in A (absent in B):\n    A      B     CHANGE  STACK (innermost first)\n    60.0%  0.0%  -60.0   pthread_cond_timedwait,Item_func_sleep::val_int,do_command,start_thread",
		"grew most (share of samples, points):\n    A      B      CHANGE  STACK (innermost first)\n    40.0%  50.0%  +10.0   ha_update_row",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff lacks %q:\n%s", want, out)
		}
	}
}

// The server's figures side by side, with the others relative to the base.
func TestServerTable(t *testing.T) {
	tb := analysis.MetricTable{Test: "update-index_range=100", Threads: 1,
		Rows:   []analysis.MetricRow{{Label: "old.default", Op: "statement"}, {Label: "new.default", Op: "statement"}},
		Server: []analysis.CounterLine{{Metric: "innodb_os_log_written/o", Values: []float64{1122, 320}}, {Metric: "pss_mb", Values: []float64{254, math.NaN()}}}, HiddenServer: 3}
	var b bytes.Buffer
	if err := ServerTable(&b, tb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"per statement", "server                   old.default  new.default  rel new.default",
		"innodb_os_log_written/o  1122         320          0.29", "pss_mb                   254          -            -", "3 counter(s) zero in every run left out"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("server table lacks %q:\n%s", want, b.String())
		}
	}
}

// The report's stacks section: a flame graph per label (valid SVG, every
// frame named for the search), a differential one, and the diff table.
func TestHTMLStacks(t *testing.T) {
	sets := stackSets()
	tables, err := analysis.Metrics(sets, "")
	if err != nil {
		t.Fatal(err)
	}
	m := Model{Title: "stacks", Stacks: StackSections(sets), Metrics: tables}
	var b bytes.Buffer
	if err := HTML(&b, m); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`id="stacks"`, `href="#stacks"`, `data-n="Item_func_sleep::val_int"`, `data-flame="flame-0-0"`, `data-flame="flamediff-0-0"`,
		"only in new.default", "lock_wait_suspend_thread,mysql_update,do_command,start_thread", "matched ",
		`<h3 id="stacks-update-index_range_100-1">`, `<a href="#stacks-update-index_range_100-1">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	svgs := regexp.MustCompile(`(?s)<svg [^>]*class="flame".*?</svg>`).FindAllString(page, -1)
	if len(svgs) != 3 {
		t.Fatalf("%d flame graphs, want 2 and a differential one", len(svgs))
	}
	for _, s := range svgs {
		d := xml.NewDecoder(strings.NewReader(s))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("flame graph is not XML: %v", err)
			}
		}
	}
	// The differential graph: mysql_update (40 % → 100 %) is the largest
	// change, the deepest red; lock_wait_suspend_thread (0 → 50 %) nearly
	// as red; ha_update_row (40 → 50 %) a light red.
	fill := func(name string) string {
		m := regexp.MustCompile(`data-n="` + name + `"><title>[^<]*</title><rect [^>]*fill="([^"]+)"`).FindStringSubmatch(svgs[2])
		if m == nil {
			t.Fatalf("no %s in the differential graph", name)
		}
		return m[1]
	}
	if got := fill("mysql_update"); got != "rgb(250,35,35)" {
		t.Errorf("mysql_update: %s, want the deepest red", got)
	}
	if got := fill("lock_wait_suspend_thread"); got != "rgb(250,68,68)" { // 235 - 200 × 0.5/0.6
		t.Errorf("lock_wait_suspend_thread: %s", got)
	}
	if got := fill("ha_update_row"); got != "rgb(250,201,201)" { // 235 - 200 × 0.1/0.6, truncated
		t.Errorf("ha_update_row: %s", got)
	}
}

// Chromium runs the page's search: typing a function's name highlights its
// frames and says their share of the samples.
func TestFlameSearchChromium(t *testing.T) {
	bin := testenv.Chromium(t, "the flame graph's search is not run")
	var b bytes.Buffer
	if err := HTML(&b, Model{Title: "stacks", Stacks: StackSections(stackSets())}); err != nil {
		t.Fatal(err)
	}
	// Type into the first graph's search box, as a user would.
	page := strings.Replace(b.String(), "</body>", `<script>
var i = document.querySelector('input[data-flame="flame-0-0"]'); i.value = "sleep"; i.dispatchEvent(new Event("input"));
var j = document.querySelector('input[data-flame="flame-0-1"]'); j.value = "^mysql_update$|lock_wait"; j.dispatchEvent(new Event("input"));
</script></body>`, 1)
	dir := t.TempDir()
	file := filepath.Join(dir, "stacks.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, stderr := htmlRunChromium(t, bin, dir, "file://"+file)
	for _, want := range []string{
		`id="flame-0-0-match">matched 60.0% of the samples`,  // the sleep and what it calls, once
		`id="flame-0-1-match">matched 100.0% of the samples`, // mysql_update holds lock_wait: the union counts it once
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("after the search, no %q; chromium's stderr:\n%s", want, htmlTail(stderr, 1000))
		}
	}
	if !strings.Contains(dom, `fill="rgb(230,0,230)"`) {
		t.Error("no frame highlighted")
	}
}
