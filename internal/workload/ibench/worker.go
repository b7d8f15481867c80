package ibench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/suite"
)

// Pacing is how a paced inserter spreads its statements over a second.
type Pacing string

const (
	// Smooth: statement i of the step is due at i / (statements per
	// second); a statement the server delays is late, and its response
	// time counts from when it was due. Nothing is made up or dropped: the
	// step lasts as long as the server needs for its rows.
	Smooth Pacing = "smooth"
	// Reference: iibench.py's rate limit: ceil(rate / rows per commit)
	// statements at once at the start of each second, then a sleep for the
	// rest of the second if less than 0.95 s passed; a second that overran
	// is never made up.
	Reference Pacing = "reference"
)

// Roles of a client's workers (engine operation kinds).
const (
	KindInsert = "insert"
	KindDelete = "delete"
	KindQuery  = "query"
)

// phase is one step's work for each client: rows to insert in statements
// of perCommit rows, at rate rows/s (0: as fast as the server goes), with
// a delete per insert, and query threads of a kind beside them.
type phase struct {
	rows      int64 // per client
	perCommit int
	rate      float64 // rows/s per client
	deletes   bool
	queries   int    // query threads per client
	point     bool   // point queries (qp) rather than range (qr)
	perQuery  int    // LIMIT of a range query, ids in a point query
	pacing    Pacing // for a paced phase
}

// statements is how many insert statements a client runs.
func (ph phase) statements() int64 {
	return (ph.rows + int64(ph.perCommit) - 1) / int64(ph.perCommit)
}

// batch is the rows of statement i (the last may be short).
func (ph phase) batch(i int64) int {
	if left := ph.rows - i*int64(ph.perCommit); left < int64(ph.perCommit) {
		return int(left)
	}
	return ph.perCommit
}

// workers is how many engine workers a client has.
func (ph phase) workers() int {
	n := 1 + ph.queries
	if ph.deletes {
		n++
	}
	return n
}

// workload is one step's engine.Workload: for each client an inserter, a
// deleter (with --delete-per-insert) and its query threads, each on its own
// connection. Worker id maps to (client, role).
type workload struct {
	d      client.Dialect
	dial   func(ctx context.Context) (client.Conn, error)
	tables []string // the table of each client (one shared table: all the same)
	ph     phase
	seed   uint64
	// scalar reads one integer (client.Scalar; a test's fake server
	// answers its own).
	scalar func(ctx context.Context, c client.Conn, q string) (int64, error)

	mu      sync.Mutex
	clients map[int]*clientState
}

// clientState is what a client's workers share: how many rows its inserter
// has written and its deleter removed (the deleter stays behind the
// inserter, as the reference's queue of 8 keeps it), and the lowest live id.
type clientState struct {
	inserted atomic.Int64 // statements done
	deleted  atomic.Int64
	minID    atomic.Int64
	start    time.Time // the schedule's origin, shared by inserter and deleter
	once     sync.Once
}

func (wl *workload) client(c int) *clientState {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	if wl.clients == nil {
		wl.clients = map[int]*clientState{}
	}
	cs := wl.clients[c]
	if cs == nil {
		cs = &clientState{}
		wl.clients[c] = cs
	}
	return cs
}

var _ engine.Workload = (*workload)(nil)

// NewWorker makes worker id: client id/per, role id%per (0 inserter, then
// the deleter if any, then query threads).
func (wl *workload) NewWorker(ctx context.Context, id int) (engine.Worker, error) {
	per := wl.ph.workers()
	c, role := id/per, id%per
	if c >= len(wl.tables) {
		return nil, fmt.Errorf("ibench: worker %d has no table (%d clients)", id, len(wl.tables))
	}
	conn, err := wl.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("ibench client %d: connect: %w", c+1, err)
	}
	cs := wl.client(c)
	t := wl.tables[c]
	base := worker{wl: wl, conn: conn, table: t, cs: cs, r: rand.New(rand.NewPCG(wl.seed, uint64(id)*0x9e3779b97f4a7c15+1))}
	cs.once.Do(func() {
		// The lowest live id: deletes start there, point queries draw from it.
		var min int64
		if err = wl.queryInt(ctx, conn, "SELECT COALESCE(min(transactionid), 1) FROM "+t, &min); err == nil {
			cs.minID.Store(min)
		}
	})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("ibench client %d: %w", c+1, err)
	}
	switch {
	case role == 0:
		return &inserter{worker: base, gen: rowGen{r: base.r}}, nil
	case role == 1 && wl.ph.deletes:
		return &deleter{worker: base}, nil
	}
	q := &querier{worker: base}
	if err := q.prepare(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("ibench client %d: %w", c+1, err)
	}
	return q, nil
}

// queryInt reads one integer.
func (wl *workload) queryInt(ctx context.Context, conn client.Conn, q string, out *int64) error {
	scalar := wl.scalar
	if scalar == nil {
		scalar = client.Scalar
	}
	v, err := scalar(ctx, conn, q)
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	*out = v
	return nil
}

type worker struct {
	wl    *workload
	conn  client.Conn
	table string
	cs    *clientState
	r     *rand.Rand
	i     int64 // statements scheduled so far
}

func (w *worker) Close() error { return w.conn.Close() }

// origin is the time the client's schedule starts: the first call's.
func (w *worker) origin() time.Time {
	w.wl.mu.Lock()
	defer w.wl.mu.Unlock()
	if w.cs.start.IsZero() {
		w.cs.start = time.Now()
	}
	return w.cs.start
}

// inserter writes the client's rows, paced or not.
type inserter struct {
	worker
	gen       rowGen
	lastRound time.Time
}

var _ engine.Scheduler = (*inserter)(nil)

func (w *inserter) Next(ctx context.Context) (time.Time, bool) { return w.next(ctx) }

func (w *inserter) next(ctx context.Context) (time.Time, bool) {
	ph := w.wl.ph
	if ctx.Err() != nil {
		return time.Time{}, false
	}
	if w.i >= ph.statements() {
		// A paced step lasts its schedule, rows / rate (with reference
		// pacing, to the end of its last round's second): a server that
		// keeps up averages the target rate, not a little more.
		if ph.rate > 0 && w.i > 0 {
			end := w.origin().Add(time.Duration(float64(ph.rows) / ph.rate * float64(time.Second)))
			if ph.pacing == Reference {
				end = w.lastRound.Add(time.Second)
			}
			sleepUntil(ctx, end)
		}
		return time.Time{}, false
	}
	i := w.i
	w.i++
	if ph.rate <= 0 {
		return time.Now(), true
	}
	var at time.Time
	if ph.pacing == Reference {
		perRound := int64((ph.rate + float64(ph.perCommit) - 1) / float64(ph.perCommit))
		if i%perRound != 0 {
			return time.Now(), true // the rest of the round: at once
		}
		switch {
		case i == 0:
			at = w.origin()
		case time.Since(w.lastRound) < 950*time.Millisecond:
			at = w.lastRound.Add(time.Second)
		default:
			at = time.Now() // the round overran: go on, nothing made up
		}
		w.lastRound = at
	} else {
		perSec := ph.rate / float64(ph.perCommit)
		at = w.origin().Add(time.Duration(float64(i) / perSec * float64(time.Second)))
	}
	if !sleepUntil(ctx, at) {
		return time.Time{}, false
	}
	return at, true
}

// sleepUntil waits until at; false if ctx ended first.
func sleepUntil(ctx context.Context, at time.Time) bool {
	d := time.Until(at)
	if d <= 0 {
		return true
	}
	if client.SleepOnLoop(ctx, at) { // the loop transport: its thread's other workers go on meanwhile
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *inserter) Event(ctx context.Context) (engine.Outcome, error) {
	n := w.wl.ph.batch(w.i - 1)
	if _, err := w.conn.Exec(ctx, bufText(w.gen.build(w.table, n, time.Now()))); err != nil {
		return engine.Outcome{Kind: KindInsert}, err
	}
	w.cs.inserted.Add(1)
	return engine.Outcome{Statements: 1, Rows: int64(n), Kind: KindInsert}, nil
}

// deleter removes the client's oldest rows at the inserter's pace: its
// statement i waits until the inserter has done statement i (the reference
// keeps them within 8 statements of each other with a queue).
type deleter struct{ worker }

var _ engine.Scheduler = (*deleter)(nil)

func (w *deleter) Next(ctx context.Context) (time.Time, bool) {
	ph := w.wl.ph
	if w.i >= ph.statements() || ctx.Err() != nil {
		return time.Time{}, false
	}
	w.i++
	if w.cs.inserted.Load() >= w.i {
		return time.Now(), true
	}
	if client.OnLoop(ctx) { // the loop transport: poll on its ring
		for w.cs.inserted.Load() < w.i {
			if ctx.Err() != nil {
				return time.Time{}, false
			}
			client.SleepOnLoop(ctx, time.Now().Add(time.Millisecond))
		}
		return time.Now(), true
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for w.cs.inserted.Load() < w.i {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return time.Time{}, false
		}
	}
	return time.Now(), true
}

func (w *deleter) Event(ctx context.Context) (engine.Outcome, error) {
	n := w.wl.ph.batch(w.i - 1)
	min := w.cs.minID.Load()
	affected, err := w.conn.Exec(ctx, deleteOldest(w.wl.d, w.table, min, n))
	if err != nil {
		return engine.Outcome{Kind: KindDelete}, err
	}
	// The reference advances min locally by the rows deleted and reads
	// min(transactionid) again every 1000 statements.
	if w.i%resyncMin == 0 {
		var m int64
		if err := w.wl.queryInt(ctx, w.conn, "SELECT COALESCE(min(transactionid), 1) FROM "+w.table, &m); err != nil {
			return engine.Outcome{Kind: KindDelete}, err
		}
		w.cs.minID.Store(m)
	} else {
		w.cs.minID.Add(affected)
	}
	w.cs.deleted.Add(1)
	return engine.Outcome{Statements: 1, Kind: KindDelete}, nil
}

// resyncMin is how many delete statements go by between reads of the
// lowest live id (the reference's resync_get_min).
const resyncMin = 1000

// maxEvery is how many point queries go by between reads of the highest id
// (the reference refreshes max_trxid every 100 queries).
const maxEvery = 100

// querier runs range or point queries closed loop until the step's inserts
// are done.
type querier struct {
	worker
	stmt     client.Stmt    // the point query, prepared where the dialect Prepares (or text with --no-prepare)
	forms    [3]client.Stmt // the range forms, prepared where the dialect Prepares
	text     [3][2]string   // the range forms elsewhere: the text before and after the start
	maxQuery string         // the read of the highest id
	ids      []int64        // reused ids of a point query
	args     []client.Arg   // reused arguments
	buf      []byte         // reused statement text
	maxID    int64
	n        int64
}

func (q *querier) prepare(ctx context.Context) error {
	ph, d := q.wl.ph, q.wl.d
	if d.Prepares {
		if ph.point {
			s, err := q.conn.Prepare(ctx, pointQuery(d, q.table, ph.perQuery))
			if err != nil {
				return fmt.Errorf("prepare the point query: %w", err)
			}
			q.stmt = s
		} else {
			for i := range q.forms {
				s, err := q.conn.Prepare(ctx, rangeQuery(d, q.table, i, ph.perQuery))
				if err != nil {
					return fmt.Errorf("prepare range query %d: %w", i+1, err)
				}
				q.forms[i] = s
			}
		}
	}
	for i := range q.text {
		q.text[i][0], q.text[i][1], _ = strings.Cut(rangeQuery(d, q.table, i, ph.perQuery), d.Placeholder(1))
	}
	q.maxQuery = "SELECT COALESCE(max(transactionid), 1) FROM " + q.table
	if ph.point {
		q.ids = make([]int64, ph.perQuery)
		q.args = make([]client.Arg, ph.perQuery)
	} else {
		q.args = make([]client.Arg, 1)
	}
	return nil
}

func (q *querier) Event(ctx context.Context) (engine.Outcome, error) {
	ph, prepared := q.wl.ph, q.wl.d.Prepares
	var err error
	if ph.point {
		if q.n%maxEvery == 0 {
			if err := q.wl.queryInt(ctx, q.conn, q.maxQuery, &q.maxID); err != nil {
				return engine.Outcome{Kind: KindQuery}, err
			}
		}
		lo := q.cs.minID.Load()
		span := max(q.maxID-lo, 1)
		for i := range q.ids {
			q.ids[i] = lo + q.r.Int64N(span)
		}
		if prepared {
			for i, id := range q.ids {
				q.args[i] = client.Int(id)
			}
			_, err = q.stmt.QueryArgs(ctx, q.args)
		} else {
			b := appendPointText(q.buf[:0], q.table, q.ids)
			q.buf = b
			_, err = q.conn.Query(ctx, bufText(b))
		}
	} else {
		which := q.r.IntN(3)
		x := rangeStart(q.r, which)
		if prepared {
			q.args[0] = client.Int(int64(x))
			_, err = q.forms[which].QueryArgs(ctx, q.args)
		} else {
			b := append(q.buf[:0], q.text[which][0]...)
			b = strconv.AppendInt(b, int64(x), 10)
			b = append(b, q.text[which][1]...)
			q.buf = b
			_, err = q.conn.Query(ctx, bufText(b))
		}
	}
	q.n++
	if err != nil {
		return engine.Outcome{Kind: KindQuery}, err
	}
	return engine.Outcome{Statements: 1, Kind: KindQuery}, nil
}

// appendPointText appends to b the point query on ids with the ids
// written in its text (where the dialect does not prepare: the MySQL
// family's).
func appendPointText(b []byte, table string, ids []int64) []byte {
	b = append(b, "SELECT transactionid, productid, data FROM "...)
	b = append(b, table...)
	b = append(b, " WHERE transactionid IN ("...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return append(b, ')')
}

// Classify: a lost connection ends the step; any other error too (the
// reference's client retries nothing but deadlocks, which inserts into
// their own table do not meet).
func (wl *workload) Classify(err error) engine.ErrorClass { return suite.ClassifySQL(err) }
