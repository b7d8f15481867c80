package tpcc

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/owned"
	"github.com/qpslab/qpslab/internal/result"
)

// checkLoaded checks, before the test, that the tables are qpslab's, are
// a finished load (tpcc_loaded has its row: a load that stopped half way
// has none) of warehouses W, and hold W warehouses and their districts.
func checkLoaded(ctx context.Context, conn client.Conn, d client.Dialect, warehouses int64) (consts, error) {
	var c consts
	if err := owned.Verify(ctx, d, conn, tableNames); err != nil {
		return c, fmt.Errorf("tpcc: %w", err)
	}
	rows, err := textRows(ctx, conn, "SELECT warehouses, items, c_last, c_id, c_item FROM "+loadedTable)
	if err != nil {
		return c, fmt.Errorf("tpcc: read %s: %w", loadedTable, err)
	}
	if len(rows) != 1 {
		return c, fmt.Errorf("tpcc: the TPC-C tables are not a finished load (the last load stopped before its end): load them again (leave out --no-load)")
	}
	if got, _ := strconv.ParseInt(rows[0][0], 10, 64); got != warehouses {
		return c, fmt.Errorf("tpcc: the TPC-C tables hold %s warehouse(s), not %d: give --warehouses %s, or load again at %d (leave out --no-load)",
			rows[0][0], warehouses, rows[0][0], warehouses)
	}
	c.last, _ = strconv.ParseInt(rows[0][2], 10, 64)
	c.id, _ = strconv.ParseInt(rows[0][3], 10, 64)
	c.item, _ = strconv.ParseInt(rows[0][4], 10, 64)
	for _, t := range []struct {
		q string
		n int64
	}{{"SELECT COUNT(*) FROM warehouse", warehouses}, {"SELECT COUNT(*) FROM district", warehouses * Districts}, {"SELECT COUNT(*) FROM item", Items}} {
		n, err := client.Scalar(ctx, conn, t.q)
		if err != nil {
			return c, fmt.Errorf("tpcc: %s: %w", t.q, err)
		}
		if n != t.n {
			return c, fmt.Errorf("tpcc: %s gives %d, and %d warehouse(s) have %d: load the tables again (leave out --no-load)", t.q, n, warehouses, t.n)
		}
	}
	return c, nil
}

// textRows runs q, prepared (the lean path gives every value as the
// server writes it: DECIMAL's digits, NULL as "NULL"), and returns its rows.
func textRows(ctx context.Context, conn client.Conn, q string) ([][]string, error) {
	st, err := conn.Prepare(ctx, q)
	if err != nil {
		return nil, err
	}
	var out [][]string
	_, err = st.QueryEach(ctx, nil, func(v *client.Values) {
		row := make([]string, v.Len())
		for i := range row {
			if row[i] = "NULL"; !v.Null(i) {
				row[i] = v.String(i)
			}
		}
		out = append(out, row)
	})
	return out, err
}

// Check checks the consistency conditions of clause 3.3.2, 1 to 4, on the
// whole database, and returns the first that fails, naming the warehouse
// and district and the numbers:
//
//  1. W_YTD = sum(D_YTD) of each warehouse;
//  2. D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) of each district;
//  3. max(NO_O_ID) - min(NO_O_ID) + 1 = the rows of NEW-ORDER of each district;
//  4. sum(O_OL_CNT) = the rows of ORDER-LINE of each district.
//
// It reads in one snapshot (a transaction of its own, REPEATABLE READ), so
// that a transaction committing meanwhile cannot make two reads disagree.
func Check(ctx context.Context, d client.Dialect, conn client.Conn) error {
	if _, err := conn.Exec(ctx, d.SnapshotBegin); err != nil {
		return fmt.Errorf("tpcc: consistency check: %w", err)
	}
	err := check(ctx, conn)
	if _, rerr := conn.Exec(ctx, "ROLLBACK"); err == nil && rerr != nil {
		err = fmt.Errorf("tpcc: consistency check: %w", rerr)
	}
	return err
}

func check(ctx context.Context, conn client.Conn) error {
	fail := func(n int, format string, args ...any) error {
		return fmt.Errorf("TPC-C consistency condition 3.3.2.%d fails: "+format+" (the database is not as the transactions leave it: load it again)", append([]any{n}, args...)...)
	}
	rows, err := textRows(ctx, conn, "SELECT w_id, w_ytd, (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id) FROM warehouse ORDER BY w_id")
	if err != nil {
		return fmt.Errorf("tpcc: consistency 1: %w", err)
	}
	for _, r := range rows {
		if cents(r[1]) != cents(r[2]) {
			return fail(1, "warehouse %s has W_YTD %s and its districts' D_YTD add to %s", r[0], r[1], r[2])
		}
	}
	rows, err = textRows(ctx, conn, `SELECT d_w_id, d_id, d_next_o_id,
 (SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id),
 (SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id) FROM district ORDER BY d_w_id, d_id`)
	if err != nil {
		return fmt.Errorf("tpcc: consistency 2: %w", err)
	}
	for _, r := range rows {
		next, _ := strconv.ParseInt(r[2], 10, 64)
		if r[3] != strconv.FormatInt(next-1, 10) || (r[4] != "NULL" && r[4] != r[3]) {
			return fail(2, "district %s of warehouse %s has D_NEXT_O_ID %s, max(O_ID) %s and max(NO_O_ID) %s", r[1], r[0], r[2], r[3], r[4])
		}
	}
	rows, err = textRows(ctx, conn, "SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1, COUNT(*) FROM new_order GROUP BY no_w_id, no_d_id ORDER BY no_w_id, no_d_id")
	if err != nil {
		return fmt.Errorf("tpcc: consistency 3: %w", err)
	}
	for _, r := range rows {
		if r[2] != r[3] {
			return fail(3, "district %s of warehouse %s has NEW-ORDER rows from a span of %s order ids, and %s rows", r[1], r[0], r[2], r[3])
		}
	}
	lines := map[[2]string]string{}
	rows, err = textRows(ctx, conn, "SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id")
	if err != nil {
		return fmt.Errorf("tpcc: consistency 4: %w", err)
	}
	for _, r := range rows {
		lines[[2]string{r[0], r[1]}] = r[2]
	}
	rows, err = textRows(ctx, conn, "SELECT o_w_id, o_d_id, SUM(o_ol_cnt) FROM orders GROUP BY o_w_id, o_d_id ORDER BY o_w_id, o_d_id")
	if err != nil {
		return fmt.Errorf("tpcc: consistency 4: %w", err)
	}
	for _, r := range rows {
		if got := lines[[2]string{r[0], r[1]}]; got != r[2] {
			return fail(4, "district %s of warehouse %s has sum(O_OL_CNT) %s and %s ORDER-LINE rows", r[1], r[0], r[2], or0(got))
		}
	}
	return nil
}

func or0(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// cents reads a DECIMAL's text as cents (12.3 → 1230, -10.00 → -1000);
// -1<<62 for text that is no number (NULL), which equals no sum.
func cents(s string) int64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return -1 << 62
	}
	return int64(math.Round(f * 100))
}

// The response-time limits of clause 5.2.5.3: the 90th percentile of each
// transaction's response time, in seconds.
var limit90 = [nTx]float64{5, 5, 5, 5, 20}

// limits are the verdicts of the 90th-percentile limits, one per
// transaction that ran.
func limits(t result.Totals, wait bool) []result.Verdict {
	var out []result.Verdict
	for k, kind := range Kinds {
		o, ok := t.Op(kind)
		if !ok || o.Response.Count == 0 {
			continue
		}
		p90 := o.Response.P90 / 1e6
		how := "clause 5.2.5.3"
		if !wait {
			how += "; without keying and think times (--wait), as the clause does not run"
		}
		out = append(out, result.Verdict{Name: kind + " 90th percentile", OK: p90 <= limit90[k],
			Detail: fmt.Sprintf("%.3g s, the limit %g s (%s)", p90, limit90[k], how)})
	}
	return out
}

// newOrdersPerSec is the committed New-Orders per second: New-Order's
// events less its rollbacks.
func newOrdersPerSec(t result.Totals) float64 {
	if t.Seconds <= 0 {
		return 0
	}
	no, _ := t.Op(Kinds[txNewOrder])
	rb, _ := t.Op(RollbackKind)
	return float64(no.Count-rb.Count) / t.Seconds
}
