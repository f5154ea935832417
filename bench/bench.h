/* epmpi-bench: the parts the cases share.
 *
 * A measurement runs on "parties": MPI ranks, each driven by its own OpenMP
 * thread.  How a thread gets a rank depends on the run:
 *   --comm world  every thread uses MPI_COMM_WORLD.  Under epmpi in world
 *                 mode each OpenMP thread is its own rank; without it the
 *                 program must run one thread per process.
 *   --comm dup    plain MPI_THREAD_MULTIPLE: thread t of every process uses
 *                 its own duplicate t of MPI_COMM_WORLD, so the threads of a
 *                 process are the same process rank on T communicators (the
 *                 best a program can do without endpoints).
 * The same binary is the baseline (plain MPICH) and the measured program
 * (epmpi preloaded): it needs nothing from epmpi.
 *
 * Output (stdout, from party 0 only): lines starting with '#' are comments;
 * every other line is one result, "case metric size value unit", which the
 * driver (bench/run-bench.sh) parses. */
#ifndef EPMPI_BENCH_H
#define EPMPI_BENCH_H

#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>

#define BENCH_MAX_SIZES 64
#define BENCH_MAX_BATCHES 101

/* What the command line asked for; zero fields mean "the case's default". */
struct bench_opts {
    long sizes[BENCH_MAX_SIZES]; /* message sizes in bytes */
    int nsizes;                  /* 0: each case's default sizes */
    long iters;                  /* iterations per batch, 0: calibrate */
    double seconds;              /* time budget per measurement, 0: default */
    int batches;                 /* timed batches per measurement; the median is reported */
    int window;                  /* rate: messages outstanding per window */
    int dup;                     /* --comm dup */
    int threadcomm;              /* --comm threadcomm */
};

/* The threads of one process that take part, and what they share.  In dup
 * mode the threads agree through slot[] and OpenMP barriers, and thread 0
 * speaks for the process on MPI_COMM_WORLD; in world mode every party calls
 * MPI itself.  slot[t] is written by thread t only, read by thread 0 after a
 * barrier; result is written by thread 0 only, read by all after a barrier. */
struct team {
    int dup;       /* dup mode (see above) */
    int nthreads;  /* threads per process */
    int nparties;  /* parties in the whole job */
    double *slot;  /* one per thread */
    double result; /* thread 0's answer to all */
};

/* One participant: a rank of comm driven by the calling thread. */
struct party {
    struct team *team; /* shared with the other threads of the process */
    MPI_Comm comm;     /* the communicator the cases measure on */
    int rank;          /* in comm */
    int size;          /* of comm */
    int thread;        /* OpenMP thread number */
    int id;            /* 0 to nparties - 1; party 0 reports */
};

/* Pairwise cases: the first half of comm's ranks talk to the second half. */
static inline int party_peer(const struct party *p) { return (p->rank + p->size / 2) % p->size; }

/* Byte i of a test pattern: checked data before timing. */
static inline char bench_pattern(long i, int salt) { return (char)(i * 7 + (i >> 10) + salt); }

/* party.c: synchronisation over every party of the job, and timing. */
void party_barrier(const struct party *p);
double party_max(const struct party *p, double x);
void party_fail(const struct party *p, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
void party_report(const struct party *p, const char *name, const char *metric, long size, double value,
                  const char *unit);
void *party_alloc(const struct party *p, size_t bytes);
/* Spins until *flag is v, the floors' wait for a partner thread or
 * process.  On a quiet machine the other side answers within a few
 * hundred spins; when it is not running (more threads than cores),
 * yielding lets it run instead of spinning out a time slice.  Inline, as
 * the floors measure what a cache line's trip costs. */
static inline void bench_await(_Atomic long *flag, long v)
{
    for (unsigned spins = 0; atomic_load_explicit(flag, memory_order_acquire) != v;)
        if (++spins > 4096)
            sched_yield();
}
/* Pairwise cases stop unless comm has an even number of ranks. */
void party_need_pairs(const struct party *p, const char *name);

/* Runs n iterations of a case and returns; the caller times it. */
typedef void (*bench_fn)(const struct party *p, void *ctx, long n);

/* Median over the batches of the seconds one iteration takes (each batch's
 * time is the longest any party took, from a common barrier); the same on
 * every party.  default_seconds is the case's budget for all the batches. */
/* The median of v[0..n-1] (sorts v). */
double bench_median(double *v, int n);
double bench_measure(const struct party *p, const struct bench_opts *o, double default_seconds, bench_fn fn, void *ctx);

/* The sizes to measure: the command line's, or the case's defaults. */
int bench_sizes(const struct bench_opts *o, const long *defaults, int ndefaults, const long **sizes);
long bench_max_size(const long *sizes, int n);

/* The cases (p2p.c, rma.c, coll.c, main.c, ucx.c, shm.c, io.c). */
void case_pingpong(const struct party *p, const struct bench_opts *o);
void case_rate(const struct party *p, const struct bench_opts *o);
void case_calls(const struct party *p, const struct bench_opts *o);
void case_rma(const struct party *p, const struct bench_opts *o);
void case_coll(const struct party *p, const struct bench_opts *o);
void case_create(const struct party *p, const struct bench_opts *o);
void case_memcpy(const struct party *p, const struct bench_opts *o);
void case_handoff(const struct party *p, const struct bench_opts *o);
void case_ucx(const struct party *p, const struct bench_opts *o);
void case_shm(const struct party *p, const struct bench_opts *o);
void case_io(const struct party *p, const struct bench_opts *o);

#endif
