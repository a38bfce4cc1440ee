//! `/proc/self/mountinfo` (Documentation/filesystems/proc.rst, "3.5 /proc/PID/mountinfo"):
//!
//! ```text
//! 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//! (1)(2)(3)   (4)   (5)      (6)      (7)   (8) (9)   (10)         (11)
//! ```
//! (7) is zero or more optional fields ended by the `-` separator (8). Paths escape space,
//! tab, newline and backslash as `\040`, `\011`, `\012`, `\134`. `major:minor` (3) is the
//! superblock's device; btrfs reports an anonymous `0:N` there, so the source (10) is the
//! only link to its block device. The list is in mount order: of several mounts on the same
//! point, the last one is on top.

use std::path::{Path, PathBuf};

use crate::dev::DevT;
use crate::error::{read_to_string, Error, ParseError, ParseErrorKind};

/// The file parsed here.
pub const PATH: &str = "/proc/self/mountinfo";

/// One line of mountinfo, unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Mount id (1).
    pub id: u32,
    /// Parent mount id (2).
    pub parent: u32,
    /// `st_dev` of files on this mount (3).
    pub dev: DevT,
    /// Root of the mount within its filesystem (4).
    pub root: PathBuf,
    /// Mount point (5).
    pub mount_point: PathBuf,
    /// Per-mount options (6), e.g. `rw,relatime`.
    pub mount_options: String,
    /// Optional fields (7), e.g. `shared:1`.
    pub optional: Vec<String>,
    /// Filesystem type (9), e.g. `ext4`.
    pub fs_type: String,
    /// Source (10), e.g. `/dev/vda`, `tmpfs`, `iolab-…`.
    pub source: String,
    /// Per-superblock options (11), e.g. `rw,discard`; empty if the kernel wrote none.
    pub super_options: String,
}

impl Mount {
    /// All options, per-mount first then per-superblock, without duplicates (what
    /// /proc/mounts shows as one field).
    pub fn options(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for o in self
            .mount_options
            .split(',')
            .chain(self.super_options.split(','))
        {
            if !o.is_empty() && !v.contains(&o) {
                v.push(o);
            }
        }
        v
    }
}

/// Undo mountinfo's octal escapes (`\040` → space). Other backslashes stay as they are.
/// /proc/swaps escapes its names the same way.
pub fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b[i] == b'\\'
            && b.len() - i >= 4
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
            && b[i + 1] <= b'3';
        if octal {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn malformed(idx: usize, what: &'static str, line: &str) -> ParseError {
    ParseError::at(PATH, idx, ParseErrorKind::Malformed(what), line)
}

/// Parse one mountinfo line; `idx` is its 0-based index (for the error).
pub fn parse_line(idx: usize, line: &str) -> Result<Mount, ParseError> {
    let fields: Vec<&str> = line.split_ascii_whitespace().collect();
    // The separator comes after the six fixed fields (which, escaped, never are `-`).
    let sep = fields
        .iter()
        .skip(6)
        .position(|f| *f == "-")
        .map(|p| p + 6)
        .ok_or_else(|| malformed(idx, "no ` - ` separator", line))?;
    if fields.len() < sep + 3 {
        return Err(ParseError::at(
            PATH,
            idx,
            ParseErrorKind::FieldCount {
                expected: "6 or more, `-`, 3",
                found: fields.len(),
            },
            line,
        ));
    }
    let num = |name: &str, s: &str| {
        s.parse::<u32>().map_err(|_| {
            ParseError::at(
                PATH,
                idx,
                ParseErrorKind::BadNumber {
                    field: name.to_owned(),
                    value: s.to_owned(),
                },
                line,
            )
        })
    };
    let dev = fields[2]
        .parse::<DevT>()
        .map_err(|_| malformed(idx, "expected major:minor", line))?;
    Ok(Mount {
        id: num("mount id", fields[0])?,
        parent: num("parent id", fields[1])?,
        dev,
        root: unescape(fields[3]).into(),
        mount_point: unescape(fields[4]).into(),
        mount_options: fields[5].to_owned(),
        optional: fields[6..sep].iter().map(|s| (*s).to_owned()).collect(),
        fs_type: unescape(fields[sep + 1]),
        source: unescape(fields[sep + 2]),
        super_options: fields.get(sep + 3).copied().unwrap_or("").to_owned(),
    })
}

/// Parse the whole file (blank lines are skipped).
pub fn parse(text: &str) -> Result<Vec<Mount>, ParseError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| parse_line(i, l))
        .collect()
}

/// Read and parse `/proc/self/mountinfo`.
pub fn read() -> Result<Vec<Mount>, Error> {
    Ok(parse(&read_to_string(PATH)?)?)
}

/// The mount that holds `path` (absolute, canonical): the one with the longest mount point
/// that is a prefix of `path` by whole components; of several on the same point, the last
/// listed (the one on top).
pub fn find_mount<'a>(mounts: &'a [Mount], path: &Path) -> Option<&'a Mount> {
    let mut best: Option<&Mount> = None;
    for m in mounts {
        if !path.starts_with(&m.mount_point) {
            continue;
        }
        let longer = best.is_none_or(|b| {
            m.mount_point.components().count() >= b.mount_point.components().count()
        });
        if longer {
            best = Some(m);
        }
    }
    best
}

/// The topmost mount on exactly `point`, if any.
pub fn top_mount_at<'a>(mounts: &'a [Mount], point: &Path) -> Option<&'a Mount> {
    mounts.iter().rev().find(|m| m.mount_point == point)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured on the development VM (`/dev/shm` is mounted twice; cgroups are hybrid),
    /// plus hand-made lines: an escaped mount point, optional fields, a stacked mount, an
    /// iolab loop mount with a tmpfs over it.
    const SAMPLE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
23 27 0:22 / /sys rw,relatime - sysfs sysfs rw
24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=12334524k,nr_inodes=3083631,mode=755
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684096k
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684096k
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
50 27 7:3 /sub /mnt/with\\040space rw,noatime shared:5 master:1 - ext4 /dev/loop3 rw,data=journal
51 27 0:55 / /mnt/with rw - xfs /dev/mapper/vg-lv\\040x rw,attr2
60 27 7:4 / /var/lib/iolab/mnt/iolab-1-0-abc rw,relatime - ext4 /dev/loop4 rw,data=journal
61 60 0:56 / /var/lib/iolab/mnt/iolab-1-0-abc rw,relatime - tmpfs other rw
";

    #[test]
    fn parses_fields() {
        let m = parse(SAMPLE).unwrap();
        assert_eq!(m.len(), 13);
        let root = &m[4];
        assert_eq!(root.dev, DevT::new(254, 0));
        assert_eq!(root.mount_point, Path::new("/"));
        assert_eq!(root.fs_type, "ext4");
        assert_eq!(root.source, "/dev/vda");
        assert_eq!(root.mount_options, "rw,relatime");
        assert_eq!(
            root.super_options,
            "rw,discard,resv_strict,resuid=65534,resgid=65534"
        );
        assert!(root.optional.is_empty());
        let esc = &m[9];
        assert_eq!(esc.mount_point, Path::new("/mnt/with space"));
        assert_eq!(esc.root, Path::new("/sub"));
        assert_eq!(esc.optional, vec!["shared:5", "master:1"]);
        assert_eq!(esc.super_options, "rw,data=journal");
        assert_eq!(esc.options(), vec!["rw", "noatime", "data=journal"]);
        assert_eq!(m[10].source, "/dev/mapper/vg-lv x");
    }

    #[test]
    fn finds_longest_prefix_by_component() {
        let m = parse(SAMPLE).unwrap();
        let at = |p: &str| find_mount(&m, Path::new(p)).map(|m| m.id);
        assert_eq!(at("/"), Some(27));
        assert_eq!(at("/home/user/x"), Some(27));
        assert_eq!(at("/dev/shm/a"), Some(30), "the stacked mount on top");
        assert_eq!(
            at("/dev/shmx"),
            Some(24),
            "prefix by component, not by string"
        );
        assert_eq!(at("/mnt/with space/d"), Some(50));
        assert_eq!(at("/mnt/with"), Some(51));
        assert_eq!(at("/mnt/without"), Some(27));
        assert_eq!(find_mount(&[], Path::new("/")), None);
    }

    #[test]
    fn topmost_mount_on_a_point_is_the_last_listed() {
        let m = parse(SAMPLE).unwrap();
        let top = top_mount_at(&m, Path::new("/var/lib/iolab/mnt/iolab-1-0-abc"));
        assert_eq!(top.unwrap().source, "other");
        assert_eq!(top_mount_at(&m, Path::new("/dev/shm")).unwrap().id, 30);
        assert!(top_mount_at(&m, Path::new("/nowhere")).is_none());
        assert!(
            top_mount_at(&m, Path::new("/dev/shm/a")).is_none(),
            "exact point only"
        );
    }

    #[test]
    fn unescapes_octal() {
        assert_eq!(unescape("a\\040b\\134c\\011\\012"), "a b\\c\t\n");
        assert_eq!(unescape("trailing\\04"), "trailing\\04");
        assert_eq!(unescape("\\"), "\\");
        assert_eq!(unescape("\\999"), "\\999");
        assert_eq!(unescape("\\777"), "\\777", "above 255 is not an escape");
    }

    #[test]
    fn malformed_lines_are_located_errors() {
        let e = parse("22 27 0:21 / /proc rw - proc proc rw\n1 2 3\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(matches!(e.kind, ParseErrorKind::Malformed(_)), "{e}");
        let e = parse_line(0, "1 2 x:y / / rw - ext4 /dev/a rw").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.to_string().contains("expected major:minor"), "{e}");
        assert!(matches!(
            parse_line(0, "1 2 8:1 / / rw - ext4").unwrap_err().kind,
            ParseErrorKind::FieldCount { .. }
        ));
        assert!(matches!(
            parse_line(0, "a 2 8:1 / / rw - ext4 s o").unwrap_err().kind,
            ParseErrorKind::BadNumber { .. }
        ));
        // No super options: allowed, empty.
        let m = parse("\n1 1 8:1 / / rw - ext4 /dev/sda1\n").unwrap();
        assert_eq!(m[0].super_options, "");
    }

    #[test]
    fn reads_this_machine() {
        let m = read().unwrap();
        assert!(find_mount(&m, Path::new("/")).is_some());
    }
}
