-- iolab results database, schema version 4: who runs an experiment. A `running` experiment
-- whose process was killed (kill -9, the OOM killer, a power cut) cannot mark itself; its
-- owner (iolab_sys::process::ProcessIdentity as JSON: host, boot id, pid, start time) lets
-- readers tell it from one still running and show it as interrupted. NULL once the
-- experiment ends, and for experiments stored by schema 3 or imported.
--
-- Released migrations are never edited (see v1.sql); tests/data/schema_v4.sql is a frozen
-- copy of this file.

ALTER TABLE experiments ADD COLUMN owner_json TEXT;
