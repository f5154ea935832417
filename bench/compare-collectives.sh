#!/bin/sh
# Side-by-side collectives (Barrier, Bcast, Allreduce on MPI_COMM_WORLD):
# epmpi world mode against plain MPICH with the same number of ranks,
# 1 process x 2 endpoints against 2 processes and 2 processes x 2 endpoints
# against 4 processes, alternating the four jobs REPS times in one run; prints
# medians and the ratio MPICH / epmpi for each collective and size.
# Usage: bench/compare-collectives.sh [REPS]   (from the build directory)
# Environment: MPIEXEC (launcher), EPMPI_LIB (libepmpi.so), COLLECTIVES (binary).
set -eu
REPS=${1:-5}
MPIEXEC=${MPIEXEC:-mpiexec}
LIB=${EPMPI_LIB:-$(pwd)/.libs/libepmpi.so}
PROG=${COLLECTIVES:-$(pwd)/bench/collectives}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
while [ $i -lt "$REPS" ]; do
    "$MPIEXEC" -n 2 -genv OMP_NUM_THREADS 1 "$PROG" >> "$tmp/mpich2"
    "$MPIEXEC" -n 1 -genv OMP_NUM_THREADS 2 -genv EPMPI_ENDPOINTS 2 -genv LD_PRELOAD "$LIB" "$PROG" >> "$tmp/epmpi1x2"
    "$MPIEXEC" -n 4 -genv OMP_NUM_THREADS 1 "$PROG" >> "$tmp/mpich4"
    "$MPIEXEC" -n 2 -genv OMP_NUM_THREADS 2 -genv EPMPI_ENDPOINTS 2 -genv LD_PRELOAD "$LIB" "$PROG" >> "$tmp/epmpi2x2"
    i=$((i + 1))
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# the (collective, size) pairs in the order the benchmark prints them
awk '!seen[$1 " " $2]++ { print $1, $2 }' "$tmp/mpich2" > "$tmp/keys"
printf "%-17s %-10s %9s %12s %12s %8s\n" pair collective size "MPICH us" "epmpi us" speedup
for pair in "1x2 2" "2x2 4"; do
    shape=${pair% *}
    procs=${pair#* }
    while read -r name size; do
        m=$(awk -v n="$name" -v s="$size" '$1 == n && $2 == s { print $3 }' "$tmp/mpich$procs" | median)
        e=$(awk -v n="$name" -v s="$size" '$1 == n && $2 == s { print $3 }' "$tmp/epmpi$shape" | median)
        awk -v p="$shape vs $procs procs" -v n="$name" -v s="$size" -v m="$m" -v e="$e" \
            'BEGIN { printf "%-17s %-10s %9d %12.3f %12.3f %8.2f\n", p, n, s, m, e, (e > 0 ? m / e : 0) }'
    done < "$tmp/keys"
done
echo "($REPS alternating runs each; times are per call, medians; speedup = MPICH / epmpi: above 1, epmpi is faster)"
