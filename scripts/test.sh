#!/usr/bin/env bash
# iolab's test suite: formatting, lints, and every test of the workspace.
#
# As root it installs what the tests need (idempotently) and runs the tests that need real
# mounts and loop devices; as another user those tests say why they skip.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for tool in strace:strace mkfs.ext4:e2fsprogs losetup:mount iostat:sysstat mkfs.xfs:xfsprogs mkfs.btrfs:btrfs-progs chromium:chromium; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "test.sh: installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "test.sh: missing ${need[*]} (not root: the tests that need them will skip)"
  fi
fi

# The block tracer's tests need tracefs (systemd mounts it; minimal systems may not).
if [ "$(id -u)" = 0 ] && [ ! -d /sys/kernel/tracing/instances ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
