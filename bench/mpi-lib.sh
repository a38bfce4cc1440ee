# shellcheck shell=bash
# Shared by bench/mpi-ior.sh and bench/mpi-mdtest.sh (sourced after bench/lib.sh): options,
# the places (a tmpfs, an ext4 on a direct-I/O loop device), mpirun, the interleaved pairs and
# the summary (bench/mpi-pairs.py). The sourcing script sets BENCH (ior or mdtest), CASES (the
# default case list), defines case_flags CASE (prints the case's flags) and tool_argv TOOL
# CASE DIR K [FLAGS] (TOOL ref or iolab; K numbers the invocations of a run, FLAGS are added
# ones such as a split run's -w -k; sets ARGV, one rank's command, and RESULT, the file its
# result is read from), and calls mpi_main "$@".

IOLAB=""
# shellcheck disable=SC2034 # read by bench/lib.sh's resolve_iolab
BUILD=1
PAIRS=5
RANKS="2,4"
PLACES="tmpfs,dev"
REF_DIR=${IOR_DIR:-}
SAVE=""
TOOLS_ONLY=0
AA=0
NETNS=0
SPLIT=0
DROP=0
EXTRA=""
IMG_SIZE=3G
WORK=""
IMG=""
LOOPDEV=""
DEV_MOUNTED=0
TMPFS_MOUNTED=0
NETNS_UP=0
QUICK=0 # --quick: 2 pairs, and the sourcing script's smaller sizes

mpi_usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0; }

# shellcheck disable=SC2034 # BUILD is read by bench/lib.sh
mpi_options() {
    while [ $# -gt 0 ]; do
        case "$1" in
            --pairs) PAIRS=$2; shift 2 ;;
            --ranks) RANKS=$2; shift 2 ;;
            --places) PLACES=$2; shift 2 ;;
            --cases) CASES=$2; shift 2 ;;
            --ior-dir) REF_DIR=$2; shift 2 ;;
            --iolab) IOLAB=$2; shift 2 ;;
            --no-build) BUILD=0; shift ;;
            --save) SAVE=$2; shift 2 ;;
            --tools-only) TOOLS_ONLY=1; shift ;;
            --aa) AA=1; shift ;;
            --netns) NETNS=1; shift ;;
            --split) SPLIT=1; shift ;;
            --drop-caches) DROP=1; shift ;;
            --extra) EXTRA=$2; shift 2 ;;
            --quick) PAIRS=2; QUICK=1; shift ;;
            -h|--help) mpi_usage ;;
            *) die "unknown option $1 (see --help)" ;;
        esac
    done
    [[ "$PAIRS" =~ ^[1-9][0-9]*$ ]] || die "--pairs must be a positive number"
    [ "$SPLIT" = 0 ] || [ "$BENCH" = ior ] || die "--split is for mpi-ior.sh only"
}

mpi_cleanup() {
    local rc=$?
    set +e
    if [ "$NETNS_UP" = 1 ]; then "$REPO/scripts/mpi-netns.sh" clean || note "mpi-netns.sh clean failed"; fi
    if [ "$DEV_MOUNTED" = 1 ]; then umount "$WORK/dev" || umount -l "$WORK/dev" || note "could not unmount $WORK/dev"; fi
    if [ "$TMPFS_MOUNTED" = 1 ]; then umount "$WORK/tmpfs" || umount -l "$WORK/tmpfs" || note "could not unmount $WORK/tmpfs"; fi
    if [ -n "$LOOPDEV" ]; then losetup -d "$LOOPDEV" || note "could not detach $LOOPDEV"; fi
    [ -n "$IMG" ] && rm -f "$IMG"
    # Only after the unmounts: rm must not descend into a still-mounted file system.
    if [ -n "$WORK" ] && ! mountpoint -q "$WORK/dev" && ! mountpoint -q "$WORK/tmpfs"; then
        rm -rf "$WORK"
    fi
    exit "$rc"
}

setup_places() {
    local p
    for p in ${PLACES//,/ }; do
        case "$p" in
            tmpfs)
                mkdir -p "$WORK/tmpfs"
                mount -t tmpfs -o size=8g "$BENCH_NAME" "$WORK/tmpfs" || die "cannot mount a tmpfs"
                TMPFS_MOUNTED=1
                echo "tmpfs: $WORK/tmpfs (size=8g)"
                ;;
            dev)
                IMG=$(mktemp "/var/tmp/$BENCH_NAME.XXXXXX.img")
                # Written whole, not sparse: a direct-I/O write into a hole of the backing
                # file makes the host file system allocate it, which only the first run
                # touching a region would pay for.
                dd if=/dev/zero of="$IMG" bs=4M count=$((${IMG_SIZE%G} * 256)) oflag=direct \
                    conv=fsync status=none || die "cannot write the image $IMG"
                LOOPDEV=$(losetup -f --show --direct-io=on "$IMG") || { LOOPDEV=""; die "losetup failed"; }
                # No lazy initialisation: ext4lazyinit would write inode tables during the runs.
                mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 "$LOOPDEV" \
                    || die "mkfs.ext4 $LOOPDEV failed"
                mkdir -p "$WORK/dev"
                mount "$LOOPDEV" "$WORK/dev" || die "mount $LOOPDEV failed"
                DEV_MOUNTED=1
                echo "dev:   $LOOPDEV (direct-io=$(losetup -n -O DIO "$LOOPDEV" | tr -d ' ')) on $IMG ($IMG_SIZE, written whole), ext4 on $WORK/dev"
                ;;
            *) die "unknown place $p (tmpfs, dev)" ;;
        esac
    done
}

# mpirun for NP ranks. Ranks may outnumber the CPUs (--oversubscribe; Open MPI then binds
# nothing, for both tools alike). With --netns each rank runs on its own "host" (a network
# namespace of scripts/mpi-netns.sh), as on a cluster.
# One rank runs without mpirun (MPI's singleton start), as a user's plain command would.
mpirun_argv() { # NP
    if [ "$1" = 1 ] && [ "$NETNS" = 0 ]; then MPIRUN=(); return; fi
    MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np "$1")
    # shellcheck disable=SC2206 # the options are words without blanks
    [ "$NETNS" = 0 ] || MPIRUN+=($IOLAB_MPI_NETNS_ARGS)
}

# One run of one tool: every invocation (two with --split: write, then read), then its record.
run_one() { # SLOT PARSER CASE PLACE NP PAIR ORDER
    local slot=$1 parser=$2 case=$3 place=$4 np=$5 pair=$6 order=$7
    local dir="$WORK/$place/run" k t0 wall_ms=0 results=() flags
    flags=$(case_flags "$case")
    local invocations=("")
    [ "$SPLIT" = 0 ] || invocations=("-w -k" "-r")
    mkdir -p "$dir"
    mpirun_argv "$np"
    for k in "${!invocations[@]}"; do
        # Nothing of the previous run may still be dirty; dropping the page cache too is asked
        # for (or between a split run's write and read).
        if [ "$place" = dev ]; then
            sync -f "$dir"
            if [ "$DROP" = 1 ] || [ "$k" = 1 ]; then echo 3 >/proc/sys/vm/drop_caches; fi
        fi
        tool_argv "$parser" "$case" "$dir" "$k" "${invocations[$k]}"
        # shellcheck disable=SC2153 # RESULT is set by tool_argv
        rm -f "$RESULT" # a result left by an earlier run must not pass for this one's
        t0=$(date +%s%N)
        "${MPIRUN[@]}" "${ARGV[@]}" >"$WORK/out.$k" 2>"$WORK/err.$k" || {
            tail -n 20 "$WORK/err.$k" "$WORK/out.$k" >&2
            [ "$parser" = iolab ] && note "the iolab side fails; --tools-only or --aa run the reference alone"
            die "failed ($case, $place, $np ranks, pair $pair): ${MPIRUN[*]} ${ARGV[*]}"
        }
        wall_ms=$((wall_ms + ($(date +%s%N) - t0) / 1000000))
        results+=("$RESULT")
    done
    [ "$pair" = 0 ] || python3 "$REPO/bench/mpi-pairs.py" record "$BENCH" "$slot" "$parser" \
        case="$case" place="$place" ranks="$np" pair="$pair" order="$order" \
        flags="$flags${EXTRA:+ $EXTRA}" wall_ms="$wall_ms" -- "${results[@]}" \
        >>"$RESULTS" || die "cannot read the result of ${ARGV[*]} (in ${results[*]})"
    rm -rf "$dir"
}

mpi_main() {
    mpi_options "$@"
    [ "$IS_ROOT" = 1 ] || die "needs root (tmpfs and loop device mounts; mpi-netns.sh)"
    need mpirun openmpi-bin
    need python3 python3
    need losetup mount
    need mkfs.ext4 e2fsprogs
    REF=${REF_DIR:+$REF_DIR/src/}$BENCH
    command -v "$REF" >/dev/null || die "no $BENCH at ${REF} (build IOR with bench/ref-ior.sh, then --ior-dir DIR or IOR_DIR=DIR)"
    REF=$(command -v "$REF")
    if [ "$TOOLS_ONLY" = 0 ] && [ "$AA" = 0 ]; then resolve_iolab; fi
    WORK=$(mktemp -d "/tmp/$BENCH_NAME.XXXXXX")
    trap mpi_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
    RESULTS="$WORK/results.jsonl"
    : >"$RESULTS"
    setup_places
    local r np max=0
    for r in ${RANKS//,/ }; do
        [[ "$r" =~ ^[1-9][0-9]*$ ]] || die "--ranks takes numbers, not $r"
        ((r > max)) && max=$r
    done
    if [ "$NETNS" = 1 ]; then
        eval "$("$REPO/scripts/mpi-netns.sh" up -n "$max")" || die "scripts/mpi-netns.sh up failed"
        NETNS_UP=1
    fi
    echo "$BENCH: $REF ($(git -C "$(dirname "$REF")" describe --always --tags 2>/dev/null || echo '?'))"
    [ "$TOOLS_ONLY" = 1 ] || [ "$AA" = 1 ] || echo "iolab: $IOLAB ($("$IOLAB" --version 2>/dev/null || echo 'version unknown'))"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    local place case pair second=iolab
    [ "$AA" = 0 ] || second=ref
    for place in ${PLACES//,/ }; do
        for case in ${CASES//,/ }; do
            case_flags "$case" >/dev/null || die "unknown case $case"
            for np in ${RANKS//,/ }; do
                mpirun_argv "$np"
                tool_argv ref "$case" "$WORK/$place/run" 0
                echo "-- $case on $place, $np ranks: ${MPIRUN[*]} ${ARGV[*]}"
                if [ "$TOOLS_ONLY" = 0 ]; then
                    tool_argv "$second" "$case" "$WORK/$place/run" 0
                    echo "   other side: ${MPIRUN[*]} ${ARGV[*]}"
                fi
                [ "$SPLIT" = 0 ] || echo "   (--split: each as two runs, with -w -k, then -r)"
                # One untimed run of each first (pair 0: not recorded).
                run_one ref ref "$case" "$place" "$np" 0 -
                [ "$TOOLS_ONLY" = 1 ] || run_one iolab "$second" "$case" "$place" "$np" 0 -
                for ((pair = 1; pair <= PAIRS; pair++)); do
                    if [ "$TOOLS_ONLY" = 1 ]; then
                        run_one ref ref "$case" "$place" "$np" "$pair" R
                    elif ((pair % 2)); then
                        run_one ref ref "$case" "$place" "$np" "$pair" R-I
                        run_one iolab "$second" "$case" "$place" "$np" "$pair" R-I
                    else
                        run_one iolab "$second" "$case" "$place" "$np" "$pair" I-R
                        run_one ref ref "$case" "$place" "$np" "$pair" I-R
                    fi
                done
            done
        done
    done
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    [ -z "$SAVE" ] || cat "$RESULTS" >>"$SAVE"
    local aa=()
    [ "$AA" = 0 ] || aa=(--aa)
    python3 "$REPO/bench/mpi-pairs.py" summary "${aa[@]}" "$RESULTS" || die "summary failed"
}
