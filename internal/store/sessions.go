package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// What qpslab serve keeps of its logins (migration 13): a session per
// login, found by the hash of the random id its cookie holds, naming the
// token it was opened with. The store only records; whether a session is
// still good (not revoked, not expired, its token not revoked) is the
// server's rule, on the session and token SessionByHash returns.

// Session is a login as stored: never its id, only its hash (kept apart
// from this type, as a token's is).
type Session struct {
	TokenID  string
	Created  time.Time
	LastUsed time.Time
	Expires  time.Time // the latest it can last, however often used
	Revoked  time.Time
}

// ErrNoSession is SessionByHash's error for a hash no session has, or a
// session whose token is gone.
var ErrNoSession = errors.New("no such session")

// AddSession stores a new session under hash, and forgets the sessions
// that expired before it was opened (they can never be used again).
func (s *Store) AddSession(ctx context.Context, se Session, hash string) error {
	if _, err := s.db.ExecContext(ctx, s.q(`DELETE FROM sessions WHERE expires < ?`), ts(se.Created)); err != nil {
		return fmt.Errorf("store session: %w", err)
	}
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO sessions (id, token_id, created, last_used, expires) VALUES (?, ?, ?, ?, ?)`),
		hash, se.TokenID, ts(se.Created), ts(se.Created), ts(se.Expires))
	if err != nil {
		return fmt.Errorf("store session: %w", err)
	}
	return nil
}

// SessionByHash finds the session whose hash is hash and its token,
// revoked or not; ErrNoSession when there is none or its token was
// deleted.
func (s *Store) SessionByHash(ctx context.Context, hash string) (Session, Token, error) {
	var se Session
	var created, used, expires, revoked string
	t, err := scanToken(rowScan(s.db.QueryRowContext(ctx, s.q(`SELECT t.id, t.name, t.scopes, t.created, t.last_used, t.revoked,
		x.token_id, x.created, x.last_used, x.expires, x.revoked
		FROM sessions x JOIN tokens t ON t.id = x.token_id WHERE x.id = ?`), hash), &se.TokenID, &created, &used, &expires, &revoked))
	if errors.Is(err, sql.ErrNoRows) {
		return se, t, ErrNoSession
	}
	if err != nil {
		return se, t, fmt.Errorf("read sessions: %w", err)
	}
	se.Created, se.LastUsed, se.Expires, se.Revoked = parseTS(created), parseTS(used), parseTS(expires), parseTS(revoked)
	return se, t, nil
}

// rowScanner scans a row into the columns asked for (a token's), then
// into more.
type rowScanner struct {
	row  *sql.Row
	more []any
}

func rowScan(row *sql.Row, more ...any) rowScanner { return rowScanner{row, more} }

func (r rowScanner) Scan(dest ...any) error { return r.row.Scan(append(dest, r.more...)...) }

// TouchSession records that the session hash was used at.
func (s *Store) TouchSession(ctx context.Context, hash string, at time.Time) error {
	if _, err := s.db.ExecContext(ctx, s.q(`UPDATE sessions SET last_used = ? WHERE id = ?`), ts(at), hash); err != nil {
		return fmt.Errorf("store session use: %w", err)
	}
	return nil
}

// RevokeSession ends the session hash (logout); ending one that has ended
// is no error.
func (s *Store) RevokeSession(ctx context.Context, hash string, at time.Time) error {
	if _, err := s.db.ExecContext(ctx, s.q(`UPDATE sessions SET revoked = ? WHERE id = ? AND revoked = ''`), ts(at), hash); err != nil {
		return fmt.Errorf("revoke session: %w", err)
	}
	return nil
}

// revokeSessionsOf ends every session of the token id.
func (s *Store) revokeSessionsOf(ctx context.Context, x execer, id string, at time.Time) error {
	if _, err := x.ExecContext(ctx, s.q(`UPDATE sessions SET revoked = ? WHERE token_id = ? AND revoked = ''`), ts(at), id); err != nil {
		return fmt.Errorf("revoke the sessions of token %s: %w", id, err)
	}
	return nil
}

// ServeSecret is the random secret of serve_state named name (32 bytes),
// made the first time it is asked for: every server sharing the store
// reads the same one, so that what one signs another checks.
func (s *Store) ServeSecret(ctx context.Context, name string) ([]byte, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("make a secret: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO serve_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`), name, hex.EncodeToString(b[:])); err != nil {
		return nil, fmt.Errorf("store secret %s: %w", name, err)
	}
	var v string
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT value FROM serve_state WHERE name = ?`), name).Scan(&v); err != nil {
		return nil, fmt.Errorf("read secret %s: %w", name, err)
	}
	secret, err := hex.DecodeString(v)
	if err != nil || len(secret) < 16 {
		return nil, fmt.Errorf("read secret %s: serve_state holds no secret of 16 bytes or more", name)
	}
	return secret, nil
}
