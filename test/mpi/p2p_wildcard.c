/* Wildcard matching: every combination of MPI_ANY_SOURCE / MPI_ANY_TAG /
 * specific source and tag, for messages that are already there when the
 * receive starts (unexpected) and for receives posted before the message is
 * sent, with small (eager) and large (rendezvous) messages, from ranks in the
 * same process and in other processes.  Status MPI_SOURCE, MPI_TAG and
 * MPI_Get_count / MPI_Get_elements are checked: each sender uses its own tag
 * and message length, so the status tells exactly which message matched.
 * Also: posted receives are matched in posting order when a specific and an
 * MPI_ANY_SOURCE / MPI_ANY_TAG receive both match, and a blocking receive
 * comes after a posted MPI_ANY_SOURCE receive and after probed messages.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#define TAG0 1000
#define LARGE 6000 /* ints: 24 KB, above the eager limit */

/* The message from s to d in round `round`: count ints with known values. */
static int msg_count(int large, int s) { return (large ? LARGE : 1) + s; }
static int msg_val(int s, int d, int round, int i) { return s * 1000003 + d * 7919 + round * 131 + i; }

typedef struct {
    MPI_Comm comm;
    int me, n, round, large;
    const char *name;
    int *sbuf; /* one buffer per destination: n * (LARGE + n) ints */
    int *rbuf; /* n * (LARGE + n) ints */
    MPI_Request *sreq;
} ctx_t;

static int stride(const ctx_t *c) { return LARGE + c->n; }

static void send_all(ctx_t *c)
{
    for (int k = 0; k < c->n; k++) {
        int d = (c->me + k) % c->n, cnt = msg_count(c->large, c->me);
        int *b = c->sbuf + (size_t)d * stride(c);
        for (int i = 0; i < cnt; i++)
            b[i] = msg_val(c->me, d, c->round, i);
        EPT_OK(MPI_Isend(b, cnt, MPI_INT, d, TAG0 + c->me, c->comm, &c->sreq[d]));
    }
}

static void finish_sends(ctx_t *c)
{
    EPT_OK(MPI_Waitall(c->n, c->sreq, statuses_ignore()));
    EPT_OK(MPI_Barrier(c->comm));
    c->round++;
}

/* Checks a received message against what source src sent us. */
static void check(const ctx_t *c, const char *what, const MPI_Status *st, const int *b, int want_src)
{
    int src = st->MPI_SOURCE;
    EPT_CHECK(src >= 0 && src < c->n, "%s (%s): rank %d: status source %d", c->name, what, c->me, src);
    if (want_src >= 0)
        EPT_CHECK(src == want_src, "%s (%s): rank %d: status source %d, expected %d", c->name, what, c->me, src,
                  want_src);
    EPT_CHECK(st->MPI_TAG == TAG0 + src, "%s (%s): rank %d: message from %d has status tag %d, expected %d", c->name,
              what, c->me, src, st->MPI_TAG, TAG0 + src);
    int cnt = -1, el = -1, bytes = -1;
    MPI_Get_count(st, MPI_INT, &cnt);
    MPI_Get_elements(st, MPI_INT, &el);
    MPI_Get_count(st, MPI_BYTE, &bytes);
    int want = msg_count(c->large, src);
    EPT_CHECK(cnt == want && el == want && bytes == 4 * want,
              "%s (%s): rank %d: message from %d: count %d, elements %d, bytes %d; expected %d ints", c->name, what,
              c->me, src, cnt, el, bytes, want);
    for (int i = 0; i < want; i++)
        EPT_CHECK(b[i] == msg_val(src, c->me, c->round, i), "%s (%s): rank %d: message from %d: int %d is %d", c->name,
                  what, c->me, src, i, b[i]);
}

/* Source / tag arguments of combination mode for the message from s. */
static int src_arg(int mode, int s) { return (mode & 1) ? MPI_ANY_SOURCE : s; }
static int tag_arg(int mode, int s) { return (mode & 2) ? MPI_ANY_TAG : TAG0 + s; }
static const char *mode_name[4] = {"specific source and tag", "MPI_ANY_SOURCE, specific tag",
                                   "specific source, MPI_ANY_TAG", "MPI_ANY_SOURCE and MPI_ANY_TAG"};

/* Messages sent first, then received with blocking MPI_Recv: one receive
 * per source, sources in descending order from our left. */
static void unexpected(ctx_t *c, int mode)
{
    int n = c->n, cap = msg_count(c->large, n - 1);
    int *seen = calloc((size_t)n, sizeof(int));
    EPT_CHECK(seen, "out of memory");
    c->name = "messages first, then MPI_Recv";
    PHASE("wildcard: messages first, then MPI_Recv");
    send_all(c);
    EPT_OK(MPI_Barrier(c->comm)); /* every message has been sent */
    for (int k = 1; k <= n; k++) {
        int s = (c->me + n - k) % n;
        MPI_Status st;
        int *b = c->rbuf + (size_t)s * stride(c);
        EPT_OK(MPI_Recv(b, cap, MPI_INT, src_arg(mode, s), tag_arg(mode, s), c->comm, &st));
        /* With MPI_ANY_SOURCE and a specific tag, the tag names the source. */
        check(c, mode_name[mode], &st, b, mode == 3 ? -1 : s);
        EPT_CHECK(!seen[st.MPI_SOURCE]++, "%s (%s): rank %d: two messages from %d", c->name, mode_name[mode], c->me,
                  st.MPI_SOURCE);
    }
    free(seen);
    finish_sends(c);
}

/* Receives posted (MPI_Irecv) before anyone sends, completed with Waitall. */
static void preposted(ctx_t *c, int mode)
{
    int n = c->n, cap = msg_count(c->large, n - 1);
    MPI_Request *rr = malloc(sizeof *rr * (size_t)n);
    MPI_Status *st = malloc(sizeof *st * (size_t)n);
    int *seen = calloc((size_t)n, sizeof(int));
    EPT_CHECK(rr && st && seen, "out of memory");
    c->name = "MPI_Irecv posted first, then messages";
    PHASE("wildcard: MPI_Irecv posted first, then messages");
    for (int s = 0; s < n; s++)
        EPT_OK(MPI_Irecv(c->rbuf + (size_t)s * stride(c), cap, MPI_INT, src_arg(mode, s), tag_arg(mode, s), c->comm,
                         &rr[s]));
    EPT_OK(MPI_Barrier(c->comm)); /* every receive is posted */
    send_all(c);
    EPT_OK(MPI_Waitall(n, rr, st));
    for (int s = 0; s < n; s++) {
        check(c, mode_name[mode], &st[s], c->rbuf + (size_t)s * stride(c), mode == 3 ? -1 : s);
        EPT_CHECK(!seen[st[s].MPI_SOURCE]++, "%s (%s): rank %d: two messages from %d", c->name, mode_name[mode], c->me,
                  st[s].MPI_SOURCE);
    }
    free(rr);
    free(st);
    free(seen);
    finish_sends(c);
}

/* Posted receives that all match the same messages take them in posting
 * order: only our left neighbour sends to us, three messages with tag 77. */
static void posting_order(ctx_t *c)
{
    int n = c->n, left = (c->me + n - 1) % n, right = (c->me + 1) % n;
    int in[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}}, out[3][2];
    MPI_Request rr[3], sr[3];
    MPI_Status st[3];
    PHASE("wildcard: posting order of competing receives");
    /* 0: MPI_ANY_SOURCE, 1: specific source, 2: both wildcards. */
    EPT_OK(MPI_Irecv(in[0], 2, MPI_INT, MPI_ANY_SOURCE, 77, c->comm, &rr[0]));
    EPT_OK(MPI_Irecv(in[1], 2, MPI_INT, left, 77, c->comm, &rr[1]));
    EPT_OK(MPI_Irecv(in[2], 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c->comm, &rr[2]));
    EPT_OK(MPI_Barrier(c->comm));
    for (int i = 0; i < 3; i++) {
        out[i][0] = c->me;
        out[i][1] = i;
        EPT_OK(MPI_Isend(out[i], 2, MPI_INT, right, 77, c->comm, &sr[i]));
    }
    EPT_OK(MPI_Waitall(3, rr, st));
    EPT_OK(MPI_Waitall(3, sr, statuses_ignore()));
    for (int i = 0; i < 3; i++) {
        EPT_CHECK(st[i].MPI_SOURCE == left && st[i].MPI_TAG == 77 && in[i][0] == left && in[i][1] == i,
                  "posting order: rank %d: receive %d got message %d of rank %d (status source %d tag %d)", c->me, i,
                  in[i][1], in[i][0], st[i].MPI_SOURCE, st[i].MPI_TAG);
    }
    EPT_OK(MPI_Barrier(c->comm));
}

/* A blocking receive from one rank keeps MPI's order against what the
 * receiver has already: an earlier MPI_ANY_SOURCE receive still posted
 * takes the first message, and messages that a probe has seen are taken
 * first, in order.  (Between processes a blocking receive may be handed
 * to the transport's own matching, which must not jump either.) */
static void blocking_order(ctx_t *c)
{
    int n = c->n, left = (c->me + n - 1) % n, right = (c->me + 1) % n;
    int in[2][2] = {{-1, -1}, {-1, -1}}, out[2][2], flag = 0;
    MPI_Request rr, sr[2];
    MPI_Status st[2];
    PHASE("wildcard: blocking receives behind a posted MPI_ANY_SOURCE receive and probed messages");
    EPT_OK(MPI_Irecv(in[0], 2, MPI_INT, MPI_ANY_SOURCE, 78, c->comm, &rr));
    EPT_OK(MPI_Barrier(c->comm));
    for (int i = 0; i < 2; i++) {
        out[i][0] = c->me;
        out[i][1] = i;
        EPT_OK(MPI_Isend(out[i], 2, MPI_INT, right, 78, c->comm, &sr[i]));
    }
    EPT_OK(MPI_Recv(in[1], 2, MPI_INT, left, 78, c->comm, &st[1]));
    EPT_OK(MPI_Wait(&rr, &st[0]));
    EPT_OK(MPI_Waitall(2, sr, statuses_ignore()));
    for (int i = 0; i < 2; i++)
        EPT_CHECK(st[i].MPI_SOURCE == left && in[i][0] == left && in[i][1] == i,
                  "blocking order: rank %d: receive %d (%s) got message %d of rank %d", c->me, i,
                  i ? "blocking, specific source" : "pre-posted, MPI_ANY_SOURCE", in[i][1], in[i][0]);
    EPT_OK(MPI_Barrier(c->comm));
    for (int i = 0; i < 2; i++)
        EPT_OK(MPI_Isend(out[i], 2, MPI_INT, right, 79, c->comm, &sr[i]));
    while (!flag)
        EPT_OK(MPI_Iprobe(left, 79, c->comm, &flag, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2; i++) {
        EPT_OK(MPI_Recv(in[i], 2, MPI_INT, left, 79, c->comm, &st[i]));
        EPT_CHECK(st[i].MPI_SOURCE == left && in[i][0] == left && in[i][1] == i,
                  "blocking order after a probe: rank %d: receive %d got message %d of rank %d", c->me, i, in[i][1],
                  in[i][0]);
    }
    EPT_OK(MPI_Waitall(2, sr, statuses_ignore()));
    EPT_OK(MPI_Barrier(c->comm));
}

static void wildcard(MPI_Comm comm, void *arg)
{
    (void)arg;
    ctx_t c = {.comm = comm};
    MPI_Comm_rank(comm, &c.me);
    MPI_Comm_size(comm, &c.n);
    c.sbuf = malloc(sizeof(int) * (size_t)c.n * (size_t)stride(&c));
    c.rbuf = malloc(sizeof(int) * (size_t)c.n * (size_t)stride(&c));
    c.sreq = malloc(sizeof *c.sreq * (size_t)c.n);
    EPT_CHECK(c.sbuf && c.rbuf && c.sreq, "out of memory");
    for (c.large = 0; c.large < 2; c.large++) {
        for (int mode = 0; mode < 4; mode++) {
            unexpected(&c, mode);
            preposted(&c, mode);
        }
    }
    posting_order(&c);
    blocking_order(&c);
    free(c.sbuf);
    free(c.rbuf);
    free(c.sreq);
}

int main(int argc, char **argv) { return ept_main(argc, argv, 30, wildcard, NULL); }
