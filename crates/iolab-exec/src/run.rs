//! One run of another tool: its inputs written to a scratch directory outside the target,
//! its setup commands, its server (on loopback or in a network namespace pair), the timed
//! main command under supervision (timeout, Ctrl-C, its own process group), its cleanup,
//! and what it left read back, parsed and kept with the run.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use iolab_kind::record::{metric, per_second};
use iolab_kind::{Intent, RunCtx, RunFailure, SutControl, Workload};
use iolab_metrics::MetricDef;
use iolab_store::Metric;
use iolab_supervise::{End, Job, OnStop, Output, Reason, Watch};
use iolab_tools::{Adapter, Command, Invocation, Network, Parsed, Placeholders, Raw, ToolRun};
use serde_json::{json, Map, Value};

use crate::netns::NamespacePair;
use crate::stored;

/// A validated `exec = { … }`.
pub struct ExecWorkload {
    pub(crate) adapter: &'static dyn Adapter,
    pub(crate) run: Box<dyn ToolRun>,
    /// As given (`fio`, or the user's `program`).
    program: String,
    /// Where it was found on this machine, when it was looked for.
    found: Option<PathBuf>,
    env: Vec<(String, String)>,
    time: Option<Duration>,
    timeout: Duration,
    metrics: Vec<MetricDef>,
    version: OnceLock<Option<String>>,
}

impl fmt::Debug for ExecWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecWorkload")
            .field("tool", &self.adapter.name())
            .field("program", &self.program)
            .field("run", &self.run)
            .finish()
    }
}

impl ExecWorkload {
    pub(crate) fn new(
        adapter: &'static dyn Adapter,
        run: Box<dyn ToolRun>,
        program: String,
        found: Option<PathBuf>,
        env: Vec<(String, String)>,
        time: Option<Duration>,
        timeout: Duration,
    ) -> ExecWorkload {
        let metrics = run.metrics().into_owned();
        ExecWorkload {
            adapter,
            run,
            program,
            found,
            env,
            time,
            timeout,
            metrics,
            version: OnceLock::new(),
        }
    }

    /// The tool's version, asked once (`None`: it has no version option, or said nothing).
    pub fn version(&self) -> Option<String> {
        self.version
            .get_or_init(|| {
                let args = self.adapter.version_args();
                if args.is_empty() {
                    return None;
                }
                let program = self.found.as_ref()?;
                let out = std::process::Command::new(program)
                    .args(args)
                    .stdin(Stdio::null())
                    .output()
                    .ok()?;
                let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
                text.push_str(&String::from_utf8_lossy(&out.stderr));
                self.adapter.version(&text)
            })
            .clone()
    }

    /// The tool's commands for a run, `program` put in place of the adapter's.
    fn invocation(&self, at: &Placeholders) -> Invocation {
        let mut inv = self.run.invocation(at);
        let default = self.adapter.program();
        let mut fix = |c: &mut Command| {
            if c.argv.first().is_some_and(|p| p == default) {
                c.argv[0] = self
                    .found
                    .as_ref()
                    .map_or(self.program.clone(), |p| p.display().to_string());
            }
        };
        inv.setup.iter_mut().for_each(&mut fix);
        inv.cleanup.iter_mut().for_each(&mut fix);
        fix(&mut inv.main);
        if let Some(s) = inv.server.as_mut() {
            fix(&mut s.command);
        }
        inv
    }

    /// The metrics its runs record besides the common ones.
    pub fn metrics_defs(&self) -> &[MetricDef] {
        &self.metrics
    }

    /// Reads a run's output with this workload's parser.
    pub fn parse(&self, raw: &Raw) -> Result<Parsed, iolab_tools::Invalid> {
        self.run.parse(raw)
    }
}

/// The common metrics a tool may give ([`iolab_tools::Parsed::values`]); the exec kind
/// measures the others itself or leaves them not measured.
const TOOL_COMMON: &[&str] = &[
    "ops_per_s",
    "mib_per_s",
    "ops",
    "bytes",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p999_ns",
    "lat_max_ns",
];

/// The metrics of one parsed run: the tool's own as declared, the common ones it gives,
/// NaN (not measured) for those it does not, and the process tree's time and CPU.
pub fn record_metrics(
    own: &[MetricDef],
    parsed: &Parsed,
    wall: Duration,
    usage: Option<&iolab_supervise::Usage>,
) -> Vec<Metric> {
    let mut out = Vec::new();
    let common = iolab_metrics::COMMON;
    for name in TOOL_COMMON {
        let v = parsed.get(name).unwrap_or(f64::NAN);
        out.push(metric(common, name, v));
    }
    // A tool that gives its operations and bytes but no rates: rates over the main
    // command's wall time (its own timing window is what it claims; this is iolab's).
    let wall_ns = wall.as_nanos() as u64;
    for (rate, count, scale) in [("ops_per_s", "ops", 1.0), ("mib_per_s", "bytes", 1048576.0)] {
        let has_rate = parsed.get(rate).is_some();
        if let (false, Some(c)) = (has_rate, parsed.get(count)) {
            if let Some(m) = out.iter_mut().find(|m| m.name == rate) {
                m.value = per_second(c, wall_ns) / scale;
            }
        }
    }
    let (usr, sys, vol, invol) = match usage {
        Some(u) => (
            u.user.as_secs_f64(),
            u.system.as_secs_f64(),
            u.voluntary_switches as f64,
            u.involuntary_switches as f64,
        ),
        None => (f64::NAN, f64::NAN, f64::NAN, f64::NAN),
    };
    for (name, v) in [
        ("cpu_usr_s", usr),
        ("cpu_sys_s", sys),
        ("elapsed_s", wall.as_secs_f64()),
        ("ctx_voluntary", vol),
        ("ctx_involuntary", invol),
    ] {
        out.push(metric(common, name, v));
    }
    for d in own {
        if let Some(v) = parsed.get(&d.name) {
            out.push(Metric::new(d.name.to_string(), v, d.unit.to_string()));
        }
    }
    out
}

/// What the tool claims it read and wrote, as rows of the run's operations table (`view`:
/// `claimed`): the checks set them against what its system calls and the device moved, and
/// read from them whether its write figure timed the flush and whether it asked for O_DIRECT.
pub fn claimed_rows(c: &iolab_tools::Claimed) -> Vec<iolab_store::FlowopStats> {
    let row = |name: &str, kind: &str, bytes: f64| iolab_store::FlowopStats {
        name: name.into(),
        kind: kind.into(),
        ops: 0,
        bytes: bytes.max(0.0) as u64,
        errors: 0,
        latency: iolab_store::LatencyStats {
            count: 0,
            mean_ns: f64::NAN,
            stdev_ns: f64::NAN,
            min_ns: 0,
            p50_ns: 0,
            p90_ns: 0,
            p99_ns: 0,
            p999_ns: 0,
            max_ns: 0,
        },
        histogram: Vec::new(),
        extra: json!({
            "view": "claimed",
            "read": kind == "read",
            "write": kind == "write",
            "flush_timed": if kind == "write" { c.flush_timed } else { None },
            "direct": c.direct,
            "seconds": c.seconds,
            "bytes_per_s": c.bytes_per_s,
        }),
    };
    let mut rows = Vec::new();
    if let Some(b) = c.read_bytes {
        rows.push(row("claimed read", "read", b));
    }
    if let Some(b) = c.write_bytes {
        rows.push(row("claimed write", "write", b));
    }
    rows
}

impl Workload for ExecWorkload {
    type Output = Parsed;

    fn kind(&self) -> &'static str {
        crate::kind::KEY
    }
    fn metrics(&self) -> &[MetricDef] {
        &self.metrics
    }
    fn intent(&self, base: Intent) -> Intent {
        base
    }
    fn stop_metric(&self) -> Option<&str> {
        self.run.stop_metric()
    }
    /// Unknown: the timed region is the tool's whole process, its start-up (fio lays out its
    /// files) and end included, not the `time` it is asked to measure for.
    fn planned_duration(&self) -> Option<Duration> {
        None
    }
    fn needs_root(&self) -> Option<String> {
        let inv = self.run.invocation(&Placeholders::default());
        (inv.network == Network::NamespacePair)
            .then(|| "creating the network namespaces the tool's server runs in".to_string())
    }
    fn describe(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("exec_tool".into(), json!(self.adapter.name()));
        m.insert("exec_tool_version".into(), json!(self.version()));
        m.insert(
            "exec_parser_version".into(),
            json!(self.adapter.parser_version()),
        );
        if let Some(p) = &self.found {
            m.insert("exec_program".into(), json!(p.display().to_string()));
        }
        m
    }

    fn run(&self, ctx: &mut RunCtx<'_>) -> Result<Parsed, RunFailure> {
        let mut out = Scratch::new(ctx.sut)?;
        let repetition = u64::from(ctx.record.run.repetition);
        let mut at = Placeholders {
            dir: ctx.dir.display().to_string(),
            out: out.path.display().to_string(),
            seed: ctx.seed,
            time_s: self.time.map(|t| t.as_secs().max(1)),
            server: None,
            run: repetition,
        };
        let probe = self.invocation(&at);
        let net = match (&probe.server, probe.network) {
            (Some(_), Network::NamespacePair) => Some(NamespacePair::create().map_err(|e| {
                RunFailure::failed(format!("creating the network namespaces: {e}"))
            })?),
            _ => None,
        };
        if probe.server.is_some() {
            at.server = Some(match &net {
                Some(n) => n.server_addr().to_string(),
                None => "127.0.0.1".to_string(),
            });
        }
        let inv = self.invocation(&at);
        let result = self.run_invocation(ctx, &inv, &at, &out, net.as_ref());
        // Whatever happened: nothing of the tool's stays behind.
        remove_leftovers(&inv.leftovers);
        out.remove(ctx.sut);
        if let Some(n) = net {
            if let Err(e) = n.remove() {
                return Err(RunFailure::failed(format!(
                    "removing the network namespaces: {e}"
                )));
            }
        }
        result
    }
}

impl ExecWorkload {
    fn run_invocation(
        &self,
        ctx: &mut RunCtx<'_>,
        inv: &Invocation,
        at: &Placeholders,
        out: &Scratch,
        net: Option<&NamespacePair>,
    ) -> Result<Parsed, RunFailure> {
        let tool = self.adapter.name();
        for (name, bytes) in &inv.inputs {
            let p = out.path.join(name);
            std::fs::write(&p, bytes)
                .map_err(|e| RunFailure::failed(format!("writing {}: {e}", p.display())))?;
        }
        ctx.hooks.run_files(vec![ctx.dir.to_path_buf()]);
        let env = self.environment(at);
        for (i, c) in inv.setup.iter().enumerate() {
            self.step(ctx, c, &env, out, &format!("setup{}", i + 1), None)?;
        }
        let mut server = match &inv.server {
            Some(s) => Some(ServerProcess::start(s, &env, ctx.dir, out, net)?),
            None => None,
        };
        let main = wrap(&inv.main, net.map(|n| n.client_ns()));
        let job = self.job(&main, &env, ctx.dir, out, "main");
        let watch = Watch::new(ctx.cancel.clone())
            .timeout(Some(self.timeout))
            .on_stop(OnStop::Terminate);
        let hooks = &mut *ctx.hooks;
        hooks.supervising();
        let outcome = iolab_supervise::run_recorded(
            &job,
            &watch,
            || {
                hooks.timed_start();
                Ok::<_, std::convert::Infallible>(hooks)
            },
            |h| h.timed_end(),
        );
        let server_output = server.take().map(ServerProcess::stop);
        let mut cleanup_error = None;
        for (i, c) in inv.cleanup.iter().enumerate() {
            if let Err(e) = self.step(ctx, c, &env, out, &format!("cleanup{}", i + 1), None) {
                cleanup_error.get_or_insert(e);
            }
        }
        let outcome = outcome.map_err(|e| {
            let hint = e.hint().map(str::to_string);
            RunFailure {
                bad_input: e.is_bad_input(),
                ..RunFailure::failed(format!("running {tool}: {e}"))
            }
            .hint(hint)
        })?;
        let (exit_code, signal, timed_out) = match outcome.end {
            End::Exited(s) => (s.code(), signal_of(s), false),
            End::Stopped { reason, status, .. } => {
                if reason == Reason::Cancelled {
                    return Err(RunFailure {
                        interrupted: true,
                        ..RunFailure::failed(format!("{tool} was interrupted"))
                    });
                }
                (
                    status.and_then(|s| s.code()),
                    status.and_then(signal_of),
                    true,
                )
            }
        };
        if outcome.interrupted() {
            return Err(RunFailure {
                interrupted: true,
                ..RunFailure::failed(format!("{tool} was interrupted"))
            });
        }
        let mut raw = Raw {
            exit_code,
            signal,
            timed_out,
            stdout: out.read("main.stdout"),
            stderr: out.read("main.stderr"),
            files: Vec::new(),
        };
        for name in &inv.outputs {
            let p = if Path::new(name).is_absolute() {
                PathBuf::from(name)
            } else {
                out.path.join(name)
            };
            if let Ok(b) = std::fs::read(&p) {
                raw.files.push((name.clone(), b));
            }
        }
        let meta = stored::Meta {
            tool: tool.to_string(),
            version: self.version(),
            parser_version: self.adapter.parser_version(),
            argv: main.argv.clone(),
            exit_code,
            signal,
            timed_out,
            wall_ns: outcome.wall.as_nanos() as u64,
            usage: outcome.usage,
        };
        ctx.record.outputs = stored::outputs(&meta, &raw, server_output);
        ctx.record.run.elapsed_ns = meta.wall_ns;
        let parsed = self
            .run
            .parse(&raw)
            .map_err(|inv| RunFailure::failed(format!("{tool}: {}", inv.reason)).hint(inv.hint))?;
        if let Some(e) = cleanup_error {
            return Err(e);
        }
        ctx.record.metrics.extend(record_metrics(
            &self.metrics,
            &parsed,
            outcome.wall,
            outcome.usage.as_ref(),
        ));
        ctx.record.flowops.extend(claimed_rows(&parsed.claimed));
        Ok(parsed)
    }

    /// iolab's placeholders in every command's environment, then the user's `env`.
    fn environment(&self, at: &Placeholders) -> Vec<(String, String)> {
        let mut env = vec![
            ("IOLAB_DIR".to_string(), at.dir.clone()),
            ("IOLAB_OUT".to_string(), at.out.clone()),
            ("IOLAB_SEED".to_string(), at.seed.to_string()),
            ("IOLAB_RUN".to_string(), at.run.to_string()),
        ];
        if let Some(t) = at.time_s {
            env.push(("IOLAB_TIME".into(), t.to_string()));
        }
        if let Some(s) = &at.server {
            env.push(("IOLAB_SERVER".into(), s.clone()));
        }
        env.extend(self.env.iter().cloned());
        env
    }

    fn job(
        &self,
        c: &Command,
        env: &[(String, String)],
        dir: &Path,
        out: &Scratch,
        name: &str,
    ) -> Job {
        let argv = c.full_argv();
        let mut job = Job::new(argv)
            .cwd(dir)
            .stdout(Output::File(out.path.join(format!("{name}.stdout"))))
            .stderr(Output::File(out.path.join(format!("{name}.stderr"))))
            .own_process_group();
        for (k, v) in env.iter().chain(&c.env) {
            job = job.env(k, v);
        }
        job
    }

    /// A setup or cleanup command: it must succeed.
    fn step(
        &self,
        ctx: &mut RunCtx<'_>,
        c: &Command,
        env: &[(String, String)],
        out: &Scratch,
        name: &str,
        ns: Option<&str>,
    ) -> Result<(), RunFailure> {
        let c = wrap(c, ns);
        let job = self.job(&c, env, ctx.dir, out, name);
        let watch = Watch::new(ctx.cancel.clone())
            .timeout(Some(self.timeout))
            .on_stop(OnStop::Terminate);
        let o = iolab_supervise::run(&job, &watch).map_err(|e| {
            RunFailure::failed(format!("{} ({name}): {e}", self.adapter.name()))
                .hint(e.hint().map(str::to_string))
        })?;
        if o.interrupted() {
            return Err(RunFailure {
                interrupted: true,
                ..RunFailure::failed("interrupted")
            });
        }
        match o.end {
            End::Exited(s) if s.success() => Ok(()),
            end => {
                let err =
                    String::from_utf8_lossy(&out.read(&format!("{name}.stderr"))).into_owned();
                let std =
                    String::from_utf8_lossy(&out.read(&format!("{name}.stdout"))).into_owned();
                let tail = iolab_tools::adapter::last_lines(&err, &std);
                let how = match end {
                    End::Exited(s) => match s.code() {
                        Some(c) => format!("exited with code {c}"),
                        None => "was killed by a signal".to_string(),
                    },
                    End::Stopped { .. } => "ran past its timeout".to_string(),
                };
                Err(RunFailure::failed(format!(
                    "{} ({name}: `{}`) {how}{tail}",
                    self.adapter.name(),
                    c.argv.join(" ")
                )))
            }
        }
    }
}

fn signal_of(s: std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    s.signal()
}

/// `c` run inside network namespace `ns` (`ip netns exec`), if any.
fn wrap(c: &Command, ns: Option<&str>) -> Command {
    match ns {
        None => c.clone(),
        Some(ns) => {
            let mut w = c.clone();
            let mut argv = vec![
                "ip".to_string(),
                "netns".into(),
                "exec".into(),
                ns.to_string(),
            ];
            if c.no_aslr {
                argv.extend([
                    "setarch".to_string(),
                    std::env::consts::ARCH.to_string(),
                    "-R".into(),
                ]);
                w.no_aslr = false;
            }
            argv.extend(c.argv.iter().cloned());
            w.argv = argv;
            w
        }
    }
}

/// Removes what a tool leaves behind: paths, or globs with `*` in their last component.
fn remove_leftovers(patterns: &[String]) {
    for p in patterns {
        let path = Path::new(p);
        let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str()))
        else {
            continue;
        };
        let Some((pre, post)) = name.split_once('*') else {
            let _ = std::fs::remove_file(path);
            continue;
        };
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in rd.flatten() {
            let n = e.file_name();
            let n = n.to_string_lossy();
            if n.len() >= pre.len() + post.len() && n.starts_with(pre) && n.ends_with(post) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// The run's scratch directory (`{out}`), outside the target. It is made through the system
/// under test's control, which journals it: a killed iolab's `iolab recover` removes it too.
/// Removed after the run, or when dropped (an early return).
pub(crate) struct Scratch {
    pub path: PathBuf,
    made: Option<iolab_sut::WorkDir>,
}

impl Scratch {
    fn new(sut: &mut dyn SutControl) -> Result<Scratch, RunFailure> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("iolab-exec-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        let made = sut.make_dir(&path).map_err(|e| {
            RunFailure::failed(format!(
                "creating the run's scratch directory {}: {e}",
                path.display()
            ))
        })?;
        Ok(Scratch { path, made })
    }

    fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path.join(name)).unwrap_or_default()
    }

    /// Removes it and marks it removed in the journal. A failure leaves the record for
    /// teardown and `iolab recover`.
    fn remove(&mut self, sut: &mut dyn SutControl) {
        if let Some(d) = self.made.take() {
            let _ = sut.remove_dir(d);
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A tool's server in the background for the length of a run.
struct ServerProcess {
    child: std::process::Child,
    out: PathBuf,
}

impl ServerProcess {
    fn start(
        s: &iolab_tools::Server,
        env: &[(String, String)],
        dir: &Path,
        out: &Scratch,
        net: Option<&NamespacePair>,
    ) -> Result<ServerProcess, RunFailure> {
        use std::os::unix::process::CommandExt;
        let c = wrap(&s.command, net.map(|n| n.server_ns()));
        let argv = c.full_argv();
        let file = |n: &str| {
            std::fs::File::create(out.path.join(n)).map_err(|e| {
                RunFailure::failed(format!("creating {}: {e}", out.path.join(n).display()))
            })
        };
        let mut cmd = std::process::Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(file("server.stdout")?)
            .stderr(file("server.stderr")?)
            .process_group(0);
        for (k, v) in env.iter().chain(&c.env) {
            cmd.env(k, v);
        }
        let child = cmd.spawn().map_err(|e| {
            RunFailure::failed(format!("starting the server `{}`: {e}", argv.join(" ")))
        })?;
        let mut p = ServerProcess {
            child,
            out: out.path.clone(),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(status)) = p.child.try_wait() {
                let err = String::from_utf8_lossy(
                    &std::fs::read(p.out.join("server.stderr")).unwrap_or_default(),
                )
                .into_owned();
                return Err(RunFailure::failed(format!(
                    "the server `{}` exited ({status}) before accepting connections{}",
                    argv.join(" "),
                    iolab_tools::adapter::last_lines(&err, "")
                )));
            }
            if listening(p.child.id(), s.port) {
                return Ok(p);
            }
            if Instant::now() > deadline {
                p.kill();
                return Err(RunFailure::failed(format!(
                    "the server `{}` did not accept connections on port {} within 10 s",
                    argv.join(" "),
                    s.port
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill(&mut self) {
        let pgid = self.child.id() as libc::pid_t;
        // SAFETY: signalling the process group this server leads (it was made its leader).
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: as above.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = self.child.wait();
    }

    /// Ends it and gives back what it printed.
    fn stop(mut self) -> (Vec<u8>, Vec<u8>) {
        self.kill();
        (
            std::fs::read(self.out.join("server.stdout")).unwrap_or_default(),
            std::fs::read(self.out.join("server.stderr")).unwrap_or_default(),
        )
    }
}

/// Whether process `pid` (in its network namespace) has a TCP socket listening on `port`:
/// read from its `/proc/PID/net/tcp{,6}`, so that nothing connects to a server that would
/// take the probe for its one client.
fn listening(pid: u32, port: u16) -> bool {
    let want = format!(":{port:04X} ");
    ["tcp", "tcp6"].iter().any(|f| {
        std::fs::read_to_string(format!("/proc/{pid}/net/{f}")).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let mut cols = l.split_whitespace();
                let local = cols.nth(1).unwrap_or("");
                let state = cols.nth(1).unwrap_or("");
                state == "0A" && format!("{local} ").ends_with(&want)
            })
        })
    })
}
