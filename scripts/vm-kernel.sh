#!/usr/bin/env bash
# A kernel for iolab's virtual machines: Debian's current kernel package (the one the
# metapackage linux-image-amd64 depends on), downloaded and extracted, never installed, so
# this machine's /boot and boot loader are not touched.
#
#   sudo scripts/vm-kernel.sh
#
# Result: /var/cache/iolab/vm/kernel/VERSION/boot/vmlinuz-VERSION and its modules in
# /var/cache/iolab/vm/kernel/VERSION/lib/modules/VERSION/, where iolab looks for a VM kernel
# by default. Prints the kernel's path. Idempotent: a kernel already there is not fetched
# again.
set -euo pipefail

root_dir=/var/cache/iolab/vm/kernel
if [ "$(id -u)" != 0 ]; then
  echo "vm-kernel.sh: run it as root (it writes $root_dir and may run apt-get update)" >&2
  exit 1
fi

# The versioned package linux-image-amd64 points to, e.g. linux-image-6.1.0-56-amd64.
versioned() {
  apt-cache depends linux-image-amd64 2>/dev/null |
    awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}
pkg=$(versioned)
if [ -z "$pkg" ]; then
  apt-get update -qq >/dev/null
  pkg=$(versioned)
fi
if [ -z "$pkg" ]; then
  echo "vm-kernel.sh: apt knows no package linux-image-amd64 (is this Debian, with main in" \
    "its sources?)" >&2
  exit 1
fi
version=${pkg#linux-image-}
dest=$root_dir/$version
vmlinuz=$dest/boot/vmlinuz-$version

if [ -f "$vmlinuz" ] && [ -f "$dest/lib/modules/$version/modules.builtin" ]; then
  echo "$vmlinuz"
  exit 0
fi

mkdir -p "$root_dir"
tmp=$(mktemp -d "$root_dir/.download.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# apt drops root to its _apt user to download: the directory must be writable by it.
chmod 0777 "$tmp"
if ! (cd "$tmp" && apt-get download -q "$pkg" >/dev/null); then
  # The package lists may be older than the archive (a removed version): refresh, retry.
  apt-get update -qq >/dev/null
  (cd "$tmp" && apt-get download -q "$pkg" >/dev/null)
fi
dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/tree"
# Debian generates modules.dep when the package is installed (depmod in postinst); iolab
# reads it when it is there and otherwise finds each module's dependencies in the module.
if command -v depmod >/dev/null 2>&1; then
  depmod -b "$tmp/tree" "$version"
fi
rm -rf "$dest"
mv "$tmp/tree" "$dest"
echo "$vmlinuz"
