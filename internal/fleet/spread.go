package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Spread is one part of a spread run, as its job carries it: one plan on
// one target whose load comes from Parts agents at once (qpslab fleet
// submit --load-hosts). Every part claims itself in the store by StartBy
// (the store's clock) or the spread fails whole; before each measured
// item every part marks itself ready, and all start together once all
// have (Ready); each part's run of the item is kept (PutRun) until part 0
// merges them (Runs). Hosts are the parts' agents, by part.
type Spread struct {
	ID      string    `json:"id"`
	Part    int       `json:"part"`
	Parts   int       `json:"parts"`
	StartBy time.Time `json:"start_by"`
	Hosts   []string  `json:"hosts"`
	// Monitor, if set, is the agent on the target's host: one more part
	// (numbered Parts) that runs no load and measures the server's host
	// over each item's window.
	Monitor string `json:"monitor,omitempty"`
	// Target is the definition of the target the plan runs on (its
	// internal/target form: where it listens, as whom, where the password
	// is read from on each agent's host; never the password).
	Target json.RawMessage `json:"target"`
}

// All is how many parts claim and mark: the load parts and the monitor.
func (s Spread) All() int {
	if s.Monitor != "" {
		return s.Parts + 1
	}
	return s.Parts
}

// HostOf is the agent of part i (the monitor's for Parts).
func (s Spread) HostOf(i int) string {
	if i < len(s.Hosts) {
		return s.Hosts[i]
	}
	return s.Monitor
}

// Spread states.
const (
	SpreadRunning = "running"
	SpreadDone    = "done"
	SpreadFailed  = "failed"
)

// ErrSpreadFailed is wrapped by the errors of a spread that failed.
var ErrSpreadFailed = errors.New("the spread run failed")

// SubmitSpread queues the parts of a spread run, one job each on its
// host, with the spread's row, in one transaction: all or none. Each job
// is tried once: a part cannot rejoin a run in progress.
func (f *Fleet) SubmitSpread(ctx context.Context, jobs []Job) ([]int64, error) {
	if len(jobs) < 2 || jobs[0].Spread == nil {
		return nil, fmt.Errorf("a spread run needs 2 or more parts")
	}
	sp := jobs[0].Spread
	return f.submit(ctx, jobs, 1, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO spreads (id, parts, start_by, state, created) VALUES ($1, $2, $3, $4, $5)`,
			sp.ID, sp.Parts, stamp(sp.StartBy), SpreadRunning, stamp(time.Now()))
		return err
	})
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Clock is the offset of the store's clock from this host's: the store's
// time is this host's plus Offset. Every part's start is set in the
// store's clock, so that hosts whose clocks differ start together.
type Clock struct{ Offset time.Duration }

// Clock measures the store's clock against this host's (the middle of a
// round trip).
func (f *Fleet) Clock(ctx context.Context) (Clock, error) {
	t0 := time.Now()
	var db time.Time
	if err := f.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&db); err != nil {
		return Clock{}, fmt.Errorf("read the clock of %s: %w", f.where, err)
	}
	mid := t0.Add(time.Since(t0) / 2)
	return Clock{Offset: db.Sub(mid)}, nil
}

// Local is store time t on this host's clock.
func (c Clock) Local(t time.Time) time.Time { return t.Add(-c.Offset) }

// Claim records that host works part sp.Part, and waits until every part
// is claimed. Past StartBy with a part unclaimed, the spread fails whole
// (naming the hosts that had not claimed theirs).
func (f *Fleet) Claim(ctx context.Context, sp Spread, host string) error {
	_, err := f.pool.Exec(ctx, `INSERT INTO spread_parts (spread, part, host, claimed) VALUES ($1, $2, $3, $4)`,
		sp.ID, sp.Part, host, stamp(time.Now()))
	if err != nil {
		return fmt.Errorf("claim part %d of spread %s: %w (a part is claimed once: a retried attempt cannot rejoin a run in progress)", sp.Part, sp.ID, err)
	}
	return f.poll(ctx, sp, func(ctx context.Context) (bool, error) {
		var n int
		var late bool
		err := f.pool.QueryRow(ctx, `SELECT count(*), bool_or(clock_timestamp() > s.start_by::timestamptz) FROM spread_parts p JOIN spreads s ON s.id = p.spread WHERE p.spread = $1`, sp.ID).Scan(&n, &late)
		if err != nil {
			return false, err
		}
		if n == sp.All() {
			return true, nil
		}
		if late {
			missing, err := f.unclaimed(ctx, sp)
			if err != nil {
				return false, err
			}
			why := fmt.Sprintf("host(s) %s had not claimed their part by %s (busy with another job, or not running)", strings.Join(missing, ", "), stamp(sp.StartBy))
			f.Fail(ctx, sp.ID, why)
			return false, fmt.Errorf("%w: %s", ErrSpreadFailed, why)
		}
		return false, nil
	}, nil)
}

func (f *Fleet) unclaimed(ctx context.Context, sp Spread) ([]string, error) {
	rows, err := f.pool.Query(ctx, `SELECT part FROM spread_parts WHERE spread = $1`, sp.ID)
	if err != nil {
		return nil, err
	}
	claimed, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, err
	}
	var out []string
	for i := range sp.All() {
		if !slices.Contains(claimed, i) {
			out = append(out, sp.HostOf(i))
		}
	}
	return out, nil
}

// Ready marks this part ready to start item, and waits until every part
// is: the item starts lead after the last of them was, in the store's
// clock, the same instant for every part; Ready returns it on this host's
// clock. A spread that failed meanwhile, or a part's host that is lost
// (no heartbeat), ends the wait with the reason.
func (f *Fleet) Ready(ctx context.Context, sp Spread, item string, lead time.Duration) (time.Time, error) {
	// The mark's time is the store's clock, whatever this host's says.
	if _, err := f.pool.Exec(ctx, `INSERT INTO spread_marks (spread, item, part, ready)
		VALUES ($1, $2, $3, to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')) ON CONFLICT DO NOTHING`,
		sp.ID, item, sp.Part); err != nil {
		return time.Time{}, fmt.Errorf("mark part %d ready for %s: %w", sp.Part, item, err)
	}
	clock, err := f.Clock(ctx)
	if err != nil {
		return time.Time{}, err
	}
	var start time.Time
	err = f.poll(ctx, sp, func(ctx context.Context) (bool, error) {
		var n int
		var last *string
		if err := f.pool.QueryRow(ctx, `SELECT count(*), max(ready) FROM spread_marks WHERE spread = $1 AND item = $2`, sp.ID, item).Scan(&n, &last); err != nil {
			return false, err
		}
		if n < sp.All() || last == nil {
			return false, nil
		}
		t, err := time.Parse(time.RFC3339Nano, *last)
		if err != nil {
			return false, err
		}
		start = clock.Local(t.Add(lead))
		return true, nil
	}, func(ctx context.Context) ([]int, error) {
		rows, err := f.pool.Query(ctx, `SELECT part FROM spread_marks WHERE spread = $1 AND item = $2`, sp.ID, item)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[int])
	})
	return start, err
}

// PutRun keeps this part's run of item (its JSON) for the merge.
func (f *Fleet) PutRun(ctx context.Context, sp Spread, item string, run []byte) error {
	tag, err := f.pool.Exec(ctx, `UPDATE spread_marks SET run = $4 WHERE spread = $1 AND item = $2 AND part = $3`, sp.ID, item, sp.Part, string(run))
	if err == nil && tag.RowsAffected() != 1 {
		err = fmt.Errorf("part %d never marked itself ready for it", sp.Part)
	}
	if err != nil {
		return fmt.Errorf("keep part %d's run of %s: %w", sp.Part, item, err)
	}
	return nil
}

// Runs waits for every part's run of item and returns them by part (the
// monitor's last).
func (f *Fleet) Runs(ctx context.Context, sp Spread, item string) ([][]byte, error) {
	out := make([][]byte, sp.All())
	err := f.poll(ctx, sp, func(ctx context.Context) (bool, error) {
		rows, err := f.pool.Query(ctx, `SELECT part, run FROM spread_marks WHERE spread = $1 AND item = $2 AND run <> ''`, sp.ID, item)
		if err != nil {
			return false, err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var part int
			var run string
			if err := rows.Scan(&part, &run); err != nil {
				return false, err
			}
			if part >= 0 && part < sp.All() {
				out[part] = []byte(run)
				n++
			}
		}
		return n == sp.All(), rows.Err()
	}, func(ctx context.Context) ([]int, error) {
		rows, err := f.pool.Query(ctx, `SELECT part FROM spread_marks WHERE spread = $1 AND item = $2 AND run <> ''`, sp.ID, item)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[int])
	})
	return out, err
}

// Watch returns when ctx ends (nil), or with the reason once the spread
// fails or a part's host is lost: a part measuring while another part's
// host died stops at once rather than at its planned end.
func (f *Fleet) Watch(ctx context.Context, sp Spread) error {
	err := f.poll(ctx, sp, func(context.Context) (bool, error) { return false, nil },
		func(context.Context) ([]int, error) { return nil, nil })
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Fail records why the spread failed; the first reason stays.
func (f *Fleet) Fail(ctx context.Context, id, why string) error {
	_, err := f.pool.Exec(ctx, `UPDATE spreads SET state = $2, error = $3 WHERE id = $1 AND state = $4`, id, SpreadFailed, why, SpreadRunning)
	return err
}

// Finish records that the spread's runs are merged and stored.
func (f *Fleet) Finish(ctx context.Context, id string) error {
	tag, err := f.pool.Exec(ctx, `UPDATE spreads SET state = $2 WHERE id = $1 AND state = $3`, id, SpreadDone, SpreadRunning)
	if err == nil && tag.RowsAffected() != 1 {
		st, why, _ := f.SpreadState(ctx, id)
		return fmt.Errorf("%w: it is %s (%s)", ErrSpreadFailed, st, why)
	}
	return err
}

// SpreadState is the spread's state and, if it failed, why.
func (f *Fleet) SpreadState(ctx context.Context, id string) (state, why string, err error) {
	err = f.pool.QueryRow(ctx, `SELECT state, error FROM spreads WHERE id = $1`, id).Scan(&state, &why)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", fmt.Errorf("no spread %s in %s", id, f.where)
	}
	return state, why, err
}

// pollEvery is how often a waiting part asks the store.
const pollEvery = 50 * time.Millisecond

// poll asks done until it holds (the spread not failed), the spread fails, a part's host that has
// not yet done its share (have: the parts that have) is lost, or ctx ends.
func (f *Fleet) poll(ctx context.Context, sp Spread, done func(context.Context) (bool, error), have func(context.Context) ([]int, error)) error {
	lostCheck := time.Now()
	for {
		state, why, err := f.SpreadState(ctx, sp.ID)
		if err != nil {
			return err
		}
		if state == SpreadFailed {
			return fmt.Errorf("%w: %s", ErrSpreadFailed, why)
		}
		ok, err := done(ctx)
		if err != nil {
			if errors.Is(err, ErrSpreadFailed) {
				return err
			}
			return fmt.Errorf("spread %s in %s: %w", sp.ID, f.where, err)
		}
		if ok {
			return nil
		}
		if have != nil && time.Since(lostCheck) >= time.Second {
			lostCheck = time.Now()
			if err := f.lostPart(ctx, sp, have); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("spread %s: waiting for the other parts: %w", sp.ID, context.Cause(ctx))
		case <-time.After(pollEvery):
		}
	}
}

// lostPart fails the spread when a part that has not done its share runs
// on a host whose heartbeats stopped.
func (f *Fleet) lostPart(ctx context.Context, sp Spread, have func(context.Context) ([]int, error)) error {
	done, err := have(ctx)
	if err != nil {
		return err
	}
	hosts, err := f.Hosts(ctx)
	if err != nil {
		return err
	}
	for part := range sp.All() {
		name := sp.HostOf(part)
		if slices.Contains(done, part) {
			continue
		}
		for _, h := range hosts {
			if h.Name == name && h.State == Lost {
				why := fmt.Sprintf("host %s (part %d) was lost mid-run: no heartbeat for %s", name, part, h.Since.Round(time.Second))
				f.Fail(ctx, sp.ID, why)
				return fmt.Errorf("%w: %s", ErrSpreadFailed, why)
			}
		}
	}
	return nil
}
