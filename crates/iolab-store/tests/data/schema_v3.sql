-- iolab results database, schema version 3: whether a metric is exact (iolab-metrics'
-- MetricDef::exact: a simulation's counts are the same on any machine), so that comparisons
-- of deterministic configurations need no intervals. Definitions stored by schema 2 are not
-- exact.
--
-- Released migrations are never edited (see v1.sql); tests/data/schema_v3.sql is a frozen
-- copy of this file.

ALTER TABLE metric_defs ADD COLUMN exact INTEGER NOT NULL DEFAULT 0;
