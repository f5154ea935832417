/* MPI 4.1's MPI_Buffer_flush and MPI_Buffer_iflush with endpoints'
 * buffered sends (MPICH 4.2 and later; skipped where mpi.h lacks them), in
 * world mode: each endpoint of an even process sends 4 MiB with MPI_Bsend
 * to the same endpoint of the next process, which receives only after a
 * barrier.  A message that large waits in the attached buffer for its
 * receiver (a buffered send between threads of one process leaves the
 * buffer at once: an unexpected message gets its own copy).  While it is
 * there, MPI_Buffer_iflush is refused (MPI_ERR_UNSUPPORTED_OPERATION: its
 * request would complete before the endpoints' message left),
 * MPI_Buffer_flush returns once the receiver has it, and MPI_Buffer_iflush
 * then works. */
#include "eptest.h"

#if MPI_VERSION * 10 + MPI_SUBVERSION < 41
int main(void)
{
    fprintf(stderr, "skip: this MPI (%d.%d) has no MPI_Buffer_flush (MPI 4.1)\n", MPI_VERSION, MPI_SUBVERSION);
    return 77;
}
#else
#define N (4 << 20)

int main(int argc, char **argv)
{
    int provided, size;
    watchdog_arm(60);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int t = ept_require_world();
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size / t % 2) {
        fprintf(stderr, "skip: needs an even number of processes\n");
        MPI_Finalize();
        return 77;
    }
    int bsize = t * (N + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bsize);
    EPT_OK(MPI_Buffer_attach(bbuf, bsize));
#pragma omp parallel
    {
        int r, cls, rc;
        char *data = calloc(N, 1);
        MPI_Request req;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int sender = r / t % 2 == 0;
        if (sender) {
            data[N - 1] = 42;
            EPT_OK(MPI_Bsend(data, N, MPI_CHAR, r + t, 7, MPI_COMM_WORLD));
            rc = MPI_Buffer_iflush(&req);
            MPI_Error_class(rc, &cls);
            EPT_CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION,
                      "MPI_Buffer_iflush with an endpoint's message in the buffer: class %d", cls);
        }
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (sender) {
            EPT_OK(MPI_Buffer_flush()); /* returns once the receiver has the message */
            EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
            EPT_OK(MPI_Buffer_iflush(&req)); /* every endpoint's message is out */
            EPT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            EPT_OK(MPI_Recv(data, N, MPI_CHAR, r - t, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            EPT_CHECK(data[N - 1] == 42, "the buffered message arrived wrong");
            EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
        free(data);
    }
    void *addr;
    EPT_OK(MPI_Buffer_detach(&addr, &bsize));
    free(bbuf);
    MPI_Finalize();
    return 0;
}
#endif
