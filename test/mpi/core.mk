# World-mode basics.
MPI_TESTS += test/mpi/world_ranks
test_mpi_world_ranks_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/world_pthreads
test_mpi_world_pthreads_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_world_pthreads_LDADD = -lpthread
