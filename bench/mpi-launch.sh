# shellcheck shell=sh
# mpi_launch SECONDS ARGS...: runs "$MPIEXEC" ARGS under `timeout` (killed
# SECONDS + 5 s on), ARGS written for MPICH's hydra, where each -genv NAME
# VALUE sets a variable in every process and every process has the whole
# environment.  With MPI_KIND=openmpi, Open MPI's mpirun gets them as -x
# NAME=VALUE, -x for every MPIEXEC, EPMPI_, OMP_, UCX_ and sanitizer
# variable set (mpirun passes no others to processes on other hosts),
# --oversubscribe (the tests' shapes oversubscribe on purpose), --bind-to
# none (threaded processes) and leave to run as root (CI).  Sourced by
# test/run-mpi, bench/run-bench.sh, test/bench_smoke.sh and
# test/fault_paths.sh.
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
    for ml_v in $(env | sed -n 's/^\(MPIEXEC\|EPMPI_[A-Z0-9_]*\|OMP_[A-Z_]*\|UCX_[A-Z_]*\|[AL]SAN_OPTIONS\|UBSAN_OPTIONS\|TSAN_OPTIONS\|GLIBC_TUNABLES\)=.*/\1/p'); do
        set -- -x "$ml_v" "$@"
    done
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        timeout -k 5 "$ml_limit" "$MPIEXEC" --oversubscribe --bind-to none "$@"
}
