-- The fleet (docs/fleet.md): a run stored by an agent names the fleet job
-- and the attempt it belongs to, so that a job River retries never counts a
-- run twice (the runs of its earlier attempts are marked aborted when the
-- next one starts: store.SupersedeJob). Runs of `qpslab run` and imports
-- have none ('' and 0). The fleet's own tables and River's live only in a
-- PostgreSQL store (migration 8, Go: internal/store/fleet.go).

-- +goose Up
ALTER TABLE runs ADD COLUMN job TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN job_attempt INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_job ON runs (job, job_attempt);

-- +goose Down
DROP INDEX runs_job;
ALTER TABLE runs DROP COLUMN job_attempt;
ALTER TABLE runs DROP COLUMN job;
