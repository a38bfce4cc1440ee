//! Round trips through real files, and bad files → located errors.

use std::fs;
use std::path::{Path, PathBuf};

use iolab_tracefile::{
    block_range, convert, guess, iolab, next_access, open, BlockRequest, CsvReader, CsvSpec,
    CsvWriter, ErrorKind, Flags, Format, IolabReader, IolabWriter, Location, ObjRequest, Op,
    OracleReader, TraceInfo, ZeroBased,
};

fn info() -> TraceInfo {
    TraceInfo {
        device: "loop7".into(),
        major: 7,
        minor: 7,
        sector_size: 4096,
        partition_offset: 1 << 20,
        start_ns: 123_456_789,
    }
}

fn req(i: u64, op: Op, offset: u64, len: u32) -> BlockRequest {
    BlockRequest {
        time_ns: i * 1000,
        offset,
        len,
        latency_ns: if i.is_multiple_of(3) {
            None
        } else {
            Some(i * 7)
        },
        op,
        flags: Flags(if i.is_multiple_of(2) {
            Flags::SYNC | Flags::FUA
        } else {
            0
        }),
    }
}

fn sample() -> Vec<BlockRequest> {
    vec![
        req(0, Op::Write, 0, 8192),
        req(1, Op::Read, 4096, 4096),
        req(2, Op::Flush, 0, 0),
        req(3, Op::Write, 6144, 4096), // straddles blocks 1 and 2
        req(4, Op::Discard, 1 << 20, 1 << 16),
        req(5, Op::Read, 0, 512),
        req(6, Op::WriteZeroes, 8192, 4096),
        req(7, Op::Other, 0, 0),
    ]
}

fn write_iolab(path: &Path, reqs: &[BlockRequest]) {
    let mut w = IolabWriter::create(path, &info()).unwrap();
    for r in reqs {
        w.write(r).unwrap();
    }
    assert_eq!(w.finish().unwrap(), reqs.len() as u64);
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn iolab_round_trip_keeps_every_field() {
    let d = tmp();
    let p = d.path().join("t.iolt");
    let reqs = sample();
    write_iolab(&p, &reqs);
    assert_eq!(
        fs::metadata(&p).unwrap().len(),
        (iolab::HEADER_LEN + reqs.len() * iolab::RECORD_LEN) as u64
    );
    let r = IolabReader::open(&p).unwrap();
    assert_eq!(r.info(), &info());
    assert_eq!(r.record_count(), Some(reqs.len() as u64));
    let back: Vec<_> = r.map(Result::unwrap).collect();
    assert_eq!(back, reqs);
}

#[test]
fn iolab_header_is_little_endian_at_documented_offsets() {
    let d = tmp();
    let p = d.path().join("t.iolt");
    write_iolab(&p, &sample()[..1]);
    let b = fs::read(&p).unwrap();
    assert_eq!(&b[0..8], b"IOLABTRC");
    assert_eq!(&b[8..10], &[1, 0]);
    assert_eq!(&b[10..12], &[96, 0]);
    assert_eq!(&b[12..14], &[32, 0]);
    assert_eq!(&b[16..20], &4096u32.to_le_bytes());
    assert_eq!(&b[20..24], &7u32.to_le_bytes());
    assert_eq!(&b[32..40], &123_456_789u64.to_le_bytes());
    assert_eq!(&b[40..48], &1u64.to_le_bytes());
    assert_eq!(&b[48..56], &(1u64 << 20).to_le_bytes());
    assert_eq!(&b[64..69], b"loop7");
    assert_eq!(b[69], 0);
    // The record: time 0, offset 0, latency unknown, 8192 bytes, write, sync|fua.
    let r = &b[96..128];
    assert_eq!(&r[16..24], &u64::MAX.to_le_bytes());
    assert_eq!(&r[24..28], &8192u32.to_le_bytes());
    assert_eq!(r[28], 1);
    assert_eq!(r[29], Flags::SYNC | Flags::FUA);
}

#[test]
fn unfinished_iolab_trace_reads_to_its_last_whole_record() {
    let d = tmp();
    let p = d.path().join("t.iolt");
    {
        let mut w = IolabWriter::new(fs::File::create(&p).unwrap(), &info()).unwrap();
        for r in sample() {
            w.write(&r).unwrap();
        }
        // Dropped without finish: the BufWriter flushes, the count stays unknown.
    }
    let r = IolabReader::open(&p).unwrap();
    assert_eq!(r.record_count(), None);
    assert_eq!(r.map(Result::unwrap).count(), sample().len());
}

#[test]
fn truncated_iolab_record_is_located() {
    let d = tmp();
    let p = d.path().join("t.iolt");
    write_iolab(&p, &sample());
    let len = fs::metadata(&p).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(len - 5)
        .unwrap();
    let results: Vec<_> = IolabReader::open(&p).unwrap().collect();
    assert_eq!(results.len(), 8);
    assert!(results[..7].iter().all(Result::is_ok));
    let e = results[7].as_ref().unwrap_err();
    assert_eq!(
        e.at,
        Location::Record {
            index: 7,
            byte: 96 + 7 * 32
        }
    );
    assert!(matches!(
        e.kind,
        ErrorKind::Truncated {
            what: "record",
            expected: 32,
            found: 27
        }
    ));
    let text = e.to_string();
    assert!(
        text.contains("t.iolt: record 7 (byte 320): truncated record"),
        "{text}"
    );
    assert!(e.is_bad_input());

    // Cut at a record boundary: the header's count says records are missing.
    fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(96 + 3 * 32)
        .unwrap();
    let e = IolabReader::open(&p)
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert!(matches!(
        e.kind,
        ErrorKind::MissingRecords {
            expected: 8,
            found: 3
        }
    ));

    // Cut inside the header.
    fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(40)
        .unwrap();
    let e = IolabReader::open(&p).err().unwrap();
    assert!(
        matches!(
            e.kind,
            ErrorKind::Truncated {
                what: "header",
                expected: 96,
                found: 40
            }
        ),
        "{e}"
    );
}

#[test]
fn wrong_magic_version_and_op_are_located() {
    let d = tmp();
    let p = d.path().join("t.iolt");
    write_iolab(&p, &sample());
    let good = fs::read(&p).unwrap();

    let mut b = good.clone();
    b[0..8].copy_from_slice(b"NOTATRC!");
    fs::write(&p, &b).unwrap();
    let e = IolabReader::open(&p).err().unwrap();
    assert_eq!(e.at, Location::Header { byte: 0 });
    assert!(matches!(e.kind, ErrorKind::BadMagic { .. }), "{e}");
    assert!(e.hint().is_some());

    let mut b = good.clone();
    b[8] = 9;
    fs::write(&p, &b).unwrap();
    let e = IolabReader::open(&p).err().unwrap();
    assert!(matches!(
        e.kind,
        ErrorKind::UnsupportedVersion {
            found: 9,
            supported: 1
        }
    ));

    let mut b = good.clone();
    b[96 + 2 * 32 + 28] = 77;
    fs::write(&p, &b).unwrap();
    let e = IolabReader::open(&p)
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert_eq!(
        e.at,
        Location::Record {
            index: 2,
            byte: 96 + 64 + 28
        }
    );
    assert!(e.to_string().contains("bad op \"77\""), "{e}");
}

#[test]
fn block_splitting_counts_the_blocks_touched() {
    assert_eq!(block_range(0, 4096, 4096), 0..1);
    assert_eq!(block_range(0, 4097, 4096), 0..2);
    assert_eq!(block_range(4095, 2, 4096), 0..2);
    assert_eq!(block_range(6144, 4096, 4096), 1..3);
    assert_eq!(block_range(8192, 0, 4096), 0..0);
    assert_eq!(block_range(64 << 20, 64 << 20, 65536).count(), 1024);
    assert_eq!(block_range(512, 512, 512), 1..2);
}

#[test]
fn iolab_trace_reads_as_blocks() {
    let d = tmp();
    let p = d.path().join("t.iolt");
    write_iolab(&p, &sample());
    let (fmt, r) = open(&p, None).unwrap();
    assert_eq!(fmt, Format::Iolab);
    let objs: Vec<ObjRequest> = r.objects(4096).map(Result::unwrap).collect();
    let ids: Vec<(u64, Op)> = objs.iter().map(|o| (o.obj_id, o.op)).collect();
    let mut want = vec![
        (0, Op::Write),
        (1, Op::Write),
        (1, Op::Read),
        (1, Op::Write),
    ];
    want.push((2, Op::Write));
    want.extend((256..272).map(|b| (b, Op::Discard)));
    want.push((0, Op::Read));
    want.push((2, Op::WriteZeroes));
    assert_eq!(ids, want);
    assert!(objs
        .iter()
        .all(|o| o.size == 4096 && o.next_access.is_none()));
    assert_eq!(objs[2].time, 1000);
}

#[test]
fn next_access_by_backward_pass() {
    assert_eq!(
        next_access(&[5, 6, 5, 7, 6, 5]),
        [Some(2), Some(4), Some(5), None, None, None]
    );
}

#[test]
fn iolab_to_oracle_general_and_back() {
    let d = tmp();
    let src = d.path().join("t.iolt");
    write_iolab(&src, &sample());
    let og = d.path().join("t.oracleGeneral.bin");
    let s = convert(&src, None, &og, &Format::OracleGeneral, 4096).unwrap();
    // 8 requests; flushes dropped (1, Other with len 0 is not a flush but has no blocks),
    // the 16 discard blocks and the write-zeroes block dropped (oracleGeneral has no op).
    assert_eq!(s.read, 8);
    assert_eq!(s.written, 6);
    assert_eq!(s.distinct_objects, Some(3));
    let b = fs::read(&og).unwrap();
    assert_eq!(b.len(), 6 * 24);
    // Record 1: time 0 s, block 1, 4096 bytes, next access record 2 (stored from 1, as
    // libCacheSim's traceConv writes it: 3).
    assert_eq!(&b[24..28], &0u32.to_le_bytes());
    assert_eq!(&b[28..36], &1u64.to_le_bytes());
    assert_eq!(&b[36..40], &4096u32.to_le_bytes());
    assert_eq!(&b[40..48], &3i64.to_le_bytes());
    assert_eq!(&b[16..24], &6i64.to_le_bytes()); // block 0 again at record 5
    let back: Vec<_> = OracleReader::open(&og)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let ids: Vec<u64> = back.iter().map(|o| o.obj_id).collect();
    assert_eq!(ids, [0, 1, 1, 1, 2, 0]);
    let nexts: Vec<_> = back.iter().map(|o| o.next_access).collect();
    assert_eq!(nexts, next_access(&ids));
    assert!(back.iter().all(|o| o.op == Op::Read));

    // oracleGeneral → iolab: object i at byte i × block size.
    let again = d.path().join("again.iolt");
    let s = convert(&og, None, &again, &Format::Iolab, 4096).unwrap();
    assert_eq!((s.read, s.written), (6, 6));
    let r: Vec<_> = IolabReader::open(&again)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(r[1].offset, 4096);
    assert_eq!(r[1].len, 4096);
    assert_eq!(r[5].offset, 0);
}

#[test]
fn next_access_crosses_chunks_of_the_backward_pass() {
    let d = tmp();
    let src = d.path().join("big.iolt");
    let n = 150_000u64;
    let mut w = IolabWriter::create(&src, &info()).unwrap();
    for i in 0..n {
        w.write(&req(i, Op::Read, (i * 7919 % 1000) * 4096, 4096))
            .unwrap();
    }
    w.finish().unwrap();
    let og = d.path().join("big.oracleGeneral");
    let s = convert(&src, None, &og, &Format::OracleGeneral, 4096).unwrap();
    assert_eq!(s.written, n);
    assert_eq!(s.distinct_objects, Some(1000));
    let back: Vec<_> = OracleReader::open(&og)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let ids: Vec<u64> = back.iter().map(|o| o.obj_id).collect();
    let nexts: Vec<_> = back.iter().map(|o| o.next_access).collect();
    assert_eq!(nexts, next_access(&ids));
}

#[test]
fn csv_round_trip_and_libcachesim_columns() {
    let d = tmp();
    let src = d.path().join("t.iolt");
    write_iolab(&src, &sample());
    let csv = d.path().join("t.csv");
    let s = convert(&src, None, &csv, &Format::Csv(CsvSpec::default()), 4096).unwrap();
    assert_eq!(s.written, 23);
    let text = fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("time,obj_id,obj_size,op"));
    assert_eq!(lines.next(), Some("0,0,4096,write"));
    let (fmt, r) = open(&csv, None).unwrap();
    assert_eq!(fmt.name(), "csv");
    let from_csv: Vec<_> = r.objects(4096).map(Result::unwrap).collect();
    let (_, r) = open(&src, None).unwrap();
    let from_iolab: Vec<_> = r.objects(4096).map(Result::unwrap).collect();
    assert_eq!(from_csv, from_iolab);

    // libCacheSim-style columns, another delimiter, string ids.
    let other = d.path().join("o.txt");
    fs::write(&other, "a;get;10;x\nb;set;20;y\nc;get;30;x\n").unwrap();
    let spec = CsvSpec::parse(
        "time-col=3, obj-id-col=4, op-col=2, header=false, delimiter=;, obj-id-is-num=0",
    )
    .unwrap();
    assert_eq!(spec.delimiter, b';');
    assert_eq!(spec.obj_size_col, Some(3));
    let spec = CsvSpec {
        obj_size_col: None,
        ..spec
    };
    let rows: Vec<_> = CsvReader::open(&other, spec)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].obj_id, rows[2].obj_id);
    assert_ne!(rows[0].obj_id, rows[1].obj_id);
    assert_eq!((rows[1].op, rows[1].time, rows[1].size), (Op::Write, 20, 1));
    assert!(CsvSpec::parse("time-col=x").is_err());
    assert!(CsvSpec::parse("colour=2").is_err());
    assert_eq!(CsvSpec::parse("delimiter=\\t").unwrap().delimiter, b'\t');
    assert!(!CsvSpec::parse("delimiter=,,header=false").unwrap().header);
}

#[test]
fn csv_errors_name_line_and_column() {
    let d = tmp();
    let p = d.path().join("bad.csv");
    fs::write(&p, "time,obj_id,obj_size,op\n1,2,3,read\n4,5,lots,write\n").unwrap();
    let e = CsvReader::open(&p, CsvSpec::default())
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert_eq!(e.at, Location::Line { line: 3, column: 5 });
    assert!(
        e.to_string().contains("bad.csv:3:5: bad obj-size \"lots\""),
        "{e}"
    );

    fs::write(&p, "time,obj_id,obj_size,op\n1,2,3,munch\n").unwrap();
    let e = CsvReader::open(&p, CsvSpec::default())
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert_eq!(e.at, Location::Line { line: 2, column: 7 });

    fs::write(&p, "time,obj_id,obj_size,op\n1,2\n").unwrap();
    let e = CsvReader::open(&p, CsvSpec::default())
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert!(
        e.to_string().contains("2:4: bad obj-size \"(missing)\""),
        "{e}"
    );

    // A binary file read as CSV.
    fs::write(&p, [0xffu8, 0xfe, 0, 1, b'\n']).unwrap();
    let e = CsvReader::open(
        &p,
        CsvSpec {
            header: false,
            ..CsvSpec::default()
        },
    )
    .unwrap()
    .find_map(Result::err)
    .unwrap();
    assert!(e.to_string().contains("not UTF-8"), "{e}");
}

#[test]
fn oracle_general_errors_are_located() {
    let d = tmp();
    let p = d.path().join("x.oracleGeneral");
    let mut b = Vec::new();
    b.extend(iolab_tracefile::oracle::encode(1, 10, 4096, Some(2)));
    b.extend(iolab_tracefile::oracle::encode(1, 11, 4096, None));
    b.extend(iolab_tracefile::oracle::encode(2, 10, 4096, None));
    fs::write(&p, &b).unwrap();
    assert_eq!(
        OracleReader::open(&p).unwrap().map(Result::unwrap).count(),
        3
    );

    fs::write(&p, &b[..b.len() - 10]).unwrap();
    let e = OracleReader::open(&p)
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert_eq!(e.at, Location::Record { index: 2, byte: 48 });
    assert!(matches!(
        e.kind,
        ErrorKind::Truncated {
            expected: 24,
            found: 14,
            ..
        }
    ));

    // libCacheSim's "none" is -1 or i64::MAX.
    let mut max = b.clone();
    max[24 + 16..24 + 24].copy_from_slice(&i64::MAX.to_le_bytes());
    fs::write(&p, &max).unwrap();
    let r: Vec<_> = OracleReader::open(&p)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(r[0].next_access, Some(2));
    assert_eq!(r[1].next_access, None);

    // A next access pointing at itself or backwards: not an oracleGeneral file.
    let mut bad = b.clone();
    bad[24 + 16..24 + 24].copy_from_slice(&2i64.to_le_bytes());
    fs::write(&p, &bad).unwrap();
    let e = OracleReader::open(&p)
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert_eq!(e.at, Location::Record { index: 1, byte: 40 });
    assert!(e.to_string().contains("next-access index"), "{e}");

    // An iolab trace read as oracleGeneral fails on its header bytes.
    let io = d.path().join("t.iolt");
    write_iolab(&io, &sample());
    let e = OracleReader::open(&io)
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert!(matches!(e.at, Location::Record { .. }), "{e}");
}

#[test]
fn next_access_counted_from_zero_is_taken_only_when_asked_for() {
    let d = tmp();
    let p = d.path().join("z.oracleGeneral");
    // Objects 10 10 11 10 with positions counted from 0: 1, 3, -1, -1. Record 0's field
    // points at itself when read from 1; record 1's (3) reads as record 2.
    let mut b = Vec::new();
    for (id, next) in [(10u64, 1i64), (10, 3), (11, -1), (10, -1)] {
        let mut r = iolab_tracefile::oracle::encode(0, id, 4096, None);
        r[16..24].copy_from_slice(&next.to_le_bytes());
        b.extend(r);
    }
    fs::write(&p, &b).unwrap();
    let e = OracleReader::open(&p)
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert_eq!(e.at, Location::Record { index: 0, byte: 16 });
    assert!(
        e.hint().unwrap().contains("iolab trace convert"),
        "{:?}",
        e.hint()
    );
    let mut r = OracleReader::open(&p).unwrap().accept_zero_based();
    let ids: Vec<_> = r.by_ref().map(|o| o.unwrap().next_access).collect();
    assert_eq!(ids, [None, Some(2), None, None]);
    assert_eq!(
        r.zero_based(),
        Some(ZeroBased {
            records: 1,
            first: 0
        })
    );
    // Through `open`, as the simulator reads it.
    let (_, reader) = open(&p, None).unwrap();
    let mut objects = reader.accept_zero_based_next_access().objects(4096);
    assert_eq!(objects.by_ref().count(), 4);
    assert_eq!(objects.zero_based_next_access().map(|z| z.records), Some(1));
    // A field before its own record is wrong whichever way it counts.
    b[24 + 16..24 + 24].copy_from_slice(&0i64.to_le_bytes());
    fs::write(&p, &b).unwrap();
    let e = OracleReader::open(&p)
        .unwrap()
        .accept_zero_based()
        .find_map(Result::err)
        .unwrap();
    assert_eq!(e.at, Location::Record { index: 1, byte: 40 });
    assert!(
        !e.hint().unwrap().contains("count from 0"),
        "{:?}",
        e.hint()
    );
}

#[test]
fn format_is_guessed_by_magic_then_name() {
    let d = tmp();
    let named = |n: &str, content: &[u8]| -> PathBuf {
        let p = d.path().join(n);
        fs::write(&p, content).unwrap();
        p
    };
    let io = d.path().join("whatever.bin");
    write_iolab(&io, &sample());
    assert_eq!(guess(&io).unwrap(), Format::Iolab);
    assert_eq!(
        guess(&named("a.oracleGeneral.bin", &[0; 24])).unwrap(),
        Format::OracleGeneral
    );
    assert_eq!(
        guess(&named("A.ORACLEGENERAL", &[0; 24])).unwrap(),
        Format::OracleGeneral
    );
    assert!(matches!(
        guess(&named("a.csv", b"1,2\n")).unwrap(),
        Format::Csv(_)
    ));
    let e = guess(&named("a.trace", b"hello")).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::UnknownFormat { .. }), "{e}");
    assert!(e.hint().unwrap().contains("--from"));
    let e = guess(&named("b.iolt", b"hello world")).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::BadMagic { .. }), "{e}");
    let e = guess(&named("c.oracleGeneral.zst", &[0x28, 0xb5, 0x2f, 0xfd, 0])).unwrap_err();
    assert!(e.to_string().contains("zstd"), "{e}");
    let e = guess(&d.path().join("missing")).unwrap_err();
    assert!(e.is_bad_input());
}

#[test]
fn failed_conversion_leaves_nothing_behind() {
    let d = tmp();
    let src = d.path().join("t.iolt");
    write_iolab(&src, &sample());
    let len = fs::metadata(&src).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&src)
        .unwrap()
        .set_len(len - 1)
        .unwrap();
    for to in [
        Format::OracleGeneral,
        Format::Iolab,
        Format::Csv(CsvSpec::default()),
    ] {
        let out = d.path().join("out");
        let e = convert(&src, None, &out, &to, 4096).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Truncated { .. }), "{e}");
        let left: Vec<_> = fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }
    assert!(convert(&src, None, &d.path().join("o"), &Format::Iolab, 1000).is_err());
    assert!(convert(&src, None, &src, &Format::Iolab, 4096).is_err());
}

#[test]
fn csv_writer_counts_rows() {
    let mut out = Vec::new();
    let mut w = CsvWriter::new(&mut out).unwrap();
    w.write(&ObjRequest {
        time: 1,
        obj_id: 2,
        size: 3,
        op: Op::Discard,
        next_access: None,
    })
    .unwrap();
    assert_eq!(w.finish().unwrap(), 1);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "time,obj_id,obj_size,op\n1,2,3,discard\n"
    );
}

#[test]
fn csv_spec_delimiters() {
    for (text, want) in [
        ("delimiter=\\t", b'\t'),
        ("delimiter=tab", b'\t'),
        ("delimiter=space", b' '),
        ("header=false,delimiter= ", b' '),
        ("delimiter=;,header=false", b';'),
        ("delimiter=,", b','),
    ] {
        assert_eq!(CsvSpec::parse(text).unwrap().delimiter, want, "{text}");
    }
}

/// libCacheSim's own converter is the reference for oracleGeneral: same records, same
/// next-access positions, byte for byte.
#[test]
fn oracle_general_matches_libcachesim_trace_conv() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let d = tmp();
    let out = d.path().join("small.oracleGeneral");
    let s = convert(
        &data.join("small.csv"),
        None,
        &out,
        &Format::OracleGeneral,
        4096,
    )
    .unwrap();
    assert_eq!(s.written, 400);
    assert_eq!(
        fs::read(&out).unwrap(),
        fs::read(data.join("small.traceConv.oracleGeneral")).unwrap()
    );
}
