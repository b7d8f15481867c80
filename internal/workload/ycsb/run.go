package ycsb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/engine"
	"github.com/qpslab/qpslab/internal/suite"
)

// Run runs one core workload on the usertable; it is an engine.Workload.
// Each event is one YCSB operation, picked by the workload's proportions
// (CoreWorkload.doTransaction), each its own autocommitted statement (the
// JDBC binding's default), a read-modify-write two. Its workers share the
// insert counter, which starts past the rows the table has when the first
// worker starts (the load's, and those earlier inserts added), so inserts
// never repeat a key, across workloads, slices and thread counts.
type Run struct {
	Table
	Workload Workload
	Seed     uint64 // the run's: every label draws the same keys

	once     sync.Once
	err      error
	ins      *counter
	keyspace int64
}

var (
	_ engine.Workload   = (*Run)(nil)
	_ engine.Classifier = (*Run)(nil)
)

// Classify: deadlocks and lock-wait timeouts are retried (an insert tries
// its key again), a dead connection ends the run, anything else is fatal.
func (r *Run) Classify(err error) engine.ErrorClass { return suite.ClassifySQL(err) }

// start checks the table (once, on the first worker's connection) and
// starts the insert counter after its rows. The scrambled zipfian's key
// space is the loaded keys and the inserts expected, as CoreWorkload sizes
// it (recordcount + 2 × insertproportion × operationcount, with
// operationcount taken as recordcount, as YCSB's workload files set them).
func (r *Run) start(ctx context.Context, conn client.Conn) error {
	r.once.Do(func() {
		n, err := r.check(ctx, conn, r.Workload.Insert > 0)
		if err != nil {
			r.err = fmt.Errorf("ycsb %s: %w", r.Workload.Name, err)
			return
		}
		r.ins = newCounter(n)
		// CoreWorkload's ScrambledZipfianGenerator(insertstart, insertstart
		// + insertcount + expectednewkeys): its bounds inclusive, one more
		// key than the sum.
		r.keyspace = r.Records + int64(2*r.Workload.Insert*float64(r.Records)) + 1
	})
	return r.err
}

// NewWorker dials a connection and prepares the statements the workload
// runs.
func (r *Run) NewWorker(ctx context.Context, id int) (engine.Worker, error) {
	wl := r.Workload
	if r.FieldCount < 1 || r.Records < 1 {
		return nil, fmt.Errorf("ycsb %s: need at least one field and one record", wl.Name)
	}
	conn, err := r.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("ycsb %s worker %d: connect: %w", wl.Name, id, err)
	}
	if err := r.start(ctx, conn); err != nil {
		conn.Close()
		return nil, err
	}
	w := &worker{run: r, conn: conn, rnd: newRand(r.Seed, uint64(id)), pending: -1}
	// The keys have a random stream of their own: a chooser that draws
	// again past the newest insert (workloade's zipfian) draws as often as
	// the other workers' inserts let it, and must not shift the operations'
	// stream, which every label runs alike.
	w.keys = newChooser(wl.Distribution, newRand(r.Seed, uint64(id)|1<<62), r.ins, r.Records, r.keyspace)
	w.cum = [5]float64{wl.Read, wl.Update, wl.Insert, wl.Scan, wl.RMW}
	for i := 1; i < len(w.cum); i++ {
		w.cum[i] += w.cum[i-1]
	}
	prep := func(q string) (client.Stmt, error) {
		s, err := conn.Prepare(ctx, r.Dialect.Rebind(q))
		if err != nil {
			return nil, fmt.Errorf("ycsb %s worker %d: prepare %s: %w", wl.Name, id, q, err)
		}
		return s, nil
	}
	fail := func(err error) (engine.Worker, error) { conn.Close(); return nil, err }
	if wl.Read+wl.RMW > 0 {
		if w.read, err = prep("SELECT * FROM " + TableName + " WHERE YCSB_KEY = ?"); err != nil {
			return fail(err)
		}
	}
	if wl.Update+wl.RMW > 0 {
		for f := range r.FieldCount {
			s, err := prep(fmt.Sprintf("UPDATE %s SET FIELD%d = ? WHERE YCSB_KEY = ?", TableName, f))
			if err != nil {
				return fail(err)
			}
			w.update = append(w.update, s)
		}
	}
	if wl.Scan > 0 {
		if w.scan, err = prep("SELECT * FROM " + TableName + " WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?"); err != nil {
			return fail(err)
		}
	}
	if wl.Insert > 0 {
		cols := []string{"YCSB_KEY"}
		for f := range r.FieldCount {
			cols = append(cols, "FIELD"+strconv.Itoa(f))
		}
		q := "INSERT INTO " + TableName + " (" + strings.Join(cols, ", ") + ") VALUES (?" + strings.Repeat(", ?", r.FieldCount) + ")"
		if w.insert, err = prep(q); err != nil {
			return fail(err)
		}
	}
	return w, nil
}

type worker struct {
	run     *Run
	conn    client.Conn
	rnd     *rand.Rand
	keys    *chooser
	cum     [5]float64 // the proportions of read, update, insert, scan, read-modify-write, summed
	read    client.Stmt
	scan    client.Stmt
	insert  client.Stmt
	update  []client.Stmt // one per field
	args    []client.Arg  // reused: typed, so binding allocates nothing
	key     []byte
	val     []byte
	parts   []engine.Part
	pending int64 // an insert's key number to try again after a deadlock (-1: none)
	o       engine.Outcome
}

func (w *worker) Close() error { return w.conn.Close() }

// Event runs one operation: the insert a deadlock or lock-wait timeout
// interrupted, with the same key, or one picked by the proportions.
func (w *worker) Event(ctx context.Context) (engine.Outcome, error) {
	w.o = engine.Outcome{}
	w.parts = w.parts[:0]
	var err error
	if w.pending >= 0 {
		err = w.doInsert(ctx)
		return w.o, err
	}
	u := w.rnd.Float64() * w.cum[len(w.cum)-1]
	switch {
	case u < w.cum[0]:
		err = w.doRead(ctx)
	case u < w.cum[1]:
		err = w.doUpdate(ctx)
	case u < w.cum[2]:
		w.pending = w.run.ins.take()
		err = w.doInsert(ctx)
	case u < w.cum[3]:
		err = w.doScan(ctx)
	default:
		err = w.doRMW(ctx)
	}
	return w.o, err
}

func (w *worker) fail(op string, err error) error {
	return fmt.Errorf("ycsb %s: %s: %w", w.run.Workload.Name, op, err)
}

// readKey reads the row of key number k (all fields, as readallfields).
func (w *worker) readKey(ctx context.Context, k int64) (int64, error) {
	w.key = AppendKey(w.key[:0], k)
	w.args = append(w.args[:0], client.Bytes(w.key))
	n, err := w.read.QueryArgs(ctx, w.args)
	w.o.Statements++
	w.o.Rows += n
	return n, err
}

// updateKey sets one random field of key number k to a new random value
// (writeallfields=false).
func (w *worker) updateKey(ctx context.Context, k int64) error {
	f := w.rnd.IntN(len(w.update))
	w.val = appendValue(w.val[:0], w.rnd, w.run.FieldLength)
	w.key = AppendKey(w.key[:0], k)
	w.args = append(w.args[:0], client.Bytes(w.val), client.Bytes(w.key))
	n, err := w.update[f].ExecArgs(ctx, w.args)
	w.o.Statements++
	w.o.Rows += n
	return err
}

func (w *worker) doRead(ctx context.Context) error {
	w.o.Kind = OpRead
	if _, err := w.readKey(ctx, w.keys.next()); err != nil {
		return w.fail(OpRead, err)
	}
	return nil
}

func (w *worker) doUpdate(ctx context.Context) error {
	w.o.Kind = OpUpdate
	if err := w.updateKey(ctx, w.keys.next()); err != nil {
		return w.fail(OpUpdate, err)
	}
	return nil
}

// doScan reads up to a uniform 1 … MaxScanLength rows from a key on, in
// key order.
func (w *worker) doScan(ctx context.Context) error {
	w.o.Kind = OpScan
	k := w.keys.next()
	length := 1 + w.rnd.Int64N(max(w.run.Workload.MaxScanLength, 1))
	w.key = AppendKey(w.key[:0], k)
	w.args = append(w.args[:0], client.Bytes(w.key), client.Int(length))
	n, err := w.scan.QueryArgs(ctx, w.args)
	w.o.Statements++
	w.o.Rows += n
	if err != nil {
		return w.fail(OpScan, err)
	}
	return nil
}

// doRMW reads a key's row, then updates one of its fields: each statement
// timed as its own read and update, the whole as a read-modify-write.
func (w *worker) doRMW(ctx context.Context) error {
	w.o.Kind = OpRMW
	k := w.keys.next()
	t0 := time.Now()
	n, err := w.readKey(ctx, k)
	t1 := time.Now()
	w.parts = append(w.parts, engine.Part{Kind: OpRead, Time: t1.Sub(t0), Failed: err != nil})
	w.o.Parts = w.parts
	if err != nil {
		return w.fail(OpRMW, err)
	}
	if n == 0 {
		return nil // as YCSB: no row read, no update (a key whose insert failed)
	}
	err = w.updateKey(ctx, k)
	w.parts = append(w.parts, engine.Part{Kind: OpUpdate, Time: time.Since(t1), Failed: err != nil})
	w.o.Parts = w.parts
	if err != nil {
		return w.fail(OpRMW, err)
	}
	return nil
}

// maxSkips bounds the keys an insert skips because they exist already (an
// insert an earlier run's end cut off may have committed unacknowledged).
const maxSkips = 1000

// doInsert inserts key number w.pending with random values in every
// field. A deadlock or lock-wait timeout keeps the number for the next
// event (the engine's retry); a key that exists is acknowledged and the
// next number taken.
func (w *worker) doInsert(ctx context.Context) error {
	w.o.Kind = OpInsert
	ins := w.run.ins
	for skips := 0; ; skips++ {
		k := w.pending
		w.key = AppendKey(w.key[:0], k)
		w.val = w.val[:0]
		for range w.run.FieldCount {
			w.val = appendValue(w.val, w.rnd, w.run.FieldLength)
		}
		w.args = append(w.args[:0], client.Bytes(w.key))
		for f := range w.run.FieldCount {
			w.args = append(w.args, client.Bytes(w.val[f*w.run.FieldLength:(f+1)*w.run.FieldLength]))
		}
		n, err := w.insert.ExecArgs(ctx, w.args)
		w.o.Statements++
		w.o.Rows += n
		switch {
		case err == nil:
			w.pending = -1
			return ins.ack(k)
		case duplicate(err) && skips < maxSkips:
			if aerr := ins.ack(k); aerr != nil {
				w.pending = -1
				return aerr
			}
			w.pending = ins.take()
			continue
		case client.Retryable(err) && !duplicate(err):
			return w.fail(OpInsert, err) // w.pending stays: the retry inserts the same key
		}
		w.pending = -1
		if aerr := ins.ack(k); aerr != nil {
			err = fmt.Errorf("%w (and %v)", err, aerr)
		}
		if duplicate(err) {
			// Not retried on either protocol (PostgreSQL's 23505 would be).
			return fmt.Errorf("ycsb %s: more than %d keys past the usertable's rows exist already (%v): load it again (leave out --no-load)",
				w.run.Workload.Name, maxSkips, err)
		}
		return w.fail(OpInsert, err)
	}
}

// duplicate reports a duplicate key (MySQL 1062, PostgreSQL 23505).
func duplicate(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1062
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
