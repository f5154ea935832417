# One-sided communication (windows) tests (shapes in test/mpi/rma.list).
MPI_TESTS += test/mpi/rma_fence
test_mpi_rma_fence_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/rma_passive
test_mpi_rma_passive_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/rma_pscw
test_mpi_rma_pscw_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/rma_dynamic
test_mpi_rma_dynamic_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/rma_attr
test_mpi_rma_attr_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/rma_many
test_mpi_rma_many_CFLAGS = $(MPI_TEST_CFLAGS)
