#!/usr/bin/env bash
# Coverage-guided fuzzing of iolab's parsers (libFuzzer, through the libfuzzer-sys crate, on
# stable Rust: no cargo-fuzz, no nightly). docs/robustness.md explains targets and findings.
#
#   scripts/fuzz.sh list                     the targets
#   scripts/fuzz.sh build                    build every target
#   scripts/fuzz.sh run TARGET [SECONDS]     fuzz one target (default 60 s); a crash stops it
#                                            and leaves the input in fuzz/artifacts/TARGET/
#   scripts/fuzz.sh smoke [SECONDS]          every target in turn, SECONDS each (default 10):
#                                            the bounded pass CI runs
#   scripts/fuzz.sh repro TARGET FILE...     run inputs once (a crash's, to debug it)
#
# Corpora grow in fuzz/corpus/TARGET (not committed); they are seeded from the repository's
# fixtures on every run, so a fresh checkout starts from the same point.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
fuzz="$root/fuzz"
TARGETS=(wml experiment file_list trace_iolab trace_oracle trace_csv tool_output proc db_import)

host=$(rustc -vV | sed -n 's/^host: //p')
# What `cargo fuzz build --sanitizer none` passes: coverage counters and comparison tracing for
# libFuzzer, `cfg(fuzzing)`, and debug assertions (overflow checks included: an overflow on
# bad input is a bug even where release builds would wrap silently). `--target` keeps the
# flags off build scripts and proc macros.
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cllvm-args=-sanitizer-coverage-stack-depth \
--cfg fuzzing -Cdebug-assertions -Coverflow-checks -Cforce-frame-pointers"
unset RUSTC_WRAPPER CARGO_BUILD_RUSTC_WRAPPER

build() {
    (cd "$fuzz" && cargo build --release --target "$host" --bins "$@")
}

bin() { echo "$fuzz/target/$host/release/$1"; }

check_target() {
    local t
    for t in "${TARGETS[@]}"; do [[ $t == "$1" ]] && return 0; done
    echo "fuzz.sh: no target \`$1\`; the targets: ${TARGETS[*]}" >&2
    exit 2
}

# seed TARGET DIR: copies the fixtures that fit TARGET into DIR (named by content, so that
# reseeding adds nothing twice). Inputs with a selector byte get it prepended.
seed() {
    local t=$1 dir=$2
    mkdir -p "$dir"
    python3 "$fuzz/seeds.py" "$root" "$t" "$dir"
}

run() {
    local t=$1 secs=$2
    shift 2
    local corpus="$fuzz/corpus/$t" artifacts="$fuzz/artifacts/$t"
    seed "$t" "$corpus"
    mkdir -p "$artifacts" "$fuzz/regressions/$t"
    # The committed regression inputs run first, then the corpus grows. -rss_limit_mb and
    # -timeout turn runaway memory and hangs into findings too. Targets that need a file
    # (db_import) write it under TMPDIR: one of the run's own, removed after it.
    local tmp rc=0
    tmp=$(mktemp -d)
    TMPDIR=$tmp "$(bin "$t")" "$corpus" "$fuzz/regressions/$t" -max_total_time="$secs" \
        -artifact_prefix="$artifacts/" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
        -print_final_stats=1 "$@" || rc=$?
    rm -rf "$tmp"
    return $rc
}

cmd=${1:-}
shift || true
case $cmd in
list) printf '%s\n' "${TARGETS[@]}" ;;
build) build ;;
run)
    check_target "${1:?fuzz.sh run TARGET [SECONDS]}"
    t=$1
    secs=${2:-60}
    shift $(($# < 2 ? $# : 2))
    build --bin "$t"
    run "$t" "$secs" "$@"
    ;;
smoke)
    secs=${1:-10}
    build
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    for t in "${TARGETS[@]}"; do
        if ! run "$t" "$secs" >"$log" 2>&1; then
            tail -60 "$log" >&2
            echo "fuzz smoke: $t FAILED; the input is in fuzz/artifacts/$t/" >&2
            exit 1
        fi
        # libFuzzer's last status line: executions, coverage (cov) and features (ft).
        echo "fuzz smoke: $t (${secs}s): $(grep -E '^#[0-9]+' "$log" | tail -1)"
    done
    echo "fuzz smoke: every target ran ${secs}s without a finding"
    ;;
repro)
    check_target "${1:?fuzz.sh repro TARGET FILE...}"
    t=$1
    shift
    build --bin "$t"
    "$(bin "$t")" "$@"
    ;;
*)
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
