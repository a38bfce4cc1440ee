#!/usr/bin/env bash
# Proof by removal: a workload kind is one place plus one registration line.
#
#   scripts/remove-kind.sh KIND [SCRATCH]
#
# Copies the committed tree into SCRATCH (default: a new temporary directory), deletes the
# kind's crate (crates/iolab-KIND), its registration line in crates/iolab-kinds, its Cargo
# dependency lines, and its tests (test files and examples named after it, test functions
# whose name starts with `KIND_`). Then it builds the workspace, runs the tests and shows
# that `iolab --help` no longer lists the kind. Nothing in this checkout is changed.
#
# Extra arguments for `cargo test` go in IOLAB_REMOVE_TEST_ARGS (e.g. "--no-fail-fast").
set -euo pipefail

kind=${1:?usage: scripts/remove-kind.sh KIND [SCRATCH]}
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=${2:-$(mktemp -d "${TMPDIR:-/tmp}/iolab-without-$kind.XXXXXX")}
[[ -d "$here/crates/iolab-$kind" ]] || { echo "no crate crates/iolab-$kind: is '$kind' a kind?" >&2; exit 2; }

say() { printf '\n== %s\n' "$*"; }

say "scratch copy of $(git -C "$here" rev-parse --short HEAD) in $scratch"
mkdir -p "$scratch"
git -C "$here" archive HEAD | tar -x -C "$scratch"
cd "$scratch"

say "removing the kind's place"
rm -rf "crates/iolab-$kind"
echo "deleted crates/iolab-$kind"

say "removing its registration line"
grep -n "iolab_$kind::" crates/iolab-kinds/src/lib.rs
sed -i "/iolab_$kind::/d" crates/iolab-kinds/src/lib.rs

say "removing its dependency lines"
grep -n "^iolab-$kind *=" crates/*/Cargo.toml tests/*/Cargo.toml || true
sed -i "/^iolab-$kind *=/d" crates/*/Cargo.toml tests/*/Cargo.toml

say "removing its tests"
find crates tests examples \( -path '*/tests/*' \( -name "${kind}_*.rs" -o -name "${kind}.rs" \) \) \
    -o \( -path 'examples/*' -name "${kind}*.toml" \) | sort | while read -r f; do
    echo "deleted $f"
    rm -f "$f"
done
# Test functions named after the kind in shared test files (e.g. single_run.rs).
python3 - "$kind" <<'EOF'
import pathlib, re, sys
kind = sys.argv[1]
head = re.compile(r'\n(#\[test\]\n(?:#\[[^\n]*\]\n)*fn ' + re.escape(kind) + r'_\w*\(\)[^\n]*\{\n)')
for path in sorted(pathlib.Path('.').glob('**/tests/**/*.rs')):
    text = path.read_text()
    out, pos, removed = [], 0, []
    for m in head.finditer(text):
        if m.start() < pos:
            continue
        end = text.find('\n}\n', m.end())
        if end < 0:
            continue
        out.append(text[pos:m.start()])
        removed.append(re.search(r'fn (\w+)', m.group(1)).group(1))
        pos = end + 2
    if removed:
        out.append(text[pos:])
        path.write_text(''.join(out))
        for name in removed:
            print(f"deleted {path}::{name}")
EOF

say "what still names '$kind' in crates/ (code)"
if grep -rIwn "$kind" crates --include=*.rs --include=Cargo.toml; then
    echo "the kind is still named outside its place" >&2
    exit 1
fi
echo "nothing"

say "cargo build --workspace --all-targets"
cargo build --workspace --all-targets --quiet

say "iolab --help"
./target/debug/iolab --help
if ./target/debug/iolab --help | grep -qw "$kind"; then
    echo "iolab --help still lists $kind" >&2
    exit 1
fi

say "cargo test --workspace ${IOLAB_REMOVE_TEST_ARGS:-}"
status=0
# shellcheck disable=SC2086
cargo test --workspace ${IOLAB_REMOVE_TEST_ARGS:-} >test.log 2>&1 || status=$?
grep -E "^test result|FAILED|panicked" test.log || true
if [[ $status -ne 0 ]]; then
    echo "cargo test failed ($status); the whole log is $scratch/test.log" >&2
    exit 1
fi
say "the workspace without $kind builds, its tests pass and iolab --help does not list $kind"
