//! iolab's binary trace format: the header, then every record until the first error.
#![no_main]

use std::path::Path;

use iolab_tracefile::IolabReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(reader) = IolabReader::new(data, Path::new("fuzz.iolt")) else {
        return;
    };
    let _ = reader.info();
    let _ = reader.record_count();
    for r in reader {
        if r.is_err() {
            break;
        }
    }
});
