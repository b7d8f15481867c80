package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The triage of qpslab serve's attention view (migration 14): the state
// of a regression change point, or of a group of them, as people set it,
// with who set it and when. One row per key holds the state now.

// The triage states.
const (
	TriageOpen         = "open"
	TriageAcknowledged = "acknowledged" // someone looked at it: a note says what they found
	TriageDismissed    = "dismissed"    // noise: not a regression
	TriageFixed        = "fixed"        // FixedIn names the build that fixed it
)

// TriageStates are the states, in the order forms list them.
var TriageStates = []string{TriageOpen, TriageAcknowledged, TriageDismissed, TriageFixed}

// Triage is the state of one change point or group.
type Triage struct {
	Key     string    `json:"key"`
	State   string    `json:"state"`
	Note    string    `json:"note,omitempty"`
	FixedIn string    `json:"fixed_in,omitempty"`
	What    string    `json:"what,omitempty"` // the series or build the key names
	Who     string    `json:"who"`            // a token's name, or "public"
	At      time.Time `json:"at"`
}

// SetTriage stores states in one transaction, each replacing
// what its key held.
func (s *Store) SetTriage(ctx context.Context, states []Triage) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store triage: %w", err)
	}
	defer tx.Rollback()
	for _, t := range states {
		if !slices.Contains(TriageStates, t.State) {
			return fmt.Errorf("store triage: state %q: use one of %s", t.State, strings.Join(TriageStates, ", "))
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO triage (key, state, note, fixed_in, what, who, at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET state = excluded.state, note = excluded.note, fixed_in = excluded.fixed_in, what = excluded.what, who = excluded.who, at = excluded.at`),
			t.Key, t.State, t.Note, t.FixedIn, t.What, t.Who, ts(t.At)); err != nil {
			return fmt.Errorf("store triage %s: %w", t.Key, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store triage: %w", err)
	}
	return nil
}

// Triages are the stored states by key.
func (s *Store) Triages(ctx context.Context) (map[string]Triage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key, state, note, fixed_in, what, who, at FROM triage`)
	if err != nil {
		return nil, fmt.Errorf("read triage: %w", err)
	}
	defer rows.Close()
	out := map[string]Triage{}
	for rows.Next() {
		var t Triage
		var at string
		if err := rows.Scan(&t.Key, &t.State, &t.Note, &t.FixedIn, &t.What, &t.Who, &at); err != nil {
			return nil, fmt.Errorf("read triage: %w", err)
		}
		t.At = parseTS(at)
		out[t.Key] = t
	}
	return out, rows.Err()
}
