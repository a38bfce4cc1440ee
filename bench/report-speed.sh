#!/bin/sh
# How long `iolab report` takes on an experiment of many runs (target: < 3 s for 10 000).
#
#   bench/report-speed.sh [RUNS] [CONFIGS]      (defaults: 10000 runs, 4 configurations)
#
# Builds the release binary and the synthetic-database example, fills a fresh database in a
# temporary directory (the filling takes a while: one durable commit per run), then times
# HTML, Markdown and JSON reports of it.
set -eu
runs=${1:-10000}
configs=${2:-4}
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p iolab
cargo build --release -q -p iolab-report --example synth_db
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$target/release/examples/synth_db" "$dir/bench.db" "$runs" "$configs"
for f in r.html r.md r.json; do
    start=$(date +%s.%N)
    "$target/release/iolab" report --db "$dir/bench.db" -o "$dir/$f"
    end=$(date +%s.%N)
    printf '%s runs → %-7s %6.3f s  %s bytes\n' "$runs" "$f" "$(echo "$end - $start" | bc)" \
        "$(wc -c < "$dir/$f")"
done
