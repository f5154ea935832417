/* epmpi-bench: point-to-point cases.  Ranks pair up across the halves of
 * the communicator (party_peer); every pair runs at the same time.
 *
 * pingpong  one message there and back per iteration, MPI_Send / MPI_Recv;
 *           reports the one-way latency (half a round trip) and the
 *           bandwidth it implies (size / latency).
 * rate      the first rank of a pair streams windows of MPI_Isend to the
 *           second, which has its MPI_Irecv posted before the window arrives
 *           (but for the first window of a timed run) and acknowledges each
 *           window with an empty message; reports the messages per second of
 *           all pairs together (msgrate).  Then the same with the receives
 *           posted while the window arrives (msgrate-posting): the receiver
 *           acknowledges a window before it posts the next one, so the
 *           sender's messages and the receiver's MPI_Irecv calls cross.
 * calls     MPI_Send to and MPI_Recv from MPI_PROC_NULL, 8 B: the time of a
 *           send call and a receive call that move nothing, per pair of
 *           calls; what a message costs besides passing the data. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

#define TAG_DATA 1
#define TAG_ACK 2

static const long pingpong_sizes[] = {
    8L,         16L,      32L,      64L,       128L,      256L,      512L,       1L << 10,
    2L << 10,   4L << 10, 8L << 10, 16L << 10, 32L << 10, 64L << 10, 128L << 10, 256L << 10,
    512L << 10, 1L << 20, 2L << 20, 4L << 20,  8L << 20,  16L << 20,
};
static const long rate_sizes[] = {8};

static int first_half(const struct party *p) { return p->rank < p->size / 2; }

/* ---- ping-pong ------------------------------------------------------------ */

struct pingpong {
    char *buf;
    int bytes;
};

static void pingpong_run(const struct party *p, void *ctx, long n)
{
    struct pingpong *pp = ctx;
    int peer = party_peer(p);
    for (long i = 0; i < n; i++) {
        if (first_half(p)) {
            MPI_Send(pp->buf, pp->bytes, MPI_BYTE, peer, TAG_DATA, p->comm);
            MPI_Recv(pp->buf, pp->bytes, MPI_BYTE, peer, TAG_DATA, p->comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(pp->buf, pp->bytes, MPI_BYTE, peer, TAG_DATA, p->comm, MPI_STATUS_IGNORE);
            MPI_Send(pp->buf, pp->bytes, MPI_BYTE, peer, TAG_DATA, p->comm);
        }
    }
}

/* One round trip of known bytes, checked at both ends, before the timing:
 * a benchmark of wrong data would be worthless. */
static void pingpong_check(const struct party *p, struct pingpong *pp)
{
    int peer = party_peer(p), got;
    MPI_Status st;
    for (int leg = 0; leg < 2; leg++) {
        int sending = first_half(p) == (leg == 0);
        if (sending) {
            for (long i = 0; i < pp->bytes; i++)
                pp->buf[i] = bench_pattern(i, leg);
            MPI_Send(pp->buf, pp->bytes, MPI_BYTE, peer, TAG_DATA, p->comm);
            continue;
        }
        for (long i = 0; i < pp->bytes; i++)
            pp->buf[i] = 0;
        MPI_Recv(pp->buf, pp->bytes, MPI_BYTE, peer, TAG_DATA, p->comm, &st);
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (got != pp->bytes || st.MPI_SOURCE != peer)
            party_fail(p, "ping-pong check: received %d bytes from rank %d, expected %d from rank %d", got,
                       st.MPI_SOURCE, pp->bytes, peer);
        for (long i = 0; i < pp->bytes; i++)
            if (pp->buf[i] != bench_pattern(i, leg))
                party_fail(p, "ping-pong check: byte %ld of %d is wrong", i, pp->bytes);
    }
}

void case_pingpong(const struct party *p, const struct bench_opts *o)
{
    const long *sizes;
    int nsizes = bench_sizes(o, pingpong_sizes, sizeof pingpong_sizes / sizeof *pingpong_sizes, &sizes);
    struct pingpong pp = {party_alloc(p, (size_t)bench_max_size(sizes, nsizes)), 0};
    party_need_pairs(p, "pingpong");
    for (int s = 0; s < nsizes; s++) {
        pp.bytes = (int)sizes[s];
        pingpong_check(p, &pp);
        double round_trip = bench_measure(p, o, 0.03, pingpong_run, &pp);
        double one_way = round_trip / 2;
        party_report(p, "pingpong", "latency", sizes[s], one_way * 1e6, "us");
        party_report(p, "pingpong", "bandwidth", sizes[s], (double)sizes[s] / one_way / 1e9, "GB/s");
    }
    free(pp.buf);
}

/* ---- message rate ----------------------------------------------------------- */

struct rate {
    char *sbuf;       /* every send of a window reads it */
    char *rbuf;       /* one slot of `bytes` per receive of a window */
    MPI_Request *req; /* one per message of a window */
    int bytes;
    int window;
    /* Where the time goes, over every run (seconds, and windows timed): a
     * sender sending a window and completing it; a receiver posting the
     * next window, during which the sender waits for the acknowledgement. */
    double t_send, t_post;
    long n_send, n_post;
    int posting; /* msgrate-posting: the next window posted after the acknowledgement */
};

/* MPI_STATUSES_IGNORE through a volatile, so that GCC does not take the
 * constant for a zero-length array (-Wstringop-overflow). */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

static void rate_post(const struct party *p, struct rate *r)
{
    for (int i = 0; i < r->window; i++)
        MPI_Irecv(r->rbuf + (size_t)i * (size_t)r->bytes, r->bytes, MPI_BYTE, party_peer(p), TAG_DATA, p->comm,
                  &r->req[i]);
}

/* n windows.  The receiver posts window k+1 before acknowledging window k,
 * so that every message but those of a run's first window finds its receive
 * waiting. */
static void rate_run(const struct party *p, void *ctx, long n)
{
    struct rate *r = ctx;
    int peer = party_peer(p);
    if (!first_half(p) && !r->posting)
        rate_post(p, r);
    for (long w = 0; w < n; w++) {
        if (first_half(p)) {
            double t0 = MPI_Wtime();
            for (int i = 0; i < r->window; i++)
                MPI_Isend(r->sbuf, r->bytes, MPI_BYTE, peer, TAG_DATA, p->comm, &r->req[i]);
            MPI_Waitall(r->window, r->req, statuses_ignore);
            r->t_send += MPI_Wtime() - t0;
            r->n_send++;
            MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK, p->comm, MPI_STATUS_IGNORE);
        } else if (r->posting) {
            rate_post(p, r);
            MPI_Waitall(r->window, r->req, statuses_ignore);
            MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK, p->comm);
        } else {
            MPI_Waitall(r->window, r->req, statuses_ignore);
            if (w + 1 < n) {
                double t0 = MPI_Wtime();
                rate_post(p, r);
                r->t_post += MPI_Wtime() - t0;
                r->n_post++;
            }
            MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK, p->comm);
        }
    }
}

void case_rate(const struct party *p, const struct bench_opts *o)
{
    const long *sizes;
    int nsizes = bench_sizes(o, rate_sizes, sizeof rate_sizes / sizeof *rate_sizes, &sizes);
    long big = bench_max_size(sizes, nsizes);
    struct rate r = {.sbuf = party_alloc(p, (size_t)big),
                     .rbuf = party_alloc(p, (size_t)big * (size_t)o->window),
                     .req = party_alloc(p, sizeof(MPI_Request) * (size_t)o->window),
                     .window = o->window};
    party_need_pairs(p, "rate");
    for (int s = 0; s < nsizes; s++) {
        r.bytes = (int)sizes[s];
        r.t_send = r.t_post = 0;
        r.n_send = r.n_post = 0;
        r.posting = 0;
        double pairs_window = (double)(p->team->nparties / 2) * r.window; /* messages of a window, all pairs */
        double msgs = pairs_window / bench_measure(p, o, 0.1, rate_run, &r);
        double send_ns = party_max(p, r.n_send ? r.t_send / (double)r.n_send / r.window * 1e9 : 0);
        double post_ns = party_max(p, r.n_post ? r.t_post / (double)r.n_post / r.window * 1e9 : 0);
        if (p->id == 0)
            printf("# rate %ld B, per message: %.1f ns for the sender to send and complete it, %.1f ns for the "
                   "receiver to post its receive while the sender waits (slowest pair)\n",
                   sizes[s], send_ns, post_ns);
        party_report(p, "rate", "msgrate", sizes[s], msgs / 1e6, "Mmsg/s");
        r.posting = 1;
        msgs = pairs_window / bench_measure(p, o, 0.1, rate_run, &r);
        party_report(p, "rate", "msgrate-posting", sizes[s], msgs / 1e6, "Mmsg/s");
    }
    free(r.sbuf);
    free(r.rbuf);
    free(r.req);
}

/* ---- the calls alone ----------------------------------------------------------- */

static void calls_run(const struct party *p, void *ctx, long n)
{
    char *b = ctx;
    for (long i = 0; i < n; i++) {
        MPI_Send(b, 8, MPI_BYTE, MPI_PROC_NULL, TAG_DATA, p->comm);
        MPI_Recv(b, 8, MPI_BYTE, MPI_PROC_NULL, TAG_DATA, p->comm, MPI_STATUS_IGNORE);
    }
}

void case_calls(const struct party *p, const struct bench_opts *o)
{
    char b[8] = {0};
    double per_pair = bench_measure(p, o, 0.05, calls_run, b);
    party_report(p, "calls", "null", 0, per_pair * 1e6, "us");
}
