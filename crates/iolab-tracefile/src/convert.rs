//! Conversion between the formats.
//!
//! | from → to | what happens |
//! |---|---|
//! | iolab → oracleGeneral | split into blocks; time in whole seconds since the start; discards and flushes dropped (no access); next-access filled in |
//! | iolab → csv | split into blocks; time in ns since the start; op kept (flushes dropped) |
//! | iolab → iolab | copied record by record (checks the file) |
//! | oracleGeneral, csv → oracleGeneral, csv | record by record (time, id, size; op where both have one) |
//! | oracleGeneral, csv → iolab | object `i` becomes the request at byte `i × block size` of `size` bytes; oracleGeneral seconds become ns |
//!
//! The output is written next to its final name and renamed into place only when complete:
//! a failed conversion leaves nothing behind.

use std::path::{Path, PathBuf};

use crate::csv::CsvWriter;
use crate::error::{Error, ErrorKind, Location, Result};
use crate::format::{open, Format, Objects, TraceReader};
use crate::iolab::IolabWriter;
use crate::oracle::{fill_next_access, OracleWriter};
use crate::record::{BlockRequest, Flags, Op, TraceInfo};

/// What a conversion did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConvertSummary {
    /// Format read.
    pub from: &'static str,
    /// Format written.
    pub to: &'static str,
    /// Records read (block requests, or object requests).
    pub read: u64,
    /// Records written.
    pub written: u64,
    /// Requests dropped: flushes (no blocks), and discards for oracleGeneral (no op).
    pub dropped: u64,
    /// Distinct objects (oracleGeneral output only).
    pub distinct_objects: Option<u64>,
}

/// A temporary file next to `out`, renamed over it by [`Staged::commit`] and removed if
/// dropped before.
struct Staged {
    tmp: PathBuf,
    out: PathBuf,
    done: bool,
}

impl Staged {
    fn new(out: &Path) -> Staged {
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = out.with_file_name(format!(".{name}.iolab-tmp-{}", std::process::id()));
        Staged {
            tmp,
            out: out.to_owned(),
            done: false,
        }
    }

    fn commit(mut self) -> Result<()> {
        std::fs::rename(&self.tmp, &self.out).map_err(|e| Error::io(&self.out, "rename", e))?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

fn write_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::io(path, "write", e)
}

/// Convert `input` (in `from`, or guessed) to `output` in `to`, splitting block traces at
/// `block_size` bytes (checked by [`crate::blocks::check_block_size`]).
pub fn convert(
    input: &Path,
    from: Option<&Format>,
    output: &Path,
    to: &Format,
    block_size: u64,
) -> Result<ConvertSummary> {
    if let Err(why) = crate::blocks::check_block_size(block_size) {
        return Err(Error::new(
            input,
            Location::File,
            ErrorKind::Unsupported(why),
        ));
    }
    if let (Ok(a), Ok(b)) = (input.canonicalize(), output.canonicalize()) {
        if a == b {
            return Err(Error::new(
                output,
                Location::File,
                ErrorKind::Unsupported("the output is the input; write to another file".into()),
            ));
        }
    }
    let (from_fmt, reader) = open(input, from)?;
    // No output keeps oracleGeneral's next-access field (an oracleGeneral output gets it
    // computed anew), so fields counted from 0 are no reason to fail: this is how to repair them.
    let reader = reader.accept_zero_based_next_access();
    let staged = Staged::new(output);
    let tmp = staged.tmp.clone();
    let mut s = ConvertSummary {
        from: from_fmt.name(),
        to: to.name(),
        ..Default::default()
    };
    let w = write_err(&tmp);
    let seconds = from_fmt == Format::OracleGeneral;
    match to {
        Format::Iolab => {
            let info = reader.info().cloned().unwrap_or(TraceInfo::default());
            let mut out = IolabWriter::create(&tmp, &info)?;
            match reader {
                TraceReader::Iolab(r) => {
                    for req in r {
                        s.read += 1;
                        out.write(&req?).map_err(&w)?;
                    }
                }
                other => {
                    for o in other.objects(block_size) {
                        let o = o?;
                        s.read += 1;
                        let offset = o.obj_id.checked_mul(block_size).ok_or_else(|| {
                            Error::field(
                                input,
                                Location::Record {
                                    index: s.read - 1,
                                    byte: 0,
                                },
                                "obj-id",
                                o.obj_id,
                                format!("an id whose byte offset (id × {block_size}) fits 64 bits"),
                            )
                        })?;
                        out.write(&BlockRequest {
                            time_ns: if seconds {
                                o.time.saturating_mul(1_000_000_000)
                            } else {
                                o.time
                            },
                            offset,
                            len: o.size,
                            latency_ns: None,
                            op: o.op,
                            flags: Flags::default(),
                        })
                        .map_err(&w)?;
                    }
                }
            }
            s.written = out.finish().map_err(&w)?;
        }
        Format::OracleGeneral => {
            let block_level = from_fmt.is_block_level();
            let mut out = OracleWriter::create(&tmp)?;
            let mut objects = reader.objects(block_size);
            while let Some(o) = objects.next() {
                let o = o?;
                s.read += 1;
                if !matches!(o.op, Op::Read | Op::Write) {
                    s.dropped += 1;
                    continue;
                }
                let t = if block_level {
                    o.time / 1_000_000_000
                } else {
                    o.time
                };
                // oracleGeneral's time is 32 bits: a later time clamped would be a wrong
                // number in the output, so it is refused where it is read.
                let t = u32::try_from(t).map_err(|_| {
                    Error::field(
                        input,
                        objects.last_location(),
                        "time",
                        t,
                        "a time below 2^32 (oracleGeneral stores 32-bit times, seconds by \
                         libCacheSim's convention); convert to csv or iolab to keep it",
                    )
                })?;
                out.write(t, o.obj_id, o.size).map_err(&w)?;
            }
            s.dropped += objects.flushes();
            if let Objects::Blocks(b) = &objects {
                s.read = b.requests();
            }
            let (file, n) = out.finish().map_err(&w)?;
            s.written = n;
            s.distinct_objects = Some(fill_next_access(&file, &tmp)?);
        }
        Format::Csv(_) => {
            let mut out = CsvWriter::create(&tmp)?;
            let mut objects = reader.objects(block_size);
            for o in objects.by_ref() {
                let o = o?;
                s.read += 1;
                out.write(&o).map_err(&w)?;
            }
            s.dropped += objects.flushes();
            if let Objects::Blocks(b) = &objects {
                s.read = b.requests();
            }
            s.written = out.finish().map_err(&w)?;
        }
    }
    staged.commit()?;
    Ok(s)
}
