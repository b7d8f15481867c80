package settle

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/result"
)

// The figures of the quiet wait, which each run of a read test that
// followed writes in its repeat records (Quiet).
const (
	FigureQuietWait  = "quiet_wait_s"
	FigureHistoryLen = "history_len"
)

func init() {
	result.Register(
		result.Metric{Name: FigureQuietWait, Max: 1e6, Unit: "s", Per: "run", Class: result.ClassFigure, Verb: "%.2f",
			Help: "how long the servers were waited for before the test, until purge, flushing, MyRocks' compactions and autovacuum were quiet after the writes before it"},
		result.Metric{Name: FigureHistoryLen, Max: 1e12, Unit: "undo logs", Per: "run", Class: result.ClassFigure, Verb: "%.0f",
			Help: "InnoDB's history list length when the test began: the undo the writes before it left for purge"},
	)
}

// QuietOptions say how to wait for a server to be quiet.
type QuietOptions struct {
	// Dialect is the server's: what it has to be quiet from (StorageEngines:
	// InnoDB's purge and flushing, MyRocks' compactions; Autovacuum).
	Dialect client.Dialect
	// Dial opens one connection to the server.
	Dial func(ctx context.Context) (client.Conn, error)
	// Max bounds the wait: a server still busy then is reported so.
	Max time.Duration
	// Every is how often the server is asked (0: 25 ms).
	Every time.Duration
}

// QuietHistory is the InnoDB history list length at or below which purge
// is quiet: the undo that the writes before a read test left is purged.
const QuietHistory = 100

// QuietReport is what a quiet wait saw.
type QuietReport struct {
	Waited time.Duration
	Quiet  bool // the server was quiet before Max
	// What the flavor gives (-1: it does not): InnoDB's history list
	// length and dirty pages, the running autovacuum workers, MyRocks'
	// running compactions, when the wait began and when it ended.
	HistoryStart, HistoryEnd int64
	// Unread is what could not be read for want of a privilege (a
	// target's user without PROCESS: InnoDB's history list length); the
	// wait went on with the rest.
	Unread                   string
	DirtyStart, DirtyEnd     int64
	VacuumStart, VacuumEnd   int64
	CompactStart, CompactEnd int64
}

// Says is the report in one line.
func (q QuietReport) Says() string {
	var parts []string
	if q.HistoryStart >= 0 {
		parts = append(parts, fmt.Sprintf("history list %d → %d", q.HistoryStart, q.HistoryEnd))
	}
	if q.DirtyStart >= 0 {
		parts = append(parts, fmt.Sprintf("dirty pages %d → %d", q.DirtyStart, q.DirtyEnd))
	}
	if q.VacuumStart >= 0 {
		parts = append(parts, fmt.Sprintf("autovacuum workers %d → %d", q.VacuumStart, q.VacuumEnd))
	}
	if q.CompactStart >= 0 {
		parts = append(parts, fmt.Sprintf("MyRocks compactions %d → %d", q.CompactStart, q.CompactEnd))
	}
	if q.Unread != "" {
		parts = append(parts, q.Unread+" not read")
	}
	state := "quiet"
	if !q.Quiet {
		state = "still busy at the bound"
	}
	return fmt.Sprintf("%s after %.2f s (%s)", state, q.Waited.Seconds(), strings.Join(parts, ", "))
}

// Figures are the report as a run's figures.
func (q QuietReport) Figures() map[string]float64 {
	f := map[string]float64{FigureQuietWait: q.Waited.Seconds()}
	if q.HistoryEnd >= 0 {
		f[FigureHistoryLen] = float64(q.HistoryEnd)
	}
	return f
}

// Quiet waits, at most o.Max, until the server is quiet after writes: on
// the MySQL family until purge has caught up (InnoDB's history list
// length at most QuietHistory) and the dirty pages no longer fall faster
// than 1 % of the buffer pool's data pages per 100 ms (no backlog being
// flushed), and where the server has MyRocks until no RocksDB compaction
// runs; on PostgreSQL until no autovacuum worker runs. It sets nothing on
// the server. A server that gives none of these is quiet at once.
func Quiet(ctx context.Context, o QuietOptions) (QuietReport, error) {
	q := QuietReport{HistoryStart: -1, HistoryEnd: -1, DirtyStart: -1, DirtyEnd: -1, VacuumStart: -1, VacuumEnd: -1, CompactStart: -1, CompactEnd: -1}
	if o.Dial == nil {
		return q, fmt.Errorf("quiet: no dial function")
	}
	every := o.Every
	if every <= 0 {
		every = 25 * time.Millisecond
	}
	conn, err := o.Dial(ctx)
	if err != nil {
		return q, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	d := o.Dialect
	rocks := false
	if d.StorageEngines {
		n, err := conn.Query(ctx, "SELECT 1 FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB' AND SUPPORT IN ('YES', 'DEFAULT')")
		if err != nil {
			return q, fmt.Errorf("look for MyRocks: %w", err)
		}
		rocks = n > 0
	}
	t0 := time.Now()
	var prevDirty int64 = -1
	var prevAt time.Time
	for first := true; ; first = false {
		s := quietState{history: -1, dirty: -1, pages: -1, vacuums: -1}
		if d.StorageEngines {
			if s, err = innodbState(ctx, conn); err != nil {
				return q, err
			}
		}
		if d.Autovacuum != "" {
			if s.vacuums, err = client.Scalar(ctx, conn, d.Autovacuum); err != nil {
				return q, fmt.Errorf("count the autovacuum workers: %w", err)
			}
		}
		if s.unread != "" {
			q.Unread = s.unread
		}
		s.compactions = -1
		if rocks {
			if s.compactions, err = activeCompactions(ctx, conn); err != nil {
				return q, err
			}
		}
		if first {
			q.HistoryStart, q.DirtyStart, q.VacuumStart, q.CompactStart = s.history, s.dirty, s.vacuums, s.compactions
		}
		q.HistoryEnd, q.DirtyEnd, q.VacuumEnd, q.CompactEnd = s.history, s.dirty, s.vacuums, s.compactions
		// Flushing a backlog: the dirty pages fall faster than 1 % of the
		// data pages per 100 ms (the rate, over the time between looks).
		now := time.Now()
		rate := float64(max(s.pages/100, 1)) * now.Sub(prevAt).Seconds() / 0.1
		flushing := s.dirty >= 0 && prevDirty >= 0 && float64(prevDirty-s.dirty) > rate
		if s.dirty >= 0 && prevDirty < 0 && s.dirty > max(s.pages/100, 1) {
			flushing = true // one look more to see whether they fall
		}
		prevDirty, prevAt = s.dirty, now
		q.Waited = time.Since(t0)
		if s.history <= QuietHistory && s.vacuums <= 0 && s.compactions <= 0 && !flushing {
			q.Quiet = true
			return q, nil
		}
		if q.Waited >= o.Max {
			return q, nil
		}
		if err := sleep(ctx, min(every, o.Max-q.Waited)); err != nil {
			return q, err
		}
	}
}

// quietState is one look at a server: -1 for what it does not give.
type quietState struct {
	history, dirty, pages, vacuums, compactions int64
	unread                                      string // QuietReport.Unread
}

var historyRE = regexp.MustCompile(`History list length (\d+)`)

// innodbState reads InnoDB's history list length (SHOW ENGINE INNODB
// STATUS, which every MySQL and MariaDB version prints) and its dirty and
// data pages (global status).
func innodbState(ctx context.Context, conn client.Conn) (quietState, error) {
	s := quietState{history: -1, dirty: -1, pages: -1, vacuums: -1}
	rows, err := client.Text(ctx, conn, "SHOW ENGINE INNODB STATUS")
	if err != nil {
		if client.UnknownVariable(err) || strings.Contains(err.Error(), "Unknown storage engine") {
			return s, nil // no InnoDB: nothing to wait for
		}
		if client.Denied(err) {
			s.unread = "InnoDB's history list length (the user lacks PROCESS)"
			err = nil
		}
	}
	if err != nil {
		return s, fmt.Errorf("read InnoDB's status: %w", err)
	}
	for _, r := range rows {
		for _, c := range r {
			if m := historyRE.FindStringSubmatch(c); m != nil {
				s.history, _ = strconv.ParseInt(m[1], 10, 64)
			}
		}
	}
	st, err := client.Text(ctx, conn, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_pages_dirty', 'Innodb_buffer_pool_pages_data')")
	if err != nil {
		return s, fmt.Errorf("read InnoDB's dirty pages: %w", err)
	}
	for _, r := range st {
		if len(r) < 2 {
			continue
		}
		n, err := strconv.ParseInt(r[1], 10, 64)
		if err != nil {
			continue
		}
		switch strings.ToLower(r[0]) {
		case "innodb_buffer_pool_pages_dirty":
			s.dirty = n
		case "innodb_buffer_pool_pages_data":
			s.pages = n
		}
	}
	return s, nil
}
