/* Thread identity: which world-mode endpoint the calling thread is.
 *
 * The OpenMP entry points are weak references, bound to the application's
 * OpenMP runtime when it has one.  A thread outside any parallel region (and
 * every thread of a program without OpenMP) is endpoint 0. */
#ifndef EP_THREAD_H
#define EP_THREAD_H

/* The calling thread's number in the outermost parallel region, 0 outside. */
int ep_thread_index(void);

/* 1 when the caller is inside an OpenMP parallel region. */
int ep_thread_in_parallel(void);

#endif
