-- Each A/A plan's ratio of a test on this host (the same build and config
-- as two labels, paired): its log relative value and that value's standard
-- error, one row per plan. Their spread over plans, less what each plan's
-- own standard error explains, is the between-run variance of the test on
-- the host (analysis.BetweenRuns), which a comparison's interval takes in:
-- another run of the same labels on this host lands elsewhere by that much.
-- Keyed by the host's fingerprint id and the plan. Additive.

-- +goose Up
CREATE TABLE run_effects (
    host_id    TEXT NOT NULL,
    suite      TEXT NOT NULL,
    test       TEXT NOT NULL,
    threads    INTEGER NOT NULL,
    conditions TEXT NOT NULL,
    plan_id    TEXT NOT NULL,
    log_ratio  DOUBLE PRECISION NOT NULL, -- ln of the plan's A/A relative value
    se         DOUBLE PRECISION NOT NULL, -- its standard error (of the log)
    measured   TEXT NOT NULL,
    PRIMARY KEY (host_id, suite, test, threads, conditions, plan_id)
);

-- +goose Down
DROP TABLE run_effects;
