// Package history owns benchmark history as series: one per test, metric,
// host, config, server flavor and thread count (and conditions, the
// storage engine among them), its points ordered by build version in
// natural order (10.2.44 < 10.11.7 < 11.4.1), by commit time when every
// build was compiled from a commit (qpslab builds compile), or by time when
// the builds carry no version (a nightly build), or, when they carry
// neither, by build name in natural order (ma9 < ma10), never in the
// store's order.
// It makes series from stored runs, and reads and writes them in Apache
// Otava's CSV layout and Nyrkiö's JSON upload shape. It holds data only;
// detection is analysis's.
package history

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
)

// Point is one build's value (the median of its runs), or one run's.
type Point struct {
	Time    time.Time `json:"time"`
	Build   string    `json:"build,omitempty"`
	Version string    `json:"version,omitempty"`
	Commit  string    `json:"commit,omitempty"`
	Value   float64   `json:"value"`
	N       int       `json:"n"` // runs behind the value
	// Values are the runs' values behind a build's point, in ascending
	// order (for comparing builds by their repeats).
	Values []float64 `json:"values,omitempty"`
	// Obs are the observations behind a build's point with where each was
	// measured, for pairing two builds' runs of one plan: the headline's
	// rounds (test-level interleaving), or each run by its repeat.
	Obs []Obs `json:"-"`
}

// Obs is one observation of a point: a value, and the plan, repeat and
// round it was measured in (Plan empty: not paired with anything).
type Obs struct {
	Plan, Pairing string
	Repeat, Round int
	Value         float64
}

// observations are the observations of run r's value v of metric m: its
// rounds for the headline figure, which pairs them round by round with
// the other labels' of its plan; else the run, paired by its repeat.
func observations(r result.Run, m result.Metric, v float64) []Obs {
	rep, _ := strconv.Atoi(r.Params["repeat"])
	if r.Pairing == "" || r.Plan == "" {
		return []Obs{{Repeat: rep, Value: v}}
	}
	if m.Name == HeadlineMetric && len(r.Rounds) > 0 {
		out := make([]Obs, 0, len(r.Rounds))
		for _, rd := range r.Rounds {
			out = append(out, Obs{Plan: r.Plan, Pairing: r.Pairing, Repeat: rd.Repeat, Round: rd.Round, Value: rd.Value})
		}
		return out
	}
	return []Obs{{Plan: r.Plan, Pairing: r.Pairing, Repeat: rep, Value: v}}
}

// HeadlineMetric is the registry's name of a step's headline figure,
// whose rounds a paired run keeps.
const HeadlineMetric = "qps"

// Series is one metric of one test over builds or time.
type Series struct {
	Suite          string `json:"suite,omitempty"`
	Test           string `json:"test"`
	Metric         string `json:"metric"`
	Unit           string `json:"unit,omitempty"`
	HigherIsBetter bool   `json:"higher_is_better"`
	Host           string `json:"host,omitempty"`
	Config         string `json:"config,omitempty"`
	// Flavor is the runs' server flavor (mysql, mariadb, postgres, …):
	// a MySQL and a MariaDB build run under one config name are two
	// series, never one version-ordered one. MixedFlavor says the test
	// has series of other flavors under the same names, so names show it.
	Flavor      string `json:"flavor,omitempty"`
	MixedFlavor bool   `json:"-"`
	// StorageEngine is the runs' storage engine when it is not InnoDB (it is in
	// Conditions too).
	StorageEngine string `json:"engine,omitempty"`
	Threads       int    `json:"threads,omitempty"`
	// Conditions are the runs' (result.Run.Conditions); Mixed says the
	// test has series under other conditions too, so names show them.
	Conditions string `json:"conditions,omitempty"`
	Mixed      bool   `json:"-"`
	// HostID is the fingerprint id of the host every run of the series
	// ran on ("" when they ran on several, or record none): the key of
	// its noise floor.
	HostID string  `json:"-"`
	Order  string  `json:"order"` // OrderVersion, OrderCommit, OrderTime, OrderName, OrderVersionName or OrderFile
	Points []Point `json:"points"`
}

// Name is how reports name the series.
func (s Series) Name() string {
	n := s.Test
	if s.Suite != "" {
		n = s.Suite + " " + n
	}
	if s.Threads > 0 {
		n += fmt.Sprintf(" thr=%d", s.Threads)
	}
	if s.Config != "" {
		n += " config=" + s.Config
	}
	if s.MixedFlavor {
		n += " flavor=" + s.Flavor
	}
	if s.Host != "" {
		n += " host=" + s.Host
	}
	if s.Mixed {
		n += " [" + s.Conditions + "]"
	}
	return n + " " + s.Metric
}

type seriesKey struct {
	suite, test, host, config string
	flavor, storageEngine     string // a MySQL and a MariaDB build never share a series
	threads                   int
	cond                      string // result.Run.Conditions: runs made otherwise are another series
}

// FromRuns makes a series of metric m for every suite, test, host, config,
// flavor, engine, thread count and conditions in runs (ok runs only). With two builds or more, a point
// is a build (the median of its runs), in version order when every run
// names one; when some do not, a point is a run in time order if every run
// has a time, else still a build, the builds without a version after the
// others by name (see points). One build's runs are points in time order.
func FromRuns(runs []result.Run, m result.Metric, hostOf func(result.Run) string) []Series {
	groups := map[seriesKey][]result.Run{}
	var keys []seriesKey
	for _, r := range runs {
		if !r.Comparable() || r.Test == "" {
			continue
		}
		if v, ok := m.Of(r); !ok || math.IsNaN(v) {
			continue
		}
		cfg := result.ConfigName(r.Config)
		k := seriesKey{r.Suite, r.Test, hostOf(r), cfg, r.Flavor, r.OtherStorageEngine(), r.Threads, r.Conditions()}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.suite != b.suite {
			return a.suite < b.suite
		}
		if a.test != b.test {
			return a.test < b.test
		}
		if a.threads != b.threads {
			return a.threads < b.threads
		}
		if a.config != b.config {
			return a.config < b.config
		}
		if a.flavor != b.flavor {
			return a.flavor < b.flavor
		}
		if a.host != b.host {
			return a.host < b.host
		}
		return a.cond < b.cond
	})
	// A test with series under several conditions (or engines) names
	// them; one with series of several flavors under one config names
	// the flavors.
	byCond, byFlavor := map[seriesKey]int{}, map[seriesKey]int{}
	for _, k := range keys {
		byCond[noCond(k)]++
		byFlavor[noFlavor(k)]++
	}
	var out []Series
	for _, k := range keys {
		s := Series{Suite: k.suite, Test: k.test, Metric: m.Name, Unit: m.UnitOf(groups[k][0]), HigherIsBetter: m.HigherIsBetter, Host: k.host, Config: k.config,
			Flavor: k.flavor, StorageEngine: k.storageEngine, Threads: k.threads, Conditions: k.cond}
		s.Mixed, s.MixedFlavor = byCond[noCond(k)] > 1, byFlavor[noFlavor(k)] > 1
		s.Points, s.Order = points(groups[k], m)
		s.HostID = hostIDOf(groups[k])
		out = append(out, s)
	}
	return out
}

// noCond is k without its conditions (and the engine they hold).
func noCond(k seriesKey) seriesKey {
	k.cond, k.storageEngine = "", ""
	return k
}

// noFlavor is k without its flavor.
func noFlavor(k seriesKey) seriesKey {
	k.flavor = ""
	return k
}

// hostIDOf is the fingerprint id of the host all runs ran on, "" when
// they ran on several or one records none.
func hostIDOf(runs []result.Run) string {
	id := ""
	for _, r := range runs {
		if len(r.Host) == 0 {
			return ""
		}
		h, err := host.ID(r.Host)
		if err != nil || (id != "" && h != id) {
			return ""
		}
		id = h
	}
	return id
}

// The orders of a series' points (Series.Order).
const (
	// OrderVersion: a point per build, in natural version order.
	OrderVersion = "version"
	// OrderTime: a point per run, in time order.
	OrderTime = "time"
	// OrderName: a point per build, in natural name order (ma9 < ma10),
	// as no build has a version and some run has no time.
	OrderName = "name"
	// OrderVersionName: a point per build, the builds with a version in
	// version order, then those without one in natural name order.
	OrderVersionName = "version, then name"
	// OrderFile: the rows of a history file, in the file's order.
	OrderFile = "file"
	// OrderCommit: a point per build, in the order of the commits the
	// builds were compiled from (their committer time), as every run
	// names one (qpslab builds compile).
	OrderCommit = "commit time"
)

// ByName says whether a series' order is by build name, in whole or in part.
func (s Series) ByName() bool { return s.Order == OrderName || s.Order == OrderVersionName }

// points orders a series' runs. With two builds or more: when every run
// names a version, a point per build in version order; else, when every
// run has a time, a point per run in time order; else a point per build,
// the versioned builds first in version order and the rest after them by
// name, so that the order is never the store's. One build's runs are
// points in time order.
func points(runs []result.Run, m result.Metric) ([]Point, string) {
	builds := map[string][]result.Run{}
	versioned, timed := true, true
	committed := map[string]time.Time{} // a build's commit time, while every run has one
	// A name compiled again at another commit (--replace) has runs of two
	// commits: its newest run's commit orders it.
	newest := map[string]time.Time{}
	for _, r := range runs {
		builds[r.Build] = append(builds[r.Build], r)
		if r.Version == "" {
			versioned = false
		}
		if r.Started.IsZero() {
			timed = false
		}
		if at, err := time.Parse(time.RFC3339, r.Params["commit_time"]); err == nil && committed != nil {
			if last, seen := newest[r.Build]; !seen || !r.Started.Before(last) {
				committed[r.Build], newest[r.Build] = at, r.Started
			}
		} else {
			committed = nil
		}
	}
	if len(builds) >= 2 && (committed != nil || versioned || !timed) {
		var pts []Point
		some := false // a build with a version
		for b, rs := range builds {
			vals := make([]float64, 0, len(rs))
			p := Point{Build: b, N: len(rs)}
			var commitRun time.Time // the start of the run p.Commit is of: the newest
			for _, r := range rs {
				v, _ := m.Of(r)
				vals = append(vals, v)
				p.Obs = append(p.Obs, observations(r, m, v)...)
				if r.Started.After(p.Time) {
					p.Time = r.Started
				}
				if c := r.Params["commit"]; c != "" && (p.Commit == "" || !r.Started.Before(commitRun)) {
					p.Commit, commitRun = c, r.Started
				}
				if r.Version != "" {
					p.Version = r.Version
				}
			}
			some = some || p.Version != ""
			sort.Float64s(vals)
			p.Value, p.Values = Median(vals), vals
			pts = append(pts, p)
		}
		if committed != nil {
			sort.Slice(pts, func(i, j int) bool {
				a, b := committed[pts[i].Build], committed[pts[j].Build]
				if !a.Equal(b) {
					return a.Before(b)
				}
				return CompareBuilds(pts[i], pts[j]) < 0
			})
			return pts, OrderCommit
		}
		sort.Slice(pts, func(i, j int) bool { return CompareBuilds(pts[i], pts[j]) < 0 })
		switch {
		case versioned:
			return pts, OrderVersion
		case some:
			return pts, OrderVersionName
		}
		return pts, OrderName
	}
	sorted := append([]result.Run{}, runs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Started.Before(sorted[j].Started) })
	pts := make([]Point, 0, len(sorted))
	for _, r := range sorted {
		v, _ := m.Of(r)
		pts = append(pts, Point{Time: r.Started, Build: r.Build, Version: r.Version, Commit: r.Params["commit"], Value: v, N: 1})
	}
	return pts, OrderTime
}

// CompareBuilds orders the points of builds: those with a version first,
// in natural version order, then those without one; ties (and builds
// without a version) in natural name order (ma9 < ma10), then as text.
func CompareBuilds(a, b Point) int {
	switch {
	case a.Version != "" && b.Version == "":
		return -1
	case a.Version == "" && b.Version != "":
		return 1
	}
	if c := CompareVersions(a.Version, b.Version); c != 0 {
		return c
	}
	if c := CompareVersions(a.Build, b.Build); c != 0 {
		return c
	}
	return strings.Compare(a.Build, b.Build)
}

// Median of sorted values: the middle one, or the mean of the two middle
// ones (gonum's quantiles pick one of them), without overflow: two runs
// of 1.7e308 have a median of 1.7e308 (result.Midpoint).
func Median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return result.Midpoint(sorted[n/2-1], sorted[n/2])
}

// CompareVersions orders versions naturally: runs of digits compare as
// numbers, the rest as text (10.2.44 < 10.11.7 < 11.4.1; 8.0.30 < 8.0.100).
// A shorter version that is a prefix of a longer comes first (8.0 < 8.0.1).
func CompareVersions(a, b string) int {
	ca, cb := chunks(a), chunks(b)
	for i := 0; i < len(ca) && i < len(cb); i++ {
		x, y := ca[i], cb[i]
		xn, xerr := strconv.ParseUint(x, 10, 64)
		yn, yerr := strconv.ParseUint(y, 10, 64)
		switch {
		case xerr == nil && yerr == nil:
			if xn != yn {
				if xn < yn {
					return -1
				}
				return 1
			}
		case x != y:
			return strings.Compare(x, y)
		}
	}
	return len(ca) - len(cb)
}

// chunks splits a version into runs of digits and runs of other letters,
// dropping separators: "10.11.7-rc1" → 10 11 7 rc 1.
func chunks(v string) []string {
	var out []string
	cur := ""
	digit := false
	flush := func() {
		if cur != "" {
			out = append(out, cur)
		}
		cur = ""
	}
	for _, r := range v {
		switch {
		case unicode.IsDigit(r):
			if !digit {
				flush()
			}
			digit = true
			cur += string(r)
		case unicode.IsLetter(r):
			if digit {
				flush()
			}
			digit = false
			cur += string(r)
		default:
			flush()
			digit = false
		}
	}
	flush()
	return out
}
