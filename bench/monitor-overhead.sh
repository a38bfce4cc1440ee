#!/usr/bin/env bash
# What watching costs: iolab micro with and without its monitors, interleaved in pairs,
# median IOPS ratio (watched / unwatched).
#
#   sudo bash bench/monitor-overhead.sh [--pairs 7] [--iolab target/release/iolab]
#
# Case m: 4 KiB randread, psync, 1 GiB file in the page cache, 3 loops; samplers at 1 s
#         (the default) against --no-monitor. Target: ratio >= 0.99.
# Case t: 4 KiB randwrite with O_DIRECT on ext4 on a loop device attached with direct I/O,
#         256 MiB; --trace-blocks (plus the samplers) against the samplers alone.
#         Target: ratio >= 0.95.
# The order inside each pair alternates, so neither side always runs first.
set -euo pipefail

pairs=7
iolab=target/release/iolab
while [ $# -gt 0 ]; do
    case "$1" in
        --pairs) pairs=$2; shift 2 ;;
        --iolab) iolab=$2; shift 2 ;;
        *) echo "usage: $0 [--pairs N] [--iolab PATH]" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "monitor-overhead.sh: needs root (loop device, tracefs)" >&2; exit 2; }
[ -x "$iolab" ] || cargo build --release --locked -q
iolab=$(realpath "$iolab")

work=$(mktemp -d /var/tmp/iolab-monitor-overhead.XXXXXX)
dev=""
cleanup() {
    umount "$work/mnt" 2>/dev/null || true
    [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/cache" "$work/mnt"
truncate -s 1G "$work/img"
dev=$(losetup -f --show --direct-io=on "$work/img")
mkfs.ext4 -q -F "$dev"
mount "$dev" "$work/mnt"

iops() { python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["iops"])'; }
run_m() { "$iolab" micro --dir "$work/cache" --access randread --size 1g --loops 3 --no-db --json "$@" 2>/dev/null | iops; }
run_t() { "$iolab" micro --dir "$work/mnt" --access randwrite --sync direct --size 256m --no-db --json "$@" 2>/dev/null | iops; }

# Fill both files once (outside the pairs).
run_m --no-monitor >/dev/null
run_t --no-monitor >/dev/null

declare -a rm_ratios rt_ratios
for p in $(seq 1 "$pairs"); do
    if [ $((p % 2)) = 1 ]; then
        a=$(run_m); b=$(run_m --no-monitor)
        c=$(run_t --trace-blocks); d=$(run_t)
    else
        b=$(run_m --no-monitor); a=$(run_m)
        d=$(run_t); c=$(run_t --trace-blocks)
    fi
    rm_ratios+=("$(python3 -c "print($a / $b)")")
    rt_ratios+=("$(python3 -c "print($c / $d)")")
    printf "pair %d: m: monitored %.0f / unmonitored %.0f IOPS = %.3f   t: traced %.0f / untraced %.0f IOPS = %.3f\n" \
        "$p" "$a" "$b" "${rm_ratios[-1]}" "$c" "$d" "${rt_ratios[-1]}"
done
median() { printf "%s\n" "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
mm=$(median "${rm_ratios[@]}")
mt=$(median "${rt_ratios[@]}")
verdict() { python3 -c "print('PASS' if $1 >= $2 else 'FAIL')"; }
echo
echo "case  what                                    median ratio  target  result"
printf "m     samplers at 1 s, cached randread       %12.3f  >=0.99  %s\n" "$mm" "$(verdict "$mm" 0.99)"
printf "t     block tracer, direct randwrite (loop)  %12.3f  >=0.95  %s\n" "$mt" "$(verdict "$mt" 0.95)"
