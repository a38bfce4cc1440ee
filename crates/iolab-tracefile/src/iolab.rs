//! iolab's own block-trace format: a 96-byte header, then 32-byte records, all
//! little-endian. docs/traces.md describes it byte by byte.
//!
//! Header (version 1):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `IOLABTRC` |
//! | 8..10 | version, u16 (1) |
//! | 10..12 | header length, u16 (96; readers skip what they do not know) |
//! | 12..14 | record length, u16 (32) |
//! | 14..16 | reserved, 0 |
//! | 16..20 | logical sector size of the device, u32 |
//! | 20..24 | device major, u32 |
//! | 24..28 | device minor, u32 |
//! | 28..32 | reserved, 0 |
//! | 32..40 | start of the trace on `CLOCK_MONOTONIC`, ns, u64 |
//! | 40..48 | number of records, u64; `u64::MAX` while the trace is being written |
//! | 48..56 | partition offset on its disk, bytes, u64 (0 for a whole disk) |
//! | 56..64 | reserved, 0 |
//! | 64..96 | device name, UTF-8, NUL-padded |
//!
//! Record:
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | issue time, ns since the start, u64 |
//! | 8..16 | offset, bytes, u64 |
//! | 16..24 | latency (issue → completion), ns, u64; `u64::MAX` if not seen |
//! | 24..28 | length, bytes, u32 |
//! | 28 | op: 0 read, 1 write, 2 flush, 3 discard, 4 write-zeroes, 5 other |
//! | 29 | flags: 1 sync, 2 FUA, 4 preflush, 8 metadata, 16 read-ahead, 32 error |
//! | 30..32 | reserved, 0 |

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::binary::{read_record, u16_at, u32_at, u64_at};
use crate::error::{Error, ErrorKind, Location, Result};
use crate::record::{BlockRequest, Flags, Op, TraceInfo};

/// The first 8 bytes of an iolab trace.
pub const MAGIC: [u8; 8] = *b"IOLABTRC";
/// The format version this build reads and writes.
pub const VERSION: u16 = 1;
/// Header length of version 1.
pub const HEADER_LEN: usize = 96;
/// Record length of version 1.
pub const RECORD_LEN: usize = 32;
/// The record count of a trace still being written.
pub const COUNT_UNKNOWN: u64 = u64::MAX;
/// Bytes of the device name in the header.
const NAME_LEN: usize = 32;
/// Where the record count is in the header.
const COUNT_AT: u64 = 40;

/// Encode a header.
pub fn encode_header(info: &TraceInfo, count: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_le_bytes());
    h[10..12].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
    h[12..14].copy_from_slice(&(RECORD_LEN as u16).to_le_bytes());
    h[16..20].copy_from_slice(&info.sector_size.to_le_bytes());
    h[20..24].copy_from_slice(&info.major.to_le_bytes());
    h[24..28].copy_from_slice(&info.minor.to_le_bytes());
    h[32..40].copy_from_slice(&info.start_ns.to_le_bytes());
    h[40..48].copy_from_slice(&count.to_le_bytes());
    h[48..56].copy_from_slice(&info.partition_offset.to_le_bytes());
    let name = truncate_utf8(&info.device, NAME_LEN);
    h[64..64 + name.len()].copy_from_slice(name.as_bytes());
    h
}

fn truncate_utf8(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Encode a record.
pub fn encode_record(r: &BlockRequest) -> [u8; RECORD_LEN] {
    let mut b = [0u8; RECORD_LEN];
    b[0..8].copy_from_slice(&r.time_ns.to_le_bytes());
    b[8..16].copy_from_slice(&r.offset.to_le_bytes());
    let lat = r.latency_ns.map_or(u64::MAX, |l| l.min(u64::MAX - 1));
    b[16..24].copy_from_slice(&lat.to_le_bytes());
    b[24..28].copy_from_slice(&r.len.to_le_bytes());
    b[28] = r.op.code();
    b[29] = r.flags.0;
    b
}

/// Decode a record; `Err(code)` for an unknown op.
pub fn decode_record(b: &[u8; RECORD_LEN]) -> Result<BlockRequest, u8> {
    let op = Op::from_code(b[28]).ok_or(b[28])?;
    let lat = u64_at(b, 16);
    Ok(BlockRequest {
        time_ns: u64_at(b, 0),
        offset: u64_at(b, 8),
        latency_ns: (lat != u64::MAX).then_some(lat),
        len: u32_at(b, 24),
        op,
        flags: Flags(b[29]),
    })
}

/// Writes an iolab trace: the header with an unknown count first, records as they come,
/// and the count at [`IolabWriter::finish`]. A trace whose writer did not finish still
/// reads (up to its last whole record).
pub struct IolabWriter<W: Write + Seek> {
    out: BufWriter<W>,
    count: u64,
}

impl IolabWriter<File> {
    /// Create (or truncate) `path` and write the header.
    pub fn create(path: &Path, info: &TraceInfo) -> Result<Self> {
        let f = File::create(path).map_err(|e| Error::io(path, "create", e))?;
        IolabWriter::new(f, info).map_err(|e| Error::io(path, "write", e))
    }
}

impl<W: Write + Seek> IolabWriter<W> {
    /// Write the header to `out` (at its current position, which must be 0).
    pub fn new(out: W, info: &TraceInfo) -> std::io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 16, out);
        out.write_all(&encode_header(info, COUNT_UNKNOWN))?;
        Ok(IolabWriter { out, count: 0 })
    }

    /// Append a record.
    pub fn write(&mut self, r: &BlockRequest) -> std::io::Result<()> {
        self.count += 1;
        self.out.write_all(&encode_record(r))
    }

    /// Records written so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Write the record count into the header and flush; returns the count.
    pub fn finish(mut self) -> std::io::Result<u64> {
        self.out.flush()?;
        let mut w = self.out.into_inner().map_err(|e| e.into_error())?;
        w.seek(SeekFrom::Start(COUNT_AT))?;
        w.write_all(&self.count.to_le_bytes())?;
        w.seek(SeekFrom::End(0))?;
        w.flush()?;
        Ok(self.count)
    }
}

/// Reads an iolab trace: the header at [`IolabReader::open`], then one [`BlockRequest`]
/// per iteration, each error located.
pub struct IolabReader<R: Read> {
    input: R,
    path: PathBuf,
    info: TraceInfo,
    count: Option<u64>,
    index: u64,
    record_len: usize,
    done: bool,
}

impl IolabReader<BufReader<File>> {
    /// Open `path` and read its header.
    pub fn open(path: &Path) -> Result<Self> {
        let f = File::open(path).map_err(|e| Error::io(path, "open", e))?;
        IolabReader::new(BufReader::with_capacity(1 << 16, f), path)
    }
}

impl<R: Read> IolabReader<R> {
    /// Read the header from `input`; `path` names it in errors.
    pub fn new(mut input: R, path: &Path) -> Result<Self> {
        let at0 = Location::Header { byte: 0 };
        let mut fixed = [0u8; 16];
        if !read_record(&mut input, &mut fixed, path, at0, "header")? {
            return Err(Error::new(
                path,
                at0,
                ErrorKind::Truncated {
                    what: "header",
                    expected: HEADER_LEN as u64,
                    found: 0,
                },
            ));
        }
        if fixed[0..8] != MAGIC {
            return Err(Error::new(
                path,
                at0,
                ErrorKind::BadMagic {
                    found: String::from_utf8_lossy(&fixed[0..8]).into_owned(),
                },
            ));
        }
        let version = u16_at(&fixed, 8);
        if version != VERSION {
            return Err(Error::new(
                path,
                Location::Header { byte: 8 },
                ErrorKind::UnsupportedVersion {
                    found: version,
                    supported: VERSION,
                },
            ));
        }
        let header_len = usize::from(u16_at(&fixed, 10));
        if header_len < HEADER_LEN {
            return Err(Error::field(
                path,
                Location::Header { byte: 10 },
                "header length",
                header_len,
                format!("at least {HEADER_LEN}"),
            ));
        }
        let record_len = usize::from(u16_at(&fixed, 12));
        if record_len < RECORD_LEN {
            return Err(Error::field(
                path,
                Location::Header { byte: 12 },
                "record length",
                record_len,
                format!("at least {RECORD_LEN}"),
            ));
        }
        let mut rest = vec![0u8; header_len - 16];
        let truncated = |found: u64| {
            Error::new(
                path,
                Location::Header { byte: 16 + found },
                ErrorKind::Truncated {
                    what: "header",
                    expected: header_len as u64,
                    found: 16 + found,
                },
            )
        };
        match read_record(
            &mut input,
            &mut rest,
            path,
            Location::Header { byte: 16 },
            "header",
        ) {
            Ok(true) => {}
            Ok(false) => return Err(truncated(0)),
            Err(Error {
                kind: ErrorKind::Truncated { found, .. },
                ..
            }) => return Err(truncated(found)),
            Err(e) => return Err(e),
        }
        let mut h = fixed.to_vec();
        h.extend_from_slice(&rest);
        let sector_size = u32_at(&h, 16);
        if sector_size == 0 || !sector_size.is_power_of_two() {
            return Err(Error::field(
                path,
                Location::Header { byte: 16 },
                "sector size",
                sector_size,
                "a power of two (512, 4096)",
            ));
        }
        let name = &h[64..64 + NAME_LEN];
        let name_end = name.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
        let count = u64_at(&h, 40);
        let info = TraceInfo {
            device: String::from_utf8_lossy(&name[..name_end]).into_owned(),
            major: u32_at(&h, 20),
            minor: u32_at(&h, 24),
            sector_size,
            partition_offset: u64_at(&h, 48),
            start_ns: u64_at(&h, 32),
        };
        Ok(IolabReader {
            input,
            path: path.to_owned(),
            info,
            count: (count != COUNT_UNKNOWN).then_some(count),
            index: 0,
            record_len,
            done: false,
        })
    }

    /// The header.
    pub fn info(&self) -> &TraceInfo {
        &self.info
    }

    /// The record count the header gives; `None` for a trace whose writer did not finish.
    pub fn record_count(&self) -> Option<u64> {
        self.count
    }

    fn next_record(&mut self) -> Result<Option<BlockRequest>> {
        let header_len = HEADER_LEN as u64;
        let byte = header_len + self.index * self.record_len as u64;
        let at = Location::Record {
            index: self.index,
            byte,
        };
        let mut buf = [0u8; 64];
        let buf = &mut buf[..self.record_len.min(64)];
        let whole = read_record(&mut self.input, buf, &self.path, at, "record")?;
        if whole && self.record_len > 64 {
            // A later version's longer record: skip its tail.
            let mut tail = vec![0u8; self.record_len - 64];
            if !read_record(&mut self.input, &mut tail, &self.path, at, "record")? {
                return Err(Error::new(
                    &self.path,
                    at,
                    ErrorKind::Truncated {
                        what: "record",
                        expected: self.record_len as u64,
                        found: 64,
                    },
                ));
            }
        }
        if !whole {
            if let Some(expected) = self.count.filter(|&c| c != self.index) {
                return Err(Error::new(
                    &self.path,
                    at,
                    ErrorKind::MissingRecords {
                        expected,
                        found: self.index,
                    },
                ));
            }
            return Ok(None);
        }
        if self.count.is_some_and(|c| self.index >= c) {
            return Err(Error::new(
                &self.path,
                at,
                ErrorKind::BadField {
                    field: "record count",
                    value: self.count.unwrap_or(0).to_string(),
                    expected: "the number of records in the file (there are more)".into(),
                },
            ));
        }
        let fixed: &[u8; RECORD_LEN] = buf[..RECORD_LEN].try_into().unwrap_or(&[0; RECORD_LEN]);
        let r = decode_record(fixed).map_err(|code| {
            Error::field(
                &self.path,
                Location::Record {
                    index: self.index,
                    byte: byte + 28,
                },
                "op",
                code,
                "0 read, 1 write, 2 flush, 3 discard, 4 write-zeroes, 5 other",
            )
        })?;
        self.index += 1;
        Ok(Some(r))
    }
}

impl<R: Read> Iterator for IolabReader<R> {
    type Item = Result<BlockRequest>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_record() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
