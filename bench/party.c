/* epmpi-bench: agreement between all parties of a job, and the timing loop
 * every case runs under. */
#include "bench.h"

#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ITERS (1L << 26)

void party_barrier(const struct party *p)
{
    if (!p->team->dup) { /* every party a rank of comm (MPI_COMM_WORLD or a thread communicator) */
        MPI_Barrier(p->comm);
        return;
    }
#pragma omp barrier
    if (p->thread == 0)
        MPI_Barrier(MPI_COMM_WORLD);
#pragma omp barrier
}

double party_max(const struct party *p, double x)
{
    struct team *t = p->team;
    if (!t->dup) {
        MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, p->comm);
        return x;
    }
    t->slot[p->thread] = x;
#pragma omp barrier
    if (p->thread == 0) {
        double m = t->slot[0];
        for (int i = 1; i < t->nthreads; i++)
            m = t->slot[i] > m ? t->slot[i] : m;
        MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t->result = m;
    }
#pragma omp barrier
    /* The next call overwrites result only after its own first barrier,
     * which every thread reaches after reading it here. */
    return t->result;
}

void party_fail(const struct party *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "epmpi-bench: rank %d (thread %d): ", p->rank, p->thread);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    abort(); /* MPI_Abort does not return; the compiler does not know */
}

void party_report(const struct party *p, const char *name, const char *metric, long size, double value,
                  const char *unit)
{
    if (p->id == 0) {
        printf("%s %s %ld %.6g %s\n", name, metric, size, value, unit);
        fflush(stdout);
    }
}

void *party_alloc(const struct party *p, size_t bytes)
{
    void *b = malloc(bytes ? bytes : 1);
    if (!b)
        party_fail(p, "out of memory (%zu bytes)", bytes);
    memset(b, 0, bytes); /* fault the pages in before anything is timed */
    return b;
}

void party_need_pairs(const struct party *p, const char *name)
{
    if (p->size < 2 || p->size % 2)
        party_fail(p, "%s needs an even number of ranks, the communicator has %d", name, p->size);
}

long bench_max_size(const long *sizes, int n)
{
    long m = 0;
    for (int i = 0; i < n; i++)
        m = sizes[i] > m ? sizes[i] : m;
    return m;
}

int bench_sizes(const struct bench_opts *o, const long *defaults, int ndefaults, const long **sizes)
{
    *sizes = o->nsizes ? o->sizes : defaults;
    return o->nsizes ? o->nsizes : ndefaults;
}

/* Seconds n iterations took: the longest of any party, from a barrier. */
static double timed(const struct party *p, bench_fn fn, void *ctx, long n)
{
    party_barrier(p);
    double t0 = MPI_Wtime();
    fn(p, ctx, n);
    return party_max(p, MPI_Wtime() - t0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_measure(const struct party *p, const struct bench_opts *o, double default_seconds, bench_fn fn, void *ctx)
{
    double per_iter[BENCH_MAX_BATCHES];
    int batches = o->batches;
    double per_batch = (o->seconds > 0 ? o->seconds : default_seconds) / batches;
    long n = o->iters;
    if (n > 0) {
        timed(p, fn, ctx, n); /* warm-up */
    } else {
        /* Calibration, which is also the warm-up: double n until a run
         * lasts a tenth of a batch.  Every party sees the same times (the
         * maximum), so all take the same decisions. */
        double t;
        for (n = 1;; n *= 2) {
            t = timed(p, fn, ctx, n);
            if (t >= per_batch / 10 || n >= MAX_ITERS)
                break;
        }
        double iters = t > 0 ? per_batch / (t / (double)n) : (double)MAX_ITERS;
        n = iters >= (double)MAX_ITERS ? MAX_ITERS : iters < 1 ? 1 : (long)(iters + 0.5);
    }
    for (int k = 0; k < batches; k++)
        per_iter[k] = timed(p, fn, ctx, n) / (double)n;
    return bench_median(per_iter, batches);
}
