//! The guest's initramfs: `/init` (a copy of the iolab binary, which becomes the guest's
//! init: [`crate::guest`]), the shared libraries and dynamic loader it needs at their paths,
//! and the kernel modules the guest loads, decompressed, with the list of them in load order.
//! Everything else the guest runs comes from the host's root, shared read-only over 9p.
//!
//! Built once per (kernel, binary): the archive is cached in the cache directory under a key
//! of the kernel's version, file size and mtime, and the binary's path, size and mtime;
//! written to a temporary file and renamed, so a cached archive is always whole.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cpio::CpioWriter;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::modules::{self, ModuleIndex, WANTED};

/// The default cache directory of built images.
pub const IMAGE_DIR: &str = "/var/cache/iolab/vm/images";

/// Where the guest finds the modules to load: one `PATH NAME` a line, in load order.
pub(crate) const MODULE_LIST: &str = "/etc/iolab/modules";
/// The wanted modules the image lacks (neither built in nor found), one a line.
pub(crate) const MISSING_LIST: &str = "/etc/iolab/missing-modules";

/// Changes when the image's layout does, so that older cached images are not used.
const FORMAT: u32 = 1;

/// A kernel and the initramfs built for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    /// The kernel's release.
    pub version: String,
    /// The modules in the initramfs, in load order.
    pub modules: Vec<String>,
    /// Wanted modules the image lacks: not built in (per modules.builtin) and not in the
    /// modules directory, or all of them when the kernel has no modules directory (then
    /// they work only if built in).
    pub missing_modules: Vec<String>,
}

/// The image for `kernel` with `iolab` as its init, from `cache_dir` (by default
/// [`IMAGE_DIR`]) when it was built before, else built there.
pub fn build(kernel: &Kernel, iolab: &Path, cache_dir: &Path) -> Result<Image> {
    let bin = fs::metadata(iolab).map_err(|e| Error::io("read", iolab, e))?;
    let vmlinuz =
        fs::metadata(&kernel.vmlinuz).map_err(|e| Error::io("read", &kernel.vmlinuz, e))?;
    let key = fnv1a(
        format!(
            "{FORMAT}|{}|{}|{}|{}|{}|{:?}|{}|{}|{}|{}|{}",
            env!("CARGO_PKG_VERSION"),
            kernel.vmlinuz.display(),
            kernel.version,
            vmlinuz.len(),
            vmlinuz.mtime_nsec() + vmlinuz.mtime() * 1_000_000_000,
            kernel.modules,
            iolab.display(),
            bin.len(),
            bin.mtime_nsec() + bin.mtime() * 1_000_000_000,
            bin.ino(),
            WANTED.join(","),
        )
        .as_bytes(),
    );
    let stem = format!("{}-{key:016x}", kernel.version);
    let initrd = cache_dir.join(format!("{stem}.cpio"));
    let meta = cache_dir.join(format!("{stem}.json"));
    if initrd.is_file() {
        if let Some(image) = fs::read(&meta)
            .ok()
            .and_then(|m| from_meta(&m, kernel, &initrd))
        {
            return Ok(image);
        }
    }
    fs::create_dir_all(cache_dir).map_err(|e| Error::io("create", cache_dir, e))?;

    let plan = plan_modules(kernel)?;
    let libs = shared_libraries(iolab)?;
    let tmp = cache_dir.join(format!(".{stem}.{}.tmp", std::process::id()));
    let written = write_archive(&tmp, iolab, &libs, &plan);
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    let image = Image {
        kernel: kernel.vmlinuz.clone(),
        initrd: initrd.clone(),
        version: kernel.version.clone(),
        modules: plan.load.iter().map(|(n, _)| n.clone()).collect(),
        missing_modules: plan.missing.clone(),
    };
    fs::rename(&tmp, &initrd).map_err(|e| Error::io("rename", &tmp, e))?;
    let text = serde_json::json!({
        "modules": image.modules,
        "missing_modules": image.missing_modules,
    })
    .to_string();
    let tmp = cache_dir.join(format!(".{stem}.{}.json.tmp", std::process::id()));
    fs::write(&tmp, text).map_err(|e| Error::io("write", &tmp, e))?;
    fs::rename(&tmp, &meta).map_err(|e| Error::io("rename", &tmp, e))?;
    Ok(image)
}

fn from_meta(bytes: &[u8], kernel: &Kernel, initrd: &Path) -> Option<Image> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let list = |key: &str| -> Option<Vec<String>> {
        v.get(key)?
            .as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    Some(Image {
        kernel: kernel.vmlinuz.clone(),
        initrd: initrd.to_path_buf(),
        version: kernel.version.clone(),
        modules: list("modules")?,
        missing_modules: list("missing_modules")?,
    })
}

/// The modules to put in the image: (name, absolute path) in load order, and what is
/// missing.
struct Plan {
    load: Vec<(String, PathBuf)>,
    missing: Vec<String>,
}

fn plan_modules(kernel: &Kernel) -> Result<Plan> {
    let Some(dir) = &kernel.modules else {
        return Ok(Plan {
            load: Vec::new(),
            missing: WANTED.iter().map(|s| s.to_string()).collect(),
        });
    };
    let builtin = fs::read_to_string(dir.join("modules.builtin")).unwrap_or_default();
    let mut index = match fs::read_to_string(dir.join("modules.dep")) {
        Ok(dep) if !dep.trim().is_empty() => ModuleIndex::from_modules_dep(&dep, &builtin),
        // An extracted package: depmod never ran.
        _ => ModuleIndex::from_paths(modules::scan(dir)?, &builtin),
    };
    let order = index.load_order(WANTED, |rel| {
        let path = dir.join(rel);
        let bytes = modules::read_module(&path)?;
        modules::modinfo_depends(&bytes).map_err(|what| Error::BadModule { path, what })
    })?;
    Ok(Plan {
        load: order
            .load
            .into_iter()
            .map(|(name, rel)| (name, dir.join(rel)))
            .collect(),
        missing: order.missing,
    })
}

/// The shared libraries (and the dynamic loader) `binary` needs, as ldd finds them: none for
/// a static binary.
fn shared_libraries(binary: &Path) -> Result<Vec<PathBuf>> {
    let out = Command::new("ldd")
        .arg(binary)
        .output()
        .map_err(|e| Error::io("run ldd (package libc-bin) on", binary, e))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || stdout.contains("not found") {
        let text = format!("{stdout}{stderr}");
        if text.contains("not a dynamic executable") || text.contains("statically linked") {
            return Ok(Vec::new());
        }
        return Err(Error::Command {
            command: format!("ldd {}", binary.display()),
            status: out.status.to_string(),
            output: text.trim().to_owned(),
        });
    }
    Ok(parse_ldd(&stdout))
}

/// The paths in ldd's output: `name => /path (addr)` and `/path (addr)` (the loader); the
/// vDSO (`linux-vdso.so.1 (addr)`) has no file.
fn parse_ldd(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let target = line.split_once("=>").map_or(line, |(_, t)| t.trim());
            let path = target.split(" (").next()?.trim();
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

fn write_archive(tmp: &Path, iolab: &Path, libs: &[PathBuf], plan: &Plan) -> Result<()> {
    let file = File::create(tmp).map_err(|e| Error::io("create", tmp, e))?;
    let mut w = CpioWriter::new(BufWriter::new(file));
    let wio = |e| Error::io("write", tmp, e);
    for dir in ["dev", "proc", "sys", "host", "tmp", "etc/iolab"] {
        w.dir(dir, 0o755).map_err(wio)?;
    }
    // The kernel opens /dev/console as init's stdin, stdout and stderr before /init runs,
    // so the node must be in the archive (devtmpfs is mounted later, by init).
    w.char_dev("dev/console", 0o600, 5, 1).map_err(wio)?;
    add_file(&mut w, "init", iolab, tmp)?;
    // Each library at its real path, and a symbolic link at the path ldd names where that
    // differs (/lib64/ld-linux-x86-64.so.2, /lib on a merged-/usr system), as on the host.
    let mut added = std::collections::BTreeSet::new();
    for lib in libs {
        let real = fs::canonicalize(lib).map_err(|e| Error::io("read", lib, e))?;
        if added.insert(real.clone()) {
            add_file(&mut w, &real.to_string_lossy(), &real, tmp)?;
        }
        if real != *lib && added.insert(lib.clone()) {
            w.symlink(&lib.to_string_lossy(), &real.to_string_lossy())
                .map_err(wio)?;
        }
    }
    let mut list = String::new();
    for (i, (name, path)) in plan.load.iter().enumerate() {
        let bytes = modules::read_module(path)?;
        let at = format!("lib/modules/iolab/{i:02}-{name}.ko");
        w.file(&at, 0o644, bytes.len() as u64, &mut &bytes[..])
            .map_err(wio)?;
        list.push_str(&format!("/{at} {name}\n"));
    }
    for (path, text) in [(MODULE_LIST, list), (MISSING_LIST, plan.missing.join("\n"))] {
        w.file(path, 0o644, text.len() as u64, &mut text.as_bytes())
            .map_err(wio)?;
    }
    let out = w.finish().map_err(wio)?;
    let file = out.into_inner().map_err(|e| wio(e.into_error()))?;
    file.sync_all().map_err(wio)
}

/// A file of the host at `path` in the archive (its content: a symbolic link is followed).
fn add_file<W: Write>(w: &mut CpioWriter<W>, path: &str, from: &Path, tmp: &Path) -> Result<()> {
    let mut f = File::open(from).map_err(|e| Error::io("read", from, e))?;
    let size = f.metadata().map_err(|e| Error::io("read", from, e))?.len();
    w.file(path, 0o755, size, &mut f)
        .map_err(|e| Error::io("write", tmp, e))
}

/// FNV-1a, 64 bits: a stable hash for the cache key (std's hasher may change between Rust
/// versions).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpio::read::entries;

    /// A kernel whose modules directory has 9p (needing 9pnet) and ext4, virtio_pci built
    /// in, and nothing else.
    fn fake_kernel(dir: &Path) -> Kernel {
        let modules = dir.join("lib/modules/9.9");
        fs::create_dir_all(modules.join("kernel")).unwrap();
        fs::write(
            modules.join("modules.dep"),
            "kernel/9p.ko: kernel/9pnet.ko\nkernel/9pnet.ko:\nkernel/ext4.ko:\nkernel/other.ko:\n",
        )
        .unwrap();
        fs::write(
            modules.join("modules.builtin"),
            "kernel/drivers/virtio_pci.ko\n",
        )
        .unwrap();
        for m in ["9p", "9pnet", "ext4", "other"] {
            fs::write(modules.join(format!("kernel/{m}.ko")), format!("{m}-bytes")).unwrap();
        }
        fs::create_dir_all(dir.join("boot")).unwrap();
        fs::write(dir.join("boot/vmlinuz-9.9"), "kernel").unwrap();
        Kernel {
            vmlinuz: dir.join("boot/vmlinuz-9.9"),
            version: "9.9".into(),
            modules: Some(modules),
        }
    }

    #[test]
    fn the_archive_holds_the_binary_its_libraries_and_the_modules_in_order_and_is_cached() {
        let t = tempfile::tempdir().unwrap();
        let kernel = fake_kernel(t.path());
        // A dynamically linked binary of this machine: this test's own.
        let bin = t.path().join("iolab");
        fs::copy(std::env::current_exe().unwrap(), &bin).unwrap();
        let cache = t.path().join("images");
        let image = build(&kernel, &bin, &cache).unwrap();
        assert_eq!(image.modules, ["9pnet", "9p", "ext4"]);
        assert!(!image.missing_modules.contains(&"virtio_pci".to_string()));
        assert!(image.missing_modules.contains(&"virtio_blk".to_string()));
        assert!(!image.missing_modules.contains(&"9p".to_string()));

        let bytes = fs::read(&image.initrd).unwrap();
        let archive = entries(&bytes);
        let entry = |name: &str| {
            archive
                .iter()
                .find(|e| e.name == name.trim_start_matches('/'))
                .unwrap_or_else(|| panic!("no {name} in the archive"))
        };
        assert_eq!(entry("init").data, fs::read(&bin).unwrap());
        assert_eq!(entry("init").mode, 0o100755);
        assert_eq!(entry("dev/console").rdev, (5, 1));
        assert_eq!(
            String::from_utf8_lossy(&entry(MODULE_LIST).data),
            "/lib/modules/iolab/00-9pnet.ko 9pnet\n\
             /lib/modules/iolab/01-9p.ko 9p\n\
             /lib/modules/iolab/02-ext4.ko ext4\n"
        );
        assert_eq!(entry("lib/modules/iolab/01-9p.ko").data, b"9p-bytes");
        let libs = shared_libraries(&bin).unwrap();
        assert!(libs.len() >= 2, "a loader and libc at least: {libs:?}");
        for lib in &libs {
            let mut e = entry(&lib.to_string_lossy());
            if e.mode & 0o170000 == 0o120000 {
                e = entry(std::str::from_utf8(&e.data).unwrap());
            }
            assert_eq!(e.mode & 0o170000, 0o100000, "{} is a file", lib.display());
            assert_eq!(e.data, fs::read(lib).unwrap(), "{}", lib.display());
        }

        // Built once for the same binary; built anew for a changed one.
        let again = build(&kernel, &bin, &cache).unwrap();
        assert_eq!(again, image);
        let before = fs::metadata(&image.initrd).unwrap().modified().unwrap();
        let f = fs::File::options().write(true).open(&bin).unwrap();
        f.set_modified(before - std::time::Duration::from_secs(60))
            .unwrap();
        let rebuilt = build(&kernel, &bin, &cache).unwrap();
        assert_ne!(rebuilt.initrd, image.initrd);
        assert_eq!(
            fs::metadata(&image.initrd).unwrap().modified().unwrap(),
            before
        );
        let mut left: Vec<String> = fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left.len(),
            4,
            "two archives and their lists, no temporary file: {left:?}"
        );
        assert!(left.iter().all(|n| n.starts_with("9.9-")), "{left:?}");
    }

    #[test]
    fn a_kernel_without_modules_lacks_them_all() {
        let t = tempfile::tempdir().unwrap();
        let kernel = Kernel {
            modules: None,
            ..fake_kernel(t.path())
        };
        let image = build(&kernel, &std::env::current_exe().unwrap(), t.path()).unwrap();
        assert!(image.modules.is_empty());
        assert_eq!(image.missing_modules, WANTED);
    }

    #[test]
    fn ldd_output_gives_libraries_and_the_loader() {
        let text = "\tlinux-vdso.so.1 (0x00007ffc8b3f2000)\n\
                    \tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007f0c)\n\
                    \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0b)\n\
                    \t/lib64/ld-linux-x86-64.so.2 (0x00007f0d)\n";
        assert_eq!(
            parse_ldd(text),
            [
                "/lib/x86_64-linux-gnu/libgcc_s.so.1",
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/lib64/ld-linux-x86-64.so.2"
            ]
            .map(PathBuf::from)
        );
    }
}
