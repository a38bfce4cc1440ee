#!/usr/bin/env bash
# bench/vs-classic.sh — `iolab sqlite|iozone|bonnie` vs Mobibench, iozone and bonnie++, side by
# side, interleaved.
#
# For each job (two Mobibench DB jobs, one iozone job, one bonnie++ job) and each place (ext4 on
# a direct-I/O loop device: device-bound; a tmpfs: CPU-bound), runs the real tool and the iolab
# equivalent N pairs, alternating which goes first, on the same filesystem, and prints per pair
# each tool's figures, the medians, the median of the per-pair ratios iolab/tool and of the
# CPU-seconds per operation, next to the targets (device: within 5 % of the tool; tmpfs:
# throughput >= 1.0x and CPU-s/op <= the tool's).
# It is a measurement, not a test: it exits 0 whatever the ratios, non-zero only on errors.
#
# Usage: bench/vs-classic.sh [--jobs LIST] [--places LIST] [--pairs N] [--quick] [--iolab PATH]
#                            [--no-build] [--tools-only] [--aa] [--mobibench PATH] [--iozone PATH]
#                            [--bonnie PATH] [--cpu N|auto] [--level MIB|auto] [--settle S]
#                            [--iozone-latency] [--save FILE]
#        bench/vs-classic.sh --tables FILE[,FILE...]
# See bench/README.md ("vs-classic.sh") for the exact command lines and how to read the output.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)

JOBS="mobi-wal,mobi-truncate,iozone,bonnie"
PLACES="dev,tmpfs"
PAIRS=""
QUICK=0
IOLAB=""
BUILD=1
TOOLS_ONLY=0
SAVE=""
PIN_CPU=none
LEVEL=auto
SETTLE=4
IOZ_LATENCY=false
AA=0
TABLES=""
export VS_CLASSIC_AA=0
MOBIBENCH="${MOBIBENCH:-}"
IOZONE="${IOZONE:-}"
BONNIE="${BONNIE:-}"

usage() {
    cat <<'EOF'
Usage: bench/vs-classic.sh [options]

  --jobs LIST       jobs to run, comma-separated (default: all)
                      mobi-wal       Mobibench -d 0 -n 1000 -j 3 -s 2   vs iolab sqlite
                      mobi-truncate  Mobibench -d 0 -n 1000 -j 1 -s 2   vs iolab sqlite
                      iozone         iozone -i 0 -i 1 -i 2 -e -I -s 64m -r 4k   vs iolab iozone
                      bonnie         bonnie++ block write/rewrite/read   vs iolab bonnie
  --places LIST     dev (ext4 on a direct-I/O loop device), tmpfs (default: dev,tmpfs)
  --pairs N         interleaved tool/iolab pairs per job and place (default 5; 2 with --quick)
  --quick           smoke run: 2 pairs, 200 transactions, 16 MiB files
  --iolab PATH      use this iolab binary (default: build target/release/iolab with cargo)
  --no-build        do not run cargo build; use target/release/iolab as it is
  --tools-only      run the reference tools alone (no iolab): checks the tools and the parsing
  --aa              A/A run: the reference tool in both slots of every pair (the "iolab"
                    columns are its second copy): how far this machine scatters a tool
                    against itself, the floor under every iolab/tool ratio
  --mobibench PATH  Mobibench's shell binary (default: $MOBIBENCH, else `mobibench` on PATH)
  --iozone PATH     iozone binary (default: $IOZONE, else `iozone` on PATH)
  --bonnie PATH     bonnie++ binary (default: $BONNIE, else `bonnie++` on PATH, installed
                    from Debian when missing)
  --cpu N|auto      run both tools on CPU N only (taskset); auto: the CPU that took most
                    interrupts of the disk under /var/tmp, else the last CPU (default: unpinned)
  --level MIB|auto  before every run, touch and free MIB MiB of memory so that both tools
                    allocate from the same kind of pages (default auto: the job's file +
                    512 MiB on tmpfs, 512 MiB on dev; 0: off)
  --settle S        then wait S seconds before the run starts, so that the freed memory has
                    been handed back to the host before either tool allocates (default 4; 0: off)
  --iozone-latency  time every record in iolab's iozone runs (its default; the bench's is
                    --latency false, as iozone times passes only)
  --save FILE       also write every run's parsed numbers to FILE (JSON lines)
  --tables LIST     run nothing: print the tables and the summary of the --save FILEs given
                    (comma-separated), their pairs pooled per job and place (no root needed);
                    --jobs and --places select among them, --save keeps the pooled runs
  -h, --help        this text

Needs root (losetup, mkfs.ext4, mount, unshare). Mobibench and iozone are not built by this
script: build them from their public sources outside the repository (bench/README.md says
how); a job whose tool is missing is skipped with a message.
EOF
}

BENCH_NAME=vs-classic
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

while [ $# -gt 0 ]; do
    case "$1" in
        --jobs) JOBS=${2:?--jobs needs a value}; shift 2 ;;
        --jobs=*) JOBS=${1#*=}; shift ;;
        --places) PLACES=${2:?--places needs a value}; shift 2 ;;
        --places=*) PLACES=${1#*=}; shift ;;
        --pairs) PAIRS=${2:?--pairs needs a value}; shift 2 ;;
        --pairs=*) PAIRS=${1#*=}; shift ;;
        --quick) QUICK=1; shift ;;
        --iolab) IOLAB=${2:?--iolab needs a value}; BUILD=0; shift 2 ;;
        --iolab=*) IOLAB=${1#*=}; BUILD=0; shift ;;
        --no-build) BUILD=0; shift ;;
        --tools-only) TOOLS_ONLY=1; BUILD=0; shift ;;
        --aa) AA=1; VS_CLASSIC_AA=1; BUILD=0; shift ;;
        --mobibench) MOBIBENCH=${2:?--mobibench needs a value}; shift 2 ;;
        --mobibench=*) MOBIBENCH=${1#*=}; shift ;;
        --iozone) IOZONE=${2:?--iozone needs a value}; shift 2 ;;
        --iozone=*) IOZONE=${1#*=}; shift ;;
        --bonnie) BONNIE=${2:?--bonnie needs a value}; shift 2 ;;
        --bonnie=*) BONNIE=${1#*=}; shift ;;
        --cpu) PIN_CPU=${2:?--cpu needs a value}; shift 2 ;;
        --cpu=*) PIN_CPU=${1#*=}; shift ;;
        --level) LEVEL=${2:?--level needs a value}; shift 2 ;;
        --level=*) LEVEL=${1#*=}; shift ;;
        --settle) SETTLE=${2:?--settle needs a value}; shift 2 ;;
        --settle=*) SETTLE=${1#*=}; shift ;;
        --iozone-latency) IOZ_LATENCY=true; shift ;;
        --save) SAVE=${2:?--save needs a value}; shift 2 ;;
        --save=*) SAVE=${1#*=}; shift ;;
        --tables) TABLES=${2:?--tables needs a value}; shift 2 ;;
        --tables=*) TABLES=${1#*=}; [ -n "$TABLES" ] || die "--tables needs a value"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done

if [ -z "$PAIRS" ]; then
    if [ "$QUICK" = 1 ]; then PAIRS=2; else PAIRS=5; fi
fi
[[ "$PAIRS" =~ ^[1-9][0-9]*$ ]] || die "--pairs must be a positive integer, got '$PAIRS'"
[ "$LEVEL" = auto ] || [[ "$LEVEL" =~ ^[0-9]+$ ]] || die "--level must be a number of MiB or 'auto', got '$LEVEL'"
[[ "$SETTLE" =~ ^[0-9]+$ ]] || die "--settle must be a whole number of seconds, got '$SETTLE'"
[ -n "$TABLES" ] || [ "$IS_ROOT" = 1 ] || die "needs root: it attaches a loop device, mounts ext4 and a tmpfs"
declare -a TABLE_FILES=()
if [ -n "$TABLES" ]; then
    IFS=',' read -r -a TABLE_FILES <<<"$TABLES"
    for f in "${TABLE_FILES[@]}"; do
        [ -r "$f" ] || die "--tables: cannot read '$f' (a file written by --save)"
    done
fi

declare -A WANT=()
ALL_JOBS="mobi-wal mobi-truncate iozone bonnie"
IFS=',' read -r -a _jobs <<<"$JOBS"
for j in "${_jobs[@]}"; do
    case "$j" in
        mobi-wal|mobi-truncate|iozone|bonnie) WANT[$j]=1 ;;
        "") ;;
        *) die "unknown job '$j' (expected mobi-wal, mobi-truncate, iozone, bonnie)" ;;
    esac
done
[ ${#WANT[@]} -gt 0 ] || die "no job selected"
declare -A WHERE=()
IFS=',' read -r -a _places <<<"$PLACES"
for p in "${_places[@]}"; do
    case "$p" in
        dev|tmpfs) WHERE[$p]=1 ;;
        "") ;;
        *) die "unknown place '$p' (expected dev, tmpfs)" ;;
    esac
done
[ ${#WHERE[@]} -gt 0 ] || die "no place selected"
want() { [ -n "${WANT[$1]:-}" ]; }
where() { [ -n "${WHERE[$1]:-}" ]; }

# ---------------------------------------------------------------------------------------------
# Sizes. The issue's jobs: 1000 transactions, a 64 MiB file in 4 KiB records.
if [ "$QUICK" = 1 ]; then
    MOBI_N=200; IOZ_MIB=16
else
    MOBI_N=1000; IOZ_MIB=64
fi
# bonnie++ prints +++++ instead of a figure for a phase shorter than 0.5 s, so its file must be
# big enough for each phase to last that long. On the device, both tools also run in a v1
# memory cgroup capped at BON_CAP_MIB (bonnie++'s own rule, file >= 2 x RAM, made true): a
# 2 GiB file is otherwise read back from the page cache in ~0.5 s (and from the capped
# cache of this VM's loop device at ~1 GB/s, hence 2 GiB). On tmpfs the file is RAM.
if [ "$QUICK" = 1 ]; then
    BON_DEV_MIB=1024; BON_TMPFS_MIB=1024
else
    BON_DEV_MIB=2048; BON_TMPFS_MIB=4096
fi
BON_CAP_MIB=128
IMG_SIZE=4G
TMPFS_SIZE=$((BON_TMPFS_MIB / 1024 + 1))g

# ---------------------------------------------------------------------------------------------
# Tools.
need python3 python3
if [ -z "$TABLES" ]; then
need losetup mount
need mkfs.ext4 e2fsprogs
need unshare util-linux
need taskset util-linux

# With --cpu, both tools run on the same one CPU. On a VM the completion of a device request is an
# interrupt on one CPU (virtio-blk: one queue, one CPU); a process sleeping on another CPU is
# woken through an inter-processor interrupt, which a VM pays for with an exit to the host.
# Measured here (iozone -I 4 KiB, the same binary): reads 25-35 % slower on the other CPU.
# Unpinned, the scheduler's placement decides that per run and differently for a
# single-threaded tool and for iolab's freshly spawned workers: noise, and a bias either way.
irq_cpu() { # the CPU that took most interrupts of the disk holding /var/tmp, if it can tell
    local disk
    disk=$(lsblk -no PKNAME "$(df --output=source /var/tmp | tail -1)" 2>/dev/null | head -1)
    [ -n "$disk" ] || disk=$(basename "$(df --output=source /var/tmp | tail -1)")
    local drv
    drv=$(basename "$(readlink -f "/sys/block/$disk/device/driver" 2>/dev/null)" 2>/dev/null)
    local dev
    dev=$(basename "$(readlink -f "/sys/block/$disk/device" 2>/dev/null)" 2>/dev/null)
    [ -n "$dev" ] || return 0
    awk -v d="$dev" -v n="$(nproc)" '$0 ~ d"-req|"d"-q|"d"q" {
        for (i = 2; i <= n + 1; i++) s[i - 2] += $i }
        END { best = -1; for (c in s) if (s[c] > m || best < 0) { m = s[c]; best = c }
              if (best >= 0 && m > 0) print best }' /proc/interrupts
}
if [ "$PIN_CPU" = auto ]; then
    PIN_CPU=$(irq_cpu)
    [ -n "$PIN_CPU" ] || PIN_CPU=$(($(nproc) - 1))
fi
if [ "$PIN_CPU" != none ]; then
    [[ "$PIN_CPU" =~ ^[0-9]+$ ]] && [ "$PIN_CPU" -lt "$(nproc)" ] \
        || die "--cpu must be a CPU number below $(nproc) or 'auto', got '$PIN_CPU'"
fi

find_tool() { # find_tool GIVEN NAME -> prints an executable path or nothing
    local given=$1 name=$2
    if [ -n "$given" ]; then
        [ -x "$given" ] || die "$name: no executable at $given"
        echo "$given"
    else
        command -v "$name" 2>/dev/null || true
    fi
}
if want bonnie && [ -z "$BONNIE" ] && ! command -v bonnie++ >/dev/null 2>&1; then
    apt_install bonnie++
fi
MOBIBENCH=$(find_tool "$MOBIBENCH" mobibench)
IOZONE=$(find_tool "$IOZONE" iozone)
BONNIE=$(find_tool "$BONNIE" bonnie++)
if { want mobi-wal || want mobi-truncate; } && [ -z "$MOBIBENCH" ]; then
    note "no Mobibench (--mobibench PATH or mobibench on PATH): skipping mobi-wal and mobi-truncate"
    note "  build it outside the repository: see bench/README.md, vs-classic.sh"
    unset 'WANT[mobi-wal]' 'WANT[mobi-truncate]'
fi
if want iozone && [ -z "$IOZONE" ]; then
    note "no iozone (--iozone PATH or iozone on PATH): skipping the iozone job"
    note "  build it outside the repository: see bench/README.md, vs-classic.sh"
    unset 'WANT[iozone]'
fi
if want bonnie && [ -z "$BONNIE" ]; then
    note "no bonnie++: skipping the bonnie job"
    unset 'WANT[bonnie]'
fi
[ ${#WANT[@]} -gt 0 ] || { note "no job left to run"; exit 0; }
fi

if [ "$TOOLS_ONLY" = 1 ] || [ "$AA" = 1 ] || [ -n "$TABLES" ]; then
    IOLAB=""
else
    resolve_iolab
fi

# ---------------------------------------------------------------------------------------------
# Work space and clean-up. Only what this script created is removed: its temp dir, its two
# mounts, the loop device it attached and its image file.
WORK=$(mktemp -d /tmp/iolab-vs-classic.XXXXXX)
DEV_MNT="$WORK/dev"
TMPFS_MNT="$WORK/tmpfs"
LOOPDEV=""
IMG=""
DEV_MOUNTED=0
TMPFS_MOUNTED=0
CGROUP=""
unmount() { # unmount DIR: retried, then lazily
    local i
    for i in 1 2 3 4 5; do
        umount "$1" 2>/dev/null && return 0
        sleep 1
    done
    note "$1 still busy; detaching it lazily (umount -l)"
    umount -l "$1" || note "could not unmount $1"
}
cleanup() {
    local rc=$?
    set +e
    [ "$DEV_MOUNTED" = 1 ] && unmount "$DEV_MNT"
    [ "$TMPFS_MOUNTED" = 1 ] && unmount "$TMPFS_MNT"
    if [ -n "$CGROUP" ]; then
        local i
        for i in 1 2 3 4 5; do
            rmdir "$CGROUP" 2>/dev/null && break
            sleep 1
        done
        [ -d "$CGROUP" ] && note "could not remove the memory cgroup $CGROUP"
    fi
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
trap 'exit 129' HUP

RESULTS="$WORK/results.jsonl"
: >"$RESULTS"

# ---------------------------------------------------------------------------------------------
# The report helper: parses each tool's output into one JSON line, and prints the tables.
HELPER="$WORK/report.py"
cat >"$HELPER" <<'PY'
import csv, json, math, os, re, statistics, sys

# Figures compared per job: (key, label, unit). Throughput figures: higher is better.
FIGURES = {
    "mobi": [("tx_per_s", "tx/s", "tx/s")],
    "iozone": [("write", "write", "kB/s"), ("rewrite", "rewrite", "kB/s"),
               ("read", "read", "kB/s"), ("reread", "re-read", "kB/s"),
               ("randread", "random read", "kB/s"), ("randwrite", "random write", "kB/s")],
    "bonnie": [("write", "block write", "K/s"), ("rewrite", "rewrite", "K/s"),
               ("read", "block read", "K/s")],
}
def family(job):
    return "mobi" if job.startswith("mobi") else job

# ---- the reference tools' own output ----
MOBI_TIME = re.compile(r"\[TIME\] :\s*(\d+) sec (\d+)us\.\s+([0-9.]+) Transactions/sec")

def parse_mobibench(text):
    m = MOBI_TIME.search(text)
    if not m:
        raise SystemExit("no '[TIME] : ... Transactions/sec' line in Mobibench's output")
    return {"tx_per_s": float(m.group(3)),
            "elapsed_s": int(m.group(1)) + int(m.group(2)) / 1e6}

# iozone -R: per test a line "<Name> report" (quoted), a line of quoted record sizes, then one
# line per file size: the quoted size in kB and kB/s per record size.
IOZONE_BLOCKS = {"Writer report": "write", "Re-writer report": "rewrite",
                 "Reader report": "read", "Re-Reader report": "reread",
                 "Random read report": "randread", "Random write report": "randwrite",
                 "Backward read report": "bkwdread", "Record rewrite report": "recrewrite",
                 "Stride read report": "strideread", "Fwrite report": "fwrite",
                 "Re-Fwrite report": "refwrite", "Fread report": "fread",
                 "Re-Fread report": "refread"}

def parse_iozone_r(text):
    """{test: {(file_kb, rec_kb): kB/s}} from iozone's -R blocks."""
    out, cur, recs = {}, None, None
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s.startswith('"') and s.endswith('report"'):
            cur = IOZONE_BLOCKS.get(s.strip('"'))
            recs = None
            if cur is not None:
                out[cur] = {}
            continue
        if cur is None:
            continue
        cells = s.split()
        if recs is None:
            if all(re.fullmatch(r'"\d+"', c) for c in cells):
                recs = [int(c.strip('"')) for c in cells]
            continue
        if re.fullmatch(r'"\d+"', cells[0]):
            fkb = int(cells[0].strip('"'))
            for rec, v in zip(recs, cells[1:]):
                out[cur][(fkb, rec)] = float(v)
        else:
            cur = None
    return out

def parse_iozone(text):
    blocks = parse_iozone_r(text)
    r = {}
    for key, _, _ in FIGURES["iozone"]:
        cells = blocks.get(key)
        if not cells or len(cells) != 1:
            raise SystemExit(f"iozone -R output: expected one cell in the '{key}' report, got "
                             f"{len(cells or {})}")
        r[key] = next(iter(cells.values()))
    return r

# bonnie++ -q: one CSV line, format 1.98: fields 11/12 block write rate/%CPU, 13/14 rewrite,
# 17/18 block read (K/sec; "+++++" when the phase took < 0.5 s).
def parse_bonnie(text):
    lines = [l for l in text.splitlines() if l.startswith("1.98,")]
    if len(lines) != 1:
        raise SystemExit(f"expected one bonnie++ CSV line (format 1.98), got {len(lines)}")
    f = next(csv.reader([lines[0]]))
    if len(f) != 50:
        raise SystemExit(f"bonnie++ CSV line has {len(f)} fields, expected 50")
    def num(x):
        return None if x in ("", "+++++", "+++") else float(x)
    return {"write": num(f[11]), "rewrite": num(f[13]), "read": num(f[17]),
            "write_cpu_pct": num(f[12]), "rewrite_cpu_pct": num(f[14]),
            "read_cpu_pct": num(f[18]), "size_mib": f[5], "chunk": f[6]}

# ---- iolab's JSON documents (--json) ----
def parse_iolab(job, text):
    d = json.loads(text)
    fam = family(job)
    try:
        if fam == "mobi":  # iolab.sqlite/1
            return {"tx_per_s": float(d["result"]["transactions_per_s"])}
        if fam == "iozone":  # iolab.iozone/1: one run (no auto mode), a figure per test, MiB/s
            names = {"write": "write", "rewrite": "rewrite", "read": "read", "reread": "reread",
                     "randread": "random_read", "randwrite": "random_write"}
            runs = d["runs"]
            if len(runs) != 1:
                raise SystemExit(f"iolab iozone: expected one run, got {len(runs)}")
            figs = {f["figure"]: f for f in runs[0]["figures"]}
            return {k: float(figs[n]["mib_per_s"]) * 1024.0 for k, n in names.items()}
        if fam == "bonnie":  # iolab.bonnie/1: a phase each, KiB/s
            ph = {p["phase"]: p for p in d["result"]["phases"]}
            return {"write": float(ph["put_block"]["kib_per_s"]),
                    "rewrite": float(ph["rewrite"]["kib_per_s"]),
                    "read": float(ph["get_block"]["kib_per_s"])}
    except KeyError as e:
        raise SystemExit(f"iolab {job} JSON: no {e} where expected")
    raise SystemExit(f"unknown job {job}")

def record(args):
    (job, place, pair, pos, tool, out, ops, wall_ns, busy0, total0, busy1, total1, hz,
     times) = args
    text = open(out, errors="replace").read()
    # --aa: the second slot ran the reference tool too.
    if tool == "iolab" and os.environ.get("VS_CLASSIC_AA") != "1":
        r = parse_iolab(job, text)
    else:
        r = {"mobi": parse_mobibench, "iozone": parse_iozone, "bonnie": parse_bonnie}[
            family(job)](text)
    t = open(times).read().split()
    elapsed, user, sys_, maxrss = float(t[0]), float(t[1]), float(t[2]), int(t[3])
    cpu = user + sys_
    busy = int(busy1) - int(busy0)
    total = int(total1) - int(total0)
    bg = 0.0
    if total > 0:
        bg = max(0.0, (busy - cpu * int(hz)) / total * 100.0)
    r.update({"job": job, "place": place, "pair": int(pair), "pos": int(pos), "tool": tool,
              "aa": os.environ.get("VS_CLASSIC_AA") == "1",
              "title": os.environ.get("VS_CLASSIC_TITLE", ""), "ops": int(ops), "wall_ns": int(wall_ns), "proc_elapsed_s": elapsed,
              "proc_user_s": user, "proc_sys_s": sys_, "proc_cpu_s": cpu, "maxrss_kib": maxrss,
              "cpu_us_per_op": cpu * 1e6 / int(ops), "bg_pct": bg})
    print(json.dumps(r))

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def med_ci(xs):
    """The median's distribution-free 95 % confidence interval: order statistics k and n+1-k,
    with k the largest such that a Binomial(n, 1/2) falls below k with probability <= 2.5 %.
    None below 6 values (no such k)."""
    xs = sorted(x for x in xs if x is not None)
    n = len(xs)
    k, tail = 0, 0.0
    while True:
        tail += math.comb(n, k) / 2 ** n
        if tail > 0.025:
            break
        k += 1
    return (xs[k - 1], xs[n - k]) if k >= 1 else None

def f_ci(ci):
    return "-" if ci is None else f"{ci[0]:.3f}-{ci[1]:.3f}"

def f_rate(x):
    return "-" if x is None else f"{x:,.0f}" if x >= 100 else f"{x:,.2f}"

def f_ratio(x):
    return "-" if x is None else f"{x:.3f}"

def verdict(place, ratio, cratio, ci=None, cci=None):
    """PASS or FAIL on the median, then where the median's 95 % CI lies against the target:
    inside it (sure), outside it (sure) or across its bound (within noise: more pairs). On
    tmpfs the CPU ratio is judged the same way, after a semicolon."""
    if ratio is None:
        return "n/a"
    def where(ok, ci, inside):
        if ci is None:
            return ""
        lo, hi = inside(ci[0]), inside(ci[1])
        if place == "dev" and not lo and not hi and ci[0] < 0.95 < 1.05 < ci[1]:
            return ", CI across both bounds"
        if lo and hi:
            return ", CI inside" if ok else ", CI across"
        if not lo and not hi:
            return ", CI outside" if not ok else ", CI across"
        return ", CI across"
    if place == "dev":
        inside = lambda x: abs(x - 1.0) <= 0.05
        ok = inside(ratio)
        return ("PASS" if ok else "FAIL") + where(ok, ci, inside)
    inside = lambda x: x >= 1.0
    ok = inside(ratio)
    v = ("PASS" if ok else "FAIL") + where(ok, ci, inside)
    if cratio is None:
        return v
    cpu_in = lambda x: x <= 1.0
    cok = cpu_in(cratio)
    v += "; CPU " + ("ok" if cok else "FAIL") + where(cok, cci, cpu_in)
    if ok and not cok:
        v = "FAIL" + v[4:]
    return v

def table(args):
    results, job, place, title, toolname = args
    rows = [json.loads(l) for l in open(results) if l.strip()]
    rows = [r for r in rows if r["job"] == job and r["place"] == place]
    figs = FIGURES[family(job)]
    by = {(r["pair"], r["tool"]): r for r in rows}
    pairs = sorted({r["pair"] for r in rows})
    tools = [t for t in ("tool", "iolab") if any(r["tool"] == t for r in rows)]
    both = len(tools) == 2
    # Saved runs carry their own title (sizes, options); older files do not.
    title = next((r["title"] for r in rows if r.get("title")), title)
    if any(r.get("aa") for r in rows):
        title += " [A/A: the tool against itself]"
    print(f"\n== {job} on {place}: {title} ==")
    short = {"tool": "T", "iolab": "I"}
    # Per pair: each figure of each tool (and the ratio), then CPU us/op; a group per figure.
    W = 12 + (21 if both else 0)
    top = f"{'':10}"
    for _, label, unit in figs + [(None, "CPU us/op", "")]:
        top += f" {(label + (' (' + unit + ')' if unit else '')):^{W}}"
    print(top.rstrip())
    hdr = f"{'pair':>4} {'order':<5}"
    for _ in range(len(figs) + 1):
        hdr += f" {toolname:>12}" + (f" {'iolab':>12} {'ratio':>7}" if both else "")
    hdr += f" {'bg CPU%':>8}"
    print(hdr)
    ratios = {k: [] for k, _, _ in figs}
    # The same ratios by the order within the pair: what the run before carries over shows
    # as a difference between the two.
    by_order = {}
    cratios = []
    for p in pairs:
        prs = [by.get((p, t)) for t in tools]
        if any(x is None for x in prs):
            continue
        order = "-".join(short[r["tool"]] for r in sorted(prs, key=lambda r: r["pos"]))
        line = f"{p:>4} {order:<5}"
        t = by[(p, "tool")] if (p, "tool") in by else None
        i = by.get((p, "iolab"))
        for k, _, _ in figs:
            tv = t.get(k) if t else None
            line += f" {f_rate(tv):>12}"
            if both:
                iv = i.get(k)
                x = iv / tv if (iv is not None and tv) else None
                if x is not None:
                    ratios[k].append(x)
                    by_order.setdefault(order, {}).setdefault(k, []).append(x)
                line += f" {f_rate(iv):>12} {f_ratio(x):>7}"
        line += f" {t['cpu_us_per_op'] if t else 0:>12.2f}"
        if both:
            x = i["cpu_us_per_op"] / t["cpu_us_per_op"] if t["cpu_us_per_op"] else None
            if x is not None:
                cratios.append(x)
            line += f" {i['cpu_us_per_op']:>12.2f} {f_ratio(x):>7}"
        line += f" {max(r['bg_pct'] for r in prs):>8.1f}"
        print(line)
    line = f"{'med':>4} {'':<5}"
    for k, _, _ in figs:
        line += f" {f_rate(med([by[(p, 'tool')].get(k) for p in pairs if (p, 'tool') in by])):>12}"
        if both:
            line += (f" {f_rate(med([by[(p, 'iolab')].get(k) for p in pairs if (p, 'iolab') in by])):>12}"
                     f" {f_ratio(med(ratios[k])):>7}")
    line += f" {med([by[(p, 'tool')]['cpu_us_per_op'] for p in pairs if (p, 'tool') in by]) or 0:>12.2f}"
    if both:
        line += (f" {med([by[(p, 'iolab')]['cpu_us_per_op'] for p in pairs if (p, 'iolab') in by]) or 0:>12.2f}"
                 f" {f_ratio(med(cratios)):>7}")
    line += f" {med([r['bg_pct'] for r in rows]) or 0:>8.1f}"
    print(line)
    missing = [f"{r['tool']} pair {r['pair']} {label}" for r in rows for k, label, _ in figs
               if r.get(k) is None]
    if missing:
        print("  note: no figure (bonnie++ prints +++++ for a phase under 0.5 s): "
              + ", ".join(missing))
    if not both:
        return
    goal = ("within 5 % of the tool (0.95 <= ratio <= 1.05)" if place == "dev"
            else "throughput ratio >= 1.00 and CPU-s/op ratio <= 1.00")
    print(f"  target ({place}): {goal}")
    cm = med(cratios)
    out = []
    for k, label, _ in figs:
        m = med(ratios[k])
        ci = med_ci(ratios[k])
        v = verdict(place, m, cm, ci, med_ci(cratios))
        print(f"    {label:<13} median ratio {f_ratio(m)} (95 % CI {f_ci(ci)})"
              f"   CPU-s/op ratio {f_ratio(cm)} (95 % CI {f_ci(med_ci(cratios))})   {v}")
        out.append({"job": job, "place": place, "figure": label, "ratio": m, "ratio_ci": ci,
                    "cpu_ratio": cm, "cpu_ratio_ci": med_ci(cratios),
                    "n": len(ratios[k]), "verdict": v})
    if len(by_order) == 2:
        print("  by order within the pair (median ratio; balanced orders cancel what each "
              "run inherits from the one before):")
        for order, rs in sorted(by_order.items()):
            n = max(len(v) for v in rs.values())
            cells = ", ".join(f"{label} {f_ratio(med(rs.get(k, [])))}" for k, label, _ in figs)
            print(f"    {order} ({n} pairs): {cells}")
    with open(results + ".summary", "a") as f:
        for o in out:
            f.write(json.dumps(o) + "\n")

def summary(args):
    (path,) = args
    try:
        rows = [json.loads(l) for l in open(path) if l.strip()]
    except FileNotFoundError:
        rows = []
    if not rows:
        return
    print("\n== summary: median of per-pair ratios iolab/tool ==")
    print(f"{'job':<14} {'place':<6} {'figure':<13} {'pairs':>5} {'ratio':>7} {'95 % CI':>11}"
          f" {'CPU ratio':>10}"
          f"  {'target':<22} result")
    for o in rows:
        target = "0.95..1.05" if o["place"] == "dev" else ">= 1.00, CPU <= 1.00"
        print(f"{o['job']:<14} {o['place']:<6} {o['figure']:<13} {o['n']:>5}"
              f" {f_ratio(o['ratio']):>7} {f_ci(o.get('ratio_ci')):>11} {f_ratio(o['cpu_ratio']):>10}  {target:<22} {o['verdict']}")

def run(args):
    """run TIMEFILE -- COMMAND...: runs COMMAND (stdin/stdout/stderr inherited) and writes
    "elapsed_s user_s sys_s maxrss_kib" of it to TIMEFILE: getrusage of the child through
    wait4 (microseconds; every thread, and the children it waited for)."""
    import os, time
    timefile, sep, *cmd = args
    assert sep == "--" and cmd
    t0 = time.monotonic_ns()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        except OSError as e:
            sys.stderr.write(f"cannot run {cmd[0]}: {e}\n")
        os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    t1 = time.monotonic_ns()
    with open(timefile, "w") as f:
        f.write(f"{(t1 - t0) / 1e9:.6f} {ru.ru_utime:.6f} {ru.ru_stime:.6f} {ru.ru_maxrss}\n")
    code = os.waitstatus_to_exitcode(status)
    sys.exit(code if code >= 0 else 128 - code)

def level(args):
    """Touches MIB MiB of fresh anonymous memory and exits, which frees it: the pages a run
    then gets (its page cache, tmpfs file, buffers) come from the same kind of memory for both
    tools. See "Levelling memory" in bench/README.md."""
    import mmap
    (mib,) = args
    m = mmap.mmap(-1, int(mib) << 20)
    chunk = b"\1" * (1 << 20)
    for _ in range(int(mib)):
        m.write(chunk)
    m.close()

def pool(args):
    """pool OUT FILE...: the runs of several --save files as one, each file's pairs numbered
    after the last file's (per job and place); prints the "job place" combinations found.
    Refuses lines that are not --save lines, and A/A runs pooled with iolab runs or runs of
    different sizes under one job and place."""
    out, *files = args
    last, seen, rows, kind = {}, [], [], {}
    for path in files:
        here = []
        for n, l in enumerate(open(path), 1):
            if not l.strip():
                continue
            try:
                r = json.loads(l)
            except ValueError:
                raise SystemExit(f"{path}:{n}: not JSON (expected a line written by --save)")
            if not isinstance(r, dict) or not all(k in r for k in
                                                  ("job", "place", "pair", "pos", "tool")):
                raise SystemExit(f"{path}:{n}: not a --save line (no job, place, pair, pos "
                                 "or tool)")
            here.append(r)
        base = dict(last)
        for r in here:
            key = (r["job"], r["place"])
            k = (bool(r.get("aa")), r.get("title") or None)
            prev = kind.setdefault(key, (k, path))
            if prev[0][0] != k[0]:
                raise SystemExit(f"{path}: {key[0]} on {key[1]}: an A/A run cannot be pooled "
                                 f"with an iolab run ({prev[1]})")
            if k[1] and prev[0][1] and prev[0][1] != k[1]:
                raise SystemExit(f"{path}: {key[0]} on {key[1]}: a different job "
                                 f"('{k[1]}') from {prev[1]} ('{prev[0][1]}')")
            r["pair"] += base.get(key, 0)
            last[key] = max(last.get(key, 0), r["pair"])
            if key not in seen:
                seen.append(key)
            rows.append(r)
    with open(out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    for job, place in seen:
        print(job, place)

if __name__ == "__main__":
    cmd, *rest = sys.argv[1:]
    {"record": record, "table": table, "summary": summary, "run": run, "level": level,
     "pool": pool}[cmd](rest)
PY


# ---------------------------------------------------------------------------------------------
# The jobs: the reference tool's and iolab's command lines, with the same parameters.
place_dir() { case "$1" in dev) echo "$DEV_MNT" ;; tmpfs) echo "$TMPFS_MNT" ;; esac; }
bonnie_mib() { if [ "$1" = dev ]; then echo "$BON_DEV_MIB"; else echo "$BON_TMPFS_MIB"; fi; }

# tool_cmd JOB PLACE DIR: sets CMD to the reference tool's command line.
tool_cmd() {
    local job=$1 place=$2 dir=$3 mib ram
    case "$job" in
        mobi-wal) CMD=("$MOBIBENCH" -p "$dir" -d 0 -n "$MOBI_N" -j 3 -s 2 -q) ;;
        mobi-truncate) CMD=("$MOBIBENCH" -p "$dir" -d 0 -n "$MOBI_N" -j 1 -s 2 -q) ;;
        iozone) CMD=("$IOZONE" -i 0 -i 1 -i 2 -e -I -s "${IOZ_MIB}m" -r 4k -R -f "$dir/iozone.tmp") ;;
        bonnie)
            mib=$(bonnie_mib "$place")
            # -f: no per-char phases; -n 0: no file phases; -r: the RAM bonnie++ assumes (it
            # insists on -s >= 2 x RAM): the cgroup's cap on the device, half the file on tmpfs.
            if [ "$place" = dev ]; then ram=$BON_CAP_MIB; else ram=$((mib / 2)); fi
            CMD=("$BONNIE" -d "$dir" -s "$mib" -r "$ram" -n 0 -f -q -u root)
            ;;
    esac
}
# iolab_cmd JOB PLACE DIR: sets CMD to iolab's equivalent command line. --no-db: a benchmark
# run is not a result to keep (monitoring stays on, as users get it).
iolab_cmd() {
    local job=$1 place=$2 dir=$3
    case "$job" in
        mobi-wal) CMD=("$IOLAB" sqlite --dir "$dir" --mode insert --transactions "$MOBI_N"
                       --journal wal --synchronous full --json --no-db) ;;
        mobi-truncate) CMD=("$IOLAB" sqlite --dir "$dir" --mode insert --transactions "$MOBI_N"
                            --journal truncate --synchronous full --json --no-db) ;;
        # --latency false unless --iozone-latency: iozone times each pass, not each record;
        # iolab's default also reads the clock after every record (its latency percentiles),
        # which costs ~2 % of a 4 KiB tmpfs read (bench/README.md has the measurement).
        iozone) CMD=("$IOLAB" iozone --dir "$dir" --tests write,read,random --size "${IOZ_MIB}m"
                     --record 4k --direct --flush fsync --latency "$IOZ_LATENCY" --json --no-db) ;;
        bonnie) CMD=("$IOLAB" bonnie --dir "$dir" --size "$(bonnie_mib "$place")m" --char-size 0
                     --phases io --json --no-db) ;;
    esac
}
job_ops() { # the operations of one run, for CPU-s per operation
    local job=$1 place=$2 mib
    case "$job" in
        mobi-*) echo "$MOBI_N" ;;                     # transactions
        iozone) echo $((6 * IOZ_MIB * 256)) ;;        # 4 KiB records x 6 tests
        bonnie) mib=$(bonnie_mib "$place")            # 8 KiB chunks x 3 phases + 8192 seeks
                echo $((3 * mib * 128 + 8192)) ;;
    esac
}
job_title() {
    local where
    case "$2" in dev) where="ext4 on a direct-I/O loop device" ;; *) where="tmpfs" ;; esac
    case "$1" in
        mobi-wal) echo "SQLite insert, WAL, synchronous=FULL, $MOBI_N transactions, 3 tables, $where" ;;
        mobi-truncate) echo "SQLite insert, TRUNCATE, synchronous=FULL, $MOBI_N transactions, 3 tables, $where" ;;
        iozone) echo "write/rewrite, read/re-read, random read/write, ${IOZ_MIB} MiB in 4 KiB records, O_DIRECT, fsync timed, $where" ;;
        bonnie) echo "block write/rewrite/read (+ seeks), $(bonnie_mib "$2") MiB in 8 KiB chunks$([ "$2" = dev ] && echo ", page cache capped at $BON_CAP_MIB MiB"), $where" ;;
    esac
}
tool_name() { case "$1" in mobi-*) echo mobibench ;; iozone) echo iozone ;; bonnie) echo bonnie++ ;; esac; }

# ---------------------------------------------------------------------------------------------
# Measuring one run.
HZ=$(getconf CLK_TCK)
cpu_jiffies() { awk '/^cpu /{busy=$2+$3+$4+$7+$8+$9; total=busy+$5+$6; print busy, total; exit}' /proc/stat; }

# Every run starts in an empty directory of its own on a synced filesystem.
fresh_dir() { # fresh_dir DIR
    rm -rf "$1"
    mkdir -p "$1"
    sync -f "$1"
}

# Levelling memory. On a VM whose host backs guest memory lazily (free page reporting hands
# freed guest pages back to the host), where a run's new pages land decides up to ±15 % of a
# tmpfs read rate: iozone alone vs the same iozone started by a process holding 150 MB it had
# just touched read 1.15x faster (18 pairs). Before every run, a helper touches LEVEL_MIB of memory
# and exits, so both tools allocate from the same, just-freed kind of pages; with that the
# A/A difference was 1.00-1.04. auto: the job's file + 512 MiB on tmpfs, 512 MiB on dev.
# Then SETTLE seconds of quiet: the guest reports freed memory to the host about 2 s after it is
# freed, and a run that starts inside that window races it. bonnie++'s 4 GiB block write on tmpfs
# ran at 1.19-1.44 GB/s when started at once and at 1.01-1.18 GB/s when started 4 s later (8 runs
# each): unsettled, which tool wins the race decided a pair's write ratio (0.76-1.46).
level_mib() { # level_mib JOB PLACE
    if [ "$LEVEL" != auto ]; then echo "$LEVEL"; return; fi
    if [ "$2" = tmpfs ]; then
        case "$1" in
            iozone) echo $((IOZ_MIB + 512)) ;;
            bonnie) echo $((BON_TMPFS_MIB + 512)) ;;
            *) echo 512 ;;
        esac
    else
        echo 512
    fi
}
level_memory() { # level_memory JOB PLACE
    local mib
    mib=$(level_mib "$1" "$2")
    [ "$mib" -gt 0 ] || return 0
    python3 "$HELPER" level "$mib" || die "cannot touch $mib MiB of memory to level it (--level 0 turns this off)"
}
settle() { [ "$SETTLE" -gt 0 ] && sleep "$SETTLE"; return 0; }

# run_one JOB PLACE PAIR POS TOOL: one timed run, parsed into $RESULTS.
# The CPU of a run is the whole process's (and its waited-for children's) user + system time,
# from wait4's rusage (µs): start-up and set-up included, for both tools alike.
run_one() {
    local job=$1 place=$2 pair=$3 pos=$4 tool=$5
    local dir out err tf b0 t0 b1 t1 w0 w1
    dir="$(place_dir "$place")/run-$tool"
    fresh_dir "$dir"
    if [ "$tool" = iolab ] && [ "$AA" = 0 ]; then
        iolab_cmd "$job" "$place" "$dir"
    else
        tool_cmd "$job" "$place" "$dir"
    fi
    out="$WORK/out.$job.$place.$pair.$tool"
    err="$WORK/err.$job.$place.$pair.$tool"
    tf="$WORK/time.$job.$place.$pair.$tool"
    # The process starts through `sh -c SCRIPT sh python3 HELPER run … -- COMMAND`, SCRIPT
    # ending in `exec "$@"`: the helper forks COMMAND and takes its rusage from wait4.
    local script='exec "$@"' prefix=()
    [ "$PIN_CPU" = none ] || prefix=(taskset -c "$PIN_CPU")
    if { [ "$tool" = tool ] || [ "$AA" = 1 ]; } && [[ "$job" == mobi-* ]]; then
        # Mobibench writes 3 to /proc/sys/vm/drop_caches (through system()) before its timed
        # region; iolab's quick command does not drop caches. Run it in a private mount
        # namespace where that file is /dev/null: the drop would flush the whole machine's
        # cache and its kernel work would be billed to Mobibench's CPU.
        prefix+=(unshare --mount --propagation private --)
        script='mount --bind /dev/null /proc/sys/vm/drop_caches && exec "$@"'
    fi
    if [ "$job" = bonnie ] && [ "$place" = dev ]; then
        # Both tools alike: into the memory cgroup that caps the page cache.
        script="echo \$\$ >'$CGROUP/cgroup.procs' && $script"
    fi
    level_memory "$job" "$place"
    settle
    read -r b0 t0 < <(cpu_jiffies)
    w0=$(date +%s%N)
    if ! "${prefix[@]}" sh -c "$script" sh python3 "$HELPER" run "$tf" -- "${CMD[@]}" \
        >"$out" 2>"$err"; then
        cat "$err" >&2
        die "$tool failed in $job on $place, pair $pair: ${CMD[*]}"
    fi
    w1=$(date +%s%N)
    read -r b1 t1 < <(cpu_jiffies)
    VS_CLASSIC_TITLE="$(job_title "$job" "$place")" \
        python3 "$HELPER" record "$job" "$place" "$pair" "$pos" "$tool" "$out" \
        "$(job_ops "$job" "$place")" $((w1 - w0)) "$b0" "$t0" "$b1" "$t1" "$HZ" "$tf" \
        >>"$RESULTS" || die "cannot parse the $tool output of $job on $place, pair $pair (in $out)"
    rm -rf "$dir"
}

# ---------------------------------------------------------------------------------------------
setup_dev() {
    IMG=$(mktemp /var/tmp/iolab-vs-classic.XXXXXX.img)
    # The image is written whole before use, not sparse: a direct-I/O write into a hole of
    # the backing file makes the host filesystem allocate it, so whichever run first touched
    # a region of the image would pay for that and the runs after it would not.
    dd if=/dev/zero of="$IMG" bs=4M count=$((${IMG_SIZE%G} * 256)) oflag=direct conv=fsync \
        status=none || die "cannot write the image $IMG"
    LOOPDEV=$(losetup -f --show --direct-io=on "$IMG") || { LOOPDEV=""; die "losetup failed"; }
    # No lazy initialisation: ext4lazyinit would write the inode tables in the background
    # during the first runs.
    mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 "$LOOPDEV" \
        || die "mkfs.ext4 $LOOPDEV failed"
    mkdir -p "$DEV_MNT"
    mount "$LOOPDEV" "$DEV_MNT" || die "mount $LOOPDEV failed"
    DEV_MOUNTED=1
    echo "dev:   $LOOPDEV (direct-io=$(losetup -n -O DIO "$LOOPDEV" | tr -d ' ')) on $IMG ($IMG_SIZE, written whole), ext4 on $DEV_MNT"
}
setup_cgroup() { # a v1 memory cgroup inside ours, capping the page cache of the bonnie runs
    local mnt rel
    mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ {print $2; exit}' /proc/mounts)
    rel=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3; exit}' /proc/self/cgroup)
    [ -n "$mnt" ] && [ -n "$rel" ] || die "no v1 memory cgroup here: cannot cap the page cache of the bonnie job on the device (run it with --places tmpfs, or without --jobs bonnie)"
    mkdir "$mnt${rel%/}/iolab-vs-classic-$$" || die "cannot create a memory cgroup in $mnt$rel"
    CGROUP="$mnt${rel%/}/iolab-vs-classic-$$"
    echo $((BON_CAP_MIB << 20)) >"$CGROUP/memory.limit_in_bytes" \
        || die "cannot set $CGROUP/memory.limit_in_bytes"
    echo "cgroup: $CGROUP, memory.limit_in_bytes = $BON_CAP_MIB MiB (bonnie job on dev, both tools)"
}
setup_tmpfs() {
    mkdir -p "$TMPFS_MNT"
    mount -t tmpfs -o size=$TMPFS_SIZE iolab-vs-classic "$TMPFS_MNT" || die "mount tmpfs failed"
    TMPFS_MOUNTED=1
    echo "tmpfs: $TMPFS_SIZE on $TMPFS_MNT"
}

run_job() {
    local job=$1 place=$2 dir p order pos tool
    dir=$(place_dir "$place")
    echo
    echo "-- $job on $place: $(job_title "$job" "$place")"
    echo "   load average at start: $(cut -d' ' -f1-4 /proc/loadavg)"
    tool_cmd "$job" "$place" "$dir/run-tool"
    echo "   $(tool_name "$job"): ${CMD[*]}"
    if [ "$TOOLS_ONLY" = 0 ] && [ "$AA" = 0 ]; then
        iolab_cmd "$job" "$place" "$dir/run-iolab"
        echo "   iolab:  iolab ${CMD[*]:1}"
    fi
    # Untimed warm-up: one run of each (binaries and libraries in the page cache).
    run_one "$job" "$place" 0 1 tool
    [ "$TOOLS_ONLY" = 0 ] && run_one "$job" "$place" 0 2 iolab
    for ((p = 1; p <= PAIRS; p++)); do
        if [ "$TOOLS_ONLY" = 1 ]; then order="tool"
        elif ((p % 2)); then order="tool iolab"
        else order="iolab tool"; fi
        pos=0
        for tool in $order; do
            pos=$((pos + 1))
            run_one "$job" "$place" "$p" "$pos" "$tool"
        done
        echo "   pair $p/$PAIRS done"
    done
    # The warm-up runs are not part of the tables.
    grep -v '"pair": 0,' "$RESULTS" >"$RESULTS.tmp" || true
    mv "$RESULTS.tmp" "$RESULTS"
    python3 "$HELPER" table "$RESULTS" "$job" "$place" "$(job_title "$job" "$place")" "$(tool_name "$job")"
}

if [ -n "$TABLES" ]; then
    # Saved runs only: pooled, then the same tables and summary as after a run.
    python3 "$HELPER" pool "$RESULTS" "${TABLE_FILES[@]}" >"$WORK/combos" \
        || die "--tables: cannot pool $TABLES"
    while read -r job place; do
        { want "$job" && where "$place"; } || continue
        python3 "$HELPER" table "$RESULTS" "$job" "$place" "$(job_title "$job" "$place")" \
            "$(tool_name "$job")"
    done <"$WORK/combos"
    if [ -n "$SAVE" ]; then
        cp "$RESULTS" "$SAVE" && echo "pooled runs saved to $SAVE"
    fi
    python3 "$HELPER" summary "$RESULTS.summary"
    exit 0
fi

# ---------------------------------------------------------------------------------------------
START=$(date +%s)
echo "iolab vs Mobibench, iozone, bonnie++ — $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host: $(uname -n), $(nproc) CPUs, kernel $(uname -r)"
[ -n "$MOBIBENCH" ] && echo "mobibench: $MOBIBENCH"
[ -n "$IOZONE" ] && echo "iozone: $IOZONE ($("$IOZONE" -v 2>/dev/null | awk '/Version/{print $NF=="$" ? $(NF-1) : $NF; exit}'))"
[ -n "$BONNIE" ] && echo "bonnie++: $BONNIE ($(dpkg-query -W -f '${Version}' bonnie++ 2>/dev/null || echo '?'))"
if [ "$TOOLS_ONLY" = 1 ]; then echo "iolab: not run (--tools-only)"
elif [ "$AA" = 1 ]; then echo "iolab: not run (--aa: the columns headed iolab are the reference tool's second copy)"
else echo "iolab: $IOLAB ($("$IOLAB" --version))"; fi
echo "pairs: $PAIRS$([ "$QUICK" = 1 ] && echo ' (quick)'); jobs: ${!WANT[*]}; places: ${!WHERE[*]}"
echo "memory levelling before each run: $([ "$LEVEL" = auto ] && echo "auto (job file + 512 MiB on tmpfs, 512 MiB on dev)" || echo "$LEVEL MiB")$([ "$LEVEL" = 0 ] && echo " (off)"); settle: ${SETTLE} s; iolab iozone per-record latency: $IOZ_LATENCY"
echo "CPU: $([ "$PIN_CPU" = none ] && echo "not pinned" || echo "both tools on CPU $PIN_CPU (taskset; --cpu)")"
echo "load average at start: $(cut -d' ' -f1-4 /proc/loadavg)   (1, 5, 15 min; running/total tasks)"
cat <<'EOF'
notes: - figures are each tool's own: Mobibench's Transactions/sec, iozone's -R kB/s, bonnie++'s
         CSV K/sec (all 1024-byte kB); iolab's are converted to the same units.
       - CPU us/op = the process's user + system CPU (rusage of the child from wait4: every
         thread, start-up and set-up included) / the job's operations (transactions;
         4 KiB records x 6 tests; 8 KiB chunks x 3 phases + 8192 seeks).
       - ratio = iolab / tool of the same pair; the "med" row gives the medians of each column
         and, in the ratio columns, the median of the per-pair ratios; its 95 % CI (from
         6 pairs up) is distribution-free: the order statistics a Binomial(n, 1/2) puts the
         median between with >= 95 % probability. The verdict takes the median; a CI that
         straddles a target's bound says more pairs are needed to be sure.
       - bg CPU% = CPU used on the machine by anything but the measured process during the
         run, % of all CPUs (max over the pair): other load, and kernel threads working for
         the tool (loop worker, jbd2, writeback).
EOF

where dev && setup_dev
where dev && want bonnie && setup_cgroup
where tmpfs && setup_tmpfs

for place in dev tmpfs; do
    where "$place" || continue
    for job in $ALL_JOBS; do
        want "$job" && run_job "$job" "$place"
    done
done

python3 "$HELPER" summary "$RESULTS.summary"
if [ -n "$SAVE" ]; then
    cp "$RESULTS" "$SAVE" && echo "per-run numbers saved to $SAVE"
fi
echo
echo "load average at end: $(cut -d' ' -f1-4 /proc/loadavg); wall time $(( $(date +%s) - START )) s"
