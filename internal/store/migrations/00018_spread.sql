-- A spread run (qpslab fleet submit --load-hosts K, docs/fleet.md): one
-- plan on one target whose load comes from K agents at once. Each agent
-- claims its part before the run's start_by; before each measured item
-- (a test at a thread count in a repeat) each part marks that it is ready
-- and all start together once every part has; each part's run of the
-- item is kept here (JSON) until the first part merges the K of them into
-- the one run that goes to runs. A spread that failed (a part not claimed
-- in time, a host lost, a part's error) says why, and nothing of it is
-- merged. The merged run keeps its parts (runs.parts). Additive.

-- +goose Up
CREATE TABLE spreads (
    id       TEXT PRIMARY KEY,   -- the merged runs' plan id
    parts    INTEGER NOT NULL,
    start_by TEXT NOT NULL,      -- every part claimed by then, in the store's clock (RFC 3339)
    state    TEXT NOT NULL,      -- running, done, failed
    error    TEXT NOT NULL DEFAULT '',
    created  TEXT NOT NULL
);

CREATE TABLE spread_parts (
    spread  TEXT NOT NULL REFERENCES spreads (id) ON DELETE CASCADE,
    part    INTEGER NOT NULL,
    host    TEXT NOT NULL,       -- the agent that claimed it
    claimed TEXT NOT NULL,
    PRIMARY KEY (spread, part)
);

CREATE TABLE spread_marks (
    spread TEXT NOT NULL REFERENCES spreads (id) ON DELETE CASCADE,
    item   TEXT NOT NULL,        -- the item: test, threads and repeat
    part   INTEGER NOT NULL,
    ready  TEXT NOT NULL,        -- when the part was ready to start it, in the store's clock
    run    TEXT NOT NULL DEFAULT '', -- the part's run of the item (JSON), once measured
    PRIMARY KEY (spread, item, part)
);

-- The parts of a merged run: what each client host measured of its share
-- (result.Part, JSON); '' for a run from one host.
ALTER TABLE runs ADD COLUMN parts TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN parts;
DROP TABLE spread_marks;
DROP TABLE spread_parts;
DROP TABLE spreads;
