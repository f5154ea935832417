/* Collective calls that the ranks of one process do not make alike (an
 * erroneous program), with MPI_ERRORS_RETURN: every rank of the process
 * gets the error class named below and none hangs.  Each case runs on a
 * fresh duplicate of MPI_COMM_WORLD; after the mistake, a correct
 * collective on it works when all its ranks live in one process, and
 * fails on every rank with MPI_ERR_OTHER naming the earlier failure
 * otherwise (the process left out MPICH's part of the call, so the
 * processes no longer agree on the collectives in progress: never wrong
 * data).  Every process makes the same mistake (as an SPMD program
 * would), so no process waits for another in MPICH.  Thread t of a
 * process passes:
 *   count_share   Allreduce of 100 doubles on t = 0, 20000 elsewhere (under
 *                 and over the size from which the local fold is shared)
 *   count_share0  the same with 20000 on t = 0 and 100 elsewhere
 *   barrier_bcast MPI_Barrier on odd t, MPI_Bcast (root 0) on even t
 *   barrier_gather MPI_Barrier on odd t, MPI_Gather on even t (two paths)
 *   roots         MPI_Bcast with root t % 2 (roots 0,1,0,1 in 1 x 4)
 *   bcast_sizes   MPI_Bcast of 10 doubles on t > 0, 10000 on t = 0 (the
 *                 one-process path against the generic one)
 *   iallreduce    MPI_Iallreduce with counts 1 + t % 2, error at MPI_Wait
 * Shapes: world mode only (threads are the ranks of one process). */
#include "eptest.h"

static int error_class(int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

#define EXPECT(name, rc, want)                                                                                     \
    do {                                                                                                           \
        int rc_ = (rc);                                                                                            \
        char msg_[MPI_MAX_ERROR_STRING] = "";                                                                      \
        int len_ = 0;                                                                                              \
        if (rc_ != MPI_SUCCESS)                                                                                    \
            MPI_Error_string(rc_, msg_, &len_);                                                                    \
        EPT_CHECK(error_class(rc_) == (want), "%s: class %d, wanted %d (%s)", name, error_class(rc_), want, msg_); \
    } while (0)

static int one_process; /* all ranks in one process */

/* A correct collective on c after the mistake: it works in one process,
 * else it fails clearly; then c goes. */
static void after(const char *what, MPI_Comm *c, int size)
{
    int one[2] = {1, 2}, sum[2] = {0, 0};
    int rc = MPI_Allreduce(one, sum, 2, MPI_INT, MPI_SUM, *c);
    if (one_process) {
        EPT_CHECK(rc == MPI_SUCCESS && sum[0] == size && sum[1] == 2 * size, "Allreduce after %s: rc %d, %d, %d", what,
                  rc, sum[0], sum[1]);
    } else {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (rc != MPI_SUCCESS)
            MPI_Error_string(rc, msg, &len);
        EPT_CHECK(error_class(rc) == MPI_ERR_OTHER && strstr(msg, "earlier collective"),
                  "Allreduce after %s: class %d (%s), wanted MPI_ERR_OTHER naming the earlier failure", what,
                  error_class(rc), msg);
    }
    EPT_OK(MPI_Comm_free(c));
    EPT_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the world is untouched */
}

/* A fresh duplicate of MPI_COMM_WORLD for the next case. */
static MPI_Comm fresh(void)
{
    MPI_Comm c;
    EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ept_require_world();
    watchdog_arm(60);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int T = ept_world_endpoints(), wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    one_process = wsize == T;
    double *big = malloc(sizeof(double) * 20000 * (size_t)T);
    EPT_CHECK(big, "out of memory");
#pragma omp parallel num_threads(T)
    {
        int r, size, t = omp_get_thread_num(), x[64] = {0}, y[2] = {1, 1}, z[2];
        MPI_Comm c;
        double *b = big + 20000 * (size_t)t;
        MPI_Request rq;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        memset(b, 0, sizeof(double) * 20000);

        PHASE("count_share");
        c = fresh();
        EXPECT("count_share", MPI_Allreduce(MPI_IN_PLACE, b, t == 0 ? 100 : 20000, MPI_DOUBLE, MPI_SUM, c),
               MPI_ERR_COUNT);
        after("count_share", &c, size);

        PHASE("count_share0");
        c = fresh();
        EXPECT("count_share0", MPI_Allreduce(MPI_IN_PLACE, b, t == 0 ? 20000 : 100, MPI_DOUBLE, MPI_SUM, c),
               MPI_ERR_COUNT);
        after("count_share0", &c, size);

        PHASE("barrier_bcast");
        c = fresh();
        EXPECT("barrier_bcast", t % 2 ? MPI_Barrier(c) : MPI_Bcast(x, 4, MPI_INT, 0, c), MPI_ERR_OTHER);
        after("barrier_bcast", &c, size);

        PHASE("barrier_gather");
        c = fresh();
        EXPECT("barrier_gather", t % 2 ? MPI_Barrier(c) : MPI_Gather(x, 1, MPI_INT, b, 1, MPI_INT, 0, c),
               MPI_ERR_OTHER);
        after("barrier_gather", &c, size);

        PHASE("roots");
        c = fresh();
        x[0] = r;
        EXPECT("roots", MPI_Bcast(x, 2, MPI_INT, t % 2, c), MPI_ERR_ROOT);
        after("roots", &c, size);

        PHASE("bcast_sizes");
        c = fresh();
        EXPECT("bcast_sizes", MPI_Bcast(b, t ? 10 : 10000, MPI_DOUBLE, 0, c), MPI_ERR_COUNT);
        after("bcast_sizes", &c, size);

        PHASE("iallreduce");
        c = fresh();
        EPT_OK(MPI_Iallreduce(y, z, 1 + t % 2, MPI_INT, MPI_SUM, c, &rq));
        EXPECT("iallreduce", MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
        after("iallreduce", &c, size);
    }
    free(big);
    MPI_Finalize();
    return 0;
}
