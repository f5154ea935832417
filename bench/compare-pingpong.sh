#!/bin/sh
# Side-by-side ping-pong: epmpi endpoints of one process (1 x 2, world mode)
# against two plain MPICH processes, alternating the two REPS times in one
# run; prints medians and the ratio epmpi / MPICH for each message size.
# Usage: bench/compare-pingpong.sh [REPS]   (from the build directory)
set -eu
REPS=${1:-7}
MPIEXEC=${MPIEXEC:-mpiexec}
LIB=${EPMPI_LIB:-$(pwd)/.libs/libepmpi.so}
PROG=${PINGPONG:-$(pwd)/bench/pingpong}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
while [ $i -lt "$REPS" ]; do
    "$MPIEXEC" -n 2 -genv OMP_NUM_THREADS 1 "$PROG" >> "$tmp/mpich"
    "$MPIEXEC" -n 1 -genv OMP_NUM_THREADS 2 -genv EPMPI_ENDPOINTS 2 -genv LD_PRELOAD "$LIB" "$PROG" >> "$tmp/epmpi"
    i=$((i + 1))
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf "%10s %14s %14s %8s %14s %14s %8s\n" size "MPICH us" "epmpi us" ratio "MPICH MB/s" "epmpi MB/s" ratio
for size in $(awk '{ print $1 }' "$tmp/mpich" | sort -n | uniq); do
    ml=$(awk -v s="$size" '$1 == s { print $2 }' "$tmp/mpich" | median)
    el=$(awk -v s="$size" '$1 == s { print $2 }' "$tmp/epmpi" | median)
    mb=$(awk -v s="$size" '$1 == s { print $3 }' "$tmp/mpich" | median)
    eb=$(awk -v s="$size" '$1 == s { print $3 }' "$tmp/epmpi" | median)
    awk -v s="$size" -v ml="$ml" -v el="$el" -v mb="$mb" -v eb="$eb" \
        'BEGIN { printf "%10d %14.3f %14.3f %8.2f %14.1f %14.1f %8.2f\n", s, ml, el, el / ml, mb, eb, eb / mb }'
done
echo "($REPS alternating runs each; ratio = epmpi / MPICH; latency: lower is better, bandwidth: higher is better)"
