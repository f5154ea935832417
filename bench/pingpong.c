/* Ping-pong latency and bandwidth between ranks 0 and 1 of MPI_COMM_WORLD.
 *
 * The same binary measures plain MPICH (2 processes, no preload) and epmpi
 * (e.g. 1 process x 2 endpoints in world mode): ranks 0 and 1 are whatever
 * MPI_COMM_WORLD says they are, and every thread with a rank takes part.
 * Output: one line per size, "size_bytes usec_per_one_way MB_per_s". */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pingpong(int rank, char *buf, int size, int iters, double *usec)
{
    MPI_Status st;
    int peer = 1 - rank;
    for (int warm = 0; warm < 2; warm++) {
        int n = warm ? iters : (iters / 10 + 1);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            if (rank == 0) {
                MPI_Send(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
            } else {
                MPI_Recv(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
                MPI_Send(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
        *usec = (MPI_Wtime() - t0) * 1e6 / (2.0 * n);
    }
}

int main(int argc, char **argv)
{
    int provided;
    int sizes[] = {8, 1024, 65536, 1 << 20, 4 << 20};
    int nsizes = (int)(sizeof sizes / sizeof *sizes);
    long budget = argc > 1 ? atol(argv[1]) : 64L << 20; /* bytes moved per size */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
#pragma omp parallel
    {
        int rank, size;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (size != 2) {
            if (rank == 0)
                fprintf(stderr, "pingpong: needs exactly 2 ranks, got %d\n", size);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        char *buf = malloc((size_t)sizes[nsizes - 1]);
        memset(buf, 1, (size_t)sizes[nsizes - 1]);
        for (int s = 0; s < nsizes; s++) {
            long iters = budget / sizes[s];
            if (iters > 20000)
                iters = 20000;
            if (iters < 20)
                iters = 20;
            double us;
            pingpong(rank, buf, sizes[s], (int)iters, &us);
            if (rank == 0)
                printf("%d %.3f %.1f\n", sizes[s], us, sizes[s] / us);
        }
        free(buf);
    }
    MPI_Finalize();
    return 0;
}
