#!/usr/bin/env bash
# Soak: a mixed experiment (micro, WML, SQLite, replay, fio under the exec harness, a block-
# traced micro test under a page-cache cap), each stage on a tmpfs and on an ext4 loop image
# that iolab makes, run again and again for a given time while iolab is killed with SIGKILL at
# seeded random moments, recovered (`iolab recover`) and resumed (`iolab run --resume`).
# It then checks that nothing leaked (iolab's fds and RSS, mounts, loop devices, cgroups,
# tracefs instances, processes, temp files) and that every run iolab reported finished is in
# the results database, and no other (bench/README.md, "soak.sh").
#
#   sudo bench/soak.sh                      # one hour
#   sudo bench/soak.sh --minutes 3          # a quick check
#   sudo bench/soak.sh --minutes 60 --out /var/tmp/soak-report --seed 7
#
# Exit status: 0 when every invariant held, 1 when one failed (the report says which),
# 2 on bad usage or when it cannot run (not root, no iolab binary).
set -euo pipefail

BENCH_NAME=soak.sh
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/bench/lib.sh"

usage() {
    cat >&2 <<EOF
usage: $0 [--minutes M] [--iolab PATH] [--out DIR] [--seed N] [--kill-every MIN-MAX] [--keep]
  --minutes M         how long to soak (default 60)
  --iolab PATH        the iolab binary (default target/release/iolab of this checkout)
  --out DIR           where report.txt, report.json and the logs go
                      (default /var/tmp/iolab-soak-report.<date>)
  --seed N            seeds the kill times and the experiments (default 1)
  --kill-every A-B    seconds between two kills, uniformly drawn (default 20-120)
  --keep              keep the scratch directory (the database, the experiment files)
EOF
    exit 2
}

minutes=60
IOLAB=""
BUILD=0
out=""
seed=1
kill_every=20-120
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --minutes) minutes=${2:?}; shift 2 ;;
        --iolab) IOLAB=${2:?}; shift 2 ;;
        --out) out=${2:?}; shift 2 ;;
        --seed) seed=${2:?}; shift 2 ;;
        --kill-every) kill_every=${2:?}; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) usage ;;
        *) echo "$BENCH_NAME: unknown option $1" >&2; usage ;;
    esac
done
[[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "$BENCH_NAME: --minutes wants a number" >&2; exit 2; }
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "$BENCH_NAME: --seed wants a whole number" >&2; exit 2; }
[[ "$kill_every" =~ ^[0-9]+-[0-9]+$ ]] || { echo "$BENCH_NAME: --kill-every wants A-B (seconds)" >&2; exit 2; }
[ "$IS_ROOT" = 1 ] || { echo "$BENCH_NAME: needs root (loop devices, mounts, cgroups, tracefs)" >&2; exit 2; }
( resolve_iolab ) || exit 2
resolve_iolab
IOLAB=$(realpath "$IOLAB")
need python3 python3
need findmnt util-linux
need losetup mount
[ -n "$out" ] || out=/var/tmp/iolab-soak-report.$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(realpath "$out")
scratch=$(mktemp -d /var/tmp/iolab-soak.XXXXXX)
fio=""
if command -v fio >/dev/null 2>&1; then fio=$(command -v fio); else note "no fio on this machine: the exec stage is left out"; fi

# The driver is Python: it must watch iolab's /proc entries while it runs, read its output as
# it comes, and be the subreaper of everything iolab starts (so that a process that outlives
# a SIGKILLed iolab is found, not lost to init). It cleans up after itself on every exit.
status=0
python3 - "$IOLAB" "$scratch" "$out" "$minutes" "$seed" "$kill_every" "$REPO" "$fio" <<'PY' || status=$?
import ctypes, json, os, random, re, signal, sqlite3, subprocess, sys, time

iolab, scratch, out, minutes, seed, kill_every, repo, fio = sys.argv[1:9]
minutes, seed = float(minutes), int(seed)
kill_lo, kill_hi = (float(x) for x in kill_every.split("-"))
rng = random.Random(seed)
state = os.path.join(scratch, "state")
tmp = os.path.join(scratch, "tmp")
db = os.path.join(scratch, "results.db")
logs = os.path.join(out, "logs")
for d in (state, tmp, logs):
    os.makedirs(d, exist_ok=True)
env = dict(os.environ, IOLAB_DB=db, IOLAB_STATE_DIR=state, TMPDIR=tmp)
env.pop("IOLAB_COLOR", None)

# Orphans of a killed iolab (a tool it ran, a worker) are re-parented to us, not to init.
PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

def log(msg):
    print(f"soak: {time.strftime('%H:%M:%S')} {msg}", flush=True)

# ---------------------------------------------------------------- the experiment files
def write_inputs():
    """The inputs every experiment file shares: a scaled-down varmail, a fio job, replay lists."""
    src = open(os.path.join(repo, "workloads", "varmail.f")).read()
    open(os.path.join(scratch, "varmail.f"), "w").write(src)
    open(os.path.join(scratch, "soak.fio"), "w").write(
        "[global]\nioengine=psync\nsize=8m\nfilename=fio.dat\n[randrw]\nrw=randrw\nbs=4k\nfsync=16\n")
    os.makedirs(os.path.join(scratch, "replay"), exist_ok=True)
    open(os.path.join(scratch, "replay", "install.list"), "w").write(
        "app, 0, m\napp/a.bin, 200000, c\napp/b.bin, 30000, c\napp/c.bin, 4096, c\n")
    open(os.path.join(scratch, "replay", "days.list"), "w").write(
        "[day 1]\napp/a.bin, 200000, s\ndata/x, 65536, cf\n"
        "[day 2]\ndata/x, 65536, s\napp/b.bin, 4096, r, 8192\ndata/x, 65536, d\n")

TARGETS = """t = [ { name = "tmpfs", target = { kind = "tmpfs", size = "96M" }, fs = { kind = "tmpfs" }, between = "drop_caches" },
      { name = "ext4", target = { kind = "loop_image", size = "64M" }, fs = { kind = "ext4" }, between = "remount" } ]"""

def stage(first, name, workload, reps=3, factors=TARGETS, sut=None, extra=""):
    p = "" if first else "then."
    sut = sut or 'target = "${t.target}"\nfs = "${t.fs}"'
    head = f'name = "{name}"\n' if first else f'\n[[then]]\nname = "{name}"\n'
    return (f"{head}[{p}factors]\n{factors}\n[{p}sut]\n{sut}\n[{p}workload]\n{workload}\n"
            f"[{p}repetitions]\nmin = {reps}\nmax = {reps}\n{extra}")

def experiment(cycle):
    s = seed * 1000 + cycle
    parts = [
        stage(True, f"soak {cycle}: micro",
              'micro = { access = "randwrite", sync = "fdatasync", bs = "4k", size = "2m" }')
        .replace('name = "soak', f'seed = {s}\nname = "soak', 1),
        stage(False, f"soak {cycle}: wml varmail",
              'wml = "varmail.f"\ntime = "2s"\nset = { nfiles = 50, nthreads = 2 }'),
        stage(False, f"soak {cycle}: sqlite",
              'sqlite = { mode = "insert", transactions = 300, time = "2s", journal = "wal", synchronous = "normal" }',
              reps=2),
        stage(False, f"soak {cycle}: replay",
              'replay = { install = "replay/install.list", days = "replay/days.list", between_days = "${t.between}" }',
              reps=2, extra='metric = "day_s"\n'),
    ]
    if fio:
        parts.append(stage(False, f"soak {cycle}: fio",
                           'exec = { tool = "fio", job = "soak.fio", time = "2s" }', reps=2))
    # A page-cache cap (a cgroup) and a saved block trace (a tracefs instance): the other
    # kinds of state iolab creates and must remove.
    parts.append(stage(False, f"soak {cycle}: micro, capped and traced",
                       'micro = { access = "randread", bs = "4k", size = "8m" }',
                       factors='cap = ["16M", "32M"]',
                       sut='target = { kind = "loop_image", size = "64M" }\nfs = { kind = "ext4" }\ncache_limit = "${cap}"',
                       reps=2, extra="[then.procedure]\nsave_block_trace = true\n"))
    path = os.path.join(scratch, f"soak-{cycle}.toml")
    open(path, "w").write("\n".join(parts))
    return path

# ---------------------------------------------------------------- what the machine has
def ours(name, pids):
    """Whether a name iolab made (`iolab-PID-…`, `iolab-ctr-PID-…`, `iolab-exec-PID-N`) is one
    of our iolabs': it starts with `iolab-` and one of its `-`/`.` parts is their PID."""
    return name.startswith("iolab-") and any(
        p.isdigit() and int(p) in pids for p in re.split(r"[-.]", name))

def sh(*argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    return r.stdout

def machine(pids):
    """Everything iolab may leave behind, ours only (other people use this machine too)."""
    mounts = [l for l in sh("findmnt", "-rn", "-o", "TARGET,SOURCE,FSTYPE").splitlines()
              if scratch in l]
    loops = [l for l in sh("losetup", "-a").splitlines() if scratch in l]
    cgroups = []
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        for d in list(dirs):
            if "iolab" in d and ours(d, pids):
                cgroups.append(os.path.join(root, d))
        if root.count("/") > 8:
            dirs[:] = []
    inst = "/sys/kernel/tracing/instances"
    tracefs = [n for n in (os.listdir(inst) if os.path.isdir(inst) else []) if ours(n, pids)]
    tmpfiles = [os.path.join(tmp, n) for n in os.listdir(tmp)]
    tmpfiles += [os.path.join("/tmp", n) for n in os.listdir("/tmp") if ours(n, pids)]
    tmpfiles += [os.path.join("/dev/shm", n) for n in os.listdir("/dev/shm") if ours(n, pids)]
    for sub in ("mnt", "images"):
        d = os.path.join(state, sub)
        if os.path.isdir(d):
            tmpfiles += [os.path.join(d, n) for n in os.listdir(d)]
    # The journal (JSON lines): what an iolab changed and has not undone yet.
    journal = os.path.join(state, "journal.json")
    pending = []
    if os.path.exists(journal):
        entries = []
        for line in open(journal, errors="replace"):
            try:
                entries.append(json.loads(line))
            except ValueError:
                entries.append({"op": "unreadable", "line": line.strip()})
        undone = {e.get("of") for e in entries if e.get("op") == "undone"}
        pending = [e for e in entries if e.get("op") != "undone" and e.get("seq") not in undone]
    return {"mounts": mounts, "loop_devices": loops, "cgroups": cgroups,
            "tracefs_instances": tracefs, "processes": orphans(), "tmp_files": sorted(tmpfiles),
            "journal_entries": len(pending)}

def children_of(ppid):
    kids = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            stat = open(f"/proc/{p}/stat").read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == ppid:
            try:
                cmd = open(f"/proc/{p}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                cmd = "?"
            kids.append((int(p), fields[0], cmd))
    return kids

def orphans():
    """Processes an iolab started that outlived it: re-parented to us (the subreaper). Zombies
    are reaped here; the live ones are the leftovers."""
    left = []
    for pid, st, cmd in children_of(os.getpid()):
        if st == "Z":
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
            continue
        left.append(f"{pid} {cmd}")
    return left

def leftovers(m):
    return {k: v for k, v in m.items() if k != "journal_entries" and v} | (
        {"journal_entries": m["journal_entries"]} if m["journal_entries"] else {})

# ---------------------------------------------------------------- iolab's own numbers
def proc_sample(pid):
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        st = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status") if ":" in l)
        rss = int(st["VmRSS"].split()[0])
        hwm = int(st["VmHWM"].split()[0])
        return fds, rss, hwm
    except (OSError, KeyError, ValueError):
        return None

RUN_LINE = re.compile(r"^config \d+/\d+ (.*) · run (\d+) of ≤\d+: (?:(FAILED)|(interrupted)|)")
EXP_LINE = re.compile(r"^(?:resuming )?experiment (\d+)[ \"]")
STAGE_LINE = re.compile(r"^stage (\d+) of \d+:")

def stage_now(path):
    """The stage the log says is running (0 before the first stage line)."""
    k = 0
    for line in open(path, errors="replace"):
        m = STAGE_LINE.match(line)
        if m:
            k = int(m.group(1))
    return k

def reported(path):
    """(experiment id, configuration, repetition, status) of every run the log says ended."""
    runs, exp = [], None
    for line in open(path, errors="replace"):
        m = EXP_LINE.match(line)
        if m:
            exp = int(m.group(1))
            continue
        m = RUN_LINE.match(line)
        if m:
            status = "failed" if m.group(3) else "interrupted" if m.group(4) else "ok"
            runs.append((exp, m.group(1), int(m.group(2)) - 1, status))
    return runs

def stored():
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in con.execute(
            "SELECT c.experiment_id, c.label, r.repetition, r.status FROM runs r "
            "JOIN configs c ON c.id = r.config_id ORDER BY r.id")]
    finally:
        con.close()

def listed():
    r = subprocess.run([iolab, "list", "--json"], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    d = json.loads(r.stdout)
    return d["experiments"], None

# ---------------------------------------------------------------- the soak
write_inputs()
start = time.time()
deadline = start + minutes * 60
problems = []
samples = []          # (t, invocation, runs done, fds, rss kB, hwm kB, stage), after its first run
invocations = []      # per iolab run: argv, pid, exit, killed, log
recovers = []         # per recover: exit, leftovers after it
pids = set()
current = None        # the experiment file being run, until it completes
cycle = 0
experiments_done = 0
base = machine(pids)
log(f"scratch {scratch}, report in {out}, {minutes:g} min, seed {seed}")
if leftovers(base):
    log(f"the scratch area is not clean at the start: {leftovers(base)}")

def recover(tag):
    r = subprocess.run([iolab, "recover"], env=env, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    open(os.path.join(logs, f"recover-{tag}.log"), "w").write(r.stdout + r.stderr)
    time.sleep(0.2)   # let the re-parented zombies arrive
    m = machine(pids)
    left = leftovers(m)
    recovers.append({"after": tag, "exit": r.returncode, "leftovers": left})
    if r.returncode != 0:
        problems.append(f"iolab recover after {tag} exited {r.returncode}: "
                        f"{(r.stdout + r.stderr).strip().splitlines()[-1:]}")
    if left:
        told(f"left after recover ({tag})", left)
        # Clean what the next round would trip over; it stays counted as a failure.
        for p in m["processes"]:
            try:
                os.kill(int(p.split()[0]), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        subprocess.run([iolab, "recover"], env=env, capture_output=True, stdin=subprocess.DEVNULL)
        orphans()
    return m

reported_leftovers = set()
def told(what, left):
    """A problem for each leftover the first time it is seen (it would be seen again at every
    later look); leftover temp files of a dead iolab are removed once told."""
    new = {k: [x for x in (v if isinstance(v, list) else [v]) if (k, str(x)) not in reported_leftovers]
           for k, v in left.items()}
    new = {k: v for k, v in new.items() if v}
    for k, v in new.items():
        reported_leftovers.update((k, str(x)) for x in v)
    if new:
        problems.append(f"{what}: {new}")
    for f in left.get("tmp_files", []):
        if f.startswith(tmp + "/") or f.startswith("/tmp/") or f.startswith("/dev/shm/"):
            subprocess.run(["rm", "-rf", "--one-file-system", f])

stop = False
def on_signal(sig, _frame):
    global stop
    stop = True
signal.signal(signal.SIGINT, on_signal)
signal.signal(signal.SIGTERM, on_signal)

n = 0
proc = None
try:
    while time.time() < deadline and not stop:
        if current is None:
            cycle += 1
            current = experiment(cycle)
            argv = [iolab, "run", current]
        else:
            argv = [iolab, "run", current, "--resume"]
        n += 1
        logpath = os.path.join(logs, f"run-{n:04d}.log")
        with open(logpath, "w") as lf:
            proc = subprocess.Popen(argv, env=env, cwd=scratch, stdin=subprocess.DEVNULL,
                                    stdout=lf, stderr=subprocess.STDOUT)
        pids.add(proc.pid)
        kill_at = time.time() + rng.uniform(kill_lo, kill_hi)
        inv = {"n": n, "argv": argv[1:], "pid": proc.pid, "started": round(time.time() - start, 1),
               "killed": False, "exit": None, "log": os.path.relpath(logpath, out)}
        invocations.append(inv)
        seen = 0
        while proc.poll() is None:
            now = time.time()
            if now >= kill_at or now >= deadline or stop:
                proc.kill()          # SIGKILL, to this PID only
                proc.wait()
                inv["killed"] = True
                break
            # Sampled once the invocation has finished a run: start-up (before the database
            # and the journal are open) is not a comparable point.
            done = len(reported(logpath))
            if done:
                s = proc_sample(proc.pid)
                if s:
                    samples.append((round(now - start, 2), n, done, *s, stage_now(logpath)))
            seen = done
            time.sleep(0.25)
        inv["exit"] = proc.returncode
        inv["runs_reported"] = len(reported(logpath))
        proc = None
        if inv["killed"]:
            log(f"run {n}: killed after {inv['runs_reported']} runs; recover")
            recover(f"kill-{n}")
        else:
            log(f"run {n}: exited {inv['exit']} after {inv['runs_reported']} runs")
            text = open(logpath, errors="replace").read()
            # A kill after the last run but before iolab exited: the resume finds it done.
            finished_before = inv["exit"] == 2 and "nothing to resume" in text and "--resume" in argv
            if inv["exit"] != 0 and not finished_before:
                problems.append(f"iolab run {' '.join(argv[2:])} (log {inv['log']}) exited {inv['exit']}")
            if inv["exit"] == 0 or finished_before:
                experiments_done += 1
                current = None
            else:
                current = None   # refused or failed (told above): a new file, not a loop
            m = machine(pids)
            if leftovers(m):
                told(f"left after a clean exit (run {n})", leftovers(m))
finally:
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()
        recover("interrupt")

final = machine(pids)
elapsed = time.time() - start

# ---------------------------------------------------------------- runs reported vs stored
rep = []
for inv in invocations:
    rep += [r + (inv["n"],) for r in reported(os.path.join(out, inv["log"]))]
rep_finished = [r for r in rep if r[3] in ("ok", "failed")]
try:
    st = stored()
except sqlite3.Error as e:
    st = []
    problems.append(f"the results database does not open: {e}")
stored_set = {}
for r in st:
    stored_set[r] = stored_set.get(r, 0) + 1
missing = [r for r in rep_finished if r[:4] not in stored_set]
rep_set = {r[:4] for r in rep_finished}
# A run stored but not reported: iolab was killed between the commit and its line. Only the
# run in flight at a kill can be that, so at most one per kill.
unreported = [r for r in st if r[:4] not in rep_set and r[3] != "interrupted"]
dup = [r for r, c in stored_set.items() if c > 1 and r[3] == "ok"]
kills = sum(1 for i in invocations if i["killed"])
if missing:
    problems.append(f"{len(missing)} runs reported finished are not in the database: {missing[:5]}")
if len(unreported) > kills:
    problems.append(f"{len(unreported)} stored runs were never reported (more than the {kills} kills "
                    f"could explain): {unreported[:5]}")
if dup:
    problems.append(f"a repetition stored ok twice: {dup[:5]}")
exps, err = listed()
listed_runs = None
if exps is None:
    problems.append(f"iolab list fails: {err}")
else:
    listed_runs = sum(e["runs"]["ok"] + e["runs"]["failed"] for e in exps)
    db_runs = sum(1 for r in st if r[3] in ("ok", "failed"))
    if listed_runs != db_runs:
        problems.append(f"iolab list counts {listed_runs} runs, the database holds {db_runs}")
failed_runs = [r for r in st if r[3] == "failed"]
if failed_runs:
    problems.append(f"{len(failed_runs)} runs failed: {failed_runs[:3]} (see the logs)")

# ---------------------------------------------------------------- fds and RSS
def quarter(which):
    if not samples:
        return []
    t0, t1 = samples[0][0], samples[-1][0]
    span = max(t1 - t0, 1e-9)
    lo, hi = (0, 0.25) if which == "first" else (0.75, 1.0001)
    return [s for s in samples if lo <= (s[0] - t0) / span <= hi]

def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else None

first, last = quarter("first"), quarter("last")
# The floor of iolab's fds (its database, journal lock, stdio, between runs) at a comparable
# point: the fewest it held in each quarter, sampled only after its first run of an
# invocation. A leak of one fd per run or per invocation raises it.
fds_before = min((s[3] for s in first), default=None)
fds_after = min((s[3] for s in last), default=None)
rss_first = median([s[4] for s in first])
rss_last = median([s[4] for s in last])
hwm_first = max((s[5] for s in first), default=None)
hwm_last = max((s[5] for s in last), default=None)
# The floor moves by one or two with the moment the samples fall on (6 or 7 between runs on
# the development VM); a leak of one fd per run adds tens in an invocation, hundreds in an hour.
FD_SLACK = 2
if fds_before is not None and fds_after > fds_before + FD_SLACK:
    problems.append(f"iolab's fds grew: {fds_before} in the first quarter, {fds_after} in the last")
# Flat: the last quarter's median RSS within 25% (and 8 MiB) of the first's. The stages use
# different amounts of memory, and each quarter mixes them, so some spread is not a leak.
if rss_first and rss_last > rss_first * 1.25 + 8192:
    problems.append(f"iolab's RSS grew: median {rss_first} kB in the first quarter, {rss_last} kB in the last")
# Within one invocation too: RSS at its last sample against its first, over the invocations
# that finished at least 10 runs (a leak per run grows with the runs).
growth = []
by_inv = {}
for s in samples:
    by_inv.setdefault(s[1], []).append(s)
for k, v in by_inv.items():
    if v[-1][2] - v[0][2] >= 10:
        growth.append((k, v[0][4], v[-1][4], v[-1][2] - v[0][2]))
# The fd floor within one stage of one invocation: its last quarter of samples against its
# first, over stages that finished at least 4 runs (a leak per run adds one or more per run).
# Stages, not whole invocations: fio's, SQLite's and the capped stage's runs hold more fds
# than a micro test's, so an invocation's late floor is higher than its early one anyway.
by_stage = {}
for s_ in samples:
    by_stage.setdefault((s_[1], s_[6]), []).append(s_)
for (k, st), v in by_stage.items():
    if v[-1][2] - v[0][2] >= 4:
        q = max(len(v) // 4, 1)
        a, b = min(x[3] for x in v[:q]), min(x[3] for x in v[-q:])
        if b > a + FD_SLACK:
            problems.append(f"iolab's fds grew within stage {st} of invocation {k}: {a} early, "
                            f"{b} late over {v[-1][2] - v[0][2]} runs")
if leftovers(final):
    told("left at the end", leftovers(final))
if not any(i["runs_reported"] for i in invocations):
    problems.append("no run finished at all")

report = {
    "schema": "iolab.soak/1",
    "iolab": iolab,
    "seed": seed,
    "minutes_asked": minutes,
    "duration_s": round(elapsed, 1),
    "invocations": len(invocations),
    "experiment_files": cycle,
    "experiment_files_completed": experiments_done,
    "runs_reported": len(rep_finished),
    "runs_stored": sum(1 for r in st if r[3] in ("ok", "failed")),
    "runs_listed": listed_runs,
    "runs_failed": len(failed_runs),
    "runs_stored_not_reported": len(unreported),
    "runs_reported_not_stored": len(missing),
    "kills": kills,
    "recovers": len(recovers),
    "recovers_failed": sum(1 for r in recovers if r["exit"] != 0),
    "fds_before": fds_before,
    "fds_after": fds_after,
    "rss_kb_first_quarter": rss_first,
    "rss_kb_last_quarter": rss_last,
    "hwm_kb_first_quarter": hwm_first,
    "hwm_kb_last_quarter": hwm_last,
    "rss_growth_within_invocations": [
        {"invocation": k, "rss_kb_first": a, "rss_kb_last": b, "runs": r} for k, a, b, r in growth],
    "samples": len(samples),
    "leftovers_at_start": leftovers(base),
    "leftovers_after_recovers": [r for r in recovers if r["leftovers"]],
    "leftovers_at_end": leftovers(final),
    "problems": problems,
    "ok": not problems,
}
json.dump(report, open(os.path.join(out, "report.json"), "w"), indent=2)
json.dump({"samples": samples, "invocations": invocations, "recovers": recovers},
          open(os.path.join(out, "details.json"), "w"), indent=1)

def fmt(v):
    return "–" if v is None else str(v)
text = f"""iolab soak: {report['duration_s'] / 60:.1f} min (asked {minutes:g}), seed {seed}, {iolab}
  iolab invocations        {report['invocations']} ({report['experiment_files']} experiment files, {experiments_done} completed)
  runs reported finished   {report['runs_reported']}
  runs stored              {report['runs_stored']} (iolab list: {fmt(listed_runs)}; stored, not reported: {len(unreported)}; reported, not stored: {len(missing)})
  runs failed              {len(failed_runs)}
  kills (SIGKILL)          {kills}
  recovers                 {len(recovers)} ({report['recovers_failed']} failed)
  iolab fds (floor)        {fmt(fds_before)} in the first quarter, {fmt(fds_after)} in the last
  iolab RSS (median)       {fmt(rss_first)} kB in the first quarter, {fmt(rss_last)} kB in the last (VmHWM {fmt(hwm_first)} / {fmt(hwm_last)} kB)
  leftovers after recovers {sum(1 for r in recovers if r['leftovers'])} of {len(recovers)}
  leftovers at the end     {leftovers(final) or 'none'}
"""
text += ("result: PASS\n" if not problems else
         "result: FAIL\n" + "".join(f"  - {p}\n" for p in problems))
open(os.path.join(out, "report.txt"), "w").write(text)
print(text, end="")
sys.exit(0 if not problems else 1)
PY

if [ "$keep" = 1 ]; then
    note "kept the scratch directory $scratch"
else
    # Only what this script created; `iolab recover` has run after every kill.
    IOLAB_STATE_DIR="$scratch/state" "$IOLAB" recover >/dev/null 2>&1 || true
    if findmnt -rn -o TARGET | grep -qF "$scratch"; then
        note "a mount under $scratch is left; not removing it"
    else
        rm -rf "$scratch"
    fi
fi
exit "$status"
