//! /proc and /sys parsers (iolab-monitor, iolab-sys). The first byte chooses the parser, the
//! rest is the file's text.
#![no_main]

use iolab_monitor::environment::{
    parse_btime, parse_choice, parse_cpuinfo, parse_os_release, parse_uptime,
};
use iolab_monitor::{diskstats, pressure, process, procstat, vmstat};
use iolab_sys::{block, cpus, meminfo, mountinfo, swaps};
use std::hint::black_box;

use libfuzzer_sys::fuzz_target;

/// Parsers by selector byte; fuzz/seeds.py uses the same numbers.
const PARSERS: &[fn(&str)] = &[
    |t| {
        let _ = black_box(diskstats::parse(t));
    },
    |t| {
        let _ = black_box(diskstats::parse_sysfs_stat(t));
    },
    |t| {
        let _ = black_box(procstat::parse(t));
    },
    |t| {
        let _ = black_box(vmstat::parse(t));
    },
    |t| {
        let _ = black_box(pressure::parse(t));
    },
    |t| {
        let _ = black_box(process::parse_status(t));
    },
    |t| {
        let _ = black_box(process::parse_stat(t));
    },
    |t| {
        let _ = black_box(parse_cpuinfo(t));
    },
    |t| {
        let _ = black_box(parse_os_release(t));
    },
    |t| {
        let _ = black_box(parse_uptime(t));
    },
    |t| {
        let _ = black_box(parse_btime(t));
    },
    |t| {
        let _ = black_box(parse_choice(t));
    },
    |t| {
        let _ = black_box(meminfo::parse(t));
    },
    |t| {
        let _ = black_box(mountinfo::parse(t));
    },
    |t| {
        let _ = black_box(cpus::parse_cpu_list(t));
    },
    |t| {
        let _ = black_box(swaps::parse(t));
    },
    |t| {
        let _ = black_box(block::parse_dev(t));
    },
    |t| {
        let _ = black_box(block::parse_backing_file(t));
    },
];

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    PARSERS[usize::from(which) % PARSERS.len()](text);
});
