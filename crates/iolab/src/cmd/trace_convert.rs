//! `iolab trace convert IN OUT --to FORMAT`: block traces between iolab's format and
//! libCacheSim's oracleGeneral and CSV (iolab-tracefile does the work).
//!
//! Exit codes: 0 converted; 2 bad option, unreadable or malformed input (a located error:
//! record and byte, or line and column); 1 writing failed. A failed conversion leaves no
//! output file.

use std::path::PathBuf;

use iolab_tracefile::{convert, CsvSpec, Format, FORMAT_NAMES};

use crate::error::CliError;
use iolab_util::units::thousands;

#[derive(clap::Args, Debug)]
#[command(
    about = "Convert a block trace between iolab's format and libCacheSim's oracleGeneral and CSV",
    after_help = "Examples:\n  iolab trace convert run.iolt run.oracleGeneral.bin --to oracleGeneral --block-size 4K\n  iolab trace convert run.iolt run.csv --to csv\n  iolab trace convert w.csv w.iolt --to iolab --csv 'time-col=1,obj-id-col=2,header=false'\n\nBlock traces are split into blocks of --block-size bytes: each block a request touches\nbecomes one record (object id = byte offset / block size). oracleGeneral gets the\nnext-access index of every record (for Belady). docs/traces.md describes the formats.\nExit codes: 0 ok, 1 writing failed, 2 bad option or malformed input."
)]
pub struct ConvertArgs {
    /// The trace to read
    #[arg(value_name = "IN")]
    pub input: PathBuf,

    /// The file to write (replaced only when the conversion succeeded)
    #[arg(value_name = "OUT")]
    pub output: PathBuf,

    /// Format to write: iolab, oracleGeneral, csv
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub to: Format,

    /// Format of IN (default: from its magic, then its name: *.iolt, *.oracleGeneral[.bin], *.csv)
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub from: Option<Format>,

    /// Cache block size: block requests are split into blocks of this many bytes (a multiple
    /// of 512; e.g. 4K, 64K); for object traces written as iolab traces, object i is at byte
    /// i × block size
    #[arg(long, value_name = "BYTES", default_value = "4K", value_parser = parse_block_size)]
    pub block_size: u64,

    /// Columns of a CSV input, libCacheSim-style: time-col=N, obj-id-col=N, obj-size-col=N,
    /// op-col=N, header=true|false, delimiter=C, obj-id-is-num=true|false (default: iolab's
    /// own CSV, time,obj_id,obj_size,op with a header)
    #[arg(long, value_name = "SPEC", value_parser = CsvSpec::parse)]
    pub csv: Option<CsvSpec>,
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::parse(s).ok_or_else(|| format!("unknown trace format {s:?} (formats: {FORMAT_NAMES})"))
}

fn parse_block_size(s: &str) -> Result<u64, String> {
    let n = iolab_util::units::parse_size(s).map_err(|e| e.to_string())?;
    iolab_tracefile::check_block_size(n)
}

pub fn run(args: ConvertArgs) -> Result<(), CliError> {
    let from = match (args.from, args.csv) {
        (Some(Format::Csv(_)) | None, Some(spec)) => Some(Format::Csv(spec)),
        (Some(_), Some(_)) => {
            return Err(
                CliError::usage("--csv describes a CSV input; --from names another format")
                    .with_hint("drop --csv, or say --from csv"),
            )
        }
        (from, None) => from,
    };
    let s = convert(
        &args.input,
        from.as_ref(),
        &args.output,
        &args.to,
        args.block_size,
    )
    .map_err(|e| {
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
    })?;
    let dropped = if s.dropped > 0 {
        format!(
            "; {} without blocks or op dropped (flushes{})",
            thousands(s.dropped),
            if args.to == Format::OracleGeneral {
                ", discards, write-zeroes"
            } else {
                ""
            }
        )
    } else {
        String::new()
    };
    let objects = s
        .distinct_objects
        .map(|n| format!(", {} distinct objects", thousands(n)))
        .unwrap_or_default();
    say!(
        "{} {} records → {} {} records in {}{objects}{dropped}",
        thousands(s.read),
        s.from,
        thousands(s.written),
        s.to,
        args.output.display()
    );
    Ok(())
}
