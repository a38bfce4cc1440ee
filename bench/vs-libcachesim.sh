#!/usr/bin/env bash
# iolab's cache simulator against libCacheSim on synthetic Zipf traces: identical miss counts
# (every policy both have), single-thread speed (interleaved pairs, medians), and the exact
# LRU miss-ratio curve against libCacheSim's stack-distance profiler (time and peak memory),
# plus SHARDS' error against the exact curve. See bench/README.md.
#
# Usage: bench/vs-libcachesim.sh LIBCACHESIM_BUILD [--iolab PATH] [--work DIR] [--pairs N]
#            [--requests N] [--traces a,b] [--speed-policies LIST] [--miss-policies LIST]
#            [--sections misses,speed,mrc,shards] [--quick] [--save FILE]
# LIBCACHESIM_BUILD is libCacheSim's cmake build directory (bin/cachesim, bin/distUtil,
# CMakeCache.txt naming the source). Nothing is built inside the repository: iolab must be
# built already (target/release/iolab, or --iolab), and the one helper compiled here (a
# 40-line C driver that prints libCacheSim's exact miss count, which its cachesim prints
# only as a 4-decimal ratio) goes to the work directory.
set -euo pipefail

BENCH_NAME=vs-libcachesim
REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

LCS=""
IOLAB=""
BUILD=0
WORK=/tmp/iolab-vs-libcachesim
PAIRS=5
REQUESTS=20000000
TRACES="a,b"
SPEED_POLICIES="lru,fifo,clock,arc,s3fifo"
MISS_POLICIES="lru,fifo,clock,arc,lfu,2q,s3fifo,sieve,belady"
SAVE=""
QUICK=0
SECTIONS="misses,speed,mrc,shards"

while [ $# -gt 0 ]; do
    case "$1" in
        --iolab) IOLAB=$2; shift 2 ;;
        --work) WORK=$2; shift 2 ;;
        --pairs) PAIRS=$2; shift 2 ;;
        --requests) REQUESTS=$2; shift 2 ;;
        --traces) TRACES=$2; shift 2 ;;
        --speed-policies) SPEED_POLICIES=$2; shift 2 ;;
        --miss-policies) MISS_POLICIES=$2; shift 2 ;;
        --save) SAVE=$2; shift 2 ;;
        --sections) SECTIONS=$2; shift 2 ;;
        --quick) QUICK=1; shift ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) [ -z "$LCS" ] || die "one libCacheSim build directory, please"; LCS=$1; shift ;;
    esac
done
[ -n "$LCS" ] || die "give libCacheSim's build directory (see --help)"
if [ "$QUICK" = 1 ]; then
    PAIRS=2
    REQUESTS=2000000
fi

LCS=$(cd "$LCS" && pwd)
for b in cachesim distUtil; do
    [ -x "$LCS/bin/$b" ] || die "no $LCS/bin/$b (build libCacheSim: cmake .. && make cachesim distUtil)"
done
LCS_SRC=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$LCS/CMakeCache.txt" 2>/dev/null || true)
[ -d "$LCS_SRC/libCacheSim" ] || die "cannot find libCacheSim's source from $LCS/CMakeCache.txt"
case "$(cd "$(dirname "$WORK")" 2>/dev/null && pwd)/" in
    "$REPO"/*) die "--work $WORK is inside the repository; pick a directory outside it" ;;
esac
resolve_iolab
need gcc gcc
need pkg-config pkg-config
need jq jq
[ -x /usr/bin/time ] || apt_install time
mkdir -p "$WORK"


# --- libCacheSim's exact miss count ------------------------------------------------------
DRIVER=$WORK/exactmiss
if [ ! -x "$DRIVER" ] || [ "$0" -nt "$DRIVER" ]; then
    cat > "$WORK/exactmiss.c" <<'EOF'
/* One libCacheSim cache on an oracleGeneral trace, objects of size 1 (as cachesim
 * --ignore-obj-size 1): prints the request and miss counts. */
#include <stdio.h>
#include <stdlib.h>
#include "libCacheSim/bin/cachesim/cache_init.h"
#include "libCacheSim/include/libCacheSim/reader.h"
int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: exactmiss TRACE ALGO SIZE\n"); return 2; }
  reader_init_param_t p;
  memset(&p, 0, sizeof(p));
  p.ignore_obj_size = true;
  p.ignore_size_zero_req = true;
  p.obj_id_is_num = true;
  p.cap_at_n_req = -1;
  reader_t *reader = setup_reader(argv[1], ORACLE_GENERAL_TRACE, &p);
  cache_t *cache = create_cache(argv[1], argv[2], strtoull(argv[3], NULL, 10), NULL, false);
  request_t *req = new_request();
  unsigned long n = 0, miss = 0;
  while (read_one_req(reader, req) == 0) {
    n++;
    if (!cache->get(cache, req)) miss++;
  }
  printf("%lu %lu\n", n, miss);
  return 0;
}
EOF
    # shellcheck disable=SC2046
    gcc -O2 -w -I"$LCS_SRC" -I"$LCS_SRC/libCacheSim/include" $(pkg-config --cflags glib-2.0) \
        "$WORK/exactmiss.c" -o "$DRIVER" \
        -Wl,--start-group $(find "$LCS/libCacheSim" -name '*.a' | sort) -Wl,--end-group \
        $(pkg-config --libs glib-2.0) -lzstd -lm -lpthread -ldl -lstdc++ 2>"$WORK/exactmiss.log" \
        || die "compiling the miss-count driver failed (see $WORK/exactmiss.log)"
fi

lcs_name() { case "$1" in 2q) echo twoq ;; *) echo "$1" ;; esac; }

# --- traces -------------------------------------------------------------------------------
declare -A ALPHA OBJECTS
ALPHA[a]=1.0; OBJECTS[a]=1000000
ALPHA[b]=0.8; OBJECTS[b]=10000000
if [ "$QUICK" = 1 ]; then OBJECTS[a]=100000; OBJECTS[b]=1000000; fi
trace_path() { echo "$WORK/zipf${ALPHA[$1]}-${OBJECTS[$1]}-${REQUESTS}.oracleGeneral.bin"; }
for t in ${TRACES//,/ }; do
    [ -n "${ALPHA[$t]:-}" ] || die "unknown trace $t (a: α 1.0 over 1 M objects, b: α 0.8 over 10 M)"
    f=$(trace_path "$t")
    if [ ! -s "$f" ]; then
        note "generating $f"
        "$IOLAB" cachesim gen --zipf "${ALPHA[$t]}" --objects "${OBJECTS[$t]}" \
            --requests "$REQUESTS" --seed 1 --object-size 4K -o "$f"
    fi
done

# Runs a command under /usr/bin/time; prints "wall cpu maxrss_kib" and leaves its stdout in
# $WORK/out.
timed() {
    /usr/bin/time -f '%e %U %S %M' -o "$WORK/time" "$@" > "$WORK/out" 2> "$WORK/err" \
        || { cat "$WORK/err" >&2; die "failed: $*"; }
    awk '{ printf "%s %.3f %s\n", $1, $2 + $3, $4 }' "$WORK/time"
}
iolab_sim() { # TRACE POLICY BLOCKS
    timed "$IOLAB" cachesim "$1" --policy "$2" --size "$(( $3 * 4096 ))" --block-size 4096 \
        --no-db --json
}
iolab_misses() { jq '.result.misses' "$WORK/out"; }
lcs_sim() { # TRACE POLICY BLOCKS (libCacheSim writes TRACE.cachesim into the cwd)
    (cd "$WORK" && timed "$LCS/bin/cachesim" "$1" oracleGeneral "$(lcs_name "$2")" "$3" \
        --ignore-obj-size 1 --num-thread 1)
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
save() { [ -z "$SAVE" ] || echo "$1" >> "$SAVE"; }
section() { case ",$SECTIONS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

echo "# iolab vs libCacheSim — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# iolab: $IOLAB; libCacheSim: $LCS ($(git -C "$LCS_SRC" rev-parse --short HEAD 2>/dev/null || echo 'source without git'))"
echo "# traces: ${REQUESTS} requests each; cache sizes 1 % and 10 % of the objects"

# --- miss counts ----------------------------------------------------------------------------
if section misses; then
echo
echo "## Miss counts (fully associative, one object per block)"
printf '%-5s %-9s %9s %-7s %12s %12s  %s\n' trace objects size policy libCacheSim iolab check
mismatches=0
for t in ${TRACES//,/ }; do
    f=$(trace_path "$t")
    for pct in 1 10; do
        size=$(( ${OBJECTS[$t]} * pct / 100 ))
        for p in ${MISS_POLICIES//,/ }; do
            read -r _ lm < <("$DRIVER" "$f" "$(lcs_name "$p")" "$size" 2>/dev/null | tail -1)
            iolab_sim "$f" "$p" "$size" > /dev/null
            im=$(iolab_misses)
            check=ok
            if [ "$lm" != "$im" ]; then check=MISMATCH; mismatches=$((mismatches + 1)); fi
            printf '%-5s %-9s %9s %-7s %12s %12s  %s\n' "$t" "${OBJECTS[$t]}" "$size" "$p" "$lm" "$im" "$check"
            save "{\"kind\":\"misses\",\"trace\":\"$t\",\"size\":$size,\"policy\":\"$p\",\"libcachesim\":$lm,\"iolab\":$im}"
        done
    done
done
echo "mismatches: $mismatches"
fi

# --- speed ----------------------------------------------------------------------------------
if section speed; then
echo
echo "## Speed: CPU seconds (user + sys) per run, $PAIRS interleaved pairs, medians"
echo "## (whole processes: reading the trace, building the cache, simulating)"
printf '%-5s %9s %-7s %10s %10s %8s\n' trace size policy libCacheSim iolab ratio
for t in ${TRACES//,/ }; do
    f=$(trace_path "$t")
    for pct in 1 10; do
        size=$(( ${OBJECTS[$t]} * pct / 100 ))
        for p in ${SPEED_POLICIES//,/ }; do
            : > "$WORK/l"; : > "$WORK/i"
            for i in $(seq "$PAIRS"); do
                if [ $((i % 2)) = 1 ]; then
                    lcs_sim "$f" "$p" "$size" | awk '{ print $2 }' >> "$WORK/l"
                    iolab_sim "$f" "$p" "$size" | awk '{ print $2 }' >> "$WORK/i"
                else
                    iolab_sim "$f" "$p" "$size" | awk '{ print $2 }' >> "$WORK/i"
                    lcs_sim "$f" "$p" "$size" | awk '{ print $2 }' >> "$WORK/l"
                fi
            done
            lm=$(median < "$WORK/l"); im=$(median < "$WORK/i")
            printf '%-5s %9s %-7s %10.2f %10.2f %7.1fx\n' "$t" "$size" "$p" "$lm" "$im" \
                "$(echo "$lm $im" | awk '{ print $1 / $2 }')"
            save "{\"kind\":\"speed\",\"trace\":\"$t\",\"size\":$size,\"policy\":\"$p\",\"libcachesim_cpu_s\":$lm,\"iolab_cpu_s\":$im}"
        done
    done
done
fi

# --- miss-ratio curves ----------------------------------------------------------------------
if section mrc; then
echo
echo "## Exact LRU miss-ratio curve: libCacheSim's distUtil stack_dist vs iolab cachesim mrc"
printf '%-5s %10s %10s %8s %11s %11s %8s\n' trace lcs_cpu_s iolab_cpu_s ratio lcs_rss_MiB iolab_rss_MiB ratio
for t in ${TRACES//,/ }; do
    f=$(trace_path "$t")
    : > "$WORK/l"; : > "$WORK/i"; : > "$WORK/lr"; : > "$WORK/ir"
    for i in $(seq "$PAIRS"); do
        read -r _ c r < <(timed "$LCS/bin/distUtil" "$f" oracleGeneral stack_dist cntTxt "$WORK/stackdist")
        echo "$c" >> "$WORK/l"; echo "$r" >> "$WORK/lr"
        read -r _ c r < <(timed "$IOLAB" cachesim mrc "$f" --format csv --points 100 --max-blocks "${OBJECTS[$t]}")
        echo "$c" >> "$WORK/i"; echo "$r" >> "$WORK/ir"
        cp "$WORK/out" "$WORK/exact-$t.csv"
    done
    lc=$(median < "$WORK/l"); ic=$(median < "$WORK/i")
    lr=$(median < "$WORK/lr"); ir=$(median < "$WORK/ir")
    printf '%-5s %10.2f %10.2f %7.1fx %11.0f %11.0f %7.2fx\n' "$t" "$lc" "$ic" \
        "$(echo "$lc $ic" | awk '{ print $1 / $2 }')" "$(echo "$lr" | awk '{ print $1 / 1024 }')" \
        "$(echo "$ir" | awk '{ print $1 / 1024 }')" "$(echo "$lr $ir" | awk '{ print $1 / $2 }')"
    save "{\"kind\":\"mrc\",\"trace\":\"$t\",\"libcachesim_cpu_s\":$lc,\"iolab_cpu_s\":$ic,\"libcachesim_rss_kib\":$lr,\"iolab_rss_kib\":$ir}"
done
fi

if section shards; then
echo
echo "## SHARDS against the exact curve (100 sizes up to the object count)"
printf '%-5s %-14s %10s %10s %12s\n' trace sampling cpu_s rss_MiB MAE
for t in ${TRACES//,/ }; do
    f=$(trace_path "$t")
    if [ ! -s "$WORK/exact-$t.csv" ]; then
        timed "$IOLAB" cachesim mrc "$f" --format csv --points 100 --max-blocks "${OBJECTS[$t]}" > /dev/null
        cp "$WORK/out" "$WORK/exact-$t.csv"
    fi
    for mode in "--shards 0.01" "--shards 0.001" "--shards-blocks 8K"; do
        # shellcheck disable=SC2086
        read -r _ c r < <(timed "$IOLAB" cachesim mrc "$f" $mode --format csv --points 100 --max-blocks "${OBJECTS[$t]}")
        mae=$(awk -F, 'NR == FNR { if (FNR > 1) e[$1] = $2; next }
                        FNR > 1 { s += ($2 > e[$1] ? $2 - e[$1] : e[$1] - $2); n++ }
                        END { printf "%.5f", s / n }' "$WORK/exact-$t.csv" "$WORK/out")
        printf '%-5s %-14s %10.2f %10.0f %12s\n' "$t" "${mode#--}" "$c" "$(echo "$r" | awk '{ print $1 / 1024 }')" "$mae"
        save "{\"kind\":\"shards\",\"trace\":\"$t\",\"mode\":\"${mode#--}\",\"cpu_s\":$c,\"rss_kib\":$r,\"mae\":$mae}"
    done
done
fi
echo
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
