/* World mode: every OpenMP thread is its own rank of MPI_COMM_WORLD, rank
 * p*T+t, MPI_COMM_SELF is one rank per endpoint, and the main thread outside
 * the parallel region is endpoint 0. */
#include "eptest.h"

int main(int argc, char **argv)
{
    int provided, wrank, wsize;
    int T = ept_require_world();
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    EPT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int P = wsize / T;
    EPT_CHECK(wsize % T == 0 && P >= 1, "size %d with %d endpoints per process", wsize, T);
    int p = wrank / T;
    EPT_CHECK(wrank % T == 0, "outside a parallel region the caller is endpoint 0, got rank %d", wrank);
    int seen = 0;
#pragma omp parallel num_threads(T) reduction(+ : seen)
    {
        int r, s, sr, ss, t = omp_get_thread_num();
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &s);
        EPT_CHECK(r == p * T + t, "thread %d of process %d has rank %d", t, p, r);
        EPT_CHECK(s == P * T, "size %d", s);
        MPI_Comm_rank(MPI_COMM_SELF, &sr);
        MPI_Comm_size(MPI_COMM_SELF, &ss);
        EPT_CHECK(sr == 0 && ss == 1, "MPI_COMM_SELF rank %d size %d", sr, ss);
        int res;
        MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res);
        EPT_CHECK(res == MPI_IDENT, "world vs world: %d", res);
        /* Every rank is seen exactly once. */
        int *all = malloc(sizeof(int) * (size_t)s);
        MPI_Allgather(&r, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < s; i++)
            EPT_CHECK(all[i] == i, "allgather slot %d holds %d", i, all[i]);
        free(all);
        int sum = 0;
        MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        EPT_CHECK(sum == s * (s - 1) / 2, "sum of ranks %d", sum);
        int *tag_ub, flag;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
        EPT_CHECK(flag && *tag_ub >= (1 << 28) - 1, "MPI_TAG_UB %d", flag ? *tag_ub : -1);
        MPI_Barrier(MPI_COMM_WORLD);
        seen = 1;
    }
    EPT_CHECK(seen == T, "%d threads ran", seen);
    MPI_Finalize();
    return 0;
}
