-- iolab results database, schema version 2: the definitions of the metrics an experiment's
-- runs record (iolab-metrics' MetricDef), stored with the experiment so that `show`,
-- `compare`, `export` and reports know each metric's unit and direction from the database
-- alone. An experiment from schema 1 has none; readers then use iolab-metrics' COMMON table.
--
-- Released migrations are never edited (see v1.sql); tests/data/schema_v2.sql is a frozen
-- copy of this file.

CREATE TABLE metric_defs (
    experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    ordinal       INTEGER NOT NULL,                   -- declaration order: tables show it
    name          TEXT NOT NULL,
    unit          TEXT NOT NULL,
    better        TEXT CHECK (better IN ('higher', 'lower')),  -- NULL: neither
    title         TEXT NOT NULL,
    description   TEXT NOT NULL,
    headline      INTEGER NOT NULL,                   -- shown and compared by default
    PRIMARY KEY (experiment_id, name)
) WITHOUT ROWID;
