package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/result"
)

// qpslab stacks diff of an InnoDB run against a MyRocks run: the two
// labels' stacks of one test are one section, keyed as compare keys
// labels (the engine is the label's, not a condition that keeps them
// apart), and the diff notes that the code paths differ. Two InnoDB
// labels get no note.
func TestStacksDiffAcrossEngines(t *testing.T) {
	run := func(build, engine string, frames ...string) result.Run {
		st := result.Stacks{Source: "pmp", Tool: "eu-stack", Interval: 1, Captures: 10}
		for _, f := range frames {
			st.Stacks = append(st.Stacks, result.Stack{Frames: f, State: "R", Count: 50})
		}
		p := map[string]string{"rows": "1000"}
		if engine != "" {
			p["engine"] = engine
		}
		return result.Run{Test: "point-query", Threads: 4, Status: result.OK, Build: build, Config: "myrocks@abc", Params: p, Stacks: []result.Stacks{st}}
	}
	innodb := run("mariadb-system", "innodb", "start_thread;do_command;ha_innobase::index_read;btr_cur_search", "start_thread;do_command;dispatch")
	myrocks := run("mariadb-system", "rocksdb", "start_thread;do_command;ha_rocksdb::index_read;rocksdb::DBImpl::Get", "start_thread;do_command;dispatch")
	if innodb.Conditions() == myrocks.Conditions() || innodb.LabelConditions() != myrocks.LabelConditions() {
		t.Fatalf("fixture: conditions %q / %q", innodb.Conditions(), myrocks.Conditions())
	}
	sets := []analysis.Set{{Label: innodb.Label(), Runs: []result.Run{innodb}}, {Label: myrocks.Label(), Runs: []result.Run{myrocks}}}
	secs := StackSections(sets)
	if len(secs) != 1 || len(secs[0].Sets) != 2 {
		t.Fatalf("sections %+v, want one with both labels", secs)
	}
	diffs, err := StackQuery{Source: "pmp", Threshold: 1, Top: 5}.diffsOf(secs, sets[0].Label, sets[1].Label)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := StackDiffs(&b, diffs, "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mariadb-system.myrocks (A", "mariadb-system.myrocks:rocksdb (B", "note: A ran storage engine innodb and B rocksdb: their code paths differ", "rocksdb::DBImpl::Get"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("stacks diff lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	StackDiffs(&b, diffs, "json")
	if !strings.Contains(b.String(), `"Note": "A ran storage engine innodb and B rocksdb`) {
		t.Errorf("json lacks the note:\n%s", b.String())
	}
	other := run("mariadb-10.11", "", "start_thread;do_command;dispatch")
	other.Config = "default@abc"
	same := []analysis.Set{{Label: innodb.Label(), Runs: []result.Run{innodb}}, {Label: other.Label(), Runs: []result.Run{other}}}
	d2, err := StackQuery{Source: "pmp", Threshold: 1, Top: 5}.diffsOf(StackSections(same), same[0].Label, same[1].Label)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	StackDiffs(&b, d2, "text")
	if strings.Contains(b.String(), "note: A ran storage engine") {
		t.Errorf("InnoDB against InnoDB (one recorded, one from before --engine) has the note:\n%s", b.String())
	}
}
