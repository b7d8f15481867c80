-- The variance components of this host's comparisons (Kalibera and Jones:
-- the variance at each level of repetition), which --repeat auto plans
-- repeats and slices from: per host, suite, test, thread count and
-- conditions, the noise of one round's log ratio about its repeat's mean
-- at the slice length measured, and, from comparisons of two different
-- labels (an A/A ratio has no repeat effect), the spread of the repeats'
-- own effects. Keyed by the host's fingerprint id, one row per kind of
-- comparison: the newest wins. Additive.

-- +goose Up
CREATE TABLE variance_components (
    host_id       TEXT NOT NULL,
    suite         TEXT NOT NULL,
    test          TEXT NOT NULL,
    threads       INTEGER NOT NULL,
    conditions    TEXT NOT NULL,
    kind          TEXT NOT NULL,             -- a/a or a/b: the comparison it was measured in
    pool          TEXT NOT NULL,             -- reads or writes
    slice_seconds DOUBLE PRECISION NOT NULL, -- the slices' measured length
    sigma_within  DOUBLE PRECISION NOT NULL, -- σ of a round's log ratio about its repeat's mean
    sigma_between DOUBLE PRECISION NOT NULL, -- σ of a repeat's own effect (0 for a/a: not measured)
    rounds        INTEGER NOT NULL,
    repeats       INTEGER NOT NULL,
    plan_id       TEXT NOT NULL,
    measured      TEXT NOT NULL,
    PRIMARY KEY (host_id, suite, test, threads, conditions, kind)
);

-- +goose Down
DROP TABLE variance_components;
