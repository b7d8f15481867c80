-- qpslab serve's login sessions: the cookie /login sets holds a random
-- session id, never the token; only the id's SHA-256 is kept here. A
-- session names the token it was opened with, so that revoking (or
-- deleting) the token ends it; logout revokes it; it expires after
-- last_used plus the idle limit, or at expires, whichever comes first.
-- Stored rather than kept in memory, so that every server sharing the
-- store knows every session.

-- +goose Up
CREATE TABLE sessions (
    id        TEXT PRIMARY KEY,  -- hex SHA-256 of the session id in the cookie
    token_id  TEXT NOT NULL,     -- tokens.id of the token logged in with
    created   TEXT NOT NULL,
    last_used TEXT NOT NULL,
    expires   TEXT NOT NULL,     -- created plus the longest a session lasts
    revoked   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_token_id ON sessions (token_id);

-- +goose Down
DROP TABLE sessions;
