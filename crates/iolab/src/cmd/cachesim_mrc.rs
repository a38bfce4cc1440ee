//! `iolab cachesim mrc TRACE`: the LRU miss-ratio curve of a trace — exact in one pass
//! (stack distances), or estimated by SHARDS sampling for large traces.
//!
//! Exit codes: 0 ok; 2 bad option, unreadable or malformed trace (a located error); 1 the
//! output could not be written.

use std::path::PathBuf;
use std::time::Instant;

use iolab_cachesim::Warning;
use iolab_mrc::{even_sizes, try_exact, Mrc, Shards, ShardsMode};
use iolab_tracefile::{CsvSpec, Format, FORMAT_NAMES};

use crate::error::CliError;
use iolab_util::units::thousands;

#[derive(clap::Args, Debug)]
#[command(
    about = "The LRU miss-ratio curve of a trace: exact (stack distances) or SHARDS-sampled",
    after_help = "Examples:\n  iolab cachesim mrc run.iolt --block-size 4k\n  iolab cachesim mrc w.oracleGeneral.bin --points 20\n  iolab cachesim mrc w.oracleGeneral.bin --shards 0.01 --max-size 1M --format csv\n  iolab cachesim mrc w.oracleGeneral.bin --shards-blocks 8K\n\nThe curve gives the miss ratio of an LRU cache at every size (in blocks) from one pass over\nthe trace. --shards R tracks only the blocks whose hashed id falls under rate R (memory and\ntime shrink with R); --shards-blocks N tracks at most N blocks, lowering the rate as needed.\nExit codes: 0 ok, 1 output failed, 2 bad option or malformed trace."
)]
pub struct MrcArgs {
    /// The trace (iolab's format, libCacheSim's oracleGeneral or CSV)
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,

    /// Format of TRACE (default: from its magic, then its name)
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub from: Option<Format>,

    /// Columns of a CSV trace, libCacheSim-style (time-col=N, obj-id-col=N, …)
    #[arg(long, value_name = "SPEC", value_parser = CsvSpec::parse)]
    pub csv: Option<CsvSpec>,

    /// Block size: block requests of iolab traces are split into blocks of this size
    #[arg(long, value_name = "BYTES", default_value = "4K", value_parser = parse_block_size)]
    pub block_size: u64,

    /// Estimate with SHARDS at this sampling rate (0 < R ≤ 1), e.g. 0.01
    #[arg(long, value_name = "RATE", conflicts_with = "shards_blocks")]
    pub shards: Option<f64>,

    /// Estimate with SHARDS tracking at most this many blocks (e.g. 8K = 8,000)
    #[arg(long, value_name = "N", value_parser = crate::cmd::cachesim_gen::parse_count)]
    pub shards_blocks: Option<u64>,

    /// Cache sizes shown: this many, evenly spaced up to --max-size
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub points: u64,

    /// Largest cache size shown, blocks (default: where the curve levels off)
    #[arg(long, value_name = "BLOCKS", value_parser = crate::cmd::cachesim_gen::parse_count)]
    pub max_size: Option<u64>,

    /// Output: a table, CSV (size_blocks,miss_ratio,misses) or JSON
    #[arg(long, value_enum, default_value_t = MrcFormat::Human)]
    pub format: MrcFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MrcFormat {
    /// A readable table
    Human,
    /// size_blocks,miss_ratio,misses per line
    Csv,
    /// Everything, machine-readable
    Json,
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::parse(s).ok_or_else(|| format!("unknown trace format {s:?} (formats: {FORMAT_NAMES})"))
}

fn parse_block_size(s: &str) -> Result<u64, String> {
    let n = iolab_workload::parse_size(s).map_err(|e| e.to_string())?;
    iolab_tracefile::check_block_size(n)
}

fn trace_error(e: iolab_tracefile::Error) -> CliError {
    let msg = e.to_string();
    let err = if e.is_bad_input() {
        CliError::usage(msg)
    } else {
        CliError::failed(msg)
    };
    match e.hint() {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

pub fn run(args: MrcArgs) -> Result<(), CliError> {
    if let Some(r) = args.shards {
        if !(r > 0.0 && r <= 1.0) {
            return Err(CliError::usage(format!(
                "--shards {r}: the sampling rate must be in (0, 1]"
            ))
            .with_hint("e.g. --shards 0.01 samples 1 % of the blocks"));
        }
    }
    if args.shards_blocks == Some(0) {
        return Err(CliError::usage(
            "--shards-blocks 0: track at least one block",
        ));
    }
    if args.points == 0 {
        return Err(CliError::usage("--points 0: show at least one size"));
    }
    let from = match (args.from.clone(), args.csv.clone()) {
        (Some(Format::Csv(_)) | None, Some(spec)) => Some(Format::Csv(spec)),
        (Some(_), Some(_)) => {
            return Err(
                CliError::usage("--csv describes a CSV trace; --from names another format")
                    .with_hint("drop --csv, or say --from csv"),
            )
        }
        (from, None) => from,
    };
    let started = Instant::now();
    let (format, reader) =
        iolab_tracefile::open(&args.trace, from.as_ref()).map_err(trace_error)?;
    // LRU's curve does not read oracleGeneral's next-access field.
    let mut objects = reader
        .accept_zero_based_next_access()
        .objects(args.block_size);
    let (mode, mrc, bytes) = match (args.shards, args.shards_blocks) {
        (None, None) => {
            let (mrc, bytes) =
                try_exact(objects.by_ref().map(|r| r.map(|o| o.obj_id))).map_err(trace_error)?;
            ("exact".to_string(), mrc, bytes)
        }
        (rate, blocks) => {
            let mode = match (rate, blocks) {
                (Some(r), _) => ShardsMode::Rate(r),
                (None, Some(n)) => ShardsMode::Blocks(n as usize),
                (None, None) => unreachable!("handled above"),
            };
            let mut s = Shards::new(mode);
            for r in objects.by_ref() {
                s.access(r.map_err(trace_error)?.obj_id);
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
    if let Some(w) = Warning::zero_based(&args.trace, objects.zero_based_next_access()) {
        say!("iolab: warning: {w}");
    }
    let max = args.max_size.unwrap_or_else(|| mrc.max_size().max(1));
    let sizes = even_sizes(max, args.points);
    let curve = mrc.curve(&sizes);
    output(&args, format.name(), &mode, &mrc, &curve, bytes, elapsed)
}

fn output(
    args: &MrcArgs,
    format: &str,
    mode: &str,
    mrc: &Mrc,
    curve: &[(u64, f64)],
    bytes: usize,
    elapsed: f64,
) -> Result<(), CliError> {
    let misses = |r: f64| (r * mrc.requests).round() as u64;
    match args.format {
        MrcFormat::Csv => crate::output::emit(|out| {
            writeln!(out, "size_blocks,miss_ratio,misses")?;
            for &(s, r) in curve {
                writeln!(out, "{s},{r:.6},{}", misses(r))?;
            }
            Ok(())
        }),
        MrcFormat::Json => {
            #[derive(serde::Serialize)]
            struct Point {
                size_blocks: u64,
                miss_ratio: f64,
                misses: u64,
            }
            #[derive(serde::Serialize)]
            struct Out<'a> {
                schema: &'static str,
                trace: String,
                format: &'a str,
                method: &'a str,
                requests: u64,
                cold_misses: u64,
                structure_bytes: usize,
                elapsed_s: f64,
                curve: Vec<Point>,
            }
            let o = Out {
                schema: "iolab.mrc/1",
                trace: args.trace.display().to_string(),
                format,
                method: mode,
                requests: mrc.requests.round() as u64,
                cold_misses: mrc.cold.round() as u64,
                structure_bytes: bytes,
                elapsed_s: elapsed,
                curve: curve
                    .iter()
                    .map(|&(s, r)| Point {
                        size_blocks: s,
                        miss_ratio: r,
                        misses: misses(r),
                    })
                    .collect(),
            };
            crate::output::emit(|out| {
                serde_json::to_writer_pretty(&mut *out, &o).map_err(std::io::Error::other)?;
                writeln!(out)
            })
        }
        MrcFormat::Human => {
            say!(
                "{}: {} requests ({format}), {} first requests; LRU miss-ratio curve, {mode}, {:.2} s",
                args.trace.display(),
                thousands(mrc.requests.round() as u64),
                thousands(mrc.cold.round() as u64),
                elapsed
            );
            crate::output::emit(|out| {
                writeln!(
                    out,
                    "{:>14}  {:>10}  {:>14}",
                    "size (blocks)", "miss ratio", "misses"
                )?;
                for &(s, r) in curve {
                    writeln!(
                        out,
                        "{:>14}  {:>10.4}  {:>14}",
                        thousands(s),
                        r,
                        thousands(misses(r))
                    )?;
                }
                Ok(())
            })
        }
    }
}
