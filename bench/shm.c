/* epmpi-bench: the shared-memory floor.  The ping-pong and rate structures
 * of p2p.c between two processes of one node through rings of slots in
 * memory both map (MPI_Win_allocate_shared), with no MPI and no matching
 * on a message's way: what a transport of epmpi's own between the
 * processes of a node (the lanes of lane.h, placed in shared memory) could
 * at best reach, next to the UCX floor (ucx.c) that the transport over
 * UCX's tag API is bounded by.
 *
 * Each process's inbox is a ring of RING_SLOTS slots; a slot is a line
 * with its sequence number and length, then the payload, the whole rounded
 * up to 64 bytes.  A sender waits for a free slot, copies the payload in
 * and publishes the sequence number; the receiver waits for it, copies the
 * payload out and frees the slot.
 *
 * shm latency / bandwidth   ping-pong, one-way time (8 B, 1 KiB, 4 KiB);
 * shm msgrate               windows of non-blocking 8 B and 4 KiB sends
 *                           (the rate case's sizes), each copied out into
 *                           its own receive slot, one acknowledgement a
 *                           window through the other ring.
 * The pair partners must be different processes of one node. */
#include "bench.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define RING_SLOTS 64
#define SLOT_HEADER 16 /* seq, len */
#define SHM_MAX 4096   /* the largest payload */
#define STRIDE_MAX (((SLOT_HEADER + SHM_MAX) + 63) / 64 * 64)

static const long shm_sizes[] = {8, 1024, 4096};
static const long shm_rate_sizes[] = {8, 4096};

typedef struct slot {
    _Atomic long seq; /* message number (from 1) while it holds one, else 0 */
    long len;
    char data[];
} slot_t;

/* One direction's ring as one side sees it: the slots and the number of
 * the next message this side sends or takes. */
struct ring {
    char *base;
    long stride;
    long next;
};

struct shm {
    MPI_Comm pair;
    MPI_Win win;
    struct ring in, out; /* mine (the partner sends into it), the partner's */
    char *buf;           /* ping-pong */
    char *rbuf;          /* rate: a receive slot per message of a window */
    long bytes;
    int window;
};

static slot_t *slot_of(const struct ring *r, long i)
{
    return (slot_t *)(r->base + (size_t)((i - 1) % RING_SLOTS) * (size_t)r->stride);
}

static void shm_send(struct ring *r, const void *buf, long n)
{
    long i = ++r->next;
    slot_t *s = slot_of(r, i);
    bench_await(&s->seq, 0);
    memcpy(s->data, buf, (size_t)n);
    s->len = n;
    atomic_store_explicit(&s->seq, i, memory_order_release);
}

static long shm_recv(struct ring *r, void *buf)
{
    long i = ++r->next;
    slot_t *s = slot_of(r, i);
    bench_await(&s->seq, i);
    long n = s->len;
    memcpy(buf, s->data, (size_t)n);
    atomic_store_explicit(&s->seq, 0, memory_order_release);
    return n;
}

static int first_half(const struct party *p) { return p->rank < p->size / 2; }

/* Both rings, with slots of stride bytes, empty and numbered afresh. */
static void shm_reset(const struct party *p, struct shm *u, long stride)
{
    party_barrier(p);
    memset(u->in.base, 0, (size_t)RING_SLOTS * STRIDE_MAX);
    u->in.stride = u->out.stride = stride;
    u->in.next = u->out.next = 0;
    party_barrier(p);
}

static void shm_setup(const struct party *p, struct shm *u)
{
    int peer = party_peer(p), me = p->rank, node_size = 0;
    MPI_Comm node;
    MPI_Comm_split(p->comm, me < peer ? me : peer, me < peer ? 0 : 1, &u->pair);
    MPI_Comm_split_type(u->pair, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    if (node_size != 2)
        party_fail(p, "shm: the pair partners must be processes of one node");
    char *mine;
    MPI_Aint size;
    int unit;
    if (MPI_Win_allocate_shared((MPI_Aint)RING_SLOTS * STRIDE_MAX, 64, MPI_INFO_NULL, u->pair, &mine, &u->win) !=
        MPI_SUCCESS)
        party_fail(p, "shm: cannot allocate the shared rings");
    int other = 1 - (me < peer ? 0 : 1);
    MPI_Win_shared_query(u->win, other, &size, &unit, &u->out.base);
    u->in.base = mine;
}

static void shm_pingpong_run(const struct party *p, void *ctx, long n)
{
    struct shm *u = ctx;
    for (long i = 0; i < n; i++) {
        if (first_half(p)) {
            shm_send(&u->out, u->buf, u->bytes);
            shm_recv(&u->in, u->buf);
        } else {
            shm_recv(&u->in, u->buf);
            shm_send(&u->out, u->buf, u->bytes);
        }
    }
}

/* One round trip of known bytes, checked, before the timing. */
static void shm_pingpong_check(const struct party *p, struct shm *u)
{
    for (int leg = 0; leg < 2; leg++) {
        if (first_half(p) == (leg == 0)) {
            for (long i = 0; i < u->bytes; i++)
                u->buf[i] = bench_pattern(i, leg);
            shm_send(&u->out, u->buf, u->bytes);
            continue;
        }
        memset(u->buf, 0, (size_t)u->bytes);
        long got = shm_recv(&u->in, u->buf);
        for (long i = 0; i < u->bytes; i++)
            if (got != u->bytes || u->buf[i] != bench_pattern(i, leg))
                party_fail(p, "shm ping-pong check: %ld bytes came, byte %ld of %ld is wrong", got, i, u->bytes);
    }
}

/* The rate case's structure: the receiver takes a window into its receive
 * slots, then acknowledges it. */
static void shm_rate_run(const struct party *p, void *ctx, long n)
{
    struct shm *u = ctx;
    char ack = 0;
    for (long w = 0; w < n; w++) {
        if (first_half(p)) {
            for (int i = 0; i < u->window; i++)
                shm_send(&u->out, u->buf, u->bytes);
            shm_recv(&u->in, &ack);
        } else {
            for (int i = 0; i < u->window; i++)
                shm_recv(&u->in, u->rbuf + (size_t)i * (size_t)u->bytes);
            shm_send(&u->out, &ack, 1);
        }
    }
}

void case_shm(const struct party *p, const struct bench_opts *o)
{
    const long *sizes;
    int nsizes = bench_sizes(o, shm_sizes, sizeof shm_sizes / sizeof *shm_sizes, &sizes);
    struct shm u = {0};
    party_need_pairs(p, "shm");
    if (p->team->nthreads != 1)
        party_fail(p, "shm: run one thread per process (the pair partners must be in different processes)");
    if (bench_max_size(sizes, nsizes) > SHM_MAX)
        party_fail(p, "shm: sizes up to %d bytes (a message is one slot)", SHM_MAX);
    shm_setup(p, &u);
    u.buf = party_alloc(p, SHM_MAX);
    for (int s = 0; s < nsizes; s++) {
        u.bytes = sizes[s];
        shm_reset(p, &u, (SLOT_HEADER + u.bytes + 63) / 64 * 64);
        shm_pingpong_check(p, &u);
        double one_way = bench_measure(p, o, 0.03, shm_pingpong_run, &u) / 2;
        party_report(p, "shm", "latency", sizes[s], one_way * 1e6, "us");
        party_report(p, "shm", "bandwidth", sizes[s], (double)sizes[s] / one_way / 1e9, "GB/s");
    }
    u.window = o->window;
    u.rbuf = party_alloc(p, (size_t)SHM_MAX * (size_t)u.window);
    for (size_t s = 0; s < sizeof shm_rate_sizes / sizeof *shm_rate_sizes; s++) {
        u.bytes = shm_rate_sizes[s];
        shm_reset(p, &u, (SLOT_HEADER + u.bytes + 63) / 64 * 64);
        double per_window = bench_measure(p, o, 0.1, shm_rate_run, &u);
        party_report(p, "shm", "msgrate", u.bytes, (double)(p->team->nparties / 2) * u.window / per_window / 1e6,
                     "Mmsg/s");
    }
    party_barrier(p);
    free(u.rbuf);
    free(u.buf);
    MPI_Win_free(&u.win);
    MPI_Comm_free(&u.pair);
}
