//! `/proc/vmstat`: virtual-memory event counters and page gauges, one `name value` per line.
//!
//! Event counters (`pgfault`, `pgpgin`, …) are cumulative since boot; `nr_*` entries are
//! gauges (pages right now). Every key is kept; the ones iolab reports have accessors that
//! return `None` when a kernel does not write them (never 0 for "absent").

use std::collections::BTreeMap;

use iolab_sys::error::{parse_u64, read_to_string, Error, ParseError, ParseErrorKind};

/// The file this module parses.
pub const PATH: &str = "/proc/vmstat";

/// A `/proc/vmstat` sample: every key with its value, as the kernel wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Vmstat {
    /// All entries.
    pub entries: BTreeMap<String, u64>,
}

impl Vmstat {
    /// Any entry by name.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.entries.get(key).copied()
    }

    /// `pgfault`: page faults (minor and major), all processes, since boot.
    pub fn pgfault(&self) -> Option<u64> {
        self.get("pgfault")
    }

    /// `pgmajfault`: faults that had to read from storage.
    pub fn pgmajfault(&self) -> Option<u64> {
        self.get("pgmajfault")
    }

    /// `pgpgin`: KiB read from block devices (despite the name, the kernel halves its
    /// sector count, so the unit is KiB, not pages).
    pub fn pgpgin(&self) -> Option<u64> {
        self.get("pgpgin")
    }

    /// `pgpgout`: KiB written to block devices (unit KiB, as for `pgpgin`).
    pub fn pgpgout(&self) -> Option<u64> {
        self.get("pgpgout")
    }

    /// `pswpin`: pages swapped in.
    pub fn pswpin(&self) -> Option<u64> {
        self.get("pswpin")
    }

    /// `pswpout`: pages swapped out.
    pub fn pswpout(&self) -> Option<u64> {
        self.get("pswpout")
    }

    /// Difference of a counter between `earlier` and `self`; `None` if either sample lacks
    /// it, 0 if it went backwards (a gauge, or a counter after a reset).
    pub fn delta(&self, earlier: &Vmstat, key: &str) -> Option<u64> {
        Some(self.get(key)?.saturating_sub(earlier.get(key)?))
    }
}

/// Parse the text of `/proc/vmstat`.
pub fn parse(text: &str) -> Result<Vmstat, ParseError> {
    let mut entries = BTreeMap::new();
    for (idx, line) in text.lines().enumerate() {
        let mut it = line.split_ascii_whitespace();
        let Some(key) = it.next() else { continue };
        let (Some(value), None) = (it.next(), it.next()) else {
            return Err(ParseError::at(
                PATH,
                idx,
                ParseErrorKind::Malformed("expected `name value`"),
                line,
            ));
        };
        entries.insert(key.to_owned(), parse_u64(PATH, idx, line, key, value)?);
    }
    Ok(Vmstat { entries })
}

/// Read and parse `/proc/vmstat`.
pub fn read() -> Result<Vmstat, Error> {
    Ok(parse(&read_to_string(PATH)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPTURED: &str = include_str!("../tests/fixtures/proc_vmstat.txt");

    #[test]
    fn parses_captured_file() {
        let v = parse(CAPTURED).unwrap();
        assert_eq!(v.entries.len(), 192);
        assert_eq!(v.pgfault(), Some(1715288));
        assert_eq!(v.pgmajfault(), Some(1239));
        assert_eq!(v.pgpgin(), Some(1598489));
        assert_eq!(v.pgpgout(), Some(622112));
        assert_eq!(v.pswpin(), Some(0));
        assert_eq!(v.pswpout(), Some(0));
        assert!(v.get("nr_dirty").is_some());
        assert_eq!(v.get("no_such_key"), None);
    }

    #[test]
    fn delta() {
        let a = parse("pgfault 10\nnr_dirty 50\n").unwrap();
        let b = parse("pgfault 25\nnr_dirty 40\n").unwrap();
        assert_eq!(b.delta(&a, "pgfault"), Some(15));
        assert_eq!(b.delta(&a, "nr_dirty"), Some(0));
        assert_eq!(b.delta(&a, "pgmajfault"), None);
    }

    #[test]
    fn errors() {
        let e = parse("pgfault 1\npgmajfault\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(matches!(e.kind, ParseErrorKind::Malformed(_)));
        let e = parse("pgfault -1\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::BadNumber { .. }));
    }

    #[test]
    fn reads_this_machine() {
        assert!(read().unwrap().pgfault().unwrap() > 0);
    }
}
