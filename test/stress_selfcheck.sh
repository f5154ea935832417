#!/bin/sh
# make check: the stress program must catch a fault.  EPMPI_STRESS_CORRUPT
# makes rank 0 spoil one byte of a message, or send two messages with one tag
# to one destination in the wrong order; each run must fail with a MISMATCH
# report naming the seed.  The environment comes from Makefile.am.
set -u
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for fault in byte:2x2 order:3:1,2,3 order:3x1; do
    what=${fault%%:*} shape=${fault#*:}
    EPMPI_STRESS_CORRUPT=$what EPMPI_STRESS_SEED=12345 EPMPI_STRESS_SECONDS=20 EPMPI_TEST_SHAPES=$shape \
        EPMPI_TEST_TIMEOUT=60 "$RUN_MPI" "$STRESS" >"$out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] || ! grep -q '^MISMATCH seed=12345 ' "$out" || ! grep -q 'replay: EPMPI_STRESS_SEED=12345' "$out"; then
        cat "$out"
        echo "stress_selfcheck: a spoilt run ($what, shape $shape) was not reported (exit code $rc)"
        exit 1
    fi
    echo "$what, shape $shape: caught: $(grep -m1 '^MISMATCH' "$out")"
done
