package tpcc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/suite"
)

// The five transactions, in the order of their mix (Options.Mix) and their
// operation kinds' names (the engine's KIND/s, KIND.p90 …).
const (
	txNewOrder = iota
	txPayment
	txOrderStatus
	txDelivery
	txStockLevel
	nTx
)

// Kinds are the transactions' operation kinds, as the figures name them.
var Kinds = [nTx]string{"new-order", "payment", "order-status", "delivery", "stock-level"}

// RollbackKind is the operation kind of the New-Orders that rolled back
// on their unused item (clause 2.4.2.3): 1 % of them; its time is the
// ROLLBACK's. DeliverySkippedKind counts the districts a Delivery found no
// new order in (clause 2.7.4.2).
const (
	RollbackKind        = "new-order-rollback"
	DeliverySkippedKind = "delivery-skipped"
)

// Workload runs TPC-C's terminals; it is an engine.Workload.
type Workload struct {
	Dialect    client.Dialect // the server's SQL (suite.Server.Dialect)
	Dial       func(ctx context.Context) (client.Conn, error)
	Warehouses int64
	Mix        [nTx]int // percent of each transaction
	MaxTries   int
	Wait       bool // keying and think times (clause 5.2.5)
	Seed       uint64
	Load       consts // the load's constants C (tpcc_loaded)
}

var (
	_ engine.Workload   = (*Workload)(nil)
	_ engine.Classifier = (*Workload)(nil)
	_ engine.Scheduler  = (*waiting)(nil)
)

// NewWorker makes terminal id: its home warehouse is id % W + 1, its
// district for Stock-Level id / W % 10 + 1 (clause 2.8.1.1: a terminal's
// own district), and its random stream the run's seed and id, so that
// every label runs the same inputs.
func (wl *Workload) NewWorker(ctx context.Context, id int) (engine.Worker, error) {
	conn, err := wl.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("tpcc terminal %d: connect: %w", id, err)
	}
	run := runConsts(wl.Seed, wl.Load)
	// The dialect's session setup: on the MySQL family
	// innodb_snapshot_isolation off, as HammerDB does (MariaDB 11.6.2 and
	// later would otherwise refuse TPC-C's writes after its reads, error
	// 1020); a server without the variable has nothing to turn off.
	for _, q := range wl.Dialect.SessionSetup {
		if _, err := conn.Exec(ctx, q); err != nil && !client.UnknownVariable(err) {
			conn.Close()
			return nil, fmt.Errorf("tpcc terminal %d: %w", id, err)
		}
	}
	t := &terminal{wl: wl, conn: conn, r: newRand(wl.Seed, uint64(id)+1<<32), c: run,
		w: int64(id)%wl.Warehouses + 1, d: int64(id)/wl.Warehouses%Districts + 1, next: -1}
	t.makeReaders()
	if wl.Wait {
		return &waiting{terminal: t}, nil
	}
	return t, nil
}

// Classify: a transaction that failed every try on serialization failures
// or deadlocks is retryable (the run goes on), a dead connection ends the
// run, anything else is fatal.
func (wl *Workload) Classify(err error) engine.ErrorClass {
	switch {
	case client.ConnectionLost(err): // a ROLLBACK after a deadlock may find the connection gone
		return engine.ConnectionLost
	case client.Serialization(err):
		return engine.Retryable
	}
	return engine.Fatal
}

// line is one item of a New-Order.
type line struct{ item, supply, qty int64 }

// input is one transaction's inputs (clause 2.x.1), kept for its retries.
type input struct {
	tx        int
	d, c      int64 // district, customer id
	byName    bool
	last      int64 // C_LAST's number, when byName
	cw, cd    int64 // Payment's customer's warehouse and district
	amount    int64 // Payment's H_AMOUNT in cents
	lines     []line
	rollback  bool
	allLocal  int64
	carrier   int64
	threshold int64
}

type terminal struct {
	wl    *Workload
	conn  client.Conn
	r     *rand.Rand
	c     consts
	w, d  int64
	stmts [nStatements]client.Stmt
	args  []client.Arg
	in    input
	next  int // the transaction Next picked (-1: none)
	o     engine.Outcome
	parts []engine.Part
	buf   []byte // a statement's text argument (a last name, an amount)
	amt   []byte // Payment's amount, as text
	ids   []int64
	data  []byte // S_DIST_xx, C_DATA, H_DATA
	wName []byte
	dName []byte
	// What the readers below read: an integer, a price, a bad credit.
	got   int64
	price float64
	bad   bool
	rd    readers
}

// readers are a terminal's callbacks for QueryEach, made once: a closure
// made at each call would be an allocation per statement (an interface
// method's argument escapes).
type readers struct {
	none, int0, int1, float0, stock, wName, dName, credit, cdata, appendBuf, appendID func(*client.Values)
}

func (t *terminal) makeReaders() {
	t.rd = readers{
		none:   func(*client.Values) {},
		int0:   func(v *client.Values) { t.got, _ = v.Int(0) },
		int1:   func(v *client.Values) { t.got, _ = v.Int(1) },
		float0: func(v *client.Values) { t.price, _ = v.Float(0) },
		stock: func(v *client.Values) {
			t.got, _ = v.Int(0)
			t.data = append(t.data[:0], v.Bytes(2)...)
		},
		wName:     func(v *client.Values) { t.wName = append(t.wName[:0], v.Bytes(5)...) },
		dName:     func(v *client.Values) { t.dName = append(t.dName[:0], v.Bytes(5)...) },
		credit:    func(v *client.Values) { t.bad = string(v.Bytes(10)) == "BC" },
		cdata:     func(v *client.Values) { t.data = append(t.data, v.Bytes(0)...) },
		appendBuf: func(v *client.Values) { t.buf = append(t.buf, v.Bytes(0)...) },
		appendID: func(v *client.Values) {
			id, _ := v.Int(0)
			t.ids = append(t.ids, id)
		},
	}
}

func (t *terminal) Close() error { return t.conn.Close() }

// pick draws the next transaction by the mix's weights.
func (t *terminal) pick() int {
	x := t.r.IntN(100)
	for k, p := range t.wl.Mix {
		if x < p {
			return k
		}
		x -= p
	}
	return txNewOrder
}

// draw makes the inputs of transaction tx (clause 2.4.1, 2.5.1, 2.6.1,
// 2.7.1, 2.8.1).
func (t *terminal) draw(tx int) {
	in := &t.in
	*in = input{tx: tx, lines: in.lines[:0]}
	r, W := t.r, t.wl.Warehouses
	other := func() int64 { // a warehouse other than home
		o := between(r, 1, W-1)
		if o >= t.w {
			o++
		}
		return o
	}
	customer := func() {
		if in.byName = r.IntN(100) < 60; in.byName {
			in.last = t.c.lastNameNum(r)
		} else {
			in.c = t.c.customerID(r)
		}
	}
	switch tx {
	case txNewOrder:
		in.d, in.c = between(r, 1, Districts), t.c.customerID(r)
		n := between(r, minOrderLines, maxOrderLines)
		in.rollback = r.IntN(100) == 0
		in.allLocal = 1
		for i := range n {
			l := line{item: t.c.itemID(r), supply: t.w, qty: between(r, 1, 10)}
			if W > 1 && r.IntN(100) == 0 {
				l.supply, in.allLocal = other(), 0
			}
			if in.rollback && i == n-1 {
				l.item = Items + 1 // unused: the transaction rolls back
			}
			in.lines = append(in.lines, l)
		}
		// The stock rows are locked in one order, the item's then the
		// warehouse's, as go-tpc does: two New-Orders do not deadlock on
		// them. The unused item, the largest id, stays last.
		slices.SortFunc(in.lines, func(a, b line) int { return cmp.Or(cmp.Compare(a.item, b.item), cmp.Compare(a.supply, b.supply)) })
	case txPayment:
		in.d = between(r, 1, Districts)
		in.cw, in.cd = t.w, in.d
		if W > 1 && r.IntN(100) >= 85 {
			in.cw, in.cd = other(), between(r, 1, Districts)
		}
		customer()
		in.amount = between(r, 100, 500000)
	case txOrderStatus:
		in.d = between(r, 1, Districts)
		customer()
	case txDelivery:
		in.carrier = between(r, 1, 10)
	case txStockLevel:
		in.d, in.threshold = t.d, between(r, 10, 20)
	}
}

// Event runs one transaction: the one Next picked (with --wait), else one
// drawn by the mix. After a serialization failure or deadlock it rolls back
// and tries the same inputs again within the event, so that its response
// time spans every try (clause 5.2.5.3: from the request to the answer),
// each failed try an error and a retry (Outcome.Retries); after MaxTries
// tries it fails as suite.FailedKind, and the engine goes on (Drive.Retry).
func (t *terminal) Event(ctx context.Context) (engine.Outcome, error) {
	tx := t.next
	if tx < 0 {
		tx = t.pick()
	}
	t.next = -1
	t.draw(tx)
	t.parts = t.parts[:0]
	t.o = engine.Outcome{Kind: Kinds[tx]}
	for {
		err := t.run(ctx)
		if err == nil {
			t.o.Parts = t.parts
			return t.o, nil
		}
		if !client.ConnectionLost(err) {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			if rerr := t.conn.Rollback(rctx); rerr != nil && client.ConnectionLost(rerr) {
				err = fmt.Errorf("%w (then ROLLBACK: %w)", err, rerr)
			}
			cancel()
		}
		if client.Serialization(err) && !client.ConnectionLost(err) && ctx.Err() == nil {
			if t.o.Retries+1 < t.wl.MaxTries {
				t.o.Retries++
				t.parts = t.parts[:0]
				continue // the same inputs again, within the event's time
			}
			t.parts = append(t.parts, engine.Part{Kind: suite.FailedKind, Failed: true})
		}
		t.o.Parts = t.parts
		return t.o, fmt.Errorf("%s: %w", Kinds[tx], err)
	}
}

// run runs the transaction of t.in once.
func (t *terminal) run(ctx context.Context) error {
	switch t.in.tx {
	case txNewOrder:
		return t.newOrder(ctx)
	case txPayment:
		return t.payment(ctx)
	case txOrderStatus:
		return t.orderStatus(ctx)
	case txDelivery:
		return t.delivery(ctx)
	}
	return t.stockLevel(ctx)
}

// stmt is statement k, prepared on first use.
func (t *terminal) stmt(ctx context.Context, k int) (client.Stmt, error) {
	if s := t.stmts[k]; s != nil {
		return s, nil
	}
	s, err := t.conn.Prepare(ctx, statementSQL(t.wl.Dialect, k))
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", statementSQL(t.wl.Dialect, k), err)
	}
	t.stmts[k] = s
	return s, nil
}

// a starts the arguments of the next statement.
func (t *terminal) a(ints ...int64) {
	t.args = t.args[:0]
	for _, v := range ints {
		t.args = append(t.args, client.Int(v))
	}
}

// exec runs statement k with t.args and returns the rows it changed.
func (t *terminal) exec(ctx context.Context, k int) (int64, error) {
	s, err := t.stmt(ctx, k)
	if err != nil {
		return 0, err
	}
	n, err := s.ExecArgs(ctx, t.args)
	t.o.Statements++
	return n, err
}

// query runs statement k with t.args, each row to each, and returns the
// rows it returned.
func (t *terminal) query(ctx context.Context, k int, each func(v *client.Values)) (int64, error) {
	s, err := t.stmt(ctx, k)
	if err != nil {
		return 0, err
	}
	n, err := s.QueryEach(ctx, t.args, each)
	t.o.Statements++
	t.o.Rows += n
	return n, err
}

// one runs query k, which must return one row, read by each.
func (t *terminal) one(ctx context.Context, k int, what string, each func(v *client.Values)) error {
	n, err := t.query(ctx, k, each)
	if err == nil && n != 1 {
		err = fmt.Errorf("%s: %d rows, want 1", what, n)
	}
	return err
}

// customerByName finds the customer of C_LAST number last in (w, d) as
// clause 2.5.2.2 says: the customers of that name sorted by C_FIRST, the
// one at position n/2 rounded up.
func (t *terminal) customerByName(ctx context.Context, w, d, last int64) (int64, error) {
	t.buf = appendLastName(t.buf[:0], last)
	t.a(w, d)
	t.args = append(t.args, client.Bytes(t.buf))
	t.ids = t.ids[:0]
	n, err := t.query(ctx, byName, t.rd.appendID)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("no customer named %s in warehouse %d district %d", t.buf, w, d)
	}
	return t.ids[(n+1)/2-1], nil
}

// newOrder is the New-Order transaction (clause 2.4.2).
func (t *terminal) newOrder(ctx context.Context) error {
	in := &t.in
	if err := t.conn.Begin(ctx); err != nil {
		return err
	}
	// W_TAX, D_TAX and C_DISCOUNT are read as the transaction must; the
	// order's total they make is the terminal's display, which is not drawn.
	var oid int64
	var err error
	t.a(t.w)
	if err = t.one(ctx, noWarehouse, "warehouse", t.rd.none); err != nil {
		return err
	}
	t.a(t.w, in.d)
	if err = t.one(ctx, noDistrict, "district", t.rd.int1); err != nil {
		return err
	}
	oid = t.got
	t.a(oid+1, t.w, in.d)
	if _, err = t.exec(ctx, noDistrictNext); err != nil {
		return err
	}
	t.a(t.w, in.d, in.c)
	if err = t.one(ctx, noCustomer, "customer", t.rd.none); err != nil {
		return err
	}
	t.a(oid, in.d, t.w, in.c, int64(len(in.lines)), in.allLocal)
	if _, err = t.exec(ctx, noOrder); err != nil {
		return err
	}
	t.a(oid, in.d, t.w)
	if _, err = t.exec(ctx, noNewOrder); err != nil {
		return err
	}
	for i, l := range in.lines {
		t.a(l.item)
		n, err := t.query(ctx, noItem, t.rd.float0)
		if err != nil {
			return err
		}
		if n == 0 { // the unused item: roll back (clause 2.4.2.3)
			start := time.Now()
			if err := t.conn.Rollback(ctx); err != nil {
				return err
			}
			t.parts = append(t.parts, engine.Part{Kind: RollbackKind, Time: time.Since(start)})
			return nil
		}
		t.a(l.item, l.supply)
		if err := t.one(ctx, noStock+int(in.d)-1, "stock", t.rd.stock); err != nil {
			return err
		}
		qty := t.got
		if qty >= l.qty+10 {
			qty -= l.qty
		} else {
			qty += 91 - l.qty
		}
		remote := int64(0)
		if l.supply != t.w {
			remote = 1
		}
		t.a(qty, l.qty, remote, l.item, l.supply)
		if _, err := t.exec(ctx, noStockUpdate); err != nil {
			return err
		}
		amount := int64(float64(l.qty)*t.price*100 + 0.5) // OL_AMOUNT in cents
		t.buf = appendMoney(t.buf[:0], amount)
		t.a(oid, in.d, t.w, int64(i+1), l.item, l.supply, l.qty)
		t.args = append(t.args, client.Bytes(t.buf), client.Bytes(t.data))
		if _, err := t.exec(ctx, noLine); err != nil {
			return err
		}
	}
	return t.conn.Commit(ctx)
}

// payment is the Payment transaction (clause 2.5.2).
func (t *terminal) payment(ctx context.Context) error {
	in := &t.in
	if err := t.conn.Begin(ctx); err != nil {
		return err
	}
	t.amt = appendMoney(t.amt[:0], in.amount)
	t.args = append(t.args[:0], client.Bytes(t.amt), client.Int(t.w))
	if _, err := t.exec(ctx, pWarehouseYTD); err != nil {
		return err
	}
	t.a(t.w)
	if err := t.one(ctx, pWarehouse, "warehouse", t.rd.wName); err != nil {
		return err
	}
	t.args = append(t.args[:0], client.Bytes(t.amt), client.Int(t.w), client.Int(in.d))
	if _, err := t.exec(ctx, pDistrictYTD); err != nil {
		return err
	}
	t.a(t.w, in.d)
	if err := t.one(ctx, pDistrict, "district", t.rd.dName); err != nil {
		return err
	}
	c := in.c
	if in.byName {
		var err error
		if c, err = t.customerByName(ctx, in.cw, in.cd, in.last); err != nil {
			return err
		}
	}
	t.a(in.cw, in.cd, c)
	if err := t.one(ctx, pCustomer, "customer", t.rd.credit); err != nil {
		return err
	}
	if t.bad { // clause 2.5.2.2: C_DATA with this payment's facts in front, cut at 500
		t.data = t.data[:0]
		for _, x := range [...]int64{c, in.cd, in.cw, in.d, t.w} {
			t.data = append(appendInt(t.data, x), ' ')
		}
		t.data = append(append(t.data, t.amt...), " | "...)
		if err := t.one(ctx, pCustomerData, "customer", t.rd.cdata); err != nil {
			return err
		}
		t.data = t.data[:min(len(t.data), 500)]
		t.args = append(t.args[:0], client.Bytes(t.amt), client.Bytes(t.amt), client.Bytes(t.data), client.Int(in.cw), client.Int(in.cd), client.Int(c))
		if _, err := t.exec(ctx, pCustomerBC); err != nil {
			return err
		}
	} else {
		t.args = append(t.args[:0], client.Bytes(t.amt), client.Bytes(t.amt), client.Int(in.cw), client.Int(in.cd), client.Int(c))
		if _, err := t.exec(ctx, pCustomerGC); err != nil {
			return err
		}
	}
	t.data = append(append(append(t.data[:0], t.wName...), "    "...), t.dName...) // H_DATA
	t.a(in.cd, in.cw, c, in.d, t.w)
	t.args = append(t.args, client.Bytes(t.amt), client.Bytes(t.data[:min(len(t.data), 24)]))
	if _, err := t.exec(ctx, pHistory); err != nil {
		return err
	}
	return t.conn.Commit(ctx)
}

// orderStatus is the Order-Status transaction (clause 2.6.2): read only.
func (t *terminal) orderStatus(ctx context.Context) error {
	in := &t.in
	if err := t.conn.Begin(ctx); err != nil {
		return err
	}
	c := in.c
	if in.byName {
		var err error
		if c, err = t.customerByName(ctx, t.w, in.d, in.last); err != nil {
			return err
		}
	}
	t.a(t.w, in.d, c)
	if err := t.one(ctx, osCustomer, "customer", t.rd.none); err != nil {
		return err
	}
	n, err := t.query(ctx, osOrder, t.rd.int0)
	if err != nil {
		return err
	}
	if n == 1 {
		t.a(t.w, in.d, t.got)
		if _, err := t.query(ctx, osLines, t.rd.none); err != nil {
			return err
		}
	}
	return t.conn.Commit(ctx)
}

// delivery is the Delivery transaction (clause 2.7.4), its ten districts in
// one database transaction: each district's oldest new order delivered.
func (t *terminal) delivery(ctx context.Context) error {
	in := &t.in
	if err := t.conn.Begin(ctx); err != nil {
		return err
	}
	for d := int64(1); d <= Districts; d++ {
		t.a(t.w, d)
		n, err := t.query(ctx, dNewOrder, t.rd.int0)
		if err != nil {
			return err
		}
		if n == 0 {
			// None to deliver in this district: clause 2.7.4.2 has it
			// counted (and below 1 %).
			t.parts = append(t.parts, engine.Part{Kind: DeliverySkippedKind})
			continue
		}
		oid := t.got
		t.a(t.w, d, oid)
		if _, err = t.exec(ctx, dDelete); err != nil {
			return err
		}
		// The order is written before it is read: under REPEATABLE READ
		// (InnoDB) a plain read sees the transaction's first snapshot, which
		// may be older than the order the locking read found; its own
		// change it always sees (as go-tpc does).
		t.a(in.carrier, t.w, d, oid)
		if _, err := t.exec(ctx, dCarrier); err != nil {
			return err
		}
		t.a(t.w, d, oid)
		if err := t.one(ctx, dOrder, "order", t.rd.int0); err != nil {
			return err
		}
		cid := t.got
		t.a(t.w, d, oid)
		if _, err := t.exec(ctx, dLines); err != nil {
			return err
		}
		t.buf = t.buf[:0]
		if err := t.one(ctx, dSum, "order lines", t.rd.appendBuf); err != nil {
			return err
		}
		if len(t.buf) == 0 {
			t.buf = append(t.buf, '0')
		}
		t.args = append(t.args[:0], client.Bytes(t.buf), client.Int(t.w), client.Int(d), client.Int(cid))
		if _, err := t.exec(ctx, dCustomer); err != nil {
			return err
		}
	}
	return t.conn.Commit(ctx)
}

// stockLevel is the Stock-Level transaction (clause 2.8.2): the items of
// the district's last 20 orders whose stock is below the threshold.
func (t *terminal) stockLevel(ctx context.Context) error {
	in := &t.in
	if err := t.conn.Begin(ctx); err != nil {
		return err
	}
	t.a(t.w, in.d)
	if err := t.one(ctx, slDistrict, "district", t.rd.int0); err != nil {
		return err
	}
	next := t.got
	t.a(t.w, in.d, next, next-20, in.threshold)
	if err := t.one(ctx, slCount, "stock count", t.rd.none); err != nil {
		return err
	}
	return t.conn.Commit(ctx)
}

// waiting is a terminal with the specification's keying and think times
// (clause 5.2.5.7, table 5.2.5.7): an engine.Scheduler whose Next waits
// the think time of the transaction before and the keying time of the next,
// so that response times count from the transaction's start.
type waiting struct {
	*terminal
	think time.Duration
	sleep client.Sleeper
}

// Keying times and mean think times per transaction (seconds).
var keying = [nTx]float64{18, 3, 2, 2, 2}
var thinkMean = [nTx]float64{12, 12, 10, 5, 5}

// thinkTime is a think time after transaction tx: negative exponential
// with the transaction's mean, cut at 10 times it (clause 5.2.5.4).
func thinkTime(r *rand.Rand, tx int) time.Duration {
	return seconds(min(-math.Log(1-r.Float64())*thinkMean[tx], 10*thinkMean[tx]))
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func (w *waiting) Next(ctx context.Context) (time.Time, bool) {
	tx := w.pick()
	w.next = tx
	d := w.think + seconds(keying[tx])
	w.think = thinkTime(w.r, tx)
	if w.sleep.Sleep(ctx, d) != nil {
		return time.Time{}, false
	}
	return time.Now(), true
}
