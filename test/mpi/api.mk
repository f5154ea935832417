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
MPI_TESTS += test/mpi/api_local
test_mpi_api_local_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/coll_more test/mpi/coll_gathered
test_mpi_coll_more_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_coll_gathered_SOURCES = test/mpi/coll_more.c
test_mpi_coll_gathered_CFLAGS = $(MPI_TEST_CFLAGS) -DEPT_COLL_GATHERED
MPI_TESTS += test/mpi/coll_edges
test_mpi_coll_edges_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/coll_stream
test_mpi_coll_stream_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/comm_split
test_mpi_comm_split_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/comm_split_type
test_mpi_comm_split_type_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/node_hosts
test_mpi_node_hosts_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/comm_from_group
test_mpi_comm_from_group_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/api_attr
test_mpi_api_attr_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/comm_group
test_mpi_comm_group_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/threadcomm
test_mpi_threadcomm_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/threadcomm_pthreads
test_mpi_threadcomm_pthreads_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_threadcomm_pthreads_LDADD = $(LDADD) -lpthread
MPI_TESTS += test/mpi/comm_inter
test_mpi_comm_inter_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/comm_inter_threads
test_mpi_comm_inter_threads_CFLAGS = $(MPI_TEST_CFLAGS)
# The non-blocking collectives, one behaviour per program (test/mpi/coll_nb.h).
MPI_TESTS += test/mpi/coll_nb_move test/mpi/coll_nb_reduce test/mpi/coll_nb_reduce_gathered test/mpi/coll_nb_outstanding \
	test/mpi/coll_nb_progress test/mpi/coll_nb_large test/mpi/coll_nb_split test/mpi/coll_nb_split_gathered \
	test/mpi/coll_nb_errors test/mpi/coll_nb_lifetime
test_mpi_coll_nb_move_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_coll_nb_reduce_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_coll_nb_reduce_gathered_SOURCES = test/mpi/coll_nb_reduce.c
test_mpi_coll_nb_reduce_gathered_CFLAGS = $(MPI_TEST_CFLAGS) -DEPT_COLL_GATHERED
test_mpi_coll_nb_outstanding_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_coll_nb_progress_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_coll_nb_large_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_coll_nb_split_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_coll_nb_split_gathered_SOURCES = test/mpi/coll_nb_split.c
test_mpi_coll_nb_split_gathered_CFLAGS = $(MPI_TEST_CFLAGS) -DEPT_COLL_GATHERED
test_mpi_coll_nb_errors_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_coll_nb_lifetime_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/coll_nb_crossed
test_mpi_coll_nb_crossed_CFLAGS = $(MPI_TEST_CFLAGS)
# The persistent collectives (MPI_Bcast_init, ...).
MPI_TESTS += test/mpi/coll_persistent
test_mpi_coll_persistent_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/comm_loop
test_mpi_comm_loop_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/leak_loop
test_mpi_leak_loop_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/comm_construct
test_mpi_comm_construct_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/api_guards
test_mpi_api_guards_SOURCES = test/mpi/api_guards.c test/mpi/api_guards.h
nodist_test_mpi_api_guards_SOURCES = test/mpi/api_guards.gen.c
test_mpi_api_guards_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/test/mpi
test_mpi_api_guards_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/api_io
test_mpi_api_io_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/diag_misuse
test_mpi_diag_misuse_CFLAGS = $(MPI_TEST_CFLAGS)
test_mpi_diag_misuse_LDADD = -lpthread
MPI_TESTS += test/mpi/diag_stats
test_mpi_diag_stats_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/coll_mismatch
test_mpi_coll_mismatch_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/api_errhandlers
test_mpi_api_errhandlers_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/topo_query test/mpi/topo_neighbor
# Open MPI's MPI_UNWEIGHTED is the address 2, which GCC takes for an empty array.
MPI_TOPO_TEST_CFLAGS = $(MPI_TEST_CFLAGS) -Wno-stringop-overread -Wno-stringop-overflow
test_mpi_topo_query_CFLAGS = $(MPI_TOPO_TEST_CFLAGS)
test_mpi_topo_neighbor_CFLAGS = $(MPI_TOPO_TEST_CFLAGS)
MPI_TESTS += test/mpi/coll_count_c
test_mpi_coll_count_c_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/file_io
test_mpi_file_io_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/coll_bigblock
test_mpi_coll_bigblock_CFLAGS = $(MPI_TEST_CFLAGS)
MPI_TESTS += test/mpi/count_huge_c
test_mpi_count_huge_c_CFLAGS = $(MPI_TEST_CFLAGS)
# The persistent collectives' init forms beyond INT_MAX: a program of its own.
MPI_TESTS += test/mpi/count_huge_init_c
test_mpi_count_huge_init_c_SOURCES = test/mpi/count_huge_c.c
test_mpi_count_huge_init_c_CFLAGS = $(MPI_TEST_CFLAGS) -DEPT_HUGE_INIT=1
MPI_TESTS += test/mpi/comm_transport test/mpi/comm_transport_mpi
test_mpi_comm_transport_SOURCES = test/mpi/comm_transport.c
if EP_UCX
test_mpi_comm_transport_CFLAGS = $(MPI_TEST_CFLAGS) -DEPT_UCX=1
else
test_mpi_comm_transport_CFLAGS = $(MPI_TEST_CFLAGS)
endif
test_mpi_comm_transport_mpi_SOURCES = test/mpi/comm_transport.c
test_mpi_comm_transport_mpi_CFLAGS = $(MPI_TEST_CFLAGS) -DEPT_TRANSPORT='"mpi"'
