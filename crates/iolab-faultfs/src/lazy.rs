//! Power-cut mode: what was written to a file but not yet fsync'd stays in memory (the
//! "device cache"); `fsync` writes a file's pending data to the backing directory and syncs
//! it; a cut drops everything pending, so that the backing directory holds exactly what a
//! disk would still hold after losing power. Directory operations (create, rename, unlink)
//! reach the backing directory at once: this layer loses data, not names.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, MutexGuard};

/// The unit in which pending data is kept.
const PAGE: u64 = 4096;

/// One file's data not yet synced.
#[derive(Debug)]
struct Pending {
    /// A writable descriptor of the backing file, for `sync` (the file may be unlinked by then).
    file: Arc<File>,
    /// The file's size as the process sees it.
    size: u64,
    /// The backing file's bytes from here on are gone (a truncation not yet synced).
    floor: u64,
    /// Pages written since the last sync, whole, as the process sees them.
    pages: BTreeMap<u64, Box<[u8]>>,
}

impl Pending {
    fn new(file: Arc<File>) -> io::Result<Pending> {
        let size = file.metadata()?.len();
        Ok(Pending {
            file,
            size,
            floor: size,
            pages: BTreeMap::new(),
        })
    }

    /// Page `p` as the process sees it.
    fn page(&self, p: u64) -> io::Result<Box<[u8]>> {
        if let Some(d) = self.pages.get(&p) {
            return Ok(d.clone());
        }
        let mut buf = vec![0u8; PAGE as usize].into_boxed_slice();
        let start = p * PAGE;
        let end = (start + PAGE).min(self.floor).min(self.size);
        if end > start {
            read_full(&self.file, &mut buf[..(end - start) as usize], start)?;
        }
        Ok(buf)
    }

    fn write(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut done = 0usize;
        while done < data.len() {
            let at = offset + done as u64;
            let p = at / PAGE;
            let in_page = (at % PAGE) as usize;
            let n = (PAGE as usize - in_page).min(data.len() - done);
            let mut page = self.page(p)?;
            page[in_page..in_page + n].copy_from_slice(&data[done..done + n]);
            self.pages.insert(p, page);
            done += n;
        }
        self.size = self.size.max(offset + data.len() as u64);
        Ok(())
    }

    fn read(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let end = (offset + len as u64).min(self.size);
        let mut out = Vec::with_capacity(end.saturating_sub(offset) as usize);
        let mut at = offset;
        while at < end {
            let p = at / PAGE;
            let in_page = (at % PAGE) as usize;
            let n = ((PAGE as usize - in_page) as u64).min(end - at) as usize;
            out.extend_from_slice(&self.page(p)?[in_page..in_page + n]);
            at += n as u64;
        }
        Ok(out)
    }

    fn truncate(&mut self, size: u64) {
        if size < self.size {
            self.floor = self.floor.min(size);
            let first_gone = size.div_ceil(PAGE);
            self.pages.split_off(&first_gone);
            if !size.is_multiple_of(PAGE) {
                if let Some(page) = self.pages.get_mut(&(size / PAGE)) {
                    page[(size % PAGE) as usize..].fill(0);
                }
            }
        }
        self.size = size;
    }

    /// Writes the pending data to the backing file and syncs it.
    fn sync(&self) -> io::Result<()> {
        let backing = self.file.metadata()?.len();
        if self.floor < backing {
            self.file.set_len(self.floor)?;
        }
        for (&p, page) in &self.pages {
            let start = p * PAGE;
            if start >= self.size {
                break;
            }
            let n = (self.size - start).min(PAGE) as usize;
            self.file.write_all_at(&page[..n], start)?;
        }
        self.file.set_len(self.size)?;
        self.file.sync_all()
    }
}

fn read_full(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64)? {
            0 => break, // shorter than expected: the rest reads as zeros
            n => done += n,
        }
    }
    Ok(())
}

/// The pending data of every file, by the filesystem's inode number.
#[derive(Debug, Default)]
pub(crate) struct Lazy {
    files: Mutex<HashMap<u64, Pending>>,
}

impl Lazy {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Pending>> {
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn with<T>(
        &self,
        ino: u64,
        file: &Arc<File>,
        f: impl FnOnce(&mut Pending) -> io::Result<T>,
    ) -> io::Result<T> {
        let mut files = self.lock();
        let p = match files.entry(ino) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => v.insert(Pending::new(file.clone())?),
        };
        f(p)
    }

    pub(crate) fn write(
        &self,
        ino: u64,
        file: &Arc<File>,
        offset: u64,
        data: &[u8],
    ) -> io::Result<()> {
        self.with(ino, file, |p| p.write(offset, data))
    }

    /// `None`: nothing pending, read the backing file.
    pub(crate) fn read(&self, ino: u64, offset: u64, len: usize) -> io::Result<Option<Vec<u8>>> {
        self.lock()
            .get(&ino)
            .map(|p| p.read(offset, len))
            .transpose()
    }

    pub(crate) fn truncate(&self, ino: u64, file: &Arc<File>, size: u64) -> io::Result<()> {
        self.with(ino, file, |p| {
            p.truncate(size);
            Ok(())
        })
    }

    /// The size the process sees, where it differs from the backing file's.
    pub(crate) fn size(&self, ino: u64) -> Option<u64> {
        self.lock().get(&ino).map(|p| p.size)
    }

    /// fsync: the file's pending data reaches the backing file, synced.
    pub(crate) fn sync(&self, ino: u64) -> io::Result<()> {
        let mut files = self.lock();
        if let Some(p) = files.get(&ino) {
            p.sync()?;
            files.remove(&ino);
        }
        Ok(())
    }

    /// A clean shutdown: everything pending is written and synced.
    pub(crate) fn sync_all(&self) -> io::Result<()> {
        let mut files = self.lock();
        for p in files.values() {
            p.sync()?;
        }
        files.clear();
        Ok(())
    }

    /// The power cut: the pending data is lost. Returns the bytes dropped (whole pages).
    pub(crate) fn cut(&self) -> u64 {
        let mut files = self.lock();
        let bytes = files.values().map(|p| p.pages.len() as u64 * PAGE).sum();
        files.clear();
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> (tempfile::TempDir, Arc<File>) {
        let d = tempfile::tempdir().unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(d.path().join("f"))
            .unwrap();
        (d, Arc::new(f))
    }

    #[test]
    fn pending_writes_are_read_back_and_reach_the_file_only_when_synced() {
        let (_d, f) = file();
        f.write_all_at(&[1u8; 10_000], 0).unwrap();
        let lazy = Lazy::default();
        lazy.write(7, &f, 5000, &[2u8; 6000]).unwrap();
        assert_eq!(lazy.size(7), Some(11_000));
        let seen = lazy.read(7, 4990, 30).unwrap().unwrap();
        assert_eq!(&seen[..10], &[1u8; 10]);
        assert_eq!(&seen[10..], &[2u8; 20]);
        assert_eq!(f.metadata().unwrap().len(), 10_000, "backing untouched");
        lazy.sync(7).unwrap();
        assert_eq!(lazy.size(7), None);
        let mut all = vec![0u8; 11_000];
        read_full(&f, &mut all, 0).unwrap();
        assert!(all[..5000].iter().all(|&b| b == 1));
        assert!(all[5000..].iter().all(|&b| b == 2));
    }

    #[test]
    fn a_cut_drops_pending_writes_and_truncations() {
        let (_d, f) = file();
        f.write_all_at(&[1u8; 8192], 0).unwrap();
        let lazy = Lazy::default();
        lazy.truncate(3, &f, 100).unwrap();
        lazy.write(3, &f, 200, &[9u8; 10]).unwrap();
        let seen = lazy.read(3, 0, 300).unwrap().unwrap();
        assert_eq!(seen.len(), 210);
        assert!(seen[..100].iter().all(|&b| b == 1));
        assert!(
            seen[100..200].iter().all(|&b| b == 0),
            "truncated bytes read as zeros"
        );
        assert!(lazy.cut() > 0);
        assert_eq!(lazy.read(3, 0, 10).unwrap(), None);
        assert_eq!(f.metadata().unwrap().len(), 8192);
    }
}
