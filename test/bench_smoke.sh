#!/bin/sh
# make check's smoke test of the benchmark: bench/run-bench.sh --smoke runs
# epmpi-bench once in 1 process x 2 endpoints and once as 2 plain MPI processes
# (ping-pong and rma, 8 B, 10 iterations), and memcpy and the thread handoff
# (latency, ring rate and the rate structure) once, and must produce CSV rows and table lines for them;
# the driver itself rejects any output line not in epmpi-bench's format.
# Then epmpi-bench's rate case once in 1 process x 2 endpoints, which must
# say where a message's time goes; the shared-memory floor (epmpi-bench
# --case shm) in 2 plain processes; and the UCX floor (--case ucx) there
# too when epmpi-bench was built with UCX.
# The environment comes from Makefile.am (AM_TESTS_ENVIRONMENT).
# Without --out, a smoke run writes into a temporary directory of its own
# and leaves bench/results (committed in the source tree) as it was.
set -eu
MPIEXEC=$BENCH_MPIEXEC MPI_KIND=${BENCH_MPI_KIND:-mpich}
# shellcheck source=bench/mpi-launch.sh
. "${EP_SRCDIR:?}/bench/mpi-launch.sh"
results() { cat bench/results/* "$EP_SRCDIR"/bench/results/* 2>/dev/null | cksum; }
before=$(results)
log=$(timeout -k 5 120 sh "$BENCH_DRIVER" --smoke) || { echo "$log"; echo "bench_smoke: the driver failed" >&2; exit 1; }
echo "$log"
out=$(echo "$log" | sed -n 's/^== smoke run: results in //p')
[ -n "$out" ] && [ -d "$out" ] || { echo "bench_smoke: the smoke run did not name its results directory" >&2; exit 1; }
trap 'rm -rf "$out"' EXIT
[ "$(results)" = "$before" ] || { echo "bench_smoke: the smoke run changed bench/results" >&2; exit 1; }
row=$(grep '^1,.*,pingpong,latency,8,us,lower,' "$out/latest.csv") || {
    echo "bench_smoke: no ping-pong row in latest.csv:" >&2
    cat "$out/latest.csv" >&2
    exit 1
}
# baseline median, epmpi median and ratio are positive numbers
echo "$row" | awk -F, '{ for (i = 9; i <= 11; i++) if (!($i + 0 > 0)) { print "bench_smoke: field " i " is not a positive number: " $0; exit 1 } }'
for m in 'pingpong latency' 'rma_put latency' 'rma_get latency'; do
    grep -Eq "^\\| 1 +\\| $m +\\| 8 B " "$out/table.md" || { echo "bench_smoke: no table row $m" >&2; cat "$out/table.md" >&2; exit 1; }
done
grep -q '^Thread handoff, one way .*: [0-9.e+-]* us$' "$out/table.md" || {
    echo "bench_smoke: no thread handoff line under the table" >&2
    cat "$out/table.md" >&2
    exit 1
}
grep -q '^Thread ring, streamed .*: [0-9.e+-]* Mmsg/s$' "$out/table.md" || {
    echo "bench_smoke: no thread ring line under the table" >&2
    cat "$out/table.md" >&2
    exit 1
}
grep -Eq '^Rate structure without MPI .*: free calls [0-9.e+-]+ Mmsg/s, 10ns per call [0-9.e+-]+ Mmsg/s, 15ns per call [0-9.e+-]+ Mmsg/s, 20ns per call [0-9.e+-]+ Mmsg/s$' "$out/table.md" || {
    echo "bench_smoke: no rate structure line under the table" >&2
    cat "$out/table.md" >&2
    exit 1
}

# Under sanitizers as the driver runs it: the sanitizer runtime first, and no
# leak report (the benchmark is no leak test; the test programs are).
preload=$BENCH_LIB
if [ -n "${BENCH_SAN_PRELOAD:-}" ]; then
    preload=$BENCH_SAN_PRELOAD:$BENCH_LIB
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}"
fi
rate=$(mpi_launch 60 -n 1 -genv OMP_NUM_THREADS 2 -genv EPMPI_ENDPOINTS 2 \
    -genv LD_PRELOAD "$preload" "$BENCH_PROG" --case rate --sizes 8 --iters 10 --batches 1 < /dev/null)
echo "$rate" | grep -Eq '^# rate 8 B, per message: [0-9.]+ ns for the sender .*, [0-9.]+ ns for the receiver ' || {
    echo "bench_smoke: no time split in the rate case's output:" >&2
    echo "$rate" >&2
    exit 1
}
echo "$rate" | grep -Eq '^rate msgrate 8 [0-9.e+-]+ Mmsg/s$' || { echo "bench_smoke: no rate result:" >&2; echo "$rate" >&2; exit 1; }

# The shared-memory floor: two plain processes (its ping-pong checks the
# bytes before timing).
shm=$(mpi_launch 60 -n 2 -genv OMP_NUM_THREADS 1 "$BENCH_PROG" --case shm --sizes 8,4K \
    --iters 10 --batches 1 < /dev/null 2>&1) || { echo "$shm" >&2; echo "bench_smoke: the shm floor failed" >&2; exit 1; }
for m in 'latency 8' 'latency 4096' 'msgrate 8' 'msgrate 4096'; do
    echo "$shm" | grep -Eq "^shm $m [0-9.e+-]+ (us|Mmsg/s)\$" || {
        echo "bench_smoke: no 'shm $m' result:" >&2; echo "$shm" >&2; exit 1; }
done

# The UCX floor, when epmpi-bench was built with UCX: two plain processes.
ucx=$(mpi_launch 60 -n 2 -genv OMP_NUM_THREADS 1 "$BENCH_PROG" --case ucx --sizes 8,64K \
    --iters 10 --batches 1 < /dev/null 2>&1) || true
if echo "$ucx" | grep -q 'built without UCX'; then
    echo "bench_smoke: epmpi-bench has no UCX: the floor is not checked"
else
    for m in 'latency 8' 'latency 65536' 'msgrate 8' 'msgrate 4096' 'msgrate-probed 8' 'msgrate-am 4096'; do
        echo "$ucx" | grep -Eq "^ucx $m [0-9.e+-]+ (us|Mmsg/s)\$" || {
            echo "bench_smoke: no 'ucx $m' result:" >&2; echo "$ucx" >&2; exit 1; }
    done
fi
