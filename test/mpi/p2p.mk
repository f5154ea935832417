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
MPI_TESTS += test/mpi/p2p_tags
test_mpi_p2p_tags_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_progress
test_mpi_p2p_progress_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_contexts
test_mpi_p2p_contexts_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_rndv
test_mpi_p2p_rndv_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_bigcount
test_mpi_p2p_bigcount_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_huge
test_mpi_p2p_huge_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_status
test_mpi_p2p_status_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/request_status_multi
test_mpi_request_status_multi_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_buffer_flush
test_mpi_p2p_buffer_flush_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_lifetime
test_mpi_p2p_lifetime_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_lifetime_noshm
test_mpi_p2p_lifetime_noshm_SOURCES = test/mpi/p2p_lifetime.c
test_mpi_p2p_lifetime_noshm_CFLAGS = $(MPI_TEST_CFLAGS) -DEPT_SHM='"0"'
MPI_TESTS += test/mpi/p2p_truncate
test_mpi_p2p_truncate_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_truncate_noshm
test_mpi_p2p_truncate_noshm_SOURCES = test/mpi/p2p_truncate.c
test_mpi_p2p_truncate_noshm_CFLAGS = $(MPI_TEST_CFLAGS) -DEPT_SHM='"0"'
MPI_TESTS += test/mpi/p2p_partitioned
test_mpi_p2p_partitioned_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/p2p_partitioned_mpich
test_mpi_p2p_partitioned_mpich_SOURCES = test/mpi/p2p_partitioned.c
test_mpi_p2p_partitioned_mpich_CFLAGS = $(MPI_TEST_CFLAGS) -DEPT_P2P_PATH='"mpich"'
MPI_TESTS += test/mpi/p2p_partitioned_noshm
test_mpi_p2p_partitioned_noshm_SOURCES = test/mpi/p2p_partitioned.c
test_mpi_p2p_partitioned_noshm_CFLAGS = $(MPI_TEST_CFLAGS) -DEPT_SHM='"0"'
