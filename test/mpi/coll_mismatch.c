/* Collective calls that the ranks of one process do not make alike (an
 * erroneous program), with MPI_ERRORS_RETURN: every rank of the process
 * gets the error class named below, none hangs, and a correct collective
 * afterwards works.  Every process makes the same mistake (as an SPMD
 * program would), so no process waits for another in MPICH.  Thread t of
 * a process passes:
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

/* A correct collective: the communicator is usable after the mistake. */
static void still_usable(const char *after, int size)
{
    int one[2] = {1, 2}, sum[2] = {0, 0};
    EPT_OK(MPI_Allreduce(one, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    EPT_CHECK(sum[0] == size && sum[1] == 2 * size, "Allreduce after %s gave %d, %d", after, sum[0], sum[1]);
    EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ept_require_world();
    watchdog_arm(60);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int T = ept_world_endpoints();
    double *big = malloc(sizeof(double) * 20000 * (size_t)T);
    EPT_CHECK(big, "out of memory");
#pragma omp parallel num_threads(T)
    {
        int r, size, t = omp_get_thread_num(), x[64] = {0}, y[2] = {1, 1}, z[2];
        double *b = big + 20000 * (size_t)t;
        MPI_Request rq;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        memset(b, 0, sizeof(double) * 20000);

        PHASE("count_share");
        EXPECT("count_share", MPI_Allreduce(MPI_IN_PLACE, b, t == 0 ? 100 : 20000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
               MPI_ERR_COUNT);
        still_usable("count_share", size);

        PHASE("count_share0");
        EXPECT("count_share0", MPI_Allreduce(MPI_IN_PLACE, b, t == 0 ? 20000 : 100, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
               MPI_ERR_COUNT);
        still_usable("count_share0", size);

        PHASE("barrier_bcast");
        EXPECT("barrier_bcast", t % 2 ? MPI_Barrier(MPI_COMM_WORLD) : MPI_Bcast(x, 4, MPI_INT, 0, MPI_COMM_WORLD),
               MPI_ERR_OTHER);
        still_usable("barrier_bcast", size);

        PHASE("barrier_gather");
        EXPECT("barrier_gather",
               t % 2 ? MPI_Barrier(MPI_COMM_WORLD) : MPI_Gather(x, 1, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_WORLD),
               MPI_ERR_OTHER);
        still_usable("barrier_gather", size);

        PHASE("roots");
        x[0] = r;
        EXPECT("roots", MPI_Bcast(x, 2, MPI_INT, t % 2, MPI_COMM_WORLD), MPI_ERR_ROOT);
        still_usable("roots", size);

        PHASE("bcast_sizes");
        EXPECT("bcast_sizes", MPI_Bcast(b, t ? 10 : 10000, MPI_DOUBLE, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
        still_usable("bcast_sizes", size);

        PHASE("iallreduce");
        EPT_OK(MPI_Iallreduce(y, z, 1 + t % 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
        EXPECT("iallreduce", MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
        still_usable("iallreduce", size);
    }
    free(big);
    MPI_Finalize();
    return 0;
}
