/* A block of a non-contiguous datatype larger than 2 GiB in an exchange
 * collective (here MPI_Alltoallv between two endpoints of one process): it
 * is packed with MPICH's large-count pack, and every 4096th int and the
 * last arrive (count_huge_c moves more than 2 GiB between processes).  The
 * test skips (77) on a machine of less than 12 GB. */
#include "eptest.h"

#define NINT ((1 << 29) + 1) /* ints in the block: 2 GiB + 4 bytes */

static void body(MPI_Comm comm, void *arg)
{
    int r, n;
    MPI_Datatype every_other;
    (void)arg;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    EPT_CHECK(n == 2, "runs with 2 ranks, not %d", n);
    EPT_OK(MPI_Type_vector(NINT, 1, 2, MPI_INT, &every_other));
    EPT_OK(MPI_Type_commit(&every_other));
    /* Rank 0 sends one every_other (its ints at even places) to rank 1,
     * which receives them contiguously. */
    size_t bytes = r == 0 ? (size_t)NINT * 2 * sizeof(int) : (size_t)NINT * sizeof(int);
    char *buf = malloc(bytes), dummy = 0;
    EPT_CHECK(buf, "no memory for %zu bytes", bytes);
    int sc[2] = {0, r == 0 ? 1 : 0}, rc_[2] = {r == 1 ? NINT : 0, 0}, d[2] = {0, 0};
    for (size_t i = 0; r == 0 && i < (size_t)NINT - 1; i += 4096)
        ((int *)buf)[2 * i] = (int)i * 3 + 1;
    if (r == 0)
        ((int *)buf)[2 * ((size_t)NINT - 1)] = -7;
    EPT_OK(MPI_Alltoallv(r == 0 ? buf : &dummy, sc, d, every_other, r == 1 ? buf : &dummy, rc_, d, MPI_INT, comm));
    size_t wrong = 0;
    for (size_t i = 0; r == 1 && i < (size_t)NINT - 1; i += 4096)
        if (((int *)buf)[i] != (int)i * 3 + 1 && !wrong++)
            fprintf(stderr, "first wrong: int %zu is %d, expected %d\n", i, ((int *)buf)[i], (int)i * 3 + 1);
    EPT_CHECK(r == 0 || (wrong == 0 && ((int *)buf)[NINT - 1] == -7), "%zu ints of %d wrong, last %d", wrong,
              NINT / 4096, ((int *)buf)[NINT - 1]);
    free(buf);
    EPT_OK(MPI_Type_free(&every_other));
    EPT_OK(MPI_Barrier(comm));
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (ept_skip_huge(12)) {
        MPI_Finalize();
        return 77;
    }
    watchdog_arm(60);
    run_ranks(local_ranks(argc, argv), body, NULL);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
