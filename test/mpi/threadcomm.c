/* MPICH's thread communicator API on endpoints: MPIX_Threadcomm_init with
 * a different thread count per process, MPIX_Threadcomm_start / finish
 * around a parallel region in which one handle is each thread's own rank
 * (ranks by process, then thread), a ring with wildcard receives, an
 * Allreduce and a Comm_dup on it, MPIX_Comm_test_threadcomm (true for the
 * thread communicator only), and MPIX_Threadcomm_free. */
#include "eptest.h"

#pragma weak MPIX_Threadcomm_init
#pragma weak MPIX_Threadcomm_start
#pragma weak MPIX_Threadcomm_finish
#pragma weak MPIX_Threadcomm_free
#pragma weak MPIX_Comm_test_threadcomm

int main(int argc, char **argv)
{
    int provided, wr, ws;
    MPI_Comm tc;
    watchdog_arm(30);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    EPT_CHECK(MPIX_Threadcomm_init != NULL && MPIX_Comm_test_threadcomm != NULL,
              "MPIX_Threadcomm_init or MPIX_Comm_test_threadcomm is not available");
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    int mine = 2 + wr % 2, first = 0, total = 0; /* 2 or 3 threads per process */
    for (int p = 0; p < ws; p++) {
        if (p < wr)
            first += 2 + p % 2;
        total += 2 + p % 2;
    }
    EPT_OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, mine, &tc));
#pragma omp parallel num_threads(mine)
    {
        int t = omp_get_thread_num(), r, s, got = -1, sum = 0;
        MPI_Status st;
        MPI_Comm d;
        EPT_OK(MPIX_Threadcomm_start(tc));
        EPT_OK(MPI_Comm_rank(tc, &r));
        EPT_OK(MPI_Comm_size(tc, &s));
        EPT_CHECK(r == first + t && s == total, "thread %d: rank %d of %d, expected %d of %d", t, r, s, first + t,
                  total);
        EPT_OK(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % s, 9, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &st));
        EPT_CHECK(got == (r + s - 1) % s && st.MPI_SOURCE == got && st.MPI_TAG == 9, "ring got %d from %d", got,
                  st.MPI_SOURCE);
        EPT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, tc));
        EPT_CHECK(sum == s * (s - 1) / 2, "allreduce %d", sum);
        EPT_OK(MPI_Comm_dup(tc, &d));
        EPT_OK(MPI_Barrier(d));
        int is_tc = -1, dup_is_tc = -1, world_is_tc = -1;
        EPT_OK(MPIX_Comm_test_threadcomm(tc, &is_tc));
        EPT_OK(MPIX_Comm_test_threadcomm(d, &dup_is_tc));
        EPT_OK(MPIX_Comm_test_threadcomm(MPI_COMM_WORLD, &world_is_tc));
        EPT_CHECK(is_tc == 1 && dup_is_tc == 0 && world_is_tc == 0,
                  "MPIX_Comm_test_threadcomm: %d for the thread communicator, %d for its dup, %d for "
                  "MPI_COMM_WORLD",
                  is_tc, dup_is_tc, world_is_tc);
        EPT_OK(MPI_Comm_free(&d));
        EPT_OK(MPIX_Threadcomm_finish(tc));
    }
    EPT_OK(MPIX_Threadcomm_free(&tc));
    EPT_CHECK(tc == MPI_COMM_NULL, "MPIX_Threadcomm_free did not null the handle");
    MPI_Finalize();
    return 0;
}
