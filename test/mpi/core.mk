# World-mode basics.
MPI_TESTS += test/mpi/world_ranks
test_mpi_world_ranks_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/world_pthreads
test_mpi_world_pthreads_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_world_pthreads_LDADD = -lpthread
MPI_TESTS += test/mpi/world_wait_spin test/mpi/world_wait_sleep
test_mpi_world_wait_spin_SOURCES = test/mpi/world_settings.c
test_mpi_world_wait_spin_CFLAGS = $(MPI_TEST_CFLAGS) -DEPT_WAIT='"spin"'
test_mpi_world_wait_sleep_SOURCES = test/mpi/world_settings.c
test_mpi_world_wait_sleep_CFLAGS = $(MPI_TEST_CFLAGS) -DEPT_WAIT='"sleep"'
MPI_TESTS += test/mpi/world_first_call
test_mpi_world_first_call_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_world_first_call_LDADD = -lpthread
# A C++ program (std::thread): world mode, explicit endpoints, threadcomm.
MPI_TESTS += test/mpi/cxx_threads
test_mpi_cxx_threads_SOURCES = test/mpi/cxx_threads.cpp
test_mpi_cxx_threads_CXXFLAGS = $(AM_CXXFLAGS) -pthread
