package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/qpslab/qpslab/internal/host"
)

// migrate4 is migration 4: history that stays true. It merges the hosts an
// unstable id split (rehost) and marks the runs an unchecked encoding error
// stored without figures (emptied).
func (s *Store) migrate4(ctx context.Context, tx *sql.Tx) error {
	if err := s.rehost(ctx, tx); err != nil {
		return err
	}
	return emptied(ctx, tx)
}

// emptied finds what qpslab stored empty when a figure was not finite
// (json.Marshal fails on NaN and ±Inf, and the error was dropped): a run
// with an empty totals or params column, or a sample with an empty latency
// column, is marked failed with the reason, so that no comparison reads its
// zeros (it stays, with its samples; the empty columns read as "{}"); a
// metrics row with an empty hw column is removed, so the run reads as not
// measured rather than as costing nothing.
func emptied(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{
		`UPDATE runs SET status = 'failed',
			error = 'stored without its figures: a figure was not finite (NaN or infinite) and could not be encoded; import the fixed file again'
			WHERE totals = '' OR params = '' OR id IN (SELECT run_id FROM samples WHERE latency = '')`,
		`UPDATE runs SET totals = '{}' WHERE totals = ''`,
		`UPDATE runs SET params = '{}' WHERE params = ''`,
		`UPDATE samples SET latency = '{}' WHERE latency = ''`,
		`DELETE FROM metrics WHERE hw = ''`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mark what was stored without figures: %w", err)
		}
	}
	return nil
}

// rehost: host ids were a hash of the whole fingerprint less
// a few fields, so volatile text (the steal figure in a risk's detail) made
// one machine several hosts and split its history; ids are now host.ID, of
// stable facts only. This recomputes every host's id from its stored
// fingerprint and merges the hosts that are one: the earliest row (and its
// fingerprint) stays, under the new id, and runs follow it. A fingerprint
// whose id cannot be computed keeps its row and id as they are: the
// migration never loses a run or blocks opening the store. It is
// idempotent: a second pass finds every id already right.
func (s *Store) rehost(ctx context.Context, tx *sql.Tx) error {
	type row struct{ id, fp, first string }
	rows, err := tx.QueryContext(ctx, `SELECT id, fingerprint, first_seen FROM hosts ORDER BY first_seen, id`)
	if err != nil {
		return fmt.Errorf("recompute host ids: %w", err)
	}
	var hosts []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.fp, &r.first); err != nil {
			rows.Close()
			return fmt.Errorf("recompute host ids: %w", err)
		}
		hosts = append(hosts, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("recompute host ids: %w", err)
	}
	for _, h := range hosts {
		id, err := host.ID([]byte(h.fp))
		if err != nil || id == h.id {
			continue
		}
		// Oldest first: the first row to take an id keeps its fingerprint
		// and first_seen; later ones only move their runs to it.
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO hosts (id, fingerprint, first_seen) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`), id, h.fp, h.first); err != nil {
			return fmt.Errorf("recompute host id of %s: %w", h.id, err)
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE runs SET host_id = ? WHERE host_id = ?`), id, h.id); err != nil {
			return fmt.Errorf("recompute host id of %s: %w", h.id, err)
		}
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM hosts WHERE id = ?`), h.id); err != nil {
			return fmt.Errorf("recompute host id of %s: %w", h.id, err)
		}
	}
	return nil
}
