#!/usr/bin/env bash
# bench/syscall-cost.sh — what counting system calls costs: `iolab trace --syscalls` against
# `strace -f -c` and `perf trace -s`, on the worst case (a 4 KiB pread loop on tmpfs: the most
# system calls per second), and fio's 4 KiB randread on tmpfs alone against under iolab.
#
# Interleaved pairs (the order alternates). Case p, per pair: preadloop bare, under iolab,
# under strace, under perf trace; the cost of a tool is its ns per pread over the bare run's,
# minus 1. Case f, per pair: fio alone and under `iolab trace --syscalls`; the ratio of IOPS.
# Prints the medians of the per-pair figures with their 95 % CIs next to the targets.
# It is a measurement, not a test: it exits 0 whatever the figures, non-zero only on errors.
#
# Usage: bench/syscall-cost.sh [--pairs N] [--cases p,f] [--quick] [--iolab PATH] [--no-build]
#                              [--save FILE]
# See bench/README.md ("syscall-cost.sh").
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)

PAIRS=20
CASES="p,f"
QUICK=0
IOLAB=""
BUILD=1
SAVE=""

usage() {
    cat <<'EOF'
Usage: bench/syscall-cost.sh [options]

  --pairs N       interleaved pairs per case (default 20; at least 10 for the CIs to mean
                  something; 3 with --quick)
  --cases LIST    p (preadloop: bare, iolab, strace, perf trace), f (fio alone, under iolab);
                  default p,f
  --quick         smoke run: 3 pairs, shorter runs
  --iolab PATH    use this iolab binary (default: build target/release/iolab with cargo)
  --no-build      do not run cargo build; use target/release/iolab as it is
  --save FILE     also write every run's numbers to FILE (JSON lines)
  -h, --help      this text

Needs root (it mounts a tmpfs; iolab's tracer and perf trace need it too), gcc, fio, strace,
perf and python3 (installed with apt-get when missing, except perf).
EOF
}

BENCH_NAME=syscall-cost
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

PAIRS_SET=0
while [ $# -gt 0 ]; do
    case "$1" in
        --pairs) PAIRS=${2:?--pairs needs a value}; PAIRS_SET=1; shift 2 ;;
        --pairs=*) PAIRS=${1#*=}; PAIRS_SET=1; shift ;;
        --cases) CASES=${2:?--cases needs a value}; shift 2 ;;
        --cases=*) CASES=${1#*=}; shift ;;
        --quick) QUICK=1; shift ;;
        --iolab) IOLAB=${2:?--iolab needs a value}; BUILD=0; shift 2 ;;
        --iolab=*) IOLAB=${1#*=}; BUILD=0; shift ;;
        --no-build) BUILD=0; shift ;;
        --save) SAVE=${2:?--save needs a value}; shift 2 ;;
        --save=*) SAVE=${1#*=}; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[ "$QUICK" = 1 ] && [ "$PAIRS_SET" = 0 ] && PAIRS=3
[[ "$PAIRS" =~ ^[1-9][0-9]*$ ]] || die "--pairs must be a positive integer, got '$PAIRS'"
for c in ${CASES//,/ }; do
    case "$c" in p|f) ;; *) die "--cases: unknown case '$c' (p, f)" ;; esac
done
[ "$IS_ROOT" = 1 ] || die "needs root: it mounts a tmpfs, and the tracers need root"

need gcc gcc
need python3 python3
need fio fio
need strace strace
command -v perf >/dev/null || die "perf is missing (Debian: linux-perf); case p needs it"
resolve_iolab

# Sizes: the bare loop and iolab read the file LOOPS times (~1 s); strace and perf trace,
# 40-140 times slower, SLOW_LOOPS times (the figure is ns per pread, whatever the count).
FILE_MIB=256; LOOPS=16; SLOW_LOOPS=1; FIO_TIME=5
if [ "$QUICK" = 1 ]; then FILE_MIB=64; LOOPS=4; SLOW_LOOPS=1; FIO_TIME=2; fi

WORK=$(mktemp -d /tmp/iolab-syscall-cost.XXXXXX)
MNT="$WORK/mnt"
cleanup() {
    mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$MNT"
mount -t tmpfs -o "size=$((FILE_MIB * 2 + 64))m" iolab-syscall-cost "$MNT"
gcc -O2 -o "$WORK/preadloop" "$BENCH_DIR/preadloop.c"
head -c "$((FILE_MIB << 20))" /dev/urandom >"$MNT/file"
RESULTS="$WORK/runs.jsonl"
: >"$RESULTS"

note "iolab: $IOLAB; $(uname -r); $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
note "work dir $WORK (tmpfs on $MNT, ${FILE_MIB} MiB file); $PAIRS pairs per case"

# One preadloop run: `run_p PAIR TOOL`; appends {case, pair, tool, ops, ns_per_op, ...}.
run_p() {
    local pair=$1 tool=$2 out loops=$LOOPS
    case "$tool" in strace|perf) loops=$SLOW_LOOPS ;; esac
    local loop=("$WORK/preadloop" "$MNT/file" 4096 "$loops" "$pair")
    # preadloop's line and (under iolab) iolab's JSON report share stdout: the line comes
    # first, when preadloop exits; the report after.
    case "$tool" in
        bare) "${loop[@]}" >"$WORK/out" ;;
        iolab) "$IOLAB" trace --syscalls --json -- "${loop[@]}" >"$WORK/out" ;;
        strace) strace -f -c -o /dev/null "${loop[@]}" >"$WORK/out" ;;
        perf) perf trace -s -o "$WORK/perf.out" "${loop[@]}" >"$WORK/out" ;;
    esac
    out=$(grep '^ops=' "$WORK/out") || die "preadloop under $tool printed no result"
    [ "$tool" = iolab ] && grep -v '^ops=' "$WORK/out" >"$WORK/iolab.json"
    local extra="{}"
    [ "$tool" = iolab ] && extra=$(python3 - "$WORK/iolab.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["syscalls"]
k = {x["name"]: x for x in d["kinds"]}
p = k.get("pread64", {})
four_k = sum(b["count"] for b in (p.get("sizes") or {}).get("buckets", []) if b["low"] == 4096)
c = d.get("cost") or {}
print(json.dumps({"counted_preads_4k": four_k, "self_counted_ns": c.get("counted_call_ns"),
                  "self_any_ns": c.get("any_call_ns"), "self_base_ns": c.get("base_ns")}))
PY
)
    python3 - "$pair" "$tool" "$out" "$extra" >>"$RESULTS" <<'PY'
import json, sys
pair, tool, line, extra = sys.argv[1:5]
kv = dict(x.split("=", 1) for x in line.split())
r = {"case": "p", "pair": int(pair), "tool": tool, "ops": int(kv["ops"]),
     "ns_per_op": int(kv["elapsed_ns"]) / int(kv["ops"]), "cpu_ns_per_op": float(kv["cpu_ns_per_op"])}
r.update(json.loads(extra))
print(json.dumps(r))
PY
}

# One fio run: `run_f PAIR TOOL` (alone | iolab); appends {case, pair, tool, iops}.
run_f() {
    local pair=$1 tool=$2
    local job=(fio --name=randread --filename="$MNT/file" --rw=randread --bs=4k
               --size="${FILE_MIB}m" --ioengine=psync --invalidate=0 --time_based
               --runtime="$FIO_TIME" --output-format=json --output="$WORK/fio.json")
    case "$tool" in
        alone) "${job[@]}" ;;
        iolab) "$IOLAB" trace --syscalls --json -- "${job[@]}" >"$WORK/iolab.json" ;;
    esac
    python3 - "$pair" "$tool" "$WORK/fio.json" "$WORK/iolab.json" >>"$RESULTS" <<'PY'
import json, sys
pair, tool, fio, iolab = sys.argv[1:5]
j = json.load(open(fio))["jobs"][0]["read"]
r = {"case": "f", "pair": int(pair), "tool": tool, "iops": j["iops"], "ios": j["total_ios"]}
if tool == "iolab":
    k = {x["name"]: x for x in json.load(open(iolab))["syscalls"]["kinds"]}
    r["counted_preads"] = k.get("pread64", {}).get("calls", 0)
print(json.dumps(r))
PY
}

# Warm-up, untimed: the file's pages, the binaries, the tracer's first start.
"$WORK/preadloop" "$MNT/file" 4096 1 >/dev/null
"$IOLAB" trace --syscalls --json -- true >/dev/null

for c in ${CASES//,/ }; do
    for p in $(seq 1 "$PAIRS"); do
        if [ "$c" = p ]; then
            if [ $((p % 2)) = 1 ]; then order="bare iolab strace perf"; else order="perf strace iolab bare"; fi
            for t in $order; do run_p "$p" "$t"; done
        else
            if [ $((p % 2)) = 1 ]; then order="alone iolab"; else order="iolab alone"; fi
            for t in $order; do run_f "$p" "$t"; done
        fi
        note "case $c pair $p/$PAIRS done (load $(cut -d' ' -f1 /proc/loadavg))"
    done
done
[ -n "$SAVE" ] && cat "$RESULTS" >>"$SAVE"

python3 - "$RESULTS" <<'PY'
import json, math, statistics, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]

def med_ci(xs):
    """The median's distribution-free 95 % confidence interval: order statistics k and n+1-k,
    with k the largest such that a Binomial(n, 1/2) falls below k with probability <= 2.5 %.
    None below 6 values (no such k)."""
    xs = sorted(xs)
    n = len(xs)
    k, tail = 0, 0.0
    while True:
        tail += math.comb(n, k) / 2 ** n
        if tail > 0.025:
            break
        k += 1
    return (xs[k - 1], xs[n - k]) if k >= 1 else None

def fmt(m, ci, pct=False):
    f = (lambda x: f"{x * 100:+.1f} %") if pct else (lambda x: f"{x:.3f}")
    c = "-" if ci is None else f"{f(ci[0])} .. {f(ci[1])}"
    return f"{f(m):>10}  (95 % CI {c})"

def summary(label, xs, target, ok, pct=False):
    m = statistics.median(xs)
    ci = med_ci(xs)
    verdict = "PASS" if ok(m) else "FAIL"
    if ci is not None:
        inside = ok(ci[0]) and ok(ci[1])
        outside = not ok(ci[0]) and not ok(ci[1])
        verdict += ", CI inside" if inside else ", CI outside" if outside else ", CI across"
    print(f"  {label:<36} {fmt(m, ci, pct)}   target {target:<8} {verdict}")

p = [r for r in rows if r["case"] == "p"]
if p:
    by = {(r["pair"], r["tool"]): r for r in p}
    pairs = sorted({r["pair"] for r in p})
    print("\ncase p: 4 KiB pread loop on tmpfs, ns per pread (per pair), cost = tool / bare - 1")
    print(f"{'':>5} {'wall time per pread, ns':^36}   {'cost':^28}   {'CPU cost':^16}")
    print(f"{'pair':>5} {'bare':>8} {'iolab':>8} {'strace':>9} {'perf':>9}   {'iolab':>8} {'strace':>9} {'perf':>9}"
          f"   {'iolab':>7} {'strace':>8}  counted")
    cost = {"iolab": [], "strace": [], "perf": []}
    cpu_cost = {"iolab": [], "strace": []}
    for q in pairs:
        b = by[(q, "bare")]
        cells, costs = [], []
        for t in ("iolab", "strace", "perf"):
            x = by[(q, t)]["ns_per_op"]
            cells.append(x)
            cost[t].append(x / b["ns_per_op"] - 1)
            costs.append(f"{(x / b['ns_per_op'] - 1) * 100:+.1f}%")
        # perf trace's own threads do its work: the loop's CPU time does not show it.
        for t in cpu_cost:
            cpu_cost[t].append(by[(q, t)]["cpu_ns_per_op"] / b["cpu_ns_per_op"] - 1)
        i = by[(q, "iolab")]
        counted = "ok" if i.get("counted_preads_4k") == i["ops"] else f"{i.get('counted_preads_4k')} != {i['ops']}"
        print(f"{q:>5} {b['ns_per_op']:>8.0f} {cells[0]:>8.0f} {cells[1]:>9.0f} {cells[2]:>9.0f}   "
              f"{costs[0]:>8} {costs[1]:>9} {costs[2]:>9}   {cpu_cost['iolab'][-1] * 100:>+6.1f}%"
              f" {cpu_cost['strace'][-1] * 100:>+7.0f}%  {counted}")
    summary("iolab's cost (wall time)", cost["iolab"], "<= 15 %", lambda x: x <= 0.15, pct=True)
    summary("iolab's cost (the loop's CPU time)", cpu_cost["iolab"], "<= 15 %", lambda x: x <= 0.15, pct=True)
    summary("strace -f -c's cost", cost["strace"], "-", lambda x: True, pct=True)
    summary("perf trace -s's cost", cost["perf"], "-", lambda x: True, pct=True)
    for t in ("strace", "perf"):
        ratio = [s / i if i > 0 else math.inf for s, i in zip(cost[t], cost["iolab"])]
        summary(f"{t}'s cost / iolab's", ratio, ">= 10", lambda x: x >= 10)
    own = [by[(q, "iolab")].get("self_counted_ns") for q in pairs]
    own = [x for x in own if x is not None]
    if own:
        extra = [by[(q, "iolab")]["ns_per_op"] - by[(q, "bare")]["ns_per_op"] for q in pairs]
        print(f"  iolab's own estimate: +{statistics.median(own):.0f} ns per counted call "
              f"(median over runs); measured here: +{statistics.median(extra):.0f} ns per pread")

f = [r for r in rows if r["case"] == "f"]
if f:
    by = {(r["pair"], r["tool"]): r for r in f}
    pairs = sorted({r["pair"] for r in f})
    print("\ncase f: fio 4 KiB randread (psync) on tmpfs, IOPS")
    print(f"{'pair':>5} {'alone':>10} {'iolab':>10} {'ratio':>7}  counted preads / fio's I/Os")
    ratios = []
    for q in pairs:
        a, i = by[(q, "alone")], by[(q, "iolab")]
        ratios.append(i["iops"] / a["iops"])
        print(f"{q:>5} {a['iops']:>10.0f} {i['iops']:>10.0f} {ratios[-1]:>7.3f}  "
              f"{i.get('counted_preads')} / {i['ios']}")
    summary("IOPS under iolab / alone", ratios, ">= 0.85", lambda x: x >= 0.85)
PY
note "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
