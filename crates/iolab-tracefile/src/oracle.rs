//! libCacheSim's `oracleGeneral` format: no header, packed little-endian 24-byte records
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | time, u32 (seconds in libCacheSim's published traces) |
//! | 4..12 | object id, u64 |
//! | 12..16 | object size, bytes, u32 |
//! | 16..24 | position of the next request to the same object, i64, counted from 1 (the index from 0 plus 1); −1 if none |
//!
//! The positions count from 1 because libCacheSim's `traceConv` writes them so (its
//! "reference count starts with 1"); its reader also takes `i64::MAX` for "none". In
//! [`ObjRequest::next_access`] they are indices from 0 like everything else in iolab.
//! The next access is what Belady (OPT) needs. Writing it takes the whole trace:
//! [`OracleWriter`] writes records with −1, then [`fill_next_access`] walks the file
//! backwards once, patching the field in place, with memory for one entry per distinct
//! object (not per request) plus a fixed buffer.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::binary::{read_record, u32_at, u64_at};
use crate::error::{Error, ErrorKind, Location, Result};
use crate::hash::IdMap;
use crate::record::{ObjRequest, Op};

/// Bytes per record.
pub const RECORD_LEN: usize = 24;

/// Encode a record.
pub fn encode(time: u32, obj_id: u64, size: u32, next: Option<u64>) -> [u8; RECORD_LEN] {
    let mut b = [0u8; RECORD_LEN];
    b[0..4].copy_from_slice(&time.to_le_bytes());
    b[4..12].copy_from_slice(&obj_id.to_le_bytes());
    b[12..16].copy_from_slice(&size.to_le_bytes());
    let next = next.map_or(-1i64, position);
    b[16..24].copy_from_slice(&next.to_le_bytes());
    b
}

/// The stored form of a next-access index: its position from 1.
fn position(index: u64) -> i64 {
    i64::try_from(index.saturating_add(1)).unwrap_or(i64::MAX)
}

/// Writes oracleGeneral records with next-access −1; call [`fill_next_access`] on the file
/// afterwards to fill them in.
pub struct OracleWriter<W: Write> {
    out: BufWriter<W>,
    count: u64,
}

impl OracleWriter<File> {
    /// Create (or truncate) `path`, open for reading too ([`fill_next_access`] reads it
    /// back).
    pub fn create(path: &Path) -> Result<Self> {
        let f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io(path, "create", e))?;
        Ok(OracleWriter::new(f))
    }
}

impl<W: Write> OracleWriter<W> {
    /// Write to `out`.
    pub fn new(out: W) -> Self {
        OracleWriter {
            out: BufWriter::with_capacity(1 << 16, out),
            count: 0,
        }
    }

    /// Append a record (its next-access is written as −1).
    pub fn write(&mut self, time: u32, obj_id: u64, size: u32) -> std::io::Result<()> {
        self.count += 1;
        self.out.write_all(&encode(time, obj_id, size, None))
    }

    /// Flush; returns the writer and the number of records.
    pub fn finish(self) -> std::io::Result<(W, u64)> {
        let w = self.out.into_inner().map_err(|e| e.into_error())?;
        Ok((w, self.count))
    }
}

/// Records per chunk of the backward pass (1.5 MiB).
const CHUNK: usize = 1 << 16;

/// Fill the next-access field of every record of an oracleGeneral file, in one backward
/// pass over the file: for each record from the last to the first, the next access is the
/// index where its object was last seen. Memory: one map entry per distinct object.
/// Returns the number of distinct objects.
pub fn fill_next_access(file: &File, path: &Path) -> Result<u64> {
    let len = file
        .metadata()
        .map_err(|e| Error::io(path, "stat", e))?
        .len();
    if len % RECORD_LEN as u64 != 0 {
        let index = len / RECORD_LEN as u64;
        return Err(Error::new(
            path,
            Location::Record {
                index,
                byte: index * RECORD_LEN as u64,
            },
            ErrorKind::Truncated {
                what: "record",
                expected: RECORD_LEN as u64,
                found: len % RECORD_LEN as u64,
            },
        ));
    }
    let n = len / RECORD_LEN as u64;
    let mut seen: IdMap<u64> = HashMap::default();
    let mut buf = vec![0u8; CHUNK * RECORD_LEN];
    let mut end = n;
    while end > 0 {
        let start = end.saturating_sub(CHUNK as u64);
        let chunk = &mut buf[..((end - start) as usize) * RECORD_LEN];
        let at = start * RECORD_LEN as u64;
        file.read_exact_at(chunk, at)
            .map_err(|e| Error::io(path, "read", e))?;
        for i in (0..(end - start) as usize).rev() {
            let rec = &mut chunk[i * RECORD_LEN..(i + 1) * RECORD_LEN];
            let id = u64_at(rec, 4);
            let index = start + i as u64;
            let next = seen.insert(id, index);
            let next = next.map_or(-1i64, position);
            rec[16..24].copy_from_slice(&next.to_le_bytes());
        }
        file.write_all_at(chunk, at)
            .map_err(|e| Error::io(path, "write", e))?;
        end = start;
    }
    Ok(seen.len() as u64)
}

/// The next-access index of every request of an in-memory id sequence (`None`: never
/// again), by the same backward pass.
pub fn next_access(ids: &[u64]) -> Vec<Option<u64>> {
    let mut seen: IdMap<u64> = HashMap::default();
    let mut out = vec![None; ids.len()];
    for (i, &id) in ids.iter().enumerate().rev() {
        out[i] = seen.insert(id, i as u64);
    }
    out
}

/// Reads an oracleGeneral file, one [`ObjRequest`] (op [`Op::Read`]) per iteration. A next-access
/// index that does not point forward (other than −1) is a located error: this is the check
/// that catches a file in another format, since oracleGeneral has no magic.
///
/// Some writers count the positions from 0. Their fields point one record early, which is
/// noticed only where a field then points at its own record (the next request to an object
/// is the very next record). A reader whose caller does not need the field
/// ([`OracleReader::accept_zero_based`]) takes such fields, reporting them
/// ([`OracleReader::zero_based`]); fields that point backwards stay errors.
pub struct OracleReader<R: Read> {
    input: R,
    path: PathBuf,
    index: u64,
    done: bool,
    accept_zero_based: bool,
    zero_based: Option<ZeroBased>,
}

/// Next-access fields a reader took although they point at their own record: positions
/// counted from 0 (see [`OracleReader::accept_zero_based`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ZeroBased {
    /// Records with such a field.
    pub records: u64,
    /// The first of them (index from 0).
    pub first: u64,
}

impl OracleReader<BufReader<File>> {
    /// Open `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let f = File::open(path).map_err(|e| Error::io(path, "open", e))?;
        Ok(OracleReader::new(
            BufReader::with_capacity(1 << 16, f),
            path,
        ))
    }
}

impl<R: Read> OracleReader<R> {
    /// Read from `input`; `path` names it in errors.
    pub fn new(input: R, path: &Path) -> Self {
        OracleReader {
            input,
            path: path.to_owned(),
            index: 0,
            done: false,
            accept_zero_based: false,
            zero_based: None,
        }
    }

    /// Take next-access fields that point at their own record — positions counted from 0 —
    /// instead of failing on them: for callers that do not use the field (everything but
    /// Belady) or compute it anew. Such records get no [`ObjRequest::next_access`], and once
    /// [`OracleReader::zero_based`] reports any, the other fields are one record early too.
    pub fn accept_zero_based(mut self) -> Self {
        self.accept_zero_based = true;
        self
    }

    /// The fields counted from 0 taken so far (see [`OracleReader::accept_zero_based`]).
    pub fn zero_based(&self) -> Option<ZeroBased> {
        self.zero_based
    }

    fn next_record(&mut self) -> Result<Option<ObjRequest>> {
        let byte = self.index * RECORD_LEN as u64;
        let at = Location::Record {
            index: self.index,
            byte,
        };
        let mut b = [0u8; RECORD_LEN];
        if !read_record(&mut self.input, &mut b, &self.path, at, "record")? {
            return Ok(None);
        }
        let next = u64_at(&b, 16) as i64;
        let own = self.index as i64 + 1;
        let next_access = match next {
            -1 | i64::MAX => None,
            n if n > own => Some(n as u64 - 1),
            n if n == own && self.accept_zero_based => {
                let z = self.zero_based.get_or_insert(ZeroBased {
                    records: 0,
                    first: self.index,
                });
                z.records += 1;
                None
            }
            value => {
                return Err(Error::new(
                    &self.path,
                    Location::Record {
                        index: self.index,
                        byte: byte + 16,
                    },
                    ErrorKind::NextAccess {
                        value,
                        index: self.index,
                    },
                ))
            }
        };
        self.index += 1;
        Ok(Some(ObjRequest {
            time: u64::from(u32_at(&b, 0)),
            obj_id: u64_at(&b, 4),
            size: u32_at(&b, 12),
            op: Op::Read,
            next_access,
        }))
    }
}

impl<R: Read> Iterator for OracleReader<R> {
    type Item = Result<ObjRequest>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.next_record().transpose();
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }
}
