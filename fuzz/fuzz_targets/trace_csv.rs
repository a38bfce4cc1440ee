//! CSV traces: the first line is the column spec (`--csv` option's text; empty: the default),
//! the rest the trace.
#![no_main]

use std::path::Path;

use iolab_tracefile::{CsvReader, CsvSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (spec, trace) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(spec) = std::str::from_utf8(spec) else {
        return;
    };
    let spec = if spec.is_empty() {
        CsvSpec::default()
    } else {
        match CsvSpec::parse(spec) {
            Ok(s) => s,
            Err(_) => return,
        }
    };
    for r in CsvReader::new(trace, Path::new("fuzz.csv"), spec) {
        if r.is_err() {
            break;
        }
    }
});
