//! iolab-tracefile: block traces as data. Pure formats — no tracing here (that is
//! `iolab-blocktrace`, which writes through this crate).
//!
//! | module | content |
//! |---|---|
//! | [`record`] | [`BlockRequest`] (what the device saw), [`ObjRequest`] (what a cache simulator reads), [`TraceInfo`] |
//! | [`iolab`] | iolab's binary format: [`IolabWriter`], [`IolabReader`] |
//! | [`oracle`] | libCacheSim's `oracleGeneral`: [`OracleReader`], [`OracleWriter`], [`fill_next_access`], [`next_access`] |
//! | [`csv`] | CSV traces with configurable columns: [`CsvSpec`], [`CsvReader`], [`CsvWriter`] |
//! | [`blocks`] | block splitting: [`block_range`], [`SplitBlocks`] |
//! | [`format`] | [`Format`], [`guess`], [`open`] any trace as [`Objects`] |
//! | [`convert`](mod@convert) | [`convert()`](fn@convert) between formats |
//!
//! Reading a trace for a simulator:
//!
//! ```no_run
//! # fn main() -> iolab_tracefile::Result<()> {
//! let (format, reader) = iolab_tracefile::open("run-17.iolt".as_ref(), None)?;
//! for req in reader.objects(4096) {
//!     let req = req?; // obj_id = block number, size = 4096, op, time
//! }
//! # Ok(()) }
//! ```
//!
//! Every reader is a streaming iterator of `Result`s; errors name the file and the record
//! (number and byte) or line and column, and what was expected. docs/traces.md documents
//! the formats byte by byte.

pub mod blocks;
pub mod convert;
pub mod csv;
pub mod error;
pub mod format;
mod hash;
pub mod iolab;
pub mod oracle;
pub mod record;

mod binary;

pub use blocks::{block_range, check_block_size, SplitBlocks};
pub use convert::{convert, ConvertSummary};
pub use csv::{CsvReader, CsvSpec, CsvWriter};
pub use error::{Error, ErrorKind, Location, Result};
pub use format::{guess, open, Format, Objects, TraceReader, FORMAT_NAMES};
pub use hash::{IdHasher, IdMap};
pub use iolab::{IolabReader, IolabWriter};
pub use oracle::{fill_next_access, next_access, OracleReader, OracleWriter, ZeroBased};
pub use record::{BlockRequest, Flags, ObjRequest, Op, TraceInfo};
