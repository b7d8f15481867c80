package result

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Metric is one figure of a run that can be compared, followed over
// history and printed. Each is registered once (Register) by the package
// that produces it: the engine its rates and latencies, internal/metrics
// the hardware cost per op, each suite its own figures. History, analysis,
// report, the store, the dashboard and detect's --metric iterate the
// registry (All, MetricsOf, Lookup); none lists the names again.
type Metric struct {
	Name           string // the one name, as users type it and JSON and the store keep it: qps, p99, cpu/o, server_cpu_us/o
	Unit           string // "" where the run says (the headline's ReportedUnit)
	HigherIsBetter bool
	Per            string // what it is counted per: the headline's op, an event, a second
	// Class is where the figure is shown: the figures and latencies of
	// compare, detect and the runs; the per-op table's hardware (ClassHW),
	// CPU (ClassCPU), per-insert (ClassInsert), disk request (ClassDevice)
	// and server (ClassServer) blocks.
	Class string
	Help  string
	Verb  string // fmt verb for Format (default %.3g)
	// Suite is the suite whose runs have the figure ("" for every run's):
	// `qpslab suites` lists it under that suite.
	Suite string
	// Sweep is the figure's place among a concurrency sweep's tables
	// (1 first; 0: not drawn).
	Sweep int
	// Aliases are names the figure had before (in older stores, files or
	// scripts): Lookup takes them.
	Aliases []string
	// Min and Max are the plausible range of the figure's values, in its
	// unit: what is imported or posted outside it is refused
	// (CheckFigures). Max 0: the class's default (Bounds); Min 0: the
	// figure cannot be negative.
	Min, Max float64
	// Rise is what the figure going up on a regressed test says, in the
	// seeds' words, for compare's findings ("" where it says nothing).
	Rise string
	// Of returns the figure of r, and false where r does not have it (not
	// measured is not zero). Nil: the run's own figure of that name
	// (Totals.Figures), which a suite or the plan computed.
	Of func(Run) (float64, bool)
}

// Metric classes: where a figure is shown.
const (
	ClassFigure  = "figure"  // headline figures, rates, the suites' own
	ClassLatency = "latency" // response times
	ClassHW      = "hw"      // the seeds' per-op hardware columns (sum_met.sh)
	ClassCPU     = "cpu"     // CPU time per op in honest units
	ClassInsert  = "insert"  // hardware cost per inserted row (the Insert Benchmark's cpu/i … wKB/i)
	ClassDevice  = "device"  // the disk's request sizes (iostat's rareq-sz, wareq-sz)
)

// Format prints v as the metric's tables do; "-" for a missing value.
func (m Metric) Format(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	verb := m.Verb
	if verb == "" {
		verb = "%.3g"
	}
	return fmt.Sprintf(verb, v)
}

// FigureOf is the derivation of a figure a suite or the plan computed and
// stored under name in Totals.Figures (a Metric's default Of).
func FigureOf(name string) func(Run) (float64, bool) {
	return func(r Run) (float64, bool) {
		v, ok := r.Totals.Figures[name]
		return v, ok
	}
}

// Form is a family of metrics whose name carries a parameter: KIND/s
// (an operation kind's rate), COUNTER/o (a server counter per op). Its
// Metric returns the metric of a name of its form, and false for others.
type Form struct {
	Names  []string // as help texts show them: KIND/s, KIND.p99
	Metric func(name string) (Metric, bool)
}

var registry = struct {
	sync.Mutex
	metrics []Metric
	byName  map[string]int // names and aliases
	forms   []Form
}{byName: map[string]int{}}

// Register adds figures to the registry, in the order tables list them;
// their producers call it from init. A name (or alias) registered twice
// is a programming error.
func Register(ms ...Metric) {
	registry.Lock()
	defer registry.Unlock()
	for _, m := range ms {
		if m.Name == "" || m.Class == "" {
			panic("result: a metric needs a name and a class")
		}
		if m.Of == nil {
			m.Of = FigureOf(m.Name)
		}
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			if _, dup := registry.byName[n]; dup {
				panic("result: metric " + n + " registered twice")
			}
			registry.byName[n] = len(registry.metrics)
		}
		registry.metrics = append(registry.metrics, m)
	}
}

// RegisterForm adds a family of metrics named by a parameter.
func RegisterForm(f Form) {
	registry.Lock()
	defer registry.Unlock()
	registry.forms = append(registry.forms, f)
}

// All returns every registered metric in table order: every run's
// figures first, in their order of registration, then each suite's, by
// suite.
func All() []Metric {
	registry.Lock()
	out := slices.Clone(registry.metrics)
	registry.Unlock()
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].Suite == "") != (out[j].Suite == "") {
			return out[i].Suite == ""
		}
		return out[i].Suite < out[j].Suite
	})
	return out
}

// Forms returns the registered families of metrics.
func Forms() []Form {
	registry.Lock()
	defer registry.Unlock()
	return slices.Clone(registry.forms)
}

// Lookup finds a registered metric by its name or an alias, or one of a
// registered form.
func Lookup(name string) (Metric, bool) {
	registry.Lock()
	i, ok := registry.byName[name]
	var m Metric
	if ok {
		m = registry.metrics[i]
	}
	forms := registry.forms
	registry.Unlock()
	if ok {
		return m, true
	}
	for _, f := range forms {
		if m, ok := f.Metric(name); ok {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricNamed is Lookup with the error a user reads: the names to use.
func MetricNamed(name string) (Metric, error) {
	if m, ok := Lookup(name); ok {
		return m, nil
	}
	return Metric{}, fmt.Errorf("--metric %s: use one of %s", name, MetricNames())
}

// Names lists the registered metrics' names in table order.
func Names() []string {
	var names []string
	for _, m := range All() {
		names = append(names, m.Name)
	}
	return names
}

// MetricNames lists the registered names and forms, for help texts
// (detect's --metric) and errors.
func MetricNames() string {
	names := Names()
	for _, f := range Forms() {
		names = append(names, f.Names...)
	}
	return strings.Join(names, ", ")
}

// MetricsOf returns the registered metrics of one class, in table order.
func MetricsOf(class string) []Metric {
	var out []Metric
	for _, m := range All() {
		if m.Class == class {
			out = append(out, m)
		}
	}
	return out
}

// UnitOf is m's unit for run r: the metric's own, or the headline's.
func (m Metric) UnitOf(r Run) string {
	if m.Unit != "" || m.Class != ClassFigure {
		return m.Unit
	}
	return r.Totals.ReportedUnit
}
