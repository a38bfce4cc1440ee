//! The trace formats, telling them apart, and opening any of them as a stream of cache
//! requests.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::blocks::SplitBlocks;
use crate::csv::{CsvReader, CsvSpec};
use crate::error::{Error, ErrorKind, Location, Result};
use crate::iolab::{IolabReader, MAGIC};
use crate::oracle::{OracleReader, ZeroBased};
use crate::record::{ObjRequest, TraceInfo};

/// A trace format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    /// iolab's block-trace format (request level, magic `IOLABTRC`).
    Iolab,
    /// libCacheSim's `oracleGeneral` (24-byte records, no header).
    OracleGeneral,
    /// CSV with these columns.
    Csv(CsvSpec),
}

/// The names [`Format::parse`] accepts, for messages.
pub const FORMAT_NAMES: &str = "iolab, oracleGeneral, csv";

/// First bytes of a zstd frame (libCacheSim's published traces are `.oracleGeneral.zst`).
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

impl Format {
    /// `iolab`, `oracleGeneral` (any case), `csv` (with iolab's columns).
    pub fn parse(name: &str) -> Option<Format> {
        Some(match name.to_ascii_lowercase().as_str() {
            "iolab" => Format::Iolab,
            "oraclegeneral" => Format::OracleGeneral,
            "csv" => Format::Csv(CsvSpec::default()),
            _ => return None,
        })
    }

    /// The name [`Format::parse`] takes.
    pub fn name(&self) -> &'static str {
        match self {
            Format::Iolab => "iolab",
            Format::OracleGeneral => "oracleGeneral",
            Format::Csv(_) => "csv",
        }
    }

    /// Whether requests carry an op (read/write/...); without one every request reads.
    pub fn has_ops(&self) -> bool {
        match self {
            Format::Iolab => true,
            Format::OracleGeneral => false,
            Format::Csv(s) => s.op_col.is_some(),
        }
    }

    /// Whether requests carry their next-access index (needed by Belady).
    pub fn has_next_access(&self) -> bool {
        matches!(self, Format::OracleGeneral)
    }

    /// Whether the format is at the block-request level (split into blocks when read as
    /// cache requests).
    pub fn is_block_level(&self) -> bool {
        matches!(self, Format::Iolab)
    }
}

/// Tell the format of `path`: iolab's magic first; a zstd frame is refused with advice;
/// then the name (`*.oracleGeneral`, `*.oracleGeneral.bin`, `*.csv`; iolab traces are
/// conventionally `*.iolt`). Anything else is an error that says so.
pub fn guess(path: &Path) -> Result<Format> {
    let mut f = File::open(path).map_err(|e| Error::io(path, "open", e))?;
    let mut head = [0u8; 8];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, "read", e)),
        }
    }
    if got == MAGIC.len() && head == MAGIC {
        return Ok(Format::Iolab);
    }
    if got >= 4 && head[..4] == ZSTD_MAGIC {
        return Err(Error::new(
            path,
            Location::File,
            ErrorKind::Unsupported(
                "zstd-compressed; decompress it first (zstd -d FILE) and read the result".into(),
            ),
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".oraclegeneral") || name.ends_with(".oraclegeneral.bin") {
        return Ok(Format::OracleGeneral);
    }
    if name.ends_with(".csv") {
        return Ok(Format::Csv(CsvSpec::default()));
    }
    let reason = if name.ends_with(".iolt") {
        return Err(Error::new(
            path,
            Location::Header { byte: 0 },
            ErrorKind::BadMagic {
                found: String::from_utf8_lossy(&head[..got]).into_owned(),
            },
        ));
    } else if got == 0 {
        "the file is empty and its name does not say (*.iolt, *.oracleGeneral, *.csv)".into()
    } else {
        format!(
            "no iolab magic (IOLABTRC) and the name {name:?} does not end in .iolt, \
             .oracleGeneral, .oracleGeneral.bin or .csv"
        )
    };
    Err(Error::new(
        path,
        Location::File,
        ErrorKind::UnknownFormat { reason },
    ))
}

/// An open trace of any format.
pub enum TraceReader {
    /// iolab's format (block requests).
    Iolab(IolabReader<BufReader<File>>),
    /// oracleGeneral.
    OracleGeneral(OracleReader<BufReader<File>>),
    /// CSV.
    Csv(CsvReader<BufReader<File>>),
}

/// Open `path` in `format`, or the format [`guess`] finds.
pub fn open(path: &Path, format: Option<&Format>) -> Result<(Format, TraceReader)> {
    let format = match format {
        Some(f) => f.clone(),
        None => guess(path)?,
    };
    let reader = match &format {
        Format::Iolab => TraceReader::Iolab(IolabReader::open(path)?),
        Format::OracleGeneral => TraceReader::OracleGeneral(OracleReader::open(path)?),
        Format::Csv(spec) => TraceReader::Csv(CsvReader::open(path, spec.clone())?),
    };
    Ok((format, reader))
}

impl TraceReader {
    /// The header of an iolab trace.
    pub fn info(&self) -> Option<&TraceInfo> {
        match self {
            TraceReader::Iolab(r) => Some(r.info()),
            _ => None,
        }
    }

    /// For a caller that does not use oracleGeneral's next-access field: take fields counted
    /// from 0 ([`OracleReader::accept_zero_based`]; other formats have no such field).
    pub fn accept_zero_based_next_access(self) -> Self {
        match self {
            TraceReader::OracleGeneral(r) => TraceReader::OracleGeneral(r.accept_zero_based()),
            other => other,
        }
    }

    /// Read as cache requests: iolab traces split into blocks of `block_size` bytes (see
    /// [`crate::blocks::check_block_size`]); object traces as they are.
    pub fn objects(self, block_size: u64) -> Objects {
        match self {
            TraceReader::Iolab(r) => Objects::Blocks(SplitBlocks::new(r, block_size)),
            TraceReader::OracleGeneral(r) => Objects::OracleGeneral(r),
            TraceReader::Csv(r) => Objects::Csv(r),
        }
    }
}

/// Cache requests from any format.
pub enum Objects {
    /// Blocks of an iolab trace.
    Blocks(SplitBlocks<IolabReader<BufReader<File>>>),
    /// oracleGeneral records.
    OracleGeneral(OracleReader<BufReader<File>>),
    /// CSV rows.
    Csv(CsvReader<BufReader<File>>),
}

impl Objects {
    /// Flush requests skipped so far (block traces only: they touch no block).
    pub fn flushes(&self) -> u64 {
        match self {
            Objects::Blocks(s) => s.flushes(),
            _ => 0,
        }
    }

    /// Where the request read last came from: its CSV line; for the other formats the
    /// file (a block is one of several of a record, and oracleGeneral is read as it is).
    pub fn last_location(&self) -> Location {
        match self {
            Objects::Csv(r) => Location::Line {
                line: r.line(),
                column: 1,
            },
            _ => Location::File,
        }
    }

    /// oracleGeneral next-access fields counted from 0 taken so far (see
    /// [`TraceReader::accept_zero_based_next_access`]).
    pub fn zero_based_next_access(&self) -> Option<ZeroBased> {
        match self {
            Objects::OracleGeneral(r) => r.zero_based(),
            _ => None,
        }
    }
}

impl Iterator for Objects {
    type Item = Result<ObjRequest>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Objects::Blocks(r) => r.next(),
            Objects::OracleGeneral(r) => r.next(),
            Objects::Csv(r) => r.next(),
        }
    }
}
