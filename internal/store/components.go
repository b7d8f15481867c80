package store

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// Kinds of comparison a test's variance components were measured in: an
// A/A ratio has no repeat effect (both labels take the same state
// changes), so only an A/B comparison measures one.
const (
	ComponentsAA = "a/a"
	ComponentsAB = "a/b"
)

// VarianceComponents are one test's variance components as one of this
// host's comparisons measured them (analysis.Components, per test).
type VarianceComponents struct {
	HostID     string    `json:"host_id"`
	Suite      string    `json:"suite"`
	Test       string    `json:"test"`
	Threads    int       `json:"threads"`
	Conditions string    `json:"conditions"`
	Kind       string    `json:"kind"` // ComponentsAA or ComponentsAB
	Pool       string    `json:"pool"` // reads or writes
	Slice      float64   `json:"slice_seconds"`
	Within     float64   `json:"sigma_within"`
	Between    float64   `json:"sigma_between"`
	Rounds     int       `json:"rounds"`
	Repeats    int       `json:"repeats"`
	Plan       string    `json:"plan"`
	Measured   time.Time `json:"measured"`
}

// SaveComponents keeps cs, each replacing what its host had for the same
// test and kind of comparison: the newest wins. Figures that are not
// finite and ≥ 0 (a slice > 0) are refused.
func (s *Store) SaveComponents(ctx context.Context, cs []VarianceComponents) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store variance components: %w", err)
	}
	defer tx.Rollback()
	for _, c := range cs {
		for _, v := range []float64{c.Slice, c.Within, c.Between} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("store the variance components of %s: %v is not a finite figure ≥ 0", c.Test, v)
			}
		}
		if c.Slice == 0 || c.Kind != ComponentsAA && c.Kind != ComponentsAB {
			return fmt.Errorf("store the variance components of %s: slice %v s, kind %q", c.Test, c.Slice, c.Kind)
		}
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO variance_components (host_id, suite, test, threads, conditions, kind, pool, slice_seconds, sigma_within, sigma_between, rounds, repeats, plan_id, measured)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (host_id, suite, test, threads, conditions, kind) DO UPDATE SET pool = excluded.pool, slice_seconds = excluded.slice_seconds,
			sigma_within = excluded.sigma_within, sigma_between = excluded.sigma_between, rounds = excluded.rounds, repeats = excluded.repeats,
			plan_id = excluded.plan_id, measured = excluded.measured`),
			c.HostID, c.Suite, c.Test, c.Threads, c.Conditions, c.Kind, c.Pool, c.Slice, c.Within, c.Between, c.Rounds, c.Repeats, c.Plan, ts(c.Measured))
		if err != nil {
			return fmt.Errorf("store the variance components of %s: %w", c.Test, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store variance components: %w", err)
	}
	return nil
}

// Components reads the variance components of the host whose fingerprint
// id is hostID for suite, by test.
func (s *Store) Components(ctx context.Context, hostID, suite string) ([]VarianceComponents, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT host_id, suite, test, threads, conditions, kind, pool, slice_seconds, sigma_within, sigma_between, rounds, repeats, plan_id, measured
		FROM variance_components WHERE host_id = ? AND suite = ? ORDER BY test, threads, conditions, kind`), hostID, suite)
	if err != nil {
		return nil, fmt.Errorf("read variance components: %w", err)
	}
	defer rows.Close()
	var out []VarianceComponents
	for rows.Next() {
		var c VarianceComponents
		var measured string
		if err := rows.Scan(&c.HostID, &c.Suite, &c.Test, &c.Threads, &c.Conditions, &c.Kind, &c.Pool, &c.Slice, &c.Within, &c.Between, &c.Rounds, &c.Repeats, &c.Plan, &measured); err != nil {
			return nil, fmt.Errorf("read variance components: %w", err)
		}
		c.Measured = parseTS(measured)
		out = append(out, c)
	}
	return out, rows.Err()
}

// RunEffect is one A/A plan's ratio of one test on one host: the log of
// its relative value and that log's standard error (migration 19).
type RunEffect struct {
	HostID     string    `json:"host_id"`
	Suite      string    `json:"suite"`
	Test       string    `json:"test"`
	Threads    int       `json:"threads"`
	Conditions string    `json:"conditions"`
	Plan       string    `json:"plan"`
	LogRatio   float64   `json:"log_ratio"`
	SE         float64   `json:"se"`
	Measured   time.Time `json:"measured"`
}

// SaveRunEffects keeps es, a plan's row replacing the same plan's. A
// figure that is not finite (an SE < 0) is refused.
func (s *Store) SaveRunEffects(ctx context.Context, es []RunEffect) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store run effects: %w", err)
	}
	defer tx.Rollback()
	for _, e := range es {
		if math.IsNaN(e.LogRatio) || math.IsInf(e.LogRatio, 0) || math.IsNaN(e.SE) || math.IsInf(e.SE, 0) || e.SE < 0 {
			return fmt.Errorf("store the run effect of %s: %v ± %v is not a finite figure", e.Test, e.LogRatio, e.SE)
		}
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO run_effects (host_id, suite, test, threads, conditions, plan_id, log_ratio, se, measured)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (host_id, suite, test, threads, conditions, plan_id) DO UPDATE SET log_ratio = excluded.log_ratio, se = excluded.se, measured = excluded.measured`),
			e.HostID, e.Suite, e.Test, e.Threads, e.Conditions, e.Plan, e.LogRatio, e.SE, ts(e.Measured))
		if err != nil {
			return fmt.Errorf("store the run effect of %s: %w", e.Test, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store run effects: %w", err)
	}
	return nil
}

// RunEffects reads every host's run effects.
func (s *Store) RunEffects(ctx context.Context) ([]RunEffect, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT host_id, suite, test, threads, conditions, plan_id, log_ratio, se, measured
		FROM run_effects ORDER BY host_id, suite, test, threads, conditions, plan_id`)
	if err != nil {
		return nil, fmt.Errorf("read run effects: %w", err)
	}
	defer rows.Close()
	var out []RunEffect
	for rows.Next() {
		var e RunEffect
		var measured string
		if err := rows.Scan(&e.HostID, &e.Suite, &e.Test, &e.Threads, &e.Conditions, &e.Plan, &e.LogRatio, &e.SE, &measured); err != nil {
			return nil, fmt.Errorf("read run effects: %w", err)
		}
		e.Measured = parseTS(measured)
		out = append(out, e)
	}
	return out, rows.Err()
}

// RunEffectsOf is the lookup of the run effects stored for a test on the
// hosts runs came from (each host's fingerprint id, store.HostID): their
// log ratios and standard errors, all hosts' together (a comparison of
// runs of one host, as compare makes where hosts differ, gets that
// host's).
func (s *Store) RunEffectsOf(ctx context.Context) (func(test string, threads int, conditions string, runs ...[]result.Run) (logs, ses []float64), error) {
	all, err := s.RunEffects(ctx)
	if err != nil {
		return nil, err
	}
	type k struct {
		host, suite, test string
		threads           int
		cond              string
	}
	m := map[k][]RunEffect{}
	for _, e := range all {
		kk := k{e.HostID, e.Suite, e.Test, e.Threads, e.Conditions}
		m[kk] = append(m[kk], e)
	}
	var mu sync.Mutex
	ids := map[string]string{}
	return func(test string, threads int, conditions string, runs ...[]result.Run) (logs, ses []float64) {
		mu.Lock()
		defer mu.Unlock()
		seen := map[k]bool{}
		for _, rs := range runs {
			for _, r := range rs {
				if len(r.Host) == 0 {
					continue
				}
				id, ok := ids[string(r.Host)]
				if !ok {
					id, _ = HostID(r.Host)
					ids[string(r.Host)] = id
				}
				kk := k{id, r.Suite, test, threads, conditions}
				if id == "" || seen[kk] {
					continue
				}
				seen[kk] = true
				for _, e := range m[kk] {
					logs, ses = append(logs, e.LogRatio), append(ses, e.SE)
				}
			}
		}
		return logs, ses
	}, nil
}
