package tpcc

import (
	"fmt"

	"github.com/qpslab/qpslab/internal/client"
)

// The statements of the five transactions (clause 2.4–2.8), each prepared
// once per terminal on first use: ? placeholders, rebound per protocol.
const (
	noWarehouse = iota
	noDistrict
	noDistrictNext
	noCustomer
	noOrder
	noNewOrder
	noItem
	noStockUpdate
	noLine
	pWarehouseYTD
	pWarehouse
	pDistrictYTD
	pDistrict
	byName
	pCustomer
	pCustomerData
	pCustomerBC
	pCustomerGC
	pHistory
	osCustomer
	osOrder
	osLines
	dNewOrder
	dDelete
	dOrder
	dCarrier
	dLines
	dSum
	dCustomer
	slDistrict
	slCount
	noStock     // noStock+d-1: district d's S_DIST_xx
	nStatements = noStock + Districts
)

var statements = [noStock]string{
	noWarehouse:    "SELECT w_tax FROM warehouse WHERE w_id = ?",
	noDistrict:     "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE",
	noDistrictNext: "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?",
	noCustomer:     "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	noOrder:        "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
	noNewOrder:     "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
	noItem:         "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?",
	noStockUpdate:  "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
	noLine: "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info)" +
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	pWarehouseYTD: "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
	pWarehouse:    "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?",
	pDistrictYTD:  "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
	pDistrict:     "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?",
	byName:        "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
	pCustomer: "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit," +
		" c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
	pCustomerData: "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
	pCustomerBC: "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ?" +
		" WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	pCustomerGC: "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1" +
		" WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	pHistory:   "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
	osCustomer: "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	osOrder:    "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
	osLines:    "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
	dNewOrder:  "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE",
	dDelete:    "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
	dOrder:     "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
	dCarrier:   "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
	dLines:     "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
	dSum:       "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
	dCustomer:  "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	slDistrict: "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
	slCount: "SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_i_id = ol_i_id AND s_w_id = ol_w_id" +
		" WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_quantity < ?",
}

// statementSQL is statement k in dialect d.
func statementSQL(d client.Dialect, k int) string {
	q := ""
	if k >= noStock {
		q = fmt.Sprintf("SELECT s_quantity, s_data, s_dist_%02d FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE", k-noStock+1)
	} else {
		q = statements[k]
	}
	return d.Rebind(q)
}
