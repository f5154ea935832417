#!/bin/sh
# epmpiexec's arguments: its own options and mpiexec's before the program,
# the program's own after it (untouched), and a one-line error of its own
# for an option written wrongly or unknown to both.  (The environment comes
# from AM_TESTS_ENVIRONMENT in Makefile.am.)
L=${EP_LAUNCHER:?}
EPMPI_LIBDIR=$(dirname "${EP_LIB:?}")
export EPMPI_LIBDIR
# mpich (hydra's mpiexec) or openmpi (mpirun), as configured; Open MPI's
# mpirun runs as root only when told.
kind=${EP_MPI_KIND:-mpich}
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
status=0
fail() { echo "FAIL: $*"; status=1; }

# dry WANT_END ARGS...: --dry-run must succeed and print a command ending in WANT_END.
dry() {
    want=$1; shift
    out=$("$L" --dry-run "$@" 2>&1) || { fail "epmpiexec --dry-run $* failed: $out"; return; }
    case $out in
        *"$want") echo "ok: $*" ;;
        *) fail "epmpiexec --dry-run $*: printed '$out', which does not end in '$want'" ;;
    esac
}

# bad MESSAGE_PART ARGS...: exit status 2 and one line naming the problem.
bad() {
    want=$1; shift
    out=$("$L" "$@" 2>&1) && { fail "epmpiexec $* was accepted"; return; }
    lines=$(printf '%s\n' "$out" | wc -l)
    case $out in
        "epmpiexec: "*"$want"*) [ "$lines" = 1 ] && echo "ok: $* -> $out" || fail "epmpiexec $*: $lines lines: $out" ;;
        *) fail "epmpiexec $*: expected a line about '$want', got: $out" ;;
    esac
}

# The launcher of the build tree, before make install, preloads the
# library built beside it.
out=$(env -u EPMPI_LIBDIR "$L" --dry-run -n 1 ./prog)
case $out in *"LD_PRELOAD=$(dirname "$L")/.libs/libepmpi.so "*) echo "ok: the build tree's library" ;;
    *) fail "the build tree's epmpiexec without EPMPI_LIBDIR: $out" ;; esac

# The launcher configure recorded is the MPI's own program, not a link
# that another MPI's installation can switch (Debian's alternatives).
launcher=$("$L" --dry-run -n 1 ./prog | sed 's/.*LD_PRELOAD=[^ ]* //; s/ .*//')
hop=$launcher
while [ -L "$hop" ]; do
    next=$(readlink "$hop")
    case $next in /etc/alternatives/*) fail "epmpiexec runs $launcher, a link through $next: another MPI can take it over"; break ;; esac
    case $next in /*) hop=$next ;; *) hop=$(dirname "$hop")/$next ;; esac
done
echo "ok: the launcher is $launcher"

# OMP_NUM_THREADS below -t: a warning (the run goes on); equal, none.
out=$(OMP_NUM_THREADS=1 "$L" --dry-run -t 2 -n 1 ./prog 2>&1)
case $out in *"epmpiexec: warning: OMP_NUM_THREADS=1 gives a parallel region fewer threads than the 2 endpoints"*"./prog")
    echo "ok: OMP_NUM_THREADS below -t" ;; *) fail "OMP_NUM_THREADS=1 -t 2: $out" ;; esac
out=$(OMP_NUM_THREADS=2 "$L" --dry-run -t 2 -n 1 ./prog 2>&1)
case $out in *warning*) fail "OMP_NUM_THREADS=2 -t 2: $out" ;; *) echo "ok: OMP_NUM_THREADS equal to -t" ;; esac
out=$(OMP_NUM_THREADS=1 "$L" --dry-run -t 2 --threads first-call -n 1 ./prog 2>&1)
case $out in *warning*) fail "OMP_NUM_THREADS=1 -t 2 --threads first-call: $out" ;; *) echo "ok: first-call ignores OpenMP" ;; esac

# Options after the program are the program's.
dry " -n 1 ./prog --verbose -t 3 --stats in.dat --help" -n 1 ./prog --verbose -t 3 --stats in.dat --help
out=$("$L" --dry-run -n 1 ./prog --verbose -t 3 --stats in.dat)
case $out in *EPMPI_ENDPOINTS=* | *EPMPI_VERBOSE=* | *EPMPI_STATS=*)
    fail "the program's options were taken as epmpiexec's: $out" ;; esac
# epmpiexec's own before the program, mixed with mpiexec's.
out=$("$L" --dry-run -t 3 -n 2 --verbose --wait sleep ./prog a)
case $out in *EPMPI_ENDPOINTS=3*EPMPI_WAIT=sleep*EPMPI_VERBOSE=1*"-n 2 ./prog a") echo "ok: own options" ;;
    *) fail "-t 3 --verbose --wait sleep: $out" ;; esac
if [ "$kind" = openmpi ]; then
    # mpirun's options with values (two for --mca, inline with =), quoting, MPMD.
    dry "--mca btl self,vader --map-by=core -n 2 ./prog 'x y' : -n 1 other -t 2" \
        --mca btl self,vader --map-by=core -n 2 ./prog "x y" : -n 1 other -t 2
    dry "--np 2 --tag-output ./prog" --np 2 --tag-output ./prog
    # World mode unbinds the processes, unless the user chose a binding.
    out=$("$L" --dry-run -t 2 --bind-to core -n 1 ./prog)
    case $out in *"--bind-to none"*) fail "-t 2 --bind-to core: epmpiexec unbound it: $out" ;;
        *"-x EPMPI_ENDPOINTS"*"--bind-to core -n 1 ./prog") echo "ok: the user's binding" ;;
        *) fail "-t 2 --bind-to core: $out" ;; esac
    out=$("$L" --dry-run -t 2 -n 1 ./prog)
    case $out in *"-x EPMPI_ENDPOINTS"*"-x LD_PRELOAD --oversubscribe --bind-to none -n 1 ./prog")
        echo "ok: world mode unbound, more processes than cores allowed" ;;
        *) fail "-t 2: $out" ;; esac
    # the user's word on oversubscription stands
    out=$("$L" --dry-run --nooversubscribe -n 1 ./prog)
    case $out in *"--oversubscribe "*) fail "--nooversubscribe: epmpiexec added --oversubscribe: $out" ;;
        *"-x LD_PRELOAD --nooversubscribe -n 1 ./prog") echo "ok: --nooversubscribe" ;;
        *) fail "--nooversubscribe: $out" ;; esac
else
    # mpiexec's options with values (two for -genv, inline with =), quoting, MPMD.
    dry "-genv A 'b c' -n=2 -ppn 1 ./prog 'x y' : -n 1 other -t 2" -genv A "b c" -n=2 -ppn 1 ./prog "x y" : -n 1 other -t 2
    dry "--np 2 -l ./prog" --np 2 -l ./prog
    # hydra's -verbose (one dash) is mpiexec's, epmpiexec's --verbose its own.
    dry "-verbose -n 1 ./prog" -verbose -n 1 ./prog
fi

bad "-t 2" -t2 -n 1 ./prog
bad "takes no value" --verbose=1 -n 1 ./prog
bad "spin, yield or sleep" --wait busy -n 1 ./prog
bad "openmp or first-call" --threads pthreads -n 1 ./prog
bad "needs a value: openmp or first-call" --threads
out=$("$L" --dry-run -t 2 --threads first-call -n 2 ./prog)
case $out in *EPMPI_ENDPOINTS=2*EPMPI_THREADS=first-call*"-n 2 ./prog") echo "ok: --threads" ;;
    *) fail "--threads first-call: $out" ;; esac
if [ "$kind" = openmpi ]; then
    bad "unknown option -genv" -genv A b -n 1 ./prog
else
    bad "unknown option -x" -x -n 1 ./prog
fi
bad "no program" -n 2
bad "needs a value" -n
bad "positive number" -t 0 ./prog

# A real run: the program gets its arguments, --help included.
if [ -n "${EP_SANITIZER:-}" ]; then
    echo "(sanitizer build: the real run is left out, the runtime must come first in LD_PRELOAD)"
else
    out=$("$L" -n 1 /bin/sh -c 'printf "%s|" "$@"' sh --help -t 3 --verbose 2>&1)
    [ "$out" = "--help|-t|3|--verbose|" ] && echo "ok: real run" || fail "the program got '$out'"
    # EPMPI_UCX_* reaches epmpi's UCX context alone: TCP between two
    # processes of one machine, where UCX would take shared memory.
    hello=$(dirname "$L")/examples/hello_endpoints
    # A setting epmpi cannot use stops the job at start-up, saying why.
    if out=$(EPMPI_WAIT=bogus "$L" -n 1 -t 1 "$hello" 2>&1); then
        fail "EPMPI_WAIT=bogus: the job did not fail: $out"
    else
        case $out in
            *"epmpi: MPI_Init"*"EPMPI_WAIT='bogus' is not valid"*) echo "ok: a bad setting stops MPI_Init" ;;
            *) fail "EPMPI_WAIT=bogus: no message naming MPI_Init and the setting: $out" ;;
        esac
    fi
    out=$("$L" -n 2 -t 1 --verbose "$hello" 2>&1)
    case $out in
        *"transport ucx ("*)
            # Two processes of one node: the node inboxes carry their
            # messages, unless EPMPI_SHM=0.
            case $out in
                *"; node inboxes in shared memory"*) echo "ok: node inboxes" ;;
                *) fail "two processes of one node without node inboxes: $out" ;;
            esac
            # Threads drive different workers of one UCX context at once:
            # UCX must guard what the workers share.
            case $out in
                *"workers, thread-safe context;"*) echo "ok: the UCX context is thread-safe" ;;
                *) fail "the UCX context's shared resources are not guarded for threads: $out" ;;
            esac
            # One network namespace: UCX's adaptive progress stays on.
            case $out in
                *", all polled ("*) fail "UCX polls every transport in one network namespace: $out" ;;
                *) echo "ok: UCX's adaptive progress in one network namespace" ;;
            esac
            case $(EPMPI_SHM=0 "$L" -n 2 -t 1 --verbose "$hello" 2>&1) in
                *"; no node inboxes: EPMPI_SHM=0)"*) echo "ok: EPMPI_SHM=0" ;;
                *) fail "EPMPI_SHM=0 left the node inboxes on" ;;
            esac
            # epmpi's own settings must not look like UCX's: UCX warns
            # about an EPMPI_UCX_ variable it does not know.
            case $(EPMPI_WORKERS=2 "$L" -n 2 -t 1 --verbose "$hello" 2>&1) in
                *"unused env variable"*) fail "EPMPI_WORKERS=2: UCX took it for one of its settings" ;;
                *"transport ucx ("*) echo "ok: EPMPI_WORKERS" ;;
                *) fail "EPMPI_WORKERS=2: the job did not run" ;;
            esac
            out=$(EPMPI_UCX_TLS=tcp,self "$L" -n 2 -t 1 --verbose "$hello" 2>&1)
            case $out in
                *"transport ucx ("*"transports to process "[01]": tcp/"*) echo "ok: EPMPI_UCX_TLS" ;;
                *) fail "EPMPI_UCX_TLS=tcp,self: $out" ;;
            esac ;;
        *"transport mpi"*) echo "(no UCX transport here: EPMPI_UCX_TLS not checked)" ;;
        *) fail "--verbose printed no transport: $out" ;;
    esac
fi
exit $status
