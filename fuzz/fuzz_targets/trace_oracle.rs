//! libCacheSim's oracleGeneral traces, with and without accepting 0-based next-access times.
#![no_main]

use std::path::Path;

use iolab_tracefile::OracleReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut reader = OracleReader::new(rest, Path::new("fuzz.oracleGeneral"));
    if mode % 2 == 1 {
        reader = reader.accept_zero_based();
    }
    for r in reader.by_ref() {
        if r.is_err() {
            break;
        }
    }
    let _ = reader.zero_based();
});
