/* Thread identity: which world-mode endpoint the calling thread is.
 *
 * The OpenMP entry points are weak references, bound to the application's
 * OpenMP runtime when it has one.  A thread outside any parallel region (and
 * every thread of a program without OpenMP) is endpoint 0. */
#ifndef EP_THREAD_H
#define EP_THREAD_H

/* For epmpi's thread-local variables, all small: the initial-exec model
 * reads them at a fixed offset from the thread pointer, where the default
 * model of a shared library calls __tls_get_addr at each access. */
#define EP_TLS __attribute__((tls_model("initial-exec")))

extern int omp_get_ancestor_thread_num(int level) __attribute__((weak));

/* The calling thread's number in the outermost parallel region, 0 outside.
 * Inline: it runs at every call on MPI_COMM_WORLD in world mode. */
static inline int ep_thread_index(void)
{
    if (!omp_get_ancestor_thread_num)
        return 0;
    /* One call into the runtime: the ancestor at level 1 is the thread
     * itself in the outermost region (the usual case), and -1 outside
     * any region. */
    int t = omp_get_ancestor_thread_num(1);
    return t < 0 ? 0 : t;
}

/* 1 when the caller is inside an OpenMP parallel region. */
int ep_thread_in_parallel(void);

/* The number of threads of the caller's outermost parallel region (1
 * outside any region): world-mode endpoints 0 to that number - 1 are the
 * ones a thread can be while this region runs. */
int ep_thread_team_size(void);

#endif
