#!/bin/sh
# make check-multinode: the MPI test table across simulated hosts on this
# machine (network namespaces, test/multinode/hosts.sh), every shape of two
# processes or more, in four runs:
#   1. ranks dealt to 3 hosts in turn, epmpi's UCX transport with UCX's
#      own choice of transports, as a user gets it: between these hosts
#      (one machine, one boot id) that is shared memory, as between
#      containers on one machine (see ucx.c's start-up);
#   2. the same over TCP only (EPMPI_UCX_TLS=tcp,self), as between the
#      nodes of a cluster;
#   3. two ranks a host, over TCP;
#   4. ranks dealt in turn, epmpi's MPI transport (EPMPI_TRANSPORT=mpi).
# MPICH's own traffic uses shared memory between the hosts (see launch.sh).
# Runs 3 and 4 take the programs whose behaviour depends on where ranks
# are (EPMN_SHORT_TESTS); EPMN_FULL=1 runs the whole table in each.
# Needs root, iproute2 and unshare; exits 77 (skipped) with the reason
# otherwise.  Cleans up its namespaces and links whatever happens.
#
# Environment (set by make): MAKE, EPMN_TESTS (the MPI test programs),
# EPMN_SHORT_TESTS, EPMN_BUILDDIR.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${EPMN_TESTS:?check.sh runs from make check-multinode}"
builddir=${EPMN_BUILDDIR:-.}
MAKE=${MAKE:-make}

# First pass: make the hosts (hosts.sh run skips with the reason when it
# cannot, and removes them whatever happens), then come back with them.
[ "${1:-}" = --on-hosts ] || exec sh "$here/hosts.sh" run 3 sh "$here/check.sh" --on-hosts
. "$EPMN_DIR/env"
echo "== check-multinode: hosts $EPMN_HOSTS (mpiexec at $EPMN_GATEWAY)"

MPIEXEC="$here/mpiexec.sh"
export EPMPI_TEST_MPIEXEC="$MPIEXEC"
export EPMPI_TEST_MIN_PROCS=2

# The transports in use, as epmpi reports them: UCX over TCP between hosts.
out=$(EPMPI_UCX_TLS=tcp,self "$MPIEXEC" -n 2 -genv EPMPI_ENDPOINTS 2 -genv OMP_NUM_THREADS 2 -genv EPMPI_VERBOSE 1 \
    -genv LD_PRELOAD "$builddir/.libs/libepmpi.so" "$builddir/test/mpi/node_hosts" 2>&1)
echo "$out" | grep -q 'transport ucx (.*tcp/eth0' || {
    echo "check-multinode: epmpi does not report UCX over TCP between the hosts:" >&2
    echo "$out" >&2
    exit 1
}

# With UCX's own choice: shared memory between hosts that are network
# namespaces of one machine, whose wake-ups cannot cross them, so epmpi's
# UCX polls every transport (else the first message to a host that has
# connected to nobody waits for ever).
out=$("$MPIEXEC" -n 2 -genv EPMPI_ENDPOINTS 2 -genv OMP_NUM_THREADS 2 -genv EPMPI_VERBOSE 1 \
    -genv LD_PRELOAD "$builddir/.libs/libepmpi.so" "$builddir/test/mpi/node_hosts" 2>&1)
echo "$out" | grep -q 'transport ucx (.*, all polled (processes of this machine in other network namespaces)' || {
    echo "check-multinode: epmpi's UCX does not poll every transport between namespaces of one machine:" >&2
    echo "$out" >&2
    exit 1
}

status=0
run() { # NAME TESTS [VAR=VALUE...]: one make check of TESTS across the hosts
    name=$1 tests=$2
    shift 2
    echo "== check-multinode: $name"
    start=$(date +%s)
    if ! env "$@" $MAKE -C "$builddir" check TESTS="$tests" TEST_SUITE_LOG="test-multinode-$name.log"; then
        status=1
    fi
    echo "== check-multinode: $name took $(( $(date +%s) - start ))s"
}
short=${EPMN_SHORT_TESTS:-$EPMN_TESTS}
[ "${EPMN_FULL:-0}" = 1 ] && short=$EPMN_TESTS
run rr-ucx "$EPMN_TESTS" EPMN_PLACE=rr
run rr-ucx-tcp "$EPMN_TESTS" EPMN_PLACE=rr EPMPI_UCX_TLS=tcp,self
run block-ucx-tcp "$short" EPMN_PLACE=block EPMPI_UCX_TLS=tcp,self
run rr-mpi "$short" EPMN_PLACE=rr EPMPI_TRANSPORT=mpi
[ $status = 0 ] && echo "== check-multinode passed"
exit $status
