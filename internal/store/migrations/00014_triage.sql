-- qpslab serve's triage of the regressions its attention view lists: one
-- row per change point (the key of alerts, internal/serve alertKey) or per
-- group of them (the build, or time, where they arrived: its triage
-- applies to each of its parts), holding its state now, who set it (a
-- token's name, or "public") and when. Additive: nothing else changes.

-- +goose Up
CREATE TABLE triage (
    key      TEXT PRIMARY KEY, -- a change point's alert key, or a group's key
    state    TEXT NOT NULL,    -- open, acknowledged, dismissed, fixed
    note     TEXT NOT NULL DEFAULT '',
    fixed_in TEXT NOT NULL DEFAULT '', -- the build that fixed it (state fixed)
    what     TEXT NOT NULL DEFAULT '', -- the series or build it names, for people reading the table
    who      TEXT NOT NULL,
    at       TEXT NOT NULL
);

-- +goose Down
DROP TABLE triage;
