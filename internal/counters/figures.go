package counters

import (
	"strings"

	"github.com/qpslab/qpslab/internal/result"
)

// The figures of the server's own counters (result.RegisterForm): a
// counter per op (COUNTER/o) and a level's mean over the window
// (LEVEL.avg), for whatever counters a run recorded.
func init() {
	result.RegisterForm(result.Form{Names: []string{"COUNTER" + result.CounterSuffix, "LEVEL" + result.LevelSuffix}, Metric: CounterMetric})
}

// CounterMetric is the metric of a server counter: "innodb_os_log_written/o"
// (its change per op) or "threads_running.avg" (a level's mean). A run that
// did not record the counter lacks it. It is false for a name of neither
// form.
func CounterMetric(name string) (result.Metric, bool) {
	if c, ok := strings.CutSuffix(name, result.CounterSuffix); ok && validName(c) {
		return result.Metric{Name: name, Max: result.DefaultMax, Per: "op", Class: result.ClassServer, Verb: "%.4g",
			Help: "server counter " + c + " per op",
			Of: func(r result.Run) (float64, bool) {
				if !r.HW.Measured() || r.HW.Server == nil || r.HW.Seconds <= 0 {
					return 0, false
				}
				v, ok := r.HW.Server.Counter(c)
				if !ok || v.Level {
					return 0, false
				}
				// The ops of the window: its o/s over its measured
				// seconds. The counters' own reads bracket the window
				// (the last may come late, after a stack capture), and
				// the workload stops at its end, so the change counts
				// the window's work. The measured seconds, not the
				// hardware sampler's: its first and last snapshots take
				// some milliseconds each, which a short slice of a test
				// (test-level interleaving) would count as ops.
				secs := r.Totals.Seconds
				if secs <= 0 {
					secs = r.HW.Seconds
				}
				return v.Value / (r.HW.OpsPerSec * secs), true
			}}, true
	}
	if c, ok := strings.CutSuffix(name, result.LevelSuffix); ok && validName(c) {
		return result.Metric{Name: name, Max: result.DefaultMax, Per: "s", Class: result.ClassServer, Verb: "%.3g",
			Help: "server level " + c + ", mean over the window",
			Of: func(r result.Run) (float64, bool) {
				if !r.HW.Measured() || r.HW.Server == nil {
					return 0, false // an import, a run without the counters
				}
				v, ok := r.HW.Server.Counter(c)
				if !ok || !v.Level {
					return 0, false
				}
				return v.Value, true
			}}, true
	}
	return result.Metric{}, false
}

// StateCounters are the counters whose change per op shows the state of
// the tables as a statement finds them: InnoDB's logical page reads (the
// demo's repeats that started after other writes read three times the
// pages per point lookup) and PostgreSQL's block requests, found in
// shared buffers or not (a colder cache moves blks_hit, not them; runs
// stored before blks_requested have blks_hit). A run's state figure is
// the first of them it recorded, per op.
var StateCounters = []string{"innodb_buffer_pool_read_requests", "blks_requested", "blks_hit"}

// StateFigure is the figure that shows the database state of runs
// (StateCounters), one for all of them: the first state counter every
// one of the runs that recorded any recorded, so that runs stored before
// a newer counter are set beside later ones by the one they share; and
// whether there is one.
func StateFigure(runs ...result.Run) (result.Metric, bool) {
	for _, c := range StateCounters {
		n, all := 0, true
		for _, r := range runs {
			if r.HW == nil || r.HW.Server == nil {
				continue
			}
			if v, ok := r.HW.Server.Counter(c); ok && !v.Level {
				n++
				continue
			}
			if hasState(r) {
				all = false
			}
		}
		if n > 0 && all {
			return CounterMetric(c + result.CounterSuffix)
		}
	}
	return result.Metric{}, false
}

// hasState says whether run r recorded some state counter.
func hasState(r result.Run) bool {
	for _, c := range StateCounters {
		if v, ok := r.HW.Server.Counter(c); ok && !v.Level {
			return true
		}
	}
	return false
}
