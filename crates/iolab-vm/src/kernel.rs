//! The guest's kernel: a vmlinuz (bzImage) and the directory of its modules.
//!
//! [`find`] takes a vmlinuz given by the user, else the newest kernel that
//! `scripts/vm-kernel.sh` extracted into [`KERNEL_DIR`], else the newest `/boot/vmlinuz-*`
//! with its `/lib/modules/VERSION`.

use std::cmp::Ordering;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where scripts/vm-kernel.sh extracts kernels: `VERSION/boot/vmlinuz-VERSION` and
/// `VERSION/lib/modules/VERSION/`.
pub const KERNEL_DIR: &str = "/var/cache/iolab/vm/kernel";

#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    pub vmlinuz: PathBuf,
    /// The kernel's release (`uname -r` in the guest), read from the bzImage's header.
    pub version: String,
    /// `lib/modules/VERSION` of the kernel; `None` when there is none (then the guest has only
    /// the kernel's built-in drivers).
    pub modules: Option<PathBuf>,
}

/// The kernel to boot: `explicit` (a vmlinuz), else the newest in [`KERNEL_DIR`], else the
/// newest in /boot. None at all is [`Error::NoKernel`].
pub fn find(explicit: Option<&Path>) -> Result<Kernel> {
    find_in(explicit, Path::new(KERNEL_DIR), Path::new("/boot"))
}

pub(crate) fn find_in(explicit: Option<&Path>, cache: &Path, boot: &Path) -> Result<Kernel> {
    if let Some(path) = explicit {
        return open(path);
    }
    // Newest first; a file that is not a kernel after all is passed over.
    let mut candidates: Vec<(String, PathBuf)> = Vec::new();
    for dir in read_dir_names(cache) {
        let vmlinuz = cache.join(&dir).join("boot").join(format!("vmlinuz-{dir}"));
        if vmlinuz.is_file() {
            candidates.push((dir, vmlinuz));
        }
    }
    candidates.sort_by(|a, b| version_cmp(&b.0, &a.0));
    let mut boot_kernels: Vec<(String, PathBuf)> = read_dir_names(boot)
        .into_iter()
        .filter_map(|n| Some((n.strip_prefix("vmlinuz-")?.to_owned(), boot.join(&n))))
        .collect();
    boot_kernels.sort_by(|a, b| version_cmp(&b.0, &a.0));
    for (_, path) in candidates.into_iter().chain(boot_kernels) {
        if let Ok(k) = open(&path) {
            return Ok(k);
        }
    }
    Err(Error::NoKernel {
        searched: format!("{}, {}/vmlinuz-*", cache.display(), boot.display()),
    })
}

fn read_dir_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// A kernel at `path`, its version from its header, its modules by convention: for
/// `DIR/vmlinuz-VERSION`, the parent of DIR's `lib/modules/VERSION` (a package's tree: `boot/` beside
/// `lib/`; for /boot that is /lib/modules) or `DIR/lib/modules/VERSION`.
pub fn open(path: &Path) -> Result<Kernel> {
    let version = bzimage_version(path)?;
    let dir = path.parent().unwrap_or(Path::new("/"));
    let rel = Path::new("lib/modules").join(&version);
    let modules = [dir.parent().map(|p| p.join(&rel)), Some(dir.join(&rel))]
        .into_iter()
        .flatten()
        .find(|p| p.is_dir());
    Ok(Kernel {
        vmlinuz: path.to_path_buf(),
        version,
        modules,
    })
}

/// The release of a bzImage: the first word of the version string its setup header points
/// to (x86 boot protocol: "HdrS" at 0x202, the string's offset - 0x200 at 0x20e).
pub fn bzimage_version(path: &Path) -> Result<String> {
    let bad = |what: &str| Error::BadKernel {
        path: path.to_path_buf(),
        what: what.to_owned(),
    };
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut head))
        .map_err(|e| Error::io("read the kernel", path, e))?;
    if head.get(0x202..0x206) != Some(&b"HdrS"[..]) {
        return Err(bad(
            "no x86 boot header (HdrS at byte 0x202): not a bzImage",
        ));
    }
    let offset = u16::from_le_bytes([head[0x20e], head[0x20f]]) as usize;
    if offset == 0 {
        return Err(bad("its header has no version string"));
    }
    let text = head
        .get(offset + 0x200..)
        .ok_or_else(|| bad("its version string lies past the first 64 KiB"))?;
    let text = &text[..text.iter().position(|&b| b == 0).unwrap_or(text.len())];
    String::from_utf8_lossy(text)
        .split_whitespace()
        .next()
        .map(str::to_owned)
        .ok_or_else(|| bad("its version string is empty"))
}

/// Versions in natural order: digit runs compare as numbers (6.10 after 6.9).
fn version_cmp(a: &str, b: &str) -> Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    for (x, y) in chunks(a).into_iter().zip(chunks(b)) {
        let o = match (x, y) {
            ((true, x), (true, y)) => {
                let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
                x.len().cmp(&y.len()).then(x.cmp(y))
            }
            ((_, x), (_, y)) => x.cmp(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file with just enough of a bzImage's header to name its version.
    fn fake_bzimage(path: &Path, version: &str) {
        let mut b = vec![0u8; 0x600];
        b[0x202..0x206].copy_from_slice(b"HdrS");
        b[0x20e..0x210].copy_from_slice(&0x300u16.to_le_bytes());
        let text = format!("{version} (builder@example) #1 SMP");
        b[0x500..0x500 + text.len()].copy_from_slice(text.as_bytes());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b).unwrap();
    }

    #[test]
    fn the_newest_cached_kernel_with_its_modules() {
        let t = tempfile::tempdir().unwrap();
        let cache = t.path().join("kernel");
        for v in ["6.1.0-9-amd64", "6.1.0-10-amd64"] {
            fake_bzimage(&cache.join(v).join(format!("boot/vmlinuz-{v}")), v);
            std::fs::create_dir_all(cache.join(v).join("lib/modules").join(v)).unwrap();
        }
        let k = find_in(None, &cache, &t.path().join("boot")).unwrap();
        assert_eq!(k.version, "6.1.0-10-amd64");
        assert_eq!(
            k.modules.unwrap(),
            cache.join("6.1.0-10-amd64/lib/modules/6.1.0-10-amd64")
        );
    }

    #[test]
    fn an_explicit_kernel_without_modules_and_a_file_that_is_none() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("bzImage");
        fake_bzimage(&path, "6.6.0-custom");
        let k = find_in(Some(&path), &t.path().join("none"), &t.path().join("none")).unwrap();
        assert_eq!(k.version, "6.6.0-custom");
        assert_eq!(k.modules, None);

        let not = t.path().join("not-a-kernel");
        std::fs::write(&not, vec![0u8; 4096]).unwrap();
        let e = find_in(Some(&not), &t.path().join("none"), &t.path().join("none")).unwrap_err();
        assert!(matches!(e, Error::BadKernel { .. }), "{e}");
        assert!(e.to_string().contains("not a bzImage"), "{e}");
    }

    #[test]
    fn no_kernel_says_how_to_get_one() {
        let t = tempfile::tempdir().unwrap();
        let e = find_in(None, &t.path().join("kernel"), &t.path().join("boot")).unwrap_err();
        assert!(matches!(e, Error::NoKernel { .. }), "{e}");
        assert!(e
            .hint()
            .unwrap()
            .contains("run scripts/vm-kernel.sh as root"));
    }

    #[test]
    fn boot_kernels_are_the_fallback() {
        let t = tempfile::tempdir().unwrap();
        let boot = t.path().join("boot");
        fake_bzimage(&boot.join("vmlinuz-6.9.1"), "6.9.1");
        fake_bzimage(&boot.join("vmlinuz-6.10.2"), "6.10.2");
        std::fs::create_dir_all(t.path().join("lib/modules/6.10.2")).unwrap();
        let k = find_in(None, &t.path().join("kernel"), &boot).unwrap();
        assert_eq!(k.version, "6.10.2");
        assert_eq!(k.modules.unwrap(), t.path().join("lib/modules/6.10.2"));
    }
}
