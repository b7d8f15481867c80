package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/config"
	"github.com/qpslab/qpslab/internal/host"
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
func (p *Runner) Labels() []LabelSpec {
	var out []LabelSpec
	for _, b := range p.Builds {
		for _, c := range p.ConfigsOf(b) {
			for _, e := range p.storageEnginesOf(b) {
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
func (p *Runner) Decide(roots host.Roots) error {
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
	case len(p.Targets) > 0:
		p.layout = Layout{Mode: InterleavePass, Why: "targets: each one's whole pass in turn, its tables loaded again each repeat (qpslab neither restarts a target nor copies its datadir)"}
		return nil
	}
	if p.Sweep != nil && !permutation(p.Sweep, len(labels)) {
		return fmt.Errorf("the sweep's order %v is not each of the plan's %d labels once", p.Sweep, len(labels))
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
	withCaches := "" // the cache settings after the size, when the servers have any (db_bench's have none)
	if caches != "" {
		withCaches = ", " + caches
	}
	switch {
	case all <= budget:
		g := make([]int, len(labels))
		for i := range g {
			g[i] = i
		}
		p.layout = Layout{Mode: InterleaveTest, Groups: [][]int{g},
			Why: fmt.Sprintf("test-level interleaving: the %d labels' servers up together (%s with their caches%s, of %s available)", len(labels), gib(all), withCaches, gib(avail))}
	case len(p.Sweep) == len(labels) && maxPair(need, p.Sweep) <= budget:
		var gs [][]int
		for i := 1; i < len(p.Sweep); i++ {
			gs = append(gs, []int{p.Sweep[i-1], p.Sweep[i]})
		}
		p.layout = Layout{Mode: InterleaveTest, Groups: gs,
			Why: fmt.Sprintf("test-level interleaving in neighbour pairs: the %d labels' servers need %s (%s) and %s is available, so each label runs beside the one before it in the sweep in turn, two servers up at a time (each label but the first and last is loaded and run in two pairs)", len(labels), gib(all), caches, gib(avail))}
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

// permutation says whether order holds each of 0…n−1 once.
func permutation(order []int, n int) bool {
	seen := make([]bool, n)
	for _, i := range order {
		if i < 0 || i >= n || seen[i] {
			return false
		}
		seen[i] = true
	}
	return len(order) == n
}

// maxPair is the most two labels neighbouring in order need together.
func maxPair(need []int64, order []int) int64 {
	var m int64
	for i := 1; i < len(order); i++ {
		m = max(m, need[order[i-1]]+need[order[i]])
	}
	return m
}

// Layout is what Decide chose (a zero Layout before it runs).
func (p *Runner) Layout() Layout { return p.layout }

// testLevel says whether the plan interleaves at the test level: decided
// so, or, before Decide, not asked for pass-level.
func (p *Runner) testLevel() bool {
	if p.layout.Mode != "" {
		return p.layout.Mode == InterleaveTest
	}
	return p.Interleave != InterleavePass && len(p.Labels()) > 1 && !p.external()
}

// sliced says whether the step runs as slices: under test-level
// interleaving, a step its suite lets slice, driven in closed loop to a
// measured time, with no stack captures or profile (which cost the
// server per window, and want whole windows).
func (p *Runner) sliced(st suite.Step) bool {
	return p.testLevel() && st.Slice && st.Drive != nil && !st.Drive.UntilScheduled && st.Seconds > 0 &&
		p.Rate == 0 && p.PMP == 0 && !p.Perf
}

// pairingOf is how the plan puts the runs of step beside the other
// labels' (result.Paired*): "" with one label.
func (p *Runner) pairingOf(st suite.Step) string {
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

// SliceCount is how many slices a sliced step runs per repeat (--slices,
// or for a write step WriteSlices where set, or one a second within
// minSlices..maxSlices), and how long each is.
func (p *Runner) SliceCount(st suite.Step) (int, time.Duration) {
	k := p.Design.Slices
	if st.Writes && p.Design.WriteSlices > 0 {
		k = p.Design.WriteSlices
	}
	if k <= 0 {
		k = min(max(int(math.Round(st.Seconds.Seconds())), minSlices), maxSlices)
	}
	for k > 1 && st.Seconds/time.Duration(k) < shortestSlice {
		k--
	}
	return k, st.Seconds / time.Duration(k)
}

// AutoSlice is the shortest slice --repeat auto cuts a repeat into: on a
// 2-core VM a round's noise per measured second was 3.6 times as large
// at 0.1 s as at 0.25 s, and no smaller at 0.5 s (docs/perf.md).
const AutoSlice = 250 * time.Millisecond

// MostSlices is the most slices --repeat auto cuts a repeat of sliced
// step st into: maxSlices, none shorter than AutoSlice (at least one).
func (p *Runner) MostSlices(st suite.Step) int {
	return max(1, min(maxSlices, int(st.Seconds/AutoSlice)))
}

// SlicedSteps are the indexes of the steps the plan runs as slices.
func (p *Runner) SlicedSteps() []int {
	var out []int
	for i, st := range p.Steps.Steps {
		if p.sliced(st) {
			out = append(out, i)
		}
	}
	return out
}

// SpreadSeconds makes the seconds of each sliced step, and of each
// warm-up step, their time over repeats repeats (--repeat auto): each
// repeat measures (or warms up for) its share.
func (p *Runner) SpreadSeconds(repeats int) {
	for i, st := range p.Steps.Steps {
		if p.sliced(st) || st.Role == result.RoleWarm && st.Drive != nil && !st.Drive.UntilScheduled {
			p.Steps.Steps[i].Seconds /= time.Duration(max(repeats, 1))
		}
	}
}

// SwitchWarmup is the unmeasured warm-up of a slice after the servers
// switch: a quarter of the slice, within 50 ms and 2 s (the first slice of
// each repeat gets the plan's --warmup if that is longer).
func SwitchWarmup(slice time.Duration) time.Duration {
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
// under test-level interleaving by repeat after the first, so that each
// repeat draws other events (other rows), but for a step that runs once:
// its reload makes the same tables (restore).
func (p *Runner) seedOf(st suite.Step, it Item) uint64 {
	if p.testLevel() && it.Repeat > 1 && !st.Once {
		return seedFor(p.Share.seed(p.Seed), fmt.Sprintf("%s/repeat=%d", st.Test, it.Repeat), it.Threads)
	}
	return seedFor(p.Share.seed(p.Seed), st.Test, it.Threads)
}

// Label is how the label's results are addressed (Item.Label).
func (l LabelSpec) Label() string {
	return Item{Build: l.Build, Config: l.Config, StorageEngine: l.StorageEngine}.Label()
}
