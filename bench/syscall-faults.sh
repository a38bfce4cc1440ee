#!/usr/bin/env bash
# Every system call fails, one at a time (docs/robustness.md, "Failing every system call"):
# the whole matrix that crates/iolab/tests/syscall_faults.rs runs a part of in CI. Each
# workload (micro and WML on a directory, micro on a loop image with its block trace saved)
# × each set of calls (write/pwrite64, fsync/fdatasync, openat, mkdir/mkdirat,
# rename/renameat/renameat2, and mount on the loop image) × each errno (EIO, ENOSPC, EINTR)
# runs with the N-th call failed for every N until a run has no N-th call, checking the
# invariants after each; then a table of the cases.
#
#   sudo bash bench/syscall-faults.sh [--quick] [--scale K] [--release] [--only TEXT] [--verbose]
#
# --quick steps N as CI does (by one up to 40, then by half of itself) instead of by one to
# the end: the whole matrix in well under an hour.
# --scale K multiplies the workloads' sizes and operation counts (longer runs, more calls);
# --release tests the optimised build; --only runs the cases whose name ("WORKLOAD CALLS
# ERRNO", e.g. "micro write,pwrite64 EIO") contains TEXT; --verbose prints each run's exit code
# and first failed call. Needs root (loop devices, mounts,
# block tracing) and strace. The whole matrix is some 10,000 runs: hours on 2 CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."

scale=1
profile=()
only=
mode=full
while [ $# -gt 0 ]; do
    case "$1" in
        --scale) scale=$2; shift 2 ;;
        --release) profile=(--release); shift ;;
        --only) only=$2; shift 2 ;;
        --quick) mode=quick; shift ;;
        --verbose) export IOLAB_SYSCALL_FAULTS_VERBOSE=1; shift ;;
        *) echo "usage: $0 [--quick] [--scale K] [--release] [--only TEXT] [--verbose]" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "syscall-faults.sh: needs root (loop devices, mounts)" >&2; exit 2; }
command -v strace >/dev/null || { echo "syscall-faults.sh: needs strace (apt-get install strace)" >&2; exit 2; }

summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
start=$(date +%s)
status=0
IOLAB_SYSCALL_FAULTS=$mode IOLAB_SYSCALL_FAULTS_SCALE=$scale IOLAB_SYSCALL_FAULTS_SUMMARY=$summary \
    IOLAB_SYSCALL_FAULTS_ONLY=$only \
    cargo test -p iolab --locked "${profile[@]}" --test syscall_faults -- --include-ignored \
    --exact full_matrix --nocapture || status=$?

echo
echo "Every system call fails, one at a time: $mode, scale $scale, $(( ($(date +%s) - start) / 60 )) min"
{
    printf 'workload\tcalls\terrno\titerations\tlast N\tinjected\texit codes (code:runs)\tseconds\n'
    cat "$summary"
} | column -t -s $'\t'
[ $status = 0 ] && echo "every invariant held" || echo "FAILED: the first broken invariant is above"
exit $status
