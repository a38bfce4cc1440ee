//! CSV traces, read the way libCacheSim's csv reader reads them: a delimiter, an optional
//! header row, and 1-based column numbers for time, object id, object size and op (only the
//! object id is required). iolab writes `time,obj_id,obj_size,op` with a header row.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Location, Result};
use crate::record::{ObjRequest, Op};

/// Which columns hold what; libCacheSim's `-t "time-col=1, obj-id-col=2, ..."`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CsvSpec {
    /// Column of the time (1-based); `None`: the record number.
    pub time_col: Option<usize>,
    /// Column of the object id (1-based).
    pub obj_id_col: usize,
    /// Column of the object size; `None`: every object has [`CsvSpec::default_size`] bytes.
    pub obj_size_col: Option<usize>,
    /// Column of the op; `None`: every request is a read.
    pub op_col: Option<usize>,
    /// Whether the first line is a header row (skipped).
    pub header: bool,
    /// Field delimiter.
    pub delimiter: u8,
    /// Whether object ids are numbers; if not, they are hashed (FNV-1a, 64 bit).
    pub obj_id_is_num: bool,
    /// Object size when there is no size column.
    pub default_size: u32,
}

impl Default for CsvSpec {
    /// What iolab writes: `time,obj_id,obj_size,op` with a header row.
    fn default() -> Self {
        CsvSpec {
            time_col: Some(1),
            obj_id_col: 2,
            obj_size_col: Some(3),
            op_col: Some(4),
            header: true,
            delimiter: b',',
            obj_id_is_num: true,
            default_size: 1,
        }
    }
}

/// The header row iolab writes.
pub const HEADER: &str = "time,obj_id,obj_size,op";

impl CsvSpec {
    /// Parse libCacheSim-style options: `time-col=1,obj-id-col=2,obj-size-col=3,op-col=4,
    /// header=true,delimiter=;,obj-id-is-num=true` (spaces allowed; `0` for a column means
    /// none; keys not given keep iolab's defaults; `delimiter=,`, `delimiter=\t` (or `tab`)
    /// and `delimiter=space` (or a trailing `delimiter= `) work).
    pub fn parse(s: &str) -> Result<CsvSpec, String> {
        let mut spec = CsvSpec::default();
        let mut rest = s.trim_start();
        while !rest.trim().is_empty() {
            let (key, after) = rest
                .split_once('=')
                .ok_or_else(|| format!("{rest:?} is not KEY=VALUE"))?;
            let key = key.trim();
            // The delimiter may itself be a comma: its value is the next character.
            let (value, after) = if key == "delimiter" {
                let v = if let Some(r) = after.strip_prefix("\\t") {
                    ("\t", r)
                } else if let Some(r) = after.strip_prefix("tab") {
                    ("\t", r)
                } else if let Some(r) = after.strip_prefix("space") {
                    (" ", r)
                } else {
                    let c = after.chars().next().ok_or("delimiter= needs a character")?;
                    after.split_at(c.len_utf8())
                };
                (v.0, v.1.trim_start().strip_prefix(',').unwrap_or(v.1))
            } else {
                match after.split_once(',') {
                    Some((v, a)) => (v, a),
                    None => (after, ""),
                }
            };
            let value = if key == "delimiter" {
                value
            } else {
                value.trim()
            };
            let col = |v: &str| -> Result<Option<usize>, String> {
                let n: usize = v
                    .parse()
                    .map_err(|_| format!("{key}={v:?}: expected a column number (1-based)"))?;
                Ok((n > 0).then_some(n))
            };
            let flag = |v: &str| -> Result<bool, String> {
                match v.to_ascii_lowercase().as_str() {
                    "true" | "1" | "yes" => Ok(true),
                    "false" | "0" | "no" => Ok(false),
                    _ => Err(format!("{key}={v:?}: expected true or false")),
                }
            };
            match key {
                "time-col" => spec.time_col = col(value)?,
                "obj-id-col" => {
                    spec.obj_id_col = col(value)?.ok_or("obj-id-col must be a column (1-based)")?
                }
                "obj-size-col" | "size-col" => spec.obj_size_col = col(value)?,
                "op-col" | "op-type-col" => spec.op_col = col(value)?,
                "header" | "has-header" => spec.header = flag(value)?,
                "obj-id-is-num" => spec.obj_id_is_num = flag(value)?,
                "delimiter" => {
                    let b = value.as_bytes();
                    if b.len() != 1 {
                        return Err(format!("delimiter {value:?}: expected one ASCII character"));
                    }
                    spec.delimiter = b[0];
                }
                _ => {
                    return Err(format!(
                        "unknown key {key:?} (time-col, obj-id-col, obj-size-col, op-col, \
                         header, delimiter, obj-id-is-num)"
                    ))
                }
            }
            rest = after.trim_start();
        }
        Ok(spec)
    }
}

fn fnv1a(s: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Reads a CSV trace, one [`ObjRequest`] per data line; errors located by line and column.
pub struct CsvReader<R: BufRead> {
    input: R,
    path: PathBuf,
    spec: CsvSpec,
    line: String,
    line_no: u64,
    index: u64,
    done: bool,
}

impl CsvReader<BufReader<File>> {
    /// Open `path`.
    pub fn open(path: &Path, spec: CsvSpec) -> Result<Self> {
        let f = File::open(path).map_err(|e| Error::io(path, "open", e))?;
        Ok(CsvReader::new(
            BufReader::with_capacity(1 << 16, f),
            path,
            spec,
        ))
    }
}

impl<R: BufRead> CsvReader<R> {
    /// Read from `input`; `path` names it in errors.
    pub fn new(input: R, path: &Path, spec: CsvSpec) -> Self {
        CsvReader {
            input,
            path: path.to_owned(),
            spec,
            line: String::new(),
            line_no: 0,
            index: 0,
            done: false,
        }
    }

    /// The line (from 1) of the row read last.
    pub fn line(&self) -> u64 {
        self.line_no
    }

    fn next_line(&mut self) -> Result<Option<ObjRequest>> {
        loop {
            self.line.clear();
            let n = self.input.read_line(&mut self.line).map_err(|e| {
                let kind = if e.kind() == std::io::ErrorKind::InvalidData {
                    ErrorKind::BadField {
                        field: "line",
                        value: "(not UTF-8)".into(),
                        expected: "text; is this a binary trace? name the format with --from"
                            .into(),
                    }
                } else {
                    ErrorKind::Io {
                        action: "read",
                        source: e,
                    }
                };
                Error::new(
                    &self.path,
                    Location::Line {
                        line: self.line_no + 1,
                        column: 1,
                    },
                    kind,
                )
            })?;
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            if self.line_no == 1 && self.spec.header {
                continue;
            }
            if self.line.trim().is_empty() {
                continue;
            }
            return self.parse_line().map(Some);
        }
    }

    fn parse_line(&self) -> Result<ObjRequest> {
        let text = self.line.trim_end_matches(['\n', '\r']);
        let delim = char::from(self.spec.delimiter);
        let field = |col: usize, name: &'static str| -> Result<(&str, u64)> {
            let mut column = 1u64;
            for (i, f) in text.split(delim).enumerate() {
                if i + 1 == col {
                    let t = f.trim().trim_matches('"');
                    return Ok((t, column));
                }
                column += f.chars().count() as u64 + 1;
            }
            Err(Error::field(
                &self.path,
                Location::Line {
                    line: self.line_no,
                    column: text.chars().count() as u64 + 1,
                },
                name,
                "(missing)",
                format!(
                    "column {col} (the line has {} fields separated by {delim:?})",
                    text.split(delim).count()
                ),
            ))
        };
        let at = |column| Location::Line {
            line: self.line_no,
            column,
        };
        let number = |col, name: &'static str| -> Result<u64> {
            let (t, c) = field(col, name)?;
            t.parse()
                .map_err(|_| Error::field(&self.path, at(c), name, t, "an unsigned integer"))
        };
        let time = match self.spec.time_col {
            Some(c) => number(c, "time")?,
            None => self.index,
        };
        let obj_id = if self.spec.obj_id_is_num {
            number(self.spec.obj_id_col, "obj-id")?
        } else {
            fnv1a(field(self.spec.obj_id_col, "obj-id")?.0)
        };
        let size = match self.spec.obj_size_col {
            Some(c) => {
                let (t, col) = field(c, "obj-size")?;
                t.parse().map_err(|_| {
                    Error::field(
                        &self.path,
                        at(col),
                        "obj-size",
                        t,
                        "an integer 0..=4294967295",
                    )
                })?
            }
            None => self.spec.default_size,
        };
        let op = match self.spec.op_col {
            Some(c) => {
                let (t, col) = field(c, "op")?;
                Op::parse(t).ok_or_else(|| {
                    Error::field(
                        &self.path,
                        at(col),
                        "op",
                        t,
                        "read, write, discard, flush (or get, set, delete)",
                    )
                })?
            }
            None => Op::Read,
        };
        Ok(ObjRequest {
            time,
            obj_id,
            size,
            op,
            next_access: None,
        })
    }
}

impl<R: BufRead> Iterator for CsvReader<R> {
    type Item = Result<ObjRequest>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.next_line().transpose();
        match &r {
            Some(Ok(_)) => self.index += 1,
            _ => self.done = true,
        }
        r
    }
}

/// Writes iolab's CSV: a header row, then `time,obj_id,obj_size,op`.
pub struct CsvWriter<W: Write> {
    out: BufWriter<W>,
    count: u64,
}

impl CsvWriter<File> {
    /// Create (or truncate) `path` and write the header row.
    pub fn create(path: &Path) -> Result<Self> {
        let f = File::create(path).map_err(|e| Error::io(path, "create", e))?;
        CsvWriter::new(f).map_err(|e| Error::io(path, "write", e))
    }
}

impl<W: Write> CsvWriter<W> {
    /// Write the header row to `out`.
    pub fn new(out: W) -> std::io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 16, out);
        writeln!(out, "{HEADER}")?;
        Ok(CsvWriter { out, count: 0 })
    }

    /// Append a row.
    pub fn write(&mut self, r: &ObjRequest) -> std::io::Result<()> {
        self.count += 1;
        writeln!(
            self.out,
            "{},{},{},{}",
            r.time,
            r.obj_id,
            r.size,
            r.op.name()
        )
    }

    /// Flush; returns the number of rows.
    pub fn finish(mut self) -> std::io::Result<u64> {
        self.out.flush()?;
        Ok(self.count)
    }
}
