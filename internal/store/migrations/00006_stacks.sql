-- Where a run's server threads were during its window: one row per source
-- (pmp: thread stacks captured every --pmp seconds; perf: on-CPU samples),
-- as result.Stacks JSON (the collapsed stacks, their counts and thread
-- states, the capture tool, the pause each capture caused). Migration 4 is
-- Go code (store.migrate4), so this is 5.

-- +goose Up
CREATE TABLE stacks (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    data   TEXT NOT NULL,
    PRIMARY KEY (run_id, source)
);

-- +goose Down
DROP TABLE stacks;
