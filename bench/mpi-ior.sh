#!/usr/bin/env bash
# `iolab ior` against IOR (built from source, bench/ref-ior.sh) under mpirun: interleaved pairs
# (odd pairs IOR then iolab, even pairs iolab then IOR) with 2 and 4 ranks, on a tmpfs and on
# ext4 on a direct-I/O loop device; per pair the write and read bandwidth of both (IOR's JSON
# summary; iolab's --json), the bytes moved (must be identical), and the median of the per-pair
# ratios iolab/IOR with its 95 % CI. See bench/README.md.
#
# Usage: sudo bench/mpi-ior.sh [--ior-dir DIR] [--cases easy,hard] [--ranks 2,4]
#            [--places tmpfs,dev] [--pairs N] [--segments N] [--extra 'FLAGS'] [--split]
#            [--drop-caches] [--netns] [--tools-only | --aa] [--quick]
#            [--iolab PATH | --no-build] [--save FILE]
# Cases: easy = -t 1m -b 64m -F, hard = -t 47008 -b 47008 -s N (N = --segments, default 10000,
#   2000 with --quick).
# --ior-dir: IOR's source tree with src/ior built (default $IOR_DIR, else ior on PATH).
# --extra: IOR flags added to every run of both tools (e.g. '-e' to fsync the writes).
# --split: the write (-w -k) and read (-r) phases as separate invocations, with the page cache
#   dropped between them on the device. --drop-caches: drop it before every run on the device.
# --netns: every rank on its own host (scripts/mpi-netns.sh). --tools-only: IOR alone.
# --aa: IOR in both slots of each pair (the noise floor of the ratios).
set -euo pipefail

BENCH_NAME=mpi-ior
BENCH=ior
REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
# shellcheck source=bench/mpi-lib.sh
. "$REPO/bench/mpi-lib.sh"

CASES="easy,hard"
SEGMENTS=""
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --segments) SEGMENTS=$2; shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done

case_flags() { # CASE
    case "$1" in
        easy) echo "-t 1m -b 64m -F" ;;
        hard) echo "-t 47008 -b 47008 -s ${SEGMENTS:-$([ "$QUICK" = 1 ] && echo 2000 || echo 10000)}" ;;
        *) return 1 ;;
    esac
}

# The one place where both tools' command lines are made: the same IOR flags for both.
tool_argv() { # TOOL CASE DIR K [FLAGS]
    local flags
    flags="$(case_flags "$2") $EXTRA ${5:-}"
    # shellcheck disable=SC2206 # flags are words without blanks
    if [ "$1" = ref ]; then
        RESULT="$WORK/summary.$4.json"
        ARGV=("$REF" -a POSIX $flags -o "$3/testFile" -O summaryFormat=JSON -O "summaryFile=$RESULT")
    else
        RESULT="$WORK/out.$4"  # its stdout: rank 0's JSON document (iolab_result in bench/mpi-pairs.py)
        ARGV=("$IOLAB" ior -a POSIX $flags -o "$3/testFile" --json)
    fi
}

mpi_main "${args[@]}"
