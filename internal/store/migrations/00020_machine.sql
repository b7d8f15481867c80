-- Which machine wrote a run (its /etc/machine-id): a run left running by
-- an earlier boot of this machine (a reboot, a power loss) is marked
-- aborted when a later qpslab opens the store, and in a store that hosts
-- share (PostgreSQL) only this machine's runs are judged so. '' for runs
-- stored before (judged in a SQLite store only, which is one machine's)
-- and for imports. Additive.

-- +goose Up
ALTER TABLE runs ADD COLUMN machine TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN machine;
