//! `/proc/pressure/{cpu,io,memory}`: pressure stall information (PSI, kernel 4.20+).
//!
//! ```text
//! some avg10=1.88 avg60=1.18 avg300=0.96 total=5645022
//! full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//! ```
//! `some`: share of wall time in which at least one task stalled on the resource; `full`: in
//! which all non-idle tasks stalled at once. `avg*` are percentages averaged over 10 s, 60 s
//! and 300 s; `total` is cumulative stall time in microseconds (use its difference between two
//! samples for an exact interval figure). The `full` line of `cpu` appeared in 5.13.
//!
//! A kernel without PSI (not built in, or booted with `psi=0`, where reads fail with
//! EOPNOTSUPP) gives `Ok(None)` from [`read`], not an error.

use std::io;
use std::path::Path;

use iolab_sys::error::{parse_u64, Error, ParseError, ParseErrorKind};

/// The resources PSI reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resource {
    /// `/proc/pressure/cpu`
    Cpu,
    /// `/proc/pressure/io`
    Io,
    /// `/proc/pressure/memory`
    Memory,
}

impl Resource {
    /// All three, in file-name order.
    pub const ALL: [Resource; 3] = [Resource::Cpu, Resource::Io, Resource::Memory];

    /// Path of its file.
    pub fn path(self) -> &'static str {
        match self {
            Resource::Cpu => "/proc/pressure/cpu",
            Resource::Io => "/proc/pressure/io",
            Resource::Memory => "/proc/pressure/memory",
        }
    }
}

/// One `some` or `full` line.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PressureLine {
    /// Percent of the last 10 s.
    pub avg10: f64,
    /// Percent of the last 60 s.
    pub avg60: f64,
    /// Percent of the last 300 s.
    pub avg300: f64,
    /// Stall time since boot, microseconds.
    pub total_us: u64,
}

/// One pressure file.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pressure {
    /// At least one task stalled.
    pub some: PressureLine,
    /// All non-idle tasks stalled (absent for `cpu` before kernel 5.13).
    pub full: Option<PressureLine>,
}

/// Parse the text of one pressure file. `file` names it in errors (use [`Resource::path`]).
pub fn parse_file(file: &'static str, text: &str) -> Result<Pressure, ParseError> {
    let mut some = None;
    let mut full = None;
    for (idx, line) in text.lines().enumerate() {
        let mut it = line.split_ascii_whitespace();
        let Some(kind) = it.next() else { continue };
        let mut l = PressureLine::default();
        let mut seen = 0u8;
        for kv in it {
            let Some((key, value)) = kv.split_once('=') else {
                return Err(ParseError::at(
                    file,
                    idx,
                    ParseErrorKind::Malformed("expected key=value"),
                    line,
                ));
            };
            let pct = || {
                value.parse::<f64>().map_err(|_| {
                    ParseError::at(
                        file,
                        idx,
                        ParseErrorKind::BadNumber {
                            field: key.to_owned(),
                            value: value.to_owned(),
                        },
                        line,
                    )
                })
            };
            match key {
                "avg10" => (l.avg10, seen) = (pct()?, seen | 1),
                "avg60" => (l.avg60, seen) = (pct()?, seen | 2),
                "avg300" => (l.avg300, seen) = (pct()?, seen | 4),
                "total" => (l.total_us, seen) = (parse_u64(file, idx, line, key, value)?, seen | 8),
                _ => {} // a key added by a newer kernel
            }
        }
        if seen != 15 {
            return Err(ParseError::at(
                file,
                idx,
                ParseErrorKind::Malformed("expected avg10, avg60, avg300 and total"),
                line,
            ));
        }
        match kind {
            "some" => some = Some(l),
            "full" => full = Some(l),
            _ => {
                return Err(ParseError::at(
                    file,
                    idx,
                    ParseErrorKind::Malformed("expected `some` or `full`"),
                    line,
                ))
            }
        }
    }
    Ok(Pressure {
        some: some.ok_or(ParseError::whole(file, ParseErrorKind::Missing("some")))?,
        full,
    })
}

/// Parse the text of `/proc/pressure/io` (the usual one for storage work).
pub fn parse(text: &str) -> Result<Pressure, ParseError> {
    parse_file(Resource::Io.path(), text)
}

/// Read one pressure file; `Ok(None)` when the kernel has no PSI.
pub fn read(resource: Resource) -> Result<Option<Pressure>, Error> {
    read_path(resource.path(), resource.path())
}

fn read_path(path: impl AsRef<Path>, name: &'static str) -> Result<Option<Pressure>, Error> {
    let path = path.as_ref();
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(parse_file(name, &text)?)),
        Err(e) if absent(&e) => Ok(None),
        Err(source) => Err(Error::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

fn absent(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::EOPNOTSUPP)
}

/// All three files; each `None` when absent.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PressureAll {
    /// `/proc/pressure/cpu`
    pub cpu: Option<Pressure>,
    /// `/proc/pressure/io`
    pub io: Option<Pressure>,
    /// `/proc/pressure/memory`
    pub memory: Option<Pressure>,
}

/// Read all three pressure files.
pub fn read_all() -> Result<PressureAll, Error> {
    Ok(PressureAll {
        cpu: read(Resource::Cpu)?,
        io: read(Resource::Io)?,
        memory: read(Resource::Memory)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_captured_files() {
        let io = parse(include_str!("../tests/fixtures/proc_pressure_io.txt")).unwrap();
        assert_eq!(
            io.some,
            PressureLine {
                avg10: 0.29,
                avg60: 0.40,
                avg300: 0.82,
                total_us: 6980934
            }
        );
        assert_eq!(io.full.unwrap().total_us, 6685429);
        let cpu = parse_file(
            Resource::Cpu.path(),
            include_str!("../tests/fixtures/proc_pressure_cpu.txt"),
        )
        .unwrap();
        assert_eq!(cpu.some.avg10, 0.12);
        assert_eq!(cpu.some.total_us, 7595895);
        let mem = parse_file(
            Resource::Memory.path(),
            include_str!("../tests/fixtures/proc_pressure_memory.txt"),
        )
        .unwrap();
        assert_eq!(mem.some, PressureLine::default());
    }

    #[test]
    fn cpu_before_5_13_has_no_full_line() {
        let p = parse_file(
            Resource::Cpu.path(),
            "some avg10=0.00 avg60=0.10 avg300=0.20 total=123\n",
        )
        .unwrap();
        assert_eq!(p.full, None);
        assert_eq!(p.some.avg300, 0.2);
    }

    #[test]
    fn errors() {
        let e = parse("some avg10=0.00 avg60=0.10 avg300=x total=1\n").unwrap_err();
        assert_eq!(e.file, "/proc/pressure/io");
        assert_eq!(e.line, Some(1));
        assert!(matches!(e.kind, ParseErrorKind::BadNumber { .. }));
        let e = parse("some avg10=0.00 avg60=0.10 total=1\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::Malformed(_)));
        let e = parse("full avg10=0.00 avg60=0.10 avg300=0 total=1\n").unwrap_err();
        assert_eq!(e.kind, ParseErrorKind::Missing("some"));
    }

    #[test]
    fn absent_file_is_none() {
        let r = read_path("/proc/pressure/no-such-resource", "/x").unwrap();
        assert_eq!(r, None);
    }

    #[test]
    fn reads_this_machine() {
        // Kernels without PSI give None; this one has it, but the test must not assume so.
        let all = read_all().unwrap();
        if let Some(io) = all.io {
            assert!(io.some.avg10 >= 0.0);
        }
    }
}
