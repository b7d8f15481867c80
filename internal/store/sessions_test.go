package store

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// sessionTables exercises qpslab serve's sessions (migration 13): found by
// hash with their token, touched, revoked one by one (logout) and all of a
// token's with it (tokens revoke); a session whose token is deleted is no
// session. Both SQLite and PostgreSQL run it.
func sessionTables(t *testing.T, s *Store, tokenID string) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	for _, h := range []string{"s-1", "s-2"} {
		if err := s.AddSession(ctx, Session{TokenID: tokenID, Created: t0, Expires: t0.Add(30 * 24 * time.Hour)}, h); err != nil {
			t.Fatal(err)
		}
	}
	se, tok, err := s.SessionByHash(ctx, "s-1")
	if err != nil || se.TokenID != tokenID || tok.ID != tokenID || !se.Created.Equal(t0) || !se.LastUsed.Equal(t0) || !se.Expires.Equal(t0.Add(30*24*time.Hour)) || !se.Revoked.IsZero() {
		t.Fatalf("session by hash: %+v %+v %v", se, tok, err)
	}
	if _, _, err := s.SessionByHash(ctx, "nope"); err != ErrNoSession {
		t.Errorf("an unknown session: %v", err)
	}
	if err := s.TouchSession(ctx, "s-1", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if se, _, _ := s.SessionByHash(ctx, "s-1"); !se.LastUsed.Equal(t0.Add(time.Hour)) {
		t.Errorf("touched: last used %v", se.LastUsed)
	}
	if err := s.RevokeSession(ctx, "s-1", t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if se, _, _ := s.SessionByHash(ctx, "s-1"); !se.Revoked.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("logged out: revoked %v", se.Revoked)
	}
	if se, _, _ := s.SessionByHash(ctx, "s-2"); !se.Revoked.IsZero() {
		t.Errorf("another session ended with the first: %+v", se)
	}
	if _, err := s.RevokeToken(ctx, tokenID, t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	se, tok, err = s.SessionByHash(ctx, "s-2")
	if err != nil || !se.Revoked.Equal(t0.Add(3*time.Hour)) || tok.Revoked.IsZero() {
		t.Errorf("the token revoked, its session: %+v, token %+v, %v", se, tok, err)
	}
	// An expired session is forgotten when the next is opened.
	later := t0.Add(31 * 24 * time.Hour)
	if err := s.AddSession(ctx, Session{TokenID: tokenID, Created: later, Expires: later.Add(time.Hour)}, "s-3"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SessionByHash(ctx, "s-2"); err != ErrNoSession {
		t.Errorf("an expired session kept: %v", err)
	}
	if _, err := s.db.ExecContext(ctx, s.q(`DELETE FROM tokens WHERE id = ?`), tokenID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SessionByHash(ctx, "s-3"); err != ErrNoSession {
		t.Errorf("a session of a deleted token: %v", err)
	}
	// The secret is made once, and read back the same.
	a, err := s.ServeSecret(ctx, "csrf_key")
	if err != nil || len(a) != 32 {
		t.Fatalf("secret: %x %v", a, err)
	}
	if b, err := s.ServeSecret(ctx, "csrf_key"); err != nil || !bytes.Equal(a, b) {
		t.Errorf("secret read again: %x, %v; want %x", b, err, a)
	}
}

func TestSQLiteSessions(t *testing.T) {
	s := open(t, "")
	if err := s.AddToken(ctx, Token{ID: "0123456789ab", Name: "alice", Scopes: []string{"read"}, Created: time.Now()}, "h"); err != nil {
		t.Fatal(err)
	}
	sessionTables(t, s, "0123456789ab")
}

// Migration 13 adds the sessions to a store of the last release
// (86cc443) that holds a token that release made: a session of that token
// is stored, read back with it, and ends when it is revoked.
func TestSessionsOnStoreOfTheLastRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("testdata", "release-86cc443.db"), path)
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'sessions'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the release's store has sessions already (%d, %v)", n, err)
	}
	// As that release's qpslab tokens create wrote it.
	if _, err := raw.ExecContext(ctx, `INSERT INTO tokens (id, name, hash, scopes, created) VALUES ('a1b2c3d4e5f6', 'alice', 'hash-a', 'read', '2026-01-01T00:00:00.000000000Z')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	s, err := Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if tok, err := s.TokenByHash(ctx, "hash-a"); err != nil || tok.Name != "alice" {
		t.Fatalf("the release's token: %+v %v", tok, err)
	}
	sessionTables(t, s, "a1b2c3d4e5f6")
}

// A new SQLite store is created 0600 in folders created 0700 (the home's
// own folder 0711, for the database servers' user); its -wal and -shm
// files and the migration lock are 0600 too. A store file and folder that
// exist keep their modes.
func TestStoreFileModes(t *testing.T) {
	dir := t.TempDir()
	modeOf := func(p string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	check := func(p string, want os.FileMode) {
		t.Helper()
		if got := modeOf(p); got != want {
			t.Errorf("%s: mode %o, want %o", p, got, want)
		}
	}
	given := filepath.Join(dir, "a", "b", "results.db")
	s, err := Open(ctx, given, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddToken(ctx, Token{ID: "0123456789ab", Name: "ci", Scopes: []string{"ingest"}, Created: time.Now()}, "h"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{given, given + "-wal", given + "-shm", given + ".migrate-lock"} {
		check(p, 0o600)
	}
	check(filepath.Join(dir, "a"), 0o700)
	check(filepath.Join(dir, "a", "b"), 0o700)
	s.Close()

	home := filepath.Join(dir, "home", "qpslab.db")
	s, err = Open(ctx, "", home)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	check(home, 0o600)
	check(filepath.Dir(home), 0o711)

	// What exists is left as it is.
	old := filepath.Join(dir, "shared")
	if err := os.Mkdir(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o755); err != nil {
		t.Fatal(err)
	}
	oldFile := filepath.Join(old, "qpslab.db")
	if err := os.WriteFile(oldFile, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(oldFile, 0o640); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, oldFile, "")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	check(oldFile, 0o640)
	check(old, 0o755)
}
