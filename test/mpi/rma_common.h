/* Shared helpers of the one-sided (RMA) tests.  Each test runs its body with
 * ept_main_classic: once per rank of the test communicator (MPI_COMM_WORLD
 * in world mode, the endpoints of argv[1] in explicit shapes), or once per
 * process on the classic MPI_COMM_WORLD when every entry of argv[1] is 0;
 * there every call goes straight to MPICH, which checks that the test
 * expects what MPI requires. */
#ifndef RMA_COMMON_H
#define RMA_COMMON_H

#include "eptest.h"

/* The predefined attributes of win must be these (base NULL: not checked). */
static inline void rma_check_attrs(MPI_Win win, void *base, MPI_Aint size, int disp_unit, int flavor, const char *what)
{
    void *b = NULL;
    MPI_Aint *s = NULL;
    int *du = NULL, *fl = NULL, *model = NULL, flag = 0;
    EPT_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    EPT_CHECK(flag && (base == NULL || b == base), "%s: MPI_WIN_BASE %p (flag %d), expected %p", what, b, flag, base);
    EPT_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &s, &flag));
    EPT_CHECK(flag && *s == size, "%s: MPI_WIN_SIZE %ld (flag %d), expected %ld", what, flag ? (long)*s : -1L, flag,
              (long)size);
    EPT_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
    EPT_CHECK(flag && *du == disp_unit, "%s: MPI_WIN_DISP_UNIT %d (flag %d), expected %d", what, flag ? *du : -1, flag,
              disp_unit);
    EPT_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    EPT_CHECK(flag && *fl == flavor, "%s: MPI_WIN_CREATE_FLAVOR %d (flag %d), expected %d", what, flag ? *fl : -1, flag,
              flavor);
    /* MPI allows either memory model; the attribute must be one of them. */
    EPT_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    EPT_CHECK(flag && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE),
              "%s: MPI_WIN_MODEL %d (flag %d), expected MPI_WIN_UNIFIED or MPI_WIN_SEPARATE", what, flag ? *model : -1,
              flag);
}

/* rc must be an error of class cls whose message names call. */
static inline void rma_expect_error(int rc, int cls, const char *call, const char *what)
{
    int c = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    EPT_CHECK(rc != MPI_SUCCESS, "%s: %s succeeded, expected error class %d", what, call, cls);
    MPI_Error_class(rc, &c);
    MPI_Error_string(rc, msg, &len);
    EPT_CHECK(c == cls, "%s: error class %d, expected %d ('%s')", what, c, cls, msg);
    EPT_CHECK(strstr(msg, call) != NULL, "%s: the message '%s' does not name %s", what, msg, call);
}

static inline int rma_cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The values every rank of comm fetched from one location (cnt each), with
 * nextra more values the caller knows (e.g. the final value, the same on
 * every rank), must be exactly first, first+1, ..., as atomic updates of
 * one location give. */
static inline void rma_check_permutation(const long *mine, int cnt, const long *extra, int nextra, long first,
                                         MPI_Comm comm, const char *what)
{
    int n, me;
    EPT_OK(MPI_Comm_size(comm, &n));
    EPT_OK(MPI_Comm_rank(comm, &me));
    long total = (long)cnt * n + nextra;
    long *all = malloc(sizeof(long) * (size_t)total);
    EPT_CHECK(all, "out of memory");
    EPT_OK(MPI_Allgather(mine, cnt, MPI_LONG, all, cnt, MPI_LONG, comm));
    for (int i = 0; i < nextra; i++)
        all[(long)cnt * n + i] = extra[i];
    qsort(all, (size_t)total, sizeof(long), rma_cmp_long);
    for (long i = 0; i < total; i++)
        EPT_CHECK(all[i] == first + i, "%s: rank %d: the fetched values sorted have %ld at %ld, expected %ld", what, me,
                  all[i], i, first + i);
    free(all);
}

#endif
