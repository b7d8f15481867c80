package tpcc

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/owned"
)

// bytesPerWarehouse is what one warehouse takes on disk once loaded, with
// its indexes, as measured on InnoDB and PostgreSQL here (about 120 MiB;
// docs/tpcc.md), rounded up: the free-space check's estimate.
const bytesPerWarehouse = 150 << 20

// checkSpace refuses a load that the disk under dir cannot hold, before
// anything is dropped or loaded.
func checkSpace(dir string, warehouses int64) error {
	if dir == "" {
		return nil // a target: its disk is not ours to see
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil // a datadir that cannot be asked: the load will say
	}
	free := st.Bavail * uint64(st.Bsize)
	need := uint64(warehouses)*bytesPerWarehouse + 20<<20
	if need > free {
		return fmt.Errorf("tpcc: --warehouses %d needs about %.1f GiB on disk and the server's disk (%s) has %.1f GiB free: lower --warehouses (at most %d here)",
			warehouses, float64(need)/(1<<30), dir, float64(free)/(1<<30), max(0, (int64(free)-20<<20)/bytesPerWarehouse))
	}
	return nil
}

// loader fills the tables of one load: its seed and start time.
type loader struct {
	warehouses int64
	seed       uint64
	c          consts
	now        []byte // the load's date, as text
	rows       atomic.Int64
	progress   func(done, total int64)
	mu         sync.Mutex
}

// total is the rows a load writes, the order lines estimated at 10 an order.
func (l *loader) total() int64 {
	return Items + l.warehouses*(1+Districts+customersPerWarehouse+historyPerWarehouse+Districts*OrdersPerDistrict+
		Districts*NewOrdersPerDistrict+Districts*OrdersPerDistrict*10+StockPerWarehouse)
}

func (l *loader) add(k int64) {
	n := l.rows.Add(k)
	l.mu.Lock()
	l.progress(n, l.total())
	l.mu.Unlock()
}

// load drops and makes the tables and fills them for warehouses 1..W,
// the warehouses shared by threads connections (each loads whole
// warehouses, one at a time: clause 4.3's population, in parallel per
// warehouse), through COPY or LOAD DATA; then makes the secondary
// indexes, analyzes the tables, checks every table's cardinality and, last,
// writes the row of tpcc_loaded that says the load finished: a load that
// stopped half way leaves none, and is never taken for a loaded database.
// It returns the rows loaded.
func load(ctx context.Context, d client.Dialect, engine string, dial func(context.Context) (client.Conn, error),
	warehouses int64, threads int, seed uint64, progress func(done, total int64)) (int64, error) {
	conn, err := dial(ctx)
	if err != nil {
		return 0, fmt.Errorf("load: connect: %w", err)
	}
	defer conn.Close()
	if err := owned.Drop(ctx, d, conn, tableNames); err != nil {
		return 0, fmt.Errorf("load: %w", err)
	}
	if err := owned.Create(ctx, d, conn, tables(d, engine)); err != nil {
		return 0, fmt.Errorf("load: %w", err)
	}
	loadC := loadConsts(seed)
	l := &loader{warehouses: warehouses, seed: seed, c: loadC, progress: progress,
		now: time.Now().UTC().AppendFormat(nil, "2006-01-02 15:04:05")}
	lines := map[int64]int64{} // order lines per warehouse
	var linesMu sync.Mutex
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int64)
	var wg sync.WaitGroup
	threads = int(min(int64(max(threads, 1)), warehouses))
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := conn
			if t > 0 {
				var err error
				if c, err = dial(ctx); err != nil {
					cancel(fmt.Errorf("load: connect: %w", err))
					return
				}
				defer c.Close()
			}
			if t == 0 {
				if err := l.items(ctx, c); err != nil {
					cancel(err)
					return
				}
			}
			for w := range next {
				n, err := l.warehouse(ctx, c, w)
				if err != nil {
					cancel(err)
					return
				}
				linesMu.Lock()
				lines[w] = n
				linesMu.Unlock()
			}
		}()
	}
feed:
	for w := int64(1); w <= warehouses; w++ {
		select {
		case next <- w:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return 0, err
	}
	for _, q := range indexes {
		if _, err := conn.Exec(ctx, q); err != nil {
			return 0, fmt.Errorf("load: %s: %w", q, err)
		}
	}
	for _, t := range tableNames[:9] {
		q := d.Analyze(t)
		if _, err := conn.Query(ctx, q); err != nil {
			return 0, fmt.Errorf("load: %s: %w", q, err)
		}
	}
	var orderLines int64
	for _, n := range lines {
		orderLines += n
	}
	if err := checkCardinality(ctx, conn, warehouses, orderLines); err != nil {
		return 0, fmt.Errorf("load: %w", err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO %s (warehouses, items, c_last, c_id, c_item) VALUES (%d, %d, %d, %d, %d)",
		loadedTable, warehouses, Items, loadC.last, loadC.id, loadC.item)); err != nil {
		return 0, fmt.Errorf("load: %w", err)
	}
	return l.rows.Load(), nil
}

// copyRows loads n rows into table through c, each written by line.
func (l *loader) copyRows(ctx context.Context, c client.Conn, table string, cols []string, n int64, line func(b []byte, i int64) []byte) error {
	got, err := client.Copy(ctx, c, table, cols, client.Lines(n, line, l.add))
	if err != nil {
		return fmt.Errorf("load %s: %w", table, err)
	}
	if got != n {
		return fmt.Errorf("load %s: the server took %d of %d rows", table, got, n)
	}
	return nil
}

// items loads ITEM (clause 4.3.3.1).
func (l *loader) items(ctx context.Context, c client.Conn) error {
	r := newRand(l.seed, 0)
	return l.copyRows(ctx, c, "item", []string{"i_id", "i_im_id", "i_name", "i_price", "i_data"}, Items, func(b []byte, i int64) []byte {
		b = append(appendInt(b, i), '\t')
		b = append(appendInt(b, between(r, 1, 10000)), '\t')
		b = append(appendAString(b, r, 14, 24), '\t')
		b = append(appendMoney(b, between(r, 100, 10000)), '\t')
		return append(appendData(b, r), '\n')
	})
}

// warehouse loads warehouse w's rows of every table but ITEM, and returns
// its order lines.
func (l *loader) warehouse(ctx context.Context, c client.Conn, w int64) (int64, error) {
	r := newRand(l.seed, uint64(w))
	tab := func(b []byte) []byte { return append(b, '\t') }
	address := func(b []byte) []byte { // street 1, street 2, city, state, zip
		b = tab(appendAString(b, r, 10, 20))
		b = tab(appendAString(b, r, 10, 20))
		b = tab(appendAString(b, r, 10, 20))
		b = tab(appendAString(b, r, 2, 2))
		return tab(appendZip(b, r))
	}
	steps := []func() error{
		func() error {
			return l.copyRows(ctx, c, "warehouse", []string{"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"}, 1,
				func(b []byte, _ int64) []byte {
					b = tab(appendInt(b, w))
					b = address(tab(appendAString(b, r, 6, 10)))
					b = tab(appendRate(b, between(r, 0, 2000)))
					return append(b, "300000.00\n"...)
				})
		},
		func() error {
			return l.copyRows(ctx, c, "district", []string{"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state", "d_zip", "d_tax", "d_ytd", "d_next_o_id"}, Districts,
				func(b []byte, d int64) []byte {
					b = tab(appendInt(tab(appendInt(b, d)), w))
					b = address(tab(appendAString(b, r, 6, 10)))
					b = tab(appendRate(b, between(r, 0, 2000)))
					b = append(b, "30000.00\t"...)
					return append(appendInt(b, OrdersPerDistrict+1), '\n')
				})
		},
		func() error {
			return l.copyRows(ctx, c, "customer", []string{"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2", "c_city", "c_state", "c_zip",
				"c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount", "c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"}, customersPerWarehouse,
				func(b []byte, i int64) []byte {
					id, d := (i-1)%CustomersPerDistrict+1, (i-1)/CustomersPerDistrict+1
					b = tab(appendInt(tab(appendInt(tab(appendInt(b, id)), d)), w))
					b = append(tab(appendAString(b, r, 8, 16)), "OE\t"...)
					num := id - 1
					if id > 1000 {
						num = l.c.lastNameNum(r)
					}
					b = address(tab(appendLastName(b, num)))
					b = tab(appendNString(b, r, 16, 16))
					b = tab(append(b, l.now...))
					if r.IntN(10) == 0 {
						b = append(b, "BC\t"...)
					} else {
						b = append(b, "GC\t"...)
					}
					b = append(b, "50000.00\t"...)
					b = tab(appendRate(b, between(r, 0, 5000)))
					b = append(b, "-10.00\t10.00\t1\t0\t"...)
					return append(appendAString(b, r, 300, 500), '\n')
				})
		},
		func() error {
			return l.copyRows(ctx, c, "history", []string{"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"}, historyPerWarehouse,
				func(b []byte, i int64) []byte {
					id, d := (i-1)%CustomersPerDistrict+1, (i-1)/CustomersPerDistrict+1
					b = tab(appendInt(tab(appendInt(tab(appendInt(b, id)), d)), w))
					b = tab(appendInt(tab(appendInt(b, d)), w))
					b = tab(append(b, l.now...))
					b = append(b, "10.00\t"...)
					return append(appendAString(b, r, 12, 24), '\n')
				})
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return 0, err
		}
	}
	// ORDER: each district's customers in a random permutation, 5 to 15
	// lines an order; NEW-ORDER: the last 900; ORDER-LINE: the lines.
	olCnt := make([]int8, Districts*OrdersPerDistrict)
	var lines int64
	err := l.copyRows(ctx, c, "orders", []string{"o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"}, Districts*OrdersPerDistrict,
		func() func(b []byte, i int64) []byte {
			var perm []int
			return func(b []byte, i int64) []byte {
				o, d := (i-1)%OrdersPerDistrict+1, (i-1)/OrdersPerDistrict+1
				if o == 1 {
					perm = r.Perm(CustomersPerDistrict)
				}
				b = tab(appendInt(tab(appendInt(tab(appendInt(b, o)), d)), w))
				b = tab(appendInt(b, int64(perm[o-1])+1))
				b = tab(append(b, l.now...))
				if o < firstNewOrder {
					b = tab(appendInt(b, between(r, 1, 10)))
				} else {
					b = append(b, "\\N\t"...)
				}
				n := between(r, minOrderLines, maxOrderLines)
				olCnt[i-1] = int8(n)
				lines += n
				return append(appendInt(b, n), "\t1\n"...)
			}
		}())
	if err != nil {
		return 0, err
	}
	err = l.copyRows(ctx, c, "new_order", []string{"no_o_id", "no_d_id", "no_w_id"}, Districts*NewOrdersPerDistrict, func(b []byte, i int64) []byte {
		o, d := (i-1)%NewOrdersPerDistrict+firstNewOrder, (i-1)/NewOrdersPerDistrict+1
		b = tab(appendInt(tab(appendInt(b, o)), d))
		return append(appendInt(b, w), '\n')
	})
	if err != nil {
		return 0, err
	}
	var order, line int64 = 0, 0
	err = l.copyRows(ctx, c, "order_line", []string{"ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id", "ol_supply_w_id", "ol_delivery_d",
		"ol_quantity", "ol_amount", "ol_dist_info"}, lines, func(b []byte, _ int64) []byte {
		if line == int64(olCnt[order]) {
			order, line = order+1, 0
		}
		line++
		o, d := order%OrdersPerDistrict+1, order/OrdersPerDistrict+1
		b = tab(appendInt(tab(appendInt(tab(appendInt(b, o)), d)), w))
		b = tab(appendInt(b, line))
		b = tab(appendInt(b, between(r, 1, Items)))
		b = tab(appendInt(b, w))
		if o < firstNewOrder {
			b = append(tab(append(b, l.now...)), "5\t0.00\t"...)
		} else {
			b = append(b, "\\N\t5\t"...)
			b = tab(appendMoney(b, between(r, 1, 999999)))
		}
		return append(appendAString(b, r, 24, 24), '\n')
	})
	if err != nil {
		return 0, err
	}
	err = l.copyRows(ctx, c, "stock", []string{"s_i_id", "s_w_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05", "s_dist_06",
		"s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10", "s_ytd", "s_order_cnt", "s_remote_cnt", "s_data"}, StockPerWarehouse, func(b []byte, i int64) []byte {
		b = tab(appendInt(tab(appendInt(b, i)), w))
		b = tab(appendInt(b, between(r, 10, 100)))
		for range Districts {
			b = tab(appendAString(b, r, 24, 24))
		}
		b = append(b, "0\t0\t0\t"...)
		return append(appendData(b, r), '\n')
	})
	return lines, err
}

// checkCardinality counts every table's rows against clause 4.3.3.1's
// cardinalities for warehouses W (the order lines as loaded, when known:
// lines > 0).
func checkCardinality(ctx context.Context, c client.Conn, warehouses, lines int64) error {
	want := []struct {
		table string
		n     int64
	}{
		{"warehouse", warehouses}, {"district", warehouses * Districts}, {"customer", warehouses * customersPerWarehouse},
		{"history", warehouses * historyPerWarehouse}, {"orders", warehouses * Districts * OrdersPerDistrict},
		{"new_order", warehouses * Districts * NewOrdersPerDistrict}, {"item", Items}, {"stock", warehouses * StockPerWarehouse},
	}
	if lines > 0 {
		want = append(want, struct {
			table string
			n     int64
		}{"order_line", lines})
	}
	for _, t := range want {
		n, err := client.Scalar(ctx, c, "SELECT COUNT(*) FROM "+t.table)
		if err != nil {
			return fmt.Errorf("count %s: %w", t.table, err)
		}
		if n != t.n {
			return fmt.Errorf("%s has %d rows, and %d warehouses load %d", t.table, n, warehouses, t.n)
		}
	}
	return nil
}
