package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/qpslab/qpslab/internal/result"
)

// NoiseFloor is one host's noise floor for one figure of one test: how
// far an A/A run found a server from itself (qpslab run --aa).
type NoiseFloor struct {
	HostID     string            `json:"host_id"`
	Suite      string            `json:"suite"`
	Test       string            `json:"test"`
	Threads    int               `json:"threads"`
	Conditions string            `json:"conditions"`
	Metric     string            `json:"metric"`
	Floor      float64           `json:"floor"` // a fraction: 0.03 is ±3 %
	Rel        float64           `json:"rel"`   // the A/A relative value, and its interval
	Lo         float64           `json:"lo"`
	Hi         float64           `json:"hi"`
	Rounds     int               `json:"rounds"`
	Pairing    string            `json:"pairing"`
	Plan       string            `json:"plan"`
	Build      string            `json:"build"`
	Config     string            `json:"config"`
	Budget     map[string]string `json:"budget"`
	Measured   time.Time         `json:"measured"`
}

// SaveNoise keeps floors, each replacing the one its host had for the
// same figure of the same test: the newest calibration wins. A floor
// that is not a finite number ≥ 0 is refused.
func (s *Store) SaveNoise(ctx context.Context, floors []NoiseFloor) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store noise floor: %w", err)
	}
	defer tx.Rollback()
	for _, f := range floors {
		for _, v := range []float64{f.Floor, f.Rel, f.Lo, f.Hi} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("store noise floor of %s: %v is not a finite figure ≥ 0", f.Test, v)
			}
		}
		budget, err := json.Marshal(f.Budget)
		if err != nil {
			return fmt.Errorf("store noise floor of %s: %w", f.Test, err)
		}
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO noise_floor (host_id, suite, test, threads, conditions, metric, floor, rel, lo, hi, rounds, pairing, plan_id, build, config, budget, measured)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (host_id, suite, test, threads, conditions, metric) DO UPDATE SET floor = excluded.floor, rel = excluded.rel, lo = excluded.lo, hi = excluded.hi,
			rounds = excluded.rounds, pairing = excluded.pairing, plan_id = excluded.plan_id, build = excluded.build, config = excluded.config, budget = excluded.budget, measured = excluded.measured`),
			f.HostID, f.Suite, f.Test, f.Threads, f.Conditions, f.Metric, f.Floor, f.Rel, f.Lo, f.Hi, f.Rounds, f.Pairing, f.Plan, f.Build, f.Config, string(budget), ts(f.Measured))
		if err != nil {
			return fmt.Errorf("store noise floor of %s: %w", f.Test, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store noise floor: %w", err)
	}
	return nil
}

// Noise reads the noise floors of the host whose fingerprint id is hostID
// ("" for every host's), by suite, test and thread count.
func (s *Store) Noise(ctx context.Context, hostID string) ([]NoiseFloor, error) {
	q := `SELECT host_id, suite, test, threads, conditions, metric, floor, rel, lo, hi, rounds, pairing, plan_id, build, config, budget, measured FROM noise_floor`
	var args []any
	if hostID != "" {
		q += ` WHERE host_id = ?`
		args = append(args, hostID)
	}
	rows, err := s.db.QueryContext(ctx, s.q(q+` ORDER BY host_id, suite, test, threads, conditions, metric`), args...)
	if err != nil {
		return nil, fmt.Errorf("read noise floors in %s: %w", s.where, err)
	}
	defer rows.Close()
	var out []NoiseFloor
	for rows.Next() {
		var f NoiseFloor
		var budget, measured string
		if err := rows.Scan(&f.HostID, &f.Suite, &f.Test, &f.Threads, &f.Conditions, &f.Metric, &f.Floor, &f.Rel, &f.Lo, &f.Hi, &f.Rounds, &f.Pairing, &f.Plan,
			&f.Build, &f.Config, &budget, &measured); err != nil {
			return nil, fmt.Errorf("read noise floors in %s: %w", s.where, err)
		}
		if err := json.Unmarshal([]byte(budget), &f.Budget); err != nil {
			return nil, fmt.Errorf("read noise floors in %s: %s: %w", s.where, f.Test, err)
		}
		f.Measured, _ = time.Parse(time.RFC3339Nano, measured)
		out = append(out, f)
	}
	return out, rows.Err()
}

// NoiseOf is the lookup of the noise floor (of the headline figure) that
// judges runs of a test at a thread count and conditions: the floor of
// the host the runs came from, each run's own (its fingerprint's id),
// never another host's. Where they came from several hosts (labels named
// on two, LABEL@HOST, or boost switched between labels, qpslab run
// --boost) it is the largest of their floors, known only where each of
// them was calibrated (qpslab run --aa); runs that record no host
// (imports) know none.
func (s *Store) NoiseOf(ctx context.Context) (func(test string, threads int, conditions string, runs ...[]result.Run) (float64, bool), error) {
	floors, err := s.Floors(ctx)
	if err != nil {
		return func(string, int, string, ...[]result.Run) (float64, bool) { return 0, false }, err
	}
	var mu sync.Mutex
	ids := map[string]string{} // fingerprint → host id
	return func(test string, threads int, conditions string, runs ...[]result.Run) (float64, bool) {
		mu.Lock()
		defer mu.Unlock()
		floor, known, seen := 0.0, false, map[string]bool{}
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
				if id == "" || seen[id] {
					continue
				}
				seen[id] = true
				f, ok := floors(id, r.Suite, test, threads, conditions)
				if !ok {
					return 0, false
				}
				floor, known = max(floor, f), true
			}
		}
		return floor, known
	}, nil
}

// HeadlineMetric is the metric name of a test's headline figure in the
// noise floor table.
const HeadlineMetric = "qps"

// Floors is the lookup of every host's noise floors of the headline, for
// detect's minimum magnitude (analysis.DetectSettings.Floors).
func (s *Store) Floors(ctx context.Context) (func(hostID, suite, test string, threads int, conditions string) (float64, bool), error) {
	floors, err := s.Noise(ctx, "")
	if err != nil {
		return nil, err
	}
	type k struct {
		host, suite, test string
		threads           int
		cond              string
	}
	m := map[k]float64{}
	for _, f := range floors {
		if f.Metric == HeadlineMetric {
			m[k{f.HostID, f.Suite, f.Test, f.Threads, f.Conditions}] = f.Floor
		}
	}
	return func(hostID, suite, test string, threads int, conditions string) (float64, bool) {
		v, ok := m[k{hostID, suite, test, threads, conditions}]
		return v, ok
	}, nil
}
