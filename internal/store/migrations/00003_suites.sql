-- Suites as plug-ins: a run's place in its suite (its position in the run
-- order, its role, its groups in each report layout) and its verdicts, and
-- the per-operation-kind part of each second and an open loop's backlog. Runs stored before this are
-- sysbench's; their role, step and groups are derived from their params
-- when the store opens (store.upgradeRuns), which also sets their
-- schema_version to 3.

-- +goose Up
ALTER TABLE runs ADD COLUMN step INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN role TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN groups TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN verdicts TEXT NOT NULL DEFAULT '[]';
ALTER TABLE samples ADD COLUMN ops TEXT;
ALTER TABLE samples ADD COLUMN backlog BIGINT NOT NULL DEFAULT 0;
UPDATE runs SET suite = 'sysbench' WHERE suite = '';
CREATE INDEX runs_suite ON runs (suite, build, config_name);

-- +goose Down
DROP INDEX runs_suite;
ALTER TABLE samples DROP COLUMN backlog;
ALTER TABLE samples DROP COLUMN ops;
ALTER TABLE runs DROP COLUMN verdicts;
ALTER TABLE runs DROP COLUMN groups;
ALTER TABLE runs DROP COLUMN role;
ALTER TABLE runs DROP COLUMN step;
