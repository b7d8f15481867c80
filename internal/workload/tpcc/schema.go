package tpcc

import (
	"strings"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/owned"
)

// The cardinalities of clause 1.2 and 4.3.3.1: per warehouse, unless fixed.
const (
	Items                 = 100000 // ITEM, fixed
	Districts             = 10     // per warehouse
	CustomersPerDistrict  = 3000
	OrdersPerDistrict     = 3000
	NewOrdersPerDistrict  = 900 // the last 900 orders of each district
	StockPerWarehouse     = Items
	firstNewOrder         = OrdersPerDistrict - NewOrdersPerDistrict + 1 // 2101
	maxOrderLines         = 15
	minOrderLines         = 5
	historyPerWarehouse   = Districts * CustomersPerDistrict
	customersPerWarehouse = Districts * CustomersPerDistrict
)

// The nine tables, as the load drops and makes them, and the table that
// says a load finished (loadedTable: its one row is written last, with
// the constants C the load drew, which a run's must differ from).
var tableNames = []string{"warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock", loadedTable}

const loadedTable = "tpcc_loaded"

// tables is the DDL of clause 1.3 in dialect d, in engine (the MySQL
// family): the columns and types the specification gives (DECIMAL for
// numeric(m,n), DATETIME/TIMESTAMP for date and time), each table's
// primary key (clause 1.3's "Primary Key"), and no foreign keys (clause
// 1.4 leaves them to the implementation, as go-tpc and HammerDB do).
func tables(d client.Dialect, engine string) []owned.Table {
	e, ts := d.TableOptions(engine), d.Timestamp
	ddl := func(s string) string { return strings.ReplaceAll(s, "TS", ts) + e }
	return []owned.Table{
		{Name: "warehouse", DDL: ddl(`CREATE TABLE warehouse (w_id int NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
 w_city varchar(20), w_state char(2), w_zip char(9), w_tax decimal(4,4), w_ytd decimal(12,2), PRIMARY KEY (w_id))`)},
		{Name: "district", DDL: ddl(`CREATE TABLE district (d_id int NOT NULL, d_w_id int NOT NULL, d_name varchar(10), d_street_1 varchar(20),
 d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax decimal(4,4), d_ytd decimal(12,2), d_next_o_id int,
 PRIMARY KEY (d_w_id, d_id))`)},
		{Name: "customer", DDL: ddl(`CREATE TABLE customer (c_id int NOT NULL, c_d_id int NOT NULL, c_w_id int NOT NULL, c_first varchar(16),
 c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9),
 c_phone char(16), c_since TS, c_credit char(2), c_credit_lim decimal(12,2), c_discount decimal(4,4), c_balance decimal(12,2),
 c_ytd_payment decimal(12,2), c_payment_cnt int, c_delivery_cnt int, c_data varchar(500), PRIMARY KEY (c_w_id, c_d_id, c_id))`)},
		{Name: "history", DDL: ddl(`CREATE TABLE history (h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date TS,
 h_amount decimal(6,2), h_data varchar(24))`)},
		{Name: "new_order", DDL: ddl(`CREATE TABLE new_order (no_o_id int NOT NULL, no_d_id int NOT NULL, no_w_id int NOT NULL,
 PRIMARY KEY (no_w_id, no_d_id, no_o_id))`)},
		{Name: "orders", DDL: ddl(`CREATE TABLE orders (o_id int NOT NULL, o_d_id int NOT NULL, o_w_id int NOT NULL, o_c_id int, o_entry_d TS,
 o_carrier_id int, o_ol_cnt int, o_all_local int, PRIMARY KEY (o_w_id, o_d_id, o_id))`)},
		{Name: "order_line", DDL: ddl(`CREATE TABLE order_line (ol_o_id int NOT NULL, ol_d_id int NOT NULL, ol_w_id int NOT NULL,
 ol_number int NOT NULL, ol_i_id int, ol_supply_w_id int, ol_delivery_d TS, ol_quantity int, ol_amount decimal(6,2), ol_dist_info char(24),
 PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))`)},
		{Name: "item", DDL: ddl(`CREATE TABLE item (i_id int NOT NULL, i_im_id int, i_name varchar(24), i_price decimal(5,2), i_data varchar(50),
 PRIMARY KEY (i_id))`)},
		{Name: "stock", DDL: ddl(`CREATE TABLE stock (s_i_id int NOT NULL, s_w_id int NOT NULL, s_quantity int, s_dist_01 char(24),
 s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24),
 s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int, s_data varchar(50),
 PRIMARY KEY (s_w_id, s_i_id))`)},
		{Name: loadedTable, DDL: "CREATE TABLE " + loadedTable + " (warehouses int NOT NULL, items int NOT NULL, c_last int NOT NULL, c_id int NOT NULL, c_item int NOT NULL)" + e},
	}
}

// indexes are the secondary indexes made after the load: the customer by
// last name (Payment's and Order-Status's 60 % of lookups, clause
// 2.5.2.2 and 2.6.2.2) and a customer's orders (Order-Status's newest
// order), as go-tpc and HammerDB make them.
var indexes = []string{
	"CREATE INDEX idx_customer ON customer (c_w_id, c_d_id, c_last, c_first)",
	"CREATE INDEX idx_orders ON orders (o_w_id, o_d_id, o_c_id, o_id)",
}
