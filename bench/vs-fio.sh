#!/usr/bin/env bash
# bench/vs-fio.sh — iolab micro vs fio (and a bare C pread loop), side by side, interleaved.
#
# For each case, runs fio and `iolab micro` with identical parameters on the same files, N pairs,
# alternating which tool goes first, and prints per-pair numbers, the medians, and the median of
# the per-pair ratios iolab/fio for IOPS and CPU-seconds per op, next to the speed targets.
# It is a measurement, not a test: it exits 0 whatever the ratios, non-zero only on errors.
#
# Usage: bench/vs-fio.sh [--cases a,b,c,d,e] [--pairs N] [--quick] [--iolab PATH] [--no-build]
#                        [--no-strace] [--save FILE]
# See bench/README.md for what each case is and how to read the output.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)

CASES="a,b,c,d,e"
PAIRS=""
QUICK=0
IOLAB=""
BUILD=1
STRACE=1
SAVE=""

usage() {
    cat <<'EOF'
Usage: bench/vs-fio.sh [options]

  --cases LIST   cases to run, comma-separated from a,b,c,d,e (default: all)
                   a  4 KiB randread, psync, 1 thread, 1 GiB in page cache (+ bench/preadloop.c)
                   b  the same with io_uring, queue depth 32
                   c  the same as a with 2 threads (2 x 512 MiB)
                   d  4 KiB randwrite + fdatasync, ext4 on a loop device (--direct-io=on)
                   e  4 KiB append + fsync, same file system
  --pairs N      interleaved fio/iolab pairs per case (default 5; 2 with --quick)
  --quick        short smoke run: smaller files, fewer loops, 2 pairs
  --iolab PATH   use this iolab binary (default: build target/release/iolab with cargo)
  --no-build     do not run cargo build; use target/release/iolab as it is
  --no-strace    skip the strace syscall-count check of cases d and e
  --save FILE    also write every run's parsed numbers to FILE (JSON lines)
  -h, --help     this text

Cases d and e need root (losetup, mkfs.ext4, mount); they are skipped otherwise.
EOF
}

BENCH_NAME=vs-fio
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

while [ $# -gt 0 ]; do
    case "$1" in
        --cases) CASES=${2:?--cases needs a value}; shift 2 ;;
        --cases=*) CASES=${1#*=}; shift ;;
        --pairs) PAIRS=${2:?--pairs needs a value}; shift 2 ;;
        --pairs=*) PAIRS=${1#*=}; shift ;;
        --quick) QUICK=1; shift ;;
        --iolab) IOLAB=${2:?--iolab needs a value}; BUILD=0; shift 2 ;;
        --iolab=*) IOLAB=${1#*=}; BUILD=0; shift ;;
        --no-build) BUILD=0; shift ;;
        --no-strace) STRACE=0; shift ;;
        --save) SAVE=${2:?--save needs a value}; shift 2 ;;
        --save=*) SAVE=${1#*=}; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done

if [ -z "$PAIRS" ]; then
    if [ "$QUICK" = 1 ]; then PAIRS=2; else PAIRS=5; fi
fi
[[ "$PAIRS" =~ ^[1-9][0-9]*$ ]] || die "--pairs must be a positive integer, got '$PAIRS'"

declare -A WANT=()
IFS=',' read -r -a _cases <<<"$CASES"
for c in "${_cases[@]}"; do
    case "$c" in
        a|b|c|d|e) WANT[$c]=1 ;;
        "") ;;
        *) die "unknown case '$c' (expected a,b,c,d,e)" ;;
    esac
done
[ ${#WANT[@]} -gt 0 ] || die "no case selected"
want() { [ -n "${WANT[$1]:-}" ]; }

# ---------------------------------------------------------------------------------------------
# Sizes. Page-cache cases: 1 GiB visited LOOPS times per run (a run is then ~2-4 s here).
# Write cases: sized so that one run takes a few seconds on a loop device over virtio.
if [ "$QUICK" = 1 ]; then
    PC_SIZE_MIB=256; PC_LOOPS=2; D_SIZE_MIB=8; E_SIZE_MIB=4
else
    PC_SIZE_MIB=1024; PC_LOOPS=5; D_SIZE_MIB=32; E_SIZE_MIB=16
fi
BS=4096
IMG_SIZE=2G
COLD_KIB=16384      # a page-cache run that made the system read more than this is redone
COLD_RETRIES=3
export VSFIO_COLD_RETRIES=$COLD_RETRIES

# ---------------------------------------------------------------------------------------------
# Tools.

need fio fio
need python3 python3
want a && need gcc gcc
if { want d || want e; } && [ "$IS_ROOT" = 1 ]; then
    need losetup mount
    need mkfs.ext4 e2fsprogs
    [ "$STRACE" = 1 ] && need strace strace
fi

resolve_iolab

# ---------------------------------------------------------------------------------------------
# Work space and clean-up. Only what this script created is removed: its temp dir, its mount,
# the loop device it attached and its image file.
WORK=$(mktemp -d /tmp/iolab-vs-fio.XXXXXX)
MNT=""
LOOPDEV=""
IMG=""
MOUNTED=0
cleanup() {
    local rc=$?
    set +e
    if [ "$MOUNTED" = 1 ]; then
        umount "$MNT" 2>/dev/null || { sleep 1; umount "$MNT"; } || note "could not unmount $MNT"
    fi
    [ -n "$MNT" ] && rmdir "$MNT" 2>/dev/null
    if [ -n "$LOOPDEV" ]; then
        losetup -d "$LOOPDEV" || note "could not detach $LOOPDEV"
    fi
    [ -n "$IMG" ] && rm -f "$IMG"
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PREADLOOP="$WORK/preadloop"
if want a; then
    gcc -O2 -Wall -o "$PREADLOOP" "$BENCH_DIR/preadloop.c" || die "cannot compile bench/preadloop.c"
fi

RESULTS="$WORK/results.jsonl"
: >"$RESULTS"

# The report helper: parses each tool's output into one JSON line, and prints the tables.
HELPER="$WORK/report.py"
cat >"$HELPER" <<'PY'
import json, os, statistics, sys

def fio_run(path, ddir):
    d = json.load(open(path))
    jobs = d["jobs"]
    if len(jobs) != 1:
        raise SystemExit(f"expected one (group-reported) job in {path}, got {len(jobs)}")
    j = jobs[0]
    if j.get("error"):
        raise SystemExit(f"fio reported error {j['error']} in {path}")
    io = j[ddir]
    ops = io["total_ios"]
    # usr_cpu/sys_cpu are percent of job_runtime; with group_reporting both the CPU times and
    # job_runtime are sums over the jobs, so this is the total CPU of all job threads.
    cpu_s = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * j["job_runtime"] / 1000.0
    lat = io["lat_ns"]["mean"]
    # fio times the fsync/fdatasync of fsync=N/fdatasync=N as separate "sync" I/Os (sync.lat_ns;
    # its sync.total_ios stays 0 for fdatasync, lat_ns.N counts them); iolab's per-op latency
    # spans the write and its sync, so add fio's sync time per write to compare like with like.
    sync = j.get("sync", {}).get("lat_ns", {})
    syncs = sync.get("N", 0) or 0
    if ddir == "write" and syncs and ops:
        lat += sync["mean"] * syncs / ops
    return {"iops": io["iops"], "ops": ops, "cpu_s": cpu_s,
            "cpu_ns_per_op": cpu_s * 1e9 / ops if ops else 0.0,
            "lat_ns": lat, "ctx": j["ctx"], "syncs": syncs}

def iolab_run(path):
    d = json.load(open(path))
    r = d["result"]
    cpu_s = (r["cpu"]["user_ns"] + r["cpu"]["sys_ns"]) / 1e9
    return {"iops": r["iops"], "ops": r["ops"], "cpu_s": cpu_s,
            "cpu_ns_per_op": r["cpu"]["cpu_ns_per_op"], "lat_ns": r["latency"]["mean_ns"],
            "ctx": r["context_switches"]["voluntary"] + r["context_switches"]["involuntary"],
            "time_limited": r.get("time_limited", False)}

def preadloop_run(path):
    kv = dict(x.split("=", 1) for x in open(path).read().split())
    ops = int(kv["ops"])
    cpu_s = (int(kv["user_ns"]) + int(kv["sys_ns"])) / 1e9
    return {"iops": float(kv["iops"]), "ops": ops, "cpu_s": cpu_s,
            "cpu_ns_per_op": float(kv["cpu_ns_per_op"]), "lat_ns": None,
            "ctx": int(kv["vcsw"]) + int(kv["ivcsw"])}

def record(args):
    (case, pair, pos, tool, out, ddir, wall_ns, busy0, total0, busy1, total1, pgin, retries,
     hz, proc_user, proc_sys) = args
    if tool == "fio":
        r = fio_run(out, ddir)
    elif tool == "iolab":
        r = iolab_run(out)
    else:
        r = preadloop_run(out)
    busy = int(busy1) - int(busy0)
    total = int(total1) - int(total0)
    # CPU used on the machine during the run by anything but the tool's process, as a
    # percentage of all CPUs: a noise indicator (other builds and tests, but also kernel
    # threads working for the tool: writeback, jbd2, the loop device's worker, io-wq).
    proc_cpu = float(proc_user) + float(proc_sys)
    bg = 0.0
    if total > 0:
        bg = max(0.0, (busy - proc_cpu * int(hz)) / total * 100.0)
    r.update({"case": case, "pair": int(pair), "pos": int(pos), "tool": tool,
              "wall_ns": int(wall_ns), "proc_cpu_s": proc_cpu, "bg_pct": bg, "pgpgin_kib": int(pgin),
              "cold_retries": int(retries)})
    print(json.dumps(r))

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")

TARGETS = {  # case: [(reference tool, minimum median IOPS ratio iolab/reference)]
    "a": [("fio", 1.2), ("preadloop", 0.9)],
    "b": [("fio", 1.0)],
    "c": [("fio", 1.0)],
    "d": [("fio", 0.97)],
    "e": [("fio", 0.97)],
}

def fmt_i(x):
    return f"{x:,.0f}"

def table(args):
    results, case, title = args
    rows = [json.loads(l) for l in open(results) if l.strip()]
    rows = [r for r in rows if r["case"] == case]
    tools = [t for t in ("fio", "iolab", "preadloop") if any(r["tool"] == t for r in rows)]
    pairs = sorted({r["pair"] for r in rows})
    by = {(r["pair"], r["tool"]): r for r in rows}
    short = {"fio": "F", "iolab": "I", "preadloop": "P"}
    name = {"fio": "fio", "iolab": "iolab", "preadloop": "pread"}
    refs = [t for t in tools if t != "iolab"]

    print(f"\n== case {case}: {title} ==")
    print(f"{'':11}" + f"{'IOPS':^{12 * len(tools)}}" + f"{'IOPS ratio':^{10 * len(refs)}}"
          + f"{'CPU ns/op':^{10 * len(tools)}}" + f"{'CPU ratio':^{10 * len(refs)}}")
    hdr = f"{'pair':>4} {'order':<6}"
    hdr += "".join(f"{name[t]:>12}" for t in tools)
    hdr += "".join(f"{'i/' + name[t]:>10}" for t in refs)
    hdr += "".join(f"{name[t]:>10}" for t in tools)
    hdr += "".join(f"{'i/' + name[t]:>10}" for t in refs)
    hdr += f"{'bg CPU%':>9}"
    print(hdr)
    ratios = {t: [] for t in refs}
    cratios = {t: [] for t in refs}
    flags = []
    for p in pairs:
        prs = [by.get((p, t)) for t in tools]
        if any(x is None for x in prs):
            continue
        order = "-".join(short[r["tool"]] for r in sorted(prs, key=lambda r: r["pos"]))
        line = f"{p:>4} {order:<6}"
        for r in prs:
            mark = "*" if r["cold_retries"] > COLD_RETRIES else ""
            line += f"{fmt_i(r['iops']) + mark:>12}"
        i = by[(p, "iolab")]
        for t in refs:
            x = i["iops"] / by[(p, t)]["iops"]
            ratios[t].append(x)
            line += f"{x:>10.3f}"
        for r in prs:
            line += f"{r['cpu_ns_per_op']:>10.0f}"
        for t in refs:
            x = i["cpu_ns_per_op"] / by[(p, t)]["cpu_ns_per_op"]
            cratios[t].append(x)
            line += f"{x:>10.3f}"
        line += f"{max(r['bg_pct'] for r in prs):>9.1f}"
        print(line)
        for r in prs:
            if r["ops"] != i["ops"]:
                flags.append(f"pair {p}: {r['tool']} did {r['ops']} ops, iolab {i['ops']}")
            if r.get("time_limited"):
                flags.append(f"pair {p}: iolab stopped early (time limit)")
            if r["cold_retries"]:
                flags.append(f"pair {p}: {r['tool']} run redone {r['cold_retries']}x: the system "
                             f"read from disk during it (page cache dropped by someone)")
    line = f"{'med':>4} {'':<6}"
    for t in tools:
        line += f"{fmt_i(med([by[(p, t)]['iops'] for p in pairs if (p, t) in by])):>12}"
    for t in refs:
        line += f"{med(ratios[t]):>10.3f}"
    for t in tools:
        line += f"{med([by[(p, t)]['cpu_ns_per_op'] for p in pairs if (p, t) in by]):>10.0f}"
    for t in refs:
        line += f"{med(cratios[t]):>10.3f}"
    line += f"{med([r['bg_pct'] for r in rows]):>9.1f}"
    print(line)
    lats = []
    for t in tools:
        m = med([by[(p, t)]["lat_ns"] for p in pairs if (p, t) in by])
        lats.append(f"{t} {m:,.0f} ns" if m == m else f"{t} not recorded")
    what = " (write + its sync)" if any(r["tool"] == "fio" and r.get("syncs") for r in rows) else ""
    print(f"  mean latency per op{what}, median over runs: " + ", ".join(lats))
    for f in flags:
        print("  note: " + f)
    # In d and e kernel threads working for the tool (loop worker, jbd2) make ~20-30 % normal.
    busy_limit = 10.0 if case in ("a", "b", "c") else 50.0
    bg_med = med([r["bg_pct"] for r in rows])
    if bg_med > busy_limit:
        print(f"  warning: other load used {bg_med:.0f} % of the CPUs during the median run "
              f"(> {busy_limit:.0f} %): the machine was busy, these ratios are unreliable")
    out = []
    for ref, goal in TARGETS[case]:
        if ref not in ratios or not ratios[ref]:
            continue
        m = med(ratios[ref])
        verdict = "PASS" if m >= goal else "FAIL"
        print(f"  target: median IOPS ratio iolab/{ref} >= {goal:.2f}: {m:.3f} {verdict}"
              f"   (CPU-s/op ratio iolab/{ref}: {med(cratios[ref]):.3f}, lower is cheaper)")
        out.append({"case": case, "ref": ref, "iops_ratio": m, "cpu_ratio": med(cratios[ref]),
                    "goal": goal, "verdict": verdict, "n": len(ratios[ref])})
    with open(results + ".summary", "a") as f:
        for o in out:
            f.write(json.dumps(o) + "\n")

def summary(args):
    (path,) = args
    try:
        rows = [json.loads(l) for l in open(path) if l.strip()]
    except FileNotFoundError:
        rows = []
    print("\n== summary: median of per-pair ratios ==")
    print(f"{'case':<5} {'vs':<10} {'pairs':>5} {'IOPS ratio':>11} {'CPU-s/op ratio':>15}"
          f" {'target':>8}  result")
    for o in rows:
        print(f"{o['case']:<5} {o['ref']:<10} {o['n']:>5} {o['iops_ratio']:>11.3f}"
              f" {o['cpu_ratio']:>15.3f} {'>= ' + format(o['goal'], '.2f'):>8}  {o['verdict']}")

COLD_RETRIES = int(os.environ.get("VSFIO_COLD_RETRIES", "3"))
if __name__ == "__main__":
    cmd, *rest = sys.argv[1:]
    {"record": record, "table": table, "summary": summary}[cmd](rest)
PY

# ---------------------------------------------------------------------------------------------
# Measuring one run.
HZ=$(getconf CLK_TCK)
NCPU=$(nproc)

cpu_jiffies() { # prints "busy total" from the first line of /proc/stat
    awk '/^cpu /{busy=$2+$3+$4+$7+$8+$9; total=busy+$5+$6; print busy, total; exit}' /proc/stat
}
pgpgin() { awk '/^pgpgin /{print $2; exit}' /proc/vmstat; }

# warm FILE...: read the files so that they are in the page cache (cheap when they already are).
warm() {
    local f
    for f in "$@"; do cat "$f" >/dev/null; done
}

# run_one CASE PAIR POS TOOL DDIR COLDCHECK WARMFILES -- COMMAND...
# Runs COMMAND with stdout to a file, records the parsed result. COLDCHECK=1 redoes the run
# (after warming WARMFILES again) when the system read from disk during it.
run_one() {
    local case=$1 pair=$2 pos=$3 tool=$4 ddir=$5 coldcheck=$6 warmfiles=$7
    shift 7
    [ "$1" = "--" ] && shift
    local out="$WORK/out.$case.$pair.$tool" err="$WORK/err.$case.$pair.$tool"
    local tries=0 b0 t0 b1 t1 p0 p1 w0 w1 out_to proc_user proc_sys
    local TIMEFORMAT='%3U %3S'
    while :; do
        # shellcheck disable=SC2086
        [ "$coldcheck" = 1 ] && warm $warmfiles
        p0=$(pgpgin)
        read -r b0 t0 < <(cpu_jiffies)
        w0=$(date +%s%N)
        # bash's `time` gives the CPU of the whole tool process (all its threads), to tell the
        # CPU used by anything else on the machine meanwhile.
        if [ "$tool" = fio ]; then
            set -- "$@" --output="$out"
            out_to=/dev/null
        else
            out_to=$out
        fi
        if ! { time "$@" >"$out_to" 2>"$err"; } 2>"$WORK/time"; then
            cat "$err" >&2
            die "$tool failed in case $case pair $pair: $*"
        fi
        [ "$tool" = fio ] && set -- "${@:1:$#-1}"
        read -r proc_user proc_sys <"$WORK/time"
        w1=$(date +%s%N)
        read -r b1 t1 < <(cpu_jiffies)
        p1=$(pgpgin)
        if [ "$coldcheck" = 1 ] && [ $((p1 - p0)) -gt "$COLD_KIB" ] && [ "$tries" -lt "$COLD_RETRIES" ]; then
            tries=$((tries + 1))
            note "case $case pair $pair $tool: system read $(((p1 - p0) / 1024)) MiB from disk during the run; redoing it"
            continue
        fi
        if [ "$coldcheck" = 1 ] && [ $((p1 - p0)) -gt "$COLD_KIB" ]; then
            tries=$((COLD_RETRIES + 1)) # still cold: keep it, flagged with * in the table
        fi
        break
    done
    python3 "$HELPER" record "$case" "$pair" "$pos" "$tool" "$out" "$ddir" $((w1 - w0)) \
        "$b0" "$t0" "$b1" "$t1" $((p1 - p0)) "$tries" "$HZ" "$proc_user" "$proc_sys" >>"$RESULTS" \
        || die "cannot parse the $tool output of case $case pair $pair (in $out)"
}

# ---------------------------------------------------------------------------------------------
# Case definitions: the fio and iolab command lines, with identical parameters.
# fio reads/writes iolab's own files (filename_format=iolab-micro.$jobnum), so both tools
# work on the very same files.
FIO_COMMON=(--thread=1 --group_reporting=1 --bs=$BS --invalidate=0 --direct=0
            '--filename_format=iolab-micro.$jobnum' --output-format=json)

fio_cmd() { # fio_cmd CASE DIR OUTFILE... -> prints nothing, sets FIO array
    local case=$1 dir=$2
    FIO=(fio --name="case-$case" --directory="$dir" "${FIO_COMMON[@]}")
    case "$case" in
        a) FIO+=(--ioengine=psync --rw=randread --size=${PC_SIZE_MIB}m --numjobs=1 --loops=$PC_LOOPS) ;;
        b) FIO+=(--ioengine=io_uring --iodepth=32 --rw=randread --size=${PC_SIZE_MIB}m --numjobs=1
                 --loops=$PC_LOOPS) ;;
        c) FIO+=(--ioengine=psync --rw=randread --size=$((PC_SIZE_MIB / 2))m --numjobs=2
                 --loops=$PC_LOOPS) ;;
        d) FIO+=(--ioengine=psync --rw=randwrite --size=${D_SIZE_MIB}m --numjobs=1 --fdatasync=1
                 --end_fsync=1 --zero_buffers=1) ;;
        e) FIO+=(--ioengine=psync --rw=write --size=${E_SIZE_MIB}m --numjobs=1 --fsync=1 --end_fsync=1
                 --fallocate=none --create_on_open=1 --zero_buffers=1) ;;
    esac
}
iolab_cmd() {
    local case=$1 dir=$2
    # --no-db: a benchmark run is not a result to keep (monitoring stays on, as users get it).
    IOL=("$IOLAB" micro --dir "$dir" --bs 4k --json --no-db)
    case "$case" in
        a) IOL+=(--access randread --sync normal --engine psync --size ${PC_SIZE_MIB}m --threads 1
                 --loops $PC_LOOPS) ;;
        b) IOL+=(--access randread --sync normal --engine io_uring --iodepth 32 --size ${PC_SIZE_MIB}m
                 --threads 1 --loops $PC_LOOPS) ;;
        c) IOL+=(--access randread --sync normal --engine psync --size ${PC_SIZE_MIB}m --threads 2
                 --loops $PC_LOOPS) ;;
        d) IOL+=(--access randwrite --sync fdatasync --engine psync --size ${D_SIZE_MIB}m --threads 1) ;;
        e) IOL+=(--access append --sync fsync --engine psync --size ${E_SIZE_MIB}m --threads 1) ;;
    esac
}
case_title() {
    case "$1" in
        a) echo "4 KiB randread, psync, 1 thread, ${PC_SIZE_MIB} MiB in page cache, $PC_LOOPS loops" ;;
        b) echo "4 KiB randread, io_uring QD 32, 1 thread, ${PC_SIZE_MIB} MiB in page cache, $PC_LOOPS loops" ;;
        c) echo "4 KiB randread, psync, 2 threads x $((PC_SIZE_MIB / 2)) MiB in page cache, $PC_LOOPS loops" ;;
        d) echo "4 KiB randwrite + fdatasync, ${D_SIZE_MIB} MiB file, ext4 on loop (direct-io=on)" ;;
        e) echo "4 KiB append + fsync, ${E_SIZE_MIB} MiB, ext4 on loop (direct-io=on)" ;;
    esac
}
case_ddir() { case "$1" in a|b|c) echo read ;; *) echo write ;; esac; }

case_dir() {
    case "$1" in
        a|b) echo "$WORK/pc1" ;;       # a and b share the same 1-file set
        c) echo "$WORK/pc2" ;;
        d) echo "$MNT/d" ;;
        e) echo "$MNT/e" ;;
    esac
}
case_files() { # the data files of a case
    local dir
    dir=$(case_dir "$1")
    case "$1" in
        c) echo "$dir/iolab-micro.0 $dir/iolab-micro.1" ;;
        *) echo "$dir/iolab-micro.0" ;;
    esac
}

# before_run CASE TOOL: per-run preparation outside the timed region.
before_run() {
    local case=$1 tool=$2 dir
    dir=$(case_dir "$case")
    if [ "$case" = e ] && [ "$tool" = fio ]; then
        # fio must start from no file (iolab unlinks its file itself): a fresh append every run.
        rm -f "$dir/iolab-micro.0"
    fi
    if [ "$case" = d ] || [ "$case" = e ]; then
        sync -f "$dir" 2>/dev/null || sync
    fi
}

# strace_check CASE: one untimed run of each tool under strace -f -c; prints the counts of the
# data and sync syscalls (the whole process, so iolab's preparation is included: see README).
strace_check() {
    local case=$1 dir t
    dir=$(case_dir "$case")
    echo "  strace -f -c (one untimed run each; whole process, preparation included):"
    for t in fio iolab; do
        before_run "$case" "$t"
        if [ "$t" = fio ]; then
            fio_cmd "$case" "$dir"; set -- "${FIO[@]}" --output="$WORK/strace.out"
        else
            iolab_cmd "$case" "$dir"; set -- "${IOL[@]}"
        fi
        strace -f -c -o "$WORK/strace.$case.$t" "$@" >"$WORK/strace.out.$t" 2>"$WORK/strace.err.$t" \
            || { cat "$WORK/strace.err.$t" >&2; die "$t under strace failed"; }
        awk -v tool="$t" '
            $NF ~ /^(pwrite64|write|pwritev|pwritev2|fsync|fdatasync|sync_file_range|unlink|unlinkat|ftruncate|fallocate|openat)$/ {
                # columns: % time, seconds, usecs/call, calls, [errors], syscall
                calls = $4; c[$NF] = calls
            }
            END {
                line = sprintf("    %-6s", tool)
                n = split("pwrite64 write fsync fdatasync fallocate ftruncate unlink openat", k, " ")
                for (i = 1; i <= n; i++) line = line sprintf(" %s=%d", k[i], c[k[i]] + 0)
                print line
            }' "$WORK/strace.$case.$t"
    done
    echo "    (write(2) also counts fio's/iolab's JSON output on stdout; fio's openat includes its"
    echo "     own start-up files; iolab's fsyncs include the ones of its untimed preparation)"
}

# ---------------------------------------------------------------------------------------------
setup_loop() {
    IMG=$(mktemp /var/tmp/iolab-vs-fio.XXXXXX.img)
    truncate -s "$IMG_SIZE" "$IMG"
    LOOPDEV=$(losetup -f --show --direct-io=on "$IMG") || { LOOPDEV=""; die "losetup failed"; }
    mkfs.ext4 -F -q "$LOOPDEV" || die "mkfs.ext4 $LOOPDEV failed"
    MNT=$(mktemp -d /tmp/iolab-vs-fio-mnt.XXXXXX)
    mount "$LOOPDEV" "$MNT" || die "mount $LOOPDEV failed"
    MOUNTED=1
    mkdir -p "$MNT/d" "$MNT/e"
    local dio
    dio=$(losetup -n -O DIO "$LOOPDEV" | tr -d ' ')
    echo "loop device: $LOOPDEV (direct-io=$dio) on $IMG ($IMG_SIZE sparse), ext4 mounted on $MNT"
}

run_case() {
    local case=$1 dir ddir coldcheck files p first tool pos
    dir=$(case_dir "$case")
    ddir=$(case_ddir "$case")
    files=$(case_files "$case")
    coldcheck=0
    case "$case" in a|b|c) coldcheck=1 ;; esac
    mkdir -p "$dir"
    echo
    echo "-- case $case: $(case_title "$case")"
    echo "   load average at case start: $(cut -d' ' -f1-4 /proc/loadavg)"
    fio_cmd "$case" "$dir"
    iolab_cmd "$case" "$dir"
    echo "   fio:   ${FIO[*]:1}"
    echo "   iolab: iolab ${IOL[*]:1}"
    [ "$case" = a ] && echo "   preadloop: preadloop $dir/iolab-micro.0 $BS $PC_LOOPS"

    # Untimed warm-up: iolab creates (or reuses) the files, then one run of each tool.
    local t
    for t in iolab fio iolab; do
        before_run "$case" "$t"
        if [ "$t" = fio ]; then
            fio_cmd "$case" "$dir"; "${FIO[@]}" --output="$WORK/warmup.json" >/dev/null 2>"$WORK/warmup.err" \
                || { cat "$WORK/warmup.err" >&2; die "fio warm-up of case $case failed"; }
        else
            iolab_cmd "$case" "$dir"; "${IOL[@]}" >/dev/null 2>"$WORK/warmup.err" \
                || { cat "$WORK/warmup.err" >&2; die "iolab warm-up of case $case failed"; }
        fi
    done
    if [ "$case" = a ]; then
        "$PREADLOOP" "$dir/iolab-micro.0" "$BS" 1 >/dev/null || die "preadloop warm-up failed"
    fi

    if [ "$STRACE" = 1 ] && { [ "$case" = d ] || [ "$case" = e ]; }; then
        strace_check "$case"
    fi

    for ((p = 1; p <= PAIRS; p++)); do
        local order
        if [ "$case" = a ]; then
            if ((p % 2)); then order="fio iolab preadloop"; else order="preadloop iolab fio"; fi
        else
            if ((p % 2)); then order="fio iolab"; else order="iolab fio"; fi
        fi
        pos=0
        for tool in $order; do
            pos=$((pos + 1))
            before_run "$case" "$tool"
            case "$tool" in
                fio)
                    fio_cmd "$case" "$dir"
                    run_one "$case" "$p" "$pos" fio "$ddir" "$coldcheck" "$files" -- \
                        "${FIO[@]}" ;;
                iolab)
                    iolab_cmd "$case" "$dir"
                    run_one "$case" "$p" "$pos" iolab "$ddir" "$coldcheck" "$files" -- "${IOL[@]}" ;;
                preadloop)
                    run_one "$case" "$p" "$pos" preadloop "$ddir" "$coldcheck" "$files" -- \
                        "$PREADLOOP" "$dir/iolab-micro.0" "$BS" "$PC_LOOPS" ;;
            esac
        done
        echo "   pair $p/$PAIRS done"
    done
    python3 "$HELPER" table "$RESULTS" "$case" "$(case_title "$case")"
    # The page-cache files of a case are not needed any more once it and its sibling are done.
    if [ "$case" = b ] || { [ "$case" = a ] && ! want b; } || [ "$case" = c ]; then
        rm -rf "$dir"
    fi
}

# ---------------------------------------------------------------------------------------------
START=$(date +%s)
echo "iolab vs fio — $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host: $(uname -n), $NCPU CPUs, kernel $(uname -r); $(fio --version); $("$IOLAB" --version)"
echo "load average at start: $(cut -d' ' -f1-4 /proc/loadavg)   (1, 5, 15 min; running/total tasks)"
echo "pairs per case: $PAIRS$([ "$QUICK" = 1 ] && echo ' (quick)'); cases: $(printf '%s' "${!WANT[@]}" | fold -w1 | sort | paste -sd,)"
echo "page-cache files under $WORK (on $(df --output=fstype "$WORK" | tail -1 | tr -d ' '))"
cat <<'EOF'
notes: - fio runs with its defaults for latency recording (slat, clat and lat per I/O); iolab
         always records per-op latency; preadloop records none (it is the bare-loop limit).
       - CPU-s/op = CPU time of the worker threads only / ops. fio: (usr_cpu+sys_cpu)% x
         job_runtime (both summed over the jobs with group_reporting); iolab: cpu.cpu_ns_per_op
         (getrusage RUSAGE_THREAD); preadloop: getrusage RUSAGE_THREAD around its loop.
       - ratios are medians of the per-pair ratios; "bg CPU%" is the CPU used on the machine by
         anything but the measured tool's process during the pair's runs (max over the pair;
         "med": median over all runs), as a % of all CPUs: other users, and kernel threads.
       - a '*' after an IOPS value: the system kept reading from disk during that page-cache run
         even after re-warming, so it is not a page-cache number.
EOF

if want d || want e; then
    if [ "$IS_ROOT" = 1 ]; then
        setup_loop
    else
        echo "cases d and e skipped: they need root (losetup, mkfs.ext4, mount)"
        unset 'WANT[d]' 'WANT[e]'
    fi
fi

for c in a b c d e; do
    want "$c" && run_case "$c"
done

python3 "$HELPER" summary "$RESULTS.summary"
if [ -n "$SAVE" ]; then
    cp "$RESULTS" "$SAVE" && echo "per-run numbers saved to $SAVE"
fi
echo
echo "load average at end: $(cut -d' ' -f1-4 /proc/loadavg); wall time $(( $(date +%s) - START )) s"
