# API, collectives and error tests (shapes in test/mpi/api.list).
MPI_TESTS += test/mpi/api_create_endpoints
test_mpi_api_create_endpoints_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/api_compare
test_mpi_api_compare_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/api_comm
test_mpi_api_comm_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/coll_basic
test_mpi_coll_basic_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/api_errors
test_mpi_api_errors_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/api_fatal
test_mpi_api_fatal_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/api_threadcap
test_mpi_api_threadcap_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/api_passthrough
test_mpi_api_passthrough_CFLAGS = $(MPI_TEST_CFLAGS)
