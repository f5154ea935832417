/* MPICH's thread communicators (MPIX_Threadcomm_*, MPICH 4.2), built on
 * endpoints: MPIX_Threadcomm_init makes an endpoint communicator with
 * num_threads endpoints in this process, and one handle that every thread
 * uses.  A thread of any kind (OpenMP, pthreads, C++) becomes one of those
 * endpoints at MPIX_Threadcomm_start and stays it until its
 * MPIX_Threadcomm_finish: inside, the handle stands for the calling
 * thread's endpoint, as MPI_COMM_WORLD does in world mode. */
#ifndef EP_THREADCOMM_H
#define EP_THREADCOMM_H

#include "base/thread.h"
#include "core/comm.h"

#include <stdatomic.h>

typedef struct ep_threadcomm {
    ep_object_t obj; /* registry header: EP_OBJ_THREADCOMM */
    MPI_Comm handle; /* the handle all threads use */
    int nthreads;
    MPI_Comm *eps;          /* [nthreads] the endpoint of rank t in this process */
    _Atomic char *taken;    /* [nthreads] 1 while a thread is endpoint t */
    _Atomic int arrived;    /* threads in the current start or finish barrier */
    _Atomic unsigned round; /* barriers completed */
} ep_threadcomm_t;

static inline ep_threadcomm_t *ep_threadcomm_get(MPI_Comm h)
{
    return (ep_threadcomm_t *)ep_registry_get(EP_HID(h), EP_OBJ_THREADCOMM);
}

/* The thread communicators the calling thread has started and not yet
 * finished, with the endpoint it is in each: a few at once at most. */
#define EP_THREADCOMM_BOUND 8
typedef struct {
    const ep_threadcomm_t *tc;
    ep_endpoint_t *ep;
    int t; /* which of tc's endpoints in this process */
} ep_threadcomm_bound_t;
extern __thread ep_threadcomm_bound_t ep_threadcomm_bound[EP_THREADCOMM_BOUND] EP_TLS;

/* The calling thread's endpoint of tc, NULL outside its start / finish. */
static inline ep_endpoint_t *ep_threadcomm_mine(const ep_threadcomm_t *tc)
{
    for (int i = 0; i < EP_THREADCOMM_BOUND; i++)
        if (ep_threadcomm_bound[i].tc == tc)
            return ep_threadcomm_bound[i].ep;
    return NULL;
}

/* Collective over parent (classic: one call per process; endpoint: one per
 * parent endpoint). */
ep_status_t ep_threadcomm_init(MPI_Comm parent, ep_endpoint_t *ep_parent, int nthreads, ep_threadcomm_t **out);
void ep_threadcomm_free(ep_threadcomm_t *tc);

/* The calling thread takes an endpoint of tc: in an OpenMP parallel region
 * the one of its thread number (when free and below nthreads), else the
 * lowest free one, which for threads arriving one by one is arrival order.
 * Then it waits until all nthreads threads of the process have started, as
 * MPICH's start does.  Errors (explained, ep_status_explain): this thread
 * started tc already, or holds EP_THREADCOMM_BOUND of them, or every
 * endpoint is taken. */
ep_status_t ep_threadcomm_start(ep_threadcomm_t *tc);
/* The thread's attributes on tc are deleted (they were its own), it leaves
 * its endpoint and waits for the other threads to finish.  EP_ERR_COMM
 * when it had not started tc. */
ep_status_t ep_threadcomm_finish(ep_threadcomm_t *tc);

#endif
