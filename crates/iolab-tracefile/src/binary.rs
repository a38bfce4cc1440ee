//! Fixed-size little-endian records: the reading loop both binary formats share.

use std::io::{self, Read};
use std::path::Path;

use crate::error::{Error, ErrorKind, Location, Result};

/// Read a whole record into `buf`: `Ok(false)` at a clean end of file, a located
/// [`ErrorKind::Truncated`] if the file ends inside the record.
pub(crate) fn read_record<R: Read>(
    r: &mut R,
    buf: &mut [u8],
    path: &Path,
    at: Location,
    what: &'static str,
) -> Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(Error::new(
                    path,
                    at,
                    ErrorKind::Io {
                        action: "read",
                        source: e,
                    },
                ))
            }
        }
    }
    if got == 0 {
        return Ok(false);
    }
    if got < buf.len() {
        return Err(Error::new(
            path,
            at,
            ErrorKind::Truncated {
                what,
                expected: buf.len() as u64,
                found: got as u64,
            },
        ));
    }
    Ok(true)
}

pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default())
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default())
}
