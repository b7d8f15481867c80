package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
	_ "github.com/qpslab/qpslab/internal/workload" // every suite, as the binary registers them
)

// good is a run every rule accepts.
func good() result.Run {
	return result.Run{SchemaVersion: result.SchemaVersion, Suite: "sysbench", Test: "point-query_range=100", Build: "ma101107_rel",
		Flavor: "mariadb", Version: "10.11.7", Config: "cz11a@0123456789ab", Threads: 1, Loop: "closed", Status: result.OK,
		Params: map[string]string{"engine": "rocksdb", "rows": "100000"}, Totals: result.Totals{ReportedUnit: "qps", Series: result.SeriesStatements}}
}

// invisible is how a refusal calls an invisible character.
const invisible = "an invisible character (a format character, a default-ignorable one or a variation selector)"

// Each rule refuses what it should, with the field and the run's index in
// the line and the reason beside them; the old code stored every one.
func TestValidateRules(t *testing.T) {
	long := good()
	long.Params["tests"] = strings.Repeat("point-query_range=100,", 42) // a list param: longer than a name
	if err := Validate([]result.Run{good(), long}); err != nil {
		t.Fatalf("a good run refused: %v", err)
	}
	for _, c := range []struct {
		what   string
		change func(*result.Run)
		want   string
	}{
		{"an unregistered suite", func(r *result.Run) { r.Suite = "../../evil<b>" }, `runs[1].suite = "../../evil<b>": not a registered suite: use one of`},
		{"a status out of its enum", func(r *result.Run) { r.Status = "pwned" }, `runs[1].status = "pwned": use one of ok, failed, aborted, saturated`},
		{"a loop out of its enum", func(r *result.Run) { r.Loop = "spiral" }, `runs[1].loop = "spiral": use one of closed, open, "" (none)`},
		{"a role out of its enum", func(r *result.Run) { r.Role = "boss" }, `runs[1].role = "boss"`},
		{"a pairing out of its enum", func(r *result.Run) { r.Pairing = "triples" }, `runs[1].pairing = "triples"`},
		{"threads 0", func(r *result.Run) { r.Threads = 0 }, `runs[1].threads = 0: a run has 1 thread or more`},
		{"an empty build", func(r *result.Run) { r.Build = "" }, `runs[1].build is empty`},
		{"an empty config", func(r *result.Run) { r.Config = "@0123" }, `runs[1].config is empty`},
		{"a config with a dot", func(r *result.Run) { r.Config = "a.b" },
			`runs[1].config = "a.b": a config name cannot hold '.', since a label BUILD.CONFIG splits at its last dot; rename the config`},
		{"a config with a colon", func(r *result.Run) { r.Config = "a:b@01" }, `runs[1].config = "a:b": a config name cannot hold ':'`},
		{"a build with an at", func(r *result.Run) { r.Build = "ma@host" }, `runs[1].build = "ma@host": a build name cannot hold '@'`},
		{"an engine with a dot", func(r *result.Run) { r.Params["engine"] = "rocks.db" }, `runs[1].params["engine"] = "rocks.db": an engine is named in lower case`},
		{"an engine in capitals", func(r *result.Run) { r.Params["engine"] = "RocksDB" }, `runs[1].params["engine"] = "RocksDB"`},
		{"a 10 KB build", func(r *result.Run) { r.Build = strings.Repeat("b", 10<<10) }, `runs[1].build is 10240 bytes long: a name is at most 200 bytes`},
		{"a 201-byte test", func(r *result.Run) { r.Test = strings.Repeat("t", 201) }, `runs[1].test is 201 bytes long`},
		{"a right-to-left override", func(r *result.Run) { r.Build = "abc\u202Eexe.png" },
			`runs[1].build = "abc\u202eexe.png": holds U+202E, a bidirectional formatting character, at character 4`},
		{"an isolate", func(r *result.Run) { r.Test = "x\u2067y" }, `runs[1].test = "x\u2067y": holds U+2067`},
		{"a control character", func(r *result.Run) { r.Version = "10.11\x1b[31m" }, `runs[1].version = "10.11\x1b[31m": holds the control character U+001B`},
		{"a newline in a name", func(r *result.Run) { r.Config = "a\nb" }, `runs[1].config = "a\nb": holds the control character U+000A`},
		{"invalid UTF-8", func(r *result.Run) { r.Flavor = "ma\xff" }, `runs[1].flavor = "ma\xff": not valid UTF-8`},
		{"a space at the end", func(r *result.Run) { r.Build = "ma " }, `runs[1].build = "ma ": a name cannot begin or end with a space`},
		{"a bad param value", func(r *result.Run) { r.Params["rows"] = "1\u202E0" }, `runs[1].params["rows"]`},
		{"a param value too long", func(r *result.Run) { r.Params["set"] = strings.Repeat("v", MaxText+1) }, `runs[1].params["set"] is 16385 bytes long: a value is at most 16384 bytes`},
		{"a long param key", func(r *result.Run) { r.Params[strings.Repeat("k", 300)] = "v" }, `runs[1].params key is 300 bytes long`},
		{"a bad op kind", func(r *result.Run) { r.Totals.Ops = []result.OpTotals{{OpSample: result.OpSample{Kind: "q\x00"}}} }, `runs[1].totals.ops[0].kind`},
		{"a bad figure name", func(r *result.Run) { r.Totals.Figures = map[string]float64{"a\u202Eb": 1} }, `runs[1].totals.figures key`},
		{"an error too long", func(r *result.Run) { r.Error = strings.Repeat("e", MaxText+1) }, `runs[1].error is 16385 bytes long: a text is at most 16384 bytes`},
		{"a bidi character in an error", func(r *result.Run) { r.Error = "died\u202E" }, `runs[1].error = "died\u202e": holds U+202E`},
		{"a host that is no fingerprint", func(r *result.Run) { r.Host = json.RawMessage(`[1]`) }, `runs[1].host: not a host fingerprint`},
		{"a host's kernel with a bidi character", func(r *result.Run) { r.Host = json.RawMessage(`{"kernel":"6.1\u202E"}`) }, `runs[1].host.kernel`},
		{"a zero-width space in a build", func(r *result.Run) { r.Build = "nightly\u200b-0455" },
			`runs[1].build = "nightly\u200b-0455": holds U+200B, ` + invisible + `, at character 8, ` +
				`which makes the name show as another; remove it`},
		{"a zero-width joiner in a test", func(r *result.Run) { r.Test = "insert\u200d_range=100" },
			`runs[1].test = "insert\u200d_range=100": holds U+200D, an invisible character`},
		{"a zero-width non-joiner in a config", func(r *result.Run) { r.Config = "cz\u200c11a@0123" },
			`runs[1].config = "cz\u200c11a": holds U+200C, an invisible character`},
		{"a variation selector in a config", func(r *result.Run) { r.Config = "cz11a\ufe0f" },
			`runs[1].config = "cz11a\ufe0f": holds U+FE0F, an invisible character`},
		{"a word joiner in a version", func(r *result.Run) { r.Version = "10.11\u20607" },
			`runs[1].version = "10.11\u20607": holds U+2060, ` + invisible + `, at character 6`},
		{"a soft hyphen in a flavor", func(r *result.Run) { r.Flavor = "maria\u00addb" },
			`runs[1].flavor = "maria\u00addb": holds U+00AD, an invisible character`},
		{"a byte-order mark in a param key", func(r *result.Run) { r.Params["\ufeffrows"] = "1" },
			`runs[1].params key = "\ufeffrows": holds U+FEFF, ` + invisible + `, at character 1`},
		{"a Hangul filler in a param value", func(r *result.Run) { r.Params["engine"] = "inno\u3164db" },
			`runs[1].params["engine"] = "inno\u3164db": holds U+3164, an invisible character`},
		{"a tag character in a host's kernel",
			func(r *result.Run) { r.Host = json.RawMessage(`{"kernel":"6.1\udb40\udc41"}`) },
			`runs[1].host.kernel = "6.1\U000e0041": holds U+E0041, an invisible character`},
		{"a variation selector in a group",
			func(r *result.Run) { r.Groups = []result.Placement{{Layout: "5", Group: "point\U000E0100"}} },
			`runs[1].groups[0].group = "point\U000e0100": holds U+E0100`},
		{"a long group", func(r *result.Run) { r.Groups = []result.Placement{{Layout: "5", Group: strings.Repeat("g", 201)}} }, `runs[1].groups[0].group is 201 bytes long`},
	} {
		r := good()
		c.change(&r)
		err := Validate([]result.Run{good(), r})
		var p *Problems
		if !errors.As(err, &p) {
			t.Errorf("%s: stored (%v)", c.what, err)
			continue
		}
		if !strings.Contains(p.Lines[0], c.want) {
			t.Errorf("%s: %q, want %q", c.what, p.Lines[0], c.want)
		}
		for _, l := range p.Lines {
			if strings.Contains(l, "\n") || len(l) > 600 {
				t.Errorf("%s: not one short line: %q", c.what, l)
			}
		}
	}
}

// `{"runs":[{}]}` names no suite, test, build or config, no status or
// threads: every problem is listed, one a line, each with its
// field.
func TestValidateEmptyRun(t *testing.T) {
	var p *Problems
	if !errors.As(Validate([]result.Run{{}}), &p) {
		t.Fatal("an empty run is accepted")
	}
	for _, f := range []string{"runs[0].suite", "runs[0].status", "runs[0].threads", "runs[0].build is empty", "runs[0].config is empty", "runs[0].test is empty"} {
		if !strings.Contains(p.Error(), f) {
			t.Errorf("no %s in\n%s", f, p)
		}
	}
	if got := len(strings.Split(p.Error(), "\n")); got != len(p.Lines) {
		t.Errorf("%d lines for %d problems", got, len(p.Lines))
	}
}

// A thousand bad runs give MaxProblems lines and a count of the rest.
func TestValidateBounded(t *testing.T) {
	runs := make([]result.Run, 1000)
	for i := range runs {
		runs[i] = good()
		runs[i].Threads = 0
	}
	var p *Problems
	if !errors.As(Validate(runs), &p) || len(p.Lines) != MaxProblems || p.More != 1000-MaxProblems {
		t.Fatalf("%v", p)
	}
	if !strings.HasSuffix(p.Error(), fmt.Sprintf("… and %d more problem(s)", 1000-MaxProblems)) {
		t.Errorf("the rest not counted: %q", p.Error()[len(p.Error())-60:])
	}
}

// qpslab import results refuses a file with a bad run, naming the file
// and the run; a command's error is one line, the problems go to stderr.
func TestResultsFilesValidated(t *testing.T) {
	bad := good()
	bad.Config = "x.y@01"
	dir := t.TempDir()
	f := filepath.Join(dir, "r.json")
	if err := result.Write(f, []result.Run{good(), bad}); err != nil {
		t.Fatal(err)
	}
	_, err := ResultsFiles(ctx, []string{f})
	if err == nil || !strings.Contains(err.Error(), f+`: runs[1].config = "x.y"`) {
		t.Fatalf("%v", err)
	}
	var w strings.Builder
	err = Report(&w, err)
	if !strings.Contains(w.String(), `runs[1].config = "x.y"`) || err == nil || !strings.Contains(err.Error(), "nothing was imported: 1 problem(s)") {
		t.Errorf("report: %q, %v", w.String(), err)
	}
	other := errors.New("x")
	if Report(&w, other) != other {
		t.Error("another error changed")
	}
	if _, err := os.Stat(f); err != nil {
		t.Fatal(err)
	}
}

// What the importers make of the reference's folders and sysbench's
// output passes: the rules refuse no real result.
func TestImportersPassValidate(t *testing.T) {
	src := Source{Build: "my8043_rel_o2nofp", Config: "z12a_c8r32"}
	var runs []result.Run
	for _, d := range []string{"testdata/mytools/x.my8043_rel_o2nofp.z12a_c8r32.pk1", "testdata/ibench/ma100433_rel.cz11a_c8r32"} {
		rs, err := Mytools(ctx, d, src)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, rs...)
	}
	sb, err := SysbenchFiles(ctx, []string{"testdata/sysbench-1.0.20-point-select.txt", "testdata/sysbench-1.1-read-write.txt"}, src, "point-query_range=100")
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(append(runs, sb...)); err != nil {
		t.Errorf("real results refused:\n%v", err)
	}
}

// A figure outside its metric's plausible range (two runs of 1.7e308
// queries a second, whose median once overflowed) is one more problem
// naming the run and the field; a figure at the bound is not.
func TestValidateRefusesImplausibleFigures(t *testing.T) {
	run := func(i int, qps float64) result.Run {
		return result.Run{SchemaVersion: result.SchemaVersion, Suite: "sysbench", Test: "point-query", Build: "huge", Config: "default@0123456789ab", Threads: 1,
			Loop: "closed", Status: result.OK, Started: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC),
			Totals: result.Totals{Seconds: 10, Reported: qps, ReportedUnit: "qps", QPS: qps}}
	}
	err := Validate([]result.Run{run(0, 1000), run(1, 1.7e308)})
	if err == nil || !strings.Contains(err.Error(), "runs[1] (point-query): totals.reported = 1.7e+308 is above the plausible") {
		t.Fatalf("1.7e308: %v", err)
	}
	if err := Validate([]result.Run{run(0, 1000), run(1, 1e9)}); err != nil {
		t.Fatalf("a figure at the bound: %v", err)
	}
}
