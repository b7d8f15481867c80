-- qpslab serve: the bearer tokens of its API (only a hash of each is kept:
-- the token itself is shown once, when it is made), the change points its
-- alerts know of (one row per change point: at most one webhook each), and
-- its own state (whether the change points already stored have been taken
-- as known, so that only new results raise alerts).

-- +goose Up
CREATE TABLE tokens (
    id        TEXT PRIMARY KEY,    -- the token's public part, shown by qpslab tokens list
    name      TEXT NOT NULL,
    hash      TEXT NOT NULL UNIQUE, -- hex SHA-256 of the whole token
    scopes    TEXT NOT NULL,       -- comma-separated: read, ingest
    created   TEXT NOT NULL,
    last_used TEXT NOT NULL DEFAULT '',
    revoked   TEXT NOT NULL DEFAULT ''
);

CREATE TABLE alerts (
    key       TEXT PRIMARY KEY, -- hash of the series and the build (or time) where the change arrived
    series    TEXT NOT NULL,
    kind      TEXT NOT NULL,
    magnitude DOUBLE PRECISION NOT NULL,
    arrived   TEXT NOT NULL,    -- the build (and version) where it arrived
    state     TEXT NOT NULL,    -- known (stored before alerts began), pending, sent, failed
    attempts  INTEGER NOT NULL DEFAULT 0,
    error     TEXT NOT NULL DEFAULT '',
    created   TEXT NOT NULL,
    sent      TEXT NOT NULL DEFAULT ''
);

CREATE TABLE serve_state (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- +goose Down
DROP TABLE serve_state;
DROP TABLE alerts;
DROP TABLE tokens;
