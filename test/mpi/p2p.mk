# Point-to-point tests (shapes in test/mpi/p2p.list).
MPI_TESTS += test/mpi/p2p_ring
test_mpi_p2p_ring_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_order
test_mpi_p2p_order_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_wildcard
test_mpi_p2p_wildcard_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_nonblocking
test_mpi_p2p_nonblocking_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_probe
test_mpi_p2p_probe_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_persistent
test_mpi_p2p_persistent_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_datatypes
test_mpi_p2p_datatypes_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_large
test_mpi_p2p_large_CFLAGS = $(MPI_TEST_CFLAGS)
