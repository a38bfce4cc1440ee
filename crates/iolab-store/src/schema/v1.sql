-- iolab results database, schema version 1.
--
-- Released migrations are never edited: a change is a new file (v2.sql, …) appended to
-- MIGRATIONS in src/schema.rs. tests/data/schema_v1.sql is a frozen copy of this file and a
-- unit test fails if the two differ.
--
-- Conventions (see the crate docs for the reasoning):
--   * u64 values (seeds, counts, nanoseconds) are stored as INTEGER by reinterpreting their
--     bits as i64: lossless, and only seeds ever reach 2^63 (they then look negative to SQL).
--   * Times of day are *_ns columns: nanoseconds since the Unix epoch, UTC.
--   * REAL columns hold NULL for NaN (SQLite cannot store NaN).
--   * *_json columns hold JSON text; BLOB columns hold LEB128 varints (src/codec.rs).

PRAGMA application_id = 1768909922;  -- 0x696f6c62, "iolb": marks the file as iolab's

-- Machine descriptions (kernel, CPU, memory, virtualization, device model, filesystem,
-- mount options, scheduler, tunables…) as JSON, stored once and shared by every run that saw
-- the same one: consecutive runs of a configuration almost always do.
CREATE TABLE environments (
    id   INTEGER PRIMARY KEY,
    json TEXT NOT NULL UNIQUE
);

CREATE TABLE experiments (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: users quote ids in notes
    uuid          TEXT NOT NULL UNIQUE,               -- survives import; detects duplicates
    name          TEXT NOT NULL,
    source        TEXT NOT NULL,                      -- the file the experiment came from
    spec_json     TEXT NOT NULL,                      -- the fully resolved experiment
    seed          INTEGER NOT NULL,
    created_ns    INTEGER NOT NULL,
    finished_ns   INTEGER,
    status        TEXT NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running', 'done', 'interrupted', 'failed')),
    iolab_version TEXT NOT NULL,
    host_env_id   INTEGER NOT NULL REFERENCES environments (id)
);

-- One point of the experiment's matrix: a system configuration × workload.
CREATE TABLE configs (
    id            INTEGER PRIMARY KEY,
    experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    label         TEXT NOT NULL,
    factors_json  TEXT NOT NULL,                      -- JSON object: factor → value
    converged     INTEGER,                            -- stopping rule verdict; NULL = not yet
    outcome       TEXT,                               -- why the repetitions stopped
    UNIQUE (experiment_id, label)
);

-- One repetition of one configuration, written in one transaction with all of its children.
CREATE TABLE runs (
    id         INTEGER PRIMARY KEY,
    config_id  INTEGER NOT NULL REFERENCES configs (id) ON DELETE CASCADE,
    repetition INTEGER NOT NULL,
    seed       INTEGER NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'interrupted')),
    error      TEXT,
    started_ns INTEGER NOT NULL,
    ended_ns   INTEGER NOT NULL,
    elapsed_ns INTEGER NOT NULL,                      -- the measured interval
    env_id     INTEGER NOT NULL REFERENCES environments (id)
);
CREATE INDEX runs_by_config ON runs (config_id, repetition);
-- A failed or interrupted repetition may be retried; a successful one is final.
CREATE UNIQUE INDEX runs_one_ok_per_repetition ON runs (config_id, repetition)
    WHERE status = 'ok';

CREATE TABLE run_metrics (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name   TEXT NOT NULL,
    value  REAL,
    unit   TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID;

CREATE TABLE flowop_stats (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ordinal      INTEGER NOT NULL,
    name         TEXT NOT NULL,
    kind         TEXT NOT NULL,
    ops          INTEGER NOT NULL,
    bytes        INTEGER NOT NULL,
    errors       INTEGER NOT NULL,
    lat_count    INTEGER NOT NULL,
    lat_mean_ns  REAL,
    lat_stdev_ns REAL,
    lat_min_ns   INTEGER NOT NULL,
    lat_p50_ns   INTEGER NOT NULL,
    lat_p90_ns   INTEGER NOT NULL,
    lat_p99_ns   INTEGER NOT NULL,
    lat_p999_ns  INTEGER NOT NULL,
    lat_max_ns   INTEGER NOT NULL,
    histogram    BLOB NOT NULL,                       -- (upper_ns delta, count) varint pairs
    extra_json   TEXT NOT NULL,
    PRIMARY KEY (run_id, ordinal)
) WITHOUT ROWID;

-- Work per fixed interval of the run (throughput over time, steady state).
CREATE TABLE interval_series (
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ordinal  INTEGER NOT NULL,
    name     TEXT NOT NULL,
    width_ns INTEGER NOT NULL,
    ops      BLOB NOT NULL,                           -- varints, one per interval
    bytes    BLOB NOT NULL,
    PRIMARY KEY (run_id, ordinal)
) WITHOUT ROWID;

-- Monitor time series: one row per metric of a run, one row per sample below it.
CREATE TABLE monitor_metrics (
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    name    TEXT NOT NULL,
    unit    TEXT NOT NULL,
    UNIQUE (run_id, ordinal)
);

CREATE TABLE monitor_samples (
    metric_id INTEGER NOT NULL REFERENCES monitor_metrics (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    t_ns      INTEGER NOT NULL,                       -- since the run's start, monotonic clock
    value     REAL,
    PRIMARY KEY (metric_id, seq)
) WITHOUT ROWID;

-- Checks' verdicts. run_id is NULL for a finding about a whole configuration
-- (did-not-converge); config_id is always set so a report can group by configuration.
CREATE TABLE findings (
    id            INTEGER PRIMARY KEY,
    config_id     INTEGER NOT NULL REFERENCES configs (id) ON DELETE CASCADE,
    run_id        INTEGER REFERENCES runs (id) ON DELETE CASCADE,
    check_id      TEXT NOT NULL,
    severity      TEXT NOT NULL CHECK (severity IN ('info', 'warning', 'error')),
    evidence_json TEXT NOT NULL,
    explanation   TEXT NOT NULL,
    fix           TEXT NOT NULL
);
CREATE INDEX findings_by_config ON findings (config_id);
CREATE INDEX findings_by_run ON findings (run_id);
