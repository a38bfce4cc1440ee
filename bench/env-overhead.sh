#!/usr/bin/env bash
# bench/env-overhead.sh — what running in a container costs: the same micro workload on the
# host and in a container iolab makes (same CPU set, no limits), as one iolab experiment with
# an `env` factor whose rounds interleave the two (random order within each round).
#
# Per round (a pair): the container's figure over the host's. Prints the median of the
# per-pair ratios with its distribution-free 95 % CI, next to the target (within 3 %).
# Cases: t (4 KiB random reads on tmpfs: the page cache, CPU-bound, the most system calls per
# second) and d (4 KiB O_DIRECT random reads on a loop image with direct I/O: the device).
# It is a measurement, not a test: it exits 0 whatever the figures, non-zero only on errors.
#
# Usage: bench/env-overhead.sh [--pairs N] [--cases t,d] [--time 2s] [--iolab PATH]
#                              [--no-build] [--quick]
# See bench/README.md ("env-overhead.sh").
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)

PAIRS=20
CASES="t,d"
TIME=2s
IOLAB=""
BUILD=1

usage() {
    cat <<'EOF'
Usage: bench/env-overhead.sh [options]

  --pairs N       interleaved pairs (rounds) per case (default 20; 3 with --quick)
  --cases LIST    t (tmpfs, page cache), d (O_DIRECT on a loop image); default t,d
  --time D        each run's timed region (default 2s; 1s with --quick)
  --quick         smoke run: 3 pairs of 1 s
  --iolab PATH    use this iolab binary (default: build target/release/iolab with cargo)
  --no-build      do not run cargo build; use target/release/iolab as it is
  -h, --help      this text

Needs root (loop devices, mounts, cgroups, namespaces) and python3.
EOF
}

BENCH_NAME=env-overhead
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

PAIRS_SET=0
while [ $# -gt 0 ]; do
    case "$1" in
        --pairs) PAIRS=${2:?--pairs needs a value}; PAIRS_SET=1; shift 2 ;;
        --cases) CASES=${2:?--cases needs a value}; shift 2 ;;
        --time) TIME=${2:?--time needs a value}; shift 2 ;;
        --quick) [ "$PAIRS_SET" = 1 ] || PAIRS=3; TIME=1s; shift ;;
        --iolab) IOLAB=${2:?--iolab needs a value}; BUILD=0; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
[ "$IS_ROOT" = 1 ] || die "needs root (loop devices, mounts, cgroups, namespaces)"
need python3 python3
resolve_iolab

WORK=$(mktemp -d /var/tmp/iolab-env-overhead.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export IOLAB_STATE_DIR="$WORK/state"

run_case() { # run_case NAME TARGET MICRO
    local name=$1 target=$2 micro=$3
    cat >"$WORK/$name.toml" <<TOML
name = "env overhead: $name"
seed = 1
[factors]
env = ["host", "container"]
[sut]
target = $target
environment = "\${env}"
[workload]
micro = $micro
[repetitions]
min = $PAIRS
max = $PAIRS
metric = "ops_per_s"
[procedure]
order = "random"
TOML
    note "case $name: $PAIRS pairs of $TIME runs"
    "$IOLAB" run "$WORK/$name.toml" --db "$WORK/$name.db" --quiet >"$WORK/$name.out" 2>&1 \
        || die "case $name: iolab run failed: $(tail -5 "$WORK/$name.out")"
    "$IOLAB" export --db "$WORK/$name.db" --format json >"$WORK/$name.json"
}

IFS=, read -r -a cases <<<"$CASES"
for c in "${cases[@]}"; do
    case "$c" in
        t) run_case tmpfs '{ kind = "tmpfs", size = "256M" }' \
               "{ access = \"randread\", bs = \"4k\", size = \"64m\", time = \"$TIME\", loops = 1000 }" ;;
        d) run_case direct "{ kind = \"loop_image\", size = \"512M\", direct_io = true }
fs = { kind = \"ext4\" }" \
               "{ access = \"randread\", sync = \"direct\", bs = \"4k\", size = \"128m\", time = \"$TIME\", loops = 1000 }" ;;
        *) die "unknown case $c (t, d)" ;;
    esac
done

python3 - "$WORK" "${cases[@]}" <<'PY'
import json, math, statistics, sys

work, cases = sys.argv[1], sys.argv[2:]
names = {"t": "tmpfs", "d": "direct"}
what = {"t": "4 KiB random reads on tmpfs (page cache)",
        "d": "4 KiB O_DIRECT random reads, loop image with direct I/O"}

def med_ci(xs):
    """Distribution-free 95 % CI of the median (order statistics); None below 6 values."""
    xs = sorted(xs)
    n = len(xs)
    k, tail = 0, 0.0
    while True:
        tail += math.comb(n, k) / 2 ** n
        if tail > 0.025:
            break
        k += 1
    return (xs[k - 1], xs[n - k]) if k >= 1 else None

def metric(run, name):
    return next((m["value"] for m in run["metrics"] if m["name"] == name), None)

for c in cases:
    d = json.load(open(f"{work}/{names[c]}.json"))
    by = {}
    for cfg in d["configs"]:
        env = cfg["label"].split("=", 1)[1]
        for r in cfg["runs"]:
            if r["status"] == "ok":
                by.setdefault(r["repetition"], {})[env] = r
    pairs = [(p["host"], p["container"]) for _, p in sorted(by.items()) if len(p) == 2]
    print(f"\ncase {c}: {what[c]}, {len(pairs)} interleaved pairs, CPUs "
          f"{pairs[0][0]['environment']['environment']['cpuset'] if pairs else '?'}")
    for m, label in (("ops_per_s", "throughput, container / host"),
                     ("lat_p50_ns", "p50 latency, container / host")):
        xs = [metric(ct, m) / metric(h, m) for h, ct in pairs
              if metric(h, m) and metric(ct, m) is not None]
        if not xs:
            continue
        med, ci = statistics.median(xs), med_ci(xs)
        lo_t, hi_t = 0.97, 1.03
        verdict = "PASS" if lo_t <= med <= hi_t else "FAIL"
        if ci:
            verdict += (", CI inside" if lo_t <= ci[0] and ci[1] <= hi_t
                        else ", CI outside" if ci[1] < lo_t or ci[0] > hi_t else ", CI across")
        c_txt = "-" if ci is None else f"{ci[0]:.3f} .. {ci[1]:.3f}"
        print(f"  {label:<32} {med:.3f}  (95 % CI {c_txt})   target 0.97..1.03  {verdict}")
PY
