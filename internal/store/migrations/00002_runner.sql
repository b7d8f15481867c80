-- Who is writing a running run: the machine's boot id, the process id and
-- its start time, so that a stale run is recognised on this machine only
-- (two hosts may share a hostname) and a reused process id is not taken
-- for the writer.

-- +goose Up
ALTER TABLE runs ADD COLUMN runner TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN runner;
