//! WML (`.f` files): lex and parse, validate, lower to an engine workload. Any error is fine;
//! a panic, a hang or runaway memory is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(parsed) = iolab_wml::parse_str("fuzz.f", text) else {
        return;
    };
    if iolab_wml::validate(&parsed).is_ok() {
        let _ = iolab_wml::lower(&parsed, &iolab_wml::LowerOptions::default());
    }
});
