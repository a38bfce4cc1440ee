//! Integration tests of the store's public API, one module per concern (one test binary, so
//! SQLite is linked once).

#[path = "../common/mod.rs"]
mod common;

mod concurrent;
mod export;
mod import;
mod import_export;
mod metric_defs;
mod migrate;
mod resume;
mod roundtrip;
