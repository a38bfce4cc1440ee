//! The VM on the host: qemu started with the image, the channel to the guest command, a
//! bounded wait, kill, and what it was.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::guest::{self, CMD_KEY, CWD_KEY, EXIT_PREFIX, HOST_TAG, PORT_NAME, POWER_OFF_LINE};
use crate::image::Image;

/// x86's COMMAND_LINE_SIZE, with its NUL.
const CMDLINE_MAX: usize = 2047;
/// How many of the console's last lines an end or an error carries.
const TAIL_LINES: usize = 40;
/// How long qemu may take to start and connect to the channel.
const CONNECT_BOUND: Duration = Duration::from_secs(60);

/// The accelerator: KVM (hardware virtualization) or TCG (qemu's emulation, much slower).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accel {
    /// KVM where it really works ([`kvm_check`]), else TCG.
    Auto,
    Kvm,
    Tcg,
}

impl Accel {
    pub fn as_str(self) -> &'static str {
        match self {
            Accel::Auto => "auto",
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// Whether KVM works here, or why not. `/dev/kvm` alone is not enough: a PVM host has one
/// that hangs ordinary guests. It needs VT-x or AMD-V (cpuinfo flag vmx or svm), the
/// kvm_intel or kvm_amd module, and a /dev/kvm that opens.
pub fn kvm_check() -> Result<(), String> {
    kvm_check_at(
        Path::new("/proc/cpuinfo"),
        Path::new("/sys/module"),
        Path::new("/dev/kvm"),
    )
}

fn kvm_check_at(cpuinfo: &Path, sys_module: &Path, dev: &Path) -> Result<(), String> {
    let cpuinfo = std::fs::read_to_string(cpuinfo).unwrap_or_default();
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    let has = |flag: &str| flags.split_whitespace().any(|f| f == flag);
    let module = if has("vmx") {
        "kvm_intel"
    } else if has("svm") {
        "kvm_amd"
    } else {
        return Err("the CPU has no VT-x or AMD-V (no vmx or svm in /proc/cpuinfo's flags)".into());
    };
    if !sys_module.join(module).exists() {
        return Err(format!("the {module} module is not loaded"));
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(dev)
        .map(drop)
        .map_err(|e| format!("{}: {e}", dev.display()))
}

/// How qemu caches the disk on the host (its `-drive cache=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheMode {
    /// O_DIRECT on the host, the guest's flushes honoured: the guest sees the device.
    #[default]
    None,
    /// The host's page cache, flushes honoured.
    Writeback,
    /// The host's page cache, flushes ignored (fast, unsafe on a host crash).
    Unsafe,
    /// O_DIRECT and O_DSYNC: every write reaches the device.
    Directsync,
}

impl CacheMode {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheMode::None => "none",
            CacheMode::Writeback => "writeback",
            CacheMode::Unsafe => "unsafe",
            CacheMode::Directsync => "directsync",
        }
    }
}

/// A raw disk (a file or a block device of the host), the guest's /dev/vda.
#[derive(Debug, Clone, PartialEq)]
pub struct Disk {
    pub path: PathBuf,
    pub cache: CacheMode,
    pub readonly: bool,
    /// The serial number the guest sees (`/sys/block/vda/serial`).
    pub serial: Option<String>,
}

impl Disk {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Disk {
            path: path.into(),
            cache: CacheMode::None,
            readonly: false,
            serial: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct VmConfig {
    /// The qemu program: a path, or a name looked up on PATH.
    pub qemu: PathBuf,
    pub image: Image,
    pub vcpus: u32,
    pub memory_mib: u64,
    pub accel: Accel,
    pub disk: Option<Disk>,
    /// The host CPUs qemu (all its threads, the vCPUs too) may run on.
    pub cpuset: Option<Vec<u32>>,
    /// What the guest runs (chrooted into the host's root): argv.
    pub guest_command: Vec<String>,
    /// Its working directory, a path of the host's tree.
    pub cwd: PathBuf,
    /// Where the guest's console (and qemu's own messages) go.
    pub console_log: PathBuf,
    /// More kernel command line arguments.
    pub append: Vec<String>,
}

impl VmConfig {
    /// One vCPU, 1 GiB, the accelerator chosen automatically, no disk, the command run in /.
    pub fn new(image: Image, guest_command: Vec<String>, console_log: impl Into<PathBuf>) -> Self {
        VmConfig {
            qemu: PathBuf::from("qemu-system-x86_64"),
            image,
            vcpus: 1,
            memory_mib: 1024,
            accel: Accel::Auto,
            disk: None,
            cpuset: None,
            guest_command,
            cwd: PathBuf::from("/"),
            console_log: console_log.into(),
            append: Vec::new(),
        }
    }
}

/// How a VM ended.
#[derive(Debug)]
pub struct VmEnd {
    /// The guest's init powered it off, and the kernel did not panic: after the command
    /// (whatever its exit status), or after saying on the console why it could not run it
    /// (then `command_exit` is `None`).
    pub powered_off: bool,
    /// The guest command's exit status, from the console (`None`: killed by a signal, or it
    /// did not run).
    pub command_exit: Option<i32>,
    pub qemu_status: ExitStatus,
    /// From qemu's start to its end.
    pub wall: Duration,
    /// The console's last lines.
    pub console_tail: Vec<String>,
}

/// A running VM. Dropping it kills qemu and reaps it.
///
/// qemu gets PR_SET_PDEATHSIG(SIGKILL): if iolab is killed (even with SIGKILL), qemu dies
/// too. The signal comes when the *thread* that started qemu ends, not the process: start
/// the VM from a thread that outlives it (the main thread, or the run's own thread that
/// also waits for it).
#[derive(Debug)]
pub struct Vm {
    child: Option<Child>,
    pid: u32,
    stream: UnixStream,
    console_log: PathBuf,
    started: Instant,
    accel: Accel,
    description: Value,
}

impl Vm {
    pub fn start(cfg: &VmConfig) -> Result<Vm> {
        let qemu = find_program(&cfg.qemu).ok_or_else(|| Error::QemuMissing {
            program: cfg.qemu.display().to_string(),
        })?;
        let (accel, accel_note) = match cfg.accel {
            Accel::Tcg => (Accel::Tcg, None),
            Accel::Kvm => {
                kvm_check().map_err(|why| Error::KvmUnusable { why })?;
                (Accel::Kvm, None)
            }
            Accel::Auto => match kvm_check() {
                Ok(()) => (Accel::Kvm, None),
                Err(why) => (Accel::Tcg, Some(why)),
            },
        };
        check_memory(cfg)?;
        let version = qemu_version(&qemu)?;
        let run_dir = make_run_dir()?;
        let result = spawn(cfg, &qemu, accel, &run_dir);
        // Connected (or failed): the socket's file is not needed any more, and nothing is
        // left behind even if iolab is killed later.
        let _ = std::fs::remove_dir_all(&run_dir);
        let (child, stream) = result?;
        let description = json!({
            "qemu": version,
            "qemu_path": qemu.display().to_string(),
            "accelerator": accel.as_str(),
            "accelerator_note": accel_note,
            "machine": "q35",
            "vcpus": cfg.vcpus,
            "memory_mib": cfg.memory_mib,
            "kernel": cfg.image.version,
            "kernel_path": cfg.image.kernel.display().to_string(),
            "modules": cfg.image.modules,
            "cache": cfg.disk.as_ref().map(|d| d.cache.as_str()),
            "disk": cfg.disk.as_ref().map(|d| d.path.display().to_string()),
            "cpuset": cfg.cpuset,
        });
        Ok(Vm {
            pid: child.id(),
            child: Some(child),
            stream,
            console_log: cfg.console_log.clone(),
            started: Instant::now(),
            accel,
            description,
        })
    }

    /// The guest command's stdin (the writer) and stdout (the reader).
    pub fn channel(&mut self) -> Result<(BufReader<UnixStream>, UnixStream)> {
        let clone = || {
            self.stream.try_clone().map_err(|e| {
                Error::io(
                    "duplicate the channel socket of the VM whose console is",
                    &self.console_log,
                    e,
                )
            })
        };
        Ok((BufReader::new(clone()?), clone()?))
    }

    /// qemu's process ID.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The accelerator in use (never [`Accel::Auto`]).
    pub fn accel(&self) -> Accel {
        self.accel
    }

    pub fn console_log(&self) -> &Path {
        &self.console_log
    }

    /// What the VM is, for the record: qemu's version, the accelerator (and why not KVM when
    /// it was chosen automatically), the disk's cache mode, vCPUs, memory, kernel, cpuset.
    pub fn describe(&self) -> Value {
        self.description.clone()
    }

    /// Waits up to `bound` for qemu to end. Past it: kills qemu, reaps it, and returns
    /// [`Error::Hung`] with the console's last lines.
    pub fn wait(mut self, bound: Duration) -> Result<VmEnd> {
        let deadline = Instant::now() + bound;
        let Some(child) = self.child.as_mut() else {
            unreachable!("the child is only taken by drop");
        };
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    self.child = None;
                    return Err(Error::Hung {
                        bound,
                        pid: self.pid,
                        console_tail: console_tail(&self.console_log).join("\n"),
                    });
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => {
                    return Err(Error::io(
                        "wait for qemu, whose console is",
                        &self.console_log,
                        e,
                    ))
                }
            }
        };
        self.child = None;
        let wall = self.started.elapsed();
        let text = std::fs::read_to_string(&self.console_log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
        let powered_off = status.success()
            && lines.iter().any(|l| l.ends_with(POWER_OFF_LINE))
            && lines.iter().any(|l| l.contains("reboot: Power down"))
            && !lines.iter().any(|l| l.contains("Kernel panic"));
        let command_exit = lines.iter().find_map(|l| {
            l.split_once(EXIT_PREFIX)
                .and_then(|(_, code)| code.trim().parse().ok())
        });
        Ok(VmEnd {
            powered_off,
            command_exit,
            qemu_status: status,
            wall,
            console_tail: last_lines(&lines),
        })
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn last_lines(lines: &[&str]) -> Vec<String> {
    lines[lines.len().saturating_sub(TAIL_LINES)..]
        .iter()
        .map(|l| l.to_string())
        .collect()
}

fn console_tail(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    last_lines(&lines)
}

/// `program` if it is a path, else the first executable of that name on PATH.
fn find_program(program: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.components().count() > 1 {
        return executable(program).then(|| program.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| executable(p))
}

fn qemu_version(qemu: &Path) -> Result<String> {
    let out = Command::new(qemu)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::io("run", qemu, e))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.lines().next() {
        Some(line) if out.status.success() => Ok(line.trim().to_owned()),
        _ => Err(Error::Command {
            command: format!("{} --version", qemu.display()),
            status: out.status.to_string(),
            output: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        }),
    }
}

/// The kernel unpacks the initramfs into memory while the archive is still there: the
/// guest needs about twice its size, and room to run.
fn check_memory(cfg: &VmConfig) -> Result<()> {
    let initrd = std::fs::metadata(&cfg.image.initrd)
        .map_err(|e| Error::io("read", &cfg.image.initrd, e))?
        .len();
    let needed = 2 * initrd.div_ceil(1 << 20) + 128;
    if cfg.memory_mib < needed {
        return Err(Error::Config {
            what: format!(
                "{} MiB of guest memory is too little for an initramfs of {} MiB: give at \
                 least {needed} MiB",
                cfg.memory_mib,
                initrd.div_ceil(1 << 20)
            ),
        });
    }
    if cfg.vcpus == 0 {
        return Err(Error::Config {
            what: "a VM needs at least one vCPU".into(),
        });
    }
    Ok(())
}

/// A private directory for the channel's socket.
fn make_run_dir() -> Result<PathBuf> {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    let dir = std::env::temp_dir().join(format!(
        "iolab-vm-{}-{}-{nanos:x}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| Error::io("create", &dir, e))?;
    Ok(dir)
}

/// A value in a qemu option list: commas doubled.
fn qemu_value(what: &str, path: &Path) -> Result<String> {
    let s = path.to_str().ok_or_else(|| Error::Config {
        what: format!("the {what} path {} is not UTF-8", path.display()),
    })?;
    Ok(s.replace(',', ",,"))
}

/// The kernel command line: the console, panic=-1 (a panic reboots at once, and qemu's
/// -no-reboot turns that into its exit) and the guest command.
pub(crate) fn kernel_cmdline(cfg: &VmConfig) -> Result<String> {
    let argv = serde_json::to_vec(&cfg.guest_command).map_err(|e| Error::Config {
        what: format!("the guest command: {e}"),
    })?;
    if cfg.guest_command.is_empty() {
        return Err(Error::Config {
            what: "the guest command is empty".into(),
        });
    }
    let mut line = format!(
        "console=ttyS0 panic=-1 {CMD_KEY}={} {CWD_KEY}={}",
        guest::hex(&argv),
        guest::hex(cfg.cwd.as_os_str().as_encoded_bytes())
    );
    for a in &cfg.append {
        line.push(' ');
        line.push_str(a);
    }
    if line.len() > CMDLINE_MAX {
        return Err(Error::CmdlineTooLong {
            len: line.len(),
            max: CMDLINE_MAX,
        });
    }
    Ok(line)
}

/// qemu's arguments.
pub(crate) fn qemu_args(cfg: &VmConfig, accel: Accel, socket: &Path) -> Result<Vec<OsString>> {
    let mut a: Vec<String> = vec![
        "-nodefaults".into(),
        "-nographic".into(),
        "-no-reboot".into(),
        "-machine".into(),
        "q35".into(),
        "-accel".into(),
        accel.as_str().into(),
        "-cpu".into(),
        // TCG's "max" has every feature qemu emulates (the guest's crc32c, AES…).
        if accel == Accel::Kvm { "host" } else { "max" }.into(),
        "-smp".into(),
        cfg.vcpus.to_string(),
        "-m".into(),
        cfg.memory_mib.to_string(),
        "-kernel".into(),
        qemu_value("kernel", &cfg.image.kernel)?,
        "-initrd".into(),
        qemu_value("initrd", &cfg.image.initrd)?,
        "-append".into(),
        kernel_cmdline(cfg)?,
        "-chardev".into(),
        format!(
            "file,id=console,path={},append=on",
            qemu_value("console log", &cfg.console_log)?
        ),
        "-serial".into(),
        "chardev:console".into(),
        "-device".into(),
        "virtio-serial-pci".into(),
        "-chardev".into(),
        format!("socket,id=channel,path={}", qemu_value("socket", socket)?),
        "-device".into(),
        format!("virtserialport,chardev=channel,name={PORT_NAME}"),
        // multidevs=remap: the host's root spans several filesystems, whose inode numbers
        // would collide in the guest.
        "-fsdev".into(),
        "local,id=hostfs,path=/,security_model=none,readonly=on,multidevs=remap".into(),
        "-device".into(),
        format!("virtio-9p-pci,fsdev=hostfs,mount_tag={HOST_TAG}"),
    ];
    if let Some(d) = &cfg.disk {
        let mut drive = format!(
            "file={},format=raw,if=virtio,cache={},aio=threads",
            qemu_value("disk", &d.path)?,
            d.cache.as_str()
        );
        if d.readonly {
            drive.push_str(",readonly=on");
        }
        if let Some(s) = &d.serial {
            drive.push_str(&format!(",serial={}", s.replace(',', ",,")));
        }
        a.extend(["-drive".into(), drive]);
    }
    Ok(a.into_iter().map(OsString::from).collect())
}

fn spawn(cfg: &VmConfig, qemu: &Path, accel: Accel, run_dir: &Path) -> Result<(Child, UnixStream)> {
    let socket = run_dir.join("channel.sock");
    // iolab listens and qemu connects as it starts, before the guest runs: nothing the
    // guest writes is lost, and there is no socket file to wait for.
    let listener = UnixListener::bind(&socket).map_err(|e| Error::io("listen on", &socket, e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| Error::io("listen on", &socket, e))?;
    let args = qemu_args(cfg, accel, &socket)?;
    File::create(&cfg.console_log).map_err(|e| Error::io("create", &cfg.console_log, e))?;
    let log = OpenOptions::new()
        .append(true)
        .open(&cfg.console_log)
        .map_err(|e| Error::io("open", &cfg.console_log, e))?;
    let log2 = log
        .try_clone()
        .map_err(|e| Error::io("open", &cfg.console_log, e))?;
    let cpuset = cpu_set(cfg.cpuset.as_deref())?;

    let mut cmd = Command::new(qemu);
    cmd.args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(log2));
    // SAFETY: getpid has no failure mode.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the hook calls only prctl(2), getppid(2) and sched_setaffinity(2), which are
    // async-signal-safe, on data prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            // iolab died before the death signal was armed: do not start at all.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            if let Some(set) = &cpuset {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Error::QemuMissing {
            program: qemu.display().to_string(),
        },
        _ => Error::io("run", qemu, e),
    })?;
    let start = Instant::now();
    let stream = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::io("accept qemu's connection on", &socket, e));
            }
        }
        let ended = child.try_wait().ok().flatten();
        if ended.is_some() || start.elapsed() > CONNECT_BOUND {
            let what = match ended {
                Some(status) => format!("ended ({status}) before the guest started"),
                None => {
                    let _ = child.kill();
                    let _ = child.wait();
                    format!(
                        "did not connect to the guest's channel within {} s and was killed",
                        CONNECT_BOUND.as_secs()
                    )
                }
            };
            return Err(Error::QemuFailed {
                what,
                console_tail: console_tail(&cfg.console_log).join("\n"),
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    stream
        .set_nonblocking(false)
        .map_err(|e| Error::io("use the channel socket", &socket, e))?;
    Ok((child, stream))
}

fn cpu_set(cpus: Option<&[u32]>) -> Result<Option<libc::cpu_set_t>> {
    let Some(cpus) = cpus else { return Ok(None) };
    if cpus.is_empty() {
        return Err(Error::Config {
            what: "an empty cpuset".into(),
        });
    }
    // SAFETY: cpu_set_t is a plain bit array; all zeros is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for &c in cpus {
        if c as usize >= max {
            return Err(Error::Config {
                what: format!("CPU {c} of the cpuset is past the {max} a CPU set holds"),
            });
        }
        // SAFETY: c is within the set (checked above).
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    Ok(Some(set))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> VmConfig {
        let image = Image {
            kernel: "/k/vmlinuz-6.1".into(),
            initrd: "/c/a,b.cpio".into(),
            version: "6.1".into(),
            modules: vec![],
            missing_modules: vec![],
        };
        VmConfig::new(
            image,
            vec!["/bin/sh".into(), "-c".into(), "echo hi".into()],
            "/l/console",
        )
    }

    #[test]
    fn qemu_command_line() {
        let mut cfg = config();
        cfg.disk = Some(Disk {
            serial: Some("s1".into()),
            ..Disk::new("/dev/loop7")
        });
        let args: Vec<String> = qemu_args(&cfg, Accel::Tcg, Path::new("/r/channel.sock"))
            .unwrap()
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        let after = |flag: &str| -> Vec<&str> {
            args.windows(2)
                .filter(|w| w[0] == flag)
                .map(|w| w[1].as_str())
                .collect()
        };
        assert_eq!(after("-accel"), ["tcg"]);
        assert_eq!(after("-initrd"), ["/c/a,,b.cpio"], "commas doubled");
        assert_eq!(
            after("-drive"),
            ["file=/dev/loop7,format=raw,if=virtio,cache=none,aio=threads,serial=s1"]
        );
        assert!(after("-chardev").contains(&"socket,id=channel,path=/r/channel.sock"));
        assert!(args.iter().any(|a| a == "-no-reboot"));
        let append = after("-append")[0];
        assert!(append.starts_with("console=ttyS0 panic=-1 "), "{append}");
        let (argv, cwd) = guest::parse_cmdline(append).unwrap();
        assert_eq!(argv, cfg.guest_command);
        assert_eq!(cwd, "/");
    }

    #[test]
    fn too_little_memory_for_the_initramfs_is_an_error() {
        let t = tempfile::tempdir().unwrap();
        let mut cfg = config();
        cfg.image.initrd = t.path().join("initrd");
        std::fs::File::create(&cfg.image.initrd)
            .unwrap()
            .set_len(100 << 20)
            .unwrap();
        cfg.memory_mib = 327;
        let e = check_memory(&cfg).unwrap_err();
        assert!(e.to_string().contains("give at least 328 MiB"), "{e}");
        cfg.memory_mib = 328;
        check_memory(&cfg).unwrap();
    }

    #[test]
    fn a_command_over_the_kernel_limit_is_an_error() {
        let mut cfg = config();
        cfg.guest_command = vec!["x".repeat(1100)];
        let e = kernel_cmdline(&cfg).unwrap_err();
        assert!(matches!(e, Error::CmdlineTooLong { max: 2047, .. }), "{e}");
    }

    #[test]
    fn a_missing_qemu_says_which_package() {
        let mut cfg = config();
        cfg.qemu = "/nonexistent/qemu-system-x86_64".into();
        let e = Vm::start(&cfg).unwrap_err();
        assert!(matches!(e, Error::QemuMissing { .. }), "{e}");
        assert_eq!(e.hint(), Some("apt-get install qemu-system-x86"));
    }

    #[test]
    fn kvm_only_with_the_cpu_flag_the_module_and_the_device() {
        let t = tempfile::tempdir().unwrap();
        let (cpuinfo, modules, dev) = (
            t.path().join("cpuinfo"),
            t.path().join("module"),
            t.path().join("kvm"),
        );
        let check = || kvm_check_at(&cpuinfo, &modules, &dev);
        // A PVM host: /dev/kvm and a kvm module, but no VT-x or AMD-V.
        std::fs::write(&cpuinfo, "processor\t: 0\nflags\t\t: fpu sse2 hypervisor\n").unwrap();
        std::fs::create_dir_all(modules.join("kvm_pvm")).unwrap();
        std::fs::write(&dev, "").unwrap();
        assert!(check().unwrap_err().contains("no VT-x or AMD-V"));
        std::fs::write(&cpuinfo, "flags\t\t: fpu svm sse2\n").unwrap();
        assert_eq!(check().unwrap_err(), "the kvm_amd module is not loaded");
        std::fs::create_dir_all(modules.join("kvm_amd")).unwrap();
        check().unwrap();
        std::fs::remove_file(&dev).unwrap();
        assert!(check().unwrap_err().starts_with(&dev.display().to_string()));
    }
}
