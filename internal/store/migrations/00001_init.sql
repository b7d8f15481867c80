-- One schema for SQLite and PostgreSQL: keys are made by qpslab (no
-- auto-increment), times are RFC 3339 UTC text (they sort), JSON is text,
-- and BYTEA holds blobs in both (SQLite keeps a blob whatever the type).

-- +goose Up
CREATE TABLE hosts (
    id          TEXT PRIMARY KEY, -- hash of the fingerprint's stable fields
    fingerprint TEXT NOT NULL,    -- qpslab host check --json
    first_seen  TEXT NOT NULL
);

CREATE TABLE builds (
    name    TEXT PRIMARY KEY,
    flavor  TEXT NOT NULL,
    version TEXT NOT NULL
);

CREATE TABLE configs (
    id      TEXT PRIMARY KEY, -- name@sha12, or the name alone for imports
    name    TEXT NOT NULL,
    content TEXT
);

CREATE TABLE runs (
    id             TEXT PRIMARY KEY,
    suite          TEXT NOT NULL,
    test           TEXT NOT NULL,
    build          TEXT NOT NULL REFERENCES builds (name),
    config         TEXT NOT NULL REFERENCES configs (id),
    config_name    TEXT NOT NULL,
    host_id        TEXT REFERENCES hosts (id),
    hostname       TEXT NOT NULL,
    threads        INTEGER NOT NULL,
    loop_mode      TEXT NOT NULL,
    rate           DOUBLE PRECISION NOT NULL,
    arrivals       TEXT NOT NULL,
    params         TEXT NOT NULL, -- JSON
    seed           TEXT NOT NULL, -- a uint64, which BIGINT cannot hold
    status         TEXT NOT NULL, -- running, ok, failed, aborted
    error          TEXT NOT NULL,
    started        TEXT NOT NULL,
    ended          TEXT NOT NULL,
    warmup         DOUBLE PRECISION NOT NULL,
    duration       DOUBLE PRECISION NOT NULL,
    qpslab_version TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    source         TEXT NOT NULL, -- run, or the importer's name
    pid            INTEGER NOT NULL, -- the writing process, while running
    reported       DOUBLE PRECISION NOT NULL,
    reported_unit  TEXT NOT NULL,
    totals         TEXT NOT NULL, -- JSON, without the histograms
    response_hist  BYTEA,
    service_hist   BYTEA
);
CREATE INDEX runs_label ON runs (build, config_name, test, threads);

CREATE TABLE samples (
    run_id        TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    second        INTEGER NOT NULL,
    events        BIGINT NOT NULL,
    statements    BIGINT NOT NULL,
    n_rows        BIGINT NOT NULL,
    errors        BIGINT NOT NULL,
    retries       BIGINT NOT NULL,
    late          BIGINT NOT NULL,
    latency       TEXT NOT NULL, -- JSON: response and service summaries
    response_hist BYTEA,
    service_hist  BYTEA,
    PRIMARY KEY (run_id, second)
);

CREATE TABLE metrics (
    run_id          TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    op              TEXT NOT NULL,
    cpu_o           DOUBLE PRECISION NOT NULL,
    cs_o            DOUBLE PRECISION NOT NULL,
    r_o             DOUBLE PRECISION NOT NULL,
    rkb_o           DOUBLE PRECISION NOT NULL,
    wkb_o           DOUBLE PRECISION NOT NULL,
    o_s             DOUBLE PRECISION NOT NULL,
    host_cpu_us_o   DOUBLE PRECISION NOT NULL,
    server_cpu_us_o DOUBLE PRECISION NOT NULL,
    client_cpu_us_o DOUBLE PRECISION NOT NULL,
    hw              TEXT NOT NULL -- JSON: result.HW, averages, series, flags
);

-- +goose Down
DROP TABLE metrics;
DROP TABLE samples;
DROP TABLE runs;
DROP TABLE configs;
DROP TABLE builds;
DROP TABLE hosts;
