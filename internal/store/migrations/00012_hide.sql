-- Hidden runs and the run audit: a run an admin hid (qpslab runs hide, or
-- POST /api/v1/runs/{id}/hide) is left out of every read of results
-- (store.visibleRuns) until it is unhidden; its row and figures stay. The
-- audit keeps one line per hide, unhide and delete: who (a token's id and
-- name, or "cli" and the OS user), when, and which run, named by its
-- label and test so that a deleted run's line still says what it was (no
-- reference to runs: the line outlives the run). Runs stored before this
-- are not hidden.

-- +goose Up
ALTER TABLE runs ADD COLUMN hidden_at TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN hidden_by TEXT NOT NULL DEFAULT '';
CREATE TABLE run_audit (
    id      TEXT PRIMARY KEY,
    at      TEXT NOT NULL,
    action  TEXT NOT NULL, -- hide, unhide, delete
    run_id  TEXT NOT NULL,
    label   TEXT NOT NULL, -- build.config (:engine), as the run was labelled
    test    TEXT NOT NULL,
    threads INTEGER NOT NULL,
    who     TEXT NOT NULL  -- token ID (NAME), or cli USER
);

-- +goose Down
DROP TABLE run_audit;
ALTER TABLE runs DROP COLUMN hidden_by;
ALTER TABLE runs DROP COLUMN hidden_at;
