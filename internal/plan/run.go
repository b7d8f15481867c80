package plan

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/home"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/sandbox"
	"github.com/qpslab/qpslab/internal/settle"
	"github.com/qpslab/qpslab/internal/stacks"
	"github.com/qpslab/qpslab/internal/suite"
)

// How a label's tables are put back as they were after the load before a
// repeat that follows writes (--restore): every repeat starts from the
// same database state, so that a .pre test is measured before any write in
// every repeat, and a repeat is a repetition of the same thing.
const (
	// RestoreAuto reloads where the load took no longer than the server
	// takes to start (a restore costs a restart and more), and otherwise
	// keeps a snapshot of the datadir after the load and uses whichever of
	// the two was faster, measured once on each label.
	RestoreAuto = "auto"
	// RestoreReload runs the steps that run once (the load, which drops
	// and loads the tables with the same seed) again.
	RestoreReload = "reload"
	// RestoreSnapshot stops the server, copies back the datadir as it was
	// after the load, and starts the server again (its caches cold: the
	// warm-up step that follows warms them).
	RestoreSnapshot = "snapshot"
)

// DefaultLooks are the most looks --until-decided takes: the first
// repeats and three more blocks of repeats (each look judged at Pocock's
// level for four, 0.0182 at α = 0.05).
const DefaultLooks = 4

// quietMax bounds the wait for a server to be quiet before a read test
// that follows writes (settle.Quiet).
const quietMax = 10 * time.Second

// A runGroup is a set of labels whose servers are up together and the
// repeats they run: under test-level interleaving the plan's labels (or
// the base with one other, in pairs) for every repeat; under pass-level
// interleaving one label for one repeat, in a fresh sandbox.
type runGroup struct {
	labels   []int
	from, to int
}

// runGroups are the plan's groups in the order they run.
func (p *Runner) runGroups() []runGroup {
	labels := p.Labels()
	if p.testLevel() {
		groups := [][]int{make([]int, len(labels))}
		for i := range groups[0] {
			groups[0][i] = i
		}
		if p.layout.Mode == InterleaveTest {
			groups = p.layout.Groups
		}
		var out []runGroup
		for _, g := range groups {
			out = append(out, runGroup{labels: g, from: 1, to: max(p.Design.Repeat, 1)})
		}
		return out
	}
	var out []runGroup
	for rep := 1; rep <= max(p.Design.Repeat, 1); rep++ {
		for i := range labels {
			out = append(out, runGroup{labels: []int{i}, from: rep, to: rep})
		}
	}
	return out
}

// Items lists the runs in the order they will start (the first look's,
// with --until-decided).
func (p *Runner) Items() []Item {
	var out []Item
	for gi, g := range p.runGroups() {
		out = append(out, p.itemsOf(gi, g.labels, g.from, g.to, nil)...)
	}
	return out
}

// writes says whether some step of the plan changes the tables.
func (p *Runner) writes() bool {
	return slices.ContainsFunc(p.Steps.Steps, func(st suite.Step) bool { return st.Writes })
}

// itemsOf are the runs of the labels of group gi in repeats from to to:
// each step at each thread count on every label of the group. Under
// test-level interleaving a step that runs once (the load) runs in the
// first repeat, and again in each later one where the plan writes (it
// reloads the tables of the labels restored so: restore). With want (the
// tests still undecided, --until-decided), only what they need: the steps
// wanted, the warm-ups and the load, and each step that writes before a
// wanted one, so that it runs on the tables it always runs on.
func (p *Runner) itemsOf(gi int, group []int, from, to int, want map[string]bool) []Item {
	labels := p.Labels()
	steps := p.Steps.Steps
	needed := func(i int) bool {
		st := steps[i]
		if want == nil || want[st.Test] || st.Once || st.Role == result.RoleWarm {
			return true
		}
		return st.Writes && slices.ContainsFunc(steps[i+1:], func(s suite.Step) bool { return want[s.Test] })
	}
	var out []Item
	for rep := from; rep <= to; rep++ {
		for i, st := range steps {
			if st.Once && rep > 1 && p.testLevel() && !p.writes() || !needed(i) {
				continue
			}
			for _, nt := range p.threadsOf(st) {
				for _, li := range group {
					l := labels[li]
					it := Item{Repeat: rep, Build: l.Build, Config: l.Config, StorageEngine: l.StorageEngine, Step: i, Test: st.Test, Threads: nt, Group: gi}
					switch {
					case st.Drive != nil && st.Drive.UntilScheduled:
						it.Seconds = st.Seconds // as planned, if the server keeps up; no warmup
					case st.Drive != nil:
						it.Seconds = st.Seconds + p.Warmup
					}
					out = append(out, it)
				}
			}
		}
	}
	return out
}

// watched is the index of a group's item k among the plan's runs, for
// the watcher.
func (p *Runner) watched(k int) int { return p.base + p.offset + k }

// Run runs the plan, after Check: group after group, each with its
// servers up while it runs (group). On cancellation the run in progress
// is recorded as aborted, every sandbox is stopped, and ctx's error
// returned.
func (p *Runner) Run(ctx context.Context, h home.Home) error {
	if err := p.Check(h); err != nil {
		return err
	}
	p.logMu = &sync.Mutex{}
	if len(p.ClientCPUs) > 0 {
		if err := host.PinSelf(p.ClientCPUs); err != nil {
			return err
		}
	}
	if o := p.ServerCPUs.Overlap(p.ClientCPUs); len(o) > 0 && len(p.ClientCPUs) > 0 {
		p.logf("host: the server's CPUs %s and the client's %s share %s: they compete for them", p.ServerCPUs, p.ClientCPUs, o)
	}
	if p.Perf {
		if err := stacks.CheckPerf(ctx); err != nil {
			if p.Watch.Warn != nil {
				p.Watch.Warn("--perf: " + err.Error() + "; the runs go on without CPU profiles")
			}
			p.perfOff = true
		}
	}
	if p.layout.Mode == "" {
		if err := p.Decide(host.Real); err != nil {
			return err
		}
	}
	if p.Design.Looks > 1 && p.Design.Step < 1 {
		p.Design.Step = max(1, max(p.Design.Repeat, 1)/2)
	}
	if p.More != nil && !p.testLevel() {
		return fmt.Errorf("--until-decided adds repeats to the undecided tests while every label's server stays up: it needs test-level interleaving (%s)", p.layout.Why)
	}
	if p.ID == "" {
		p.ID = NewID()
	}
	items := p.Items()
	p.total, p.base, p.began = len(items), 0, time.Now()
	if err := p.checkStorageEngines(ctx, h, items); err != nil {
		return err
	}
	for gi, g := range p.runGroups() {
		if p.testLevel() && len(p.layout.Groups) > 1 {
			p.logf("== pair %d of %d: %s beside %s", gi+1, len(p.layout.Groups), p.Labels()[g.labels[1]].Label(), p.Labels()[g.labels[0]].Label())
		}
		if err := p.group(ctx, h, gi, g); err != nil {
			return err
		}
	}
	return nil
}

// grouped is a group's servers while they are up, and what the group has
// done to their tables.
type grouped struct {
	p      *Runner
	h      home.Home
	cancel context.CancelCauseFunc
	specs  []LabelSpec
	srvs   []*server
	// wrote: a step wrote since the tables were last loaded or restored;
	// reload: the tables were written before this repeat, so its load
	// reloads them where the group restores by reloading; how is how
	// (RestoreReload or RestoreSnapshot, "" before decide).
	wrote, reload bool
	how           string
	// took is how long each block (a step at a thread count) took in the
	// latest repeat it ran in, and restored how long the latest restore
	// from snapshots took, for the budget of --until-decided.
	took     map[[2]int]time.Duration
	restored time.Duration
}

// group runs group gi: it starts its labels' servers, runs its items
// block by block (one step at one thread count of one repeat on every
// label: block), puts the tables back as they were after the load before
// a repeat that follows writes (restore), waits for the servers to be
// quiet before a test that follows the load or writes in its repeat, and stops
// the servers, whatever happened. With More (--until-decided) it then
// runs more repeats of the tests still undecided, look after look, while
// the servers stay up, within the looks and the budget.
func (p *Runner) group(ctx context.Context, h home.Home, gi int, rg runGroup) (err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	items := p.itemsOf(gi, rg.labels, rg.from, rg.to, nil)
	g := &grouped{p: p, h: h, cancel: cancel, took: map[[2]int]time.Duration{}}
	conns := map[int]int{}
	for _, it := range items {
		i := slices.IndexFunc(g.specs, func(l LabelSpec) bool { return l.same(it.spec()) })
		if i < 0 {
			i = len(g.specs)
			g.specs = append(g.specs, it.spec())
		}
		conns[i] = max(conns[i], workers(p.Steps.Steps[it.Step], it.Threads), 1)
	}
	defer func() {
		if derr := g.down(); derr != nil && err == nil {
			err = derr
		}
	}()
	what := ", up for the whole plan"
	if !p.testLevel() {
		what = fmt.Sprintf(", repeat %d", rg.from)
	}
	for i, l := range g.specs {
		s, err := g.up(ctx, l, conns[i], what, false)
		if err != nil {
			return err
		}
		g.srvs = append(g.srvs, s)
	}
	began := time.Now()
	if err := g.run(ctx, items); err != nil {
		return err
	}
	p.base += len(items)
	if p.More == nil || len(items) == 0 {
		return nil
	}
	// The group's share of the budget: the plan's over its groups.
	budget := p.Design.Budget / time.Duration(max(len(p.runGroups()), 1))
	plan := p.planOf(items[0])
	next := rg.to + 1
	for look := 2; look <= p.Design.Looks; look++ {
		want, err := p.More(ctx, look-1, plan)
		if err != nil || len(want) == 0 {
			return err
		}
		wanted := map[string]bool{}
		for _, t := range want {
			wanted[t] = true
		}
		items = p.itemsOf(gi, rg.labels, next, next+p.Design.Step-1, wanted)
		if est := g.estimate(items); budget > 0 && time.Since(began)+est > budget {
			p.warn(fmt.Sprintf("--until-decided: %d test(s) still undecided after look %d of %d, and %d more repeat(s) of them (about %s) would go beyond the budget of %s", len(want), look-1, p.Design.Looks, p.Design.Step, est.Round(time.Second), budget.Round(time.Second)))
			return nil
		}
		p.logf("== look %d of %d: %d more repeat(s) of %d undecided test(s)", look, p.Design.Looks, p.Design.Step, len(want))
		p.total += len(items)
		if err := g.run(ctx, items); err != nil {
			return err
		}
		p.base += len(items)
		next += p.Design.Step
	}
	return nil
}

// down stops the group's servers, the last first, and removes their
// snapshots.
func (g *grouped) down() error {
	var err error
	for i := len(g.srvs) - 1; i >= 0; i-- {
		s := g.srvs[i]
		if derr := s.down(); derr != nil && err == nil {
			err = derr
		}
		if s.snap != "" {
			os.RemoveAll(s.snap)
		}
	}
	return err
}

// of is the server of item it.
func (g *grouped) of(it Item) *server {
	return g.srvs[slices.IndexFunc(g.specs, func(l LabelSpec) bool { return l.same(it.spec()) })]
}

// run runs items, one block (a step at one thread count in one repeat, on
// every label) after the other.
func (g *grouped) run(ctx context.Context, items []Item) error {
	p := g.p
	for k := 0; k < len(items); {
		j := k
		for j < len(items) && items[j].Repeat == items[k].Repeat && items[j].Step == items[k].Step && items[j].Threads == items[k].Threads {
			j++
		}
		st := p.Steps.Steps[items[k].Step]
		rep := items[k].Repeat
		newRepeat := k == 0 || items[k-1].Repeat != rep
		first := newRepeat || items[k-1].Step != items[k].Step
		last := j == len(items) || items[j].Step != items[k].Step || items[j].Repeat != rep
		if newRepeat && rep > 1 && p.testLevel() {
			if err := g.restore(ctx, rep); err != nil {
				return err
			}
		}
		sub := items[k:j]
		if st.Once && rep > 1 && p.testLevel() {
			// The load of a later repeat reloads the tables of the labels
			// restored by reloading, where they were written since.
			if g.how != RestoreReload || !g.reload {
				sub = nil
			}
			if len(sub) == 0 {
				k = j
				continue
			}
		}
		block := make([]*server, 0, len(sub))
		for _, it := range sub {
			block = append(block, g.of(it))
		}
		if first && g.wroteThisRepeat(items, k) && quietBefore(st) && !p.Steps.NoServer {
			if err := g.quiet(ctx, block, st); err != nil {
				return err
			}
		}
		t0 := time.Now()
		p.offset = k
		err := p.newBlock(block, sub).run(ctx, first, last)
		clear(p.quietFigures)
		if err != nil {
			return err
		}
		g.took[[2]int{items[k].Step, items[k].Threads}] = time.Since(t0)
		if st.Writes {
			g.wrote = true
		}
		if st.Sizes && p.Steps.Cache > 0 {
			if err := g.size(ctx, block); err != nil {
				return err
			}
		}
		endOnce := st.Once && (j == len(items) || !p.Steps.Steps[items[j].Step].Once || items[j].Repeat != rep)
		if endOnce && rep == 1 {
			if err := g.decide(ctx); err != nil {
				return err
			}
		}
		k = j
	}
	return nil
}

// wroteThisRepeat says whether a step before items[k] in its repeat
// writes (a write test, or the load).
func (g *grouped) wroteThisRepeat(items []Item, k int) bool {
	for i := k - 1; i >= 0 && items[i].Repeat == items[k].Repeat; i-- {
		if st := g.p.Steps.Steps[items[i].Step]; st.Writes || st.Once {
			return true
		}
	}
	return false
}

// quietBefore says whether step st waits for the servers to be quiet when
// writes came before it in its repeat: a test of a steady state (a read,
// or a short write whose rounds the purge and flushing of the writes
// before it would otherwise share, differently in each repeat).
func quietBefore(st suite.Step) bool {
	return st.Role == result.RoleTest && st.Slice && st.Drive != nil
}

// quiet waits on every server of block at once until it is quiet after
// the writes before st (settle.Quiet: purge, flushing, MyRocks'
// compactions, autovacuum), at
// most quietMax, and keeps what each saw for the step's runs.
func (g *grouped) quiet(ctx context.Context, block []*server, st suite.Step) error {
	p := g.p
	if p.follower() {
		return nil // part 0's (Share)
	}
	reports := make([]settle.QuietReport, len(block))
	errs := make([]error, len(block))
	var wg sync.WaitGroup
	for i, s := range block {
		wg.Go(func() {
			reports[i], errs[i] = settle.Quiet(ctx, settle.QuietOptions{Dialect: s.srv.Dialect, Dial: s.srv.Dial, Max: quietMax})
		})
	}
	wg.Wait()
	if p.quietFigures == nil {
		p.quietFigures = map[*server]map[string]float64{}
	}
	for i, s := range block {
		if errs[i] != nil {
			return hookErr(ctx, s, fmt.Errorf("wait for %s to be quiet before %s: %w", s.spec.Label(), st.Test, errs[i]))
		}
		p.logf("-- before %s on %s: %s", st.Test, s.spec.Label(), reports[i].Says())
		if !reports[i].Quiet {
			p.warn(fmt.Sprintf("%s on %s: the server was still busy after the writes when the test began (%s)", st.Test, s.spec.Label(), reports[i].Says()))
		}
		p.quietFigures[s] = reports[i].Figures()
	}
	return nil
}

// decide decides, after the first load, how the group's tables are put
// back before a later repeat (Plan.Restore): only where the plan writes
// and another repeat may follow. One way for every label of the group, so
// that no round pairs a restarted server (cold caches) with a reloaded
// one. Auto reloads where every label's load took no longer than its
// server's start (a restore costs a restart and more) and the steps that
// run once may run again (suite.Step.Reloads); else it takes a snapshot
// of each label's datadir, timing it, and keeps the snapshots where their
// restore (as long as the snapshot took) is faster, summed over the
// labels, than the loads.
func (g *grouped) decide(ctx context.Context) error {
	p := g.p
	if !p.testLevel() || !p.writes() || p.Steps.NoServer || max(p.Design.Repeat, 1) < 2 && p.More == nil {
		return nil
	}
	mode := p.Restore
	if mode == "" {
		mode = RestoreAuto
	}
	reloads := !slices.ContainsFunc(p.Steps.Steps, func(st suite.Step) bool { return st.Once && !st.Reloads })
	var loaded, started time.Duration
	quick := true
	for _, s := range g.srvs {
		loaded += s.loaded
		started += s.started
		quick = quick && s.loaded <= s.started
	}
	if mode == RestoreReload || mode == RestoreAuto && reloads && quick {
		g.how = RestoreReload
		p.logf("-- the tables are restored between repeats by reloading them (the load took %.2f s on the %d label(s), their servers' start %.2f s)", loaded.Seconds(), len(g.srvs), started.Seconds())
		return nil
	}
	var took time.Duration
	for i := range g.srvs {
		t, err := g.snapshot(ctx, i)
		if err != nil {
			return err
		}
		took += t
	}
	if mode == RestoreAuto && reloads && took >= loaded {
		g.dropSnapshots()
		g.how = RestoreReload
		p.logf("-- the tables are restored between repeats by reloading them (the load took %.2f s on the %d label(s), a restart from a snapshot %.2f s)", loaded.Seconds(), len(g.srvs), took.Seconds())
		return nil
	}
	g.how = RestoreSnapshot
	why := fmt.Sprintf("%.2f s on the %d label(s), the load %.2f s", took.Seconds(), len(g.srvs), loaded.Seconds())
	if !reloads {
		why = "the steps that run once cannot run again"
	}
	p.logf("-- the tables are restored between repeats from a snapshot of each datadir (%s)", why)
	return nil
}

// dropSnapshots removes the group's snapshots.
func (g *grouped) dropSnapshots() {
	for _, s := range g.srvs {
		if s.snap != "" {
			os.RemoveAll(s.snap)
			s.snap = ""
		}
	}
}

// snapshot stops server i, copies its datadir as it is (after the load)
// into a folder beside it, and starts the server again; it returns how
// long all that took (what a restore will take).
func (g *grouped) snapshot(ctx context.Context, i int) (time.Duration, error) {
	s := g.srvs[i]
	t0 := time.Now()
	if err := s.down(); err != nil {
		return 0, fmt.Errorf("stop %s for its snapshot: %w", s.spec.Label(), err)
	}
	snap := s.datadir + sandbox.SnapshotSuffix
	os.RemoveAll(snap)
	if err := copyDir(s.datadir, snap); err != nil {
		os.RemoveAll(snap) // what a full disk left of it
		return 0, fmt.Errorf("the snapshot of %s: %w", s.spec.Label(), err)
	}
	ns, err := g.restart(ctx, i)
	if err != nil {
		os.RemoveAll(snap)
		return 0, err
	}
	ns.snap = snap
	return time.Since(t0), nil
}

// restart starts label i's server again on its datadir, in place of the
// one stopped.
func (g *grouped) restart(ctx context.Context, i int) (*server, error) {
	old := g.srvs[i]
	l := old.spec
	if old.sized != nil {
		l.Config = *old.sized
	}
	ns, err := g.up(ctx, l, old.conns, ", again", true)
	if err != nil {
		g.srvs[i].down = func() error { return nil } // stopped already
		return nil, err
	}
	ns.spec, ns.loaded, ns.snap = old.spec, old.loaded, old.snap
	ns.sized, ns.cacheMB, ns.tablesMB = old.sized, old.cacheMB, old.tablesMB
	g.srvs[i] = ns
	return ns, nil
}

// restore puts the tables back as they were after the load before repeat
// rep, where a step wrote since they were: the labels restored from a
// snapshot now (the others reload with the repeat's load: run).
func (g *grouped) restore(ctx context.Context, rep int) error {
	g.reload = g.wrote
	if !g.wrote {
		return nil
	}
	g.wrote = false
	if g.how != RestoreSnapshot {
		return nil
	}
	t1 := time.Now()
	defer func() { g.restored = time.Since(t1) }()
	for i, s := range g.srvs {
		t0 := time.Now()
		if err := s.down(); err != nil {
			return fmt.Errorf("stop %s to restore it: %w", s.spec.Label(), err)
		}
		if err := os.RemoveAll(s.datadir); err != nil {
			return fmt.Errorf("restore %s: %w", s.spec.Label(), err)
		}
		if err := copyDir(s.snap, s.datadir); err != nil {
			return fmt.Errorf("restore %s: %w", s.spec.Label(), err)
		}
		if _, err := g.restart(ctx, i); err != nil {
			return err
		}
		g.p.logf("-- repeat %d: %s restored from its snapshot in %.2f s", rep, s.spec.Label(), time.Since(t0).Seconds())
	}
	return nil
}

// copyDir copies the folder src to dst (which must not exist) with cp -a:
// it keeps the modes, owners and sparse files a server's datadir needs
// (PostgreSQL refuses a datadir open to others; InnoDB's log files are
// sparse), and clones the blocks where the file system can
// (--reflink=auto), which os.CopyFS does not.
func copyDir(src, dst string) error {
	out, err := exec.Command("cp", "-a", "--reflink=auto", src, dst).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cp -a %s %s: %v: %s", src, dst, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// estimate is about how long items would take: each block (a step at a
// thread count, in a repeat) as long as it took in the latest repeat it
// ran in, and each repeat's restore from snapshots as long as the latest.
func (g *grouped) estimate(items []Item) time.Duration {
	var d time.Duration
	seen := map[[3]int]bool{}
	reps := map[int]bool{}
	for _, it := range items {
		if k := [3]int{it.Repeat, it.Step, it.Threads}; !seen[k] {
			seen[k] = true
			d += g.took[[2]int{it.Step, it.Threads}]
		}
		reps[it.Repeat] = true
	}
	return d + time.Duration(len(reps))*g.restored
}
