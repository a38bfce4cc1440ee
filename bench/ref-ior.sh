#!/usr/bin/env bash
# Builds IOR and mdtest (github.com/hpc/ior) from source for bench/mpi-ior.sh and
# bench/mpi-mdtest.sh, outside this repository: clones the source into DIR when it is not there
# yet, and builds it once (./bootstrap, ./configure, make; again only when the checkout is
# newer than the binaries). Prints DIR, to pass as --ior-dir DIR or IOR_DIR=DIR.
#
# Usage: bench/ref-ior.sh [DIR] [--from URL_OR_GIT_DIR] [--rev REV]
# DIR defaults to $IOR_DIR, else ~/ref/ior. --from defaults to https://github.com/hpc/ior.git.
# Needs git, autoconf, automake, make, a C compiler and Open MPI's mpicc (libopenmpi-dev);
# as root they are installed with apt-get when missing.
set -euo pipefail

BENCH_NAME=ref-ior
REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

DIR=${IOR_DIR:-$HOME/ref/ior}
FROM=https://github.com/hpc/ior.git
REV=""
while [ $# -gt 0 ]; do
    case "$1" in
        --from) FROM=$2; shift 2 ;;
        --rev) REV=$2; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) DIR=$1; shift ;;
    esac
done
mkdir -p "$(dirname "$DIR")"
DIR=$(cd "$(dirname "$DIR")" && pwd)/$(basename "$DIR")
case "$DIR/" in "$REPO"/*) die "$DIR is inside the repository; IOR's code must stay outside it" ;; esac

need git git
need autoreconf autoconf
need automake automake
need make make
need mpicc libopenmpi-dev

if [ ! -d "$DIR/.git" ]; then
    note "cloning $FROM into $DIR"
    git clone -q "$FROM" "$DIR" || die "git clone $FROM failed"
fi
if [ -n "$REV" ]; then
    git -C "$DIR" checkout -q "$REV" || die "no revision $REV in $DIR"
fi
# Built once: again only when the checkout moved (HEAD's commit is newer than the binaries).
if [ ! -x "$DIR/src/ior" ] || [ ! -x "$DIR/src/mdtest" ] || [ "$DIR/.git/HEAD" -nt "$DIR/src/ior" ]; then
    note "building IOR and mdtest in $DIR (log: $DIR/build.log)"
    (cd "$DIR" && ./bootstrap && ./configure && make -j"$(nproc)") >"$DIR/build.log" 2>&1 \
        || { tail -20 "$DIR/build.log" >&2; die "building IOR failed (see $DIR/build.log)"; }
fi
note "IOR $(git -C "$DIR" describe --always --tags 2>/dev/null) built: $DIR/src/ior, $DIR/src/mdtest"
echo "$DIR"
