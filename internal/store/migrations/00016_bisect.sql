-- qpslab bisect (docs/bisect.md): a bisection of a source tree's commits
-- between a good and a bad one for one suite's test and metric, and its
-- steps, each a commit compiled and measured against a base (the GOOD
-- commit's build for the walk's steps; the first bad commit's parent at
-- the end). Steps are a log: a later row for the same commit and base
-- (a retry with more rounds, a skip) supersedes an earlier one. The runs
-- of a step are normal runs, found by its plan id. Additive.

-- +goose Up
CREATE TABLE bisections (
    id        INTEGER PRIMARY KEY,
    src       TEXT NOT NULL,          -- the source tree (absolute path)
    good      TEXT NOT NULL,          -- the GOOD commit's full hash
    bad       TEXT NOT NULL,          -- the BAD commit's full hash
    suite     TEXT NOT NULL,
    test      TEXT NOT NULL,
    metric    TEXT NOT NULL,
    threshold DOUBLE PRECISION NOT NULL, -- the smallest regression it looks for (a fraction)
    params    TEXT NOT NULL DEFAULT '{}', -- JSON: config, flavor, cflags, rounds, first-parent, the suite's flags
    state     TEXT NOT NULL,          -- running, cannot tell, found, no regression, failed
    started   TEXT NOT NULL,
    ended     TEXT NOT NULL DEFAULT '',
    result    TEXT NOT NULL DEFAULT '' -- one line: the first bad commit, or why it stopped
);

CREATE TABLE bisect_steps (
    bisection   INTEGER NOT NULL REFERENCES bisections (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,      -- the step's order in the log
    commit_hash TEXT NOT NULL,
    commit_time TEXT NOT NULL DEFAULT '',
    base        TEXT NOT NULL DEFAULT '', -- the commit it was measured against ('' for GOOD itself)
    build       TEXT NOT NULL DEFAULT '', -- the build compiled from it
    plan        TEXT NOT NULL DEFAULT '', -- the plan id of its runs
    kind        TEXT NOT NULL,         -- good, bad, cannot tell, skipped
    rel         DOUBLE PRECISION,      -- the metric, it against its base (NULL: not measured)
    lo          DOUBLE PRECISION,
    hi          DOUBLE PRECISION,
    rounds      INTEGER NOT NULL DEFAULT 0,
    note        TEXT NOT NULL DEFAULT '',
    at          TEXT NOT NULL,
    PRIMARY KEY (bisection, seq)
);

-- +goose Down
DROP TABLE bisect_steps;
DROP TABLE bisections;
