/* Small helpers for the MPI test programs: failure reporting with the
 * rank, and the shape the test runs in. */
#ifndef EPTEST_H
#define EPTEST_H

#include "epmpi.h"

#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPT_CHECK(cond, ...)                                                                   \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            int r_ = -1;                                                                       \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                \
            fprintf(stderr, "FAIL %s:%d (world rank %d, thread %d): %s: ", __FILE__, __LINE__, r_, \
                    omp_get_thread_num(), #cond);                                              \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            fflush(stderr);                                                                    \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                      \
            /* Never go on after a failed check, even if MPI_Abort returned. */                 \
            PMPI_Abort(MPI_COMM_WORLD, 1);                                                     \
        }                                                                                      \
    } while (0)

#define EPT_OK(call) EPT_CHECK((call) == MPI_SUCCESS, "%s failed", #call)

/* Endpoints per process in world mode (EPMPI_ENDPOINTS), 0 when off. */
static inline int ept_world_endpoints(void)
{
    const char *s = getenv("EPMPI_ENDPOINTS");
    return s ? atoi(s) : 0;
}

/* Skip (exit 77) unless world mode is on. */
static inline int ept_require_world(void)
{
    int t = ept_world_endpoints();
    if (t <= 0) {
        fprintf(stderr, "skip: needs world mode (EPMPI_ENDPOINTS)\n");
        exit(77);
    }
    return t;
}

/* This process's entry in a comma-separated list argument ("1,2,3"). */
static inline int ept_list_item(const char *list, int index)
{
    const char *p = list;
    for (int i = 0; i < index && p; i++) {
        p = strchr(p, ',');
        if (p)
            p++;
    }
    return p ? atoi(p) : 0;
}

#endif
