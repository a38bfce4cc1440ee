//! Replay file lists (`install.list`, `boot.list`, `days.list`). The first byte chooses the
//! role: even for a plain list, odd for one with `[day N]` sections.
#![no_main]

use std::path::Path;

use iolab_replay::list::{parse, Role};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&role, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let role = if role % 2 == 0 {
        Role::Plain
    } else {
        Role::Days
    };
    let _ = parse(Path::new("fuzz.list"), text, role);
});
