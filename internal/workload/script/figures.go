package script

import (
	"github.com/qpslab/qpslab/internal/result"
)

// The script suite's own figures (result.Register): CPU time per SQL
// statement. Its retry figures (failed%, retries/tx) are package suite's,
// shared with TPC-C.
func init() {
	result.Register(
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
