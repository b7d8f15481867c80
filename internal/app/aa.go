package app

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
	"github.com/qpslab/qpslab/internal/suite"
)

// aaConfigs makes the two labels of an A/A run: the one config named,
// under two names of its own (CONFIG-aa1, CONFIG-aa2) with its settings
// and nothing else, so the same server is measured against itself.
func aaConfigs(ctx context.Context, h home.Home, v suite.Values) (suite.Values, error) {
	c := v.Check()
	builds, configs := c.List("build"), c.List("config")
	if len(builds) != 1 || len(configs) != 1 || c.String("sandbox") != "" || len(c.List("set")) > 0 || c.String("grid") != "" {
		return v, fmt.Errorf("--aa measures one build and config against itself: give exactly one --build and one --config (no --sandbox, --set or --grid)")
	}
	if len(c.List("engine")) > 1 {
		return v, fmt.Errorf("--aa measures one build and config against itself: give at most one --engine")
	}
	b, err := (build.Registry{Dir: h.Builds(), Cache: h.Cache}).Get(ctx, builds[0])
	if err != nil {
		return v, err
	}
	cs := config.Store{Dir: h.Configs()}
	base, err := cs.Get(configs[0], config.Family(b.Flavor.Describe().Family))
	if err != nil {
		return v, err
	}
	var names []string
	for _, n := range []string{"aa1", "aa2"} {
		name, err := ownLabel(cs, base, n, "An A/A label of qpslab run --aa: %s's settings under a name of its own.")
		if err != nil {
			return v, err
		}
		names = append(names, name)
	}
	return v.With("config", strings.Join(names, ",")), nil
}

// ownLabel is config base under a name of its own, BASE-SUFFIX, with its
// settings and nothing else: a label of a run whose labels differ in
// something other than a config (an A/A run's, a --boost run's). about
// says what it is for (%s: base's name).
func ownLabel(cs config.Store, base config.Config, suffix, about string) (string, error) {
	name := base.Name + "-" + suffix
	content := fmt.Sprintf("# qpslab: base=%s\n# "+about+"\n", base.Name, base.Name)
	_, err := cs.Ensure(name, []byte(content), base.Family)
	return name, err
}

// keepNoise keeps what an A/A run measured as its host's noise floor, per
// test, and prints it.
func keepNoise(ctx context.Context, e Env, p *plan.Runner, runs []result.Run) error {
	sets := analysis.LabelSets(runs)
	if len(sets) != 2 {
		return fmt.Errorf("the A/A run stored %d label(s), not 2: no noise floor kept", len(sets))
	}
	cmp, err := analysis.Compare(sets[0], sets[1:], analysis.Options{})
	if err != nil {
		return fmt.Errorf("the A/A run's comparison: %w", err)
	}
	floors := analysis.AAFloors(cmp)
	if len(floors) == 0 {
		return fmt.Errorf("the A/A run has no paired test to measure a noise floor from (it needs --interleave test and tests that run on both labels)")
	}
	hostID := hostOf(runs)
	if hostID == "" {
		return fmt.Errorf("the A/A run's runs record no host: no noise floor kept")
	}
	budget := map[string]string{"repeat": strconv.Itoa(max(p.Design.Repeat, 1)), "slices": strconv.Itoa(p.Design.Slices), "interleave": p.Layout().Mode}
	for k, v := range p.Steps.Params {
		budget[k] = v
	}
	var keep []store.NoiseFloor
	now := time.Now().UTC()
	for _, f := range floors {
		keep = append(keep, store.NoiseFloor{HostID: hostID, Suite: cmp.Suite, Test: f.Test, Threads: f.Threads, Conditions: f.Conditions, Metric: store.HeadlineMetric,
			Floor: f.Floor, Rel: f.Rel, Lo: f.Lo, Hi: f.Hi, Rounds: f.Rounds, Pairing: f.Pairing, Plan: p.ID, Build: p.Builds[0].Name,
			Config: strings.TrimSuffix(p.Configs[0].Name, "-aa1"), Budget: budget, Measured: now})
	}
	st, err := e.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.SaveNoise(ctx, keep); err != nil {
		return err
	}
	report.Floors(e.Out, cmp, floors, hostID)
	return nil
}

// planSets groups the runs of plan p by label in the plan's order of its
// labels (the first its base), whatever order they ran in: a round's
// labels run counterbalanced, and a sweep's neighbour pairs start with
// the sweep's first build, not the base. A label the plan does not name
// comes last.
func planSets(p *plan.Runner, runs []result.Run) []analysis.Set {
	var names []string
	for _, l := range p.Labels() {
		names = append(names, l.Label())
	}
	return orderSets(analysis.LabelSets(runs), names)
}

// orderSets sorts sets by their label's place in names (those not in it
// last, in their order).
func orderSets(sets []analysis.Set, names []string) []analysis.Set {
	rank := func(s analysis.Set) int {
		if i := slices.Index(names, s.Label); i >= 0 {
			return i
		}
		return len(names)
	}
	slices.SortStableFunc(sets, func(a, b analysis.Set) int { return rank(a) - rank(b) })
	return sets
}
