/* MPICH's thread communicators (MPIX_Threadcomm_*, MPICH 4.2), built on
 * endpoints: MPIX_Threadcomm_init makes an endpoint communicator with
 * num_threads endpoints in this process, and one handle that every thread
 * uses; inside the parallel region the handle stands for the calling
 * thread's endpoint, as MPI_COMM_WORLD does in world mode. */
#ifndef EP_THREADCOMM_H
#define EP_THREADCOMM_H

#include "core/comm.h"

typedef struct ep_threadcomm {
    ep_object_t obj; /* registry header: EP_OBJ_THREADCOMM */
    MPI_Comm handle; /* the handle all threads use */
    int nthreads;
    MPI_Comm *eps; /* [nthreads] the endpoint of thread t */
} ep_threadcomm_t;

static inline ep_threadcomm_t *ep_threadcomm_get(MPI_Comm h)
{
    return (ep_threadcomm_t *)ep_registry_get((int)h, EP_OBJ_THREADCOMM);
}

/* Collective over parent (classic: one call per process; endpoint: one per
 * parent endpoint). */
ep_status_t ep_threadcomm_init(MPI_Comm parent, ep_endpoint_t *ep_parent, int nthreads, ep_threadcomm_t **out);
void ep_threadcomm_free(ep_threadcomm_t *tc);

#endif
