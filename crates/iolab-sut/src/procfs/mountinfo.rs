//! `/proc/self/mountinfo` (Documentation/filesystems/proc.rst, "3.5 /proc/PID/mountinfo").
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

use std::io;
use std::path::PathBuf;

/// One mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// Mount id.
    pub id: u32,
    /// Parent mount id.
    pub parent: u32,
    /// `st_dev` of files on this mount: (major, minor).
    pub dev: (u32, u32),
    /// Root of the mount within the filesystem.
    pub root: PathBuf,
    /// Mount point.
    pub mount_point: PathBuf,
    /// Per-mount options (`rw,relatime`).
    pub mount_options: String,
    /// Filesystem type (`ext4`).
    pub fstype: String,
    /// Source (`/dev/loop3`, `tmpfs`, `iolab-…`).
    pub source: String,
    /// Per-superblock options (`rw,data=journal`).
    pub super_options: String,
}

impl MountEntry {
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

/// Undo mountinfo's octal escapes.
pub fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_line(line: &str) -> Result<MountEntry, String> {
    let bad = |what: &str| format!("/proc/self/mountinfo: {what} in {line:?}");
    let (left, right) = line
        .split_once(" - ")
        .ok_or_else(|| bad("no ` - ` separator"))?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 3 {
        return Err(bad("too few fields"));
    }
    let (maj, min) = l[2].split_once(':').ok_or_else(|| bad("bad major:minor"))?;
    let num = |s: &str| s.parse::<u32>().map_err(|_| bad("bad number"));
    Ok(MountEntry {
        id: num(l[0])?,
        parent: num(l[1])?,
        dev: (num(maj)?, num(min)?),
        root: unescape(l[3]).into(),
        mount_point: unescape(l[4]).into(),
        mount_options: l[5].to_owned(),
        fstype: unescape(r[0]),
        source: unescape(r[1]),
        super_options: r[2].to_owned(),
    })
}

/// Parse the whole file.
pub fn parse(text: &str) -> Result<Vec<MountEntry>, String> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(parse_line)
        .collect()
}

/// Read and parse /proc/self/mountinfo.
pub fn read() -> io::Result<Vec<MountEntry>> {
    let text = std::fs::read_to_string("/proc/self/mountinfo")?;
    parse(&text).map_err(io::Error::other)
}

/// The topmost mount on `point`, if any.
pub fn top_mount_at<'a>(
    mounts: &'a [MountEntry],
    point: &std::path::Path,
) -> Option<&'a MountEntry> {
    mounts.iter().rev().find(|m| m.mount_point == point)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
36 27 7:3 / /var/lib/iolab/mnt/iolab-1-0-abc rw,relatime - ext4 /dev/loop3 rw,data=journal
37 27 0:55 / /mnt/with\\040space rw - btrfs /dev/loop4 rw,space_cache=v2,subvolid=5,subvol=/
38 36 0:56 / /var/lib/iolab/mnt/iolab-1-0-abc rw,relatime - tmpfs other rw
";

    #[test]
    fn parses_fields_and_optional_fields() {
        let m = parse(SAMPLE).unwrap();
        assert_eq!(m.len(), 5);
        assert_eq!(m[1].dev, (254, 0));
        assert_eq!(m[1].mount_point, PathBuf::from("/"));
        assert_eq!(m[1].source, "/dev/vda");
        assert_eq!(m[2].options(), vec!["rw", "relatime", "data=journal"]);
        assert_eq!(m[3].mount_point, PathBuf::from("/mnt/with space"));
        assert_eq!(m[3].fstype, "btrfs");
    }

    #[test]
    fn topmost_mount_is_the_last_listed() {
        let m = parse(SAMPLE).unwrap();
        let top = top_mount_at(&m, std::path::Path::new("/var/lib/iolab/mnt/iolab-1-0-abc"));
        assert_eq!(top.unwrap().source, "other");
        assert!(top_mount_at(&m, std::path::Path::new("/nowhere")).is_none());
    }

    #[test]
    fn unescapes_octal() {
        assert_eq!(unescape("a\\040b\\134c\\011"), "a b\\c\t");
        assert_eq!(unescape("trailing\\04"), "trailing\\04");
    }

    #[test]
    fn rejects_malformed_lines() {
        assert!(parse("1 2 3\n").is_err());
        assert!(parse("1 2 x:y / / rw - ext4 /dev/a rw\n").is_err());
    }
}
