package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/qpslab/qpslab/internal/analysis"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/plan"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// hostOf is the fingerprint id of the host runs ran on ("" where none
// records one).
func hostOf(runs []result.Run) string {
	for _, r := range runs {
		if id, err := store.HostID(r.Host); err == nil && len(r.Host) > 0 {
			return id
		}
	}
	return ""
}

// thisHost is this machine's fingerprint, as its runs record it, and its
// id (the key of its noise floors and variance components).
func thisHost() (json.RawMessage, string, error) {
	hc, err := host.Inspect(host.Real)
	if err != nil {
		return nil, "", fmt.Errorf("record the host fingerprint: %w", err)
	}
	fp, err := json.Marshal(hc)
	if err != nil {
		return nil, "", err
	}
	id, err := store.HostID(fp)
	return fp, id, err
}

// hostComponents are the variance components this host's comparisons
// stored for a suite, per test, and the pools' (analysis.Components): a
// test's own round noise where it was measured (scaled to the slice it
// will have), each pool's repeat effect pooled over its tests' A/B
// comparisons, and DefaultComponents where nothing was stored.
type hostComponents struct {
	tests map[string]analysis.Components
	pools map[string]analysis.Components
}

// componentsOf reads them from the store (none, with the defaults, where
// there is no store yet or it holds none).
func componentsOf(ctx context.Context, e Env, suite, hostID string) hostComponents {
	hc := hostComponents{tests: map[string]analysis.Components{}, pools: map[string]analysis.Components{}}
	for _, pool := range []string{analysis.PoolReads, analysis.PoolWrites} {
		hc.pools[pool] = analysis.DefaultComponents(pool)
	}
	var rows []store.VarianceComponents
	err := e.WithStore(ctx, func(st *store.Store) error {
		var err error
		rows, err = st.Components(ctx, hostID, suite)
		return err
	})
	if err != nil && !errors.Is(err, store.ErrNoStore) {
		fmt.Fprintf(e.Err, "no variance components of this host read (%v): the defaults plan the repeats\n", oneLine(err.Error()))
	}
	const ref = 250 * time.Millisecond
	type acc struct {
		within, between float64
		nw, nb          int
		when            time.Time
	}
	pools := map[string]*acc{}
	for _, r := range rows {
		c := analysis.Components{Within: r.Within, Slice: time.Duration(r.Slice * float64(time.Second))}
		a := pools[r.Pool]
		if a == nil {
			a = &acc{}
			pools[r.Pool] = a
		}
		w := c.WithinAt(ref)
		a.within += w * w
		a.nw++
		if r.Kind == store.ComponentsAB {
			a.between += r.Between * r.Between
			a.nb++
		}
		if r.Measured.After(a.when) {
			a.when = r.Measured
		}
		if old, ok := hc.tests[r.Test]; !ok || r.Kind == store.ComponentsAB || old.Within == 0 {
			c.Source = fmt.Sprintf("this host's %s comparison of %s", r.Kind, r.Measured.Format("2006-01-02"))
			hc.tests[r.Test] = c
		}
	}
	for pool, a := range pools {
		c := hc.pools[pool]
		c.Within, c.Slice = math.Sqrt(a.within/float64(a.nw)), ref
		c.Source = fmt.Sprintf("this host's comparisons (%d test(s), the newest of %s)", a.nw, a.when.Format("2006-01-02"))
		if a.nb > 0 {
			c.Between = math.Sqrt(a.between / float64(a.nb))
		} else {
			c.Source += "; the repeat effect the default's (no A/B comparison stored)"
		}
		hc.pools[pool] = c
	}
	return hc
}

// of is a test's components: its own round noise, its pool's repeat
// effect.
func (hc hostComponents) of(test, pool string) analysis.Components {
	c := hc.pools[pool]
	if own, ok := hc.tests[test]; ok {
		c.Within, c.Slice = own.Within, own.Slice
		c.Source = own.Source + "; the repeat effect " + pool + "'s"
	}
	return c
}

// design resolves --repeat auto (plan.Spec.Repeat 0) into the runner's Design and returns each
// step's design, for --list-tests and the plan's line. A comparison of
// steps run as slices gets the repeats Kalibera and Jones's rule gives
// (autoRepeats: at least analysis.MinRepeats, at most MaxAutoRepeats),
// each step's seconds its measured time over all of them, and per pool
// the slices per repeat the same rule gives from this host's components
// (analysis.SlicesPerRepeat); anything else one repeat. With
// --until-decided, a look adds half as many repeats, and the budget is
// three times the first look's planned time unless given.
func design(ctx context.Context, e Env, p *plan.Runner, hostID string) []report.StepDesign {
	sliced := p.SlicedSteps()
	auto := len(sliced) > 0 && len(p.Labels()) > 1
	var hc hostComponents
	if auto {
		hc = componentsOf(ctx, e, p.Suite.Name(), hostID)
	}
	if p.Design.Repeat == 0 {
		p.Design.Repeat = 1
		if auto {
			p.Design.Repeat = autoRepeats(p, sliced, hc)
			p.SpreadSeconds(p.Design.Repeat)
		}
	}
	if p.Design.Looks > 1 {
		p.Design.Step = max(1, p.Design.Repeat/2)
		looksFit(p)
	}
	if !auto {
		return nil
	}
	level := analysis.Judging{Alpha: analysis.DefaultAlpha, Looks: p.Design.Looks}.Level()
	var out []report.StepDesign
	slices := map[bool]int{}
	for _, i := range sliced {
		st := p.Steps.Steps[i]
		pool := analysis.PoolReads
		if st.Writes {
			pool = analysis.PoolWrites
		}
		c := hc.of(st.Test, pool)
		k, _ := p.SliceCount(st)
		pc := hc.pools[pool] // a pool's slices come from its components, not its first test's
		if _, given := slices[st.Writes]; !given && p.Design.Slices == 0 {
			// Kalibera and Jones: a round costs a slice and its switch
			// warm-up on every label; a repeat beyond its rounds the first
			// slice's longer warm-up and the test's share of the restore.
			// The slice is the repeat's time cut into the count, so the
			// count is found again for the slice it gives.
			most := p.MostSlices(st)
			k = most
			for range 3 {
				slice := st.Seconds / time.Duration(k)
				round, repeat := levelCosts(p, slice, len(sliced))
				k = analysis.SlicesPerRepeat(pc, slice, round, repeat, most)
			}
			slices[st.Writes] = k
		}
		if k2, ok := slices[st.Writes]; ok && p.Design.Slices == 0 {
			k = k2
		}
		d := analysis.DesignOf(st.Seconds*time.Duration(max(p.Design.Repeat, 1)), max(p.Design.Repeat, 1), k, c, level)
		out = append(out, report.StepDesign{Test: st.Test, Pool: pool, Design: d, Source: c.Source})
	}
	if p.Design.Slices == 0 {
		p.Design.Slices, p.Design.WriteSlices = slices[false], slices[true]
	}
	return out
}

// MaxAutoRepeats are the most repeats --repeat auto plans: benchstat's
// 10 to 20 runs, and each repeat stores a run of every test on every label
// (the store and each comparison read them all).
const MaxAutoRepeats = 12

// Costs of a repeat beyond its rounds, besides the first slice's
// warm-up: a test's runs are opened and recorded once a repeat (0.2 s
// between two read tests of the demo's A/A runs on the project VM,
// docs/perf.md), and the tables are put back before it (a reload of the
// demo's 100,000 rows on every label, about 1 s; the plan is made before
// anything is loaded), which each sliced test shares.
const (
	repeatSetup   = 200 * time.Millisecond
	repeatRestore = time.Second
)

// levelCosts are Kalibera and Jones's costs of a plan's levels for a
// sliced test whose slices are slice long, among sliced tests: a round
// is a slice and its switch warm-up on every label; a repeat beyond its
// rounds, the first slice's longer warm-up on every label, the test's
// setup and its share of the restore.
func levelCosts(p *plan.Runner, slice time.Duration, sliced int) (round, repeat time.Duration) {
	labels := time.Duration(len(p.Labels()))
	round = labels * (slice + plan.SwitchWarmup(slice))
	repeat = labels*max(p.Warmup, plan.SwitchWarmup(slice)) + repeatSetup + repeatRestore/time.Duration(max(sliced, 1))
	return round, repeat
}

// autoRepeats is --repeat auto's count: Kalibera and Jones's rule at the
// top level. A test of T seconds a label holds N = T / plan.AutoSlice
// slices; where its pool's repeats carry variance of their own (σ_between
// > 0) the rule puts n = SlicesPerRepeat of them in each repeat, so the
// test asks N / n repeats; the plan, whose repeats every test shares
// (each starts from the tables as loaded), takes the most any test asks,
// within [analysis.MinRepeats, MaxAutoRepeats], and no more than leave
// every sliced test two slices of plan.AutoSlice a repeat (its --slices,
// where given). Where no pool has a repeat effect, more repeats buy
// nothing: MinRepeats, for the degrees of freedom of an interval on
// repeats.
func autoRepeats(p *plan.Runner, sliced []int, hc hostComponents) int {
	r, most := analysis.MinRepeats, MaxAutoRepeats
	for _, i := range sliced {
		most = min(most, int(p.Steps.Steps[i].Seconds/(time.Duration(max(p.Design.Slices, 2))*plan.AutoSlice)))
	}
	for _, i := range sliced {
		st := p.Steps.Steps[i]
		pool := analysis.PoolReads
		if st.Writes {
			pool = analysis.PoolWrites
		}
		pc := hc.pools[pool]
		n := int(st.Seconds / plan.AutoSlice)
		if !(pc.Between > 0) || n < 2 {
			continue
		}
		round, repeat := levelCosts(p, plan.AutoSlice, len(sliced))
		k := analysis.SlicesPerRepeat(pc, plan.AutoSlice, round, repeat, n)
		r = max(r, min(n/k, most))
	}
	return r
}

// PlannedOverhead is what a first look takes over its items' planned
// seconds (their warm-ups and measured time): the switch warm-ups, loads,
// restores, quiet waits, calibrations and records between them. An A/A run
// at the demo's budget took 7 min 11 s for 4 min 18 s planned on the
// project's 2-core VM (1.67).
const PlannedOverhead = 1.7

// looksFit sets --until-decided's looks (p.Design.Looks) to as many as the
// budget holds, at most plan.DefaultLooks, before anything runs: the first
// look's planned time (PlannedOverhead × its items' seconds), and each
// later look as long as the same share of it, every test undecided (Step
// of the first look's repeats), the worst case. Fixed in advance, so that
// each look's level (Pocock's for that many) keeps the false calls within
// α whatever the data; one look is judged at α itself. A budget that is
// not given is three times the first look's planned time.
func looksFit(p *plan.Runner) {
	var first time.Duration
	for _, it := range p.Items() {
		first += it.Seconds
	}
	first = time.Duration(PlannedOverhead * float64(first))
	if p.Design.Budget == 0 {
		p.Design.Budget = 3 * first
	}
	look := first * time.Duration(p.Design.Step) / time.Duration(max(p.Design.Repeat, 1))
	looks := plan.DefaultLooks
	if look > 0 {
		looks = 1 + int(max(p.Design.Budget-first, 0)/look)
	}
	p.Design.Looks = min(max(looks, 1), plan.DefaultLooks)
}

// keepComponents keeps what a comparison of this run measured of its
// tests' variance (analysis.ComponentsOf, each other label against the
// base), for --repeat auto to plan with later; an A/A run's as A/A (no
// repeat effect), any other as A/B.
func keepComponents(ctx context.Context, e Env, p *plan.Runner, runs []result.Run, aa bool) error {
	sets := planSets(p, runs)
	if len(sets) < 2 {
		return nil
	}
	hostID := hostOf(runs)
	if hostID == "" {
		return nil
	}
	kind := store.ComponentsAB
	if aa {
		kind = store.ComponentsAA
	}
	var keep []store.VarianceComponents
	now := time.Now().UTC()
	for _, o := range sets[1:] {
		for _, c := range analysis.ComponentsOf(sets[0], o) {
			keep = append(keep, store.VarianceComponents{HostID: hostID, Suite: p.Suite.Name(), Test: c.Test, Threads: c.Threads, Conditions: c.Conditions,
				Kind: kind, Pool: c.Pool, Slice: c.Slice.Seconds(), Within: c.Within, Between: c.Between, Rounds: c.Rounds, Repeats: c.Repeats, Plan: p.ID, Measured: now})
		}
	}
	// An A/A plan's ratio of each test: one draw of its run effect on
	// this host (analysis.BetweenRuns).
	var effects []store.RunEffect
	if aa {
		for _, ef := range analysis.EffectsOf(sets[0], sets[1]) {
			effects = append(effects, store.RunEffect{HostID: hostID, Suite: p.Suite.Name(), Test: ef.Test, Threads: ef.Threads, Conditions: ef.Conditions,
				Plan: p.ID, LogRatio: ef.LogRatio, SE: ef.SE, Measured: now})
		}
	}
	if len(keep) == 0 && len(effects) == 0 {
		return nil
	}
	st, err := e.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.SaveComponents(ctx, keep); err != nil {
		return err
	}
	return st.SaveRunEffects(ctx, effects)
}
