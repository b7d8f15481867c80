-- The host's noise floor (qpslab run --aa): per host, test, thread count,
-- conditions and metric, how far an A/A run (one build and config as two
-- labels, paired) found a server from itself, so that comparisons on that
-- host flag no change inside it. Keyed by the host's fingerprint id: a
-- changed host has none until it is calibrated again.

-- +goose Up
CREATE TABLE noise_floor (
    host_id    TEXT NOT NULL,
    suite      TEXT NOT NULL,
    test       TEXT NOT NULL,
    threads    INTEGER NOT NULL,
    conditions TEXT NOT NULL,
    metric     TEXT NOT NULL,
    floor      DOUBLE PRECISION NOT NULL, -- a fraction: 0.03 is ±3 %
    rel        DOUBLE PRECISION NOT NULL, -- the A/A relative value
    lo         DOUBLE PRECISION NOT NULL, -- its interval
    hi         DOUBLE PRECISION NOT NULL,
    rounds     INTEGER NOT NULL,
    pairing    TEXT NOT NULL,
    plan_id    TEXT NOT NULL,
    build      TEXT NOT NULL,
    config     TEXT NOT NULL,
    budget     TEXT NOT NULL, -- the A/A run's seconds, repeats and slices, as params JSON
    measured   TEXT NOT NULL,
    PRIMARY KEY (host_id, suite, test, threads, conditions, metric)
);

-- +goose Down
DROP TABLE noise_floor;
