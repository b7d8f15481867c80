package app

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/result"
)

// A study's labels run base first, their sweep's order beside it: the
// order of their builds in the sweep.
func TestSweepOrder(t *testing.T) {
	var labels []plan.LabelSpec
	for _, b := range []string{"c", "a", "b", "x"} {
		labels = append(labels, plan.LabelSpec{Build: build.Build{Name: b}})
	}
	if got := sweepOrder(labels, []string{"a", "b", "c"}); !slices.Equal(got, []int{1, 2, 0, 3}) {
		t.Errorf("sweep order %v, want [1 2 0 3] (a, b, c, then x, which the sweep does not name)", got)
	}
}

// --until-decided in a sweep: a test decided against the base everywhere
// still gets more repeats while a neighbour comparison of it is undecided
// (b and c: 2× the base each, 4 % apart in noise of 20 %); without the
// sweep it gets none.
func TestUndecidedNeighbours(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 6))
	mk := func(build string, ratio float64) []result.Run {
		var out []result.Run
		for rep := 1; rep <= 6; rep++ {
			r := result.Run{Suite: "sysbench", Test: "point-query_range=100", Build: build, Config: "c@1", Threads: 1, Status: result.OK, Role: result.RoleTest,
				Plan: "p", Pairing: result.PairedSlices, Params: map[string]string{"repeat": strconv.Itoa(rep), "writes": "false"}}
			for round := 1; round <= 4; round++ {
				r.Rounds = append(r.Rounds, result.Round{Repeat: rep, Round: round, Seconds: 0.25, Value: 1000 * ratio * math.Exp(0.2*rng.NormFloat64())})
			}
			r.Totals.Reported = 1000 * ratio
			out = append(out, r)
		}
		return out
	}
	// Runs in the order a counterbalanced round may store them: c first.
	runs := append(append(mk("c", 2.08), mk("a", 1)...), mk("b", 2)...)
	names := []string{"a.c", "b.c", "c.c"}
	var w bytes.Buffer
	got, err := undecided(context.Background(), nil, runs, 1, 2, &w, names, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("against the base only: undecided %v, %v\n%s", got, err, w.String())
	}
	got, err = undecided(context.Background(), nil, runs, 1, 2, &w, names, names)
	if err != nil || !slices.Equal(got, []string{"point-query_range=100"}) {
		t.Fatalf("in the sweep a, b, c: undecided %v, %v, want point-query_range=100 (c against b)\n%s", got, err, w.String())
	}
}

// A run's comparison and the components it keeps take the plan's first
// label as the base, whichever label's run came first (a counterbalanced
// round, a sweep's neighbour pair that starts with another build).
func TestPlanSetsBaseFirst(t *testing.T) {
	p := &plan.Runner{Builds: []build.Build{{Name: "base"}, {Name: "old"}}, Configs: []config.Config{{Name: "c"}}}
	runs := []result.Run{{Build: "old", Config: "c@1"}, {Build: "base", Config: "c@1"}, {Build: "old", Config: "c@1"}}
	sets := planSets(p, runs)
	if len(sets) != 2 || sets[0].Label != "base.c" || sets[1].Label != "old.c" || len(sets[1].Runs) != 2 {
		t.Fatalf("sets %+v, want base.c then old.c", sets)
	}
}
