#!/bin/sh
# make soak: the stress program (test/mpi/stress) in a rotation of shapes for
# EPMPI_SOAK_MINUTES minutes in all (default 30), EPMPI_SOAK_RUN_SECONDS per
# run (default 60), each run with a fresh seed; runs alternate
# EPMPI_EAGER_LIMIT (default, 1024, 262144), EPMPI_WAIT (yield, sleep) and
# the transport (EPMPI_TRANSPORT=ucx with the node inboxes, mpi, ucx, ucx
# with EPMPI_SHM=0: UCX alone).  Prints every run's seed,
# messages and bytes per minute and mismatches, then the totals; stops at the
# first failure with the command that replays it.
# Environment: EPMPI_SOAK_SHAPES (shapes to rotate through, see
# test/run-mpi.in), RUN_MPI and STRESS (the launcher and the program, set by
# make soak).
set -u
RUN_MPI=${RUN_MPI:-test/run-mpi}
STRESS=${STRESS:-test/mpi/stress}
minutes=${EPMPI_SOAK_MINUTES:-30}
per=${EPMPI_SOAK_RUN_SECONDS:-60}
shapes=${EPMPI_SOAK_SHAPES:-"2x2 1x4 3:1,2,3 2x3 3x1 1x8 2:2,1 3:2,0,1 2x4"}
case $minutes$per in
    *[!0-9]*) echo "soak: EPMPI_SOAK_MINUTES and EPMPI_SOAK_RUN_SECONDS must be whole numbers" >&2; exit 2 ;;
esac
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
end=$((start + minutes * 60))
runs=0 msgs=0 bytes=0 secs=0
echo "soak: $minutes minutes, runs of up to $per s, shapes: $shapes"
while :; do
    for shape in $shapes; do
        left=$((end - $(date +%s)))
        [ "$left" -ge 5 ] || break 2
        t=$per
        [ "$t" -le "$left" ] || t=$left
        set -- 16384 1024 262144
        shift $((runs % 3))
        eager=$1
        wait=yield
        [ $((runs / 3 % 2)) -eq 0 ] || wait=sleep
        case $((runs % 4)) in
            1) transport="EPMPI_TRANSPORT=mpi" ;;
            3) transport="EPMPI_TRANSPORT=ucx EPMPI_SHM=0" ;;
            *) transport="EPMPI_TRANSPORT=ucx" ;;
        esac
        settings="EPMPI_EAGER_LIMIT=$eager EPMPI_WAIT=$wait $transport"
        env $settings EPMPI_TEST_SHAPES=$shape EPMPI_STRESS_SECONDS=$t EPMPI_TEST_TIMEOUT=$((t + 300)) \
            "$RUN_MPI" "$STRESS" >"$log" 2>&1
        rc=$?
        runs=$((runs + 1))
        seed=$(sed -n 's/^seed=\([0-9]*\)$/\1/p' "$log" | head -1)
        line=$(grep '^stress: seed=' "$log")
        if [ $rc -ne 0 ] || [ -z "$line" ]; then
            tail -40 "$log"
            echo "soak: FAILED in run $runs, shape $shape, seed ${seed:-unknown}, $settings"
            echo "soak: replay: $settings EPMPI_STRESS_SEED=${seed:-?} EPMPI_STRESS_SECONDS=$t EPMPI_TEST_SHAPES=$shape $RUN_MPI $STRESS"
            exit 1
        fi
        echo "$line" | awk -v r=$runs -v s="$shape" -v e="$settings" '{
            for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            printf "soak: run %d, shape %s, %s, %s, %s s: %.0f messages/min, %.1f MB/min, mismatches %s\n",
                r, s, e, $2, v["seconds"], v["msgs/min"], v["bytes/min"] / 1e6, v["mismatches"] }'
        set -- $(echo "$line" | awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            print v["messages"], v["bytes"], v["seconds"] }')
        msgs=$((msgs + $1))
        bytes=$((bytes + $2))
        secs=$(awk -v a="$secs" -v b="$3" 'BEGIN { print a + b }')
    done
done
awk -v r=$runs -v m=$msgs -v b=$bytes -v s="$secs" -v w=$(($(date +%s) - start)) 'BEGIN {
    if (s <= 0) s = 1
    printf "soak: passed: %d runs in %d s (%.0f s of traffic), %d messages, %.1f GB; %.0f messages/min, %.1f MB/min; mismatches 0\n",
        r, w, s, m, b / 1e9, m / (s / 60), b / 1e6 / (s / 60) }'
