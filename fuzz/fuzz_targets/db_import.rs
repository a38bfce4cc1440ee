//! Results-database import (`iolab import OTHER.db`): the input is the other database file's
//! bytes, imported into a fresh in-memory database. SQLite itself checks the file; this finds
//! what iolab assumes of a file that passed (schema version, rows, JSON in columns).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

/// One file per fuzzing process, rewritten for every input.
fn path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| std::env::temp_dir().join(format!("iolab-fuzz-{}.db", std::process::id())))
}

fuzz_target!(|data: &[u8]| {
    let path = path();
    if std::fs::write(path, data).is_err() {
        return;
    }
    let Ok(mut store) = iolab_store::Store::open_in_memory() else {
        return;
    };
    let _ = store.import(path);
});
