-- Paired runs: the plan (one qpslab run) a run belongs to, how that plan
-- put it beside the other labels' runs (slices, tests or passes: see
-- result.Paired*), and its rounds, one slice or one whole run per repeat
-- and round, so that any later analysis can pair them; and the length of
-- a sample that covers less than a second. Runs stored before
-- this have no plan and no rounds: they are compared unpaired.

-- +goose Up
ALTER TABLE runs ADD COLUMN plan_id TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN pairing TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_plan ON runs (plan_id);
-- A sample shorter than a second (the end of a test's slice): its length.
ALTER TABLE samples ADD COLUMN dur DOUBLE PRECISION NOT NULL DEFAULT 0;
CREATE TABLE rounds (
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    repeat_no  INTEGER NOT NULL,
    round_no   INTEGER NOT NULL,
    started    TEXT NOT NULL,
    seconds    DOUBLE PRECISION NOT NULL,
    events     BIGINT NOT NULL,
    statements BIGINT NOT NULL,
    n_rows     BIGINT NOT NULL,
    value      DOUBLE PRECISION NOT NULL,
    idle_cpu   DOUBLE PRECISION NOT NULL, -- % of one CPU, the plan's other servers; -1 unknown
    figures    TEXT NOT NULL DEFAULT '{}', -- JSON: the slice's hardware cost per op by metric name
    PRIMARY KEY (run_id, repeat_no, round_no)
);

-- +goose Down
DROP TABLE rounds;
ALTER TABLE samples DROP COLUMN dur;
DROP INDEX runs_plan;
ALTER TABLE runs DROP COLUMN pairing;
ALTER TABLE runs DROP COLUMN plan_id;
