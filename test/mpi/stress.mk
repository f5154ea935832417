# Randomized stress (shapes in test/mpi/stress.list); `make soak` runs it
# for longer (test/soak.sh).
MPI_TESTS += test/mpi/stress
test_mpi_stress_SOURCES = test/mpi/stress.c test/mpi/stress.h test/mpi/stress_plan.c test/mpi/stress_coll.c
test_mpi_stress_CFLAGS = $(MPI_TEST_CFLAGS)
