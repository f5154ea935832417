/* epmpi: MPI endpoints for threaded programs.
 *
 * The public additions to MPI that libepmpi.so provides on top of MPICH.
 * Include after (or instead of) <mpi.h>; compiles as C and C++. */
#ifndef EPMPI_H
#define EPMPI_H

#include <mpi.h>

#define EPMPI_VERSION_MAJOR 0
#define EPMPI_VERSION_MINOR 1
#define EPMPI_VERSION_PATCH 0
#define EPMPI_VERSION "0.1.0"

#if defined(__GNUC__)
#define EPMPI_EXPORT __attribute__((visibility("default")))
#else
#define EPMPI_EXPORT
#endif

/* MPI_Comm_compare: two handles of one communicator at different ranks. */
#ifndef MPI_ALIASED
#define MPI_ALIASED 4
#endif

/* Error class: endpoints could not be created. */
#ifndef MPI_ERR_ENDPOINTS
#define MPI_ERR_ENDPOINTS 120
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over parent_comm: creates one communicator and returns
 * my_num_ep handles to it in out_comm_hdls, one per new rank.  Ranks follow
 * parent rank, then handle index.  my_num_ep may differ between callers and
 * may be 0 (out_comm_hdls may then be NULL). */
EPMPI_EXPORT int MPI_Comm_create_endpoints(MPI_Comm parent_comm, int my_num_ep, MPI_Info info,
                                           MPI_Comm out_comm_hdls[]);
EPMPI_EXPORT int MPIX_Comm_create_endpoints(MPI_Comm parent_comm, int my_num_ep, MPI_Info info,
                                            MPI_Comm out_comm_hdls[]);

/* MPICH's thread communicators (MPICH 4.2 API), on any MPICH: made by one
 * thread per process for num_threads threads; inside the parallel region,
 * between MPIX_Threadcomm_start and MPIX_Threadcomm_finish, each thread
 * uses newcomm as its own rank (ranks follow comm's rank, then the thread
 * number); freed by one thread after the region. */
EPMPI_EXPORT int MPIX_Threadcomm_init(MPI_Comm comm, int num_threads, MPI_Comm *newcomm);
EPMPI_EXPORT int MPIX_Threadcomm_start(MPI_Comm threadcomm);
EPMPI_EXPORT int MPIX_Threadcomm_finish(MPI_Comm threadcomm);
EPMPI_EXPORT int MPIX_Threadcomm_free(MPI_Comm *threadcomm);
/* flag: whether comm is a thread communicator (MPIX_Threadcomm_init's). */
EPMPI_EXPORT int MPIX_Comm_test_threadcomm(MPI_Comm comm, int *flag);

#ifdef __cplusplus
}
#endif

#endif
