#!/bin/sh
# Stands in for ssh when hydra starts its proxies on simulated hosts
# (mpiexec -launcher ssh -launcher-exec launch.sh): hydra calls it as
# `launch.sh [ssh options] HOST COMMAND...`; it runs COMMAND in HOST's network
# namespace (test/multinode/hosts.sh) with HOST as the host name (a UTS
# namespace of its own), through a shell as sshd would.  Host N (name
# ending in hN) gets cores of its own where the machine has enough: the
# N-th of the CPUs this script may use, round-robin, so that what epmpi
# decides from a node's cores (EPMPI_P2P_PATH in the README) sees one
# host's share, not the whole machine's.  EPMN_PIN=0 leaves every host
# every CPU (on this 2-core machine: two hosts of two cores each).
#
# The hosts share the machine's boot id, so UCX still takes them for one
# machine: MPICH's own traffic between them goes through shared memory,
# and only what asks for TCP (check.sh sets EPMPI_UCX_TLS for epmpi's
# transport) crosses the simulated network.  Giving each host a boot id of
# its own (a bind mount in a mount namespace) makes MPICH use TCP too, but
# then MPICH 4.0.2 over UCX 1.13's TCP hangs in MPI_Finalize in about half
# of the runs of three processes, with or without epmpi (UCX's issue 8738:
# a TCP endpoint's close waits for a peer that has stopped progressing).
while [ $# -gt 0 ]; do
    case $1 in
        -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;; # ssh options with an argument
        -*) shift ;;
        *) break ;;
    esac
done
[ $# -ge 2 ] || { echo "launch.sh: usage: launch.sh [ssh options] HOST COMMAND..." >&2; exit 255; }
host=$1
shift
n=${host##*h}
cpus=$(taskset -cp $$ | sed 's/.*: //' | tr ',' '\n' |
    awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }')
ncpu=$(echo "$cpus" | wc -l)
cpu=$(echo "$cpus" | sed -n "$(( (n - 1) % ncpu + 1 ))p")
[ "${EPMN_PIN:-1}" = 0 ] && cpu=$(echo "$cpus" | paste -sd, -)
exec taskset -c "$cpu" ip netns exec "$host" unshare --uts sh -c 'hostname "$1" && shift && exec sh -c "$*"' launch.sh "$host" "$@"
