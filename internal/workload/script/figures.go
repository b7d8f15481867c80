package script

import (
	"github.com/qpslab/qpslab/internal/result"
)

// The script suite's own figures (result.Register): how often its
// transactions had to be tried again and how many failed every try,
// pgbench's "number of transactions retried" and "failed transactions
// (%)" as rates of the run's transactions.
func init() {
	result.Register(
		result.Metric{Name: FigureFailedPct, Max: 100, Unit: "%", Per: "transaction", Class: result.ClassFigure, Verb: "%.2f", Suite: Name,
			Of: func(r result.Run) (float64, bool) {
				f, _ := r.Totals.Op(FailedKind)
				n := float64(r.Totals.Events + f.Errors)
				if r.Suite != Name || r.Role != result.RoleTest || n == 0 {
					return 0, false
				}
				return 100 * float64(f.Errors) / n, true
			},
			Help: "transactions that failed every try (--max-tries) with a serialization failure or deadlock, in % of those run"},
		result.Metric{Name: FigureRetriesPerTx, Max: 1e6, Unit: "tries", Per: "transaction", Class: result.ClassFigure, Verb: "%.3f", Suite: Name,
			Of: func(r result.Run) (float64, bool) {
				if r.Suite != Name || r.Role != result.RoleTest || r.Totals.Events == 0 {
					return 0, false
				}
				return float64(r.Totals.Retries) / float64(r.Totals.Events), true
			},
			Help: "failed tries (serialization failures, deadlocks) per transaction that succeeded"},
		result.Metric{Name: "host_cpu_us/stmt", Max: 1e12, Unit: "µs", Per: "statement", Class: result.ClassFigure, Verb: "%.1f", Suite: Name,
			Of: perStatement(func(h *result.HW) float64 { return h.HostCPUUsOp }), Help: "host-wide CPU time per SQL statement of the scripts (host_cpu_us/o over the statements per transaction)"},
		result.Metric{Name: "server_cpu_us/stmt", Max: 1e12, Unit: "µs", Per: "statement", Class: result.ClassFigure, Verb: "%.1f", Suite: Name,
			Of: perStatement(func(h *result.HW) float64 { return h.ServerCPUUsOp }), Help: "the server's CPU time per SQL statement of the scripts"},
		result.Metric{Name: "client_cpu_us/stmt", Max: 1e12, Unit: "µs", Per: "statement", Class: result.ClassFigure, Verb: "%.1f", Suite: Name,
			Of: perStatement(func(h *result.HW) float64 { return h.ClientCPUUsOp }), Help: "qpslab's client CPU time per SQL statement of the scripts"},
	)
}

// perStatement is a CPU time per transaction of a script run divided by
// its statements per transaction.
func perStatement(f func(*result.HW) float64) func(result.Run) (float64, bool) {
	return func(r result.Run) (float64, bool) {
		if r.Suite != Name || r.Role != result.RoleTest || !r.HW.Measured() || r.HW.NoCPUTime || r.Totals.Statements == 0 || r.Totals.Events == 0 {
			return 0, false
		}
		return f(r.HW) * float64(r.Totals.Events) / float64(r.Totals.Statements), true
	}
}

// The suite's figures, by their registered names.
const (
	FigureFailedPct    = "failed%"
	FigureRetriesPerTx = "retries/tx"
)
