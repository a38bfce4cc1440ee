//! Shared helpers: a scratch directory per test (journal, mount points, images)
//! that is cleaned up on drop, and loop devices the tests create themselves (never
//! registered with iolab), each undone on drop.
#![allow(dead_code, unused_imports)] // each test binary uses some of these

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use iolab_sut::{Sut, SutOptions, SutSpec};
use iolab_sys::mountinfo;

pub use iolab_testkit::require_root;

/// Tests in one binary run on threads; those touching global tunables take this lock.
pub fn global_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// A directory under /var/tmp (a disk filesystem: loop images use direct I/O there) holding
/// a session's journal, mount points and images. On drop, anything still mounted below it
/// is unmounted and loop devices backed by files below it are detached before it is removed.
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let base = Path::new("/var/tmp");
        let dir = base.join(format!(
            "iolab-sut-test-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch {
            dir: std::fs::canonicalize(&dir).unwrap(),
        }
    }

    pub fn options(&self) -> SutOptions {
        SutOptions::under(&self.dir)
    }

    pub fn sut(&self) -> Sut {
        Sut::open(self.options()).expect("open session")
    }

    pub fn journal(&self) -> PathBuf {
        self.dir.join("journal.json")
    }

    /// Mounts below the scratch directory.
    pub fn mounts(&self) -> Vec<mountinfo::Mount> {
        mountinfo::read()
            .unwrap()
            .into_iter()
            .filter(|m| m.mount_point.starts_with(&self.dir))
            .collect()
    }

    /// Loop devices whose backing file is below the scratch directory.
    pub fn loops(&self) -> Vec<(String, PathBuf)> {
        iolab_sys::SysBlock::system()
            .attached_loops()
            .unwrap()
            .into_iter()
            .filter(|(_, p, _)| p.starts_with(&self.dir))
            .map(|(n, p, _)| (n, p))
            .collect()
    }

    /// Entries of a subdirectory (empty if it does not exist).
    pub fn entries(&self, sub: &str) -> Vec<String> {
        std::fs::read_dir(self.dir.join(sub))
            .map(|rd| {
                rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Assert that nothing of a session is left: no mount, no loop device, no image, no
    /// mount point, an empty journal.
    pub fn assert_clean(&self) {
        assert!(self.mounts().is_empty(), "mounts left: {:?}", self.mounts());
        assert!(
            self.loops().is_empty(),
            "loop devices left: {:?}",
            self.loops()
        );
        assert!(
            self.entries("images").is_empty(),
            "images left: {:?}",
            self.entries("images")
        );
        assert!(
            self.entries("mnt").is_empty(),
            "mount points left: {:?}",
            self.entries("mnt")
        );
        let j = std::fs::read_to_string(self.journal()).unwrap_or_default();
        assert!(j.is_empty(), "journal not empty:\n{j}");
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for m in self.mounts().iter().rev() {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(&m.mount_point)
                .status();
        }
        for (name, _) in self.loops() {
            let _ = Command::new("losetup")
                .args(["-d", &format!("/dev/{name}")])
                .status();
        }
        if self.mounts().is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

pub fn sh(cmd: &str, args: &[&str]) -> String {
    let o = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        o.status.success(),
        "{cmd} {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A loop device the test attaches itself with losetup (so iolab's journal does not know
/// it), over an image in `dir`; detached on drop.
pub struct TestLoop {
    pub device: String,
    pub image: PathBuf,
}

impl TestLoop {
    pub fn new(dir: &Path, size: &str) -> TestLoop {
        let image = dir.join("test-owned.img");
        sh("truncate", &["-s", size, image.to_str().unwrap()]);
        let device = sh("losetup", &["-f", "--show", image.to_str().unwrap()]);
        TestLoop { device, image }
    }
}

impl Drop for TestLoop {
    fn drop(&mut self) {
        let quiet = |cmd: &str, args: &[&str]| {
            let _ = Command::new(cmd)
                .args(args)
                .stderr(std::process::Stdio::null())
                .status();
        };
        quiet("umount", &[&self.device]);
        quiet("losetup", &["-d", &self.device]);
    }
}

/// The /proc/mounts line for a mount point.
pub fn proc_mounts_line(point: &Path) -> Option<String> {
    let text = std::fs::read_to_string("/proc/mounts").unwrap();
    let p = point.to_str().unwrap();
    text.lines()
        .rev()
        .find(|l| l.split(' ').nth(1) == Some(p))
        .map(str::to_owned)
}

/// The options field of a /proc/mounts line.
pub fn options_of(line: &str) -> Vec<String> {
    line.split(' ')
        .nth(3)
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect()
}

pub fn read_sysctl(path: &str) -> String {
    std::fs::read_to_string(path).unwrap().trim().to_string()
}

/// Parse a spec from JSON text.
pub fn spec(json: &str) -> SutSpec {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("bad test spec: {e}\n{json}"))
}

/// Starts the child half `name` of this test binary with `env` set to the scratch directory
/// (quiet), and waits until it writes a non-empty `ready` file there: its contents.
pub fn start_child_half(name: &str, env: &str, dir: &Path) -> (std::process::Child, String) {
    let mut child = iolab_testkit::child_half(name)
        .env(env, dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let ready = dir.join("ready");
    let t0 = std::time::Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(&ready) {
            if !text.is_empty() {
                return (child, text);
            }
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "the child never got ready"
        );
        assert!(child.try_wait().unwrap().is_none(), "child died");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
