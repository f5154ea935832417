#!/bin/sh
# Simulated hosts for the multi-node tests: Linux network namespaces, each
# with its own address on a private subnet, joined by a bridge that also
# has an address in the initial namespace (where mpiexec runs).
#
#   hosts.sh up DIR N   makes N hosts; DIR/env then sets EPMN_HOSTS (their
#                       names, comma-separated), EPMN_GATEWAY (the bridge's
#                       address, for mpiexec -localhost) and EPMN_PREFIX
#   hosts.sh down DIR   removes what `up` made (also after a partial `up`)
#   hosts.sh can        exit 0 if this machine can make them (root,
#                       iproute2, unshare, network namespaces, bridges)
#   hosts.sh run N CMD  runs CMD with N hosts up, EPMN_DIR set (for
#                       test/multinode/mpiexec.sh), and removes them after;
#                       exits 77 (skipped) when they cannot be made
#
# A host's name is its namespace's name; test/multinode/launch.sh enters it.
# Names carry the process id of `up` and each run takes a subnet that no
# interface uses yet (chosen under a lock), so concurrent runs do not
# collide.
set -u
cmd=${1:-}

can() {
    [ "$(id -u)" = 0 ] || { echo "not root"; return 1; }
    command -v ip > /dev/null || { echo "no ip command (apt-get install iproute2)"; return 1; }
    command -v unshare > /dev/null || { echo "no unshare command (util-linux)"; return 1; }
    probe=epmnprobe$$
    if ! ip netns add "$probe" 2> /dev/null; then
        echo "cannot make a network namespace"; return 1
    fi
    ip netns del "$probe"
    if ! ip link add "${probe}b" type bridge 2> /dev/null; then
        echo "cannot make a bridge"; return 1
    fi
    ip link del "${probe}b"
    return 0
}

down() {
    dir=$1
    [ -f "$dir/env" ] || return 0
    . "$dir/env"
    for ns in $(echo "$EPMN_HOSTS" | tr ',' ' '); do
        ip netns pids "$ns" 2> /dev/null | xargs -r kill -9 2> /dev/null
        ip netns del "$ns" 2> /dev/null
    done
    ip link del "${EPMN_PREFIX}b" 2> /dev/null # takes the veth ends with it
    rm -f "$dir/env"
}

up() {
    dir=$1 n=$2
    mkdir -p "$dir" || exit 1
    prefix=epmn$$
    exec 9> /run/lock/epmpi-multinode.lock
    flock 9
    # A /24 in 10.231.0.0/16 that no interface has yet.
    used=$(ip -4 -o addr show | awk '{ print $4 }')
    net=""
    for i in $(seq 0 255); do
        echo "$used" | grep -q "^10\.231\.$i\." || { net=10.231.$i; break; }
    done
    [ -n "$net" ] || { echo "hosts.sh: no free subnet in 10.231.0.0/16" >&2; exit 1; }
    hosts=""
    for h in $(seq 1 "$n"); do hosts="$hosts${hosts:+,}${prefix}h$h"; done
    # Written first, so that `down` cleans up after a partial `up`.
    printf 'EPMN_PREFIX=%s\nEPMN_HOSTS=%s\nEPMN_GATEWAY=%s\n' "$prefix" "$hosts" "$net.1" > "$dir/env"
    set -e
    ip link add "${prefix}b" type bridge
    ip addr add "$net.1/24" dev "${prefix}b"
    ip link set "${prefix}b" up
    for h in $(seq 1 "$n"); do
        ns=${prefix}h$h
        ip netns add "$ns"
        ip link add "${prefix}v$h" type veth peer name eth0 netns "$ns"
        ip link set "${prefix}v$h" master "${prefix}b" up
        ip -n "$ns" addr add "$net.$((h + 10))/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" link set lo up
    done
    set +e
    flock -u 9
}

case $cmd in
    up) [ $# = 3 ] || { echo "usage: hosts.sh up DIR N" >&2; exit 2; }; up "$2" "$3" ;;
    down) [ $# = 2 ] || { echo "usage: hosts.sh down DIR" >&2; exit 2; }; down "$2" ;;
    can) can ;;
    run)
        [ $# -ge 3 ] || { echo "usage: hosts.sh run N COMMAND..." >&2; exit 2; }
        n=$2
        shift 2
        why=$(can) || { echo "hosts.sh: skipped: cannot make simulated hosts: $why (they need root, iproute2 and network namespaces)"; exit 77; }
        EPMN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/epmpi-multinode.XXXXXX") || exit 1
        export EPMN_DIR
        trap 'down "$EPMN_DIR"; rm -rf "$EPMN_DIR"' EXIT
        trap 'exit 130' INT TERM
        (up "$EPMN_DIR" "$n") || exit 1
        # In the background and waited for: a shell runs its traps only
        # when its foreground command ends, but a signal interrupts
        # `wait`, so the hosts go (and their processes with them, `down`)
        # as soon as this script is told to stop.  Standard input goes
        # along through fd 3 (sh gives a background command /dev/null).
        exec 3<&0
        "$@" <&3 3<&- &
        child=$!
        trap 'kill -TERM $child 2> /dev/null; exit 130' INT TERM
        wait $child
        exit $? ;;
    *) echo "usage: hosts.sh up DIR N | down DIR | can | run N COMMAND..." >&2; exit 2 ;;
esac
