//! The files a run makes in its directory: the checks every kind makes before it creates
//! one ([`check_dir`], [`existing_file`]) and how a failure to create one is told
//! ([`create_error`]).

use std::fs;
use std::io;
use std::path::Path;

use crate::error::EngineError;

/// `dir` exists and is a directory (the engines' first check: a located, typed error).
pub fn check_dir(dir: &Path) -> Result<(), EngineError> {
    match fs::metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Err(EngineError::MissingDir(dir.to_path_buf()))
        }
        Err(e) => Err(EngineError::Io {
            op: "stat",
            path: dir.to_path_buf(),
            source: e,
        }),
        Ok(m) if !m.is_dir() => Err(EngineError::NotADirectory(dir.to_path_buf())),
        Ok(_) => Ok(()),
    }
}

/// Classifies a failure to create a file in the target directory: permission and read-only
/// filesystems are the user's input, anything else is a failed run.
pub fn create_error(path: &Path, dir: &Path, e: io::Error) -> EngineError {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => EngineError::DirNotWritable {
            path: dir.to_path_buf(),
            source: e,
        },
        // O_NOFOLLOW met a link made since we looked.
        Some(libc::ELOOP) => EngineError::NotOurFile {
            path: path.to_path_buf(),
            what: "a symbolic link",
        },
        _ => EngineError::Io {
            op: "create",
            path: path.to_path_buf(),
            source: e,
        },
    }
}

/// What is at the name of a file a run makes: nothing, or a regular file that iolab may reuse
/// or replace. A symbolic link, directory, device… (or a file with other hard links) is
/// refused: iolab would write, truncate or unlink something that is not its own (outside its
/// directory, even).
pub fn existing_file(path: &Path) -> Result<Option<fs::Metadata>, EngineError> {
    use std::os::unix::fs::MetadataExt;
    let m = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(EngineError::Io {
                op: "stat",
                path: path.to_path_buf(),
                source: e,
            })
        }
    };
    let t = m.file_type();
    let what = if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if !t.is_file() {
        "a special file (device, FIFO or socket)"
    } else if m.nlink() > 1 {
        "a file with other hard links"
    } else {
        return Ok(Some(m));
    };
    Err(EngineError::NotOurFile {
        path: path.to_path_buf(),
        what,
    })
}
