//! Containers: a program run in a container's cgroups and namespaces sees PID 1, its own
//! hostname and only `lo`; its limits hold (blkio write throttle, memory, CPU quota);
//! teardown, dropping the session and `recover` after a SIGKILL leave no cgroup and no
//! process.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use iolab_sut::container::Controller;
use iolab_sut::{
    recover_path, Container, ContainerSpec, Error, Sut, SutOptions, SutPlan, Throttle,
};

const PROBE_ENV: &str = "IOLAB_SUT_CONTAINER_PROBE";
const CHILD_ENV: &str = "IOLAB_SUT_CONTAINER_CHILD";

/// A directory target in the scratch directory, run in a container with `c`.
fn dir_plan(s: &Scratch, c: ContainerSpec) -> SutPlan {
    let target = s.dir.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let mut plan = spec(&format!(
        r#"{{"target":{{"kind":"directory","path":{:?}}}}}"#,
        target.display().to_string()
    ))
    .validate()
    .unwrap();
    plan.container = Some(c);
    plan
}

fn sh(script: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(script);
    c
}

fn proc_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// A child of the test that is killed and reaped when the test ends, however it ends.
struct Reap(std::process::Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn dirs(c: &Container) -> Vec<PathBuf> {
    c.dirs.iter().map(|d| d.path.clone()).collect()
}

/// The probe: run inside a container by `a_container_has_its_own_pid_uts_and_net`, it says
/// what it sees on lines starting with `probe `.
#[test]
#[ignore = "child half of a_container_has_its_own_pid_uts_and_net, which runs it"]
fn container_probe() {
    if std::env::var_os(PROBE_ENV).is_none() {
        return;
    }
    let ifaces: Vec<String> = std::fs::read_to_string("/proc/net/dev")
        .unwrap()
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next().map(|n| n.trim().to_owned()))
        .collect();
    // SAFETY: a zeroed ifreq with the name set; our socket.
    let lo_up = unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        let mut req: libc::ifreq = std::mem::zeroed();
        req.ifr_name[0] = b'l' as libc::c_char;
        req.ifr_name[1] = b'o' as libc::c_char;
        let r = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req);
        libc::close(fd);
        r == 0 && req.ifr_ifru.ifru_flags & libc::IFF_UP as libc::c_short != 0
    };
    let exe1 = std::fs::read_link("/proc/1/exe").unwrap();
    println!("probe pid {}", std::process::id());
    println!(
        "probe hostname {}",
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap()
            .trim()
    );
    println!("probe ifaces {}", ifaces.join(","));
    println!("probe lo_up {lo_up}");
    println!(
        "probe pid1_is_me {}",
        exe1 == std::env::current_exe().unwrap()
    );
    println!(
        "probe in_cgroup {}",
        std::fs::read_to_string("/proc/self/cgroup")
            .unwrap()
            .contains("iolab-ctr-")
    );
}

#[test]
#[ignore = "needs root: cgroups, namespaces, mounts"]
fn a_container_has_its_own_pid_uts_and_net() {
    let _hang = iolab_testkit::timeout(120);
    require_root();
    let s = Scratch::new("ctr-ns");
    let sut = s.sut();
    let host_name = read_sysctl("/proc/sys/kernel/hostname");
    let run = sut
        .prepare(&dir_plan(
            &s,
            ContainerSpec {
                hostname: "box-under-test".into(),
                ..ContainerSpec::default()
            },
        ))
        .unwrap();
    let ctr = run.container.clone().unwrap();
    let names: Vec<&str> = ctr
        .dirs
        .iter()
        .map(|d| d.path.file_name().unwrap().to_str().unwrap())
        .collect();
    assert!(
        names.iter().all(|n| n.starts_with("iolab-ctr-")),
        "{names:?}"
    );
    // Usage is recorded without limits: cpu, cpuacct, cpuset, memory, pids.
    for c in [
        Controller::Cpu,
        Controller::Cpuacct,
        Controller::Cpuset,
        Controller::Memory,
        Controller::Pids,
    ] {
        assert!(
            ctr.dirs.iter().any(|d| d.controllers.contains(&c)),
            "no {c:?} cgroup in {:?}",
            ctr.dirs
        );
    }
    let mut cmd = iolab_testkit::child_half("container_probe");
    cmd.env(PROBE_ENV, "1").stdout(Stdio::piped());
    let child = ctr.spawn(&mut cmd).unwrap();
    let middle = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let seen: std::collections::BTreeMap<&str, &str> = text
        .lines()
        // libtest starts the line with `test container_probe ... `.
        .filter_map(|l| l.rsplit_once("probe ")?.1.split_once(" "))
        .collect();
    assert_eq!(seen.get("pid"), Some(&"1"), "{text}");
    assert_eq!(seen.get("pid1_is_me"), Some(&"true"), "{text}");
    assert_eq!(seen.get("hostname"), Some(&"box-under-test"), "{text}");
    assert_eq!(seen.get("ifaces"), Some(&"lo"), "{text}");
    assert_eq!(seen.get("lo_up"), Some(&"true"), "{text}");
    assert_eq!(seen.get("in_cgroup"), Some(&"true"), "{text}");
    assert_eq!(read_sysctl("/proc/sys/kernel/hostname"), host_name);

    let stats = ctr.stats();
    assert!(stats.cpu_usage_ns.unwrap() > 0, "{stats:?}");
    assert!(stats.pids_peak.unwrap() >= 2, "middle and PID 1: {stats:?}");
    assert!(stats.memory_max_usage_bytes.unwrap() > 0, "{stats:?}");
    assert_eq!(stats.oom_kills, Some(0));
    let d = ctr.describe();
    assert_eq!(d["hostname"], "box-under-test");
    assert_eq!(d["namespaces"].as_array().unwrap().len(), 5);

    // The exit status is the program's.
    let st = ctr.spawn(&mut sh("exit 7")).unwrap().wait().unwrap();
    assert_eq!(st.code(), Some(7));

    let paths = dirs(&ctr);
    sut.teardown(run).into_result().unwrap();
    for p in &paths {
        assert!(!p.exists(), "{} left", p.display());
    }
    assert!(!proc_exists(middle));
    s.assert_clean();
}

#[test]
#[ignore = "needs root: loop devices, mounts, blkio cgroups, namespaces"]
fn a_write_throttle_holds_inside() {
    let _hang = iolab_testkit::timeout(300);
    require_root();
    let _g = global_lock();
    let s = Scratch::new("ctr-io");
    let sut = s.sut();
    let mut plan = spec(r#"{"target":{"kind":"loop_image","size":"128M"},"fs":{"kind":"ext4"}}"#)
        .validate()
        .unwrap();
    const RATE: u64 = 10_000_000;
    plan.container = Some(ContainerSpec {
        io: Some(Throttle {
            write_bps: Some(RATE),
            ..Throttle::default()
        }),
        ..ContainerSpec::default()
    });
    let run = sut.prepare(&plan).unwrap();
    let ctr = run.container.clone().unwrap();
    let dev = run.device.as_ref().unwrap().dev;
    assert_eq!(ctr.dev, Some(dev));
    assert_eq!(
        ctr.limits
            .get("blkio.throttle.write_bps_device")
            .map(String::as_str),
        Some(format!("{dev} {RATE}").as_str())
    );
    let before = ctr.stats().io.unwrap();
    let t0 = Instant::now();
    let st = ctr
        .spawn(&mut sh(&format!(
            "dd if=/dev/zero of={}/f bs=1M count=30 oflag=direct status=none",
            run.mountpoint.display()
        )))
        .unwrap()
        .wait()
        .unwrap();
    let secs = t0.elapsed().as_secs_f64();
    assert!(st.success(), "{st:?}");
    let after = ctr.stats().io.unwrap();
    let bytes = after.write_bytes - before.write_bytes;
    assert!(bytes >= 30 << 20, "charged {bytes} bytes");
    let rate = bytes as f64 / secs / 1e6;
    eprintln!("{bytes} bytes charged in {secs:.2} s: {rate:.2} MB/s");
    assert!(
        (9.0..=11.0).contains(&rate),
        "{bytes} bytes in {secs:.2} s: {rate:.2} MB/s under a 10 MB/s limit"
    );
    sut.teardown(run).into_result().unwrap();
    s.assert_clean();
}

#[test]
#[ignore = "needs root: memory cgroups, namespaces"]
fn a_memory_hog_is_oom_killed() {
    let _hang = iolab_testkit::timeout(120);
    require_root();
    let s = Scratch::new("ctr-mem");
    let sut = s.sut();
    let run = sut
        .prepare(&dir_plan(
            &s,
            ContainerSpec {
                memory: Some(64 << 20),
                ..ContainerSpec::default()
            },
        ))
        .unwrap();
    let ctr = run.container.clone().unwrap();
    assert_eq!(ctr.memory_limit(), Some(64 << 20));
    assert!(!ctr.oom_killed());
    // dd reads into one 256 MiB buffer: it touches all of it.
    let st = ctr
        .spawn(&mut sh("exec dd if=/dev/zero of=/dev/null bs=256M count=1"))
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(st.signal(), Some(libc::SIGKILL), "{st:?}");
    assert!(ctr.oom_killed(), "{:?}", ctr.stats());
    let msg = ctr.oom_message().unwrap();
    assert!(msg.contains("memory limit (64 MiB) was reached"), "{msg}");
    sut.teardown(run).into_result().unwrap();
    s.assert_clean();
}

#[test]
#[ignore = "needs root: cpu cgroups, namespaces"]
fn a_cpu_quota_throttles_a_busy_loop() {
    let _hang = iolab_testkit::timeout(120);
    require_root();
    let s = Scratch::new("ctr-cpu");
    let sut = s.sut();
    let run = sut
        .prepare(&dir_plan(
            &s,
            ContainerSpec {
                cpus: Some(0.2),
                ..ContainerSpec::default()
            },
        ))
        .unwrap();
    let ctr = run.container.clone().unwrap();
    assert_eq!(
        ctr.limits.get("cpu.cfs_quota_us").map(String::as_str),
        Some("20000")
    );
    assert_eq!(
        ctr.limits.get("cpu.cfs_period_us").map(String::as_str),
        Some("100000")
    );
    let st = ctr
        .spawn(&mut sh("timeout 1 sh -c 'while :; do :; done'; exit 0"))
        .unwrap()
        .wait()
        .unwrap();
    assert!(st.success(), "{st:?}");
    let stats = ctr.stats();
    assert!(stats.nr_periods.unwrap() > 0, "{stats:?}");
    assert!(stats.nr_throttled.unwrap() > 0, "{stats:?}");
    assert!(stats.throttled_ns.unwrap() > 0, "{stats:?}");
    sut.teardown(run).into_result().unwrap();
    s.assert_clean();
}

#[test]
#[ignore = "needs root: cgroups, namespaces, mounts"]
fn a_rootfs_shows_only_itself_the_target_and_the_kept_paths() {
    let _hang = iolab_testkit::timeout(120);
    require_root();
    let s = Scratch::new("ctr-rootfs");
    let root = s.dir.join("rootfs");
    std::fs::create_dir_all(&root).unwrap();
    for (link, to) in [
        ("bin", "usr/bin"),
        ("lib", "usr/lib"),
        ("lib64", "usr/lib64"),
    ] {
        std::os::unix::fs::symlink(to, root.join(link)).unwrap();
    }
    std::fs::write(root.join("marker"), b"inside").unwrap();
    let sut = s.sut();
    let plan = dir_plan(
        &s,
        ContainerSpec {
            rootfs: Some(root.clone()),
            keep_paths: vec!["/usr".into()],
            ..ContainerSpec::default()
        },
    );
    let run = sut.prepare(&plan).unwrap();
    std::fs::write(run.mountpoint.join("from-host"), b"x").unwrap();
    let ctr = run.container.clone().unwrap();
    let mut cmd = sh(
        "cat /marker; echo; test -e /etc/passwd && echo host-etc-visible; \
         test -e from-host && echo target-ok; pwd; cat /proc/1/comm",
    );
    cmd.current_dir(&run.mountpoint).stdout(Stdio::piped());
    let out = ctr.spawn(&mut cmd).unwrap().wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "inside",
            "target-ok",
            run.mountpoint.to_str().unwrap(),
            "sh"
        ],
        "{text}"
    );
    // Nothing of the container's mounts is left on the host.
    assert!(s.mounts().is_empty(), "{:?}", s.mounts());
    sut.teardown(run).into_result().unwrap();
    s.assert_clean();
}

/// A failed start is named: a program that does not exist, a cgroup to join that was
/// removed behind iolab's back.
#[test]
#[ignore = "needs root: cgroups"]
fn a_failed_start_names_its_step() {
    require_root();
    let s = Scratch::new("ctr-fail");
    let sut = s.sut();
    let run = sut
        .prepare(&dir_plan(&s, ContainerSpec::default()))
        .unwrap();
    let ctr = run.container.clone().unwrap();
    let err = ctr
        .spawn(&mut Command::new("/nonexistent/iolab-program"))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("executing /nonexistent/iolab-program"),
        "{err}"
    );
    let gone = ctr.dirs.last().unwrap().path.clone();
    std::fs::remove_dir(&gone).unwrap();
    let err = ctr.spawn(&mut sh("true")).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::ContainerStart { .. }), "{err:?}");
    assert!(
        msg.contains(&format!("joining cgroup {}/cgroup.procs", gone.display())),
        "{msg}"
    );
    sut.teardown(run).into_result().unwrap();
    s.assert_clean();
}

/// Machine problems stop `prepare` before anything is created.
#[test]
fn a_cpu_that_is_not_online_is_bad_input() {
    let s = Scratch::new("ctr-bad");
    let sut = s.sut();
    let c = ContainerSpec {
        cpuset: Some(vec![99]),
        ..ContainerSpec::default()
    };
    let problems = c.machine_problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].field, "environment.cpuset");
    let err = sut.prepare(&dir_plan(&s, c)).unwrap_err();
    assert!(err.is_bad_input(), "{err}");
    assert!(
        err.to_string()
            .starts_with("environment.cpuset: CPU 99 is not online"),
        "{err}"
    );
    s.assert_clean();
}

#[test]
#[ignore = "needs root: cgroups, namespaces"]
fn dropping_the_session_ends_the_container() {
    let _hang = iolab_testkit::timeout(120);
    require_root();
    let s = Scratch::new("ctr-drop");
    let (mut child, paths) = {
        let sut = s.sut();
        let run = sut
            .prepare(&dir_plan(&s, ContainerSpec::default()))
            .unwrap();
        let ctr = run.container.clone().unwrap();
        let child = ctr.spawn(Command::new("sleep").arg("1000")).unwrap();
        (child, dirs(&ctr))
    };
    let st = child.wait().unwrap();
    assert_eq!(st.signal(), Some(libc::SIGKILL), "{st:?}");
    for p in &paths {
        assert!(!p.exists(), "{} left", p.display());
    }
    assert!(!proc_exists(child.id()));
    s.assert_clean();
}

/// The child of `recover_kills_what_a_killed_session_left_in_its_container`: prepares a
/// container, starts `sleep 1000` in it, says where, and waits to be killed.
#[test]
#[ignore = "child half of recover_kills_what_a_killed_session_left_in_its_container, which runs it"]
fn container_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let sut = Sut::open(SutOptions::under(&dir)).unwrap();
    let mut plan = spec(&format!(
        r#"{{"target":{{"kind":"directory","path":{:?}}}}}"#,
        dir.display().to_string()
    ))
    .validate()
    .unwrap();
    plan.container = Some(ContainerSpec {
        pids: Some(32),
        ..ContainerSpec::default()
    });
    let run = sut.prepare(&plan).unwrap();
    let ctr = run.container.as_ref().unwrap();
    let mut sleep = ctr.spawn(Command::new("sleep").arg("1000")).unwrap();
    while ctr.pids().len() < 2 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let lines: Vec<String> = ctr
        .pids()
        .iter()
        .map(|p| format!("pid {p}"))
        .chain(ctr.dirs.iter().map(|d| format!("dir {}", d.path.display())))
        .collect();
    std::fs::write(dir.join("ready.tmp"), lines.join("\n")).unwrap();
    std::fs::rename(dir.join("ready.tmp"), dir.join("ready")).unwrap();
    // The test kills this process meanwhile (and the death signal its container).
    let _ = sleep.wait();
}

/// SIGKILL the session: the death signal ends the container's own processes; a process
/// that got into the container some other way is killed by `recover`, which removes the
/// cgroups.
#[test]
#[ignore = "needs root: cgroups, namespaces"]
fn recover_kills_what_a_killed_session_left_in_its_container() {
    let _hang = iolab_testkit::timeout(120);
    require_root();
    let s = Scratch::new("ctr-kill");
    let (mut child, text) = start_child_half("container_child", CHILD_ENV, &s.dir);
    let pids: Vec<u32> = text
        .lines()
        .filter_map(|l| l.strip_prefix("pid ")?.parse().ok())
        .collect();
    let paths: Vec<PathBuf> = text
        .lines()
        .filter_map(|l| l.strip_prefix("dir ").map(PathBuf::from))
        .collect();
    assert_eq!(pids.len(), 2, "the middle process and PID 1: {text}");
    assert!(paths.len() >= 4, "{text}");
    // A process that joined the container's cgroups without its death signal.
    let mut stray = Reap(Command::new("sleep").arg("1000").spawn().unwrap());
    let stray = &mut stray.0;
    for p in &paths {
        std::fs::write(p.join("cgroup.procs"), stray.id().to_string()).unwrap();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let t0 = Instant::now();
    while pids.iter().any(|p| proc_exists(*p)) {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the death signal did not end {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        paths.iter().all(|p| p.is_dir()),
        "a killed session leaves its cgroups"
    );
    assert!(
        stray.try_wait().unwrap().is_none(),
        "the stray process still runs"
    );

    let report = recover_path(&s.journal()).unwrap();
    assert!(report.failures().next().is_none(), "{report:?}");
    let undone = report
        .actions
        .iter()
        .filter(|a| matches!(a.entry, iolab_sut::Entry::Container { .. }))
        .count();
    assert_eq!(undone, paths.len(), "{report:?}");
    let t0 = Instant::now();
    let st = loop {
        if let Some(st) = stray.try_wait().unwrap() {
            break st;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "recover left the stray process running"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(
        st.signal(),
        Some(libc::SIGKILL),
        "recover killed the stray: {st:?}"
    );
    assert!(!proc_exists(stray.id()));
    for p in &paths {
        assert!(!p.exists(), "{} left", p.display());
    }
    std::fs::remove_file(s.dir.join("ready")).unwrap();
    s.assert_clean();
}
