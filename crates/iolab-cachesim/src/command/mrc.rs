//! `iolab cachesim mrc TRACE`: the LRU miss-ratio curve of a trace — exact in one pass
//! (stack distances), or estimated by SHARDS sampling for large traces.
//!
//! Exit codes: 0 ok; 2 bad option, unreadable or malformed trace (a located error); 1 the
//! output could not be written.

use std::path::PathBuf;
use std::time::Instant;

use clap::builder::PossibleValue;
use clap::{Arg, ArgMatches, Command};
use iolab_kind::cli::{CommandError, Host};
use iolab_kind::output::{thousands, Formatter};
use iolab_mrc::{cache_requests, even_sizes, try_exact, Shards, ShardsMode};
use iolab_tracefile::{CsvSpec, Format, FORMAT_NAMES};

use super::gen::parse_count;
use crate::output::mrc::{self, MrcReport};
use crate::Warning;

/// `iolab cachesim mrc`'s definition.
pub fn command() -> Command {
    Command::new("mrc")
        .about("The LRU miss-ratio curve of a trace: exact (stack distances) or SHARDS-sampled")
        .after_help("Examples:\n  iolab cachesim mrc run.iolt --block-size 4k\n  iolab cachesim mrc w.oracleGeneral.bin --points 20\n  iolab cachesim mrc w.oracleGeneral.bin --shards 0.01 --max-size 1g --format csv\n  iolab cachesim mrc w.oracleGeneral.bin --shards-blocks 8K\n\nThe curve gives the miss ratio of an LRU cache at every size (in blocks) from one pass over\nthe trace, counting the requests cachesim simulates (reads and writes). --max-size is bytes,\nas cachesim's --size; --max-blocks counts blocks. --shards R tracks only the blocks whose\nhashed id falls under rate R (memory and time shrink with R); --shards-blocks N tracks at\nmost N blocks, lowering the rate as needed.\nExit codes: 0 ok, 1 output failed, 2 bad option or malformed trace.")
        .arg(
            Arg::new("trace")
                .value_name("TRACE")
                .required(true)
                .value_parser(clap::value_parser!(PathBuf))
                .help("The trace (iolab's format, libCacheSim's oracleGeneral or CSV)"),
        )
        .arg(
            Arg::new("from")
                .long("from")
                .value_name("FORMAT")
                .value_parser(parse_format)
                .help("Format of TRACE (default: from its magic, then its name)"),
        )
        .arg(
            Arg::new("csv")
                .long("csv")
                .value_name("SPEC")
                .value_parser(CsvSpec::parse)
                .help("Columns of a CSV trace, libCacheSim-style (time-col=N, obj-id-col=N, …)"),
        )
        .arg(
            Arg::new("block_size")
                .long("block-size")
                .value_name("BYTES")
                .default_value("4K")
                .value_parser(parse_block_size)
                .help("Block size: block requests of iolab traces are split into blocks of this size"),
        )
        .arg(
            Arg::new("shards")
                .long("shards")
                .value_name("RATE")
                .conflicts_with("shards_blocks")
                .value_parser(clap::value_parser!(f64))
                .help("Estimate with SHARDS at this sampling rate (0 < R ≤ 1), e.g. 0.01"),
        )
        .arg(
            Arg::new("shards_blocks")
                .long("shards-blocks")
                .value_name("N")
                .value_parser(parse_count)
                .help("Estimate with SHARDS tracking at most this many blocks (e.g. 8K = 8,000)"),
        )
        .arg(
            Arg::new("points")
                .long("points")
                .value_name("N")
                .default_value("50")
                .value_parser(clap::value_parser!(u64))
                .help("Cache sizes shown: this many, evenly spaced up to --max-size (or --max-blocks)"),
        )
        .arg(
            Arg::new("max_size")
                .long("max-size")
                .value_name("SIZE")
                .conflicts_with("max_blocks")
                .value_parser(parse_bytes)
                .help(
                    "Largest cache size shown, in bytes as cachesim's --size (32m = 32 MiB, \
                     8192 blocks of 4 KiB; default: where the curve levels off)",
                ),
        )
        .arg(
            Arg::new("max_blocks")
                .long("max-blocks")
                .value_name("N")
                .value_parser(parse_count)
                .help("Largest cache size shown, in blocks (8K = 8,000 blocks)"),
        )
        .arg(
            Arg::new("format")
                .long("format")
                .value_name("FORMAT")
                .default_value("human")
                .value_parser([
                    PossibleValue::new("human").help("A readable table"),
                    PossibleValue::new("csv").help("size_blocks,miss_ratio,misses per line"),
                    PossibleValue::new("json").help("Everything, machine-readable"),
                ])
                .help("Output: a table, CSV (size_blocks,miss_ratio,misses) or JSON"),
        )
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::parse(s).ok_or_else(|| format!("unknown trace format {s:?} (formats: {FORMAT_NAMES})"))
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    iolab_util::parse_size(s).map_err(|e| e.to_string())
}

fn parse_block_size(s: &str) -> Result<u64, String> {
    let n = iolab_util::parse_size(s).map_err(|e| e.to_string())?;
    iolab_tracefile::check_block_size(n)
}

fn trace_error(e: iolab_tracefile::Error) -> CommandError {
    let msg = e.to_string();
    let err = if e.is_bad_input() {
        CommandError::usage(msg)
    } else {
        CommandError::failed(msg)
    };
    match e.hint() {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

/// Computes the curve `m` asks for and writes it.
pub fn run(m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
    let trace = m.get_one::<PathBuf>("trace").cloned().unwrap_or_default();
    let shards = m.get_one::<f64>("shards").copied();
    let shards_blocks = m.get_one::<u64>("shards_blocks").copied();
    let points = m.get_one::<u64>("points").copied().unwrap_or(50);
    let block_size = m.get_one::<u64>("block_size").copied().unwrap_or(4096);
    if let Some(r) = shards {
        if !(r > 0.0 && r <= 1.0) {
            return Err(CommandError::usage(format!(
                "--shards {r}: the sampling rate must be in (0, 1]"
            ))
            .with_hint("e.g. --shards 0.01 samples 1 % of the blocks"));
        }
    }
    if shards_blocks == Some(0) {
        return Err(CommandError::usage(
            "--shards-blocks 0: track at least one block",
        ));
    }
    if points == 0 {
        return Err(CommandError::usage("--points 0: show at least one size"));
    }
    if let Some(bytes) = m.get_one::<u64>("max_size").copied() {
        if bytes < block_size {
            return Err(CommandError::usage(format!(
                "--max-size {bytes}: less than one block of --block-size {block_size}"
            ))
            .with_hint(
                "--max-size is bytes, as cachesim's --size (32m = 32 MiB); --max-blocks N \
                 counts blocks",
            ));
        }
    }
    if m.get_one::<u64>("max_blocks") == Some(&0) {
        return Err(CommandError::usage(
            "--max-blocks 0: show at least one block",
        ));
    }
    let from = match (
        m.get_one::<Format>("from").cloned(),
        m.get_one::<CsvSpec>("csv").cloned(),
    ) {
        (Some(Format::Csv(_)) | None, Some(spec)) => Some(Format::Csv(spec)),
        (Some(_), Some(_)) => {
            return Err(CommandError::usage(
                "--csv describes a CSV trace; --from names another format",
            )
            .with_hint("drop --csv, or say --from csv"))
        }
        (from, None) => from,
    };
    let started = Instant::now();
    let (format, reader) = iolab_tracefile::open(&trace, from.as_ref()).map_err(trace_error)?;
    // LRU's curve does not read oracleGeneral's next-access field.
    let mut objects = reader.accept_zero_based_next_access().objects(block_size);
    let (mode, mrc, bytes) = match (shards, shards_blocks) {
        (None, None) => {
            let (mrc, bytes) = try_exact(cache_requests(objects.by_ref())).map_err(trace_error)?;
            ("exact".to_string(), mrc, bytes)
        }
        (rate, blocks) => {
            let mode = match (rate, blocks) {
                (Some(r), _) => ShardsMode::Rate(r),
                (None, Some(n)) => ShardsMode::Blocks(n as usize),
                (None, None) => unreachable!("handled above"),
            };
            let mut s = Shards::new(mode);
            for id in cache_requests(objects.by_ref()) {
                s.access(id.map_err(trace_error)?);
            }
            let name = match mode {
                ShardsMode::Rate(r) => format!("SHARDS, rate {r}"),
                ShardsMode::Blocks(n) => {
                    format!(
                        "SHARDS, at most {} blocks (final rate {:.6})",
                        thousands(n as u64),
                        s.rate()
                    )
                }
            };
            let bytes = s.bytes();
            (name, s.finish(), bytes)
        }
    };
    let elapsed = started.elapsed().as_secs_f64();
    if let Some(w) = Warning::zero_based(&trace, objects.zero_based_next_access()) {
        host.warn(&w.to_string());
    }
    let max = match (
        m.get_one::<u64>("max_size").copied(),
        m.get_one::<u64>("max_blocks").copied(),
    ) {
        (Some(bytes), _) => bytes / block_size,
        (None, Some(blocks)) => blocks,
        (None, None) => mrc.max_size().max(1),
    };
    let sizes = even_sizes(max, points);
    let report = MrcReport {
        trace: trace.display().to_string(),
        format: format.name(),
        method: mode,
        curve: mrc.curve(&sizes),
        mrc,
        structure_bytes: bytes,
        elapsed_s: elapsed,
    };
    let f: &dyn Formatter<MrcReport> = match m.get_one::<String>("format").map(String::as_str) {
        Some("csv") => &mrc::Csv,
        Some("json") => &mrc::Json,
        _ => {
            host.say(&report.summary());
            &mrc::Human
        }
    };
    host.emit(&mut |out| f.write(&report, out))
}
