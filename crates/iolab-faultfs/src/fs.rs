//! The pass-through filesystem: every operation goes to the same path under the backing
//! directory, after asking the faults whether it may, and (in power-cut mode) with file data
//! kept in [`Lazy`] until fsync.

use std::collections::HashMap;
use std::ffi::{CString, OsStr};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

use crate::faults::{Faults, Op};
use crate::lazy::Lazy;

/// How long the kernel may cache names and attributes. Short: the backing directory is
/// only changed through this layer, but a test reads it directly after a cut.
const TTL: Duration = Duration::from_secs(1);

/// State shared by the filesystem's threads and the test's handle.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) backing: PathBuf,
    pub(crate) faults: Faults,
    /// Power-cut mode.
    pub(crate) lazy: Option<Lazy>,
    nodes: Mutex<Nodes>,
    handles: Mutex<HashMap<u64, Handle>>,
    next_fh: AtomicU64,
}

#[derive(Debug)]
struct Handle {
    file: Arc<File>,
    ino: u64,
    /// Opened with O_SYNC or O_DSYNC: in power-cut mode its writes are synced at once.
    sync: bool,
}

/// The filesystem's inode numbers: the kernel's view of a file must not change kind when the
/// backing filesystem reuses an inode number, so ours are our own, never reused.
#[derive(Debug)]
struct Nodes {
    /// Our inode → its path relative to the backing directory (the last one seen).
    paths: HashMap<u64, PathBuf>,
    /// The backing inode of a name that exists → ours.
    by_backing: HashMap<u64, u64>,
    next: u64,
}

impl Nodes {
    fn intern(&mut self, backing_ino: u64, rel: &Path) -> u64 {
        let ino = match self.by_backing.get(&backing_ino) {
            Some(&i) => i,
            None => {
                self.next += 1;
                self.by_backing.insert(backing_ino, self.next);
                self.next
            }
        };
        self.paths.insert(ino, rel.to_path_buf());
        ino
    }

    /// A name is gone: its backing inode may be reused for another file.
    fn forget_backing(&mut self, backing_ino: u64) {
        self.by_backing.remove(&backing_ino);
    }

    /// `from` is now `to`: so are the paths under it.
    fn renamed(&mut self, from: &Path, to: &Path) {
        for p in self.paths.values_mut() {
            if let Ok(rest) = p.strip_prefix(from) {
                *p = if rest.as_os_str().is_empty() {
                    to.to_path_buf()
                } else {
                    to.join(rest)
                };
            }
        }
    }
}

fn errno(e: &io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

fn cstr(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn time(secs: i64, nsecs: i64) -> SystemTime {
    if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nsecs as u32)
    } else {
        UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs())
    }
}

fn kind(m: &std::fs::Metadata) -> FileType {
    FileType::from_std(m.file_type()).unwrap_or(FileType::RegularFile)
}

impl Shared {
    pub(crate) fn new(backing: PathBuf, lazy: bool, backing_root_ino: u64) -> Shared {
        let mut nodes = Nodes {
            paths: HashMap::new(),
            by_backing: HashMap::new(),
            next: 1,
        };
        nodes.paths.insert(1, PathBuf::new());
        nodes.by_backing.insert(backing_root_ino, 1);
        Shared {
            backing,
            faults: Faults::default(),
            lazy: lazy.then(Lazy::default),
            nodes: Mutex::new(nodes),
            handles: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
        }
    }

    fn nodes(&self) -> MutexGuard<'_, Nodes> {
        self.nodes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn handles(&self) -> MutexGuard<'_, HashMap<u64, Handle>> {
        self.handles.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn rel(&self, ino: INodeNo) -> Result<PathBuf, Errno> {
        self.nodes().paths.get(&ino.0).cloned().ok_or(Errno::ENOENT)
    }

    fn full(&self, rel: &Path) -> PathBuf {
        self.backing.join(rel)
    }

    fn child(&self, parent: INodeNo, name: &OsStr) -> Result<PathBuf, Errno> {
        Ok(self.rel(parent)?.join(name))
    }

    fn handle(&self, fh: FileHandle) -> Result<(Arc<File>, u64, bool), Errno> {
        self.handles()
            .get(&fh.0)
            .map(|h| (h.file.clone(), h.ino, h.sync))
            .ok_or(Errno::EBADF)
    }

    fn attr(&self, ino: u64, m: &std::fs::Metadata) -> FileAttr {
        let size = self
            .lazy
            .as_ref()
            .and_then(|l| l.size(ino))
            .unwrap_or(m.size());
        FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: m.blocks(),
            atime: time(m.atime(), m.atime_nsec()),
            mtime: time(m.mtime(), m.mtime_nsec()),
            ctime: time(m.ctime(), m.ctime_nsec()),
            crtime: UNIX_EPOCH,
            kind: kind(m),
            perm: (m.mode() & 0o7777) as u16,
            nlink: m.nlink() as u32,
            uid: m.uid(),
            gid: m.gid(),
            rdev: m.rdev() as u32,
            blksize: m.blksize() as u32,
            flags: 0,
        }
    }

    /// The entry of `rel` as it is now in the backing directory, interned.
    fn entry(&self, rel: &Path) -> Result<FileAttr, Errno> {
        let m = std::fs::symlink_metadata(self.full(rel)).map_err(|e| errno(&e))?;
        let ino = self.nodes().intern(m.ino(), rel);
        Ok(self.attr(ino, &m))
    }

    /// Fails when the faults or the power say so.
    fn allow(&self, op: Op, rel: &Path) -> Result<(), Errno> {
        self.faults.check(op, rel).map_err(Errno::from_i32)
    }

    /// Every call but the faultable ones: only the power cut stops them.
    fn alive(&self) -> Result<(), Errno> {
        if self.faults.is_dead() {
            Err(Errno::EIO)
        } else {
            Ok(())
        }
    }

    fn add_handle(&self, file: File, ino: u64, flags: i32) -> u64 {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        let sync = flags & (libc::O_SYNC | libc::O_DSYNC) != 0;
        self.handles().insert(
            fh,
            Handle {
                file: Arc::new(file),
                ino,
                sync,
            },
        );
        fh
    }

    fn open_backing(&self, rel: &Path, flags: i32, create: Option<u32>) -> io::Result<File> {
        let mut o = OpenOptions::new();
        match flags & libc::O_ACCMODE {
            // Power-cut mode reads the pages a write changes in part.
            libc::O_WRONLY if self.lazy.is_some() => o.read(true).write(true),
            libc::O_WRONLY => o.write(true),
            libc::O_RDWR => o.read(true).write(true),
            _ => o.read(true),
        };
        // The kernel gives every write its offset (O_APPEND would move them all to the end);
        // the kernel's own cache handles O_DIRECT above us; truncation comes as setattr.
        let passed = flags
            & !(libc::O_ACCMODE
                | libc::O_CREAT
                | libc::O_EXCL
                | libc::O_TRUNC
                | libc::O_APPEND
                | libc::O_DIRECT
                | libc::O_NOCTTY);
        o.custom_flags(passed);
        if let Some(mode) = create {
            if flags & libc::O_EXCL != 0 {
                o.create_new(true);
            } else {
                o.create(true);
            }
            o.mode(mode);
            if flags & libc::O_ACCMODE == libc::O_RDONLY {
                // create needs write access on the descriptor in std; the mode still rules.
                o.write(true);
            }
        }
        // In power-cut mode the truncation is kept in memory (`open`).
        if flags & libc::O_TRUNC != 0
            && flags & libc::O_ACCMODE != libc::O_RDONLY
            && self.lazy.is_none()
        {
            o.truncate(true);
        }
        o.open(self.full(rel))
    }

    fn set_size(&self, ino: u64, rel: &Path, fh: Option<FileHandle>, size: u64) -> io::Result<()> {
        let file = match fh.and_then(|fh| self.handle(fh).ok()) {
            Some((f, _, _)) => f,
            None => Arc::new(OpenOptions::new().write(true).open(self.full(rel))?),
        };
        match &self.lazy {
            Some(l) => l.truncate(ino, &file, size),
            None => file.set_len(size),
        }
    }

    pub(crate) fn sync_pending(&self) -> io::Result<()> {
        match &self.lazy {
            Some(l) => l.sync_all(),
            None => Ok(()),
        }
    }
}

/// The filesystem the kernel talks to.
pub(crate) struct PassFs(pub(crate) Arc<Shared>);

impl Filesystem for PassFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.0.alive().and_then(|_| self.0.child(parent, name)) {
            Ok(rel) => match self.0.entry(&rel) {
                Ok(a) => reply.entry(&TTL, &a, Generation(0)),
                Err(e) => reply.error(e),
            },
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let s = &self.0;
        let r = (|| {
            s.alive()?;
            let m = match fh.and_then(|fh| s.handle(fh).ok()) {
                Some((f, _, _)) => f.metadata(),
                None => std::fs::symlink_metadata(s.full(&s.rel(ino)?)),
            }
            .map_err(|e| errno(&e))?;
            Ok(s.attr(ino.0, &m))
        })();
        match r {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let s = &self.0;
        let r = (|| {
            s.alive()?;
            let rel = s.rel(ino)?;
            let full = s.full(&rel);
            let e = |e: io::Error| errno(&e);
            if let Some(mode) = mode {
                std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode & 0o7777))
                    .map_err(e)?;
            }
            if uid.is_some() || gid.is_some() {
                std::os::unix::fs::lchown(&full, uid, gid).map_err(e)?;
            }
            if let Some(size) = size {
                s.set_size(ino.0, &rel, fh, size).map_err(e)?;
            }
            if atime.is_some() || mtime.is_some() {
                let ts = |t: Option<TimeOrNow>| match t {
                    None => libc::timespec {
                        tv_sec: 0,
                        tv_nsec: libc::UTIME_OMIT,
                    },
                    Some(TimeOrNow::Now) => libc::timespec {
                        tv_sec: 0,
                        tv_nsec: libc::UTIME_NOW,
                    },
                    Some(TimeOrNow::SpecificTime(t)) => {
                        let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
                        libc::timespec {
                            tv_sec: d.as_secs() as libc::time_t,
                            tv_nsec: d.subsec_nanos() as libc::c_long,
                        }
                    }
                };
                let times = [ts(atime), ts(mtime)];
                let c = cstr(&full).map_err(e)?;
                // SAFETY: a valid C string and two timespecs.
                check(unsafe {
                    libc::utimensat(
                        libc::AT_FDCWD,
                        c.as_ptr(),
                        times.as_ptr(),
                        libc::AT_SYMLINK_NOFOLLOW,
                    )
                })
                .map_err(e)?;
            }
            let m = std::fs::symlink_metadata(&full).map_err(e)?;
            Ok(s.attr(ino.0, &m))
        })();
        match r {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        let r = self
            .0
            .alive()
            .and_then(|_| self.0.rel(ino))
            .and_then(|rel| std::fs::read_link(self.0.full(&rel)).map_err(|e| errno(&e)));
        match r {
            Ok(t) => reply.data(t.as_os_str().as_bytes()),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let s = &self.0;
        let r = (|| {
            s.alive()?;
            let rel = s.child(parent, name)?;
            let full = s.full(&rel);
            let c = cstr(&full).map_err(|e| errno(&e))?;
            // SAFETY: a valid C string.
            check(unsafe { libc::mkdir(c.as_ptr(), (mode & !umask) as libc::mode_t) })
                .map_err(|e| errno(&e))?;
            s.entry(&rel)
        })();
        match r {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.remove(parent, name, false, reply);
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.remove(parent, name, true, reply);
    }

    fn symlink(
        &self,
        _req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        let s = &self.0;
        let r = (|| {
            s.alive()?;
            let rel = s.child(parent, link_name)?;
            std::os::unix::fs::symlink(target, s.full(&rel)).map_err(|e| errno(&e))?;
            s.entry(&rel)
        })();
        match r {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let s = &self.0;
        let r = (|| {
            s.alive()?;
            let from = s.child(parent, name)?;
            let to = s.child(newparent, newname)?;
            let replaced = std::fs::symlink_metadata(s.full(&to)).ok();
            let (a, b) = (
                cstr(&s.full(&from)).map_err(|e| errno(&e))?,
                cstr(&s.full(&to)).map_err(|e| errno(&e))?,
            );
            // SAFETY: valid C strings; renameat2 takes the kernel's flags as they came.
            check(unsafe {
                libc::renameat2(
                    libc::AT_FDCWD,
                    a.as_ptr(),
                    libc::AT_FDCWD,
                    b.as_ptr(),
                    flags.bits(),
                )
            })
            .map_err(|e| errno(&e))?;
            let mut nodes = s.nodes();
            if let (Some(m), true) = (replaced, !flags.contains(RenameFlags::RENAME_EXCHANGE)) {
                nodes.forget_backing(m.ino());
            }
            if flags.contains(RenameFlags::RENAME_EXCHANGE) {
                let tmp = PathBuf::from("\0exchange");
                nodes.renamed(&to, &tmp);
                nodes.renamed(&from, &to);
                nodes.renamed(&tmp, &from);
            } else {
                nodes.renamed(&from, &to);
            }
            Ok(())
        })();
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn link(
        &self,
        _req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        let s = &self.0;
        let r = (|| {
            s.alive()?;
            let from = s.rel(ino)?;
            let to = s.child(newparent, newname)?;
            std::fs::hard_link(s.full(&from), s.full(&to)).map_err(|e| errno(&e))?;
            s.entry(&to)
        })();
        match r {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let s = &self.0;
        let r = (|| {
            s.alive()?;
            let rel = s.rel(ino)?;
            let f = s.open_backing(&rel, flags.0, None).map_err(|e| errno(&e))?;
            let fh = s.add_handle(f, ino.0, flags.0);
            if flags.0 & libc::O_TRUNC != 0 && s.lazy.is_some() {
                s.set_size(ino.0, &rel, Some(FileHandle(fh)), 0)
                    .map_err(|e| errno(&e))?;
            }
            Ok(fh)
        })();
        match r {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let s = &self.0;
        let r = (|| {
            s.alive()?;
            let rel = s.child(parent, name)?;
            let f = s
                .open_backing(&rel, flags, Some(mode & !umask & 0o7777))
                .map_err(|e| errno(&e))?;
            // The file belongs to whoever created it, as on a local filesystem.
            let _ = std::os::unix::fs::fchown(&f, Some(req.uid()), Some(req.gid()));
            let a = s.entry(&rel)?;
            let fh = s.add_handle(f, a.ino.0, flags);
            Ok((a, fh))
        })();
        match r {
            Ok((a, fh)) => {
                reply.created(&TTL, &a, Generation(0), FileHandle(fh), FopenFlags::empty())
            }
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let s = &self.0;
        let r = (|| {
            s.allow(Op::Read, &s.rel(ino)?)?;
            let (file, ino, _) = s.handle(fh)?;
            if let Some(l) = &s.lazy {
                if let Some(data) = l.read(ino, offset, size as usize).map_err(|e| errno(&e))? {
                    return Ok(data);
                }
            }
            let mut buf = vec![0u8; size as usize];
            let mut done = 0;
            while done < buf.len() {
                match file.read_at(&mut buf[done..], offset + done as u64) {
                    Ok(0) => break,
                    Ok(n) => done += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(errno(&e)),
                }
            }
            buf.truncate(done);
            Ok(buf)
        })();
        match r {
            Ok(d) => reply.data(&d),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let s = &self.0;
        let r = (|| {
            s.allow(Op::Write, &s.rel(ino)?)?;
            let (file, ino, sync) = s.handle(fh)?;
            match &s.lazy {
                Some(l) => {
                    l.write(ino, &file, offset, data).map_err(|e| errno(&e))?;
                    if sync {
                        l.sync(ino).map_err(|e| errno(&e))?;
                    }
                }
                None => file.write_all_at(data, offset).map_err(|e| errno(&e))?,
            }
            Ok(data.len() as u32)
        })();
        match r {
            Ok(n) => reply.written(n),
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.0.handles().remove(&fh.0);
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        let s = &self.0;
        let r = (|| {
            s.allow(Op::Fsync, &s.rel(ino)?)?;
            let (file, ino, _) = s.handle(fh)?;
            match &s.lazy {
                Some(l) => l.sync(ino),
                None if datasync => file.sync_data(),
                None => file.sync_all(),
            }
            .map_err(|e| errno(&e))
        })();
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn opendir(&self, _req: &Request, _ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.0.alive() {
            Ok(()) => reply.opened(FileHandle(0), FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let s = &self.0;
        let r = (|| {
            s.alive()?;
            let rel = s.rel(ino)?;
            let mut entries = vec![
                (ino.0, FileType::Directory, OsStr::new(".").to_os_string()),
                (ino.0, FileType::Directory, OsStr::new("..").to_os_string()),
            ];
            for e in std::fs::read_dir(s.full(&rel)).map_err(|e| errno(&e))? {
                let e = e.map_err(|e| errno(&e))?;
                let kind = e
                    .file_type()
                    .ok()
                    .and_then(FileType::from_std)
                    .unwrap_or(FileType::RegularFile);
                let child = rel.join(e.file_name());
                let i = s
                    .nodes()
                    .intern(std::os::unix::fs::DirEntryExt::ino(&e), &child);
                entries.push((i, kind, e.file_name()));
            }
            Ok(entries)
        })();
        match r {
            Ok(entries) => {
                for (i, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize)
                {
                    if reply.add(INodeNo(ino), i as u64 + 1, kind, &name) {
                        break;
                    }
                }
                reply.ok();
            }
            Err(e) => reply.error(e),
        }
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let s = &self.0;
        let r = (|| {
            let rel = s.rel(ino)?;
            s.allow(Op::Fsync, &rel)?;
            File::open(s.full(&rel))
                .and_then(|d| d.sync_all())
                .map_err(|e| errno(&e))
        })();
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let s = &self.0;
        let r = (|| {
            s.alive()?;
            let c = cstr(&s.backing).map_err(|e| errno(&e))?;
            // SAFETY: statvfs fills the zeroed struct for a valid C string.
            let mut v: libc::statvfs = unsafe { std::mem::zeroed() };
            check(unsafe { libc::statvfs(c.as_ptr(), &mut v) }).map_err(|e| errno(&e))?;
            Ok(v)
        })();
        match r {
            Ok(v) => reply.statfs(
                v.f_blocks,
                v.f_bfree,
                v.f_bavail,
                v.f_files,
                v.f_ffree,
                v.f_bsize as u32,
                v.f_namemax as u32,
                v.f_frsize as u32,
            ),
            Err(e) => reply.error(e),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let s = &self.0;
        let r = (|| {
            s.allow(Op::Write, &s.rel(ino)?)?;
            let (file, ino, _) = s.handle(fh)?;
            if let Some(l) = &s.lazy {
                // Only growing is kept in memory; other modes would change synced data.
                if mode != 0 {
                    return Err(Errno::EOPNOTSUPP);
                }
                let size = l.size(ino).map_or_else(
                    || file.metadata().map(|m| m.len()).map_err(|e| errno(&e)),
                    Ok,
                )?;
                if offset + length > size {
                    l.truncate(ino, &file, offset + length)
                        .map_err(|e| errno(&e))?;
                }
                return Ok(());
            }
            // SAFETY: fallocate on a descriptor we own.
            check(unsafe {
                libc::fallocate(
                    file.as_raw_fd(),
                    mode,
                    offset as libc::off_t,
                    length as libc::off_t,
                )
            })
            .map_err(|e| errno(&e))
        })();
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }
}

impl PassFs {
    fn remove(&self, parent: INodeNo, name: &OsStr, dir: bool, reply: ReplyEmpty) {
        let s = &self.0;
        let r = (|| {
            s.alive()?;
            let rel = s.child(parent, name)?;
            let full = s.full(&rel);
            let m = std::fs::symlink_metadata(&full).map_err(|e| errno(&e))?;
            if dir {
                std::fs::remove_dir(&full)
            } else {
                std::fs::remove_file(&full)
            }
            .map_err(|e| errno(&e))?;
            s.nodes().forget_backing(m.ino());
            Ok(())
        })();
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }
}
