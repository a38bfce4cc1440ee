//! Which kernel modules the guest loads, and in which order: the modules its devices and
//! filesystems need, each after the modules it depends on, none that is built into the
//! kernel. Dependencies come from `modules.dep` (depmod's output) or, where depmod never ran
//! (a kernel package extracted, not installed), from each module's own `.modinfo` section.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::Path;
use std::process::Command;

use crate::error::{Error, Result};

/// The modules the guest wants, in this order. crc32c_generic comes first: libcrc32c's init
/// (xfs, btrfs) and ext4's checksums ask the crypto API for "crc32c", which only modprobe
/// would load on demand — and the guest has no modprobe.
pub const WANTED: &[&str] = &[
    "crc32c_generic",
    "virtio_pci",
    "virtio_blk",
    "virtio_console",
    "9pnet_virtio",
    "9p",
    "ext4",
    "xfs",
    "btrfs",
];

/// The wanted modules without which the guest cannot run a command at all (the channel and
/// the host's root over 9p need them); the others only matter to a test's filesystem.
pub const ESSENTIAL: &[&str] = &["virtio_pci", "virtio_console", "9pnet_virtio", "9p"];

/// A module's name from its path: the file name without `.ko` (and a compression suffix),
/// dashes as underscores (the kernel's own spelling).
pub fn module_name(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = ["ko", "ko.xz", "ko.zst", "ko.gz"]
        .iter()
        .find_map(|ext| file.strip_suffix(&format!(".{ext}")))
        .unwrap_or(file);
    stem.replace('-', "_")
}

fn is_module_file(name: &str) -> bool {
    [".ko", ".ko.xz", ".ko.zst", ".ko.gz"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// The modules of one kernel: where each is, what each depends on (where known yet), which
/// are built in.
#[derive(Debug, Default)]
pub struct ModuleIndex {
    /// Module name → path relative to the modules directory.
    paths: BTreeMap<String, String>,
    /// Module name → the names of the modules it depends on.
    deps: BTreeMap<String, Vec<String>>,
    builtin: BTreeSet<String>,
}

/// The result of [`ModuleIndex::load_order`].
#[derive(Debug, Default, PartialEq)]
pub struct LoadOrder {
    /// (name, path relative to the modules directory), dependencies first.
    pub load: Vec<(String, String)>,
    /// Wanted modules that are built into the kernel.
    pub builtin: Vec<String>,
    /// Modules wanted or depended on that are neither built in nor in the directory.
    pub missing: Vec<String>,
}

impl ModuleIndex {
    /// From the text of `modules.dep` (`path: dep-path dep-path…`) and `modules.builtin`
    /// (one path a line).
    pub fn from_modules_dep(modules_dep: &str, modules_builtin: &str) -> Self {
        let mut index = ModuleIndex::from_paths(std::iter::empty(), modules_builtin);
        for line in modules_dep.lines() {
            let Some((path, deps)) = line.split_once(':') else {
                continue;
            };
            let name = module_name(path.trim());
            index.paths.insert(name.clone(), path.trim().to_owned());
            index
                .deps
                .insert(name, deps.split_whitespace().map(module_name).collect());
        }
        index
    }

    /// From the module files' paths (relative to the modules directory) alone: dependencies
    /// are read from the modules when [`ModuleIndex::load_order`] needs them.
    pub fn from_paths(paths: impl IntoIterator<Item = String>, modules_builtin: &str) -> Self {
        ModuleIndex {
            paths: paths.into_iter().map(|p| (module_name(&p), p)).collect(),
            deps: BTreeMap::new(),
            builtin: modules_builtin
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(module_name)
                .collect(),
        }
    }

    /// The modules to load for `wanted`, each after its dependencies. `read_deps` gives the
    /// dependencies of a module (by its relative path) that modules.dep did not list.
    pub fn load_order(
        &mut self,
        wanted: &[&str],
        mut read_deps: impl FnMut(&str) -> Result<Vec<String>>,
    ) -> Result<LoadOrder> {
        let mut order = LoadOrder::default();
        let mut seen = BTreeSet::new();
        for w in wanted {
            let name = w.replace('-', "_");
            if self.builtin.contains(&name) {
                order.builtin.push(name);
                continue;
            }
            self.visit(&name, &mut seen, &mut order, &mut read_deps)?;
        }
        Ok(order)
    }

    fn visit(
        &mut self,
        name: &str,
        seen: &mut BTreeSet<String>,
        order: &mut LoadOrder,
        read_deps: &mut impl FnMut(&str) -> Result<Vec<String>>,
    ) -> Result<()> {
        // Marked before its dependencies are visited: a (malformed) cycle ends here.
        if self.builtin.contains(name) || !seen.insert(name.to_owned()) {
            return Ok(());
        }
        let Some(path) = self.paths.get(name).cloned() else {
            order.missing.push(name.to_owned());
            return Ok(());
        };
        let deps = match self.deps.get(name) {
            Some(d) => d.clone(),
            None => {
                let d = read_deps(&path)?;
                self.deps.insert(name.to_owned(), d.clone());
                d
            }
        };
        for d in deps {
            self.visit(&d, seen, order, read_deps)?;
        }
        order.load.push((name.to_owned(), path));
        Ok(())
    }
}

/// The module files under `dir` (recursively), as paths relative to it.
pub fn scan(dir: &Path) -> Result<Vec<String>> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) -> io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let kind = entry.file_type()?;
            if kind.is_dir() {
                walk(&entry.path(), &rel, out)?;
            } else if kind.is_file() && is_module_file(&name) {
                out.push(rel);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out).map_err(|e| Error::io("read the modules directory", dir, e))?;
    out.sort();
    Ok(out)
}

/// A module file's bytes, decompressed where the package compressed it (the guest's
/// finit_module would need the kernel's own decompression support otherwise).
pub fn read_module(path: &Path) -> Result<Vec<u8>> {
    let name = path.to_string_lossy();
    let tool = if name.ends_with(".xz") {
        Some("xz")
    } else if name.ends_with(".zst") {
        Some("zstd")
    } else if name.ends_with(".gz") {
        Some("gzip")
    } else {
        None
    };
    let Some(tool) = tool else {
        return std::fs::read(path).map_err(|e| Error::io("read", path, e));
    };
    let out = Command::new(tool)
        .arg("-dc")
        .arg(path)
        .output()
        .map_err(|e| Error::io("run the decompressor for", path, e))?;
    if !out.status.success() {
        return Err(Error::Command {
            command: format!("{tool} -dc {name}"),
            status: out.status.to_string(),
            output: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(out.stdout)
}

/// The `depends=` of a module's `.modinfo` section (module names, comma-separated).
pub fn modinfo_depends(elf: &[u8]) -> Result<Vec<String>, String> {
    let section = modinfo_section(elf)?;
    Ok(section
        .split(|&b| b == 0)
        .filter_map(|entry| entry.strip_prefix(b"depends="))
        .flat_map(|list| {
            String::from_utf8_lossy(list)
                .split(',')
                .filter(|d| !d.is_empty())
                .map(|d| d.replace('-', "_"))
                .collect::<Vec<_>>()
        })
        .collect())
}

/// The bytes of the `.modinfo` section of a little-endian ELF64 object.
fn modinfo_section(elf: &[u8]) -> Result<&[u8], String> {
    let u16_at = |at: usize| -> Result<usize, String> {
        elf.get(at..at.saturating_add(2))
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
            .ok_or_else(|| format!("truncated at byte {at}"))
    };
    let u32_at = |at: usize| -> Result<usize, String> {
        elf.get(at..at.saturating_add(4))
            .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()) as usize)
            .ok_or_else(|| format!("truncated at byte {at}"))
    };
    let u64_at = |at: usize| -> Result<usize, String> {
        elf.get(at..at.saturating_add(8))
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()) as usize)
            .ok_or_else(|| format!("truncated at byte {at}"))
    };
    if elf.get(..6) != Some(&b"\x7fELF\x02\x01"[..]) {
        return Err("not a little-endian 64-bit ELF object".into());
    }
    let shoff = u64_at(0x28)?;
    let shentsize = u16_at(0x3a)?;
    let shnum = u16_at(0x3c)?;
    let shstrndx = u16_at(0x3e)?;
    let section = |i: usize| -> Result<(usize, usize, usize), String> {
        let h = shoff.saturating_add(i.saturating_mul(shentsize));
        Ok((
            u32_at(h)?,
            u64_at(h.saturating_add(0x18))?,
            u64_at(h.saturating_add(0x20))?,
        ))
    };
    let (_, names_at, _) = section(shstrndx)?;
    for i in 0..shnum {
        let (name, offset, size) = section(i)?;
        let name_at = names_at.saturating_add(name);
        if elf.get(name_at..name_at.saturating_add(9)) == Some(&b".modinfo\0"[..]) {
            return elf
                .get(offset..offset.saturating_add(size))
                .ok_or_else(|| "the .modinfo section lies past the end of the file".into());
        }
    }
    Err("no .modinfo section".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEP: &str = "\
kernel/fs/ext4/ext4.ko: kernel/lib/crc16.ko kernel/fs/mbcache.ko kernel/fs/jbd2/jbd2.ko
kernel/fs/jbd2/jbd2.ko:
kernel/fs/mbcache.ko:
kernel/lib/crc16.ko:
kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko kernel/fs/netfs/netfs.ko kernel/fs/fscache/fscache.ko
kernel/net/9p/9pnet.ko:
kernel/net/9p/9pnet_virtio.ko: kernel/net/9p/9pnet.ko kernel/drivers/virtio/virtio_ring.ko kernel/drivers/virtio/virtio.ko
kernel/fs/fscache/fscache.ko: kernel/fs/netfs/netfs.ko
kernel/fs/netfs/netfs.ko:
kernel/drivers/virtio/virtio_ring.ko:
kernel/drivers/virtio/virtio.ko:
kernel/drivers/block/virtio_blk.ko: kernel/drivers/virtio/virtio_ring.ko kernel/drivers/virtio/virtio.ko
kernel/drivers/char/virtio-console.ko: kernel/drivers/virtio/virtio_ring.ko kernel/drivers/virtio/virtio.ko
";
    const BUILTIN: &str = "kernel/drivers/virtio/virtio_pci.ko\nkernel/lib/crc32c_generic.ko\n";

    fn order(index: &mut ModuleIndex, wanted: &[&str]) -> LoadOrder {
        index
            .load_order(wanted, |p| panic!("modules.dep lists {p}"))
            .unwrap()
    }

    fn pos(o: &LoadOrder, name: &str) -> usize {
        o.load
            .iter()
            .position(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} not loaded: {o:?}"))
    }

    #[test]
    fn modules_dep_gives_dependencies_first_each_once_and_skips_builtins() {
        let mut index = ModuleIndex::from_modules_dep(DEP, BUILTIN);
        let o = order(
            &mut index,
            &[
                "crc32c_generic",
                "virtio_pci",
                "virtio_blk",
                "virtio-console",
                "9pnet_virtio",
                "9p",
                "ext4",
                "xfs",
            ],
        );
        assert_eq!(o.builtin, ["crc32c_generic", "virtio_pci"]);
        assert_eq!(o.missing, ["xfs"]);
        let names: Vec<&str> = o.load.iter().map(|(n, _)| n.as_str()).collect();
        let unique: BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len(), "each module once: {names:?}");
        assert_eq!(names.len(), 13, "{names:?}");
        for (module, dep) in [
            ("virtio_blk", "virtio"),
            ("virtio_blk", "virtio_ring"),
            ("virtio_console", "virtio"),
            ("9pnet_virtio", "9pnet"),
            ("9p", "9pnet"),
            ("9p", "netfs"),
            ("9p", "fscache"),
            ("fscache", "netfs"),
            ("ext4", "jbd2"),
            ("ext4", "mbcache"),
            ("ext4", "crc16"),
        ] {
            assert!(
                pos(&o, dep) < pos(&o, module),
                "{dep} before {module}: {names:?}"
            );
        }
        let console = &o.load[pos(&o, "virtio_console")].1;
        assert_eq!(console, "kernel/drivers/char/virtio-console.ko");
    }

    #[test]
    fn without_modules_dep_dependencies_are_read_from_the_modules() {
        let paths = ["kernel/a.ko", "kernel/b.ko.xz", "kernel/c-d.ko.zst"].map(String::from);
        let mut index = ModuleIndex::from_paths(paths, "");
        let mut asked = Vec::new();
        let o = index
            .load_order(&["a", "c_d"], |p| {
                asked.push(p.to_owned());
                Ok(match p {
                    "kernel/a.ko" => vec!["b".into(), "c_d".into()],
                    "kernel/b.ko.xz" => vec!["c_d".into()],
                    _ => vec![],
                })
            })
            .unwrap();
        let names: Vec<&str> = o.load.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["c_d", "b", "a"]);
        assert_eq!(asked.len(), 3, "each module read once: {asked:?}");
    }

    #[test]
    fn a_dependency_cycle_ends() {
        let dep = "a.ko: b.ko\nb.ko: a.ko\n";
        let mut index = ModuleIndex::from_modules_dep(dep, "");
        let o = order(&mut index, &["a"]);
        let names: Vec<&str> = o.load.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
    }

    #[test]
    fn names_from_paths() {
        assert_eq!(
            module_name("kernel/drivers/char/virtio-console.ko"),
            "virtio_console"
        );
        assert_eq!(module_name("kernel/fs/xfs/xfs.ko.zst"), "xfs");
        assert_eq!(module_name("btrfs.ko.xz"), "btrfs");
    }

    #[test]
    fn compressed_modules_are_read_decompressed() {
        let t = tempfile::tempdir().unwrap();
        let plain = t.path().join("m.ko");
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&plain, &bytes).unwrap();
        assert_eq!(read_module(&plain).unwrap(), bytes);
        for (tool, ext) in [("xz", "xz"), ("zstd", "zst"), ("gzip", "gz")] {
            if !iolab_testkit::has_tool(tool) {
                iolab_testkit::tool_absent(tool, &format!("apt-get install {tool}"));
                continue;
            }
            let packed = t.path().join(format!("m.ko.{ext}"));
            let out = std::fs::File::create(&packed).unwrap();
            let ok = Command::new(tool)
                .arg("-c")
                .arg(&plain)
                .stdout(out)
                .status()
                .unwrap();
            assert!(ok.success());
            assert_ne!(std::fs::read(&packed).unwrap(), bytes);
            assert_eq!(read_module(&packed).unwrap(), bytes, "{tool}");
        }
        let bad = t.path().join("bad.ko.xz");
        std::fs::write(&bad, b"not xz").unwrap();
        if iolab_testkit::has_tool("xz") {
            let e = read_module(&bad).unwrap_err();
            assert!(matches!(e, Error::Command { .. }), "{e}");
        }
    }

    /// A minimal ELF64 object with a `.modinfo` section (and the section-name table).
    fn elf_with_modinfo(modinfo: &[u8]) -> Vec<u8> {
        let names = b"\0.shstrtab\0.modinfo\0";
        let mut elf = vec![0u8; 64];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let names_at = elf.len();
        elf.extend_from_slice(names);
        let info_at = elf.len();
        elf.extend_from_slice(modinfo);
        let shoff = elf.len();
        elf[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        elf[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        elf[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        elf[0x3e..0x40].copy_from_slice(&1u16.to_le_bytes());
        let mut section = |name: u32, offset: usize, size: usize| {
            let mut h = vec![0u8; 64];
            h[..4].copy_from_slice(&name.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(offset as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
            elf.extend_from_slice(&h);
        };
        section(0, 0, 0);
        section(1, names_at, names.len());
        section(11, info_at, modinfo.len());
        elf
    }

    #[test]
    fn depends_from_modinfo() {
        let elf = elf_with_modinfo(b"license=GPL\0depends=jbd2,mbcache,crc16\0name=ext4\0");
        assert_eq!(modinfo_depends(&elf).unwrap(), ["jbd2", "mbcache", "crc16"]);
        let elf = elf_with_modinfo(b"depends=\0name=crc16\0");
        assert!(modinfo_depends(&elf).unwrap().is_empty());
        assert!(modinfo_depends(b"not an elf").unwrap_err().contains("ELF"));
        let mut cut = elf_with_modinfo(b"depends=x\0");
        cut.truncate(cut.len() - 40); // into the last section header's size
        assert!(modinfo_depends(&cut).unwrap_err().contains("truncated"));
    }
}
