package bisect

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
)

// A bisection job and a stored bisection written before the Spec
// (testdata, as the release before wrote them) still make their steps'
// specs (plan.Parse through the steps' planTester), the same from the job
// and from the stored bisection an attempt resumes.
func TestBisectionsWrittenBeforeTheSpecResume(t *testing.T) {
	read := func(name string, into any) {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatal(err)
		}
	}
	var j fleet.BisectJob
	var b store.Bisection
	read("job-before-spec.json", &j)
	read("bisection-before-spec.json", &b)
	step := func(what string, o Options) *plan.Runner {
		t.Helper()
		s, err := suite.Get(o.Suite)
		if err != nil {
			t.Fatal(err)
		}
		pt := &planTester{s: s, o: o}
		if err := pt.choose(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		p, err := pt.plan(pt.tests, "pg-good", "pg-bad", o.Rounds, false)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return p
	}
	fromJob, fromStore := step("the job", jobOptions(j, nil)), step("the stored bisection", optionsOf(b))
	fromStore.Seed, fromStore.Given["seed"] = fromJob.Seed, fromJob.Given["seed"] // each step draws its own
	if !reflect.DeepEqual(fromJob.Spec, fromStore.Spec) {
		t.Errorf("the job's step spec %+v\nthe stored bisection's %+v", fromJob.Spec, fromStore.Spec)
	}
	sp := fromJob.Spec
	if !reflect.DeepEqual(sp.Threads, []int{4}) || sp.Repeat != 6 || sp.Interleave != plan.InterleaveTest ||
		!reflect.DeepEqual(sp.Builds, []string{"pg-good", "pg-bad"}) || sp.Given["tests"] != "update-index_range=100" ||
		sp.Given["read-secs"] != "20" {
		t.Errorf("the step's spec: %+v", sp)
	}
}
