//! The guest's init: what the iolab binary does when the kernel starts it as `/init` of the
//! initramfs ([`is_init`], [`run_init`]).
//!
//! It mounts /dev, /proc and /sys, loads the image's modules in order, mounts the host's
//! root (shared read-only over virtio-9p) at /host with the guest's own /proc, /sys, /dev,
//! /tmp and /run over it, opens the virtio-serial port named `iolab`, and runs the guest
//! command chrooted into /host with its stdin and stdout on the port and its stderr on the
//! console. Then it stops what is left, unmounts, syncs and powers off. Any failure is one
//! `iolab-init: …` line on the console and a power-off: never a hang (and a panic of init
//! makes the kernel reboot, which qemu's `-no-reboot` turns into its exit).
//!
//! Writing to the console is this module's job: it is the only place the guest can report.

use std::ffi::CString;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::image::{MISSING_LIST, MODULE_LIST};

/// The 9p mount tag of the host's root.
pub const HOST_TAG: &str = "iolab-host";
/// The name of the virtio-serial port that carries the guest command's stdin and stdout.
pub const PORT_NAME: &str = "iolab";
/// Kernel command line keys: the guest command (hex of a JSON array of strings) and its
/// working directory in the host's tree (hex of the path).
pub const CMD_KEY: &str = "iolab.cmd";
pub const CWD_KEY: &str = "iolab.cwd";
/// What init prints just before powering off, and with the command's end: the host reads
/// these from the console.
pub const POWER_OFF_LINE: &str = "iolab-init: powering off";
pub const EXIT_PREFIX: &str = "iolab-init: the command exited with status ";

/// The environment of the guest command.
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Whether this process is a guest's init: PID 1, started as `/init`.
pub fn is_init() -> bool {
    // SAFETY: getpid has no preconditions and cannot fail.
    let pid1 = unsafe { libc::getpid() } == 1;
    pid1 && std::env::args_os().next().is_some_and(|a| a == "/init")
}

/// The guest's init (see the module's documentation). Never returns: it powers off.
pub fn run_init() -> ! {
    match init() {
        Ok(status) => say(&status),
        Err(e) => say(&format!("iolab-init: {e}")),
    }
    power_off()
}

fn say(line: &str) {
    let _ = writeln!(io::stderr(), "{line}");
}

fn init() -> Result<String, String> {
    mount("devtmpfs", "/dev", "devtmpfs", 0, "")?;
    mount("proc", "/proc", "proc", 0, "")?;
    mount("sysfs", "/sys", "sysfs", 0, "")?;
    let cmdline = fs::read_to_string("/proc/cmdline").map_err(|e| format!("/proc/cmdline: {e}"))?;
    let (argv, cwd) = parse_cmdline(&cmdline)?;
    let missing = fs::read_to_string(MISSING_LIST).unwrap_or_default();
    let missing: Vec<&str> = missing.split_whitespace().collect();
    let lacking = |what: &str| {
        if missing.is_empty() {
            String::new()
        } else {
            format!(
                " ({what}; the image lacks the modules {}: the kernel must have them built in)",
                missing.join(", ")
            )
        }
    };
    load_modules()?;

    let opts = "trans=virtio,version=9p2000.L,cache=loose,msize=262144";
    retry(Duration::from_secs(10), || {
        mount(HOST_TAG, "/host", "9p", libc::MS_RDONLY, opts)
    })
    .map_err(|e| format!("{e}{}", lacking("the host's root is shared over virtio-9p")))?;
    mount("proc", "/host/proc", "proc", 0, "")?;
    mount("sysfs", "/host/sys", "sysfs", 0, "")?;
    mount("devtmpfs", "/host/dev", "devtmpfs", 0, "")?;
    for (dir, mode) in [("/host/dev/shm", 0o1777), ("/host/dev/pts", 0o755)] {
        let _ = fs::create_dir(dir);
        let _ = fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(mode));
    }
    mount("tmpfs", "/host/dev/shm", "tmpfs", 0, "mode=1777")?;
    mount("devpts", "/host/dev/pts", "devpts", 0, "")?;
    mount("tmpfs", "/host/tmp", "tmpfs", 0, "mode=1777")?;
    mount("tmpfs", "/host/run", "tmpfs", 0, "mode=755")?;
    // The guest's own network: only `lo`, which starts down (a workload's server and
    // client talk over it, iperf3's among them).
    lo_up()?;

    let port = retry(Duration::from_secs(10), find_port)
        .map_err(|e| format!("{e}{}", lacking("the channel is a virtio-serial port")))?;
    let port = File::options()
        .read(true)
        .write(true)
        .open(&port)
        .map_err(|e| format!("{}: {e}", port.display()))?;
    let status = run_command(&argv, &cwd, port.into())?;
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => format!("{EXIT_PREFIX}{code}"),
        (None, Some(sig)) => format!("iolab-init: the command was killed by signal {sig}"),
        _ => format!("iolab-init: the command ended: {status}"),
    })
}

/// The guest command's argv and working directory from the kernel command line.
pub(crate) fn parse_cmdline(cmdline: &str) -> Result<(Vec<String>, String), String> {
    let value = |key: &str| {
        cmdline
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
    };
    let cmd = value(CMD_KEY).ok_or_else(|| format!("no {CMD_KEY}= on the kernel command line"))?;
    let cmd = unhex(cmd).ok_or_else(|| format!("{CMD_KEY}= is not hex"))?;
    let argv: Vec<String> = serde_json::from_slice(&cmd)
        .map_err(|e| format!("{CMD_KEY}= is not a JSON array of strings: {e}"))?;
    if argv.is_empty() {
        return Err(format!("{CMD_KEY}= is an empty command"));
    }
    let cwd = match value(CWD_KEY) {
        Some(h) => unhex(h)
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| format!("{CWD_KEY}= is not hex of a path"))?,
        None => "/".to_owned(),
    };
    Ok((argv, cwd))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn mount(
    source: &str,
    target: &str,
    fstype: &str,
    flags: libc::c_ulong,
    data: &str,
) -> Result<(), String> {
    let c = |s: &str| CString::new(s).map_err(|_| format!("{s:?} has a NUL byte"));
    let (src, tgt, fst, dat) = (c(source)?, c(target)?, c(fstype)?, c(data)?);
    // SAFETY: all four are valid NUL-terminated strings that outlive the call.
    let rc = unsafe {
        libc::mount(
            src.as_ptr(),
            tgt.as_ptr(),
            fst.as_ptr(),
            flags,
            dat.as_ptr().cast(),
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return Err(format!("cannot mount {fstype} {source} on {target}: {e}"));
    }
    Ok(())
}

fn load_modules() -> Result<(), String> {
    let list = fs::read_to_string(MODULE_LIST).map_err(|e| format!("{MODULE_LIST}: {e}"))?;
    for line in list.lines() {
        let Some((path, name)) = line.split_once(' ') else {
            continue;
        };
        let f = File::open(path).map_err(|e| format!("{path}: {e}"))?;
        let params = c"";
        // SAFETY: a valid fd and a NUL-terminated empty parameter string.
        let rc =
            unsafe { libc::syscall(libc::SYS_finit_module, f.as_raw_fd(), params.as_ptr(), 0) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            // Loaded already (as another module's dependency, by the kernel): fine.
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(format!(
                    "cannot load the kernel module {name} ({path}): {e}"
                ));
            }
        }
    }
    Ok(())
}

/// The device of the virtio-serial port named [`PORT_NAME`]: the port's name arrives from
/// the host after the device appears, so it may not be there at once.
fn find_port() -> Result<std::path::PathBuf, String> {
    let dir = Path::new("/sys/class/virtio-ports");
    for entry in
        fs::read_dir(dir).map_err(|e| format!("no virtio-serial ports ({}: {e})", dir.display()))?
    {
        let Ok(entry) = entry else { continue };
        let name = fs::read_to_string(entry.path().join("name")).unwrap_or_default();
        if name.trim() == PORT_NAME {
            let dev = Path::new("/dev").join(entry.file_name());
            if dev.exists() {
                return Ok(dev);
            }
        }
    }
    Err(format!(
        "no virtio-serial port named {PORT_NAME} in {}",
        dir.display()
    ))
}

fn retry<T>(bound: Duration, mut f: impl FnMut() -> Result<T, String>) -> Result<T, String> {
    let start = Instant::now();
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if start.elapsed() >= bound => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Brings the loopback interface up (`ip link set lo up`, without `ip`).
fn lo_up() -> Result<(), String> {
    let fail = |what: &str| format!("bringing lo up: {what}: {}", io::Error::last_os_error());
    // SAFETY: a datagram socket for the interface ioctls, closed below; `ifreq` is plain
    // data the kernel reads and writes within its size.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(fail("socket"));
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        let r = if libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) < 0 {
            Err(fail("SIOCGIFFLAGS"))
        } else {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            if libc::ioctl(fd, libc::SIOCSIFFLAGS, &req) < 0 {
                Err(fail("SIOCSIFFLAGS"))
            } else {
                Ok(())
            }
        };
        libc::close(fd);
        r
    }
}

fn run_command(
    argv: &[String],
    cwd: &str,
    port: OwnedFd,
) -> Result<std::process::ExitStatus, String> {
    let stdout = port
        .try_clone()
        .map_err(|e| format!("cannot duplicate the port: {e}"))?;
    let cwd_c = CString::new(cwd).map_err(|_| format!("{CWD_KEY}: a NUL byte in {cwd:?}"))?;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .env("PATH", PATH)
        .env("HOME", "/root")
        .env("TERM", "dumb")
        .stdin(Stdio::from(port))
        .stdout(Stdio::from(stdout));
    // SAFETY: chroot(2) and chdir(2) are async-signal-safe; the strings outlive the fork.
    unsafe {
        cmd.pre_exec(move || {
            if libc::chroot(c"/host".as_ptr()) != 0 || libc::chdir(cwd_c.as_ptr()) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // After pre_exec, exec searches PATH in the chroot: the program is the host's.
    let mut child = cmd.spawn().map_err(|e| {
        format!(
            "cannot run {:?} in the host's tree (cwd {cwd}): {e}",
            argv[0]
        )
    })?;
    child
        .wait()
        .map_err(|e| format!("cannot wait for the command: {e}"))
}

/// Stop what the command left running, unmount (so that the disk's filesystem is clean
/// for the host), sync and power off.
fn power_off() -> ! {
    // SAFETY: kill(-1) signals every process but init; waitpid reaps them.
    unsafe {
        libc::kill(-1, libc::SIGKILL);
        let start = Instant::now();
        while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) >= 0
            && start.elapsed() < Duration::from_secs(5)
        {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let mounts = fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let targets: Vec<&str> = mounts
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    // Newest first, children before their parents; /proc last (the list was read already).
    for target in targets.iter().rev() {
        if let Ok(t) = CString::new(target.replace("\\040", " ")) {
            // SAFETY: a valid NUL-terminated path.
            unsafe { libc::umount2(t.as_ptr(), 0) };
        }
    }
    say(POWER_OFF_LINE);
    // SAFETY: sync and reboot have no memory-safety preconditions.
    unsafe {
        libc::sync();
        libc::reboot(libc::RB_POWER_OFF);
    }
    // Only reached if the kernel refused (we are not PID 1): end anyway.
    std::process::exit(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_and_its_directory_from_the_kernel_command_line() {
        let argv = r#"["/bin/sh","-c","echo \"a b\""]"#;
        let line = format!(
            "console=ttyS0 panic=-1 {CMD_KEY}={} {CWD_KEY}={} quiet\n",
            hex(argv.as_bytes()),
            hex(b"/srv/x y")
        );
        let (a, cwd) = parse_cmdline(&line).unwrap();
        assert_eq!(a, ["/bin/sh", "-c", "echo \"a b\""]);
        assert_eq!(cwd, "/srv/x y");

        let (_, cwd) = parse_cmdline(&format!("{CMD_KEY}={}", hex(b"[\"true\"]"))).unwrap();
        assert_eq!(cwd, "/");
        assert!(parse_cmdline("console=ttyS0")
            .unwrap_err()
            .contains("no iolab.cmd="));
        assert!(parse_cmdline("iolab.cmd=zz")
            .unwrap_err()
            .contains("not hex"));
        let empty = format!("{CMD_KEY}={}", hex(b"[]"));
        assert!(parse_cmdline(&empty).unwrap_err().contains("empty"));
        // A key that only starts like ours is not ours.
        let other = format!("{CMD_KEY}x=00 {CMD_KEY}={}", hex(b"[\"true\"]"));
        assert_eq!(parse_cmdline(&other).unwrap().0, ["true"]);
    }
}
