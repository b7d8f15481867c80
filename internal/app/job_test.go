package app

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/qpslab/qpslab/internal/fleet"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/suite"
)

// A job written before jobs carried a Spec (testdata: its parameters
// alone, as the release before wrote them) still runs, as the same spec
// a job of today carries.
func TestAgentRunsJobsWrittenBeforeTheSpec(t *testing.T) {
	b, err := os.ReadFile("testdata/job-before-spec.json")
	if err != nil {
		t.Fatal(err)
	}
	var old fleet.Job
	if err := json.Unmarshal(b, &old); err != nil {
		t.Fatal(err)
	}
	if len(old.Spec) != 0 {
		t.Fatal("the testdata job carries a spec: it is to be one written before specs")
	}
	was, err := jobPlan(old, nil)
	if err != nil {
		t.Fatalf("the job written before specs: %v", err)
	}
	s, err := suite.Get(old.Suite)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := plan.JobSpec(s, old.Params, old.Files)
	if err != nil {
		t.Fatal(err)
	}
	now := old
	now.Spec = spec
	// Through River's JSON, as an agent gets it.
	b, err = json.Marshal(now)
	if err != nil {
		t.Fatal(err)
	}
	var got fleet.Job
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	is, err := jobPlan(got, nil)
	if err != nil {
		t.Fatalf("the job with its spec: %v", err)
	}
	if !reflect.DeepEqual(was.Spec, is.Spec) || len(was.Items()) != len(is.Items()) {
		t.Errorf("the job before specs runs %+v (%d items), with its spec %+v (%d items)", was.Spec, len(was.Items()), is.Spec, len(is.Items()))
	}
	if !reflect.DeepEqual(is.Threads, []int{1, 8}) || is.Seed != 7031464291392478331 || is.Given["read-secs"] != "90" {
		t.Errorf("the spec: %+v", is.Spec)
	}
}
