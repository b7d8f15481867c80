// Package counters owns the server's own counters over a measured window:
// the MySQL family's global status (InnoDB rows, buffer pool reads and
// requests, data and log bytes written, pages flushed, row lock waits,
// handler calls, …) and PostgreSQL's statistics views (WAL bytes and
// records, blocks hit and read, temp bytes, checkpoints and buffers written,
// autovacuum runs, …), read once when the window opens and once when it
// closes, and the levels a server reports (threads running, backends
// waiting for a lock) sampled once a second between. The deltas are kept
// raw (result.ServerCounters); CounterMetric divides them per op.
//
// Each flavor names its curated set (MySQL, Postgres below; sets), in the
// order tables show it; --counters adds any other counter by name, or all of
// them. It reads over its own connection; it never writes.
package counters

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/result"
)

// Def is one counter of a curated set.
type Def struct {
	Name string // lower case, as the server names it
	Unit string // rows, pages, bytes, statements, calls, ms, …
	// Level: a value that goes up and down (threads running), sampled once
	// a second and averaged, not a counter whose change is kept.
	Level bool
	Help  string
}

// Selection is which counters a run records (--counters).
type Selection struct {
	None  bool     // no counters at all: no connection during the window
	All   bool     // every numeric counter the server has, beside the curated set
	Names []string // counters beyond the curated set, lower case
}

// ParseSelection reads --counters: "default" (the flavor's curated set),
// "all", "none", or counter names added to the curated set, comma-separated.
func ParseSelection(list []string) (Selection, error) {
	var s Selection
	for _, x := range list {
		x = strings.ToLower(strings.TrimSpace(x))
		switch {
		case x == "" || x == "default":
		case x == "none":
			s.None = true
		case x == "all":
			s.All = true
		case validName(x):
			s.Names = append(s.Names, x)
		default:
			return Selection{}, fmt.Errorf("--counters %s: give default, all, none, or counter names as the server names them (e.g. innodb_pages_created, blks_hit)", x)
		}
	}
	if s.None && (s.All || len(s.Names) > 0) {
		return Selection{}, fmt.Errorf("--counters none records no counters: leave out the others, or none")
	}
	return s, nil
}

func validName(x string) bool {
	if x == "" || x[0] < 'a' || x[0] > 'z' {
		return false
	}
	for _, c := range x {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// set is one curated set of counters and how a server's are read.
type set struct {
	defs []Def
	// open makes the reader of one server, over db (PostgreSQL's reads
	// its version first).
	open func(ctx context.Context, db *sql.DB) (flavor, error)
}

// sets are the curated sets, by the name a flavor's descriptor gives them
// (build.Descriptor.Counters). A flavor whose servers count like one of
// these names it; one that counts otherwise adds its set here.
var sets = map[string]set{
	"mysql":    {MySQL, openMySQL},
	"postgres": {Postgres, openPostgres},
}

// Curated returns the curated set named name (a flavor's Counters); nil
// when there is none.
func Curated(name string) []Def { return sets[name].defs }

// flavor reads one family of servers.
type flavor interface {
	source() string
	// counters reads every numeric counter, by lower-case name.
	counters(ctx context.Context, db *sql.DB) (map[string]float64, error)
	// levels reads the curated levels, by name.
	levels(ctx context.Context, db *sql.DB) (map[string]float64, error)
	// ownCost says whether counter name counts what the reader's own
	// statements do (handler calls, statements), so that its calibrated
	// cost is taken out of the window's change.
	ownCost(name string) bool
}

// Reader reads one run's counters over its own connection. A nil Reader
// (Selection.None) does nothing. It is an engine.Window: Open and Close are
// called when the measured window opens and closes.
type Reader struct {
	ctx   context.Context
	db    *sql.DB
	fl    flavor
	defs  []Def
	sel   Selection
	every time.Duration

	mu             sync.Mutex
	opened, closed bool
	first, last    map[string]float64
	t0, t1         time.Time
	levelSum       map[string]float64
	levelN         map[string]int
	levelReads     int                // level readings made in the window
	selfFull       map[string]float64 // what one full read adds to each counter (calibrated at Open)
	selfLevel      map[string]float64 // what one level reading adds
	notes          []string
	stop, done     chan struct{}
}

// queryTimeout bounds each read: a server that does not answer a status
// query in this time has its counters left out, the run goes on.
const queryTimeout = 5 * time.Second

// Open connects to the server at ep (over TCP when tcp) for a run's
// counters, the curated set named name (its flavor's Counters) and what
// sel adds. It connects now, before the window, so that its own
// connection is not counted in it. ctx bounds every read.
func Open(ctx context.Context, name string, ep client.Endpoint, tcp bool, sel Selection) (*Reader, error) {
	if sel.None {
		return nil, nil
	}
	cs, ok := sets[name]
	if !ok {
		return nil, fmt.Errorf("server counters: no counter set named %q", name)
	}
	db, err := client.Open(ep, tcp)
	if err != nil {
		return nil, fmt.Errorf("server counters: connect: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	r := &Reader{ctx: ctx, db: db, sel: sel, every: time.Second, defs: cs.defs,
		levelSum: map[string]float64{}, levelN: map[string]int{}}
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	if r.fl, err = cs.open(qctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("server counters: %w", err)
	}
	r.calibrate(qctx)
	return r, nil
}

// calibrationRounds is how many times calibrate measures the reader's
// own cost. Another connection's statements can land between two of its
// reads: one that closes just before the window (a setup connection, a
// readiness ping) sends COM_QUIT, which MariaDB counts in Questions when
// the server gets to it, after the client has gone on. Such a stray only
// adds, so the least of the rounds' differences is the reader's own cost
// unless every round was hit in the same place.
const calibrationRounds = 3

// calibrate measures what the reader's own statements add to the counters
// that count statements (ownCost): rounds of a full read, a full read, a
// level reading and a full read again, before the window, when the reader
// is (nearly) alone on the server. MariaDB's SHOW GLOBAL STATUS alone
// reads some 560 rows through a temporary table (Handler_read_rnd_next,
// Select_scan, Created_tmp_tables, Questions). Result takes one full read
// and each level reading's cost out of those counters. Where calibration
// fails nothing is taken out, and the result says so.
func (r *Reader) calibrate(ctx context.Context) {
	var rounds []calibration
	for range calibrationRounds {
		a, err1 := r.fl.counters(ctx, r.db)
		b, err2 := r.fl.counters(ctx, r.db)
		_, err3 := r.fl.levels(ctx, r.db)
		c, err4 := r.fl.counters(ctx, r.db)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			r.notes = append(r.notes, "the counters' own reads were not calibrated and count in the window: "+err.Error())
			return
		}
		rounds = append(rounds, calibration{a, b, c})
	}
	r.selfFull, r.selfLevel = ownCosts(rounds, r.fl.ownCost)
}

// calibration is one round's three full reads: before and after a full
// read (a, b), and after a level reading and a full read (c).
type calibration struct{ a, b, c map[string]float64 }

// ownCosts is what one full read and one level reading add to each
// counter that counts the reader's own statements (own), from rounds of
// calibration: the least difference over the rounds (a stray statement of
// another connection only adds to one). A counter that went down in a
// round (a reset) is left out.
func ownCosts(rounds []calibration, own func(string) bool) (full, level map[string]float64) {
	full, level = map[string]float64{}, map[string]float64{}
	both := map[string]float64{} // a level reading and a full read
	bad := map[string]bool{}
	for _, rd := range rounds {
		for name, vb := range rd.b {
			va, okA := rd.a[name]
			vc, okC := rd.c[name]
			if !own(name) || !okA || !okC || bad[name] {
				continue
			}
			f, fl := vb-va, vc-vb
			if f < 0 || fl < 0 {
				bad[name] = true
				delete(full, name)
				delete(both, name)
				continue
			}
			if prev, ok := full[name]; !ok || f < prev {
				full[name] = f
			}
			if prev, ok := both[name]; !ok || fl < prev {
				both[name] = fl
			}
		}
	}
	for name, f := range full {
		level[name] = max(both[name]-f, 0)
	}
	return full, level
}

// Release closes the reader's connection.
func (r *Reader) Release() {
	if r != nil {
		r.db.Close()
	}
}

// read is one read of every counter, stamped at the middle of the query.
func (r *Reader) read() (map[string]float64, time.Time, error) {
	ctx, cancel := context.WithTimeout(r.ctx, queryTimeout)
	defer cancel()
	t := time.Now()
	m, err := r.fl.counters(ctx, r.db)
	return m, t.Add(time.Since(t) / 2), err
}

// Open reads the counters as the window opens and starts sampling the
// levels. Open on a nil Reader, after Close, or twice does nothing.
func (r *Reader) Open() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opened || r.closed {
		return
	}
	r.opened = true
	m, t, err := r.read()
	if err != nil {
		r.notes = append(r.notes, "no server counters: the first read failed: "+err.Error())
		return
	}
	r.first, r.t0 = m, t
	r.sampleLevels()
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go r.loop()
}

func (r *Reader) loop() {
	defer close(r.done)
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			if !r.closed {
				r.sampleLevels()
			}
			r.mu.Unlock()
		}
	}
}

// sampleLevels adds one reading of each level; r.mu is held. A failed
// reading is left out of the means, never counted as zero.
func (r *Reader) sampleLevels() {
	ctx, cancel := context.WithTimeout(r.ctx, queryTimeout)
	defer cancel()
	m, err := r.fl.levels(ctx, r.db)
	r.levelReads++
	if err != nil {
		return
	}
	for k, v := range m {
		r.levelSum[k] += v
		r.levelN[k]++
	}
}

// Close reads the counters as the window closes and stops sampling. Close
// without Open does nothing.
func (r *Reader) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	if !r.opened || r.closed {
		r.closed = true
		r.mu.Unlock()
		return
	}
	r.closed = true
	stop, done := r.stop, r.done
	if r.first != nil {
		r.sampleLevels()
		m, t, err := r.read()
		if err != nil {
			r.notes = append(r.notes, "no server counters: the last read failed: "+err.Error())
		} else {
			r.last, r.t1 = m, t
		}
	}
	r.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// Result is the window's counters: nil for a nil Reader or a window that
// never opened; with notes only when a read failed.
func (r *Reader) Result() *result.ServerCounters {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.opened || !r.closed {
		return nil
	}
	out := &result.ServerCounters{Source: r.fl.source(), Notes: r.notes}
	if r.first == nil || r.last == nil {
		return out
	}
	out.Seconds = r.t1.Sub(r.t0).Seconds()
	seen := map[string]bool{}
	add := func(name, unit string, extra bool) {
		if seen[name] {
			return
		}
		a, okA := r.first[name]
		b, okB := r.last[name]
		if !okA || !okB {
			return
		}
		seen[name] = true
		own := r.selfFull[name] + float64(r.levelReads)*r.selfLevel[name]
		if b < a {
			out.Notes = append(out.Notes, fmt.Sprintf("counter %s went down during the window (%g to %g): reset (FLUSH STATUS, pg_stat_reset) or wrapped; left out", name, a, b))
			return
		}
		out.Values = append(out.Values, result.CounterValue{Name: name, Unit: unit, Value: max(b-a-own, 0), Extra: extra})
	}
	for _, d := range r.defs {
		if d.Level {
			if n := r.levelN[d.Name]; n > 0 {
				seen[d.Name] = true
				out.Values = append(out.Values, result.CounterValue{Name: d.Name, Unit: d.Unit, Value: r.levelSum[d.Name] / float64(n), Level: true})
			}
			continue
		}
		add(d.Name, d.Unit, false)
	}
	for _, n := range r.sel.Names {
		if _, ok := r.last[n]; !ok && !seen[n] {
			out.Notes = append(out.Notes, fmt.Sprintf("counter %s: this server has no such counter in its %s", n, r.fl.source()))
			continue
		}
		add(n, "", true)
	}
	if r.sel.All {
		var names []string
		for n := range r.last {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			add(n, "", true)
		}
	}
	return out
}

// number reads a status value as a number; false for text, times and
// NULLs, which are not counters.
func number(s sql.NullString) (float64, bool) {
	if !s.Valid {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s.String), 64)
	return v, err == nil
}

// Merge makes one window's counters of parts, the windows of one run laid
// end to end (a test's slices): a counter's changes add up, a level's
// means are weighted by their windows' seconds, the seconds add up, and
// each note is kept once. Nil parts are left out; nil when all are.
func Merge(parts []*result.ServerCounters) *result.ServerCounters {
	var out *result.ServerCounters
	idx := map[string]int{}
	levelW := map[string]float64{}
	seen := map[string]bool{}
	for _, p := range parts {
		if p == nil {
			continue
		}
		if out == nil {
			out = &result.ServerCounters{Source: p.Source}
		}
		out.Seconds += p.Seconds
		for _, n := range p.Notes {
			if !seen[n] {
				seen[n] = true
				out.Notes = append(out.Notes, n)
			}
		}
		for _, v := range p.Values {
			i, ok := idx[v.Name]
			if !ok {
				i = len(out.Values)
				idx[v.Name] = i
				nv := v
				nv.Value = 0
				out.Values = append(out.Values, nv)
			}
			if v.Level {
				out.Values[i].Value += v.Value * p.Seconds
				levelW[v.Name] += p.Seconds
			} else {
				out.Values[i].Value += v.Value
			}
		}
	}
	if out == nil {
		return nil
	}
	for i, v := range out.Values {
		if v.Level {
			if w := levelW[v.Name]; w > 0 {
				out.Values[i].Value /= w
			}
		}
	}
	return out
}
