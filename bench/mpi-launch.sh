# shellcheck shell=sh
# mpi_launch SECONDS ARGS...: runs "$MPIEXEC" ARGS under `timeout` (killed
# SECONDS + 5 s on), ARGS written for MPICH's hydra, where each -genv NAME
# VALUE sets a variable in every process.  With MPI_KIND=openmpi, Open MPI's
# mpirun takes them as -x NAME=VALUE, with --oversubscribe, --bind-to none
# (threaded processes) and leave to run as root.  Sourced by
# bench/run-bench.sh, test/bench_smoke.sh and test/fault_paths.sh.
mpi_launch() {
    ml_limit=$1
    shift
    if [ "${MPI_KIND:-mpich}" != openmpi ]; then
        timeout -k 5 "$ml_limit" "$MPIEXEC" "$@"
        return
    fi
    ml_n=$#
    while [ "$ml_n" -gt 0 ]; do
        if [ "$1" = -genv ]; then
            set -- "$@" -x "$2=$3"
            shift 3
            ml_n=$((ml_n - 3))
        else
            set -- "$@" "$1"
            shift
            ml_n=$((ml_n - 1))
        fi
    done
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        timeout -k 5 "$ml_limit" "$MPIEXEC" --oversubscribe --bind-to none "$@"
}
