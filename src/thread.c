#include "thread.h"

#include <stddef.h>

extern int omp_get_level(void) __attribute__((weak));
extern int omp_get_ancestor_thread_num(int level) __attribute__((weak));
extern int omp_get_thread_num(void) __attribute__((weak));

int ep_thread_in_parallel(void) { return omp_get_level != NULL && omp_get_level() > 0; }

int ep_thread_index(void)
{
    if (omp_get_level == NULL || omp_get_ancestor_thread_num == NULL)
        return 0;
    int level = omp_get_level();
    if (level < 1)
        return 0;
    /* At level 1 (the usual case, at every MPI call) the thread's own
     * number is that of the outermost region, and much cheaper to read. */
    if (level == 1 && omp_get_thread_num)
        return omp_get_thread_num();
    return omp_get_ancestor_thread_num(1);
}
