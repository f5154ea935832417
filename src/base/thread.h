/* Thread identity: which world-mode endpoint the calling thread is.
 *
 * Two rules (EPMPI_THREADS, README "World mode"):
 * - openmp (the default): OpenMP thread t of the outermost parallel region
 *   is endpoint t; outside any region (and in threads that are not OpenMP
 *   threads) the caller is endpoint 0.  The OpenMP entry points are weak
 *   references, bound to the application's OpenMP runtime when it has one.
 * - first-call: the thread that calls MPI_Init is endpoint 0; any other
 *   thread, of any kind, takes the lowest free endpoint at its first call
 *   that needs one and holds it until it ends. */
#ifndef EP_THREAD_H
#define EP_THREAD_H

#include <limits.h>
#include <stddef.h>

/* For epmpi's thread-local variables, all small: the initial-exec model
 * reads them at a fixed offset from the thread pointer, where the default
 * model of a shared library calls __tls_get_addr at each access. */
#define EP_TLS __attribute__((tls_model("initial-exec")))

extern int omp_get_ancestor_thread_num(int level) __attribute__((weak));

/* The calling thread's number in the outermost OpenMP parallel region, -1
 * outside any region (or without OpenMP). */
static inline int ep_thread_omp_num(void)
{
    /* One call into the runtime: the ancestor at level 1 is the thread
     * itself in the outermost region (the usual case), and -1 outside
     * any region. */
    return omp_get_ancestor_thread_num ? omp_get_ancestor_thread_num(1) : -1;
}

/* EPMPI_THREADS=first-call is on (set at MPI_Init, before world mode). */
extern int ep_thread_by_call __attribute__((visibility("hidden")));
/* openmp with an OpenMP runtime: omp_get_ancestor_thread_num, else NULL.
 * Hidden, so that the lookup loads it directly, with no GOT or PLT. */
extern int (*ep_thread_omp_fn)(int level) __attribute__((visibility("hidden")));
/* first-call: 1 + the endpoint the calling thread holds, 0 for none yet. */
extern __thread int ep_thread_held EP_TLS;

/* What ep_thread_index gives a thread that has no endpoint (first-call:
 * every endpoint is held by another thread, or world mode is off). */
#define EP_THREAD_NONE INT_MAX

/* first-call: the calling thread takes the lowest free endpoint (index),
 * or gets EP_THREAD_NONE. */
int ep_thread_take(void);

/* The calling thread's world-mode endpoint.  Inline: it runs at every call
 * on MPI_COMM_WORLD in world mode. */
static inline int ep_thread_index(void)
{
    int (*omp)(int) = ep_thread_omp_fn;
    if (__builtin_expect(omp != NULL, 1)) {
        int t = omp(1);
        return t < 0 ? 0 : t;
    }
    if (ep_thread_by_call)
        return ep_thread_held ? ep_thread_held - 1 : ep_thread_take();
    return 0;
}

/* The same without taking an endpoint (for messages). */
static inline int ep_thread_index_peek(void)
{
    if (ep_thread_by_call)
        return ep_thread_held ? ep_thread_held - 1 : EP_THREAD_NONE;
    return ep_thread_index();
}

/* World mode begins with nep endpoints per process (first-call: under the
 * rule by_call, the calling thread, MPI_Init's, holds endpoint 0), or ends
 * (nep 0). */
void ep_thread_world(int nep, int by_call);

/* first-call: 1 when endpoint t is held by a thread, 0 when free. */
int ep_thread_endpoint_held(int t);

/* 1 when the caller speaks for world endpoint t as well as for its own:
 * openmp, a caller outside any parallel region speaks for all (as the main
 * thread does at MPI_Init); first-call, MPI_Init's thread speaks for the
 * endpoints no other thread holds. */
int ep_thread_speaks_for(int t);

/* The threads a parallel region gets by default (omp_get_max_threads),
 * 0 without an OpenMP runtime. */
int ep_thread_omp_max(void);

/* 1 when the caller is inside an OpenMP parallel region. */
int ep_thread_in_parallel(void);

/* The number of threads of the caller's outermost parallel region (1
 * outside any region): world-mode endpoints 0 to that number - 1 are the
 * ones a thread can be while this region runs. */
int ep_thread_team_size(void);

#endif
