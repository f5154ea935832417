#!/bin/sh
# The stress program (test/mpi/stress) with random faults injected
# (test/fault/fault.c) for EPMPI_FAULT_SOAK_SECONDS in all (default 90):
# short runs in a rotation of shapes, each with a fresh seed, in which one
# of epmpi's own allocations, or one PMPI call that starts an operation,
# (or, over UCX, one UCX call that starts a transfer or connects) fails
# at a random moment in each process, over the UCX and the MPI transports
# in turn (EPMPI_TRANSPORT).  Every run must either finish
# (the failure was absorbed, or none happened) or stop with an error
# message (an MPI error through the default handler, or epmpi's fatal
# error); a hang, a crash, a sanitizer report, an assertion or a stress
# mismatch (a message lost or spoilt) fails the test, with the command
# that replays the run.  Under a sanitizer, allocations cannot be made to
# fail (its allocator comes first): PMPI calls only.
# Environment (make check sets them): RUN_MPI, STRESS, EP_FAULT_LIB.
set -u
: "${RUN_MPI:?}" "${STRESS:?}" "${EP_FAULT_LIB:?}"
secs=${EPMPI_FAULT_SOAK_SECONDS:-90}
shapes=${EPMPI_FAULT_SOAK_SHAPES:-"2x2 1x4 3x1 2x3 3:1,2,3"}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
end=$(($(date +%s) + secs))
runs=0 clean=0 stopped=0
while [ "$(date +%s)" -lt "$end" ]; do
    for shape in $shapes; do
        [ "$(date +%s)" -lt "$end" ] || break
        seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
        delay=$((seed % 1500))
        case $((runs % 3)) in
            0) faults="EPMPI_FAULT_ALLOC=0.002 EPMPI_FAULT_PMPI=0" ;;
            1) faults="EPMPI_FAULT_ALLOC=0 EPMPI_FAULT_PMPI=0.002" ;;
            *) faults="EPMPI_FAULT_ALLOC=0.001 EPMPI_FAULT_PMPI=0.001" ;;
        esac
        [ -z "${EP_SANITIZER:-}" ] || faults="EPMPI_FAULT_ALLOC=0 EPMPI_FAULT_PMPI=0.002"
        transport=ucx
        [ $((runs / 3 % 2)) -eq 0 ] || transport=mpi
        # Over UCX, its calls that start a transfer fail now and then too.
        [ $transport = mpi ] || faults="$faults EPMPI_FAULT_UCX=0.002"
        settings="$faults EPMPI_FAULT_SEED=$seed EPMPI_FAULT_DELAY_MS=$delay EPMPI_TRANSPORT=$transport"
        # A job that stops on an error leaves memory behind: no leak check.
        env $settings ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 EPMPI_TEST_PRELOAD_EXTRA="$EP_FAULT_LIB" \
            EPMPI_TEST_SHAPES="$shape" EPMPI_STRESS_SECONDS=2 EPMPI_TEST_TIMEOUT=60 "$RUN_MPI" "$STRESS" >"$log" 2>&1
        rc=$?
        runs=$((runs + 1))
        why=""
        if grep -q "timed out" "$log"; then
            why="a hang"
        elif grep -q "MISMATCH\|FAIL: mismatches" "$log"; then
            why="a lost or spoilt message"
        elif grep -q "AddressSanitizer\|LeakSanitizer\|runtime error:\|internal assertion" "$log"; then
            why="a sanitizer report or a failed assertion"
        elif grep -q "signal 11\|signal 7\|signal 6\|Segmentation\|Aborted\|free(): \|malloc(): \|corrupted" "$log"; then
            why="a crash"
        elif [ $rc -ne 0 ] && ! grep -q "epfault: failing" "$log"; then
            why="a failure without an injected fault"
        elif [ $rc -ne 0 ] && ! grep -q "^epmpi: \|Fatal error in\|FAIL.*failed" "$log"; then
            why="an end without an error message"
        fi
        if [ -n "$why" ]; then
            tail -60 "$log"
            echo "fault_soak: FAILED in run $runs ($why), shape $shape"
            echo "fault_soak: replay: $settings EPMPI_TEST_PRELOAD_EXTRA=$EP_FAULT_LIB EPMPI_TEST_SHAPES=$shape EPMPI_STRESS_SECONDS=2 $RUN_MPI $STRESS"
            exit 1
        fi
        if [ $rc -eq 0 ]; then
            clean=$((clean + 1))
        else
            stopped=$((stopped + 1))
            printf 'run %d (%s, %s): stopped with: %s\n' "$runs" "$shape" "$settings" \
                "$(grep -m1 '^epmpi: \|Fatal error in' "$log" | cut -c1-160)"
        fi
    done
done
echo "fault_soak: $runs runs in ${secs}s: $clean finished, $stopped stopped with an error message"
[ $runs -gt 0 ] || { echo "fault_soak: no run"; exit 1; }
exit 0
