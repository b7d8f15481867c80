package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/metrics"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// How the labels of a plan (its builds × configs × engines) take turns
// (--interleave).
const (
	// InterleaveTest keeps every label's server up for the whole plan,
	// each loaded once, and runs each test on all of them before the next
	// test: a test that may be sliced (suite.Step.Slice) as short slices
	// alternating between the labels in a counterbalanced order (A B B A
	// …), the others whole on each label in turn, the order alternating
	// by repeat. Each round (one slice, or one whole run, per label, next
	// to each other in time) is a paired observation. It falls back to
	// pairs with the base, then to InterleavePass, where the servers do
	// not fit in memory together.
	InterleaveTest = "test"
	// InterleavePass runs each label's whole pass of the suite in turn, a
	// fresh server each repeat (A B A B): the labels of a round are
	// minutes apart.
	InterleavePass = "pass"
)

// Layout is how Run will interleave the plan's labels, decided by Decide:
// the mode, the groups of labels whose servers are up together (every
// label in one group; or the base with each other label in turn), and
// why, in one line for the user.
type Layout struct {
	Mode   string
	Groups [][]int // indexes into Labels(); nil for InterleavePass
	Why    string
}

// serverOverhead is what a server takes beyond its configured caches
// (its code, threads, connections, dictionaries), in the memory check.
const serverOverhead = 256 << 20

// memoryShare is the part of the host's available memory the servers of
// one group may reserve together.
const memoryShare = 0.8

// Labels are the plan's labels in run order: each build with each config
// with each storage engine; the first is the base of comparisons.
func (p *Plan) Labels() []LabelSpec {
	var out []LabelSpec
	for _, b := range p.Builds {
		for _, c := range p.Configs {
			for _, e := range p.enginesOf(b) {
				out = append(out, LabelSpec{b, c, e})
			}
		}
	}
	return out
}

// Decide chooses the plan's Layout from --interleave and the host's
// available memory (read from roots): test-level interleaving where every
// label's server fits in memory beside the others; else each label's
// server up beside the base's, two at a time; else pass-level. A plan of
// one label, or on a --sandbox, runs as a pass.
func (p *Plan) Decide(roots host.Roots) error {
	labels := p.Labels()
	mode := p.Interleave
	if mode == "" {
		mode = InterleaveTest
	}
	switch {
	case mode != InterleaveTest && mode != InterleavePass:
		return fmt.Errorf("--interleave %s: use test (each test's rounds alternate between the labels, their servers up together) or pass (each label's whole pass in turn)", mode)
	case mode == InterleavePass:
		p.layout = Layout{Mode: InterleavePass, Why: "pass-level interleaving (--interleave pass): each label's whole pass in turn, a fresh server each repeat"}
		return nil
	case len(labels) < 2 || p.Sandbox != "":
		p.layout = Layout{Mode: InterleavePass, Why: "one label: nothing to interleave"}
		return nil
	}
	need := make([]int64, len(labels))
	var what []string
	for i, l := range labels {
		if l.Config.Content == nil {
			continue
		}
		n, w, err := config.Memory(l.Config)
		if err != nil {
			return err
		}
		if n > 0 || !p.Steps.NoServer {
			need[i] = n + serverOverhead
		}
		if i == 0 || w != what[len(what)-1] {
			what = append(what, w)
		}
	}
	avail, err := host.Available(roots)
	if err != nil {
		p.layout = Layout{Mode: InterleavePass, Why: "pass-level interleaving: the host's free memory cannot be read (" + err.Error() + "), so the servers are not kept up together"}
		return nil
	}
	budget := int64(memoryShare * float64(avail))
	var all int64
	maxOther := int64(0)
	for i, n := range need {
		all += n
		if i > 0 {
			maxOther = max(maxOther, n)
		}
	}
	gib := func(n int64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }
	caches := strings.Join(what, ", ")
	switch {
	case all <= budget:
		g := make([]int, len(labels))
		for i := range g {
			g[i] = i
		}
		p.layout = Layout{Mode: InterleaveTest, Groups: [][]int{g},
			Why: fmt.Sprintf("test-level interleaving: the %d labels' servers up together (%s with their caches, %s, of %s available)", len(labels), gib(all), caches, gib(avail))}
	case need[0]+maxOther <= budget:
		var gs [][]int
		for i := 1; i < len(labels); i++ {
			gs = append(gs, []int{0, i})
		}
		p.layout = Layout{Mode: InterleaveTest, Groups: gs,
			Why: fmt.Sprintf("test-level interleaving in pairs: the %d labels' servers need %s (%s) and %s is available, so each label runs beside the base in turn, two servers up at a time (the base is loaded and run once per pair)", len(labels), gib(all), caches, gib(avail))}
	default:
		p.layout = Layout{Mode: InterleavePass,
			Why: fmt.Sprintf("pass-level interleaving: two servers need %s (%s) and %s is available; lower the buffer pool or shared_buffers to keep the servers up together", gib(need[0]+maxOther), caches, gib(avail))}
	}
	return nil
}

// Layout is what Decide chose (a zero Layout before it runs).
func (p *Plan) Layout() Layout { return p.layout }

// testLevel says whether the plan interleaves at the test level: decided
// so, or, before Decide, not asked for pass-level.
func (p *Plan) testLevel() bool {
	if p.layout.Mode != "" {
		return p.layout.Mode == InterleaveTest
	}
	return p.Interleave != InterleavePass && len(p.Labels()) > 1 && p.Sandbox == ""
}

// groups are the groups of labels up together (all of them, before
// Decide).
func (p *Plan) groups() [][]int {
	if p.layout.Mode == InterleaveTest {
		return p.layout.Groups
	}
	g := make([]int, len(p.Labels()))
	for i := range g {
		g[i] = i
	}
	return [][]int{g}
}

// testItems are the runs of a test-level plan in the order they start:
// per group of labels, per repeat, each step at each thread count on
// every label of the group (a step that runs once, in the first repeat
// only).
func (p *Plan) testItems() []Item {
	labels := p.Labels()
	var out []Item
	for gi, g := range p.groups() {
		for rep := 1; rep <= max(p.Repeat, 1); rep++ {
			for i, st := range p.Steps.Steps {
				if st.Once && rep > 1 {
					continue
				}
				for _, nt := range p.threadsOf(st) {
					for _, li := range g {
						l := labels[li]
						it := Item{Repeat: rep, Build: l.Build, Config: l.Config, Engine: l.Engine, Step: i, Test: st.Test, Threads: nt, Group: gi}
						switch {
						case st.Drive != nil && st.Drive.UntilScheduled:
							it.Seconds = st.Seconds
						case st.Drive != nil:
							it.Seconds = st.Seconds + p.Warmup
						}
						out = append(out, it)
					}
				}
			}
		}
	}
	return out
}

// sliced says whether the step runs as slices: under test-level
// interleaving, a step its suite lets slice, driven in closed loop to a
// measured time, with no stack captures or profile (which cost the
// server per window, and want whole windows).
func (p *Plan) sliced(st suite.Step) bool {
	return p.testLevel() && st.Slice && st.Drive != nil && !st.Drive.UntilScheduled && st.Seconds > 0 &&
		p.Rate == 0 && p.PMP == 0 && !p.Perf
}

// pairingOf is how the plan puts the runs of step beside the other
// labels' (result.Paired*): "" with one label.
func (p *Plan) pairingOf(st suite.Step) string {
	switch {
	case len(p.Labels()) < 2:
		return ""
	case !p.testLevel():
		return result.PairedPasses
	case p.sliced(st):
		return result.PairedSlices
	}
	return result.PairedTests
}

// order is the labels' order in round g: rounds come in pairs, the second
// the first reversed, and each pair rotated one label on from the last
// (two labels: A B, B A, B A, A B, …). Each label is first as often as
// last, and a drift that is linear over a pair of rounds cancels within
// it.
func order(n, g int) []int {
	rot := (g / 2) % n
	o := make([]int, n)
	for i := range o {
		o[i] = (i + rot) % n
	}
	if g%2 == 1 {
		slices.Reverse(o)
	}
	return o
}

// Slicing defaults: a sliced step's measured time per repeat is cut into
// one slice a second, at least minSlices and at most maxSlices, none
// shorter than shortestSlice.
const (
	minSlices     = 4
	maxSlices     = 20
	shortestSlice = 50 * time.Millisecond
)

// sliceCount is how many slices a sliced step runs per repeat (--slices,
// or one a second within minSlices..maxSlices), and how long each is.
func (p *Plan) sliceCount(st suite.Step) (int, time.Duration) {
	k := p.Slices
	if k <= 0 {
		k = min(max(int(math.Round(st.Seconds.Seconds())), minSlices), maxSlices)
	}
	for k > 1 && st.Seconds/time.Duration(k) < shortestSlice {
		k--
	}
	return k, st.Seconds / time.Duration(k)
}

// switchWarmup is the unmeasured warm-up of a slice after the servers
// switch: a quarter of the slice, within 50 ms and 2 s (the first slice of
// each repeat gets the plan's --warmup if that is longer).
func switchWarmup(slice time.Duration) time.Duration {
	return min(max(slice/4, 50*time.Millisecond), 2*time.Second)
}

// guard is how long a run bounded by events (a write slice, its warm-up,
// the calibration) may go without completing an event: four times its
// share, and 5 s more. It ends only a run that stopped completing events
// (a server that stopped answering): a run that is merely slow, on a
// loaded host, ends by its events, so every label's tables take the same
// writes (engine.Options.Guard).
func guard(d time.Duration) time.Duration { return 4*d + 5*time.Second }

// seedOf is the seed of item it's runs: the plan's, by test and threads
// (the same on every label, so that each replays the same events), and
// under test-level interleaving, where repeats run on the same tables,
// by repeat after the first.
func (p *Plan) seedOf(st suite.Step, it Item) uint64 {
	if p.testLevel() && it.Repeat > 1 {
		return seedFor(p.Seed, fmt.Sprintf("%s/repeat=%d", st.Test, it.Repeat), it.Threads)
	}
	return seedFor(p.Seed, st.Test, it.Threads)
}

// interleaved runs a test-level plan's items, group by group.
func (p *Plan) interleaved(ctx context.Context, h home.Home, items []Item) error {
	for i := 0; i < len(items); {
		j := i
		for j < len(items) && items[j].Group == items[i].Group {
			j++
		}
		if len(p.layout.Groups) > 1 {
			g := p.layout.Groups[items[i].Group]
			p.logf("== pair %d of %d: %s beside %s", items[i].Group+1, len(p.layout.Groups), p.Labels()[g[1]].Label(), p.Labels()[g[0]].Label())
		}
		if err := p.group(ctx, h, items, i, j); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// Label is how the label's results are addressed (Item.Label).
func (l LabelSpec) Label() string {
	return Item{Build: l.Build, Config: l.Config, Engine: l.Engine}.Label()
}

// group starts the servers of items[from:to]'s labels, keeps them up
// while it runs the items, each step at each thread count on all of them
// before the next (the steps' Before and After on all of them at once),
// and stops them, whatever happened.
func (p *Plan) group(ctx context.Context, h home.Home, items []Item, from, to int) (err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var specs []LabelSpec
	conns := map[int]int{}
	for _, it := range items[from:to] {
		i := slices.IndexFunc(specs, func(l LabelSpec) bool { return l.same(it.spec()) })
		if i < 0 {
			i = len(specs)
			specs = append(specs, it.spec())
		}
		conns[i] = max(conns[i], p.connections(it), 1)
	}
	var srvs []*server
	defer func() {
		for i := len(srvs) - 1; i >= 0; i-- {
			if derr := srvs[i].down(); derr != nil && err == nil {
				err = derr
			}
		}
	}()
	for i, l := range specs {
		s, err := p.up(ctx, cancel, h, l, conns[i], ", up for the whole plan")
		if err != nil {
			return err
		}
		srvs = append(srvs, s)
	}
	of := func(it Item) *server {
		return srvs[slices.IndexFunc(specs, func(l LabelSpec) bool { return l.same(it.spec()) })]
	}
	for k := from; k < to; {
		j := k
		for j < to && items[j].Repeat == items[k].Repeat && items[j].Step == items[k].Step && items[j].Threads == items[k].Threads {
			j++
		}
		st := p.Steps.Steps[items[k].Step]
		first := k == from || items[k-1].Step != items[k].Step || items[k-1].Repeat != items[k].Repeat
		last := j == to || items[j].Step != items[k].Step || items[j].Repeat != items[k].Repeat
		block := make([]*server, 0, j-k)
		for _, it := range items[k:j] {
			block = append(block, of(it))
		}
		if first && st.Before != nil {
			if err := p.hooks(ctx, block, st.Before, "before "+st.Test); err != nil {
				return err
			}
		}
		if p.sliced(st) {
			err = p.slices(ctx, block, items, k, j)
		} else {
			err = p.wholes(ctx, block, items, k, j)
		}
		if err != nil {
			return err
		}
		if last && st.After != nil {
			if err := p.hooks(ctx, block, st.After, ""); err != nil {
				return err
			}
		}
		k = j
	}
	return nil
}

// hooks runs a step's Before or After on every server at once (the
// post-write flush and wait of all labels at the same point of the plan),
// and returns the first failure.
func (p *Plan) hooks(ctx context.Context, srvs []*server, hook func(context.Context, *suite.Server) error, what string) error {
	errs := make([]error, len(srvs))
	var wg sync.WaitGroup
	for i, s := range srvs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := hook(ctx, s.srv); err != nil {
				if what != "" {
					err = fmt.Errorf("%s on %s: %w", what, s.spec.Build.Name, err)
				}
				errs[i] = hookErr(ctx, s.died, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// wholes runs items[k:j], one step at one thread count on each server of
// block, whole, one after the other in the repeat's counterbalanced order.
func (p *Plan) wholes(ctx context.Context, block []*server, items []Item, k, j int) error {
	for _, i := range order(j-k, items[k].Repeat-1) {
		s := block[i]
		if err := p.runItem(ctx, s.srv, s.m, items, k+i, s.died, p.idlePIDs(block, s)); err != nil {
			return err
		}
	}
	return nil
}

// idlePIDs are the servers of block other than s: idle while s is
// measured.
func (p *Plan) idlePIDs(block []*server, s *server) []int {
	var out []int
	for _, o := range block {
		if o != s && o.pid > 0 {
			out = append(out, o.pid)
		}
	}
	return out
}

// lane is one label's run of a sliced step: its engine session (workers
// kept open over the slices), the slices measured so far and what was
// measured in each, and where its samples go.
type lane struct {
	s      *server
	it     Item
	k      int // the item's index
	start  result.Run
	rec    Recorder
	sess   *engine.Session
	parts  []*result.Run
	hws    []*result.HW
	ctrs   []*result.ServerCounters
	rounds []result.Round
	next   int     // the number of its next sample
	warm   float64 // unmeasured seconds run
	stalls float64
	stall  float64
	err    error
}

// slices runs items[k:j], one step at one thread count on each server of
// block, as K slices per label: round after round, each label's slice in
// the round's counterbalanced order, each after a short warm-up. A step
// that writes is first calibrated (calibrate) and each slice is bounded
// by the same number of events on every label. Each label's slices are
// then merged into its run, which keeps them as its rounds.
func (p *Plan) slices(ctx context.Context, block []*server, items []Item, k, j int) (err error) {
	it0 := items[k]
	st := p.Steps.Steps[it0.Step]
	K, slice := p.sliceCount(st)
	warm := switchWarmup(slice)
	seed := p.seedOf(st, it0)
	lanes := make([]*lane, 0, j-k)
	defer func() {
		for _, l := range lanes {
			if l.sess != nil {
				l.sess.Close()
			}
		}
	}()
	for i, s := range block {
		it := items[k+i]
		start := p.start(it, st, seed)
		if s.srv.Client.Transport != "" {
			start.Params["transport"] = string(s.srv.Client.Transport)
		}
		if p.Watch.Start != nil {
			p.Watch.Start(k+i, len(items), it)
		}
		rec, err := p.record(start)
		if err != nil {
			return err
		}
		l := &lane{s: s, it: it, k: k + i, start: start, rec: rec}
		lanes = append(lanes, l)
		workers := it.Threads
		if st.Drive.Workers != nil {
			workers = st.Drive.Workers(it.Threads)
		}
		if l.sess, l.err = engine.Open(ctx, st.Drive.Workload(s.srv, seed), workers); l.err != nil {
			l.sess = nil
			break
		}
	}
	p.logf("-- %s, %d thread(s), %d slice(s) of %s per label, each after %s of warm-up, labels alternating", st.Test, it0.Threads, K, slice, warm)
	var events, warmEvents int64
	failed := slices.IndexFunc(lanes, func(l *lane) bool { return l.err != nil }) >= 0 || len(lanes) < len(block)
	if !failed && st.Writes {
		calib := max(p.Warmup, warm)
		events, warmEvents, err = p.calibrate(ctx, lanes, order(len(lanes), (it0.Repeat-1)*K), calib, slice, warm)
		if err != nil {
			failed = true
		}
	}
	for r := 0; r < K && !failed; r++ {
		g := (it0.Repeat-1)*K + r
		for _, i := range order(len(lanes), g) {
			l := lanes[i]
			w := warm
			if r == 0 && !st.Writes {
				w = max(p.Warmup, warm)
			}
			if l.err = p.slice(ctx, l, st, r+1, w, slice, events, warmEvents, p.idlePIDs(block, l.s)); l.err != nil {
				failed = true
				break
			}
		}
	}
	if err == nil {
		for _, l := range lanes {
			if l.err != nil {
				err = l.err
				break
			}
		}
	}
	if err == nil && len(lanes) < len(block) {
		err = errors.New("a label's run could not start")
	}
	return p.finishLanes(ctx, st, items, lanes, err)
}

// calibrate sizes a write step's slices so that every label's tables take
// the same writes. The first label in the round's order runs the step in
// event-bounded batches (16 events, then twice as many each time) until
// calib has passed, unmeasured; every other label then runs exactly as
// many events. A slice is then the events the labels' mean rate
// (geometric) does in slice, its warm-up those it does in warm. Every run
// here ends by its events (guard).
func (p *Plan) calibrate(ctx context.Context, lanes []*lane, ord []int, calib, slice, warm time.Duration) (events, warmEvents int64, err error) {
	first := lanes[ord[0]]
	var total int64
	var secs float64
	for batch := int64(16); secs < calib.Seconds(); batch *= 2 {
		res, err := first.sess.Run(ctx, engine.Options{Mux: mux(first.s.srv.Client.Transport), Warmup: -1, Events: batch, Guard: guard(calib)})
		if err != nil {
			first.err = fmt.Errorf("calibrating the write slices of %s: %w", first.it.Test, err)
			return 0, 0, first.err
		}
		total += res.Totals.Events
		secs += res.Totals.Seconds
	}
	if total == 0 || secs <= 0 {
		first.err = fmt.Errorf("calibrating the write slices of %s: no event completed", first.it.Test)
		return 0, 0, first.err
	}
	first.warm += secs
	logRate := math.Log(float64(total) / secs)
	for _, i := range ord[1:] {
		l := lanes[i]
		res, err := l.sess.Run(ctx, engine.Options{Mux: mux(l.s.srv.Client.Transport), Warmup: -1, Events: total, Guard: guard(time.Duration(secs * float64(time.Second)))})
		if err != nil {
			l.err = err
			return 0, 0, err
		}
		l.warm += res.Totals.Seconds
		logRate += math.Log(max(float64(res.Totals.Events), 1) / max(res.Totals.Seconds, 1e-9))
	}
	rate := math.Exp(logRate / float64(len(ord)))
	events = max(1, int64(math.Round(rate*slice.Seconds())))
	warmEvents = int64(math.Round(rate * warm.Seconds()))
	p.logf("-- %s: calibrated at %.0f events/s: %d events a slice, %d to warm up", first.it.Test, rate, events, warmEvents)
	return events, warmEvents, nil
}

// slice runs one slice of lane l: its warm-up (warm, or warmEvents for a
// step that writes), then its measured part (dur, or events, which end it
// however long they take: guard), and keeps what it measured as round r. The slice's window (the
// hardware sampler, the server's counters, the idle servers' CPU) opens
// after the warm-up and closes after the measured events, while the
// server is quiet: their reads take milliseconds and queries, which inside
// a slice of a quarter second would be a noticeable and varying part of
// it; the cost per op is then over the window's own length.
func (p *Plan) slice(ctx context.Context, l *lane, st suite.Step, r int, warm, dur time.Duration, events, warmEvents int64, idle []int) error {
	if warm > 0 || warmEvents > 0 {
		wo := engine.Options{Mux: mux(l.s.srv.Client.Transport), Warmup: -1, Duration: warm}
		if st.Writes {
			wo.Events, wo.Duration, wo.Guard = warmEvents, 0, guard(warm)
		}
		if wo.Events > 0 || wo.Duration > 0 {
			res, err := l.sess.Run(ctx, wo)
			if err != nil {
				return err
			}
			l.warm += res.Totals.Seconds
		}
	}
	win := p.window(ctx, l.s.m, idle)
	next := l.next
	// No sample goes to the recorder as it is measured: the run's samples
	// are its slices' laid end to end, written with it when it ends
	// (engine.Session.Merge gives each slice's last its length).
	o := engine.Options{Mux: mux(l.s.srv.Client.Transport), Warmup: -1, Duration: dur, Seed: l.start.Seed}
	if st.Writes {
		o.Events, o.Duration, o.Guard = events, 0, guard(dur)
	}
	win.Open()
	res, err := l.sess.Run(ctx, o)
	win.Close()
	if res == nil {
		win.release()
		return err
	}
	op := st.Headline.Of(&res.Totals)
	var perSec []float64
	for _, s := range res.Samples {
		for len(perSec) < s.Second {
			perSec = append(perSec, 0)
		}
		perSec = append(perSec, s.Count(res.Totals.Series))
		l.next = max(l.next, next+s.Second+1)
	}
	win.opsOver(res.Totals.Reported * res.Totals.Seconds)
	win.finish(res, op, perSec, p.logf)
	if stalled, longest := result.Stalls(res.Samples, res.Totals.Series, res.Totals.Seconds, result.StallFraction); res.Totals.Seconds >= 3 && len(res.Samples) > 0 {
		l.stalls += float64(len(stalled))
		l.stall = max(l.stall, float64(longest))
	}
	if res.HW != nil {
		l.hws = append(l.hws, res.HW)
		l.ctrs = append(l.ctrs, res.HW.Server)
	}
	l.parts = append(l.parts, res)
	t := res.Totals
	rd := result.Round{Repeat: l.it.Repeat, Round: r, Started: res.Started.UTC(),
		Seconds: t.Seconds, Events: t.Events, Statements: t.Statements, Rows: t.Rows, Value: t.Reported, IdleCPU: win.idleCPU()}
	for _, m := range append(result.MetricsOf(result.ClassHW), result.MetricsOf(result.ClassCPU)...) {
		if v, ok := m.Of(*res); ok && !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 {
			if rd.Figures == nil {
				rd.Figures = map[string]float64{}
			}
			rd.Figures[m.Name] = v
		}
	}
	l.rounds = append(l.rounds, rd)
	return err
}

// finishLanes merges each lane's slices into its run, records it, and
// returns how the block ended: err, or what ended a lane. When one lane
// failed, the others' runs are recorded aborted, with why.
func (p *Plan) finishLanes(ctx context.Context, st suite.Step, items []Item, lanes []*lane, err error) error {
	var dead *ServerDied
	why := ""
	for _, l := range lanes {
		if l.err != nil {
			why = fmt.Sprintf("%s on %s: %v", st.Test, l.s.spec.Label(), l.err)
			break
		}
	}
	for _, l := range lanes {
		res := p.merged(ctx, st, l)
		switch {
		case l.err != nil && errors.As(context.Cause(ctx), &dead):
			res.Status, res.Error = result.Failed, dead.Error()
		case l.err != nil && ctx.Err() != nil:
			res.Status, res.Error = result.Aborted, "interrupted"
		case l.err != nil:
			res.Status, res.Error = result.Failed, l.err.Error()
			if derr := l.s.died(); derr != nil {
				res.Error = fmt.Sprintf("%v (the run saw: %v)", derr, l.err)
			}
		case err != nil && ctx.Err() != nil:
			res.Status, res.Error = result.Aborted, "interrupted"
		case err != nil:
			res.Status, res.Error = result.Aborted, "interrupted: "+why
		}
		if p.Watch.Done != nil {
			p.Watch.Done(l.k, len(items), *res)
		}
		if rerr := l.rec.Done(*res); rerr != nil && err == nil {
			err = rerr
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.As(context.Cause(ctx), &dead):
		return fmt.Errorf("%s: %w", st.Test, dead)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("%s", why)
}

// merged is lane l's run: its slices laid end to end, with what the engine
// does not know of it, its hardware cost over all its slices, its rounds
// and stalls, and the step's Finish.
func (p *Plan) merged(ctx context.Context, st suite.Step, l *lane) *result.Run {
	start := l.start
	if len(l.parts) == 0 {
		fail := start
		fail.Status, fail.Ended = result.Failed, time.Now().UTC()
		if l.err != nil {
			fail.Error = l.err.Error()
		}
		return &fail
	}
	res := l.sess.Merge(l.parts)
	res.QpslabVersion, res.Host, res.Suite, res.Test = start.QpslabVersion, start.Host, start.Suite, start.Test
	res.Step, res.Role, res.Groups = start.Step, start.Role, start.Groups
	res.Build, res.Flavor, res.Version, res.Config = start.Build, start.Flavor, start.Version, start.Config
	res.Seed, res.Params, res.Threads = start.Seed, start.Params, start.Threads
	res.Plan, res.Pairing, res.Rounds = start.Plan, start.Pairing, l.rounds
	res.Warmup = l.warm
	res.Params["slices"] = fmt.Sprint(len(l.rounds))
	op := st.Headline.Of(&res.Totals)
	// The cost per op over the slices' windows: their ops over their
	// summed length (each window a little wider than its measured time).
	var ops, secs float64
	for _, part := range l.parts {
		if part.HW.Measured() {
			ops += part.Totals.Reported * part.Totals.Seconds
			secs += part.HW.Avg.Dur
		}
	}
	rate := res.Totals.Reported
	if ops > 0 && secs > 0 {
		rate = ops / secs
	}
	res.HW = metrics.Merge(l.hws, rate, op)
	if res.HW != nil {
		res.HW.OpsPerSec = res.Totals.Reported
		res.HW.Server = counters.Merge(l.ctrs)
	}
	if res.Totals.Seconds >= 3 && len(res.Samples) > 0 {
		engine.SetStalls(&res.Totals, l.stalls, l.stall)
	}
	if l.err == nil && res.Status == result.OK && st.Finish != nil {
		if ferr := st.Finish(ctx, l.s.srv, res); ferr != nil {
			res.Status, res.Error = result.Failed, "after the run: "+ferr.Error()
			l.err = ferr
		}
	}
	return res
}
