//! Real VMs: the kernel scripts/vm-kernel.sh extracts, the image built around this crate's
//! guest init (`iolab-vm-init`, what `iolab` does as /init), qemu (TCG where KVM does not
//! work). Where qemu or the kernel is absent the test says so (scripts/test.sh installs both
//! as root) and returns.

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use iolab_vm::{image, kernel, CacheMode, Disk, Error, Image, Vm, VmConfig};

/// Generous: a TCG boot takes seconds, but the machine may be busy.
const BOUND: Duration = Duration::from_secs(300);

struct Setup {
    kernel: kernel::Kernel,
    image: Image,
    dir: tempfile::TempDir,
}

/// The kernel and the image (in the test's own cache directory), or `None` (said why) when
/// qemu or the kernel is not on this machine.
fn setup() -> Option<Setup> {
    iolab_testkit::require_root();
    if !iolab_testkit::has_tool("qemu-system-x86_64") {
        iolab_testkit::tool_absent("qemu-system-x86_64", iolab_vm::QEMU_HINT);
        return None;
    }
    let kernel = match kernel::find(None) {
        Ok(k) => k,
        Err(e @ Error::NoKernel { .. }) => {
            iolab_testkit::tool_absent("a VM kernel", &format!("{e}: {}", e.hint().unwrap()));
            return None;
        }
        Err(e) => panic!("{e}"),
    };
    // On the target's disk, not /tmp: the disk test's image needs O_DIRECT (cache=none).
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let image = image::build(&kernel, init_binary(), &dir.path().join("images")).unwrap();
    Some(Setup { kernel, image, dir })
}

fn init_binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_iolab-vm-init"))
}

fn sh(script: &str) -> Vec<String> {
    ["/bin/sh", "-c", script].map(String::from).to_vec()
}

fn console(s: &Setup) -> PathBuf {
    s.dir.path().join("console.log")
}

#[test]
#[ignore = "needs root: boots a VM (qemu and the kernel of scripts/vm-kernel.sh)"]
fn a_guest_command_talks_over_the_channel_and_the_guest_powers_off() {
    let Some(s) = setup() else { return };
    assert!(
        s.image.modules.iter().any(|m| m == "9p") || !s.image.missing_modules.is_empty(),
        "{:?}",
        s.image
    );
    // Built once: the second build is the cached archive, not rewritten.
    let mtime = std::fs::metadata(&s.image.initrd)
        .unwrap()
        .modified()
        .unwrap();
    let again = image::build(&s.kernel, init_binary(), &s.dir.path().join("images")).unwrap();
    assert_eq!(again, s.image);
    assert_eq!(
        std::fs::metadata(&again.initrd)
            .unwrap()
            .modified()
            .unwrap(),
        mtime
    );

    let cfg = VmConfig::new(
        s.image.clone(),
        sh(r#"cat /proc/sys/kernel/osrelease; read line; echo "got $line""#),
        console(&s),
    );
    let mut vm = Vm::start(&cfg).unwrap();
    let (mut from_guest, mut to_guest) = vm.channel().unwrap();
    from_guest.get_ref().set_read_timeout(Some(BOUND)).unwrap();
    let mut line = String::new();
    from_guest.read_line(&mut line).unwrap();
    assert_eq!(
        line.trim(),
        s.kernel.version,
        "the guest's kernel, not the host's"
    );
    to_guest.write_all(b"hello from the host\n").unwrap();
    line.clear();
    from_guest.read_line(&mut line).unwrap();
    assert_eq!(line, "got hello from the host\n");
    let mut rest = String::new();
    from_guest.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "the channel ends when the guest powers off");

    let d = vm.describe();
    assert_eq!(d["accelerator"], vm.accel().as_str());
    assert_eq!(d["kernel"], s.kernel.version.as_str());
    assert!(
        d["qemu"]
            .as_str()
            .unwrap()
            .starts_with("QEMU emulator version"),
        "{d}"
    );
    let end = vm.wait(BOUND).unwrap();
    assert!(end.powered_off, "{}", end.console_tail.join("\n"));
    assert_eq!(end.command_exit, Some(0), "{}", end.console_tail.join("\n"));
    assert!(end.qemu_status.success());
    eprintln!(
        "boot, command and power-off: {:.1} s ({})",
        end.wall.as_secs_f64(),
        d["accelerator"]
    );
}

#[test]
#[ignore = "needs root: boots a VM with a disk (qemu, the kernel of scripts/vm-kernel.sh, mkfs.ext4, debugfs)"]
fn the_guest_writes_with_o_direct_to_its_disk_and_the_host_reads_it_after() {
    let Some(s) = setup() else { return };
    iolab_testkit::require_tool("mkfs.ext4");
    iolab_testkit::require_tool("debugfs");
    let disk = s.dir.path().join("disk.img");
    std::fs::File::create(&disk)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let ok = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&disk)
        .status()
        .unwrap();
    assert!(ok.success());

    let mut cfg = VmConfig::new(
        s.image.clone(),
        sh("set -e; mkdir /tmp/m; mount /dev/vda /tmp/m; \
            dd if=/dev/zero of=/tmp/m/direct bs=4096 count=16 oflag=direct status=none; \
            echo written-in-the-guest > /tmp/m/note; cat /sys/block/vda/size; umount /tmp/m"),
        console(&s),
    );
    cfg.disk = Some(Disk::new(&disk));
    let mut vm = Vm::start(&cfg).unwrap();
    assert_eq!(vm.describe()["cache"], CacheMode::None.as_str());
    let (mut from_guest, _to_guest) = vm.channel().unwrap();
    from_guest.get_ref().set_read_timeout(Some(BOUND)).unwrap();
    let mut out = String::new();
    from_guest.read_to_string(&mut out).unwrap();
    let end = vm.wait(BOUND).unwrap();
    let tail = end.console_tail.join("\n");
    assert_eq!(end.command_exit, Some(0), "{tail}");
    assert!(end.powered_off, "{tail}");
    assert_eq!(
        out.trim(),
        ((64u64 << 20) / 512).to_string(),
        "vda's size in sectors"
    );

    let debugfs = |request: &str| {
        let out = Command::new("debugfs")
            .args(["-R", request])
            .arg(&disk)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(debugfs("cat /note"), "written-in-the-guest\n");
    let stat = debugfs("stat /direct");
    assert!(stat.contains("Size: 65536"), "{stat}");
}

#[test]
#[ignore = "needs root: boots a VM (qemu and the kernel of scripts/vm-kernel.sh)"]
fn a_guest_that_does_not_power_off_is_killed_at_the_bound() {
    let Some(s) = setup() else { return };
    let cfg = VmConfig::new(
        s.image.clone(),
        vec!["sleep".into(), "600".into()],
        console(&s),
    );
    let vm = Vm::start(&cfg).unwrap();
    let pid = vm.pid();
    let e = vm.wait(Duration::from_secs(20)).unwrap_err();
    assert!(matches!(e, Error::Hung { .. }), "{e}");
    assert!(
        e.to_string().contains("did not power off within 20 s"),
        "{e}"
    );
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "qemu (pid {pid}) is gone"
    );
    // Nothing else runs with this test's files: no qemu, no helper.
    let log = console(&s).display().to_string();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&cmdline).contains(&log),
            "process {:?} still runs with {log}",
            entry.file_name()
        );
    }
}

#[test]
#[ignore = "needs root: boots a VM (qemu and the kernel of scripts/vm-kernel.sh)"]
fn a_guest_without_its_modules_says_what_is_missing_and_powers_off() {
    let Some(s) = setup() else { return };
    // The same kernel as if it had no modules directory: no 9p, no virtio console.
    let bare = kernel::Kernel {
        modules: None,
        ..s.kernel.clone()
    };
    let image = image::build(&bare, init_binary(), &s.dir.path().join("bare")).unwrap();
    let cfg = VmConfig::new(image, vec!["true".into()], console(&s));
    let mut vm = Vm::start(&cfg).unwrap();
    let (mut from_guest, _to_guest) = vm.channel().unwrap();
    from_guest.get_ref().set_read_timeout(Some(BOUND)).unwrap();
    let mut out = String::new();
    from_guest.read_to_string(&mut out).unwrap();
    assert_eq!(out, "");
    let end = vm.wait(BOUND).unwrap();
    let tail = end.console_tail.join("\n");
    assert_eq!(end.command_exit, None, "the command did not run: {tail}");
    assert!(end.powered_off, "init powered off: {tail}");
    assert!(
        tail.contains("iolab-init: cannot mount 9p iolab-host on /host")
            && tail.contains("the image lacks the modules crc32c_generic, virtio_pci"),
        "{tail}"
    );
}

/// The environment variable that makes [`pdeath_child`] start a VM (its value: the kernel,
/// the initrd and the console log, one a line).
const PDEATH_VAR: &str = "IOLAB_VM_PDEATH_CHILD";

#[test]
#[ignore = "needs root: boots a VM (qemu and the kernel of scripts/vm-kernel.sh)"]
fn qemu_dies_when_the_process_that_started_it_is_killed() {
    let Some(s) = setup() else { return };
    let spec = format!(
        "{}\n{}\n{}",
        s.image.kernel.display(),
        s.image.initrd.display(),
        console(&s).display()
    );
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "pdeath_child",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PDEATH_VAR, spec)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let qemu: u32 = loop {
        let line = lines
            .next()
            .expect("the child ended before starting qemu")
            .unwrap();
        // After libtest's "test pdeath_child ... " on the same line.
        if let Some((_, pid)) = line.split_once("qemu-pid ") {
            break pid.trim().parse().unwrap();
        }
    };
    assert!(Path::new(&format!("/proc/{qemu}")).exists());
    child.kill().unwrap(); // SIGKILL: no destructor runs in the child
    child.wait().unwrap();
    // The kernel sends qemu SIGKILL as its parent dies; its new parent reaps it.
    let dead = || {
        std::fs::read_to_string(format!("/proc/{qemu}/stat")).map_or(true, |st| {
            st.rsplit(") ").next().is_some_and(|r| r.starts_with('Z'))
        })
    };
    let start = std::time::Instant::now();
    while !dead() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        dead(),
        "qemu (pid {qemu}) outlived the process that started it"
    );
}

/// Run by [`qemu_dies_when_the_process_that_started_it_is_killed`] in a child process:
/// starts a VM, prints qemu's PID and waits to be killed. Does nothing otherwise.
#[test]
#[ignore = "child half of qemu_dies_when_the_process_that_started_it_is_killed, which runs it"]
fn pdeath_child() {
    let Ok(spec) = std::env::var(PDEATH_VAR) else {
        return;
    };
    let parts: Vec<&str> = spec.lines().collect();
    let image = Image {
        kernel: parts[0].into(),
        initrd: parts[1].into(),
        version: String::new(),
        modules: vec![],
        missing_modules: vec![],
    };
    let cfg = VmConfig::new(image, vec!["sleep".into(), "600".into()], parts[2]);
    let vm = Vm::start(&cfg).unwrap();
    println!("qemu-pid {}", vm.pid());
    std::io::stdout().flush().unwrap();
    std::thread::sleep(Duration::from_secs(600));
    drop(vm);
}
