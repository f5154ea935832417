#include "base/thread.h"

#include <stddef.h>

extern int omp_get_level(void) __attribute__((weak));
extern int omp_get_team_size(int level) __attribute__((weak));

int ep_thread_in_parallel(void) { return omp_get_level != NULL && omp_get_level() > 0; }

int ep_thread_team_size(void)
{
    if (!ep_thread_in_parallel() || omp_get_team_size == NULL)
        return 1;
    int n = omp_get_team_size(1);
    return n < 1 ? 1 : n;
}
