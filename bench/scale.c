/* scale: what start-up and communicator creation cost one process, for
 * the scale model in docs/PERFORMANCE.md.  Not built by make: build and
 * run it by hand over plain MPI and with epmpi preloaded, e.g.
 *
 *   mpicc -O2 -fopenmp bench/scale.c -o scale
 *   mpiexec -n 32 -env OMP_NUM_THREADS 1 ./scale           (plain MPICH)
 *   mpiexec -n 32 -env LD_PRELOAD .libs/libepmpi.so -env EPMPI_ENDPOINTS 1 \
 *       -env OMP_NUM_THREADS 1 ./scale
 *   mpiexec -n 2 -env LD_PRELOAD .libs/libepmpi.so -env EPMPI_ENDPOINTS 1024 \
 *       -env OMP_NUM_THREADS 1024 ./scale
 *
 * Each process's master thread prints one line: its resident memory
 * (VmRSS) before and after MPI_Init_thread, and the time
 * of MPI_Init_thread, of K MPI_Comm_dup of MPI_COMM_WORLD (per call, and
 * the memory they added per call), of one MPI_Comm_split in two halves,
 * and of the first message to a new peer (a ring exchange).  Under world
 * mode every thread is a rank and calls each of these itself; without
 * it, run one thread per process. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { K = 8 };

/* Seconds on a monotonic clock: MPI_Wtime may not be called before MPI_Init. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long rss_kib(void)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    long rss0 = rss_kib();
    double t0 = now(), t_init, t_dup, t_split, t_first;
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    t_init = now() - t0;
    long rss_init = rss_kib(), rss_base = 0, rss_dup = 0;
    int nthreads = 1;
#pragma omp parallel
    {
        MPI_Comm dups[K];
#pragma omp single
        nthreads = omp_get_num_threads();
        int rank, size;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Barrier(MPI_COMM_WORLD);
        /* The base for the duplicates' memory once every thread exists
         * (their stacks are megabytes at 1024 threads). */
#pragma omp master
        rss_base = rss_kib();
#pragma omp barrier
        double t = MPI_Wtime();
        for (int i = 0; i < K; i++)
            MPI_Comm_dup(MPI_COMM_WORLD, &dups[i]);
        MPI_Barrier(MPI_COMM_WORLD);
#pragma omp master
        {
            t_dup = (MPI_Wtime() - t) / K;
            rss_dup = rss_kib();
        }
        MPI_Comm half;
        t = MPI_Wtime();
        MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
#pragma omp master
        t_split = MPI_Wtime() - t;
        MPI_Barrier(MPI_COMM_WORLD);
        /* The first message between neighbours in a ring. */
        int token = rank, got = -1;
        t = MPI_Wtime();
        MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#pragma omp master
        t_first = MPI_Wtime() - t;
        MPI_Comm_free(&half);
        for (int i = 0; i < K; i++)
            MPI_Comm_free(&dups[i]);
#pragma omp master
        {
            if (rank == 0)
                printf("# size %d, threads per process %d\n"
                       "# rss0_kib rss_init_kib init_s dup_s dup_kib_per_call split_s first_msg_s\n",
                       size, nthreads);
            printf("%ld %ld %.6f %.6f %ld %.6f %.6f\n", rss0, rss_init, t_init, t_dup, (rss_dup - rss_base) / K,
                   t_split, t_first);
        }
    }
    MPI_Finalize();
    return 0;
}
