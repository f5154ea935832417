/* Blocking collectives on a communicator whose ranks all live in this
 * process (at most EP_LOCAL_MAX of them).  Small Barrier, Bcast, Reduce
 * and Allreduce take one pass through per-endpoint records instead of the
 * generic rendezvous (coll_drive.c); large reductions share the folding
 * among the endpoints (split_reduce); every other call goes on to the
 * generic driver.
 *
 * Every blocking collective call enters through the records, whatever its
 * path.  Each endpoint owns EP_LOCAL_DEPTH records, used in turn by its
 * calls (call n uses record n % depth).  Entering call n, an endpoint
 * writes its payload (its input, or the root's data) into that record, the
 * call's signature (what every rank passes alike: the call, its root, its
 * amount of data, and the path these choose), then the record's seq = n,
 * which also says it has finished every earlier call.  It then waits
 * until every endpoint has entered call n and compares their signatures
 * with its own: all ranks see the same records, so a mismatch (different
 * calls, roots, counts, or paths) is an error on every rank and nobody
 * goes on to a path another rank did not take.  Only then does it read
 * the records it needs (the root's for Bcast, every endpoint's for a
 * reduction at its root).  Before writing a record again it waits until
 * every endpoint has entered the call after the one that last used it, so
 * nobody still reads it; in a loop of collectives that holds already.  A
 * payload lands in the same cache line as its seq: a small Allreduce of
 * two endpoints costs each one cache line transfer each way. */
#include "coll/coll.h"

#include "core/datatype.h"
#include "diag/diag.h"
#include "core/op.h"
#include "base/wait.h"

#include <stdlib.h>
#include <string.h>

/* Records: EP_LOCAL_DEPTH per endpoint, of one block of cache lines each,
 * the payload in the same line as its seq. */
#define EP_LOCAL_MAX 16
#define EP_LOCAL_DEPTH 8
#define EP_LOCAL_BYTES 224

typedef struct record {
    _Atomic uint64_t seq;
    uint64_t sig;   /* the call, its root and path (call_sig), for the others to check */
    int64_t agree;  /* and what its ranks pass alike (ep_coll_args_t) */
    int64_t status; /* its payload could not be written (ep_status_t): every rank fails */
    unsigned char data[EP_LOCAL_BYTES];
} __attribute__((aligned(64))) record_t;

/* The paths of a call (in its signature). */
enum { PATH_ONE_PASS = 1, PATH_SPLIT, PATH_GENERIC };

/* What one endpoint last saw of the others' progress (its own cache lines):
 * it reads another endpoint's record only when that is not enough, since
 * every read of a line the other is about to write costs a transfer. */
typedef struct seen_row {
    uint64_t entered[EP_LOCAL_MAX];
} __attribute__((aligned(64))) seen_row_t;

struct ep_local_coll {
    record_t *rec;    /* [nlocal * EP_LOCAL_DEPTH], endpoint-major */
    seen_row_t *seen; /* [nlocal] */
};

ep_status_t ep_local_coll_init(ep_comm_t *c)
{
    int n = c->nlocal;
    if (c->nprocs != 1 || n < 2 || n > EP_LOCAL_MAX)
        return EP_OK;
    ep_local_coll_t *l = calloc(1, sizeof *l);
    if (!l || posix_memalign((void **)&l->rec, 64, sizeof *l->rec * (size_t)n * EP_LOCAL_DEPTH) ||
        posix_memalign((void **)&l->seen, 64, sizeof *l->seen * (size_t)n)) {
        ep_local_coll_free(l);
        return EP_ERR_NO_MEM;
    }
    for (int i = 0; i < n * EP_LOCAL_DEPTH; i++)
        atomic_init(&l->rec[i].seq, 0);
    memset(l->seen, 0, sizeof *l->seen * (size_t)n);
    c->local_coll = l;
    return EP_OK;
}

void ep_local_coll_free(ep_local_coll_t *l)
{
    if (l) {
        free(l->rec);
        free(l->seen);
        free(l);
    }
}

static record_t *record(const ep_comm_t *c, int lidx, uint64_t n)
{
    return &c->local_coll->rec[(size_t)lidx * EP_LOCAL_DEPTH + n % EP_LOCAL_DEPTH];
}

typedef struct call_wait {
    const ep_comm_t *c;
    uint64_t n;
} call_wait_t;

static int call_absent(const void *arg, int j)
{
    const call_wait_t *w = arg;
    return atomic_load_explicit(&record(w->c, j, w->n)->seq, memory_order_relaxed) < w->n;
}

/* Endpoint me waits until endpoint lidx has entered call n; the wait is
 * watched (ep_diag_watch), and gives up when lidx cannot come. */
static ep_status_t wait_entered(ep_comm_t *c, int me, int lidx, uint64_t n)
{
    uint64_t *seen = &c->local_coll->seen[me].entered[lidx];
    if (*seen >= n)
        return EP_OK;
    record_t *r = record(c, lidx, n);
    ep_watch_t watch = EP_WATCH_INIT;
    call_wait_t w = {c, n};
    uint64_t v;
    EP_WAIT_UNTIL((v = atomic_load_explicit(&r->seq, memory_order_acquire)) >= n)
    {
        ep_status_t rc = ep_diag_watch(&watch, &c->local[me], call_absent, &w);
        if (rc) {
            atomic_store(&c->sync.dead, 1);
            return rc;
        }
    }
    *seen = v;
    return EP_OK;
}

/* Call n may write its record: every endpoint has entered call n - depth + 1. */
static ep_status_t wait_record_free(ep_comm_t *c, int me, uint64_t n)
{
    ep_status_t rc = EP_OK;
    if (n < EP_LOCAL_DEPTH)
        return rc;
    for (int j = 0; j < c->nlocal && !rc; j++)
        if (j != me)
            rc = wait_entered(c, me, j, n - EP_LOCAL_DEPTH + 1);
    return rc;
}

/* The call's signature: the call (its one-process kind), its root and its
 * path; with the record's agree, what every rank must pass alike. */
static uint64_t call_sig(const ep_coll_args_t *a, int path)
{
    return (uint64_t)(uint32_t)a->root << 32 | (uint64_t)a->local << 8 | (uint64_t)path;
}

static ep_status_t sig_check(const record_t *mine, const record_t *theirs)
{
    uint64_t d = mine->sig ^ theirs->sig;
    if (d & 0xff00u)
        return EP_ERR_CALL_MISMATCH;
    if (d >> 32)
        return EP_ERR_ROOT_MISMATCH;
    /* Different paths with the same root and call: different amounts of
     * data, or datatypes of different layouts. */
    return d || mine->agree != theirs->agree ? EP_ERR_COUNT_MISMATCH : EP_OK;
}

/* Enters call `call` on path `path`: publishes the record (its payload
 * written by the caller already, with status wrote), waits until every
 * endpoint has entered the call and checks their signatures (the header
 * comment) and statuses: one rank's failure is every rank's. */
static ep_status_t enter(ep_endpoint_t *ep, const ep_coll_args_t *a, int path, uint64_t call, ep_status_t wrote)
{
    ep_comm_t *c = ep->comm;
    int me = ep->lidx;
    record_t *mine = record(c, me, call);
    ep_status_t rc = EP_OK, failed = wrote;

    mine->sig = call_sig(a, path);
    mine->agree = a->agree;
    mine->status = wrote;
    atomic_store_explicit(&mine->seq, call, memory_order_release);
    for (int j = 0; j < c->nlocal; j++) {
        if (j == me)
            continue;
        ep_status_t gone = wait_entered(c, me, j, call);
        if (gone)
            return gone;
        const record_t *theirs = record(c, j, call);
        if (!rc)
            rc = sig_check(mine, theirs);
        if (!failed)
            failed = (ep_status_t)theirs->status;
    }
    return rc ? rc : failed;
}

/* One pass through the records (the header comment), once entered. */
static ep_status_t one_pass(ep_endpoint_t *ep, const ep_coll_args_t *a, const ep_dt_layout_t *lay, uint64_t call)
{
    ep_comm_t *c = ep->comm;
    int n = c->nlocal;
    ep_status_t rc = EP_OK;

    if (a->local == EP_LOCAL_BCAST && !a->at_root) {
        const record_t *root = record(c, c->ranks[a->root].lidx, call);
        rc = ep_dt_unpack(root->data, lay->bytes, a->rbuf, a->rcount, a->rtype, lay);
    } else if (a->local == EP_LOCAL_REDUCE && (a->all || a->at_root)) {
        /* Local indices follow ranks when all ranks are local. */
        const void *xs[EP_LOCAL_MAX];
        for (int j = 0; j < n; j++)
            xs[j] = record(c, j, call)->data;
        rc = ep_coll_fold(a->rbuf, xs, n, a->scount, a->stype, a->op);
    }
    return rc;
}

/* ---- large reductions: every endpoint folds its share (ep_coll_fold_share)
 * straight into where the result goes (its own receive buffer for
 * Allreduce, the root's for Reduce); for Allreduce each then copies the
 * other chunks from their owners. */

/* Entered already (so every endpoint is here, with the same count), and
 * a published in c->sync.ptr before that. */
static ep_status_t split_reduce(ep_endpoint_t *ep, const ep_coll_args_t *a)
{
    ep_comm_t *c = ep->comm;
    int n = c->nlocal, me = ep->lidx;
    MPI_Aint size = ep_coll_extent(a->stype);

    const ep_coll_args_t *dst = a->all ? a : atomic_load(&c->sync.ptr[c->ranks[a->root].lidx]);
    ep_status_t rc = ep_coll_fold_share(c, me, dst->rbuf, dst->sbuf == MPI_IN_PLACE);
    atomic_store(&c->sync.val[me], rc);
    ep_sync_barrier(c);                /* every chunk is folded */
    for (int j = 0; j < n && !rc; j++) /* a chunk that failed spoils every result */
        rc = (ep_status_t)atomic_load(&c->sync.val[j]);
    for (int j = 0; a->all && !rc && j < n; j++) {
        const ep_coll_args_t *x = atomic_load(&c->sync.ptr[j]);
        int jlo, jhi;
        ep_coll_chunk(j, n, a->scount, &jlo, &jhi);
        if (j != me && jhi > jlo)
            memcpy((char *)a->rbuf + jlo * size, (const char *)x->rbuf + jlo * size, (size_t)((jhi - jlo) * size));
    }
    ep_sync_barrier(c); /* nobody reads another's buffers any more */
    return rc;
}

/* The path of a call: it depends only on what every rank passes alike
 * (and for reductions on the datatype, which MPI requires to be the same),
 * so it is the same for every rank of a correct program. */
static int choose_path(const ep_coll_args_t *a, ep_dt_layout_t *lay, int64_t *bytes)
{
    *bytes = 0;
    if (a->local == EP_LOCAL_REDUCE) {
        if (!ep_coll_dense(a->stype, a->scount, bytes))
            return PATH_GENERIC;
        return *bytes > EP_LOCAL_BYTES ? PATH_SPLIT : PATH_ONE_PASS;
    }
    if (a->local == EP_LOCAL_BCAST) {
        if (ep_dt_layout(a->rtype, a->rcount, lay))
            return PATH_GENERIC;
        *bytes = lay->bytes;
        return *bytes > EP_LOCAL_BYTES ? PATH_GENERIC : PATH_ONE_PASS;
    }
    return a->local == EP_LOCAL_BARRIER ? PATH_ONE_PASS : PATH_GENERIC;
}

int ep_coll_local_run(ep_endpoint_t *ep, const ep_coll_args_t *a, ep_status_t *rc)
{
    ep_comm_t *c = ep->comm;
    ep_dt_layout_t lay = {0};
    int64_t bytes;

    /* Without records (an intercommunicator, or more endpoints than
     * EP_LOCAL_MAX) every call takes the generic driver: with two paths
     * and nothing to compare, ranks that passed different counts would
     * wait for each other on different paths. */
    if (!c->local_coll || c->inter)
        return 0;
    if (atomic_load_explicit(&c->sync.dead, memory_order_relaxed)) {
        *rc = EP_ERR_SYNC_DEAD;
        return 1;
    }
    int path = choose_path(a, &lay, &bytes);
    uint64_t call = ++ep->local_seq;
    record_t *mine = record(c, ep->lidx, call);
    if ((*rc = wait_record_free(c, ep->lidx, call)))
        return 1;
    if (path == PATH_ONE_PASS && a->local == EP_LOCAL_BCAST && a->at_root)
        *rc = ep_dt_pack(a->rbuf, a->rcount, a->rtype, &lay, mine->data);
    else if (path == PATH_ONE_PASS && a->local == EP_LOCAL_REDUCE)
        memcpy(mine->data, ep_coll_input(a), (size_t)bytes);
    else if (path == PATH_SPLIT)
        atomic_store(&c->sync.ptr[ep->lidx], (void *)a);
    if ((*rc = enter(ep, a, path, call, *rc)))
        return 1;
    if (path == PATH_GENERIC)
        return 0; /* every rank goes on to the generic driver */
    *rc = path == PATH_SPLIT ? split_reduce(ep, a) : one_pass(ep, a, &lay, call);
    return 1;
}
