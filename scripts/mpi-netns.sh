#!/usr/bin/env bash
# Several MPI "hosts" on one machine: N network namespaces (iolab-mpi-0 .. iolab-mpi-N-1), each
# with a veth on one bridge (iolab-mpi-br) in a private /24, and an Open MPI rsh agent that
# starts Open MPI's daemon inside the namespace of the host it is asked for. Open MPI then
# sees N remote nodes: one daemon per node, ranks talk TCP over the bridge, and every rank has
# its own hostname (a UTS namespace per launch), while all of them see the same files.
#
# Usage:
#   scripts/mpi-netns.sh run [-n N] [--slots S] -- COMMAND [ARG...]
#       set up N hosts, run COMMAND, remove everything (on every exit path). When COMMAND is
#       mpirun/mpiexec, the options are put right after it; any COMMAND also gets them in
#       $IOLAB_MPI_NETNS_ARGS (word-split them: mpirun $IOLAB_MPI_NETNS_ARGS ...).
#   scripts/mpi-netns.sh up [-n N] [--slots S]
#       set up N hosts and leave them; prints shell lines to eval:
#       eval "$(scripts/mpi-netns.sh up -n 2)"; mpirun $IOLAB_MPI_NETNS_ARGS -np 2 hostname
#   scripts/mpi-netns.sh clean
#       remove whatever up or run made (namespaces, veths, bridge, state directory).
#
# N defaults to 2, S (slots per host in the hostfile) to 1. The subnet is 10.213.0.0/24
# (host K is 10.213.0.K+1, the bridge 10.213.0.254); the host names resolve inside the
# namespaces (through /etc/netns/NAME/hosts); set IOLAB_MPI_NETNS_NET=10.X.Y to use
# 10.X.Y.0/24 instead. Needs root and iproute2. Only one set of hosts exists at a time.
set -euo pipefail

NAME=mpi-netns
PREFIX=iolab-mpi
BRIDGE=$PREFIX-br
NET=${IOLAB_MPI_NETNS_NET:-10.213.0}
SUBNET=$NET.0/24
STATE=/run/$PREFIX-netns
AGENT=$STATE/agent
HOSTFILE=$STATE/hostfile

die() { echo "$NAME: error: $*" >&2; exit 1; }
note() { echo "$NAME: $*" >&2; }

# The Open MPI options for these hosts. Open MPI's daemons start through the agent
# (plm_rsh_agent), one per host and all from mpirun (no tree spawn: a daemon inside a
# namespace would otherwise start the next ones). Both the out-of-band channel and the
# MPI byte transfer layer must use the bridge's subnet; shared-memory transfer (vader)
# is left out, as between real hosts. PMIx's shared-memory data store (gds ds12/ds21) is
# replaced by its hash store, which needs nothing shared between the "nodes".
mpirun_args() {
    echo "--hostfile $HOSTFILE --mca plm_rsh_agent $AGENT --mca plm_rsh_no_tree_spawn 1" \
        "--mca btl tcp,self --mca btl_tcp_if_include $SUBNET --mca oob_tcp_if_include $SUBNET"
}

# Removes everything of ours that exists; used by clean and by every exit of run/up-failure.
# Processes still inside one of our namespaces were started there by our agent (stray
# daemons or ranks of an interrupted run); they are ended by PID before the namespace goes.
teardown() {
    set +e
    local ns pid link left=0
    for ns in $(ip netns list 2>/dev/null | awk -v p="$PREFIX-" 'index($1, p) == 1 {print $1}'); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            note "ending process $pid still in $ns ($(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | cut -c1-60))"
            kill -TERM "$pid" 2>/dev/null
        done
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            sleep 0.5
            kill -KILL "$pid" 2>/dev/null
        done
        ip netns del "$ns" || { note "could not delete namespace $ns"; left=1; }
    done
    # The host ends of the veths go with their peers' namespaces; these catch half-made ones.
    # Deleting a namespace deletes its veth pair asynchronously: a link may vanish between
    # listing and deleting it, which is not a failure.
    for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 |
        grep "^$PREFIX-v"); do
        ip link del "$link" 2>/dev/null || ! ip link show "$link" >/dev/null 2>&1 ||
            { note "could not delete link $link"; left=1; }
    done
    if ip link show "$BRIDGE" >/dev/null 2>&1; then
        ip link del "$BRIDGE" || { note "could not delete bridge $BRIDGE"; left=1; }
    fi
    rm -rf "$STATE" "/etc/netns/$PREFIX-"*
    rmdir /etc/netns 2>/dev/null # only if nothing else is in it
    # Open MPI's session directories are named after the host; a daemon that was killed
    # leaves its own behind.
    rm -rf "${TMPDIR:-/tmp}/ompi.$PREFIX-"*
    return $left
}

setup() { # N SLOTS
    local n=$1 slots=$2 k ns ip
    if ! [[ "$n" =~ ^[0-9]+$ ]] || ((n < 1 || n > 200)); then die "-n must be 1..200, not $n"; fi
    [[ "$slots" =~ ^[1-9][0-9]*$ ]] || die "--slots must be a positive number, not $slots"
    if [ -e "$STATE" ] || ip link show "$BRIDGE" >/dev/null 2>&1 ||
        ip netns list | grep -q "^$PREFIX-"; then
        die "hosts of an earlier run exist (another run going on, or one that was killed);" \
            "end that run or remove them with: $0 clean"
    fi
    if ip -4 route show | grep -q "^$NET\."; then
        die "$SUBNET is already routed here; choose another with IOLAB_MPI_NETNS_NET=10.X.Y"
    fi
    MADE=1 # from here on, whatever exists of ours is this run's, and goes on exit
    mkdir -p "$STATE"
    ip link add "$BRIDGE" type bridge
    ip addr add "$NET.254/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    : >"$HOSTFILE"
    local cases="" hosts=""
    for ((k = 0; k < n; k++)); do
        ns=$PREFIX-$k
        ip=$NET.$((k + 1))
        ip netns add "$ns"
        ip link add "$PREFIX-v$k" type veth peer name eth0 netns "$ns"
        ip link set "$PREFIX-v$k" master "$BRIDGE" up
        ip -n "$ns" addr add "$ip/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" link set lo up
        echo "$ip slots=$slots" >>"$HOSTFILE"
        cases+="    $ip|$ns) ns=$ns ;;"$'\n'
        hosts+="$ip $ns"$'\n'
    done
    # Every host's name resolves inside the namespaces: ip netns exec puts the files of
    # /etc/netns/NAME/ over /etc/ for the processes it starts.
    for ((k = 0; k < n; k++)); do
        mkdir -p "/etc/netns/$PREFIX-$k"
        printf '127.0.0.1 localhost\n::1 localhost\n%s' "$hosts" >"/etc/netns/$PREFIX-$k/hosts"
    done
    # Open MPI runs "AGENT HOST COMMAND..." to start its daemon on HOST (the hostfile's
    # address). The agent runs COMMAND in that host's namespace, in a UTS namespace of its
    # own named after it, so that each rank's hostname names its host.
    cat >"$AGENT" <<EOF
#!/bin/sh
# Open MPI's rsh agent for the hosts of mpi-netns.sh: runs a command in a host's namespace.
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
host=\$1; shift
case "\$host" in
$cases    *) echo "mpi-netns agent: unknown host \$host (not in $HOSTFILE)" >&2; exit 255 ;;
esac
exec ip netns exec "\$ns" unshare --uts sh -c 'hostname "\$1" && exec sh -c "\$2"' sh "\$ns" "\$*"
EOF
    chmod +x "$AGENT"
}

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

[ $# -ge 1 ] || usage 2
cmd=$1; shift
N=2
SLOTS=1
MADE=0
while [ $# -gt 0 ]; do
    case "$1" in
        -n) N=$2; shift 2 ;;
        --slots) SLOTS=$2; shift 2 ;;
        --) shift; break ;;
        -h|--help) usage ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
done
[ "$(id -u)" = 0 ] || die "needs root (network namespaces, a bridge)"
command -v ip >/dev/null || die "ip (iproute2) is missing"
command -v unshare >/dev/null || die "unshare (util-linux) is missing"

case "$cmd" in
    clean)
        teardown || die "some of it is left (see above)"
        ;;
    up)
        trap 'rc=$?; [ $rc = 0 ] || [ "$MADE" = 0 ] || teardown; exit $rc' EXIT
        setup "$N" "$SLOTS"
        echo "export PMIX_MCA_gds=hash OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
        echo "export IOLAB_MPI_NETNS_ARGS='$(mpirun_args)'"
        note "$N hosts up ($SUBNET); remove them with: $0 clean"
        ;;
    run)
        [ $# -ge 1 ] || die "run needs a command after --"
        trap 'rc=$?; trap - EXIT; if [ "$MADE" = 1 ]; then teardown || rc=1; fi; exit $rc' EXIT
        # The command runs in the background so that a signal is handled at once (bash runs
        # a trap only after a foreground command ends): it is passed on to the command as
        # SIGTERM (mpirun then ends its job on every host), then everything is removed.
        child=""
        # shellcheck disable=SC2317 # called from the traps
        stop() {
            if [ -n "$child" ]; then
                kill -TERM "$child" 2>/dev/null
                wait "$child" 2>/dev/null || true
            fi
            exit "$1"
        }
        trap 'stop 130' INT
        trap 'stop 143' TERM
        trap 'stop 129' HUP
        setup "$N" "$SLOTS"
        export PMIX_MCA_gds=hash OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        IOLAB_MPI_NETNS_ARGS=$(mpirun_args)
        export IOLAB_MPI_NETNS_ARGS
        prog=$1; shift
        # shellcheck disable=SC2086 # the options are words without blanks
        case "$(basename "$prog")" in
            mpirun|mpiexec|orterun) "$prog" $IOLAB_MPI_NETNS_ARGS "$@" <&0 & ;;
            *) "$prog" "$@" <&0 & ;;
        esac
        child=$!
        rc=0
        wait "$child" || rc=$?
        child=""
        exit "$rc"
        ;;
    *) usage 2 ;;
esac
