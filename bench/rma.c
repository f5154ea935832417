/* epmpi-bench: one-sided communication.  Every rank allocates a window
 * (MPI_Win_allocate on the bench communicator) and accesses the window of
 * its pair partner (party_peer); all pairs, both directions, at once.
 *
 * rma_put, rma_get  passive target: MPI_Win_lock_all once, then per
 *                   iteration one MPI_Put (MPI_Get) and MPI_Win_flush to
 *                   the partner; reports the time per operation (latency)
 *                   and the bandwidth it implies (size / latency).
 * rma_fence         active target: per iteration one MPI_Put and an
 *                   MPI_Win_fence, which every rank calls.
 * rma_lock          passive target, an epoch per operation: per iteration
 *                   MPI_Win_lock (exclusive) on the partner, one MPI_Put,
 *                   MPI_Win_unlock; every target has one locker, its
 *                   partner (MPICH's rma/rma_contig runs such loops).
 * The data of a Put and a Get is checked at every size before the timing. */
#include "bench.h"

#include <stdlib.h>

static const long rma_sizes[] = {8L, 64L, 512L, 4L << 10, 32L << 10, 256L << 10, 1L << 20, 4L << 20, 16L << 20};

struct rma {
    MPI_Win win;
    char *base; /* this rank's window */
    char *buf;  /* the origin buffer */
    int bytes;
    int get; /* flush_run: MPI_Get, not MPI_Put */
};

/* Passive target: r->get picks the operation. */
static void flush_run(const struct party *p, void *ctx, long n)
{
    struct rma *r = ctx;
    int peer = party_peer(p);
    for (long i = 0; i < n; i++) {
        if (r->get)
            MPI_Get(r->buf, r->bytes, MPI_BYTE, peer, 0, r->bytes, MPI_BYTE, r->win);
        else
            MPI_Put(r->buf, r->bytes, MPI_BYTE, peer, 0, r->bytes, MPI_BYTE, r->win);
        MPI_Win_flush(peer, r->win);
    }
}

static void lock_run(const struct party *p, void *ctx, long n)
{
    struct rma *r = ctx;
    int peer = party_peer(p);
    for (long i = 0; i < n; i++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, r->win);
        MPI_Put(r->buf, r->bytes, MPI_BYTE, peer, 0, r->bytes, MPI_BYTE, r->win);
        MPI_Win_unlock(peer, r->win);
    }
}

static void fence_run(const struct party *p, void *ctx, long n)
{
    struct rma *r = ctx;
    int peer = party_peer(p);
    for (long i = 0; i < n; i++) {
        MPI_Put(r->buf, r->bytes, MPI_BYTE, peer, 0, r->bytes, MPI_BYTE, r->win);
        MPI_Win_fence(0, r->win);
    }
}

/* Inside the lock_all epoch: each rank puts its pattern into its partner's
 * window and checks what its partner put into its own, then gets its
 * pattern back from the partner's window. */
static void rma_check(const struct party *p, struct rma *r)
{
    int peer = party_peer(p);
    for (long i = 0; i < r->bytes; i++)
        r->buf[i] = bench_pattern(i, p->rank);
    MPI_Put(r->buf, r->bytes, MPI_BYTE, peer, 0, r->bytes, MPI_BYTE, r->win);
    MPI_Win_flush(peer, r->win);
    party_barrier(p);
    MPI_Win_sync(r->win); /* the partner's Put, seen by loads here */
    for (long i = 0; i < r->bytes; i++)
        if (r->base[i] != bench_pattern(i, peer))
            party_fail(p, "rma check: byte %ld of %d that rank %d put is wrong", i, r->bytes, peer);
    for (long i = 0; i < r->bytes; i++)
        r->buf[i] = 0;
    MPI_Get(r->buf, r->bytes, MPI_BYTE, peer, 0, r->bytes, MPI_BYTE, r->win);
    MPI_Win_flush(peer, r->win);
    for (long i = 0; i < r->bytes; i++)
        if (r->buf[i] != bench_pattern(i, p->rank))
            party_fail(p, "rma check: byte %ld of %d got from rank %d is wrong", i, r->bytes, peer);
    party_barrier(p); /* no timed Put before every partner has checked */
}

static void report(const struct party *p, const char *name, long size, double per_op)
{
    party_report(p, name, "latency", size, per_op * 1e6, "us");
    party_report(p, name, "bandwidth", size, (double)size / per_op / 1e9, "GB/s");
}

void case_rma(const struct party *p, const struct bench_opts *o)
{
    const long *sizes;
    int nsizes = bench_sizes(o, rma_sizes, sizeof rma_sizes / sizeof *rma_sizes, &sizes);
    long big = bench_max_size(sizes, nsizes);
    struct rma r = {MPI_WIN_NULL, NULL, party_alloc(p, (size_t)big), 0, 0};
    party_need_pairs(p, "rma");
    /* At least a page: MPICH 4.0.2 between two processes loses Puts into
     * the second rank of an 8-byte MPI_Win_allocate window (16 is fine). */
    MPI_Aint wsize = big < 4096 ? 4096 : (MPI_Aint)big;
    if (MPI_Win_allocate(wsize, 1, MPI_INFO_NULL, p->comm, &r.base, &r.win) != MPI_SUCCESS)
        party_fail(p, "MPI_Win_allocate of %ld bytes failed", (long)wsize);
    MPI_Win_lock_all(0, r.win);
    for (int s = 0; s < nsizes; s++) {
        r.bytes = (int)sizes[s];
        rma_check(p, &r);
        r.get = 0;
        report(p, "rma_put", sizes[s], bench_measure(p, o, 0.03, flush_run, &r));
        r.get = 1;
        report(p, "rma_get", sizes[s], bench_measure(p, o, 0.03, flush_run, &r));
    }
    MPI_Win_unlock_all(r.win);
    for (int s = 0; s < nsizes; s++) {
        r.bytes = (int)sizes[s];
        report(p, "rma_lock", sizes[s], bench_measure(p, o, 0.03, lock_run, &r));
    }
    MPI_Win_fence(MPI_MODE_NOPRECEDE, r.win);
    for (int s = 0; s < nsizes; s++) {
        r.bytes = (int)sizes[s];
        report(p, "rma_fence", sizes[s], bench_measure(p, o, 0.03, fence_run, &r));
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, r.win);
    MPI_Win_free(&r.win);
    free(r.buf);
}
