//! Property tests: every conversion between the formats keeps what both formats carry
//! (`iolab trace convert`). iolab ↔ iolab keeps everything; oracleGeneral and CSV keep time,
//! object and size (CSV also the op); a block trace of whole, aligned blocks keeps its
//! requests through CSV.

use std::fs;
use std::path::Path;

use iolab_tracefile::{
    convert, open, BlockRequest, CsvSpec, ErrorKind, Flags, Format, IolabWriter, Location,
    ObjRequest, Op, OracleReader, TraceInfo,
};
use proptest::prelude::*;

const BS: u64 = 4096;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn info() -> impl Strategy<Value = TraceInfo> {
    (
        "[a-z0-9]{0,32}",
        any::<u32>(),
        any::<u32>(),
        prop::sample::select(&[512u32, 4096][..]),
        any::<u64>(),
        any::<u64>(),
    )
        .prop_map(
            |(device, major, minor, sector_size, partition_offset, start_ns)| TraceInfo {
                device,
                major,
                minor,
                sector_size,
                partition_offset,
                start_ns,
            },
        )
}

fn op() -> impl Strategy<Value = Op> {
    prop::sample::select(&Op::ALL[..])
}

fn block_request() -> impl Strategy<Value = BlockRequest> {
    (
        any::<u64>(),
        any::<u64>(),
        any::<u32>(),
        // u64::MAX is the file's "no latency"; a latency that long is stored one less.
        prop::option::of(0..u64::MAX),
        op(),
        any::<u8>(),
    )
        .prop_map(
            |(time_ns, offset, len, latency_ns, op, flags)| BlockRequest {
                time_ns,
                offset,
                len,
                latency_ns,
                op,
                flags: Flags(flags),
            },
        )
}

fn write_iolab(path: &Path, info: &TraceInfo, reqs: &[BlockRequest]) {
    let mut w = IolabWriter::create(path, info).unwrap();
    for r in reqs {
        w.write(r).unwrap();
    }
    w.finish().unwrap();
}

fn read_iolab(path: &Path) -> (TraceInfo, Vec<BlockRequest>) {
    let r = iolab_tracefile::IolabReader::open(path).unwrap();
    let info = r.info().clone();
    (info, r.map(Result::unwrap).collect())
}

fn objects(path: &Path, format: &Format) -> Vec<ObjRequest> {
    let (_, r) = open(path, Some(format)).unwrap();
    r.objects(BS).map(Result::unwrap).collect()
}

fn csv() -> Format {
    Format::Csv(CsvSpec::default())
}

/// `n` object requests over a few objects (so that next accesses exist), times within 32
/// bits (what oracleGeneral holds).
fn obj_requests() -> impl Strategy<Value = Vec<ObjRequest>> {
    prop::collection::vec((any::<u32>(), 0u64..8, any::<u64>(), any::<u32>()), 0..40).prop_map(
        |v| {
            v.into_iter()
                .map(|(time, small, big, size)| ObjRequest {
                    time: u64::from(time),
                    obj_id: if small < 6 { small } else { big },
                    size,
                    op: Op::Read,
                    next_access: None,
                })
                .collect()
        },
    )
}

/// The next-access index of each request: the next request to the same object.
fn with_next_access(reqs: &[ObjRequest]) -> Vec<ObjRequest> {
    reqs.iter()
        .enumerate()
        .map(|(i, r)| ObjRequest {
            next_access: reqs[i + 1..]
                .iter()
                .position(|o| o.obj_id == r.obj_id)
                .map(|p| (i + 1 + p) as u64),
            ..*r
        })
        .collect()
}

fn write_csv(path: &Path, reqs: &[ObjRequest]) {
    let mut text = String::from("time,obj_id,obj_size,op\n");
    for r in reqs {
        text.push_str(&format!(
            "{},{},{},{}\n",
            r.time,
            r.obj_id,
            r.size,
            r.op.name()
        ));
    }
    fs::write(path, text).unwrap();
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn iolab_to_iolab_keeps_every_field(
        info in info(),
        reqs in prop::collection::vec(block_request(), 0..50),
    ) {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.iolt"), d.path().join("b.iolt"));
        write_iolab(&a, &info, &reqs);
        convert(&a, None, &b, &Format::Iolab, BS).unwrap();
        prop_assert_eq!(read_iolab(&b), (info, reqs));
    }

    #[test]
    fn oracle_general_through_csv_and_back(reqs in obj_requests()) {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("src.csv");
        write_csv(&src, &reqs);
        let (oracle, csv_again, oracle_again) = (
            d.path().join("a.oracleGeneral"),
            d.path().join("b.csv"),
            d.path().join("c.oracleGeneral"),
        );
        convert(&src, None, &oracle, &Format::OracleGeneral, BS).unwrap();
        let expected = with_next_access(&reqs);
        prop_assert_eq!(&objects(&oracle, &Format::OracleGeneral), &expected);
        convert(&oracle, None, &csv_again, &csv(), BS).unwrap();
        // CSV has no next-access field: everything else is kept.
        prop_assert_eq!(&objects(&csv_again, &csv()), &reqs);
        convert(&csv_again, None, &oracle_again, &Format::OracleGeneral, BS).unwrap();
        prop_assert_eq!(fs::read(&oracle_again).unwrap(), fs::read(&oracle).unwrap());
    }

    #[test]
    fn csv_to_csv_keeps_every_field(
        reqs in prop::collection::vec(
            (any::<u64>(), any::<u64>(), any::<u32>(), op()).prop_map(|(time, obj_id, size, op)| {
                ObjRequest { time, obj_id, size, op, next_access: None }
            }),
            0..40,
        ),
    ) {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.csv"), d.path().join("b.csv"));
        write_csv(&a, &reqs);
        convert(&a, None, &b, &csv(), BS).unwrap();
        prop_assert_eq!(objects(&b, &csv()), reqs);
    }

    /// Requests of one whole block each, aligned, without a flush: CSV keeps time, block and
    /// op, and the iolab trace made from it has the same requests (latency and flags are
    /// not in CSV).
    #[test]
    fn aligned_block_traces_through_csv_and_back(
        reqs in prop::collection::vec(
            (any::<u64>(), 0u64..(u64::MAX / BS), op()).prop_filter_map("no flush", |(t, block, op)| {
                (op != Op::Flush).then_some(BlockRequest {
                    time_ns: t,
                    offset: block * BS,
                    len: BS as u32,
                    latency_ns: None,
                    op,
                    flags: Flags::default(),
                })
            }),
            0..40,
        ),
    ) {
        let d = tempfile::tempdir().unwrap();
        let (a, b, c) = (d.path().join("a.iolt"), d.path().join("b.csv"), d.path().join("c.iolt"));
        write_iolab(&a, &TraceInfo::default(), &reqs);
        convert(&a, None, &b, &csv(), BS).unwrap();
        convert(&b, None, &c, &Format::Iolab, BS).unwrap();
        prop_assert_eq!(read_iolab(&c).1, reqs);
    }
}

/// A CSV time beyond oracleGeneral's 32 bits was written as 2^32 − 1, a wrong number
/// without a word; now the conversion fails at the row's line and leaves no output.
#[test]
fn a_time_beyond_32_bits_is_refused_for_oracle_general() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("t.csv");
    fs::write(
        &src,
        "time,obj_id,obj_size,op\n1,1,10,read\n\n4294967296,2,10,read\n",
    )
    .unwrap();
    let out = d.path().join("t.oracleGeneral");
    let e = convert(&src, None, &out, &Format::OracleGeneral, BS).unwrap_err();
    assert_eq!(e.at, Location::Line { line: 4, column: 1 });
    assert!(
        matches!(e.kind, ErrorKind::BadField { field: "time", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("4294967296"), "{e}");
    assert!(!out.exists());
    // The largest 32-bit time is kept as it is.
    fs::write(&src, "time,obj_id,obj_size,op\n4294967295,2,10,read\n").unwrap();
    convert(&src, None, &out, &Format::OracleGeneral, BS).unwrap();
    let rec: Vec<_> = OracleReader::open(&out)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rec[0].time, 4294967295);
}
