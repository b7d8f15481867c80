package stacks

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/qpslab/qpslab/internal/result"
)

func TestFunction(t *testing.T) {
	for in, want := range map[string]string{
		"do_command(THD*)": "do_command",
		"mysql_select(THD*, TABLE_LIST*, List<Item>&, Item*, unsigned int)":                              "mysql_select",
		"tpool::thread_pool_generic::wait_for_tasks(std::unique_lock<std::mutex>&, tpool::worker_data*)": "tpool::thread_pool_generic::wait_for_tasks",
		"pthread_cond_timedwait@@GLIBC_2.3.2":                                                            "pthread_cond_timedwait",
		"clock_nanosleep@GLIBC_2.2.5":                                                                    "clock_nanosleep",
		"Foo::operator()(int) const":                                                                     "Foo::operator()",
		"Foo::operator()":                                                                                "Foo::operator()",
		"(anonymous namespace)::run(int)":                                                                "(anonymous namespace)::run",
		"std::function<void (int)>::operator()(int) const":                                               "std::function<void (int)>::operator()",
		"vio_io_wait+0x1e":                                                                               "vio_io_wait",
		"[unknown]":                                                                                      "??",
		"":                                                                                               "??",
		" handle_one_connection":                                                                         "handle_one_connection",
		"a;b":                                                                                            "a:b",
	} {
		if got := Function(in); got != want {
			t.Errorf("Function(%q) = %q, want %q", in, got, want)
		}
	}
}

// ptPMP prints counted stacks as pt-pmp does: "count f1,f2,…", innermost
// first, sorted by count (descending) then text, as the expected files
// (testdata/pt-pmp.awk's output through sort | uniq -c | sort -k1,1nr -k2).
func ptPMP(s []result.Stack) string {
	lines := make([]string, len(s))
	for i, x := range s {
		lines[i] = strconv.FormatInt(x.Count, 10) + " " + strings.Join(Frames(x.Frames), ",")
	}
	sort.SliceStable(lines, func(i, j int) bool {
		ni, _ := strconv.Atoi(strings.Fields(lines[i])[0])
		nj, _ := strconv.Atoi(strings.Fields(lines[j])[0])
		if ni != nj {
			return ni > nj
		}
		return strings.SplitN(lines[i], " ", 2)[1] < strings.SplitN(lines[j], " ", 2)[1]
	})
	return strings.Join(lines, "\n") + "\n"
}

// Recorded eu-stack and gdb outputs of real servers collapse and count as
// pt-pmp's own rules do (testdata/pt-pmp.awk, an independent
// implementation, made the expected files).
func TestCollapseRecorded(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	n := 0
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "perf-") {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			parse := ParseEuStack
			if strings.HasPrefix(filepath.Base(f), "gdb-") {
				parse = ParseGDB
			}
			threads, err := parse(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			var c Counter
			for _, th := range threads {
				if th.TID == 0 {
					t.Errorf("a thread without its id: %+v", th)
				}
				c.Add(th.Frames, "")
			}
			want, err := os.ReadFile(strings.TrimSuffix(f, ".txt") + ".pmp")
			if err != nil {
				t.Fatal(err)
			}
			if got := ptPMP(c.Stacks()); got != string(want) {
				t.Errorf("collapsed:\n%s\nwant (pt-pmp's rules):\n%s", got, want)
			}
		})
	}
	if n < 4 {
		t.Fatalf("%d recorded outputs, want the 4 in testdata", n)
	}
}

// The same server state through eu-stack and gdb: the sleeping query's
// thread is found by both, with the same function for the wait.
func TestEuStackAndGDBAgree(t *testing.T) {
	for _, f := range []struct {
		file  string
		parse func(r *bytes.Reader) ([]Thread, error)
	}{
		{"testdata/eu-stack-mariadb-10.2.11.txt", func(r *bytes.Reader) ([]Thread, error) { return ParseEuStack(r) }},
		{"testdata/gdb-mariadb-10.2.11.txt", func(r *bytes.Reader) ([]Thread, error) { return ParseGDB(r) }},
	} {
		b, _ := os.ReadFile(f.file)
		threads, err := f.parse(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, th := range threads {
			if strings.Contains(strings.Join(th.Frames, ","), "Item_func_sleep::val_int,Item::send") {
				found = true
			}
		}
		if len(threads) != 34 || !found {
			t.Errorf("%s: %d threads (want 34), sleeping query found: %v", f.file, len(threads), found)
		}
	}
}

func TestParsePerfScript(t *testing.T) {
	b, err := os.ReadFile("testdata/perf-script-mariadb-10.11.txt")
	if err != nil {
		t.Fatal(err)
	}
	samples, err := ParsePerfScript(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	headers := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "mariadbd ") {
			headers++
		}
	}
	if len(samples) != headers || headers == 0 {
		t.Fatalf("%d samples, want %d (one per header line)", len(samples), headers)
	}
	first := samples[0]
	if first.Comm != "mariadbd" || first.TID != 32156 || first.Frames[0] != "vio_io_wait" || first.Frames[3] != "??" || first.Frames[len(first.Frames)-1] != "start_thread" {
		t.Errorf("first sample: %+v", first)
	}
}

// Two synthetic stack sets with known shares: what grew, what shrank, what
// only one has, and what the threshold leaves out.
func TestCompare(t *testing.T) {
	a := result.Stacks{Stacks: []result.Stack{
		{Frames: "main;loop;wait", State: "S", Count: 50},
		{Frames: "main;loop;work", State: "R", Count: 30},
		{Frames: "main;purge", State: "S", Count: 15},
		{Frames: "main;rare", State: "S", Count: 5},
	}}
	b := result.Stacks{Stacks: []result.Stack{
		{Frames: "main;loop;wait", State: "S", Count: 20},
		{Frames: "main;loop;work", State: "R", Count: 40},
		{Frames: "main;loop;work", State: "S", Count: 10}, // states merge: 50 in all
		{Frames: "main;loop;lock_wait", State: "S", Count: 30},
		{Frames: "main;tiny", State: "S", Count: 1},
	}}
	d := Compare(a, b, 0.02, 0)
	if d.SamplesA != 100 || d.SamplesB != 101 {
		t.Fatalf("samples %d %d", d.SamplesA, d.SamplesB)
	}
	near := func(x, y float64) bool { return x-y < 1e-9 && y-x < 1e-9 }
	if len(d.Grew) != 1 || d.Grew[0].Frames != "main;loop;work" || !near(d.Grew[0].Share, 0.30) || !near(d.Grew[0].ShareB, 50.0/101) {
		t.Errorf("grew: %+v", d.Grew)
	}
	if len(d.Shrank) != 1 || d.Shrank[0].Frames != "main;loop;wait" {
		t.Errorf("shrank: %+v", d.Shrank)
	}
	if len(d.OnlyB) != 1 || d.OnlyB[0].Frames != "main;loop;lock_wait" || !near(d.OnlyB[0].ShareB, 30.0/101) {
		t.Errorf("only in B: %+v (main;tiny is below the threshold)", d.OnlyB)
	}
	if len(d.OnlyA) != 2 || d.OnlyA[0].Frames != "main;purge" || d.OnlyA[1].Frames != "main;rare" {
		t.Errorf("only in A: %+v", d.OnlyA)
	}
	if d := Compare(a, b, 0.10, 0); len(d.OnlyA) != 1 {
		t.Errorf("a 10%% threshold leaves main;rare (5%%) out: %+v", d.OnlyA)
	}
	if d := Compare(a, b, 0, 1); len(d.OnlyB) != 1 || d.OnlyB[0].Frames != "main;loop;lock_wait" {
		t.Errorf("n=1 keeps the largest: %+v", d.OnlyB)
	}
	top := Top(b, 2)
	if len(top) != 2 || top[0].Frames != "main;loop;work" || top[0].State != "R" || !near(top[0].Share, 40.0/101) {
		t.Errorf("top: %+v", top)
	}
	if st := States(b); !near(st["R"], 40.0/101) || !near(st["S"], 61.0/101) {
		t.Errorf("states: %v", st)
	}
}

func TestMerge(t *testing.T) {
	m := Merge([]result.Stacks{
		{Source: "pmp", Tool: "eu-stack", Captures: 2, PauseMeanMs: 10, PauseMaxMs: 12, Stacks: []result.Stack{{Frames: "a;b", State: "S", Count: 4}}, Notes: []string{"x"}},
		{Source: "pmp", Tool: "gdb", Captures: 3, PauseMeanMs: 20, PauseMaxMs: 30, Stacks: []result.Stack{{Frames: "a;b", State: "S", Count: 6}, {Frames: "a;c", Count: 1}}, Notes: []string{"x"}},
	})
	if m.Captures != 5 || m.PauseMaxMs != 30 || m.PauseMeanMs != 16 || m.Tool != "eu-stack+gdb" || len(m.Notes) != 1 ||
		len(m.Stacks) != 2 || m.Stacks[0].Count != 10 {
		t.Errorf("merged: %+v", m)
	}
}

// Folded output and the pprof profile read back with pprof's own parser.
func TestExports(t *testing.T) {
	s := result.Stacks{Source: "pmp", Tool: "eu-stack", Interval: 1, Captures: 3, Stacks: []result.Stack{
		{Frames: "start_thread;do_command;Item_func_sleep::val_int", State: "S", Count: 5},
		{Frames: "start_thread;do_command;Item_func_sleep::val_int", State: "R", Count: 1},
		{Frames: "start_thread;io_handler_thread", State: "S", Count: 2},
	}}
	var folded bytes.Buffer
	if err := WriteFolded(&folded, s); err != nil {
		t.Fatal(err)
	}
	if want := "start_thread;do_command;Item_func_sleep::val_int 6\nstart_thread;io_handler_thread 2\n"; folded.String() != want {
		t.Errorf("folded:\n%s\nwant\n%s", folded.String(), want)
	}
	var pb bytes.Buffer
	if err := WritePprof(&pb, s); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&pb)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	byLeaf := map[string]int64{}
	states := map[string]int64{}
	for _, smp := range p.Sample {
		total += smp.Value[0]
		byLeaf[smp.Location[0].Line[0].Function.Name] += smp.Value[0]
		if smp.Location[len(smp.Location)-1].Line[0].Function.Name != "start_thread" {
			t.Errorf("a sample's root is not start_thread: %v", smp.Location)
		}
		for _, st := range smp.Label["state"] {
			states[st] += smp.Value[0]
		}
	}
	if total != 8 || byLeaf["Item_func_sleep::val_int"] != 6 || byLeaf["io_handler_thread"] != 2 || states["S"] != 7 || states["R"] != 1 ||
		p.SampleType[0].Type != "samples" || p.Period != 1e9 || len(p.Function) != 4 {
		t.Errorf("read back: total %d, by leaf %v, states %v, %d functions, period %d", total, byLeaf, states, len(p.Function), p.Period)
	}
}
