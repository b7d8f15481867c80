package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/counters"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/metrics"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/suite"
)

// The one way a plan runs a step: a block of items (one step at one
// thread count in one repeat, on every label of a group whose servers are
// up together) runs as rounds. A round is one slice of the step on each
// label, next to each other in time, in the round's counterbalanced order.
// A step that may be sliced under test-level interleaving runs K short
// slices per label (a write step's bounded by the same number of events on
// every label); any other driven step runs one slice that is the whole
// run, warm-up and all; a pass (pass-level interleaving) is a block of
// one label, a round of one slice. A task (the load, an external program)
// is no engine workload: it runs whole on each label in the round's order.

// blockRun is a block as it runs: one step (st) at one thread count in
// one repeat, items, on every label's server (block, in the items'
// order); for a driven step, its slicing and, for one that writes, the
// events of a slice and of its warm-up once calibrated.
type blockRun struct {
	p                  *Runner
	block              []*server
	items              []Item
	st                 suite.Step
	sl                 slicing
	events, warmEvents int64
}

// newBlock is the block of items on the servers of block.
func (p *Runner) newBlock(block []*server, items []Item) *blockRun {
	st := p.Steps.Steps[items[0].Step]
	return &blockRun{p: p, block: block, items: items, st: st, sl: p.slicingOf(st)}
}

// run runs the block: the step's Before before its first thread count in
// the repeat, After after its last (on all of its servers at once), the
// step's runs between.
func (b *blockRun) run(ctx context.Context, first, last bool) error {
	p, block, st := b.p, b.block, b.st
	if first && st.Before != nil {
		if err := p.hooks(ctx, block, st.Before, "before "+st.Test); err != nil {
			return err
		}
	}
	var err error
	if st.Task != nil {
		err = b.tasks(ctx)
	} else {
		err = b.drives(ctx)
	}
	if err != nil {
		return err
	}
	if last && st.After != nil {
		return p.hooks(ctx, block, st.After, "")
	}
	return nil
}

// hooks runs a step's Before or After on every server at once (the
// post-write flush and wait of all labels at the same point of the plan),
// and returns the first failure.
func (p *Runner) hooks(ctx context.Context, srvs []*server, hook func(context.Context, *suite.Server) error, what string) error {
	if p.follower() {
		return nil // part 0's (Share)
	}
	errs := make([]error, len(srvs))
	var wg sync.WaitGroup
	for i, s := range srvs {
		wg.Go(func() {
			if err := hook(ctx, s.srv); err != nil {
				if what != "" {
					err = fmt.Errorf("%s on %s: %w", what, s.spec.Label(), err)
				}
				errs[i] = hookErr(ctx, s, err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// workers is how many workers (connections) a driven step opens at a
// thread count: one per thread, or what its drive says (the Insert
// Benchmark's inserter, deleter and query threads per client).
func workers(st suite.Step, threads int) int {
	if st.Drive != nil && st.Drive.Workers != nil {
		return st.Drive.Workers(threads)
	}
	return threads
}

// idlePIDs are the servers of block other than s: idle while s is
// measured.
func (p *Runner) idlePIDs(block []*server, s *server) []int {
	var out []int
	for _, o := range block {
		if o != s && o.pid > 0 {
			out = append(out, o.pid)
		}
	}
	return out
}

// lane is one label's run of a driven step: its engine session (workers
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
	warm   float64 // unmeasured seconds run
	stalls float64
	stall  float64
	err    error
	begun  bool // Watch.Start was told
}

// slicing is how a driven step's block runs: K slices per label of slice
// each, each after warm of warm-up (the first of a read step's after the
// plan's --warmup if longer), whole (one slice that is the whole run, its
// warm-up inside it), bounded by events (a sliced write step).
type slicing struct {
	k           int
	slice, warm time.Duration
	whole       bool
	events      bool
}

// slicingOf is step st's slicing in this plan.
func (p *Runner) slicingOf(st suite.Step) slicing {
	if !p.sliced(st) {
		return slicing{k: 1, slice: st.Seconds, warm: p.Warmup, whole: true}
	}
	k, slice := p.SliceCount(st)
	return slicing{k: k, slice: slice, warm: SwitchWarmup(slice), events: st.Writes}
}

// drives runs the block's items, one driven step at one thread count on
// each server of the block, as K slices per label: round after round,
// each label's slice in the round's counterbalanced order. A sliced step
// that writes is first calibrated (calibrate) and each slice is bounded by
// the same number of events on every label. Each label's slices are then
// merged into its run, which keeps them as its rounds.
func (b *blockRun) drives(ctx context.Context) (err error) {
	p, block, items, st, sl := b.p, b.block, b.items, b.st, b.sl
	it0 := items[0]
	seed := p.seedOf(st, it0)
	lanes := make([]*lane, 0, len(items))
	defer func() {
		for _, l := range lanes {
			if l.sess != nil {
				l.sess.Close()
			}
		}
	}()
	if p.Share != nil {
		// Every part opens its connections once part 0's load and hooks
		// are done (the tables are there), then they start together.
		if err := p.startShared(ctx, ShareKey(st.Test, it0.Threads, strconv.Itoa(it0.Repeat))+"/open"); err != nil {
			return err
		}
	}
	for i, s := range block {
		it := items[i]
		start := p.start(it, st, seed)
		if s.srv.Client.Transport != "" {
			start.Params["transport"] = string(s.srv.Client.Transport)
		}
		// A sliced step's runs are all in progress from the first slice;
		// a whole step's run begins (its row, its start time) when its
		// label's turn comes.
		l := &lane{s: s, it: it, k: i, start: start}
		if !sl.whole {
			if l.rec, err = p.record(start); err != nil {
				return err
			}
		}
		lanes = append(lanes, l)
		n := it.Threads
		if p.Share != nil {
			n = p.Share.Threads(n)
		}
		if l.sess, l.err = engine.Open(ctx, st.Drive.Workload(s.srv, seed), workers(st, n)); l.err != nil {
			l.sess = nil
			break
		}
	}
	switch {
	case !sl.whole:
		p.logf("-- %s, %d thread(s), %d slice(s) of %s per label, each after %s of warm-up, labels alternating", st.Test, it0.Threads, sl.k, sl.slice, sl.warm)
	case st.Drive.UntilScheduled:
		p.logf("-- %s, %d thread(s), until its scheduled work is done", st.Test, it0.Threads)
	default:
		p.logf("-- %s, %d thread(s), %s", st.Test, it0.Threads, st.Seconds)
	}
	failed := slices.IndexFunc(lanes, func(l *lane) bool { return l.err != nil }) >= 0 || len(lanes) < len(block)
	if !failed && sl.events {
		if err = b.calibrate(ctx, lanes, order(len(lanes), (it0.Repeat-1)*sl.k)); err != nil {
			failed = true
		}
	}
	for r := 0; r < sl.k && !failed; r++ {
		g := (it0.Repeat-1)*sl.k + r
		for _, i := range order(len(lanes), g) {
			l := lanes[i]
			if !l.begun && p.Watch.Start != nil {
				p.Watch.Start(p.watched(l.k), p.total, l.it)
			}
			l.begun = true
			if l.rec == nil {
				l.start.Started = time.Now().UTC()
				if l.rec, err = p.record(l.start); err != nil {
					failed = true
					break
				}
			}
			if p.Share != nil {
				if l.err = p.startShared(ctx, l.start.Params[ItemParam]); l.err != nil {
					failed = true
					break
				}
				l.start.Started = time.Now().UTC()
			}
			if l.err = p.enter(l.s.spec); l.err != nil {
				failed = true
				break
			}
			if l.err = b.slice(ctx, l, r+1); l.err != nil {
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
	return p.finishLanes(ctx, st, lanes, err)
}

// calibrate sizes a write step's slices so that every label's tables take
// the same writes. The first label in the round's order (ord) runs the
// step in event-bounded batches (16 events, then twice as many each time)
// until the plan's --warmup or the slicing's warm-up, the longer, has
// passed, unmeasured; every other label then runs exactly as many events.
// A slice is then the events the labels' mean rate (geometric) does in
// the slicing's slice, its warm-up those it does in its warm-up (the
// block's events and warmEvents). Every run here ends by its events
// (guard).
func (b *blockRun) calibrate(ctx context.Context, lanes []*lane, ord []int) error {
	p := b.p
	calib, slice, warm := max(p.Warmup, b.sl.warm), b.sl.slice, b.sl.warm
	first := lanes[ord[0]]
	var total int64
	var secs float64
	if first.err = p.enter(first.s.spec); first.err != nil {
		return first.err
	}
	for batch := int64(16); secs < calib.Seconds(); batch *= 2 {
		res, err := first.sess.Run(ctx, engine.Options{Mux: mux(first.s.srv.Client.Transport), Warmup: -1, Events: batch, Guard: guard(calib)})
		if err != nil {
			first.err = fmt.Errorf("calibrating the write slices of %s: %w", first.it.Test, err)
			return first.err
		}
		total += res.Totals.Events
		secs += res.Totals.Seconds
	}
	if total == 0 || secs <= 0 {
		first.err = fmt.Errorf("calibrating the write slices of %s: no event completed", first.it.Test)
		return first.err
	}
	first.warm += secs
	logRate := math.Log(float64(total) / secs)
	for _, i := range ord[1:] {
		l := lanes[i]
		if l.err = p.enter(l.s.spec); l.err != nil {
			return l.err
		}
		res, err := l.sess.Run(ctx, engine.Options{Mux: mux(l.s.srv.Client.Transport), Warmup: -1, Events: total, Guard: guard(time.Duration(secs * float64(time.Second)))})
		if err != nil {
			l.err = err
			return err
		}
		l.warm += res.Totals.Seconds
		logRate += math.Log(max(float64(res.Totals.Events), 1) / max(res.Totals.Seconds, 1e-9))
	}
	rate := math.Exp(logRate / float64(len(ord)))
	b.events = max(1, int64(math.Round(rate*slice.Seconds())))
	b.warmEvents = int64(math.Round(rate * warm.Seconds()))
	p.logf("-- %s: calibrated at %.0f events/s: %d events a slice, %d to warm up", first.it.Test, rate, b.events, b.warmEvents)
	return nil
}

// slice runs one slice of lane l and keeps what it measured as round r.
// A sliced step's slice is its warm-up (the slicing's, the first round of
// a read step's the plan's --warmup if longer; or the block's warmEvents
// for a step that writes), then its measured part (sl.slice, or the
// block's events, which end it however long they take: guard); its
// window (the hardware sampler, the server's counters, the other
// servers' CPU, idle meanwhile) opens after the warm-up and
// closes after the measured events, while the server is quiet: their
// reads take milliseconds and queries, which inside a slice of a quarter
// second would be a noticeable and varying part of it; the cost per op is
// then over the window's own length. A whole run is one engine run with
// its warm-up inside (the engine opens the window after it), open loop
// where the plan says so, its samples going to the recorder as they are
// measured, and its stacks captured in the window when asked.
func (b *blockRun) slice(ctx context.Context, l *lane, r int) error {
	p, st, sl, events, warmEvents := b.p, b.st, b.sl, b.events, b.warmEvents
	warm := sl.warm
	if r == 1 && !sl.events && !sl.whole {
		warm = max(p.Warmup, sl.warm)
	}
	idle := p.idlePIDs(b.block, l.s)
	mx := mux(l.s.srv.Client.Transport)
	win := p.window(ctx, l.s.m, idle)
	var o engine.Options
	if sl.whole {
		o = engine.Options{
			Warmup: p.Warmup, Duration: st.Seconds, Rate: p.Rate, Arrivals: p.Arrivals, MaxBacklog: p.MaxBacklog,
			RetryErrors: st.Drive.Retry, Seed: l.start.Seed, Progress: p.progress(), ReportInterval: p.ReportInterval,
			Window: win, OnSample: l.rec.Sample, Mux: mx,
		}
		if p.Warmup == 0 {
			o.Warmup = -1 // the engine's 0 is its default
		}
		if st.Drive.UntilScheduled {
			o.Duration, o.Warmup, o.Rate, o.UntilScheduled = 0, -1, 0, true
		}
	} else {
		if warm > 0 || warmEvents > 0 {
			wo := engine.Options{Mux: mx, Warmup: -1, Duration: warm, RetryErrors: st.Drive.Retry}
			if sl.events {
				wo.Events, wo.Duration, wo.Guard = warmEvents, 0, guard(warm)
			}
			if wo.Events > 0 || wo.Duration > 0 {
				res, err := l.sess.Run(ctx, wo)
				if err != nil {
					win.release()
					return err
				}
				l.warm += res.Totals.Seconds
			}
		}
		// No sample goes to the recorder as it is measured: the run's
		// samples are its slices' laid end to end, written with it when it
		// ends (engine.Session.Merge gives each slice's last its length).
		o = engine.Options{Mux: mx, Warmup: -1, Duration: sl.slice, Seed: l.start.Seed, RetryErrors: st.Drive.Retry}
		if sl.events {
			o.Events, o.Duration, o.Guard = events, 0, guard(sl.slice)
		}
		win.Open()
	}
	res, err := l.sess.Run(ctx, o)
	if !sl.whole {
		win.Close()
	}
	if res == nil {
		win.release()
		return err
	}
	op := st.Headline.Of(&res.Totals)
	var perSec []float64
	for _, s := range res.Samples {
		for len(perSec) < s.Second {
			perSec = append(perSec, 0) // a second with no events
		}
		perSec = append(perSec, s.Count(res.Totals.Series))
	}
	if !sl.whole {
		win.opsOver(res.Totals.Reported * res.Totals.Seconds)
	}
	win.finish(res, op, perSec, p.logf)
	if stalled, longest := result.Stalls(res.Samples, res.Totals.Series, res.Totals.Seconds, result.StallFraction); res.Totals.Seconds >= 3 && len(res.Samples) > 0 {
		l.stalls += float64(len(stalled))
		l.stall = max(l.stall, float64(longest))
	}
	if res.HW != nil {
		l.hws = append(l.hws, res.HW)
		l.ctrs = append(l.ctrs, res.HW.Server)
	}
	l.warm += res.Warmup
	l.parts = append(l.parts, res)
	t := res.Totals
	rd := result.Round{Repeat: l.it.Repeat, Round: r, Started: res.Started.Add(time.Duration(res.Warmup * float64(time.Second))).UTC(),
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
// failed, the others' runs are recorded aborted, with why; when a server
// died, its label's run is the one recorded failed, wherever the block
// was (the plan cancels every lane of the group at once: ServerDied says
// whose server it was).
func (p *Runner) finishLanes(ctx context.Context, st suite.Step, lanes []*lane, err error) error {
	why := ""
	var dead *ServerDied
	if errors.As(context.Cause(ctx), &dead) {
		why = fmt.Sprintf("%s on %s: %v", st.Test, dead.Label, dead)
	}
	for _, l := range lanes {
		if why != "" {
			break
		}
		if l.err != nil {
			// A run that failed because its server died says so, even
			// where the client's error (a reset connection) came before
			// the server watcher's word (a race: TestServerDiesMidRun).
			var dead *ServerDied
			if !errors.As(context.Cause(ctx), &dead) && !errors.As(l.err, &dead) && ctx.Err() == nil {
				if l.err = l.s.diedUnder(l.err); errors.As(l.err, &dead) {
					err = l.err
				}
			}
			why = fmt.Sprintf("%s on %s: %v", st.Test, l.s.spec.Label(), l.err)
			break
		}
	}
	for _, l := range lanes {
		if l.rec == nil { // a whole step's run whose turn never came
			rec, rerr := p.record(l.start)
			if rerr != nil {
				if err == nil {
					err = rerr
				}
				continue
			}
			l.rec = rec
		}
		res := p.merged(ctx, st, l)
		if l.err == nil && err != nil {
			dead = nil
			switch {
			case errors.As(context.Cause(ctx), &dead) || errors.As(err, &dead):
				if dead.of(l.s) { // its server died between its slices
					res.Status, res.Error = result.Failed, dead.Error()
				} else {
					res.Status, res.Error = result.Aborted, anotherDied(dead)
				}
			case ctx.Err() != nil:
				res.Status, res.Error = result.Aborted, "interrupted"
			default:
				res.Status, res.Error = result.Aborted, "interrupted: "+why
			}
		}
		if rerr := p.done(l.k, l.rec, res); rerr != nil && err == nil {
			err = rerr
		}
	}
	return p.ended(ctx, st, why, err)
}

// failed marks res as its run on s ended: failed because its server died
// (with why), aborted because another label's server died (the group's
// servers share one end), interrupted, or failed with err, told by the
// server's death where that came first. It returns the error the run
// ended with.
func (p *Runner) failed(ctx context.Context, res *result.Run, s *server, err error) error {
	var dead *ServerDied
	switch {
	case err == nil:
		return nil
	case errors.As(context.Cause(ctx), &dead) && !dead.of(s):
		res.Status, res.Error = result.Aborted, anotherDied(dead)
		return dead
	case errors.As(context.Cause(ctx), &dead):
		res.Status, res.Error = result.Failed, dead.Error()
		return dead
	case errors.As(err, &dead) && !dead.of(s):
		res.Status, res.Error = result.Aborted, anotherDied(dead)
		return err
	case errors.As(err, &dead): // told already (finishLanes)
		res.Status, res.Error = result.Failed, err.Error()
		return err
	case ctx.Err() != nil:
		res.Status, res.Error = result.Aborted, "interrupted"
		return err
	}
	err = s.diedUnder(err)
	res.Status, res.Error = result.Failed, err.Error()
	return err
}

// done tells the watcher and the recorder that run k ended.
func (p *Runner) done(k int, rec Recorder, res *result.Run) error {
	if p.Watch.Done != nil {
		p.Watch.Done(p.watched(k), p.total, *res)
	}
	return rec.Done(*res)
}

// ended is what a block ends the plan with: nil, its server's death, an
// interrupt, or why it failed.
func (p *Runner) ended(ctx context.Context, st suite.Step, why string, err error) error {
	var dead *ServerDied
	switch {
	case err == nil:
		return nil
	case errors.As(context.Cause(ctx), &dead):
		return fmt.Errorf("%s: %w", st.Test, dead)
	case errors.As(err, &dead):
		return fmt.Errorf("%s: %w", st.Test, err)
	case ctx.Err() != nil:
		return ctx.Err()
	case why != "":
		return errors.New(why)
	}
	return fmt.Errorf("%s: %w", st.Test, err)
}

// merged is lane l's run: its slices laid end to end, with what the engine
// does not know of it (the plan's, the step's and the item's), its
// hardware cost over all its slices, its rounds and stalls, and the
// step's Finish. This is the one place a driven run's record is completed.
func (p *Runner) merged(ctx context.Context, st suite.Step, l *lane) *result.Run {
	start := l.start
	if len(l.parts) == 0 {
		fail := start
		fail.Status, fail.Ended = result.Failed, time.Now().UTC()
		if l.err != nil {
			fail.Error = l.err.Error()
		}
		p.failed(ctx, &fail, l.s, l.err)
		return &fail
	}
	res := l.sess.Merge(l.parts)
	res.QpslabVersion, res.Host, res.Suite, res.Test = start.QpslabVersion, start.Host, start.Suite, start.Test
	res.Step, res.Role, res.Groups = start.Step, start.Role, start.Groups
	res.Build, res.Flavor, res.Version, res.Config = start.Build, start.Flavor, start.Version, start.Config
	res.Seed, res.Params, res.Threads = start.Seed, start.Params, start.Threads
	res.Plan, res.Pairing = start.Plan, start.Pairing
	if start.Pairing != "" {
		res.Rounds = l.rounds
	}
	res.Warmup = l.warm
	op := st.Headline.Of(&res.Totals)
	if len(l.parts) == 1 {
		res.HW, res.Stacks = l.parts[0].HW, l.parts[0].Stacks
	} else {
		res.Params["slices"] = fmt.Sprint(len(l.rounds))
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
	}
	if res.Totals.Seconds >= 3 && len(res.Samples) > 0 {
		engine.SetStalls(&res.Totals, l.stalls, l.stall)
	}
	if q := p.quietFigures[l.s]; q != nil {
		if res.Totals.Figures == nil {
			res.Totals.Figures = map[string]float64{}
		}
		for k, v := range q {
			res.Totals.Figures[k] = v
		}
	}
	if l.err == nil && res.Status == result.OK && st.Finish != nil {
		if ferr := st.Finish(ctx, l.s.srv, res); ferr != nil {
			res.Status, res.Error = result.Failed, "after the run: "+ferr.Error()
			l.err = ferr
		}
	}
	p.judgeIO(l.it.Step, l.s, res)
	if res.Status == result.OK {
		p.warnTails(st, l, res)
	}
	if l.err != nil {
		l.err = p.failed(ctx, res, l.s, l.err)
	}
	return res
}

// warnTails says in one line when run res's latency tails cannot be
// trusted (result.TailsCutIn: connections that completed nothing in its
// window, or slices shorter than the waits they must hold), and what
// would hold them. The slices are not lengthened in the middle of a
// plan: the labels' slices must stay alike for their pairing, and the
// run that shows the tails is already measured.
func (p *Runner) warnTails(st suite.Step, l *lane, res *result.Run) {
	sl := p.slicingOf(st)
	slice := time.Duration(0)
	if !sl.whole {
		slice = sl.slice
	}
	_, why := result.TailsCutIn(*res, slice)
	if why == "" {
		return
	}
	fix := "run it longer"
	if slice > 0 {
		fix = "run it whole (--interleave pass) or in longer slices (fewer --slices, or a longer test)"
	}
	p.warn(fmt.Sprintf("%s, %d thread(s), %s: its latency tails cannot be trusted: %s; %s", st.Test, l.it.Threads, l.s.spec.Label(), why, fix))
}

// tasks runs the block's items, one task step on each server of the
// block, whole, one after the other in the repeat's counterbalanced order.
func (b *blockRun) tasks(ctx context.Context) error {
	p, block, items := b.p, b.block, b.items
	if p.follower() {
		p.logf("-- %s: part 0's (the other parts wait for it)", b.st.Test)
		return nil
	}
	for _, i := range order(len(items), items[0].Repeat-1) {
		s := block[i]
		if err := p.task(ctx, s, items, i, p.idlePIDs(block, s)); err != nil {
			return err
		}
	}
	return nil
}

// task runs a step the suite runs itself (items[k] on s), timed and
// sampled over the same span, and records it.
func (p *Runner) task(ctx context.Context, s *server, items []Item, k int, idle []int) error {
	it := items[k]
	st := p.Steps.Steps[it.Step]
	start := p.start(it, st, p.seedOf(st, it))
	if s.srv.Client.Transport != "" {
		start.Params["transport"] = string(s.srv.Client.Transport)
	}
	if err := p.enter(s.spec); err != nil {
		return err
	}
	if p.Watch.Start != nil {
		p.Watch.Start(p.watched(k), p.total, it)
	}
	rec, err := p.record(start)
	if err != nil {
		return err
	}
	p.logf("-- %s, %d thread(s)", st.Test, it.Threads)
	win := p.window(ctx, s.m, idle)
	// The samples a task reports are the run's (kept when it fails or is
	// interrupted: what was measured), and go to the recorder as they come.
	var mu sync.Mutex
	var samples []result.Sample
	tio := suite.TaskIO{Progress: func(int64, int64) {}, Sample: func(x result.Sample) {
		mu.Lock()
		samples = append(samples, x)
		mu.Unlock()
		rec.Sample(x)
	}}
	if p.Watch.Progress != nil {
		tio.Progress = p.Watch.Progress
	}
	win.Open()
	t0 := time.Now()
	tot, err := st.Task.Run(ctx, s.srv, start.Threads, start.Seed, tio)
	win.Close()
	t1 := time.Now()
	res := start
	res.Started, res.Ended = t0.UTC(), t1.UTC()
	if tot.Seconds <= 0 {
		tot.Seconds = t1.Sub(t0).Seconds()
	}
	res.Duration = tot.Seconds
	if tot.Seconds > 0 && !math.IsInf(tot.Seconds, 0) {
		tot.TPS = float64(tot.Events) / tot.Seconds
		tot.QPS = float64(tot.Statements) / tot.Seconds
		tot.RowsPerSec = float64(tot.Rows) / tot.Seconds
	}
	res.Totals, res.Status = tot, result.OK
	mu.Lock()
	res.Samples = samples
	mu.Unlock()
	if err != nil {
		res.Status, res.Error = result.Failed, err.Error()
		res.Totals = result.Totals{Seconds: tot.Seconds}
	} else if tot.Rows == 0 && tot.Events > 0 {
		p.logf("%s: %d events in %.2f s (%.0f/s)", st.Test, tot.Events, tot.Seconds, tot.TPS)
	} else {
		p.logf("%s: %d rows in %.2f s (%.0f rows/s)", st.Test, tot.Rows, tot.Seconds, tot.RowsPerSec)
	}
	op := st.Headline.Of(&res.Totals)
	var perSec []float64
	for _, x := range res.Samples {
		for len(perSec) < x.Second {
			perSec = append(perSec, 0)
		}
		perSec = append(perSec, x.Count(res.Totals.Series))
	}
	win.finish(&res, op, perSec, p.logf)
	if stalled, longest := result.Stalls(res.Samples, res.Totals.Series, res.Totals.Seconds, result.StallFraction); res.Totals.Seconds >= 3 && len(res.Samples) > 0 {
		engine.SetStalls(&res.Totals, float64(len(stalled)), float64(longest))
	}
	if err == nil && st.Finish != nil {
		if ferr := st.Finish(ctx, s.srv, &res); ferr != nil {
			err = fmt.Errorf("after the run: %w", ferr)
			res.Status, res.Error = result.Failed, err.Error()
		}
	}
	p.judgeIO(it.Step, s, &res)
	if res.Pairing != "" {
		t := res.Totals
		res.Rounds = []result.Round{{Repeat: it.Repeat, Round: 1, Started: res.Started, Seconds: t.Seconds, Events: t.Events,
			Statements: t.Statements, Rows: t.Rows, Value: t.Reported, IdleCPU: win.idleCPU()}}
	}
	err = p.failed(ctx, &res, s, err)
	if st.Once {
		s.loaded += t1.Sub(t0) // what a reload takes (restore)
	}
	if rerr := p.done(k, rec, &res); rerr != nil {
		return rerr
	}
	why := ""
	if err != nil {
		why = fmt.Sprintf("%s on %s: %v", st.Test, it.Label(), err)
	}
	return p.ended(ctx, st, why, err)
}
