//! Saved block traces: `iolab trace --save` on a real loop device, `iolab trace convert`
//! between iolab's format and libCacheSim's oracleGeneral and CSV, and bad traces →
//! located errors, exit 2, no output left behind.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use common::{assert_clean_failure, require_root, run, stderr, LoopFs, Scratch};
use iolab_tracefile::{BlockRequest, Flags, IolabReader, IolabWriter, Op, OracleReader, TraceInfo};

fn write_trace(path: &Path, reqs: &[BlockRequest]) {
    let info = TraceInfo {
        device: "loop9".into(),
        ..TraceInfo::default()
    };
    let mut w = IolabWriter::create(path, &info).unwrap();
    for r in reqs {
        w.write(r).unwrap();
    }
    w.finish().unwrap();
}

fn req(t: u64, op: Op, offset: u64, len: u32) -> BlockRequest {
    BlockRequest {
        time_ns: t,
        offset,
        len,
        latency_ns: Some(100),
        op,
        flags: Flags::default(),
    }
}

/// A small trace: 1 MiB written sequentially in 64 KiB requests, read back, a flush.
fn small_trace(path: &Path) -> Vec<BlockRequest> {
    let mut reqs: Vec<_> = (0..16)
        .map(|i| req(i * 1_000_000, Op::Write, i * 65536, 65536))
        .collect();
    reqs.push(req(2_000_000_000, Op::Flush, 0, 0));
    reqs.extend((0..16).map(|i| req(3_000_000_000 + i, Op::Read, i * 65536, 65536)));
    write_trace(path, &reqs);
    reqs
}

/// `iolab trace convert IN OUT --to TO EXTRA…`.
fn convert(input: &str, output: &str, to: &str, extra: &[&str]) -> Output {
    let mut args = vec!["trace", "convert", input, output, "--to", to];
    args.extend_from_slice(extra);
    run(&args)
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn convert_round_trips_through_every_format() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("t.iolt");
    small_trace(&src);
    let og = d.path().join("t.oracleGeneral.bin");
    let o = convert(
        src.to_str().unwrap(),
        og.to_str().unwrap(),
        "oracleGeneral",
        &["--block-size", "4K"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("33 iolab records → 512 oracleGeneral records"),
        "{err}"
    );
    assert!(err.contains("256 distinct objects"), "{err}");
    assert!(o.stdout.is_empty());
    let recs: Vec<_> = OracleReader::open(&og)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(recs.len(), 512);
    // Every block is written once (at second 0) and read once (at second 3).
    assert_eq!(recs[0].next_access, Some(256));
    assert_eq!(recs[256].next_access, None);
    assert_eq!(
        (recs[256].obj_id, recs[256].time, recs[256].size),
        (0, 3, 4096)
    );

    // oracleGeneral → CSV → oracleGeneral: the same records.
    let csv = d.path().join("t.csv");
    let og2 = d.path().join("t2.oracleGeneral");
    for (i, o, to) in [(&og, &csv, "csv"), (&csv, &og2, "oracleGeneral")] {
        let out = convert(i.to_str().unwrap(), o.to_str().unwrap(), to, &[]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(fs::read(&og).unwrap(), fs::read(&og2).unwrap());

    // oracleGeneral → iolab at 64 KiB: object i at byte i × 65536.
    let back = d.path().join("back.iolt");
    let o = convert(
        og.to_str().unwrap(),
        back.to_str().unwrap(),
        "iolab",
        &["--block-size", "64K"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Vec<_> = IolabReader::open(&back)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(r.len(), 512);
    assert_eq!(
        (r[3].offset, r[3].len, r[3].op),
        (3 * 65536, 4096, Op::Read)
    );
    assert_eq!(r[256].time_ns, 3_000_000_000);

    // iolab → iolab at 64 KiB blocks → CSV: 32 rows (flush dropped).
    let csv64 = d.path().join("t64.csv");
    let o = convert(
        src.to_str().unwrap(),
        csv64.to_str().unwrap(),
        "csv",
        &["--block-size", "65536"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = fs::read_to_string(&csv64).unwrap();
    assert_eq!(text.lines().count(), 1 + 32);
    assert_eq!(text.lines().nth(17), Some("3000000000,0,65536,read"));

    // A libCacheSim-style CSV with its own columns.
    let lcs = d.path().join("lcs.txt");
    fs::write(&lcs, "7 get 10\n8 set 11\n9 get 10\n").unwrap();
    let og3 = d.path().join("lcs.oracleGeneral");
    let o = convert(
        lcs.to_str().unwrap(),
        og3.to_str().unwrap(),
        "oracleGeneral",
        &[
            "--csv",
            "time-col=1,op-col=2,obj-id-col=3,obj-size-col=0,header=false,delimiter=space",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Vec<_> = OracleReader::open(&og3)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let ids: Vec<_> = r
        .iter()
        .map(|x| (x.time, x.obj_id, x.next_access))
        .collect();
    assert_eq!(ids, [(7, 10, Some(2)), (8, 11, None), (9, 10, None)]);
}

#[test]
fn bad_traces_are_located_and_leave_nothing() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("t.iolt");
    small_trace(&src);
    let out = d.path().join("out.oracleGeneral");
    let convert_bad = |input: &Path, extra: &[&str]| {
        convert(
            input.to_str().unwrap(),
            out.to_str().unwrap(),
            "oracleGeneral",
            extra,
        )
    };

    // Truncated: cut inside record 20.
    let cut = d.path().join("cut.iolt");
    let b = fs::read(&src).unwrap();
    fs::write(&cut, &b[..96 + 20 * 32 + 7]).unwrap();
    let o = convert_bad(&cut, &[]);
    assert_clean_failure(
        &o,
        2,
        "cut.iolt: record 20 (byte 736): truncated record: expected 32 bytes, found 7",
    );
    assert!(stderr(&o).contains("cut short"), "{}", stderr(&o));

    // An iolab trace read as oracleGeneral: its header is no oracleGeneral record.
    let o = convert_bad(&src, &["--from", "oracleGeneral"]);
    assert_clean_failure(&o, 2, "bad next-access index");
    let err = stderr(&o);
    assert!(
        err.contains("t.iolt: record ") && err.contains("is this an oracleGeneral trace?"),
        "{err}"
    );

    // An oracleGeneral file read as iolab: wrong magic.
    let og = d.path().join("x.oracleGeneral");
    fs::write(&og, [0u8; 48]).unwrap();
    let o = convert_bad(&og, &["--from", "iolab"]);
    assert_clean_failure(&o, 2, "x.oracleGeneral: header, byte 0: not an iolab trace");

    // A name that says nothing and no magic.
    let odd = d.path().join("trace.dat");
    fs::write(&odd, b"hello").unwrap();
    let o = convert_bad(&odd, &[]);
    assert_clean_failure(&o, 2, "cannot tell the trace format");
    assert!(stderr(&o).contains("--from"), "{}", stderr(&o));

    // CSV with a bad field.
    let csv = d.path().join("bad.csv");
    fs::write(&csv, "time,obj_id,obj_size,op\n1,2,3,read\n1,x,3,read\n").unwrap();
    let o = convert_bad(&csv, &[]);
    assert_clean_failure(
        &o,
        2,
        "bad.csv:3:3: bad obj-id \"x\": expected an unsigned integer",
    );

    // Bad options.
    let o = convert_bad(&src, &["--block-size", "1000"]);
    assert_clean_failure(&o, 2, "multiple of 512");
    let o = convert("a", "b", "parquet", &[]);
    assert_clean_failure(&o, 2, "unknown trace format \"parquet\"");
    let o = convert_bad(&d.path().join("missing.iolt"), &[]);
    assert_clean_failure(&o, 2, "missing.iolt");

    let left = entries(d.path());
    assert_eq!(
        left,
        [
            "bad.csv",
            "cut.iolt",
            "t.iolt",
            "trace.dat",
            "x.oracleGeneral"
        ]
    );
}

fn loop_device(image: &Path, size: u64) -> String {
    fs::File::create(image).unwrap().set_len(size).unwrap();
    let o = Command::new("losetup")
        .args(["-f", "--show", "--direct-io=on"])
        .arg(image)
        .output()
        .unwrap();
    assert!(o.status.success(), "losetup: {o:?}");
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

struct Detach(String);

impl Drop for Detach {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// The acceptance: a 64 MiB direct write, saved, converts to oracleGeneral with a record
/// per block of every request, and the write covers all 64 MiB / block size blocks.
#[test]
#[ignore = "needs root: loop devices and tracefs"]
fn saved_direct_write_converts_to_one_record_per_block() {
    require_root();
    let d = tempfile::Builder::new()
        .prefix("iolab-trace-save")
        .tempdir_in("/var/tmp")
        .unwrap();
    let dev = loop_device(&d.path().join("img"), 128 << 20);
    let _detach = Detach(dev.clone());
    let saved = d.path().join("w.iolt");
    let o = run(&[
        "trace",
        "--dev",
        &dev,
        "--save",
        saved.to_str().unwrap(),
        "--",
        "dd",
        "if=/dev/zero",
        &format!("of={dev}"),
        "bs=1M",
        "count=64",
        "oflag=direct",
        "status=none",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("requests saved to"), "{}", stderr(&o));
    let r = IolabReader::open(&saved).unwrap();
    assert_eq!(r.info().device, dev.trim_start_matches("/dev/"));
    let reqs: Vec<_> = r.map(Result::unwrap).collect();
    let written: u64 = reqs
        .iter()
        .filter(|r| r.op == Op::Write)
        .map(|r| u64::from(r.len))
        .sum();
    assert_eq!(written, 64 << 20);
    assert!(reqs.iter().all(|r| r.op != Op::Read || r.len > 0));
    assert!(
        reqs.windows(2).all(|w| w[0].time_ns <= w[1].time_ns),
        "issue order"
    );
    assert!(reqs.iter().any(|r| r.latency_ns.is_some()));

    // Others may read the device meanwhile (udev probes a device closed after writing):
    // their requests are in the trace too, and in the conversions. And the block layer may
    // split a 1 MiB write where its segments run out, not on a 64 KiB boundary: the two
    // requests then both touch the block they share, one record each.
    let blocks_of = |bs: u64, op: Option<Op>| -> u64 {
        reqs.iter()
            .filter(|r| op.is_none_or(|o| r.op == o))
            .map(|r| iolab_tracefile::block_range(r.offset, u64::from(r.len), bs).count() as u64)
            .sum()
    };
    for (bs, arg) in [(4096u64, "4K"), (65536, "64K")] {
        let blocks = (64u64 << 20) / bs;
        let og = d.path().join(format!("w-{bs}.oracleGeneral.bin"));
        let o = convert(
            saved.to_str().unwrap(),
            og.to_str().unwrap(),
            "oracleGeneral",
            &["--block-size", arg],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let recs: Vec<_> = OracleReader::open(&og)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(recs.len() as u64, blocks_of(bs, None), "block size {bs}");
        assert!(recs.iter().all(|r| u64::from(r.size) == bs));
        // The write itself, with its op: CSV keeps it.
        let csv = d.path().join(format!("w-{bs}.csv"));
        let o = convert(
            saved.to_str().unwrap(),
            csv.to_str().unwrap(),
            "csv",
            &["--block-size", arg],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let mut ids: Vec<u64> = fs::read_to_string(&csv)
            .unwrap()
            .lines()
            .skip(1)
            .filter(|l| l.ends_with(",write"))
            .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        assert_eq!(
            ids.len() as u64,
            blocks_of(bs, Some(Op::Write)),
            "block size {bs}"
        );
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids, (0..blocks).collect::<Vec<_>>(), "each block once");
    }
}

/// `iolab micro` writing 64 MiB with O_DIRECT on ext4: the saved trace holds the file's
/// 16384 data blocks (plus the filesystem's metadata and journal).
#[test]
#[ignore = "needs root: loop devices, mounts and tracefs"]
fn saved_micro_direct_write_holds_the_file_blocks() {
    require_root();
    let fs = LoopFs::ext4("256M");
    let d = tempfile::tempdir().unwrap();
    let saved = d.path().join("micro.iolt");
    let o = run(&[
        "trace",
        "--dev",
        &fs.device,
        "--save",
        saved.to_str().unwrap(),
        "--",
        env!("CARGO_BIN_EXE_iolab"),
        "micro",
        "--access",
        "write",
        "--sync",
        "direct",
        "--bs",
        "1m",
        "--size",
        "64m",
        "--dir",
        fs.path().to_str().unwrap(),
        "--no-db",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let og = d.path().join("micro.oracleGeneral");
    let o = convert(
        saved.to_str().unwrap(),
        og.to_str().unwrap(),
        "oracleGeneral",
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Data writes are 1 MiB requests (256 blocks each): count their blocks.
    let reqs: Vec<_> = IolabReader::open(&saved)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let data_blocks: u64 = reqs
        .iter()
        .filter(|r| r.op == Op::Write && r.len >= 65536)
        .map(|r| u64::from(r.len) / 4096)
        .sum();
    assert!(data_blocks >= 16384, "{data_blocks} blocks of large writes");
    let recs = OracleReader::open(&og).unwrap().count() as u64;
    let all_blocks: u64 = reqs
        .iter()
        .filter(|r| matches!(r.op, Op::Read | Op::Write))
        .map(|r| iolab_tracefile::block_range(r.offset, u64::from(r.len), 4096).count() as u64)
        .sum();
    assert_eq!(recs, all_blocks);
    assert!(recs >= 16384);
}

/// `[procedure] save_block_trace = true`: each measured run's trace next to the database,
/// named by its run id, its path recorded in the run; warm-up runs keep none.
#[test]
#[ignore = "needs root: loop devices, mkfs, mount and tracefs"]
fn experiments_save_each_runs_trace_by_run_id() {
    require_root();
    let s = Scratch::new();
    let f = s.write(
        "saved.toml",
        r#"
name = "saved traces"
seed = 3
[sut]
target = { kind = "loop_image", size = "128M" }
fs = { kind = "ext4" }
[workload]
micro = { access = "write", sync = "direct", bs = "1m", size = "8m" }
[repetitions]
min = 2
max = 2
[procedure]
warmup = 1
save_block_trace = true
"#,
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = s.path().join("results.db.traces");
    let files = entries(&dir);
    assert_eq!(files.len(), 2, "{files:?}");
    let v = s.latest();
    let runs = v["configs"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        let id = r["id"].as_i64().unwrap_or_else(|| panic!("run id in {r}"));
        let want = dir.join(format!("run-{id}.iolt"));
        let trace = r["flowops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["kind"] == "trace")
            .unwrap_or_else(|| panic!("a block trace flowop in {r}"));
        let saved = &trace["extra"]["saved"];
        assert_eq!(
            saved["path"].as_str(),
            Some(fs::canonicalize(&want).unwrap().to_str().unwrap()),
            "{saved}"
        );
        let reqs: Vec<_> = IolabReader::open(&want)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(saved["requests"].as_u64(), Some(reqs.len() as u64));
        let written: u64 = reqs
            .iter()
            .filter(|r| r.op == Op::Write)
            .map(|r| u64::from(r.len))
            .sum();
        assert!(written >= 8 << 20, "{written} bytes written");
        // Its exact LRU miss-ratio curve at 4 KiB blocks, stored with it: the same as
        // computed from the file, ending at the footprint with the first accesses only.
        let mrc = &saved["mrc"];
        let want = iolab_mrc::exact_of_file(&want, 4096).unwrap();
        assert_eq!(mrc["block_size"], 4096, "{saved}");
        assert_eq!(mrc["requests"].as_f64(), Some(want.requests), "{mrc}");
        assert_eq!(mrc["distinct_blocks"].as_f64(), Some(want.cold), "{mrc}");
        assert!(want.cold >= 2048.0, "8 MiB written: {} blocks", want.cold);
        let points = mrc["points"].as_array().unwrap();
        assert_eq!(points.len(), 50);
        let last = points.last().unwrap();
        assert_eq!(last[0].as_f64(), Some(want.cold * 4096.0));
        assert_eq!(last[1].as_f64(), Some(want.cold / want.requests));
    }
    assert!(s.loops().is_empty());
}
