#!/usr/bin/env bash
# Long fuzzing runs: every target in turn (one at a time: libFuzzer's one process per target
# keeps a 2-CPU machine usable), MINUTES each (default 10; the WML and experiment targets get
# three times as long, their input languages being the largest). Each target's closing
# line (executions, coverage `cov`, features `ft`, corpus size) is printed and kept with the
# whole log in fuzz/logs/. A finding stops that target; the others still run; the exit
# status says whether any target found something.
#
#   bench/fuzz-long.sh [MINUTES] [TARGET...]
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
minutes=${1:-10}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || mapfile -t targets < <("$root/scripts/fuzz.sh" list)

"$root/scripts/fuzz.sh" build || exit 1
mkdir -p "$root/fuzz/logs"
failed=()
for t in "${targets[@]}"; do
    m=$minutes
    [[ $t == wml || $t == experiment ]] && m=$((minutes * 3))
    log="$root/fuzz/logs/$t.log"
    if "$root/scripts/fuzz.sh" run "$t" $((m * 60)) >"$log" 2>&1; then
        status=ok
    else
        status="FOUND (fuzz/artifacts/$t/)"
        failed+=("$t")
    fi
    printf '%-13s %3d min  %s  %s\n' "$t" "$m" "$status" "$(grep -E '^#[0-9]+' "$log" | tail -1)"
done
[[ ${#failed[@]} -eq 0 ]] || {
    echo "fuzz-long: findings in: ${failed[*]}" >&2
    exit 1
}
