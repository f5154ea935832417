/* Non-blocking point-to-point: MPI_Isend, MPI_Issend, MPI_Irsend (the
 * receives are posted before a barrier, the sends start after it), MPI_Ibsend
 * and MPI_Irecv with every rank (itself included), small and large, completed
 * through MPI_Wait, MPI_Test loops, MPI_Waitall, MPI_Waitany, MPI_Waitsome,
 * MPI_Testall, MPI_Testany and MPI_Testsome, on arrays that mix endpoint
 * requests with MPI_REQUEST_NULL and, in explicit shapes (where
 * MPI_COMM_WORLD is a classic communicator), with classic requests on
 * MPI_COMM_WORLD.  Checks: every payload, receive statuses, empty statuses for
 * null requests, completed handles set to MPI_REQUEST_NULL, each request
 * reported exactly once by Waitany / Testany / Waitsome / Testsome and then
 * MPI_UNDEFINED, and MPI_Testall completing nothing while it returns false.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#define SMALL 10
#define LARGE 16384 /* ints: 64 KiB */
#define NMODES 4
#define NCOMPL 8
static const char *mode_name[NMODES] = {"MPI_Isend", "MPI_Issend", "MPI_Irsend", "MPI_Ibsend"};
static const char *compl_name[NCOMPL] = {"MPI_Wait",    "MPI_Test loop", "MPI_Waitall",  "MPI_Testall",
                                         "MPI_Waitany", "MPI_Testany",   "MPI_Waitsome", "MPI_Testsome"};

static int val(int s, int d, int round, int i) { return (s * 977 + d) * 1000 + round * 7 + i * 31; }

/* What slot i of the request array holds. */
enum { K_NULL, K_RECV, K_SEND, K_CRECV, K_CSEND };

typedef struct {
    MPI_Comm comm;
    int me, n, classic, wrank, t;
    int round, count;
    const char *name;
    int nslots;
    int *kind, *peer;
    MPI_Request *req;
    MPI_Status *st;
    char *done;
    int *sbuf, *rbuf, csbuf[SMALL], crbuf[SMALL];
} ctx_t;

static int stride(void) { return LARGE; }

static void check_empty(const ctx_t *c, int i, const MPI_Status *st)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_INT, &cnt);
    EPT_CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && cnt == 0,
              "%s: rank %d: the status of null request %d is not empty (source %d tag %d count %d)", c->name, c->me, i,
              st->MPI_SOURCE, st->MPI_TAG, cnt);
}

/* Checks slot i once it is complete, with its status (NULL: none given). */
static void check_slot(ctx_t *c, int i, const MPI_Status *st)
{
    EPT_CHECK(c->req[i] == MPI_REQUEST_NULL, "%s: rank %d: completed request %d was not set to MPI_REQUEST_NULL",
              c->name, c->me, i);
    if (c->kind[i] == K_RECV) {
        int s = c->peer[i], cnt = -1;
        const int *b = c->rbuf + (size_t)s * stride();
        if (st) {
            MPI_Get_count(st, MPI_INT, &cnt);
            EPT_CHECK(st->MPI_SOURCE == s && st->MPI_TAG == c->round && cnt == c->count,
                      "%s: rank %d: receive from %d: status source %d tag %d count %d (expected tag %d count %d)",
                      c->name, c->me, s, st->MPI_SOURCE, st->MPI_TAG, cnt, c->round, c->count);
        }
        for (int k = 0; k < c->count; k++)
            EPT_CHECK(b[k] == val(s, c->me, c->round, k), "%s: rank %d: receive from %d: int %d is %d", c->name, c->me,
                      s, k, b[k]);
    } else if (c->kind[i] == K_CRECV) {
        int cnt = -1;
        if (st) {
            MPI_Get_count(st, MPI_INT, &cnt);
            EPT_CHECK(st->MPI_SOURCE == c->wrank && st->MPI_TAG == 5000 + c->t && cnt == SMALL,
                      "%s: rank %d: classic receive: status source %d tag %d count %d", c->name, c->me, st->MPI_SOURCE,
                      st->MPI_TAG, cnt);
        }
        for (int k = 0; k < SMALL; k++)
            EPT_CHECK(c->crbuf[k] == val(-1, c->t, c->round, k), "%s: rank %d: classic receive: int %d is %d", c->name,
                      c->me, k, c->crbuf[k]);
    } else if (c->kind[i] == K_NULL && st) {
        check_empty(c, i, st);
    }
}

static void start_round(ctx_t *c, int mode)
{
    int n = c->n, ns = 0;
    /* Layout: per peer {NULL, recv, send}; then classic recv, classic send
     * (explicit shapes), and a final NULL. */
    for (int p = 0; p < n; p++) {
        c->kind[ns] = K_NULL;
        c->req[ns++] = MPI_REQUEST_NULL;
        c->kind[ns] = K_RECV;
        c->peer[ns] = p;
        EPT_OK(MPI_Irecv(c->rbuf + (size_t)p * stride(), c->count, MPI_INT, p, c->round, c->comm, &c->req[ns++]));
        c->kind[ns] = K_SEND;
        c->peer[ns] = p;
        c->req[ns++] = MPI_REQUEST_NULL; /* started below */
    }
    if (c->classic) {
        c->kind[ns] = K_CRECV;
        EPT_OK(MPI_Irecv(c->crbuf, SMALL, MPI_INT, c->wrank, 5000 + c->t, MPI_COMM_WORLD, &c->req[ns++]));
        c->kind[ns] = K_CSEND;
        for (int k = 0; k < SMALL; k++)
            c->csbuf[k] = val(-1, c->t, c->round, k);
        EPT_OK(MPI_Isend(c->csbuf, SMALL, MPI_INT, c->wrank, 5000 + c->t, MPI_COMM_WORLD, &c->req[ns++]));
    }
    c->kind[ns] = K_NULL;
    c->req[ns++] = MPI_REQUEST_NULL;
    c->nslots = ns;
    /* Every receive is posted before any send starts (MPI_Irsend needs it). */
    EPT_OK(MPI_Barrier(c->comm));
    for (int k = 0; k < n; k++) {
        int d = (c->me + k) % n, slot = 3 * d + 2;
        int *b = c->sbuf + (size_t)d * stride();
        for (int i = 0; i < c->count; i++)
            b[i] = val(c->me, d, c->round, i);
        MPI_Request *r = &c->req[slot];
        switch (mode) {
        case 0:
            EPT_OK(MPI_Isend(b, c->count, MPI_INT, d, c->round, c->comm, r));
            break;
        case 1:
            EPT_OK(MPI_Issend(b, c->count, MPI_INT, d, c->round, c->comm, r));
            break;
        case 2:
            EPT_OK(MPI_Irsend(b, c->count, MPI_INT, d, c->round, c->comm, r));
            break;
        default:
            EPT_OK(MPI_Ibsend(b, c->count, MPI_INT, d, c->round, c->comm, r));
            break;
        }
    }
}

static int is_active_kind(int k) { return k != K_NULL; }

static void complete_round(ctx_t *c, int how)
{
    int ns = c->nslots, idx, flag, out;
    MPI_Status s;
    int *idxs = malloc(sizeof(int) * (size_t)ns);
    MPI_Request *copy = malloc(sizeof *copy * (size_t)ns);
    EPT_CHECK(idxs && copy, "out of memory");
    memset(c->done, 0, (size_t)ns);
    switch (how) {
    case 0:
        for (int i = 0; i < ns; i++) {
            EPT_OK(MPI_Wait(&c->req[i], &c->st[i]));
            check_slot(c, i, &c->st[i]);
        }
        break;
    case 1:
        for (int i = 0; i < ns; i++) {
            do
                EPT_OK(MPI_Test(&c->req[i], &flag, &c->st[i]));
            while (!flag);
            check_slot(c, i, &c->st[i]);
        }
        break;
    case 2:
        EPT_OK(MPI_Waitall(ns, c->req, c->st));
        for (int i = 0; i < ns; i++)
            check_slot(c, i, &c->st[i]);
        break;
    case 3:
        for (;;) {
            memcpy(copy, c->req, sizeof *copy * (size_t)ns);
            EPT_OK(MPI_Testall(ns, c->req, &flag, c->st));
            if (flag)
                break;
            for (int i = 0; i < ns; i++)
                EPT_CHECK(copy[i] == c->req[i], "%s: rank %d: MPI_Testall returned false but changed request %d",
                          c->name, c->me, i);
        }
        for (int i = 0; i < ns; i++)
            check_slot(c, i, &c->st[i]);
        break;
    case 4:
    case 5:
        for (;;) {
            if (how == 4) {
                EPT_OK(MPI_Waitany(ns, c->req, &idx, &s));
                flag = 1;
            } else {
                EPT_OK(MPI_Testany(ns, c->req, &idx, &flag, &s));
            }
            if (!flag) {
                EPT_CHECK(idx == MPI_UNDEFINED, "%s: rank %d: MPI_Testany: flag false, index %d", c->name, c->me, idx);
                continue;
            }
            if (idx == MPI_UNDEFINED) {
                check_empty(c, -1, &s);
                break;
            }
            EPT_CHECK(idx >= 0 && idx < ns && is_active_kind(c->kind[idx]) && !c->done[idx],
                      "%s: rank %d: index %d returned (kind %d, already done %d)", c->name, c->me, idx,
                      idx >= 0 && idx < ns ? c->kind[idx] : -1, idx >= 0 && idx < ns ? c->done[idx] : -1);
            c->done[idx] = 1;
            check_slot(c, idx, &s);
        }
        break;
    default:
        for (;;) {
            if (how == 6)
                EPT_OK(MPI_Waitsome(ns, c->req, &out, idxs, c->st));
            else
                EPT_OK(MPI_Testsome(ns, c->req, &out, idxs, c->st));
            if (out == MPI_UNDEFINED)
                break;
            EPT_CHECK(out >= 0 && (out > 0 || how == 7), "%s: rank %d: outcount %d", c->name, c->me, out);
            for (int k = 0; k < out; k++) {
                idx = idxs[k];
                EPT_CHECK(idx >= 0 && idx < ns && is_active_kind(c->kind[idx]) && !c->done[idx],
                          "%s: rank %d: index %d returned (kind %d, already done %d)", c->name, c->me, idx,
                          idx >= 0 && idx < ns ? c->kind[idx] : -1, idx >= 0 && idx < ns ? c->done[idx] : -1);
                c->done[idx] = 1;
                check_slot(c, idx, &c->st[k]);
            }
        }
        break;
    }
    if (how >= 4)
        for (int i = 0; i < ns; i++)
            EPT_CHECK(!is_active_kind(c->kind[i]) || c->done[i], "%s: rank %d: request %d never reported", c->name,
                      c->me, i);
    for (int i = 0; i < ns; i++)
        EPT_CHECK(c->req[i] == MPI_REQUEST_NULL, "%s: rank %d: request %d not MPI_REQUEST_NULL at the end", c->name,
                  c->me, i);
    free(idxs);
    free(copy);
    EPT_OK(MPI_Barrier(c->comm));
}

static void nonblocking(MPI_Comm comm, void *arg)
{
    ctx_t c = {.comm = comm};
    char name[160];
    c.classic = *(int *)arg;
    c.t = omp_get_thread_num();
    MPI_Comm_rank(comm, &c.me);
    MPI_Comm_size(comm, &c.n);
    if (c.classic)
        MPI_Comm_rank(MPI_COMM_WORLD, &c.wrank);
    int maxslots = 3 * c.n + 3;
    c.kind = malloc(sizeof(int) * (size_t)maxslots);
    c.peer = malloc(sizeof(int) * (size_t)maxslots);
    c.req = malloc(sizeof *c.req * (size_t)maxslots);
    c.st = malloc(sizeof *c.st * (size_t)maxslots);
    c.done = malloc((size_t)maxslots);
    c.sbuf = malloc(sizeof(int) * (size_t)c.n * stride());
    c.rbuf = malloc(sizeof(int) * (size_t)c.n * stride());
    EPT_CHECK(c.kind && c.peer && c.req && c.st && c.done && c.sbuf && c.rbuf, "out of memory");
    for (int large = 0; large < 2; large++) {
        for (int mode = 0; mode < NMODES; mode++) {
            for (int how = 0; how < NCOMPL; how++) {
                c.count = large ? LARGE : SMALL;
                snprintf(name, sizeof name, "%s + %s, %s messages", mode_name[mode], compl_name[how],
                         large ? "large" : "small");
                c.name = name;
                PHASE(c.name);
                start_round(&c, mode);
                complete_round(&c, how);
                c.round++;
            }
        }
    }
    free(c.kind);
    free(c.peer);
    free(c.req);
    free(c.st);
    free(c.done);
    free(c.sbuf);
    free(c.rbuf);
}

int main(int argc, char **argv)
{
    int nlocal = ept_init(&argc, &argv, 30);
    int classic = ept_world_endpoints() == 0; /* MPI_COMM_WORLD is classic */
    /* Ibsend space: one round of large messages to every rank of the
     * endpoint communicator, per local rank. */
    int wsize, maxranks = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize); /* world mode: all endpoints */
    if (classic)
        for (int p = 0; p < wsize; p++)
            maxranks += ept_list_item(argv[1], p);
    else
        maxranks = wsize;
    int bsize = (LARGE * 4 + MPI_BSEND_OVERHEAD) * maxranks * (nlocal > 0 ? nlocal : 1);
    char *bbuf = malloc((size_t)bsize);
    EPT_CHECK(bbuf, "out of memory");
    EPT_OK(MPI_Buffer_attach(bbuf, bsize));
    run_ranks(nlocal, nonblocking, &classic);
    PHASE("MPI_Buffer_detach");
    void *addr;
    int dsize;
    EPT_OK(MPI_Buffer_detach(&addr, &dsize));
    free(bbuf);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
