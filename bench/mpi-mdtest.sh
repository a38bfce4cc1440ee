#!/usr/bin/env bash
# `iolab mdtest` against mdtest (built from source with IOR, bench/ref-ior.sh) under mpirun:
# interleaved pairs (odd pairs mdtest then iolab, even pairs iolab then mdtest) with 2 and 4
# ranks, on a tmpfs and on ext4 on a direct-I/O loop device; per pair the create, stat and
# remove rates of directories and files (mdtest's "SUMMARY rate" means; iolab's --json), the
# number of items (must be identical), and the median of the per-pair ratios iolab/mdtest with
# its 95 % CI. See bench/README.md.
#
# Usage: sudo bench/mpi-mdtest.sh [--ior-dir DIR] [--cases unique] [--items N] [--ranks 2,4]
#            [--places tmpfs,dev] [--pairs N] [--extra 'FLAGS'] [--drop-caches] [--netns]
#            [--tools-only | --aa] [--quick] [--iolab PATH | --no-build] [--save FILE]
# Cases: unique = -n N -u (N = --items per rank, default
#   20000, 5000 with --quick), files = -n N -u -F.
# --ior-dir: IOR's source tree with src/mdtest built (default $IOR_DIR, else mdtest on PATH).
# --extra: mdtest flags added to every run of both tools (e.g. '-w 3901 -e 3901').
# --drop-caches: drop the page cache before every run on the device.
# --netns: every rank on its own host (scripts/mpi-netns.sh). --tools-only: mdtest alone.
# --aa: mdtest in both slots of each pair (the noise floor of the ratios).
set -euo pipefail

BENCH_NAME=mpi-mdtest
BENCH=mdtest
REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
# shellcheck source=bench/mpi-lib.sh
. "$REPO/bench/mpi-lib.sh"

CASES="unique"
ITEMS=""
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --items) ITEMS=$2; shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done

items() { echo "${ITEMS:-$([ "$QUICK" = 1 ] && echo 5000 || echo 20000)}"; }
case_flags() { # CASE
    case "$1" in
        unique) echo "-n $(items) -u" ;;
        files) echo "-n $(items) -u -F" ;;
        *) return 1 ;;
    esac
}

# The one place where both tools' command lines are made: the same mdtest flags for both.
tool_argv() { # TOOL CASE DIR K [FLAGS]
    local flags
    flags="$(case_flags "$2") $EXTRA ${5:-}"
    RESULT="$WORK/out.$4"  # both print their result on stdout (iolab: rank 0's JSON document)
    # shellcheck disable=SC2206 # flags are words without blanks
    if [ "$1" = ref ]; then
        ARGV=("$REF" $flags -d "$3")
    else
        ARGV=("$IOLAB" mdtest $flags -d "$3" --json)
    fi
}

mpi_main "${args[@]}"
