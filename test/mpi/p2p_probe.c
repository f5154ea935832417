/* Probes: MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe, MPI_Mrecv and
 * MPI_Imrecv, with specific and wildcard source and tag, on small (eager)
 * and large (rendezvous) messages from ranks in the same process and in
 * other processes.  The probe status names the right source and tag and
 * gives the right MPI_Get_count / MPI_Get_elements; a probed message is then
 * received by the receive that follows; a matched probe removes its message
 * (the next probe sees the next one); a plain probe does not; MPI_Iprobe
 * finds nothing for a tag nobody sent; a probed MPI_Issend does not complete
 * before it is received.  MPI_PROC_NULL: MPI_Probe / MPI_Iprobe give source
 * MPI_PROC_NULL, tag MPI_ANY_TAG, count 0; MPI_Mprobe / MPI_Improbe give
 * MPI_MESSAGE_NO_PROC, which MPI_Mrecv / MPI_Imrecv receive at once.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#define LARGE 6000 /* ints: 24 KB, above the eager limit */

typedef struct {
    MPI_Comm comm;
    int me, n, round, large;
    const char *name;
    int *sbuf, *rbuf;
    MPI_Request *sreq;
} ctx_t;

/* Room for one message (the longest is LARGE + 2n + 1 ints) and for the two
 * messages of one sender. */
static int slot(const ctx_t *c) { return LARGE + 2 * c->n + 2; }
static int stride(const ctx_t *c) { return 2 * slot(c); }
/* Message `seq` (0 or 1) from s: its tag and length. */
static int tag_of(const ctx_t *c, int s) { return c->round * 1000 + s; }
static int count_of(const ctx_t *c, int s, int seq) { return (c->large ? LARGE : 3) + s + seq * (c->n + 1); }
static int val(int s, int d, int round, int seq, int i) { return ((s * 131 + d) * 997 + round) * 7 + seq + i * 3; }

/* Every rank sends `per` messages (seq 0, 1...) to every rank, all with the
 * same tag; synchronous sends when ssend. */
static void send_all(ctx_t *c, int per, int ssend)
{
    for (int k = 0; k < c->n; k++) {
        int d = (c->me + k) % c->n;
        for (int q = 0; q < per; q++) {
            int cnt = count_of(c, c->me, q);
            int *b = c->sbuf + (size_t)d * stride(c) + (size_t)q * slot(c);
            for (int i = 0; i < cnt; i++)
                b[i] = val(c->me, d, c->round, q, i);
            if (ssend)
                EPT_OK(MPI_Issend(b, cnt, MPI_INT, d, tag_of(c, c->me), c->comm, &c->sreq[d * 2 + q]));
            else
                EPT_OK(MPI_Isend(b, cnt, MPI_INT, d, tag_of(c, c->me), c->comm, &c->sreq[d * 2 + q]));
        }
        for (int q = per; q < 2; q++)
            c->sreq[d * 2 + q] = MPI_REQUEST_NULL;
    }
}

static void end_round(ctx_t *c)
{
    EPT_OK(MPI_Waitall(2 * c->n, c->sreq, statuses_ignore()));
    EPT_OK(MPI_Barrier(c->comm));
    c->round++;
}

/* A probe status for message seq of s (want_src < 0: any source). */
static int check_probe(const ctx_t *c, const char *what, const MPI_Status *st, int want_src, int seq)
{
    int s = st->MPI_SOURCE, cnt = -1, el = -1;
    EPT_CHECK(s >= 0 && s < c->n && (want_src < 0 || s == want_src), "%s: rank %d: probe status source %d (want %d)",
              what, c->me, s, want_src);
    EPT_CHECK(st->MPI_TAG == tag_of(c, s), "%s: rank %d: probe of a message from %d: tag %d, expected %d", what, c->me,
              s, st->MPI_TAG, tag_of(c, s));
    MPI_Get_count(st, MPI_INT, &cnt);
    MPI_Get_elements(st, MPI_INT, &el);
    EPT_CHECK(cnt == count_of(c, s, seq) && el == cnt,
              "%s: rank %d: probe of message %d from %d: count %d elements %d, "
              "expected %d",
              what, c->me, seq, s, cnt, el, count_of(c, s, seq));
    return s;
}

static void check_recv(const ctx_t *c, const char *what, const MPI_Status *st, const int *b, int s, int seq)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_INT, &cnt);
    EPT_CHECK(st->MPI_SOURCE == s && st->MPI_TAG == tag_of(c, s) && cnt == count_of(c, s, seq),
              "%s: rank %d: receive status source %d tag %d count %d, expected %d %d %d", what, c->me, st->MPI_SOURCE,
              st->MPI_TAG, cnt, s, tag_of(c, s), count_of(c, s, seq));
    for (int i = 0; i < cnt; i++)
        EPT_CHECK(b[i] == val(s, c->me, c->round, seq, i), "%s: rank %d: message %d from %d: int %d is %d", what, c->me,
                  seq, s, i, b[i]);
}

/* MPI_Probe / MPI_Iprobe, then MPI_Recv of what was probed.  wild: the probe
 * uses MPI_ANY_SOURCE and MPI_ANY_TAG, the receive the probed source / tag. */
static void probe_recv(ctx_t *c, int use_iprobe, int wild)
{
    const char *what = use_iprobe ? (wild ? "MPI_Iprobe(ANY, ANY)" : "MPI_Iprobe(source, tag)")
                                  : (wild ? "MPI_Probe(ANY, ANY)" : "MPI_Probe(source, tag)");
    PHASE(what);
    send_all(c, 1, 0);
    for (int k = 1; k <= c->n; k++) {
        int s = (c->me + c->n - k) % c->n, flag = 0;
        MPI_Status st, st2;
        int src = wild ? MPI_ANY_SOURCE : s, tag = wild ? MPI_ANY_TAG : tag_of(c, s);
        if (use_iprobe) {
            while (!flag)
                EPT_OK(MPI_Iprobe(src, tag, c->comm, &flag, &st));
        } else {
            EPT_OK(MPI_Probe(src, tag, c->comm, &st));
        }
        s = check_probe(c, what, &st, wild ? -1 : s, 0);
        /* A plain probe leaves the message: probing again sees it again. */
        EPT_OK(MPI_Iprobe(s, st.MPI_TAG, c->comm, &flag, &st2));
        EPT_CHECK(flag, "%s: rank %d: the probed message from %d is gone", what, c->me, s);
        check_probe(c, what, &st2, s, 0);
        int *b = c->rbuf + (size_t)s * stride(c);
        EPT_OK(MPI_Recv(b, count_of(c, s, 0), MPI_INT, st.MPI_SOURCE, st.MPI_TAG, c->comm, &st2));
        check_recv(c, what, &st2, b, s, 0);
    }
    /* Nothing was sent with this tag. */
    int flag = 1;
    EPT_OK(MPI_Iprobe(MPI_ANY_SOURCE, 999999, c->comm, &flag, MPI_STATUS_IGNORE));
    EPT_CHECK(!flag, "%s: rank %d: MPI_Iprobe found a message with a tag nobody sent", what, c->me);
    end_round(c);
}

/* MPI_Mprobe / MPI_Improbe, MPI_Mrecv / MPI_Imrecv.  Each sender sends two
 * messages with the same tag: the matched probe takes the first, so a probe
 * after it sees the second. */
static void mprobe_recv(ctx_t *c, int nonblocking, int wild)
{
    const char *what = nonblocking
                           ? (wild ? "MPI_Improbe(ANY, ANY) + MPI_Imrecv" : "MPI_Improbe(source, ANY) + MPI_Imrecv")
                           : (wild ? "MPI_Mprobe(ANY, ANY) + MPI_Mrecv" : "MPI_Mprobe(source, tag) + MPI_Mrecv");
    PHASE(what);
    send_all(c, 2, 0);
    int *got = calloc((size_t)c->n, sizeof(int));
    EPT_CHECK(got, "out of memory");
    for (int k = 0; k < 2 * c->n; k++) {
        int s = (c->me + c->n - 1 - k / 2) % c->n, flag = 0;
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st, st2;
        int src = wild ? MPI_ANY_SOURCE : s;
        int tag = wild || nonblocking ? MPI_ANY_TAG : tag_of(c, s);
        if (nonblocking) {
            while (!flag)
                EPT_OK(MPI_Improbe(src, tag, c->comm, &flag, &msg, &st));
        } else {
            EPT_OK(MPI_Mprobe(src, tag, c->comm, &msg, &st));
        }
        EPT_CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "%s: rank %d: message handle " EPT_HFMT, what,
                  c->me, EPT_HARG(msg));
        s = st.MPI_SOURCE;
        EPT_CHECK(s >= 0 && s < c->n, "%s: rank %d: status source %d", what, c->me, s);
        int seq = got[s]++;
        EPT_CHECK(seq < 2, "%s: rank %d: a third message from %d", what, c->me, s);
        check_probe(c, what, &st, wild ? -1 : s, seq);
        if (seq == 0) {
            /* The first message has left the queue: a probe sees the second. */
            EPT_OK(MPI_Probe(s, tag_of(c, s), c->comm, &st2));
            check_probe(c, what, &st2, s, 1);
        }
        int *b = c->rbuf + (size_t)s * stride(c) + (size_t)seq * slot(c);
        if (nonblocking) {
            MPI_Request r;
            EPT_OK(MPI_Imrecv(b, count_of(c, s, seq), MPI_INT, &msg, &r));
            EPT_CHECK(msg == MPI_MESSAGE_NULL, "%s: rank %d: MPI_Imrecv left the message handle", what, c->me);
            EPT_OK(MPI_Wait(&r, &st2));
        } else {
            EPT_OK(MPI_Mrecv(b, count_of(c, s, seq), MPI_INT, &msg, &st2));
            EPT_CHECK(msg == MPI_MESSAGE_NULL, "%s: rank %d: MPI_Mrecv left the message handle", what, c->me);
        }
        check_recv(c, what, &st2, b, s, seq);
    }
    free(got);
    end_round(c);
}

/* A probed MPI_Issend is not received: it must not complete until the
 * receive.  Only the left neighbour sends to us here. */
static void probe_ssend(ctx_t *c)
{
    int n = c->n, left = (c->me + n - 1) % n, right = (c->me + 1) % n, flag = 0;
    int out[4] = {c->me, 1, 2, 3}, in[4];
    MPI_Request r;
    MPI_Status st;
    PHASE("MPI_Probe of an MPI_Issend");
    EPT_OK(MPI_Issend(out, 4, MPI_INT, right, 4242, c->comm, &r));
    EPT_OK(MPI_Probe(left, 4242, c->comm, &st));
    EPT_CHECK(st.MPI_SOURCE == left, "probe: source %d", st.MPI_SOURCE);
    EPT_OK(MPI_Barrier(c->comm)); /* everyone has probed, nobody received */
    EPT_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    EPT_CHECK(!flag, "rank %d: an MPI_Issend completed after its message was only probed", c->me);
    EPT_OK(MPI_Barrier(c->comm));
    EPT_OK(MPI_Recv(in, 4, MPI_INT, left, 4242, c->comm, &st));
    EPT_CHECK(in[0] == left && in[3] == 3, "ssend payload %d %d", in[0], in[3]);
    EPT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    EPT_OK(MPI_Barrier(c->comm));
}

static void check_null(const ctx_t *c, const char *what, const MPI_Status *st)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_INT, &cnt);
    EPT_CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && cnt == 0,
              "%s: rank %d: source %d tag %d count %d, expected MPI_PROC_NULL, MPI_ANY_TAG, 0", what, c->me,
              st->MPI_SOURCE, st->MPI_TAG, cnt);
}

static void proc_null(ctx_t *c)
{
    MPI_Status st;
    MPI_Message msg;
    MPI_Request r;
    int flag = 0, b[4] = {7, 7, 7, 7};
    PHASE("probes of MPI_PROC_NULL");
    EPT_OK(MPI_Probe(MPI_PROC_NULL, 5, c->comm, &st));
    check_null(c, "MPI_Probe(MPI_PROC_NULL)", &st);
    EPT_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, c->comm, &flag, &st));
    EPT_CHECK(flag, "MPI_Iprobe(MPI_PROC_NULL): flag false");
    check_null(c, "MPI_Iprobe(MPI_PROC_NULL)", &st);
    msg = MPI_MESSAGE_NULL;
    EPT_OK(MPI_Mprobe(MPI_PROC_NULL, 5, c->comm, &msg, &st));
    EPT_CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(MPI_PROC_NULL) gave message " EPT_HFMT, EPT_HARG(msg));
    check_null(c, "MPI_Mprobe(MPI_PROC_NULL)", &st);
    EPT_OK(MPI_Mrecv(b, 4, MPI_INT, &msg, &st));
    check_null(c, "MPI_Mrecv(MPI_MESSAGE_NO_PROC)", &st);
    EPT_CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv(MPI_MESSAGE_NO_PROC) left message " EPT_HFMT, EPT_HARG(msg));
    flag = 0;
    msg = MPI_MESSAGE_NULL;
    EPT_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, c->comm, &flag, &msg, &st));
    EPT_CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "MPI_Improbe(MPI_PROC_NULL): flag %d message " EPT_HFMT, flag,
              EPT_HARG(msg));
    check_null(c, "MPI_Improbe(MPI_PROC_NULL)", &st);
    EPT_OK(MPI_Imrecv(b, 4, MPI_INT, &msg, &r));
    EPT_OK(MPI_Wait(&r, &st));
    check_null(c, "MPI_Imrecv(MPI_MESSAGE_NO_PROC)", &st);
    EPT_CHECK(b[0] == 7 && b[3] == 7, "a receive from MPI_PROC_NULL wrote the buffer");
}

static void probe(MPI_Comm comm, void *arg)
{
    (void)arg;
    ctx_t c = {.comm = comm};
    MPI_Comm_rank(comm, &c.me);
    MPI_Comm_size(comm, &c.n);
    c.sbuf = malloc(sizeof(int) * (size_t)c.n * (size_t)stride(&c));
    c.rbuf = malloc(sizeof(int) * (size_t)c.n * (size_t)stride(&c));
    c.sreq = malloc(sizeof *c.sreq * 2 * (size_t)c.n);
    EPT_CHECK(c.sbuf && c.rbuf && c.sreq, "out of memory");
    proc_null(&c);
    for (c.large = 0; c.large < 2; c.large++) {
        for (int wild = 0; wild < 2; wild++) {
            probe_recv(&c, 0, wild);
            probe_recv(&c, 1, wild);
            mprobe_recv(&c, 0, wild);
            mprobe_recv(&c, 1, wild);
        }
    }
    probe_ssend(&c);
    free(c.sbuf);
    free(c.rbuf);
    free(c.sreq);
}

int main(int argc, char **argv) { return ept_main(argc, argv, 30, probe, NULL); }
