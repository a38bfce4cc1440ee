//! Experiment files (TOML): load gives the whole plan (parse, validate every section and
//! configuration, resolve). The file is named as if it were in examples/, so that the
//! workloads the seeds name (`workloads/…`, `fio/…`) resolve as they do for the real files.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let name = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/fuzz.toml"
    ));
    let _ = iolab_experiment::load_str(name, text);
});
