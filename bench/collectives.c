/* Collective latency on MPI_COMM_WORLD: MPI_Barrier, MPI_Bcast (root 0,
 * MPI_BYTE) and MPI_Allreduce (MPI_SUM over MPI_DOUBLE) at 8 B, 64 KiB and
 * 8 MiB of payload (Barrier once, as size 0).
 *
 * The same binary measures plain MPICH (P processes, OMP_NUM_THREADS=1, no
 * preload) and epmpi in world mode (P processes x T endpoints): every thread
 * of the parallel region is a rank of MPI_COMM_WORLD and calls every
 * collective.  For each (collective, size): the Bcast and Allreduce results
 * are checked once, a few calls warm up, a calibration run picks the number N
 * of calls per batch (so that a batch takes about BATCH_MS, 5 to 20000 calls;
 * rank 0 decides and tells everyone), then BATCHES batches of N calls run,
 * each after an MPI_Barrier and timed on rank 0; the median of the batches'
 * time per call is printed.
 * Usage: collectives [BATCHES [BATCH_MS]]   (defaults 7 and 30)
 * Output: one line per (collective, size), "name size_bytes usec_per_call". */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CALLS 5
#define MAX_CALLS 20000
#define MAX_BATCHES 101
#define CALIBRATE_SEC 0.005 /* the calibration run lasts at least this long */

enum op { BARRIER, BCAST, ALLREDUCE };
static const char *const op_name[] = {"barrier", "bcast", "allreduce"};

struct bufs {
    unsigned char *bc;    /* Bcast buffer */
    double *send, *recv;  /* Allreduce buffers */
};

static void run(enum op op, const struct bufs *b, int bytes, int n)
{
    switch (op) {
    case BARRIER:
        for (int i = 0; i < n; i++)
            MPI_Barrier(MPI_COMM_WORLD);
        break;
    case BCAST:
        for (int i = 0; i < n; i++)
            MPI_Bcast(b->bc, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case ALLREDUCE:
        for (int i = 0; i < n; i++)
            MPI_Allreduce(b->send, b->recv, bytes / (int)sizeof(double), MPI_DOUBLE, MPI_SUM,
                          MPI_COMM_WORLD);
        break;
    }
}

/* Seconds taken by n calls, as seen by the caller, after a barrier. */
static double timed(enum op op, const struct bufs *b, int bytes, int n)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    run(op, b, bytes, n);
    return MPI_Wtime() - t0;
}

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 131u + (i >> 8) * 7u + 1u);
}

static void fail(int rank, const char *what, int bytes, size_t at, double got, double want)
{
    fprintf(stderr, "collectives: rank %d: wrong %s result at %d bytes: element %zu is %g, expected %g\n",
            rank, what, bytes, at, got, want);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* One Bcast and one Allreduce of known data, checked on every rank. */
static void check(enum op op, const struct bufs *b, int bytes, int rank, int nranks)
{
    if (op == BCAST) {
        for (size_t i = 0; i < (size_t)bytes; i++)
            b->bc[i] = rank == 0 ? pattern(i) : 0;
        MPI_Bcast(b->bc, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        for (size_t i = 0; i < (size_t)bytes; i++)
            if (b->bc[i] != pattern(i))
                fail(rank, "MPI_Bcast", bytes, i, b->bc[i], pattern(i));
    } else if (op == ALLREDUCE) {
        size_t count = (size_t)bytes / sizeof(double);
        for (size_t i = 0; i < count; i++) {
            b->send[i] = rank + 1 + (double)(i % 5);
            b->recv[i] = -1;
        }
        MPI_Allreduce(b->send, b->recv, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (size_t i = 0; i < count; i++) {
            /* sum over r of (r + 1 + i % 5): exact in doubles */
            double want = (double)nranks * (nranks + 1) / 2 + (double)nranks * (double)(i % 5);
            if (b->recv[i] != want)
                fail(rank, "MPI_Allreduce", bytes, i, b->recv[i], want);
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median time per call in microseconds (meaningful on rank 0). */
static double measure(enum op op, const struct bufs *b, int bytes, int batches, double batch_sec)
{
    double per_call[MAX_BATCHES];
    run(op, b, bytes, 2); /* warm up */
    /* Calibrate: double the count until a run lasts CALIBRATE_SEC on rank 0;
     * rank 0's time is broadcast so that every rank takes the same decisions. */
    int n = 1;
    double t;
    for (;;) {
        t = timed(op, b, bytes, n);
        MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (t >= CALIBRATE_SEC || n >= MAX_CALLS)
            break;
        n = n > MAX_CALLS / 2 ? MAX_CALLS : 2 * n;
    }
    double calls = t > 0 ? batch_sec / (t / n) : MAX_CALLS;
    int calls_per_batch = calls > MAX_CALLS ? MAX_CALLS : calls < MIN_CALLS ? MIN_CALLS : (int)(calls + 0.5);
    for (int k = 0; k < batches; k++)
        per_call[k] = timed(op, b, bytes, calls_per_batch) * 1e6 / calls_per_batch;
    qsort(per_call, (size_t)batches, sizeof *per_call, cmp_double);
    return batches % 2 ? per_call[batches / 2] : (per_call[batches / 2 - 1] + per_call[batches / 2]) / 2;
}

int main(int argc, char **argv)
{
    static const int sizes[] = {8, 64 << 10, 8 << 20};
    const int nsizes = (int)(sizeof sizes / sizeof *sizes);
    const int max_bytes = sizes[nsizes - 1];
    int batches = argc > 1 ? atoi(argv[1]) : 7;
    double batch_ms = argc > 2 ? atof(argv[2]) : 30;
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (batches < 1 || batches > MAX_BATCHES || !(batch_ms > 0)) {
        fprintf(stderr, "usage: collectives [BATCHES (1 to %d) [BATCH_MS (> 0)]]\n", MAX_BATCHES);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int nthreads = omp_get_max_threads();
    int *thread_rank = calloc((size_t)nthreads, sizeof *thread_rank);
    if (!thread_rank) {
        fprintf(stderr, "collectives: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
#pragma omp parallel
    {
        int rank, nranks, me = omp_get_thread_num();
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
        if (me < nthreads)
            thread_rank[me] = rank;
#pragma omp barrier
        /* Without endpoints every thread would be the same rank. */
        if (me == 0)
            for (int t = 1; t < omp_get_num_threads() && t < nthreads; t++)
                if (thread_rank[t] == thread_rank[0]) {
                    fprintf(stderr, "collectives: threads 0 and %d are both rank %d: run with "
                            "OMP_NUM_THREADS=1, or with epmpi in world mode (EPMPI_ENDPOINTS=T)\n",
                            t, rank);
                    MPI_Abort(MPI_COMM_WORLD, 2);
                }
        struct bufs b = {malloc((size_t)max_bytes), malloc((size_t)max_bytes), malloc((size_t)max_bytes)};
        if (!b.bc || !b.send || !b.recv) {
            fprintf(stderr, "collectives: rank %d: out of memory\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        memset(b.bc, 0, (size_t)max_bytes);
        memset(b.send, 0, (size_t)max_bytes);
        memset(b.recv, 0, (size_t)max_bytes);
        for (enum op op = BARRIER; op <= ALLREDUCE; op++)
            for (int s = 0; s < (op == BARRIER ? 1 : nsizes); s++) {
                int bytes = op == BARRIER ? 0 : sizes[s];
                check(op, &b, bytes, rank, nranks);
                double us = measure(op, &b, bytes, batches, batch_ms / 1e3);
                if (rank == 0)
                    printf("%s %d %.3f\n", op_name[op], bytes, us);
            }
        free(b.bc);
        free(b.send);
        free(b.recv);
    }
    free(thread_rank);
    MPI_Finalize();
    return 0;
}
