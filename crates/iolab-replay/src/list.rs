//! The file-list format (docs/replay.md): one operation a line, `NAME, SIZE, OP`, the form of
//! the lists a classic file-system benchmark was once modified to replay (`c` create the
//! file with SIZE bytes, `s` read it whole, `d` delete it), extended by a few operations and
//! by day markers:
//!
//! ```text
//! # comment (and blank lines) are ignored
//! usr/bin/ls, 142312, c        create usr/bin/ls with 142312 bytes (parents made as needed)
//! usr/bin/ls, 142312, s        read it whole (SIZE must be its size)
//! var/log/syslog, 4096, cf     create and fsync before closing
//! var/lib/db, 4096, r, 8192    read 4096 bytes at offset 8192
//! var/lib/db, 0, f             fsync an existing file
//! home/user, 0, m              make a directory
//! usr/bin/ls, 142312, d        delete (SIZE must be its size)
//! home/user, 0, x              remove an empty directory
//! [day 2]                      what follows is day 2's (days lists only)
//! ```
//!
//! Names are relative to the replay's directory, `/`-separated; `%XX` (two hex digits)
//! stands for any byte, so names may hold commas, `%`, control characters or leading and
//! trailing spaces. Fields are trimmed. Parsing only reads the text; [`crate::check`]
//! simulates the namespace.

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

/// What a line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Op {
    /// `c` / `cf`: create with `size` bytes (O_CREAT|O_EXCL), fsync before close with `cf`.
    Create { fsync: bool },
    /// `s`: read the whole file.
    Read,
    /// `r`: read `size` bytes at `offset`.
    ReadAt { offset: u64 },
    /// `f`: fsync an existing file.
    Fsync,
    /// `d`: unlink a file.
    Delete,
    /// `m`: make a directory.
    Mkdir,
    /// `x`: remove an empty directory.
    Rmdir,
}

impl Op {
    /// The letters of the format, for messages.
    pub const LETTERS: &'static str = "c, cf, s, r, f, d, m or x";

    /// The letter(s) that write it.
    pub fn letter(self) -> &'static str {
        match self {
            Op::Create { fsync: false } => "c",
            Op::Create { fsync: true } => "cf",
            Op::Read => "s",
            Op::ReadAt { .. } => "r",
            Op::Fsync => "f",
            Op::Delete => "d",
            Op::Mkdir => "m",
            Op::Rmdir => "x",
        }
    }
}

/// Where a line is: file, 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    pub line: u32,
    pub col: u32,
}

/// One operation of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The decoded, normalized name: components joined by `/`, never empty, no `.` or `..`.
    pub name: Vec<u8>,
    /// SIZE as listed (the length for `r`).
    pub size: u64,
    pub op: Op,
    /// The line's start (for the name) and the column of each field.
    pub line: u32,
    pub cols: [u32; 4],
}

impl Entry {
    pub fn loc(&self, field: usize) -> Loc {
        Loc {
            line: self.line,
            col: self.cols[field],
        }
    }
}

/// A run of operations: a whole install or boot list, or one day of a days list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// `[day N]`'s N, `None` outside a days list.
    pub day: Option<u32>,
    pub entries: Vec<Entry>,
}

/// A parsed list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List {
    pub file: PathBuf,
    /// One section for install and boot lists; one per day for a days list.
    pub sections: Vec<Section>,
}

impl List {
    /// All entries, in order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.sections.iter().flat_map(|s| s.entries.iter())
    }
}

/// A mistake in a list, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListError {
    pub file: PathBuf,
    pub line: u32,
    pub col: u32,
    pub message: String,
    pub hint: Option<String>,
}

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.file.display(),
            self.line,
            self.col,
            self.message
        )
    }
}

impl std::error::Error for ListError {}

impl ListError {
    pub fn new(file: &Path, at: Loc, message: impl Into<String>, hint: impl Into<String>) -> Self {
        ListError {
            file: file.to_path_buf(),
            line: at.line,
            col: at.col,
            message: message.into(),
            hint: Some(hint.into()).filter(|h: &String| !h.is_empty()),
        }
    }
}

/// Whether a list may have day markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Install or boot: one section, no `[day N]`.
    Plain,
    /// Days: every operation under a `[day N]`, N rising.
    Days,
}

/// Parses `text` (the contents of `file`).
pub fn parse(file: &Path, text: &str, role: Role) -> Result<List, ListError> {
    let mut sections: Vec<Section> = Vec::new();
    if role == Role::Plain {
        sections.push(Section {
            day: None,
            entries: Vec::new(),
        });
    }
    for (i, raw) in text.lines().enumerate() {
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let lead = raw.len() - raw.trim_start().len();
        let t = raw.trim();
        let at = |col: usize| Loc {
            line,
            col: u32::try_from(col + 1).unwrap_or(u32::MAX),
        };
        let err = |col: usize, m: String, h: &str| ListError::new(file, at(col), m, h);
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if t.starts_with('[') {
            let day = t
                .strip_prefix("[day")
                .and_then(|r| r.strip_suffix(']'))
                .map(str::trim)
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|&n| n > 0);
            let Some(day) = day else {
                return Err(err(
                    lead,
                    format!("`{t}` is not a day marker"),
                    "a day starts with a line `[day N]`, N = 1, 2, …",
                ));
            };
            if role == Role::Plain {
                return Err(err(
                    lead,
                    format!("`{t}`: only a days list has day markers"),
                    "give the days as `days = …` (`--days`), install and boot lists as plain lists",
                ));
            }
            let want = sections.last().and_then(|s| s.day).map_or(1, |d| d + 1);
            if day != want {
                return Err(err(
                    lead,
                    format!("day {day} follows day {}", want - 1),
                    &format!("number the days 1, 2, 3, … in order; this one is `[day {want}]`"),
                ));
            }
            sections.push(Section {
                day: Some(day),
                entries: Vec::new(),
            });
            continue;
        }
        let Some(section) = sections.last_mut() else {
            return Err(err(
                lead,
                "an operation before the first `[day N]`".into(),
                "start a days list with `[day 1]`",
            ));
        };
        // Fields and their columns (of the trimmed field's start).
        let mut fields: Vec<(usize, &str)> = Vec::with_capacity(4);
        let mut start = 0;
        for part in raw.split(',') {
            let l = part.len() - part.trim_start().len();
            fields.push((start + l, part.trim()));
            start += part.len() + 1;
        }
        if fields.len() < 3 || fields.len() > 4 {
            return Err(err(
                lead,
                format!("{} fields; a line is `NAME, SIZE, OP`", fields.len()),
                "write `name, size, c|s|d` (or `name, length, r, offset`); a comma in a name is %2C",
            ));
        }
        let (ncol, name) = fields[0];
        let name = decode(name).map_err(|(off, m)| {
            err(
                ncol + off,
                m,
                "write a byte as %XX with two hex digits, e.g. %2C for a comma",
            )
        })?;
        let name = normalize(&name).map_err(|m| {
            err(
                ncol,
                m,
                "names are relative to the replay's directory and stay inside it",
            )
        })?;
        let (scol, size) = fields[1];
        let size = number(size).ok_or_else(|| {
            err(
                scol,
                format!("`{size}` is not a size"),
                "a size is a whole number of bytes, e.g. 4096",
            )
        })?;
        let (ocol, op) = fields[2];
        let op = match (op, fields.len()) {
            ("c", 3) => Op::Create { fsync: false },
            ("cf", 3) => Op::Create { fsync: true },
            ("s", 3) => Op::Read,
            ("f", 3) => Op::Fsync,
            ("d", 3) => Op::Delete,
            ("m", 3) => Op::Mkdir,
            ("x", 3) => Op::Rmdir,
            ("r", 4) => {
                let (fcol, off) = fields[3];
                let offset = number(off).ok_or_else(|| {
                    err(
                        fcol,
                        format!("`{off}` is not an offset"),
                        "an offset is a whole number of bytes, e.g. 8192",
                    )
                })?;
                Op::ReadAt { offset }
            }
            ("r", _) => {
                return Err(err(
                    ocol,
                    "`r` needs an offset".into(),
                    "write `name, length, r, offset`",
                ))
            }
            ("c" | "cf" | "s" | "f" | "d" | "m" | "x", _) => {
                return Err(err(
                    fields[3].0,
                    format!("`{op}` takes no fourth field"),
                    "only `r` has an offset: `name, length, r, offset`",
                ))
            }
            _ => {
                return Err(err(
                    ocol,
                    format!("unknown operation `{op}`"),
                    &format!("the operations are {}", Op::LETTERS),
                ))
            }
        };
        if matches!(op, Op::Mkdir | Op::Rmdir | Op::Fsync) && size != 0 {
            return Err(err(
                scol,
                format!("`{}` has no size, but {size} is given", op.letter()),
                "give 0",
            ));
        }
        let col = |c: usize| u32::try_from(c + 1).unwrap_or(u32::MAX);
        section.entries.push(Entry {
            name,
            size,
            op,
            line,
            cols: [
                col(ncol),
                col(scol),
                col(ocol),
                col(fields.get(3).map_or(ocol, |f| f.0)),
            ],
        });
    }
    if role == Role::Days && sections.is_empty() {
        return Err(ListError::new(
            file,
            Loc { line: 1, col: 1 },
            "the days list has no `[day N]`",
            "start each day with a line `[day N]`, N = 1, 2, …",
        ));
    }
    Ok(List {
        file: file.to_path_buf(),
        sections,
    })
}

fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `%XX` → the byte; `Err((offset, message))`.
fn decode(s: &str) -> Result<Vec<u8>, (usize, String)> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3).and_then(|h| {
                std::str::from_utf8(h)
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
            });
            let Some(v) = hex else {
                return Err((i, "`%` must be followed by two hex digits".into()));
            };
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// Bytes a name writes as `%XX`: the separator, `%`, `#` at the start, control characters,
/// non-ASCII bytes and spaces at either end.
pub fn encode(name: &[u8]) -> String {
    let mut s = String::with_capacity(name.len());
    for (i, &c) in name.iter().enumerate() {
        let edge = i == 0 || i + 1 == name.len();
        let esc = c == b','
            || c == b'%'
            || !(0x20..0x7f).contains(&c)
            || (edge && c == b' ')
            || (i == 0 && (c == b'#' || c == b'['));
        if esc {
            let _ = write!(s, "%{c:02X}");
        } else {
            s.push(c as char);
        }
    }
    s
}

/// `a//b/./c/` → `a/b/c`; absolute names, `..` and the empty name are refused.
fn normalize(name: &[u8]) -> Result<Vec<u8>, String> {
    let shown = String::from_utf8_lossy(name);
    if name.first() == Some(&b'/') {
        return Err(format!("`{shown}` is absolute"));
    }
    let mut out: Vec<u8> = Vec::with_capacity(name.len());
    for c in name.split(|&b| b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => return Err(format!("`{shown}` leaves the directory (`..`)")),
            _ => {
                if c.contains(&0) {
                    return Err(format!("`{shown}` holds a NUL byte"));
                }
                if !out.is_empty() {
                    out.push(b'/');
                }
                out.extend_from_slice(c);
            }
        }
    }
    if out.is_empty() {
        return Err(format!("`{shown}` names the directory itself"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(t: &str) -> Result<List, ListError> {
        parse(Path::new("l.list"), t, Role::Plain)
    }

    #[test]
    fn the_thesis_form_parses_as_is() {
        let l = p("a/b, 10, c\n# x\n\na/b, 10, s\n a/b ,10,d\n").unwrap();
        let e: Vec<_> = l
            .entries()
            .map(|e| (e.name.clone(), e.size, e.op))
            .collect();
        assert_eq!(
            e,
            vec![
                (b"a/b".to_vec(), 10, Op::Create { fsync: false }),
                (b"a/b".to_vec(), 10, Op::Read),
                (b"a/b".to_vec(), 10, Op::Delete),
            ]
        );
        assert_eq!(l.sections[0].entries[2].cols, [2, 7, 10, 10]);
    }

    #[test]
    fn mistakes_are_located() {
        let e = p("a, 1x, c").unwrap_err();
        assert_eq!((e.line, e.col), (1, 4), "{e}");
        let e = p("ok, 1, c\na, 1, q").unwrap_err();
        assert_eq!((e.line, e.col), (2, 7));
        assert!(e.message.contains("unknown operation `q`"));
        let e = p("../a, 1, c").unwrap_err();
        assert!(e.message.contains(".."), "{e}");
        let e = p("/etc/passwd, 1, c").unwrap_err();
        assert!(e.message.contains("absolute"), "{e}");
        let e = p("[day 1]\n").unwrap_err();
        assert!(e.message.contains("only a days list"), "{e}");
        let e = parse(Path::new("d"), "[day 1]\n[day 3]\n", Role::Days).unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse(Path::new("d"), "a, 1, c\n", Role::Days).unwrap_err();
        assert!(e.message.contains("before the first"), "{e}");
    }

    #[test]
    fn names_round_trip_through_the_escapes() {
        for n in [
            &b"a,b"[..],
            b" lead",
            b"trail ",
            b"50%",
            b"#x",
            b"\xff\x01z",
        ] {
            let line = format!("{}, 1, c", encode(n));
            let l = p(&line).unwrap();
            assert_eq!(l.sections[0].entries[0].name, n, "{line}");
        }
    }

    #[test]
    fn extended_operations() {
        let l = parse(
            Path::new("d"),
            "[day 1]\nd, 0, m\nd/f, 10, cf\nd/f, 4, r, 6\nd/f, 0, f\n[day 2]\nd/f, 10, d\nd, 0, x\n",
            Role::Days,
        )
        .unwrap();
        assert_eq!(l.sections.len(), 2);
        assert_eq!(l.sections[0].entries[2].op, Op::ReadAt { offset: 6 });
        assert_eq!(l.sections[1].day, Some(2));
    }
}
