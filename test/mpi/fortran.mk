# Fortran programs (shapes in test/mpi/fortran.list), built with mpifort when
# configure found it.  They link libepmpi for MPI_COMM_CREATE_ENDPOINTS
# (-no-install: no libtool wrapper script), and run preloaded like the others.
EXTRA_DIST += test/mpi/f_body.inc test/mpi/f_callbacks.inc
if EP_FORTRAN
FORTRAN_SKIP =
F_TEST_FCFLAGS = $(OPENMP_FCFLAGS) $(EP_WARN_FCFLAGS) -I$(top_srcdir)/include -I$(top_srcdir)/test/mpi -I$(top_builddir)
F_TEST_LIBS = libepmpi.la
F_TEST_LINKFLAGS = -no-install $(OPENMP_FCFLAGS)
MPI_TESTS += test/mpi/f_mpif test/mpi/f_usempi test/mpi/f_f08
test_mpi_f_mpif_SOURCES = test/mpi/f_mpif.f90
test_mpi_f_mpif_FCFLAGS = $(F_TEST_FCFLAGS)
test_mpi_f_mpif_LDADD = $(F_TEST_LIBS)
test_mpi_f_mpif_LDFLAGS = $(F_TEST_LINKFLAGS)
test_mpi_f_usempi_SOURCES = test/mpi/f_usempi.f90
test_mpi_f_usempi_FCFLAGS = $(F_TEST_FCFLAGS)
test_mpi_f_usempi_LDADD = $(F_TEST_LIBS)
test_mpi_f_usempi_LDFLAGS = $(F_TEST_LINKFLAGS)
test_mpi_f_f08_SOURCES = test/mpi/f_f08.f90
test_mpi_f_f08_FCFLAGS = $(F_TEST_FCFLAGS)
test_mpi_f_f08_LDADD = $(F_TEST_LIBS)
test_mpi_f_f08_LDFLAGS = $(F_TEST_LINKFLAGS)
# The includes, and the module epmpi_f08 of the library's build.
test/mpi/f_mpif-f_mpif.$(OBJEXT): $(srcdir)/test/mpi/f_body.inc $(srcdir)/test/mpi/f_callbacks.inc
test/mpi/f_usempi-f_usempi.$(OBJEXT): $(srcdir)/test/mpi/f_body.inc $(srcdir)/test/mpi/f_callbacks.inc
test/mpi/f_f08-f_f08.$(OBJEXT): epmpi_f08.mod
# f_f08.f90's own module, written where mpifort runs.
CLEANFILES += f08_checks.mod
else
EXTRA_DIST += test/mpi/f_mpif.f90 test/mpi/f_usempi.f90 test/mpi/f_f08.f90
FORTRAN_SKIP = test/fortran-skip.sh
endif
EXTRA_DIST += test/fortran-skip.sh
