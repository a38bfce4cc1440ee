#!/usr/bin/env bash
# bench/vs-filebench.sh — `iolab run` vs filebench on the same WML workloads, interleaved.
#
# For fileserver, varmail ($nfiles = 10000) and webserver from the filebench corpus, runs
# filebench and iolab on the SAME rewritten .f file (only $dir, the run time and the variables
# listed below changed) on a tmpfs this script mounts, N pairs, alternating which tool goes
# first, with the fileset removed before every run. Prints per pair and per tool ops/s,
# CPU-seconds per op and peak memory, the medians, the mix of flowops, and PASS/FAIL against the
# targets (iolab ops/s >= filebench's, iolab peak memory <= filebench's).
# It is a measurement, not a test: it exits 0 whatever the ratios (and when filebench fails or is
# not installed), non-zero only when something breaks (iolab fails, set-up fails).
#
# Usage: bench/vs-filebench.sh [--pairs N] [--time S] [--workloads LIST] [--iolab PATH]
#                              [--no-build] [--corpus DIR] [--save FILE]
# See bench/README.md ("vs-filebench.sh") for how each number is measured.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)

PAIRS=3
RUNTIME=20
WORKLOADS="fileserver,varmail,webserver"
# filebench's own workload files (its workloads/ directory): --corpus, or the variable the
# tests read too.
CORPUS="${IOLAB_FILEBENCH_CORPUS:-}"
IOLAB=""
BUILD=1
SAVE=""
TMPFS_SIZE=8g
SAMPLE_MS=100

# Variables changed in the workload files besides $dir and the run time: WORKLOAD -> "var=value ...".
declare -A WL_SETS=([varmail]="nfiles=10000")

usage() {
    cat <<'EOF'
Usage: bench/vs-filebench.sh [options]

  --pairs N          interleaved filebench/iolab pairs per workload (default 3)
  --time S           measured run time of each run in seconds (default 20)
  --workloads LIST   comma-separated names of .f files in the corpus
                     (default fileserver,varmail,webserver; varmail gets $nfiles=10000)
  --corpus DIR       where filebench's .f files are (its workloads/ directory; default
                     $IOLAB_FILEBENCH_CORPUS)
  --iolab PATH       use this iolab binary (default: build target/release/iolab with cargo)
  --no-build         do not run cargo build; use target/release/iolab as it is
  --save FILE        also write every run's parsed numbers to FILE (JSON lines)
  -h, --help         this text

Needs root (it mounts a tmpfs), filebench on PATH (it is not built here: without it the script
says so and exits 0), GNU time (/usr/bin/time), python3 and setarch.
EOF
}

BENCH_NAME=vs-filebench
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

while [ $# -gt 0 ]; do
    case "$1" in
        --pairs) PAIRS=${2:?--pairs needs a value}; shift 2 ;;
        --pairs=*) PAIRS=${1#*=}; shift ;;
        --time) RUNTIME=${2:?--time needs a value}; shift 2 ;;
        --time=*) RUNTIME=${1#*=}; shift ;;
        --workloads) WORKLOADS=${2:?--workloads needs a value}; shift 2 ;;
        --workloads=*) WORKLOADS=${1#*=}; shift ;;
        --corpus) CORPUS=${2:?--corpus needs a value}; shift 2 ;;
        --corpus=*) CORPUS=${1#*=}; shift ;;
        --iolab) IOLAB=${2:?--iolab needs a value}; BUILD=0; shift 2 ;;
        --iolab=*) IOLAB=${1#*=}; BUILD=0; shift ;;
        --no-build) BUILD=0; shift ;;
        --save) SAVE=${2:?--save needs a value}; shift 2 ;;
        --save=*) SAVE=${1#*=}; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
RUNTIME=${RUNTIME%s}
[[ "$PAIRS" =~ ^[1-9][0-9]*$ ]] || die "--pairs must be a positive integer, got '$PAIRS'"
[[ "$RUNTIME" =~ ^[1-9][0-9]*$ ]] || die "--time must be a whole number of seconds, got '$RUNTIME'"

# ---------------------------------------------------------------------------------------------
# filebench is not built or installed by this script (its source stays out of the repository).
if ! command -v filebench >/dev/null 2>&1; then
    echo "vs-filebench: no 'filebench' binary on PATH: nothing to compare against, skipping."
    echo "  Build filebench 1.5 from its source outside this repository (libtoolize; aclocal;"
    echo "  autoheader; automake --add-missing; autoconf; ./configure; make; make install) and rerun."
    exit 0
fi
FILEBENCH=$(command -v filebench)
if [ "$(id -u)" != 0 ]; then
    echo "vs-filebench: needs root to mount its tmpfs; skipping."
    exit 0
fi

need python3 python3
need setarch util-linux
need ipcrm util-linux
[ -x /usr/bin/time ] && /usr/bin/time --version 2>&1 | grep -q GNU || apt_install time
/usr/bin/time --version 2>&1 | grep -q GNU || die "/usr/bin/time is not GNU time"

[ -n "$CORPUS" ] || die "where are filebench's workload files? give --corpus DIR (the workloads/ directory of a filebench checkout) or set IOLAB_FILEBENCH_CORPUS=DIR"
[ -d "$CORPUS" ] || die "no corpus directory at $CORPUS (--corpus or IOLAB_FILEBENCH_CORPUS)"
CORPUS=$(cd "$CORPUS" && pwd)
IFS=',' read -r -a WLS <<<"$WORKLOADS"
for w in "${WLS[@]}"; do
    [ -f "$CORPUS/$w.f" ] || die "no workload file $CORPUS/$w.f"
done

resolve_iolab

# ---------------------------------------------------------------------------------------------
# Work space and clean-up. Only what this script created is removed: its temp dir and the tmpfs
# it mounted (filebench's own leftovers of our runs are removed by the helper after each run).
WORK=$(mktemp -d /tmp/iolab-vs-filebench.XXXXXX)
MNT="$WORK/mnt"
MOUNTED=0
cleanup() {
    local rc=$?
    set +e
    if [ -n "${RUNNER_PID:-}" ] && kill -0 "$RUNNER_PID" 2>/dev/null; then
        kill -TERM "$RUNNER_PID" 2>/dev/null
        wait "$RUNNER_PID" 2>/dev/null
    fi
    if [ "$MOUNTED" = 1 ]; then
        local i
        for i in 1 2 3 4 5; do
            umount "$MNT" 2>/dev/null && { MOUNTED=0; break; }
            sleep 1
        done
        if [ "$MOUNTED" = 1 ]; then
            note "$MNT still busy; detaching it lazily (umount -l)"
            umount -l "$MNT" || note "could not unmount $MNT"
        fi
    fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$MNT"
mount -t tmpfs -o "size=$TMPFS_SIZE,mode=0755" iolab-vs-filebench "$MNT" || die "cannot mount a tmpfs on $MNT"
MOUNTED=1

RESULTS="$WORK/results.jsonl"
: >"$RESULTS"

# ---------------------------------------------------------------------------------------------
# The helper: rewrites a workload file, runs one tool under GNU time while sampling the memory
# and CPU of all its processes, parses the output into one JSON line, prints the tables.
HELPER="$WORK/helper.py"
cat >"$HELPER" <<'PY'
import glob, json, os, re, resource, signal, statistics, subprocess, sys, threading, time

HZ = os.sysconf("SC_CLK_TCK")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024

# ---------------------------------------------------------------- rewriting the workload file
def prepare(args):
    src, dst, mnt, runtime, *sets = args
    text = open(src).read().splitlines()
    want = dict(s.split("=", 1) for s in sets)
    want["dir"] = mnt
    if any(re.match(r"\s*set\s+\$runtime\s*=", l) for l in text):
        want["runtime"] = runtime
    done, out, runs = set(), [], 0
    for l in text:
        m = re.match(r"\s*set\s+\$(\w+)\s*=", l)
        if m and m.group(1) in want:
            out.append(f"set ${m.group(1)}={want[m.group(1)]}")
            done.add(m.group(1))
            continue
        if re.match(r"\s*run(\s+\S+)?\s*$", l):
            out.append(f"run {runtime}")
            runs += 1
            continue
        out.append(l)
    missing = set(want) - done
    if missing:
        raise SystemExit(f"{src}: no 'set $VAR=' line for {sorted(missing)}")
    if runs != 1:
        raise SystemExit(f"{src}: expected exactly one 'run' line, found {runs}")
    open(dst, "w").write("\n".join(out) + "\n")
    for a, b in zip(text, out):
        if a != b:
            print(f"     {a.strip():<40} -> {b}")

# ---------------------------------------------------------------- sampling processes
def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None

def tree(root):
    """All descendants of root (not root itself), through every thread's children list."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for t in tids:
            c = read(f"/proc/{pid}/task/{t}/children")
            if c:
                for x in c.split():
                    out.append(int(x))
                    todo.append(int(x))
    return out

def proc_cpu_ticks(pid):
    s = read(f"/proc/{pid}/stat")
    if not s:
        return None
    f = s[s.rfind(")") + 2:].split()
    return int(f[11]) + int(f[12])  # utime + stime of all the process's threads, in ticks

def proc_mem(pid):
    r = read(f"/proc/{pid}/smaps_rollup")
    if not r:
        return None
    kv = {}
    for line in r.splitlines()[1:]:
        p = line.split()
        if len(p) >= 2 and p[0].endswith(":"):
            kv[p[0][:-1]] = int(p[1])
    return kv

class Sampler(threading.Thread):
    """Samples the tool's processes every `period` s: the process tree every 5th sample (through
    every thread's children list), VmRSS & co. from /proc/PID/status (cheap counters) every
    sample, and /proc/PID/smaps_rollup (PSS, which needs a page-table walk) only when the summed
    RSS reaches a new maximum or once every 20 samples, to keep the sampler's own CPU small."""
    def __init__(self, root, period):
        super().__init__(daemon=True)
        self.root, self.period = root, period
        self.stop = threading.Event()
        self.pids = {}          # pid -> comm, every process of the tool seen
        self.cpu = {}           # pid -> last CPU ticks seen
        self.hwm = {}           # pid -> VmHWM kB
        self.peak_pss = None    # the PSS sample with the largest sum of Pss
        self.peak_rss = 0       # largest sum of VmRSS over the samples
        self.max_procs = 0
        self.samples = 0
        self.pss_samples = 0

    def snapshot_cpu(self):
        tot = 0
        for pid in tree(self.root):
            c = proc_cpu_ticks(pid)
            if c is not None:
                tot += c
        return tot

    def sample_pss(self, pids):
        s = {"Rss": 0, "Pss": 0, "Pss_Anon": 0, "Pss_File": 0, "Pss_Shmem": 0}
        for pid in pids:
            m = proc_mem(pid)
            if m:
                for k in s:
                    s[k] += m.get(k, 0)
        self.pss_samples += 1
        if self.peak_pss is None or s["Pss"] > self.peak_pss["Pss"]:
            self.peak_pss = s

    def run(self):
        pids, n, last_pss_at = [], 0, -1
        while not self.stop.is_set():
            if n % 5 == 0:
                pids = tree(self.root)
                for pid in pids:
                    if pid not in self.pids:
                        self.pids[pid] = ((read(f"/proc/{pid}/comm") or "?").strip())
            n += 1
            rss, live = 0, []
            for pid in pids:
                st = read(f"/proc/{pid}/status")
                c = proc_cpu_ticks(pid)
                if c is not None:
                    self.cpu[pid] = c
                if not st:
                    continue
                kv = {}
                for line in st.splitlines():
                    if line.startswith(("VmRSS:", "VmHWM:")):
                        k, v = line.split()[:2]
                        kv[k[:-1]] = int(v)
                if "VmRSS" not in kv:
                    continue       # a zombie
                live.append(pid)
                rss += kv["VmRSS"]
                self.hwm[pid] = max(self.hwm.get(pid, 0), kv.get("VmHWM", 0))
            if live:
                self.samples += 1
                self.max_procs = max(self.max_procs, len(live))
                if rss > self.peak_rss or n - last_pss_at >= 20:
                    self.peak_rss = max(self.peak_rss, rss)
                    self.sample_pss(live)
                    last_pss_at = n
            self.stop.wait(self.period)

def cpu_jiffies():
    f = open("/proc/stat").readline().split()
    v = [int(x) for x in f[1:9]]
    busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
    return busy, busy + v[3] + v[4]

def sysv_shm():
    """shmid -> (cpid, nattch) from /proc/sysvipc/shm."""
    out = {}
    lines = (read("/proc/sysvipc/shm") or "").splitlines()
    if not lines:
        return out
    hdr = lines[0].split()
    for l in lines[1:]:
        d = dict(zip(hdr, l.split()))
        out[int(d["shmid"])] = (int(d["cpid"]), int(d["nattch"]))
    return out

# ---------------------------------------------------------------- parsing the tools' outputs
FB_SUMMARY = re.compile(r"IO Summary:\s+(\d+) ops ([\d.]+) ops/s ([\d.]+)/([\d.]+) rd/wr\s+"
                        r"([\d.]+)mb/s\s+([\d.]+)ms/op")
FB_FLOWOP = re.compile(r"^(\S+)\s+(\d+)ops\s+(\d+)ops/s\s+([\d.]+)mb/s\s+([\d.]+)ms/op")
FB_TS = re.compile(r"^\s*([\d.]+): (.*)$")

def parse_filebench(text):
    r = {"flowops": {}, "flowop_bpo": {}, "errors": []}
    m = FB_SUMMARY.search(text)
    if m:
        r["ops"] = int(m.group(1))
        r["ops_per_s"] = float(m.group(2))
        r["mb_per_s"] = float(m.group(5))
        r["elapsed_s"] = r["ops"] / r["ops_per_s"] if r["ops_per_s"] else 0.0
    ts = {}
    for line in text.splitlines():
        fm = FB_FLOWOP.match(line)
        if fm:
            r["flowops"][fm.group(1)] = int(fm.group(2))
            ops_s, mb_s = float(fm.group(3)), float(fm.group(4))
            # filebench prints MB/s (2^20 bytes) with one decimal: bytes/op is approximate
            r["flowop_bpo"][fm.group(1)] = mb_s * 1048576 / ops_s if ops_s else 0.0
            continue
        tm = FB_TS.match(line)
        if tm:
            t, msg = float(tm.group(1)), tm.group(2)
            if msg.startswith("Populating and pre-allocating"):
                ts["pop0"] = t
            elif msg.startswith("Population and pre-allocation of filesets completed"):
                ts["pop1"] = t
            elif msg.startswith("Run took"):
                r["run_took_s"] = int(re.search(r"\d+", msg).group(0))
        if re.search(r"error|fail|abort|stopped early|WARNING", line, re.I):
            r["errors"].append(line.strip())
    if "pop0" in ts and "pop1" in ts:
        r["populate_s"] = ts["pop1"] - ts["pop0"]
    r["stopped_early"] = "Run stopped early" in text
    return r

def parse_iolab(path):
    d = json.load(open(path))
    res = d["result"]
    cpu = res["cpu"]
    r = {"ops": res["io_summary"]["ops"], "ops_per_s": res["io_summary"]["ops_per_s"],
         "mb_per_s": res["io_summary"].get("mib_per_s"),
         "elapsed_s": res["elapsed_ns"] / 1e9,
         "interval_cpu_s": (cpu["user_ns"] + cpu["sys_ns"]) / 1e9,
         "cpu_scope": "worker threads (RUSAGE_THREAD)",
         "flowops": {f["name"]: f["ops"] for f in res["flowops"]},
         "flowop_bpo": {f["name"]: f.get("bytes", 0) / f["ops"] if f["ops"] else 0.0
                        for f in res["flowops"]},
         "flowops_in_summary": sum(f["ops"] for f in res["flowops"] if f.get("in_io_summary", True)),
         "warnings": d.get("warnings", []), "errors": [],
         "threads": res.get("threads"), "finished_threads": res.get("finished_threads")}
    pops = []
    for p in res.get("populate", []):
        rep = p.get("report", p)  # {fileset, elapsed_ns, ...}; older builds: {fileset, report}
        if isinstance(rep, dict):
            e = rep.get("elapsed_ns") or rep.get("elapsed")
            pops.append(float(e) / 1e9 if isinstance(e, (int, float)) else None)
        elif isinstance(rep, str):  # a Debug string: "PopulateReport { ..., elapsed: 605.8ms }"
            m = re.search(r"(?<![\w])elapsed: ([\d.]+)(ns|µs|us|ms|s)\b", rep)
            unit = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}
            pops.append(float(m.group(1)) * unit[m.group(2)] if m else None)
    if pops and all(x is not None for x in pops):
        r["populate_s"] = sum(pops)
    return r

def cleanup_leftovers(samp, shm_before, fbshm_before):
    """Ends processes of this run still alive, and removes the SysV shared memory segments and the
    /tmp/filebench-shm-* file that filebench created in this run (it removes both on a normal
    exit). Returns a note for each thing done."""
    notes = []
    def alive(pid, comm):
        st = read(f"/proc/{pid}/stat")
        if st is None or st[st.find("(") + 1:st.rfind(")")] != comm[:15]:
            return False
        return st[st.rfind(")") + 2:].split()[0] not in ("Z", "X")
    for pid, comm in samp.pids.items():
        if not alive(pid, comm):
            continue
        for _ in range(20):          # give a worker that outlived its parent 2 s to finish
            time.sleep(0.1)
            if not alive(pid, comm):
                break
        if alive(pid, comm):
            notes.append(f"process {pid} ({comm}) still alive 2 s after the run; killed")
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        else:
            notes.append(f"process {pid} ({comm}) outlived the tool's main process (ended by itself)")
    for shmid, (cpid, nattch) in sysv_shm().items():
        if shmid not in shm_before and cpid in samp.pids:
            notes.append(f"removed SysV shm segment {shmid} left by pid {cpid}")
            subprocess.call(["ipcrm", "-m", str(shmid)])
    for f in set(glob.glob("/tmp/filebench-shm-*")) - fbshm_before:
        notes.append(f"removed leftover {f}")
        try:
            os.unlink(f)
        except OSError:
            pass
    return notes

# ---------------------------------------------------------------- one run
def run(args):
    i = args.index("--")
    opt, cmd = args[:i], args[i + 1:]
    workload, pair, pos, tool, attempt, out, results, sample_ms = opt
    sample_ms = int(sample_ms)
    timefile = out + ".time"
    err = out + ".err"
    shm_before = set(sysv_shm())
    fbshm_before = set(glob.glob("/tmp/filebench-shm-*"))
    ru = resource.getrusage(resource.RUSAGE_SELF)
    helper_cpu0 = ru.ru_utime + ru.ru_stime
    b0, t0 = cpu_jiffies()
    w0 = time.monotonic()
    # The tool runs in its own process group, so that all its processes can be ended together
    # if this helper is interrupted (GNU time would not pass a SIGTERM on to them).
    p = subprocess.Popen(["/usr/bin/time", "-f", "%e %U %S %M", "-o", timefile] + cmd,
                         stdout=subprocess.PIPE, stderr=open(err, "wb"), start_new_session=True)
    def term(sig, frm):
        raise SystemExit(143)
    signal.signal(signal.SIGTERM, term)
    samp = Sampler(p.pid, sample_ms / 1000.0)
    marks = {}
    finished = False
    try:
        samp.start()
        with open(out, "wb") as fo:
            for line in p.stdout:
                fo.write(line)
                if tool == "filebench":
                    if b"Running..." in line and "run0" not in marks:
                        marks["run0"] = (time.monotonic(), samp.snapshot_cpu())
                    elif b"Run took" in line and "run1" not in marks:
                        marks["run1"] = (time.monotonic(), samp.snapshot_cpu())
        rc = p.wait()
        finished = True
    finally:
        if not finished:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            p.wait()
            cleanup_leftovers(samp, shm_before, fbshm_before)
    w1 = time.monotonic()
    samp.stop.set()
    samp.join()
    b1, t1 = cpu_jiffies()

    ru = resource.getrusage(resource.RUSAGE_SELF)
    helper_cpu_s = ru.ru_utime + ru.ru_stime - helper_cpu0
    sampled_cpu_s = sum(samp.cpu.values()) / HZ
    tl = [l for l in (read(timefile) or "").splitlines() if l.strip()]
    try:
        wall_s, user_s, sys_s, maxrss_kib = tl[-1].split()
        tool_cpu_s = float(user_s) + float(sys_s)
    except (IndexError, ValueError):
        wall_s, user_s, sys_s, maxrss_kib, tool_cpu_s = w1 - w0, 0, 0, 0, 0.0
    cmdline_rc = rc
    text = open(out, errors="replace").read()
    etext = open(err, errors="replace").read()

    notes = cleanup_leftovers(samp, shm_before, fbshm_before)

    r = {"workload": workload, "pair": int(pair), "pos": int(pos), "tool": tool,
         "attempt": int(attempt), "rc": cmdline_rc, "wall_s": float(wall_s),
         "whole_cpu_s": tool_cpu_s, "gnu_time_maxrss_kib": int(maxrss_kib),
         "procs": samp.max_procs, "samples": samp.samples, "pss_samples": samp.pss_samples,
         "peak_pss_kib": samp.peak_pss["Pss"] if samp.peak_pss else 0,
         "peak_rss_sum_kib": samp.peak_rss,
         "peak_breakdown_kib": samp.peak_pss or {},
         "hwm_kib": {f"{samp.pids[p]}[{p}]": v for p, v in samp.hwm.items()},
         "notes": notes}
    # GNU time counts the CPU of the processes that were waited for; a filebench worker that
    # outlives the master is not. The sampled per-process CPU (last value seen, a lower bound)
    # tells when that happened.
    r["sampled_cpu_s"] = sampled_cpu_s
    if sampled_cpu_s > tool_cpu_s * 1.05 + 0.05:
        r["notes"].append(f"GNU time counted {tool_cpu_s:.2f} CPU-s but the tool's processes used at least "
                          f"{sampled_cpu_s:.2f} (a process not waited for); using the latter")
        tool_cpu_s = sampled_cpu_s
        r["whole_cpu_s"] = tool_cpu_s
    # CPU used on the machine by anything but the tool and this helper (its sampling thread), as
    # a percentage of all CPUs during the run: other sessions' builds and tests.
    r["helper_cpu_s"] = helper_cpu_s
    total = t1 - t0
    r["bg_pct"] = (max(0.0, (b1 - b0 - (tool_cpu_s + helper_cpu_s) * HZ) / total * 100.0)
                   if total > 0 else 0.0)
    r["helper_pct"] = helper_cpu_s * HZ / total * 100.0 if total > 0 else 0.0
    if tool == "filebench":
        r.update(parse_filebench(text))
        if "run0" in marks and "run1" in marks:
            r["interval_cpu_s"] = (marks["run1"][1] - marks["run0"][1]) / HZ
            r["cpu_scope"] = "all filebench processes (/proc/PID/stat) between 'Running...' and 'Run took'"
        r["ok"] = "ops" in r and r["ops"] > 0
        if not r["ok"]:
            r["errors"].append("no IO Summary in filebench's output")
    else:
        try:
            r.update(parse_iolab(out))
            r["ok"] = rc == 0 and r["ops"] > 0
        except (ValueError, KeyError, OSError) as e:
            r["ok"] = False
            r["errors"] = [f"cannot parse iolab's JSON: {e}"] + etext.strip().splitlines()[-5:]
        if rc != 0:
            r.setdefault("errors", []).append(f"iolab exited with status {rc}")
    if r.get("interval_cpu_s") is not None and r.get("ops"):
        r["cpu_us_per_op"] = r["interval_cpu_s"] * 1e6 / r["ops"]
    if r.get("ops"):
        r["whole_cpu_us_per_op"] = tool_cpu_s * 1e6 / r["ops"]
    with open(results, "a") as f:
        f.write(json.dumps(r) + "\n")
    msg = (f"   {workload} pair {pair} {tool:<9} "
           + (f"{r['ops_per_s']:>11,.0f} ops/s  {r.get('cpu_us_per_op', float('nan')):6.2f} CPU-µs/op  "
              f"peak ΣPSS {r['peak_pss_kib'] / 1024:7.1f} MiB  wall {float(wall_s):5.1f} s  "
              f"bg {r['bg_pct']:4.1f}%  sampler {r['helper_pct']:.1f}%"
              if r["ok"] else "FAILED: " + "; ".join(r.get("errors", [])[-3:])))
    print(msg, flush=True)
    for n in notes:
        print(f"     note: {n}", flush=True)
    if r["ok"] and r.get("stopped_early"):
        print("     note: filebench reported 'Run stopped early'", flush=True)
    sys.exit(0 if r["ok"] else 2)

# ---------------------------------------------------------------- tables
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")

def fmt(x, spec):
    return format(x, spec) if x is not None and x == x else "-"

def table(args):
    results, workload, summary = args
    rows = [json.loads(l) for l in open(results) if l.strip()]
    rows = [r for r in rows if r["workload"] == workload]
    good = {(r["pair"], r["tool"]): r for r in rows if r["ok"]}
    pairs = sorted({r["pair"] for r in rows})
    fails = [r for r in rows if not r["ok"]]
    ok_pairs = [p for p in pairs if (p, "filebench") in good and (p, "iolab") in good]

    print(f"\n   speed: ops/s from filebench's IO Summary and iolab's .result.io_summary; CPU-µs per op"
          f" over the measured interval\n")
    print(f"   {'pair':>4} {'order':<5} {'filebench':>11} {'iolab':>11} {'i/fb':>7}   "
          f"{'fb µs/op':>9} {'iolab':>7} {'i/fb':>6}   {'whole-run µs/op':>15} {'iolab':>7} {'i/fb':>6}"
          f" {'bg CPU%':>8}")
    rat, crat, wrat, mrat = [], [], [], []
    for p in pairs:
        f, i = good.get((p, "filebench")), good.get((p, "iolab"))
        order = "F-I" if p % 2 == 1 else "I-F"
        line = f"   {p:>4} {order:<5} "
        line += f"{fmt(f and f['ops_per_s'], ',.0f'):>11} {fmt(i and i['ops_per_s'], ',.0f'):>11} "
        r = i["ops_per_s"] / f["ops_per_s"] if f and i else None
        c = i["cpu_us_per_op"] / f["cpu_us_per_op"] if f and i and f.get("cpu_us_per_op") else None
        w = i["whole_cpu_us_per_op"] / f["whole_cpu_us_per_op"] if f and i else None
        if r is not None:
            rat.append(r)
        if c is not None:
            crat.append(c)
        if w is not None:
            wrat.append(w)
        line += f"{fmt(r, '.3f'):>7}   "
        line += f"{fmt(f and f.get('cpu_us_per_op'), '.2f'):>9} {fmt(i and i.get('cpu_us_per_op'), '.2f'):>7} {fmt(c, '.3f'):>6}   "
        line += f"{fmt(f and f.get('whole_cpu_us_per_op'), '.2f'):>15} {fmt(i and i.get('whole_cpu_us_per_op'), '.2f'):>7} {fmt(w, '.3f'):>6}"
        bgs = [x["bg_pct"] for x in (f, i) if x]
        line += f" {fmt(max(bgs) if bgs else None, '.1f'):>8}"
        print(line)
    def col(tool, key):
        return med([good[(p, tool)].get(key) for p in pairs if (p, tool) in good])
    print(f"   {'med':>4} {'':<5} {fmt(col('filebench', 'ops_per_s'), ',.0f'):>11} "
          f"{fmt(col('iolab', 'ops_per_s'), ',.0f'):>11} {fmt(med(rat), '.3f'):>7}   "
          f"{fmt(col('filebench', 'cpu_us_per_op'), '.2f'):>9} {fmt(col('iolab', 'cpu_us_per_op'), '.2f'):>7} "
          f"{fmt(med(crat), '.3f'):>6}   {fmt(col('filebench', 'whole_cpu_us_per_op'), '.2f'):>15} "
          f"{fmt(col('iolab', 'whole_cpu_us_per_op'), '.2f'):>7} {fmt(med(wrat), '.3f'):>6} "
          f"{fmt(med([r['bg_pct'] for r in rows if r['ok']]), '.1f'):>8}")

    print(f"\n   memory: peak over the run of the summed PSS of all the tool's processes (sampled"
          f" every {SAMPLE_MS} ms),\n   the summed RSS, and GNU time's max RSS (largest single process)\n")
    print(f"   {'pair':>4} {'ΣPSS MiB fb':>12} {'iolab':>8} {'i/fb':>6}   {'ΣRSS MiB fb':>12} {'iolab':>8}"
          f"   {'maxRSS fb':>10} {'iolab':>8}   {'procs fb':>8}   {'fb at peak: anon/file/shmem MiB':>32}"
          f"   {'populate s fb':>13} {'iolab':>6}")
    for p in pairs:
        f, i = good.get((p, "filebench")), good.get((p, "iolab"))
        m = i["peak_pss_kib"] / f["peak_pss_kib"] if f and i and f["peak_pss_kib"] else None
        if m is not None:
            mrat.append(m)
        mib = lambda r, k: r[k] / 1024 if r else None
        bd = f["peak_breakdown_kib"] if f else {}
        brk = (f"{bd.get('Pss_Anon', 0) / 1024:.1f}/{bd.get('Pss_File', 0) / 1024:.1f}/"
               f"{bd.get('Pss_Shmem', 0) / 1024:.1f}" if f else "-")
        print(f"   {p:>4} {fmt(mib(f, 'peak_pss_kib'), '.1f'):>12} {fmt(mib(i, 'peak_pss_kib'), '.1f'):>8} "
              f"{fmt(m, '.3f'):>6}   {fmt(mib(f, 'peak_rss_sum_kib'), '.1f'):>12} "
              f"{fmt(mib(i, 'peak_rss_sum_kib'), '.1f'):>8}   {fmt(mib(f, 'gnu_time_maxrss_kib'), '.1f'):>10} "
              f"{fmt(mib(i, 'gnu_time_maxrss_kib'), '.1f'):>8}   {fmt(f and f['procs'], 'd'):>8}   {brk:>32}"
              f"   {fmt(f and f.get('populate_s'), '.2f'):>13} {fmt(i and i.get('populate_s'), '.2f'):>6}")
    fpss, ipss = col("filebench", "peak_pss_kib"), col("iolab", "peak_pss_kib")
    print(f"   {'med':>4} {fmt(fpss / 1024, '.1f'):>12} {fmt(ipss / 1024, '.1f'):>8} {fmt(med(mrat), '.3f'):>6}")

    # Flowop mix: each flowop's share of all ops, summed over the good runs of each tool.
    tot = {"filebench": {}, "iolab": {}}
    byt = {"filebench": {}, "iolab": {}}   # bytes summed over the runs (ops x bytes/op)
    order = []
    for (p, t), r in sorted(good.items()):
        for name, n in r["flowops"].items():
            tot[t][name] = tot[t].get(name, 0) + n
            byt[t][name] = byt[t].get(name, 0.0) + n * r.get("flowop_bpo", {}).get(name, 0.0)
            if t == "iolab" and name not in order:
                order.append(name)
    for name in tot["filebench"]:
        if name not in order:
            order.append(name)
    sf, si = sum(tot["filebench"].values()), sum(tot["iolab"].values())
    print(f"\n   flowop mix: ops per flowop summed over the runs, its share of all ops, and the mean bytes"
          f" per op\n   (filebench's from its rounded mb/s, so approximate)\n")
    print(f"   {'flowop':<18} {'filebench':>11} {'share':>7} {'iolab':>11} {'share':>7} {'i/fb share':>10}"
          f"   {'B/op fb':>9} {'iolab':>9} {'i/fb':>6}")
    mixnotes = []
    for name in order:
        a, b = tot["filebench"].get(name), tot["iolab"].get(name)
        sa = a / sf if a is not None and sf else None
        sb = b / si if b is not None and si else None
        q = sb / sa if sa and sb is not None else None
        if q is not None and abs(q - 1) > 0.05:
            mixnotes.append(f"{name}: share {sb:.2%} of the ops in iolab vs {sa:.2%} in filebench")
        if a is None or b is None:
            mixnotes.append(f"{name}: only reported by {'iolab' if a is None else 'filebench'}")
        ba = byt["filebench"].get(name, 0.0) / a if a else None
        bb = byt["iolab"].get(name, 0.0) / b if b else None
        bq = bb / ba if ba and bb is not None else None
        if ba and bb is not None and ba > 1024 and abs(bq - 1) > 0.05:
            mixnotes.append(f"{name}: {bb:,.0f} bytes per op in iolab vs {ba:,.0f} in filebench")
        print(f"   {name:<18} {fmt(a, ',d'):>11} {fmt(sa and sa * 100, '.2f'):>6}% {fmt(b, ',d'):>11} "
              f"{fmt(sb and sb * 100, '.2f'):>6}% {fmt(q, '.3f'):>10}"
              f"   {fmt(ba, ',.0f'):>9} {fmt(bb, ',.0f'):>9} {fmt(bq, '.3f'):>6}")
    print(f"   {'total':<18} {sf:>11,} {'':>7} {si:>11,}")

    print()
    for r in rows:
        tag = f"pair {r['pair']} {r['tool']} (attempt {r['attempt']})"
        if not r["ok"]:
            print(f"   note: {tag} FAILED: " + "; ".join(r.get("errors", [])[-4:] or ["no result"]))
        elif r["tool"] == "filebench":
            if r.get("stopped_early") or (r.get("run_took_s") is not None and r["run_took_s"] < RUNTIME):
                print(f"   note: {tag}: run stopped early after {r.get('run_took_s')} s")
            if r["rc"] != 0:
                print(f"   note: {tag}: filebench exited with status {r['rc']}")
            for e in r.get("errors", [])[:3]:
                print(f"   note: {tag}: filebench said: {e}")
        else:
            if r.get("flowops_in_summary") is not None and r["flowops_in_summary"] != r["ops"]:
                print(f"   note: {tag}: io_summary.ops {r['ops']} != sum of its flowops' ops "
                      f"{r['flowops_in_summary']}")
            if r.get("finished_threads"):
                print(f"   note: {tag}: {r['finished_threads']} threads finished before the end")
            for wmsg in r.get("warnings", [])[:3]:
                print(f"   note: {tag}: iolab warning: {wmsg}")
        for n in r.get("notes", []):
            print(f"   note: {tag}: {n}")
    for n in mixnotes:
        print(f"   note: flowop mix differs: {n}")
    bgm = med([r["bg_pct"] for r in rows if r["ok"]])
    if bgm == bgm and bgm > 10:
        print(f"   warning: other load used {bgm:.0f} % of the CPUs during the median run: the machine"
              f" was busy, these ratios are less reliable")

    sp = med(rat)
    mm = med(mrat)
    v_speed = "PASS" if sp == sp and sp >= 1.0 else ("FAIL" if sp == sp else "n/a")
    v_mem = "PASS" if mm == mm and mm <= 1.0 else ("FAIL" if mm == mm else "n/a")
    print(f"   target: median ops/s ratio iolab/filebench >= 1.00: {fmt(sp, '.3f')} {v_speed}"
          f"   (median CPU-s/op ratio {fmt(med(crat), '.3f')}, lower is cheaper)")
    print(f"   target: median peak-memory ratio iolab/filebench (ΣPSS) <= 1.00: {fmt(mm, '.3f')} {v_mem}")
    fb_fail = sum(1 for r in fails if r["tool"] == "filebench")
    io_fail = sum(1 for r in fails if r["tool"] == "iolab")
    with open(summary, "a") as f:
        f.write(json.dumps({"workload": workload, "pairs": len(ok_pairs), "speed": sp, "cpu": med(crat),
                            "mem": mm, "v_speed": v_speed, "v_mem": v_mem, "fb_fail": fb_fail,
                            "io_fail": io_fail,
                            "fb_ops": col("filebench", "ops_per_s"), "io_ops": col("iolab", "ops_per_s"),
                            "fb_pss": fpss / 1024, "io_pss": ipss / 1024}) + "\n")

def summary(args):
    (path,) = args
    try:
        rows = [json.loads(l) for l in open(path) if l.strip()]
    except FileNotFoundError:
        rows = []
    print("\n== summary: medians of the per-pair ratios iolab/filebench ==")
    print(f"{'workload':<12} {'pairs':>5} {'fb ops/s':>10} {'iolab ops/s':>12} {'ops/s ratio':>11} "
          f"{'speed':>5}  {'CPU-s/op ratio':>14}  {'ΣPSS MiB fb':>11} {'iolab':>7} {'mem ratio':>9} {'memory':>6}"
          f"  failed runs (fb/iolab)")
    for o in rows:
        print(f"{o['workload']:<12} {o['pairs']:>5} {fmt(o['fb_ops'], ',.0f'):>10} {fmt(o['io_ops'], ',.0f'):>12} "
              f"{fmt(o['speed'], '.3f'):>11} {o['v_speed']:>5}  {fmt(o['cpu'], '.3f'):>14}  "
              f"{fmt(o['fb_pss'], '.1f'):>11} {fmt(o['io_pss'], '.1f'):>7} {fmt(o['mem'], '.3f'):>9} "
              f"{o['v_mem']:>6}  {o['fb_fail']}/{o['io_fail']}")
    allp = rows and all(o["v_speed"] == "PASS" for o in rows)
    allm = rows and all(o["v_mem"] == "PASS" for o in rows)
    print(f"targets: iolab ops/s >= filebench's for all workloads: {'PASS' if allp else 'FAIL'};"
          f" iolab peak memory <= filebench's: {'PASS' if allm else 'FAIL'}")
    if any(o["io_fail"] for o in rows):
        sys.exit(3)

RUNTIME = int(os.environ.get("VSFB_RUNTIME", "20"))
SAMPLE_MS = int(os.environ.get("VSFB_SAMPLE_MS", "100"))
if __name__ == "__main__":
    cmd, *rest = sys.argv[1:]
    {"prepare": prepare, "run": run, "table": table, "summary": summary}[cmd](rest)
PY
export VSFB_RUNTIME=$RUNTIME VSFB_SAMPLE_MS=$SAMPLE_MS

# clean_fs: remove everything on the tmpfs, so that the next run populates its fileset afresh.
clean_fs() {
    find "$MNT" -mindepth 1 -maxdepth 1 -exec rm -rf {} + || die "cannot empty $MNT"
}

IOLAB_FAILED=0
# run_tool WORKLOAD PAIR POS TOOL -- COMMAND...: one run, retried once when it gives no result.
run_tool() {
    local w=$1 pair=$2 pos=$3 tool=$4 attempt rc
    shift 4
    [ "$1" = "--" ] && shift
    for attempt in 1 2; do
        clean_fs
        rc=0
        python3 "$HELPER" run "$w" "$pair" "$pos" "$tool" "$attempt" "$WORK/out.$w.$pair.$tool.$attempt" \
            "$RESULTS" "$SAMPLE_MS" -- "$@" &
        RUNNER_PID=$!
        wait "$RUNNER_PID" || rc=$?
        RUNNER_PID=""
        [ "$rc" = 0 ] && return 0
        [ "$rc" = 2 ] || die "the measuring helper failed (status $rc) on $tool, $w pair $pair"
        if [ "$attempt" = 1 ]; then
            note "$tool gave no result in $w pair $pair; retrying once (output: $WORK/out.$w.$pair.$tool.1)"
            sed -n '1,200p' "$WORK/out.$w.$pair.$tool.1" | grep -iE "error|fail|abort|warn" | head -5 >&2 || true
        fi
    done
    [ "$tool" = iolab ] && IOLAB_FAILED=1
    return 0
}

# ---------------------------------------------------------------------------------------------
START=$(date +%s)
ARCH=$(uname -m)
echo "iolab vs filebench: $PAIRS pairs per workload, ${RUNTIME} s measured per run, on a fresh tmpfs"
echo "load average at start: $(cut -d' ' -f1-4 /proc/loadavg)   (1, 5, 15 min; running/total tasks; $(nproc) CPUs)"
echo "filebench: $FILEBENCH ($("$FILEBENCH" -h 2>&1 | grep -m1 -io 'version [^ ]*' || echo 'version unknown')), run as: setarch $ARCH -R filebench -f FILE"
echo "iolab:     $IOLAB ($("$IOLAB" --version 2>/dev/null || echo 'version unknown'); repo HEAD $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "tmpfs:     $MNT (size=$TMPFS_SIZE), emptied before every run"
echo "corpus:    $CORPUS"
est=$(( ${#WLS[@]} * PAIRS * 2 * (RUNTIME + 5) ))
echo "expected wall time: about $(( est / 60 )) min $(( est % 60 )) s"

for w in "${WLS[@]}"; do
    f="$WORK/$w.f"
    echo
    echo "== $w: $CORPUS/$w.f =="
    echo "   load average: $(cut -d' ' -f1-4 /proc/loadavg)"
    echo "   the copy both tools run, $f, differs from it in:"
    # shellcheck disable=SC2086
    python3 "$HELPER" prepare "$CORPUS/$w.f" "$f" "$MNT" "$RUNTIME" ${WL_SETS[$w]:-} || die "cannot rewrite $w.f"
    iolab_sets=()
    for s in ${WL_SETS[$w]:-}; do iolab_sets+=(--set "$s"); done
    FB_CMD=(setarch "$ARCH" -R "$FILEBENCH" -f "$f")
    IO_CMD=("$IOLAB" run "$f" --dir "$MNT" --time "${RUNTIME}s" --json -q --no-db "${iolab_sets[@]}")
    echo "   filebench: ${FB_CMD[*]}"
    echo "   iolab:     ${IO_CMD[*]}"
    for ((p = 1; p <= PAIRS; p++)); do
        if (( p % 2 == 1 )); then
            run_tool "$w" "$p" 1 filebench -- "${FB_CMD[@]}"
            run_tool "$w" "$p" 2 iolab -- "${IO_CMD[@]}"
        else
            run_tool "$w" "$p" 1 iolab -- "${IO_CMD[@]}"
            run_tool "$w" "$p" 2 filebench -- "${FB_CMD[@]}"
        fi
    done
    clean_fs
    python3 "$HELPER" table "$RESULTS" "$w" "$RESULTS.summary"
done

rc=0
python3 "$HELPER" summary "$RESULTS.summary" || rc=$?
[ -n "$SAVE" ] && cp "$RESULTS" "$SAVE" && echo "every run's numbers: $SAVE"
echo "load average at end: $(cut -d' ' -f1-4 /proc/loadavg); wall time $(( $(date +%s) - START )) s"
if [ "$IOLAB_FAILED" = 1 ] || [ "$rc" = 3 ]; then
    die "iolab failed in at least one run (see the notes above)"
fi
