#!/usr/bin/env bash
# Fault tolerance of experiments: kill -9 iolab at random points of a running experiment,
# then check that `iolab recover` leaves no iolab mount, loop device or changed tunable, that
# the results database opens, and that `iolab run --resume` completes the experiment without
# repeating a finished run.
#
#   sudo bash bench/kill9.sh [--trials 20] [--iolab target/release/iolab] [--environment container]
#
# With `--environment container` every run executes in a container iolab makes (cgroups and
# namespaces, docs/environments.md): after `iolab recover` no `iolab-ctr-*` cgroup and no
# worker process may be left either.
#
# Each trial uses its own database and state directory under /var/tmp/iolab-kill9.
set -euo pipefail

trials=20
iolab=target/release/iolab
environment=host
while [ $# -gt 0 ]; do
    case "$1" in
        --trials) trials=$2; shift 2 ;;
        --iolab) iolab=$2; shift 2 ;;
        --environment) environment=$2; shift 2 ;;
        *) echo "usage: $0 [--trials N] [--iolab PATH] [--environment host|container]" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "kill9.sh: needs root (loop devices, mounts, tunables)" >&2; exit 2; }
if [ ! -x "$iolab" ]; then
    cargo build --release --locked -q
fi
iolab=$(realpath "$iolab")
work=/var/tmp/iolab-kill9
rm -rf "$work"
mkdir -p "$work"

tunable=/proc/sys/vm/dirty_expire_centisecs
original=$(cat $tunable)
configured=$((original + 7))

cat > "$work/exp.toml" <<TOML
name = "kill -9 target"
seed = 9
[factors]
sync = ["fsync", "fdatasync"]
[sut]
target = { kind = "loop_image", size = "64M" }
fs = { kind = "ext4", mount_options = "data=ordered" }
environment = "$environment"
[sut.tunables]
"vm.dirty_expire_centisecs" = $configured
[workload]
micro = { access = "randwrite", sync = "\${sync}", bs = "4k", size = "12m" }
[repetitions]
min = 3
max = 3
TOML

fail=0
pass=0
problem() { echo "  FAIL: $*"; fail=$((fail + 1)); ok=0; }

for t in $(seq 1 "$trials"); do
    ok=1
    dir="$work/t$t"
    mkdir -p "$dir"
    export IOLAB_DB="$dir/results.db" IOLAB_STATE_DIR="$dir/state"
    "$iolab" run "$work/exp.toml" >"$dir/run.out" 2>&1 &
    pid=$!
    # A random point: 0.2 to 10 s in (the whole experiment takes ~15 s here).
    delay=$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.2f", 0.2 + rand() * 9.8 }')
    sleep "$delay"
    if kill -0 "$pid" 2>/dev/null; then
        kill -9 "$pid"
        wait "$pid" 2>/dev/null || true
        killed=yes
    else
        wait "$pid" || true
        killed="no (finished first)"
    fi
    "$iolab" recover >"$dir/recover.out" 2>&1 || problem "recover failed: $(cat "$dir/recover.out")"
    grep -q " $dir/state/mnt" /proc/self/mountinfo && problem "a mount is left: $(grep "$dir/state" /proc/self/mountinfo)"
    losetup -a | grep -q "$dir" && problem "a loop device is left: $(losetup -a | grep "$dir")"
    [ "$(cat $tunable)" = "$original" ] || problem "tunable is $(cat $tunable), not $original"
    left=$(find /sys/fs/cgroup -maxdepth 6 -type d -name 'iolab-ctr-*' 2>/dev/null | head -3)
    [ -z "$left" ] || problem "a container cgroup is left: $left"
    pgrep -f "$iolab __worker" >/dev/null && problem "a worker process is left: $(pgrep -af "$iolab __worker")"
    "$iolab" list >"$dir/list.out" 2>&1 || problem "the database does not open: $(cat "$dir/list.out")"
    before=$("$iolab" export --format json 2>/dev/null | python3 -c '
import json,sys
d=json.load(sys.stdin)
print(sum(1 for c in d["configs"] for r in c["runs"] if r["status"]=="ok"))' 2>/dev/null || echo 0)
    if [ "$killed" = yes ]; then
        "$iolab" run "$work/exp.toml" --resume >"$dir/resume.out" 2>&1 || problem "resume failed: $(tail -3 "$dir/resume.out")"
    fi
    # Every (configuration, repetition) has exactly one ok run, and all 6 are there.
    "$iolab" export --format json >"$dir/export.json" 2>/dev/null || problem "export failed"
    python3 - "$dir/export.json" <<'PY' || problem "runs: $(python3 -c 'import sys;print(open(sys.argv[1]).read()[:300])' "$dir/export.json")"
import json, sys, collections
d = json.load(open(sys.argv[1]))
ok = collections.Counter((c["label"], r["repetition"]) for c in d["configs"] for r in c["runs"] if r["status"] == "ok")
assert all(n == 1 for n in ok.values()), ok
assert len(ok) == 6, ok
assert d["experiment"]["status"] == "done", d["experiment"]["status"]
PY
    [ "$(cat $tunable)" = "$original" ] || problem "tunable is $(cat $tunable) after resume"
    after=$(python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
print(sum(1 for c in d["configs"] for r in c["runs"] if r["status"]=="ok"))' "$dir/export.json" 2>/dev/null || echo "?")
    if [ $ok = 1 ]; then
        pass=$((pass + 1))
        echo "trial $t: killed at ${delay}s: $killed; ok runs before resume $before, after $after: PASS"
    else
        echo "trial $t: killed at ${delay}s: $killed: FAILED (details in $dir)"
    fi
done
unset IOLAB_DB IOLAB_STATE_DIR
echo "kill9: $pass of $trials trials passed"
[ $fail = 0 ]
