package suite

import "github.com/qpslab/qpslab/internal/result"

// The figures of the suites that try a transaction again after a
// serialization failure or a deadlock (--max-tries: the script suite's
// and TPC-C's), as pgbench reports them: "number of transactions retried"
// and "failed transactions (%)", as rates of the run's transactions. A run
// has them when its suite recorded its max_tries (Params), whatever the
// suite; the suites that take --max-tries list them (RetryFigures).
func init() {
	result.Register(
		result.Metric{Name: FigureFailedPct, Max: 100, Unit: "%", Per: "transaction", Class: result.ClassFigure, Verb: "%.2f",
			Of: func(r result.Run) (float64, bool) {
				f, _ := r.Totals.Op(FailedKind)
				n := float64(r.Totals.Events + f.Errors)
				if !retries(r) || n == 0 {
					return 0, false
				}
				return 100 * float64(f.Errors) / n, true
			},
			Help: "transactions that failed every try (--max-tries) with a serialization failure or deadlock, in % of those run"},
		result.Metric{Name: FigureRetriesPerTx, Max: 1e6, Unit: "tries", Per: "transaction", Class: result.ClassFigure, Verb: "%.3f",
			Of: func(r result.Run) (float64, bool) {
				if !retries(r) || r.Totals.Events == 0 {
					return 0, false
				}
				return float64(r.Totals.Retries) / float64(r.Totals.Events), true
			},
			Help: "failed tries (serialization failures, deadlocks) per transaction that succeeded"},
	)
}

// retries: r is a test of a suite that retries transactions.
func retries(r result.Run) bool {
	_, ok := r.Params[MaxTriesParam]
	return ok && r.Role == result.RoleTest
}

// The retry figures, by their registered names; FailedKind is the
// operation kind whose errors are the transactions that failed every try
// (pgbench's "failed transactions"), and MaxTriesParam the run parameter
// that records --max-tries.
const (
	FigureFailedPct    = "failed%"
	FigureRetriesPerTx = "retries/tx"
	FailedKind         = "failed"
	MaxTriesParam      = "max_tries"
)

// RetryFigures are the retry figures, for the Figures of a suite that
// takes --max-tries.
func RetryFigures() []Figure {
	var out []Figure
	for _, n := range []string{FigureFailedPct, FigureRetriesPerTx} {
		m, _ := result.Lookup(n)
		out = append(out, FigureOf(m))
	}
	return out
}
