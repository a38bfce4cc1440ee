# Shared by the bench scripts (sourced, not run): messages, installing a missing tool from
# Debian, and finding or building the iolab binary. The sourcing script sets BENCH_NAME,
# REPO, IOLAB (empty: the repository's release build) and BUILD (1: build it first).

die() { echo "$BENCH_NAME: error: $*" >&2; exit 1; }
note() { echo "$BENCH_NAME: $*" >&2; }

IS_ROOT=0
[ "$(id -u)" = 0 ] && IS_ROOT=1

APT_UPDATED=0
apt_install() {
    [ "$IS_ROOT" = 1 ] || die "$1 is missing and installing it needs root (apt-get install -y $*)"
    command -v apt-get >/dev/null || die "$1 is missing and there is no apt-get to install it"
    note "installing $* with apt-get"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1; then
        if [ "$APT_UPDATED" = 0 ]; then
            apt-get update -q >/dev/null 2>&1 || true
            APT_UPDATED=1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null \
            || die "apt-get install -y $* failed"
    fi
}

need() { # need COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 || apt_install "$2"
    command -v "$1" >/dev/null 2>&1 || die "$1 still missing after installing $2"
}

resolve_iolab() { # sets IOLAB to a runnable binary, building it when asked
    if [ -z "$IOLAB" ]; then
        IOLAB="$REPO/target/release/iolab"
        if [ "$BUILD" = 1 ]; then
            command -v cargo >/dev/null || die "cargo not found; build iolab first or pass --iolab PATH"
            note "building iolab (cargo build --release -p iolab; waits if another build holds the lock)"
            (cd "$REPO" && cargo build --release -q -p iolab) || die "cargo build failed"
        fi
    fi
    [ -x "$IOLAB" ] || die "no iolab binary at $IOLAB"
}
