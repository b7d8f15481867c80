package tpcc

import (
	"github.com/qpslab/qpslab/internal/result"
)

// The suite's own figures, by their registered names: HammerDB's NOPM
// (New-Orders committed per minute, TPC-C's tpmC without the audit) and
// TPM (transactions per minute), and the share of New-Orders rolled back.
const (
	FigureNOPM        = "NOPM"
	FigureTPM         = "TPM"
	FigureRollbackPct = "new-order_rollback%"
)

func init() {
	test := func(r result.Run) bool { return r.Suite == Name && r.Role == result.RoleTest && r.Totals.Seconds > 0 }
	result.Register(
		result.Metric{Name: FigureNOPM, Max: 60 * result.MaxRate, Unit: "new-orders/min", HigherIsBetter: true, Per: "min", Class: result.ClassFigure, Verb: "%.0f", Suite: Name,
			Of: func(r result.Run) (float64, bool) {
				return 60 * newOrdersPerSec(r.Totals), test(r)
			},
			Help: "New-Orders committed per minute (HammerDB's NOPM; TPC-C's tpmC, unaudited): rolled-back ones left out"},
		result.Metric{Name: FigureTPM, Max: 60 * result.MaxRate, Unit: "transactions/min", HigherIsBetter: true, Per: "min", Class: result.ClassFigure, Verb: "%.0f", Suite: Name,
			Of: func(r result.Run) (float64, bool) {
				return 60 * float64(r.Totals.Events) / r.Totals.Seconds, test(r)
			},
			Help: "transactions of every type completed per minute (HammerDB's TPM counts the server's commits and rollbacks; this is the client's count)"},
		result.Metric{Name: FigureRollbackPct, Max: 100, Unit: "%", Per: "new-order", Class: result.ClassFigure, Verb: "%.2f", Suite: Name,
			Of: func(r result.Run) (float64, bool) {
				no, _ := r.Totals.Op(Kinds[txNewOrder])
				rb, _ := r.Totals.Op(RollbackKind)
				if !test(r) || no.Count == 0 {
					return 0, false
				}
				return 100 * float64(rb.Count) / float64(no.Count), true
			},
			Help: "New-Orders rolled back on their unused item (clause 2.4.2.3: 1 % of them)"},
	)
}
