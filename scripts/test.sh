#!/usr/bin/env bash
# iolab's test suite: formatting, lints, every test of the workspace, and a bounded fuzzing pass.
#
# Tests that need root (real mounts, loop devices, tunables) or a tool this script installs
# as root (strace, chromium, mkfs.xfs, bonnie++, and fio, iperf3 and sysbench for the exec
# kind's live tests, qemu with the kernel of scripts/vm-kernel.sh for the VM tests, and Open
# MPI with clang for the `mpi` feature's build and its runs under mpirun) are
# marked #[ignore = "needs …"]. As root this script installs those tools (idempotently) and
# runs every test, ignored ones included; as another user `cargo test` lists them as
# ignored, with the reason.
#
# Tests that find out only while running that they cannot run here (the filebench corpus is
# missing, / is not on a block device) say so; this script lists them at the end. Under CI
# (`CI` set) they fail instead, and CI must run as root.
#
# The filebench corpus (filebench's own workloads/*.f, which the repository does not hold)
# is read from $IOLAB_FILEBENCH_CORPUS (see tests/testkit for its default).
set -euo pipefail
cd "$(dirname "$0")/.."

root=0
[ "$(id -u)" = 0 ] && root=1
if [ -n "${CI:-}" ] && [ $root = 0 ]; then
  echo "test.sh: CI must run the tests as root (the root tests would only be listed as ignored)" >&2
  exit 1
fi

need=()
for tool in strace:strace fusermount3:fuse3 mkfs.ext4:e2fsprogs losetup:mount iostat:sysstat mkfs.xfs:xfsprogs mkfs.btrfs:btrfs-progs chromium:chromium bon_csv2txt:bonnie++ fio:fio iperf3:iperf3 sysbench:sysbench ip:iproute2 qemu-system-x86_64:qemu-system-x86 mpirun:openmpi-bin mpicc:libopenmpi-dev clang:clang; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
# bindgen (the MPI binding's build) loads libclang.
compgen -G "/usr/lib/llvm-*/lib/libclang.so*" >/dev/null || need+=(libclang-dev)
if [ ${#need[@]} -gt 0 ]; then
  if [ $root = 1 ]; then
    echo "test.sh: installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "test.sh: missing ${need[*]} (not root: the tests that need them are ignored anyway)"
  fi
fi

# The VM tests boot Debian's kernel (downloaded and extracted once, not installed).
if [ $root = 1 ]; then
  scripts/vm-kernel.sh >/dev/null
fi

# The block tracer's tests need tracefs (systemd mounts it; minimal systems may not).
if [ $root = 1 ] && [ ! -d /sys/kernel/tracing/instances ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

# MPI is a cargo feature (docs/multi-host.md): both builds are linted; the tests run in the
# build with it, plus the default build's own behaviour under mpirun.
mpi=()
if command -v mpicc >/dev/null 2>&1 && compgen -G "/usr/lib/llvm-*/lib/libclang.so*" >/dev/null; then
  mpi=(--features iolab/mpi)
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
if [ ${#mpi[@]} -gt 0 ]; then
  cargo clippy --workspace --all-targets --locked "${mpi[@]}" -- -D warnings
fi
# The fuzz targets are a workspace of their own (docs/robustness.md).
(cd fuzz && cargo fmt --all -- --check && cargo clippy --bins --locked -- -D warnings)

IOLAB_TEST_NOT_RUN=$(mktemp)
export IOLAB_TEST_NOT_RUN
trap 'rm -f "$IOLAB_TEST_NOT_RUN"' EXIT
status=0
# The default build launched by mpirun: a test of the build without MPI, run in that build.
default_build=launched_by_mpirun_without_the_feature_iolab_says_how_to_build_it
if [ $root = 1 ] && [ ${#mpi[@]} -gt 0 ]; then
  cargo test --workspace --locked --no-fail-fast "${mpi[@]}" -- --include-ignored \
    --skip "$default_build" || status=$?
  cargo test -p iolab --locked --test mpi -- --include-ignored --exact "$default_build" \
    one_rank_runs_as_without_mpi || status=$?
elif [ $root = 1 ]; then
  cargo test --workspace --locked --no-fail-fast -- --include-ignored || status=$?
else
  cargo test --workspace --locked --no-fail-fast || status=$?
  echo "test.sh: not root: the tests marked 'ignored' above did not run (each says what it" \
    "needs); run scripts/test.sh as root to run them"
fi
# Fuzzing's bounded pass: every target's past findings replayed, then 10 s of fuzzing each.
scripts/fuzz.sh smoke 10 || status=$?
if [ -s "$IOLAB_TEST_NOT_RUN" ]; then
  echo "test.sh: these tests (or parts of them) did not run here, though cargo counts them as" \
    "passed (under CI they fail, but for tools no package registry has):"
  sort "$IOLAB_TEST_NOT_RUN" | sed 's/^/  /'
fi
exit $status
