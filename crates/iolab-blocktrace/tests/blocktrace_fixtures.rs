//! The block trace parser and summarizer on `trace_pipe` text captured on Linux 6.18 (see
//! tests/fixtures/README.md).

use iolab_blocktrace::{
    format_blkparse, parse_line, parse_lost_line, Action, Bucket, Op, Summarizer, TraceDevice,
};
use iolab_sys::DevT;

const DD: &str = include_str!("fixtures/tracefs_block_dd_direct.txt");
const EXT4: &str = include_str!("fixtures/tracefs_block_ext4_fdatasync.txt");
const MKFS: &str = include_str!("fixtures/tracefs_block_mkfs.txt");
const LOST: &str = include_str!("fixtures/tracefs_block_lost.txt");

fn summarize(text: &str) -> iolab_blocktrace::BlockTrace {
    let times: Vec<u64> = text
        .lines()
        .filter_map(parse_line)
        .map(|e| e.time_ns)
        .collect();
    let start = times.first().copied().unwrap_or(0);
    let stop = times.last().copied().unwrap_or(0) + 1000;
    let mut s = Summarizer::new(
        TraceDevice::whole("loop1", DevT::new(7, 1)),
        start,
        1_000_000,
        true,
    );
    for line in text.lines() {
        s.push_line(line);
    }
    s.finish(stop, "local", Vec::new(), Vec::new())
}

#[test]
fn every_captured_line_parses() {
    for text in [DD, EXT4, MKFS] {
        for line in text.lines() {
            let e = parse_line(line).unwrap_or_else(|| panic!("did not parse: {line}"));
            assert_eq!(e.dev, DevT::new(7, 1));
        }
    }
    let lost: Vec<_> = LOST.lines().filter_map(parse_lost_line).collect();
    assert_eq!(lost.len(), 2);
    assert_eq!(lost[0].count + lost[1].count, 6721 + 2075);
}

#[test]
fn direct_io_dd() {
    // dd bs=1M count=4 oflag=direct, then dd bs=64k count=4 iflag=direct.
    let t = summarize(DD);
    assert_eq!(t.writes.requests, 4);
    assert_eq!(t.writes.bytes, 4 << 20);
    assert_eq!(t.reads.requests, 4);
    assert_eq!(t.reads.bytes, 4 * 65536);
    assert_eq!(t.writes.sequential_fraction(), Some(1.0));
    assert_eq!(t.reads.sequential_fraction(), Some(1.0));
    assert_eq!(
        t.writes.sizes.mode(),
        Some(Bucket {
            low: 1 << 20,
            count: 4
        })
    );
    assert_eq!(
        t.reads.sizes.mode(),
        Some(Bucket {
            low: 65536,
            count: 4
        })
    );
    assert_eq!(t.sizes.total(), 8);
    assert_eq!(t.latency.unwrap().count, 8);
    assert_eq!(t.unmatched_completions, 0);
    assert_eq!(t.in_flight_at_end, 0);
    assert_eq!(t.flushes.requests, 0);
    assert_eq!(t.bios.as_ref().unwrap().bios, 8);
    let first = format_blkparse(&t.records[1], t.start_ns);
    assert_eq!(
        first,
        "  7,1    1        2     0.000190000 22764  D  WS 0 + 2048 [dd]"
    );
    let complete = format_blkparse(&t.records[2], t.start_ns);
    assert_eq!(
        complete,
        "  7,1    1        3     0.005659000    22  C  WS 0 + 2048 [0]"
    );
}

#[test]
fn ext4_fdatasync_without_fua() {
    // Five 4 KiB pwrite + fdatasync on ext4 over a loop device (queue/fua = 0): each
    // fdatasync is a data write, a journal write, and a jbd2 commit block submitted as
    // FWFSM (preflush + FUA), which the flush machinery turns into FF, WSM, FF.
    let t = summarize(EXT4);
    assert_eq!(t.flushes.requests, 10);
    assert_eq!(t.fua.requests, 0);
    let bios = t.bios.as_ref().unwrap();
    assert_eq!(bios.preflush, 5);
    assert_eq!(bios.fua, 5);
    assert_eq!(t.flush_sequence_completions, 5);
    assert_eq!(t.unmatched_completions, 0);
    assert_eq!(t.in_flight_at_end, 0);
    assert_eq!(t.flushes.latency.unwrap().count, 10);
    assert_eq!(t.queue_time.unwrap().count, 5);
    let app_writes = t
        .records
        .iter()
        .filter(|e| e.action == Action::Issue && e.comm.as_deref() == Some("python3"))
        .count();
    assert_eq!(app_writes, 5);
    assert_eq!(t.writes.sizes.buckets.last().unwrap().low, 4096);
    assert_eq!(t.meta, t.writes.requests - 5);
}

#[test]
fn mkfs_discard_write_zeroes_and_empty_flush() {
    let t = summarize(MKFS);
    assert_eq!(t.discards.requests, 2);
    assert_eq!(t.discards.bytes, 1024 + 256 * 1024 * 1024);
    // Write-zeroes is `N` on 6.18.
    assert_eq!(t.other.requests, 2);
    assert_eq!(t.other.bytes, 65536 + 3072);
    assert_eq!(t.flushes.requests, 2);
    assert_eq!(t.flush_sequence_completions, 2);
    assert_eq!(t.readahead, 2);
    assert_eq!(t.reads.requests, 4);
    assert_eq!(t.writes.requests, 0);
    assert_eq!(t.unmatched_completions, 0);
    assert!(t
        .records
        .iter()
        .any(|e| e.kind.op == Op::Other && e.rwbs == "NS"));
}

#[test]
fn lost_events_are_counted() {
    let t = summarize(LOST);
    assert_eq!(t.lost.in_stream, 6721 + 2075);
    assert_eq!(t.lost.total, 6721 + 2075);
    // Completions whose issue was lost.
    assert_eq!(t.unmatched_completions, 7);
}

fn close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-9 * x.abs().max(1.0)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| close(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| close(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn json_round_trip() {
    let t = summarize(EXT4);
    let json = serde_json::to_string(&t).unwrap();
    let back: iolab_blocktrace::BlockTrace = serde_json::from_str(&json).unwrap();
    // Floats may differ in the last bit (serde_json parses approximately).
    let a: serde_json::Value = serde_json::from_str(&json).unwrap();
    let b = serde_json::to_value(&back).unwrap();
    assert!(close(&a, &b), "{a}\n{b}");
    assert_eq!(back.records, t.records);
    // A flush in flight across a whole interval counts there.
    for iv in &t.intervals {
        if iv.mean_inflight > 0.0 {
            assert!(iv.max_inflight >= 1, "{iv:?}");
        }
    }
}
