#!/bin/sh
# Every MPI function libmpich exports that takes a handle which can be an
# endpoint handle (their large-count _c forms too), and every mpi_f08 routine
# of libmpichfort that would reach PMPI_ past epmpi, has an entry point in
# libepmpi.so: maint/gen_entries.py --coverage reads the installed MPICH's
# headers and both libraries' symbols.  (The environment comes from
# AM_TESTS_ENVIRONMENT in Makefile.am.)
if ! command -v python3 >/dev/null || ! command -v nm >/dev/null; then
    echo "skip: the coverage check needs python3 and nm"
    exit 77
fi
exec python3 "$EP_SRCDIR/maint/gen_entries.py" --mpicc "$EP_MPICC" --srcdir "$EP_SRCDIR" --coverage "$EP_LIB"
