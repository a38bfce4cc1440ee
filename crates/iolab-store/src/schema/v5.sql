-- iolab results database, schema version 5: what another tool printed. A run of the `exec`
-- kind (fio, iperf3, sysbench, … under iolab's harness) keeps the tool's raw output — stdout,
-- stderr, its result files, how it ended — so that a parser fixed later can read old runs
-- again (`iolab reparse`) and nobody has to trust a number whose source is gone.
--
-- Released migrations are never edited (see v1.sql); tests/data/schema_v5.sql is a frozen
-- copy of this file.

CREATE TABLE run_outputs (
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    name    TEXT NOT NULL,                            -- `stdout`, `stderr`, `file:fio.json`, …
    content BLOB NOT NULL,
    PRIMARY KEY (run_id, ordinal)
) WITHOUT ROWID;
