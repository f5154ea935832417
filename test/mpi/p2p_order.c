/* Non-overtaking: every rank sends a sequence of K messages to every rank
 * (itself included) with interleaved sizes (0 B, 8 B, 1 KiB, 20 KiB, 100 KiB,
 * 1 MiB: eager and rendezvous, inside a process and between processes), with
 * one tag or with several, with blocking (MPI_Send, MPI_Ssend) and
 * non-blocking sends.  Receivers receive with a specific source and tag, with
 * MPI_ANY_TAG, with MPI_ANY_SOURCE, as pre-posted MPI_Irecv and as blocking
 * MPI_Recv, and check that the messages of each sender that match a receive
 * pattern arrive in send order (each payload carries its sequence number and
 * every byte is derived from (sender, phase, sequence number)).
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#define K 12 /* messages per (sender, receiver) pair and phase */
static const int seq_sizes[K] = {0, 8, 1024, 20480, 8, 102400, 0, 1048576, 1024, 8, 20480, 0};
#define CAP 102400 /* largest message in the "capped" phases */
#define MAXMSG 1048576

static int msg_size(int capped, int j)
{
    int s = seq_sizes[j];
    return capped && s > CAP ? CAP : s;
}

/* Message j of phase ph from src: the sequence number in its first 4 bytes,
 * the pattern elsewhere. */
static void make_msg(unsigned char *b, int size, int src, int ph, int j)
{
    fill(b, (size_t)size, src, ph, j);
    if (size >= 4)
        memcpy(b, &j, 4);
}

static void check_msg(const char *what, const unsigned char *b, const MPI_Status *st, int me, int src, int ph, int j,
                      int tag, int size)
{
    int cnt = -1, seq = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    EPT_CHECK(st->MPI_SOURCE == src, "%s: rank %d: status source %d, expected %d", what, me, st->MPI_SOURCE, src);
    EPT_CHECK(st->MPI_TAG == tag, "%s: rank %d: message %d from %d has status tag %d, expected %d", what, me, j, src,
              st->MPI_TAG, tag);
    if (cnt >= 4)
        memcpy(&seq, b, 4);
    EPT_CHECK(cnt == size && (size < 4 || seq == j),
              "%s: rank %d: message %d from rank %d should have %d bytes, got %d bytes with sequence number %d: "
              "messages overtook each other",
              what, me, j, src, size, cnt, seq);
    for (int i = 4; i < size; i++)
        EPT_CHECK(b[i] == pat(src, ph, j, (size_t)i), "%s: rank %d: message %d from %d: byte %d wrong", what, me, j,
                  src, i);
}

typedef struct {
    int me, n, ph, capped;
    const char *name;
    MPI_Comm comm;
    unsigned char *sbuf[K]; /* message j of this phase, shared by all destinations */
} phase_t;

static void phase_begin(phase_t *p, int ph, int capped, const char *name)
{
    p->ph = ph;
    p->capped = capped;
    p->name = name;
    PHASE(name);
    for (int j = 0; j < K; j++) {
        int sz = msg_size(capped, j);
        p->sbuf[j] = malloc((size_t)(sz ? sz : 1));
        EPT_CHECK(p->sbuf[j], "out of memory");
        make_msg(p->sbuf[j], sz, p->me, ph, j);
    }
}

static void phase_end(phase_t *p)
{
    EPT_OK(MPI_Barrier(p->comm));
    for (int j = 0; j < K; j++)
        free(p->sbuf[j]);
}

static int mixed_tag(int ph, int j) { return 100 * ph + j % 3; }
static int same_tag(int ph) { return 100 * ph + 7; }

/* Sends of one phase.  kind: 0 all MPI_Send, 1 Send / Isend / Ssend by j % 3,
 * 2 Send / Isend by j % 2, 3 all MPI_Isend.  Non-blocking requests go to
 * *reqs (K * n of them, MPI_REQUEST_NULL for blocking sends). */
static void send_all(phase_t *p, int kind, int mixed, MPI_Request *reqs)
{
    for (int k = 0; k < p->n; k++) {
        int dst = (p->me + k) % p->n;
        for (int j = 0; j < K; j++) {
            int sz = msg_size(p->capped, j), tag = mixed ? mixed_tag(p->ph, j) : same_tag(p->ph);
            MPI_Request *r = &reqs[dst * K + j];
            int how = kind == 0 ? 0 : kind == 1 ? j % 3 : kind == 2 ? j % 2 : 1;
            *r = MPI_REQUEST_NULL;
            if (how == 0)
                EPT_OK(MPI_Send(p->sbuf[j], sz, MPI_BYTE, dst, tag, p->comm));
            else if (how == 1)
                EPT_OK(MPI_Isend(p->sbuf[j], sz, MPI_BYTE, dst, tag, p->comm, r));
            else
                EPT_OK(MPI_Ssend(p->sbuf[j], sz, MPI_BYTE, dst, tag, p->comm));
        }
    }
}

/* Phases with pre-posted receives: all receives of the phase are posted
 * (MPI_Irecv) before this rank sends anything, in sequence order. */
static void preposted(phase_t *p, int kind, int mixed, int anysrc, int anytag)
{
    int n = p->n, nr = n * K;
    MPI_Request *rreq = malloc(sizeof *rreq * (size_t)nr), *sreq = malloc(sizeof *sreq * (size_t)nr);
    MPI_Status *st = malloc(sizeof *st * (size_t)nr);
    unsigned char **rbuf = malloc(sizeof *rbuf * (size_t)nr);
    EPT_CHECK(rreq && sreq && st && rbuf, "out of memory");
    for (int i = 0; i < nr; i++) {
        int src = i / K, j = i % K;
        int cap = anysrc ? msg_size(p->capped, K - 1) : msg_size(p->capped, j);
        if (anysrc)
            for (int jj = 0; jj < K; jj++)
                cap = msg_size(p->capped, jj) > cap ? msg_size(p->capped, jj) : cap;
        rbuf[i] = malloc((size_t)(cap ? cap : 1));
        EPT_CHECK(rbuf[i], "out of memory");
        int tag = anytag ? MPI_ANY_TAG : mixed ? mixed_tag(p->ph, j) : same_tag(p->ph);
        EPT_OK(MPI_Irecv(rbuf[i], cap, MPI_BYTE, anysrc ? MPI_ANY_SOURCE : src, tag, p->comm, &rreq[i]));
    }
    send_all(p, kind, mixed, sreq);
    EPT_OK(MPI_Waitall(nr, rreq, st));
    EPT_OK(MPI_Waitall(nr, sreq, statuses_ignore()));
    int *next = calloc((size_t)n, sizeof(int));
    EPT_CHECK(next, "out of memory");
    for (int i = 0; i < nr; i++) {
        int src = anysrc ? st[i].MPI_SOURCE : i / K;
        EPT_CHECK(src >= 0 && src < n, "%s: rank %d: receive %d has status source %d", p->name, p->me, i,
                  st[i].MPI_SOURCE);
        int j = anysrc ? next[src]++ : i % K;
        EPT_CHECK(j < K, "%s: rank %d: more than %d messages from %d", p->name, p->me, K, src);
        check_msg(p->name, rbuf[i], &st[i], p->me, src, p->ph, j, mixed ? mixed_tag(p->ph, j) : same_tag(p->ph),
                  msg_size(p->capped, j));
        free(rbuf[i]);
    }
    free(next);
    free(rreq);
    free(sreq);
    free(st);
    free(rbuf);
}

/* Phases with MPI_Isend first, then blocking receives.  order: 0 by source,
 * in sequence; 1 by source, tag by tag in reverse tag order; 2 MPI_ANY_SOURCE
 * tag by tag in reverse order; 3 MPI_ANY_SOURCE (anytag: MPI_ANY_TAG). */
static void isend_then_recv(phase_t *p, int mixed, int order, int anytag)
{
    int n = p->n, nr = n * K;
    MPI_Request *sreq = malloc(sizeof *sreq * (size_t)nr);
    unsigned char *rbuf = malloc(MAXMSG);
    int *next = malloc(sizeof(int) * 3 * (size_t)n);
    EPT_CHECK(sreq && rbuf && next, "out of memory");
    send_all(p, 3, mixed, sreq);
    MPI_Status st;
    if (order == 0 || order == 1) {
        for (int k = 0; k < n; k++) {
            int src = (p->me + n - k) % n;
            for (int t = order == 1 ? 2 : 0; t >= 0; t--) {
                for (int j = order == 1 ? t : 0; j < K; j += order == 1 ? 3 : 1) {
                    int tag = anytag ? MPI_ANY_TAG : mixed ? mixed_tag(p->ph, j) : same_tag(p->ph);
                    EPT_OK(MPI_Recv(rbuf, MAXMSG, MPI_BYTE, src, tag, p->comm, &st));
                    check_msg(p->name, rbuf, &st, p->me, src, p->ph, j, mixed ? mixed_tag(p->ph, j) : same_tag(p->ph),
                              msg_size(p->capped, j));
                }
            }
        }
    } else {
        /* next[3 * src + t]: the next sequence number expected from src
         * (per tag class t when receiving tag by tag). */
        for (int s = 0; s < n; s++)
            for (int t = 0; t < 3; t++)
                next[3 * s + t] = order == 2 ? t : 0;
        for (int t = order == 2 ? 2 : 0; t >= 0; t--) {
            int count = order == 2 ? n * (K / 3) : nr;
            for (int i = 0; i < count; i++) {
                int tag = order == 2 ? mixed_tag(p->ph, t) : anytag ? MPI_ANY_TAG : same_tag(p->ph);
                EPT_OK(MPI_Recv(rbuf, MAXMSG, MPI_BYTE, MPI_ANY_SOURCE, tag, p->comm, &st));
                int src = st.MPI_SOURCE;
                EPT_CHECK(src >= 0 && src < n, "%s: rank %d: status source %d", p->name, p->me, src);
                int *nx = &next[3 * src + (order == 2 ? t : 0)];
                int j = *nx;
                *nx += order == 2 ? 3 : 1;
                EPT_CHECK(j < K, "%s: rank %d: too many messages from %d", p->name, p->me, src);
                check_msg(p->name, rbuf, &st, p->me, src, p->ph, j, mixed ? mixed_tag(p->ph, j) : same_tag(p->ph),
                          msg_size(p->capped, j));
            }
        }
    }
    EPT_OK(MPI_Waitall(nr, sreq, statuses_ignore()));
    free(sreq);
    free(rbuf);
    free(next);
}

static void order(MPI_Comm comm, void *arg)
{
    (void)arg;
    phase_t p;
    p.comm = comm;
    MPI_Comm_rank(comm, &p.me);
    MPI_Comm_size(comm, &p.n);

    phase_begin(&p, 1, 0, "A: MPI_Send, one tag; pre-posted MPI_Irecv, specific source and tag");
    preposted(&p, 0, 0, 0, 0);
    phase_end(&p);
    phase_begin(&p, 2, 0,
                "B: MPI_Send/MPI_Isend/MPI_Ssend, three tags; pre-posted MPI_Irecv, specific source, MPI_ANY_TAG");
    preposted(&p, 1, 1, 0, 1);
    phase_end(&p);
    phase_begin(&p, 3, 1, "C: MPI_Send/MPI_Isend, three tags; pre-posted MPI_Irecv, MPI_ANY_SOURCE and MPI_ANY_TAG");
    preposted(&p, 2, 1, 1, 1);
    phase_end(&p);
    phase_begin(&p, 4, 0, "D: MPI_Isend, one tag; MPI_Recv, specific source and tag");
    isend_then_recv(&p, 0, 0, 0);
    phase_end(&p);
    phase_begin(&p, 5, 0, "E: MPI_Isend, three tags; MPI_Recv, specific source, MPI_ANY_TAG");
    isend_then_recv(&p, 1, 0, 1);
    phase_end(&p);
    phase_begin(&p, 6, 1, "F: MPI_Isend, three tags; MPI_Recv, specific source and tag, tags in reverse order");
    isend_then_recv(&p, 1, 1, 0);
    phase_end(&p);
    phase_begin(&p, 7, 1, "G: MPI_Isend, three tags; MPI_Recv, MPI_ANY_SOURCE, tags in reverse order");
    isend_then_recv(&p, 1, 2, 0);
    phase_end(&p);
    phase_begin(&p, 8, 1, "H: MPI_Isend, three tags; MPI_Recv, MPI_ANY_SOURCE and MPI_ANY_TAG");
    isend_then_recv(&p, 1, 3, 1);
    phase_end(&p);
    phase_begin(&p, 9, 1, "I: MPI_Isend, one tag; MPI_Recv, MPI_ANY_SOURCE, specific tag");
    isend_then_recv(&p, 0, 3, 0);
    phase_end(&p);
}

int main(int argc, char **argv) { return ept_main(argc, argv, 30, order, NULL); }
