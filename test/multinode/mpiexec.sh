#!/bin/sh
# mpiexec over the simulated hosts of test/multinode/hosts.sh, for
# test/run-mpi (EPMPI_TEST_MPIEXEC) and make bench (BENCH_MPIEXEC): EPMN_DIR names the folder of
# `hosts.sh up`; EPMN_PLACE is rr (ranks dealt to the hosts in turn, the
# default) or block (two consecutive ranks a host).  Tells the programs how
# many hosts their processes span (EPMPI_TEST_HOSTS, see
# test/mpi/node_hosts.c).
here=$(cd "$(dirname "$0")" && pwd)
: "${EPMN_DIR:?mpiexec.sh: EPMN_DIR is not set (see test/multinode/hosts.sh)}"
. "$EPMN_DIR/env" || exit 1
nhosts=$(echo "$EPMN_HOSTS" | tr ',' '\n' | wc -l)
np=1
prev=""
for a in "$@"; do
    case $prev in -n|-np) np=$a ;; esac
    prev=$a
done
case ${EPMN_PLACE:-rr} in
    rr) hosts=$EPMN_HOSTS; per=1 ;;
    block) hosts=$(echo "$EPMN_HOSTS" | sed 's/,/:2,/g; s/$/:2/'); per=2 ;;
    *) echo "mpiexec.sh: EPMN_PLACE must be rr or block" >&2; exit 2 ;;
esac
span=$(( (np + per - 1) / per ))
[ "$span" -le "$nhosts" ] || span=$nhosts
exec "${EPMN_MPIEXEC:-mpiexec}" -launcher ssh -launcher-exec "$here/launch.sh" -hosts "$hosts" \
    -localhost "$EPMN_GATEWAY" -genv EPMPI_TEST_HOSTS "$span" "$@"
