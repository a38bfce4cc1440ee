//! A writer of the "newc" cpio format, the one the kernel unpacks as an initramfs: per entry
//! a 110-byte ASCII header (magic `070701` and 13 fields of 8 hex digits), the name with its
//! NUL padded to 4 bytes, the data padded to 4 bytes; a `TRAILER!!!` entry ends the archive.
//! Uncompressed: the kernel takes it as it is, and it is built once and cached.

use std::collections::BTreeSet;
use std::io::{self, Read, Write};

/// File type bits of `st_mode`.
const S_IFMT: u32 = 0o170000;
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;
const S_IFCHR: u32 = 0o020000;

pub struct CpioWriter<W: Write> {
    out: W,
    /// Bytes written so far, for the padding.
    offset: u64,
    next_ino: u32,
    /// Directories already in the archive: an entry's parents are added before it.
    dirs: BTreeSet<String>,
}

impl<W: Write> CpioWriter<W> {
    pub fn new(out: W) -> Self {
        CpioWriter {
            out,
            offset: 0,
            next_ino: 1,
            dirs: BTreeSet::new(),
        }
    }

    /// A directory (and its missing parents) with permission bits `perm`.
    pub fn dir(&mut self, path: &str, perm: u32) -> io::Result<()> {
        let path = path.trim_matches('/');
        if path.is_empty() || self.dirs.contains(path) {
            return Ok(());
        }
        self.parents(path)?;
        self.header(path, S_IFDIR | perm, 0, 0, 0)?;
        self.dirs.insert(path.to_owned());
        Ok(())
    }

    /// A regular file of `size` bytes read from `data`.
    pub fn file(
        &mut self,
        path: &str,
        perm: u32,
        size: u64,
        data: &mut impl Read,
    ) -> io::Result<()> {
        let path = path.trim_start_matches('/');
        self.parents(path)?;
        self.header(path, S_IFREG | perm, size, 0, 0)?;
        let copied = io::copy(&mut data.take(size), &mut self.out)?;
        if copied != size {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{path}: {copied} bytes read of {size}"),
            ));
        }
        self.offset += size;
        self.pad()
    }

    /// A symbolic link to `target`.
    pub fn symlink(&mut self, path: &str, target: &str) -> io::Result<()> {
        let path = path.trim_start_matches('/');
        self.parents(path)?;
        self.header(path, S_IFLNK | 0o777, target.len() as u64, 0, 0)?;
        self.write_all(target.as_bytes())?;
        self.pad()
    }

    /// A character device node.
    pub fn char_dev(&mut self, path: &str, perm: u32, major: u32, minor: u32) -> io::Result<()> {
        let path = path.trim_start_matches('/');
        self.parents(path)?;
        self.header(path, S_IFCHR | perm, 0, major, minor)
    }

    /// The trailer; returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.header("TRAILER!!!", 0, 0, 0, 0)?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn parents(&mut self, path: &str) -> io::Result<()> {
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent, 0o755)?;
        }
        Ok(())
    }

    fn header(
        &mut self,
        name: &str,
        mode: u32,
        size: u64,
        rmajor: u32,
        rminor: u32,
    ) -> io::Result<()> {
        let size = u32::try_from(size).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name}: {size} bytes, over the 4 GiB a newc entry holds"),
            )
        })?;
        let ino = self.next_ino;
        self.next_ino += 1;
        let nlink = if mode & S_IFMT == S_IFDIR { 2 } else { 1 };
        let fields = [
            ino,
            mode,
            0, // uid
            0, // gid
            nlink,
            0, // mtime: the same bytes for the same inputs
            size,
            0, // devmajor
            0, // devminor
            rmajor,
            rminor,
            name.len() as u32 + 1,
            0, // check (only for the crc format)
        ];
        let mut header = String::with_capacity(110);
        header.push_str("070701");
        for f in fields {
            header.push_str(&format!("{f:08x}"));
        }
        self.write_all(header.as_bytes())?;
        self.write_all(name.as_bytes())?;
        self.write_all(&[0])?;
        self.pad()
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    fn pad(&mut self) -> io::Result<()> {
        let n = (4 - self.offset % 4) % 4;
        self.write_all(&[0; 3][..n as usize])
    }
}

#[cfg(test)]
pub(crate) mod read {
    //! A reader of what [`super::CpioWriter`] writes, for the tests.

    #[derive(Debug, PartialEq)]
    pub struct Entry {
        pub name: String,
        pub mode: u32,
        pub nlink: u32,
        pub rdev: (u32, u32),
        pub data: Vec<u8>,
    }

    fn align(n: usize) -> usize {
        n.div_ceil(4) * 4
    }

    /// The entries before the trailer; panics on a malformed archive.
    pub fn entries(bytes: &[u8]) -> Vec<Entry> {
        let mut out = Vec::new();
        let mut at = 0;
        loop {
            let h = &bytes[at..at + 110];
            assert_eq!(&h[..6], b"070701", "magic at offset {at}");
            let field = |i: usize| {
                let s = std::str::from_utf8(&h[6 + 8 * i..14 + 8 * i]).unwrap();
                u32::from_str_radix(s, 16).unwrap()
            };
            let (mode, nlink, size, namesize) = (field(1), field(4), field(6), field(11));
            let name_at = at + 110;
            let name = &bytes[name_at..name_at + namesize as usize - 1];
            assert_eq!(bytes[name_at + namesize as usize - 1], 0, "name's NUL");
            let name = String::from_utf8(name.to_vec()).unwrap();
            let data_at = align(name_at + namesize as usize);
            let data = bytes[data_at..data_at + size as usize].to_vec();
            at = align(data_at + size as usize);
            if name == "TRAILER!!!" {
                assert_eq!(at, bytes.len(), "nothing after the trailer");
                return out;
            }
            out.push(Entry {
                name,
                mode,
                nlink,
                rdev: (field(9), field(10)),
                data,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::read::entries;
    use super::*;

    #[test]
    fn reads_back_files_links_dirs_and_devices() {
        let mut w = CpioWriter::new(Vec::new());
        w.dir("/dev", 0o755).unwrap();
        w.char_dev("/dev/console", 0o600, 5, 1).unwrap();
        // Sizes 5 and 8: one needs padding after the data, the other none.
        w.file("/lib/x/libc.so", 0o755, 5, &mut &b"hello"[..])
            .unwrap();
        w.file("/init", 0o700, 8, &mut &b"12345678"[..]).unwrap();
        w.symlink("/lib64/ld.so", "/lib/x/libc.so").unwrap();
        w.dir("/lib/x", 0o755).unwrap(); // already there: not repeated
        let bytes = w.finish().unwrap();
        assert_eq!(bytes.len() % 4, 0);

        let e = entries(&bytes);
        let names: Vec<&str> = e.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "dev",
                "dev/console",
                "lib",
                "lib/x",
                "lib/x/libc.so",
                "init",
                "lib64",
                "lib64/ld.so"
            ]
        );
        let by = |n: &str| e.iter().find(|e| e.name == n).unwrap();
        assert_eq!(by("dev").mode, 0o040755);
        assert_eq!(by("dev").nlink, 2);
        assert_eq!(by("dev/console").mode, 0o020600);
        assert_eq!(by("dev/console").rdev, (5, 1));
        assert_eq!(by("lib/x/libc.so").mode, 0o100755);
        assert_eq!(by("lib/x/libc.so").data, b"hello");
        assert_eq!(by("init").mode, 0o100700);
        assert_eq!(by("init").data, b"12345678");
        assert_eq!(by("lib64/ld.so").mode, 0o120777);
        assert_eq!(by("lib64/ld.so").data, b"/lib/x/libc.so");
    }

    #[test]
    fn a_short_file_is_an_error() {
        let mut w = CpioWriter::new(Vec::new());
        let err = w.file("f", 0o644, 10, &mut &b"abc"[..]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(err.to_string().contains("3 bytes read of 10"), "{err}");
    }
}
