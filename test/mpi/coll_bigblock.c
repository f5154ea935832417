/* A block of a non-contiguous datatype larger than 2 GiB in an exchange
 * collective (here MPI_Alltoallv between two endpoints of one process):
 * MPICH packs by ints, so the call must fail on every rank with
 * MPI_ERR_COUNT, the message of the rank that packs saying why, instead of
 * leaving the block out and returning success.  The buffers are allocated
 * but never touched (the failure comes before any copy); the test skips
 * (77) on a machine of less than 8 GB. */
#include "eptest.h"

#include <sys/sysinfo.h>

#define NINT ((1 << 29) + 1) /* ints in the block: 2 GiB + 4 bytes */

static void body(MPI_Comm comm, void *arg)
{
    int r, n, cls = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    MPI_Datatype every_other;
    (void)arg;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    EPT_CHECK(n == 2, "runs with 2 ranks, not %d", n);
    EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    EPT_OK(MPI_Type_vector(NINT, 1, 2, MPI_INT, &every_other));
    EPT_OK(MPI_Type_commit(&every_other));
    /* Rank 0 sends one every_other (its ints at even places) to rank 1,
     * which receives them contiguously. */
    size_t bytes = r == 0 ? (size_t)NINT * 2 * sizeof(int) : (size_t)NINT * sizeof(int);
    char *buf = malloc(bytes), dummy = 0;
    EPT_CHECK(buf, "no memory for %zu bytes", bytes);
    int sc[2] = {0, r == 0 ? 1 : 0}, rc_[2] = {r == 1 ? NINT : 0, 0}, d[2] = {0, 0};
    int rc = MPI_Alltoallv(r == 0 ? buf : &dummy, sc, d, every_other, r == 1 ? buf : &dummy, rc_, d, MPI_INT, comm);
    EPT_CHECK(rc != MPI_SUCCESS, "an unpackable block of 2 GiB went through MPI_Alltoallv");
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    EPT_CHECK(cls == MPI_ERR_COUNT && strstr(msg, "MPI_Alltoallv"), "class %d, message '%s'", cls, msg);
    /* rank 0 is local index 0, which packs for the process */
    EPT_CHECK(r != 0 || strstr(msg, "2 GiB"), "rank 0's message does not say why: '%s'", msg);
    free(buf);
    EPT_OK(MPI_Type_free(&every_other));
    EPT_OK(MPI_Barrier(comm)); /* the communicator is still in step */
}

int main(int argc, char **argv)
{
    struct sysinfo si;
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (sysinfo(&si) == 0 && (double)si.totalram * si.mem_unit < 8e9) {
        fprintf(stderr, "skip: needs 8 GB of memory\n");
        MPI_Finalize();
        return 77;
    }
    watchdog_arm(60);
    run_ranks(local_ranks(argc, argv), body, NULL);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
