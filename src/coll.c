#include "coll.h"

#include "coll_xchg.h"
#include "datatype.h"
#include "net.h"
#include "settings.h"

#include <stdlib.h>
#include <string.h>

/* What an endpoint publishes about its buffer. */
typedef struct ep_coll_arg {
    const void *buf;
    int count;
    MPI_Datatype type;
} ep_coll_arg_t;

static void publish(ep_endpoint_t *ep, void *p) { atomic_store(&ep->comm->sync.ptr[ep->lidx], p); }
static void *published(ep_comm_t *c, int lidx) { return atomic_load(&c->sync.ptr[lidx]); }

/* Runs a non-blocking PMPI collective to completion without busy-polling. */
static ep_status_t pmpi_finish(int rc, MPI_Request *req)
{
    if (rc != MPI_SUCCESS || ep_net_wait_pmpi(req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return EP_ERR_INTERN;
    return EP_OK;
}

ep_status_t ep_coll_barrier(ep_endpoint_t *ep)
{
    ep_comm_t *c = ep->comm;
    ep_status_t rc = EP_OK;
    MPI_Request req;
    ep_sync_barrier(c);
    if (c->pcomm != MPI_COMM_NULL && ep->lidx == 0)
        rc = pmpi_finish(PMPI_Ibarrier(c->pcomm, &req), &req);
    ep_sync_barrier(c);
    return rc;
}

ep_status_t ep_coll_bcast(ep_endpoint_t *ep, void *buf, int count, MPI_Datatype type, int root)
{
    ep_comm_t *c = ep->comm;
    ep_rank_loc_t rl = c->ranks[root];
    int actor = rl.proc == c->myproc ? rl.lidx : 0;
    ep_status_t rc = EP_OK;
    int64_t n;
    MPI_Request req;

    if (ep->lidx == actor) {
        if (c->pcomm != MPI_COMM_NULL)
            rc = pmpi_finish(PMPI_Ibcast(buf, count, type, rl.proc, c->pcomm, &req), &req);
        if (c->nlocal == 1)
            return rc;
        ep_coll_arg_t a = {buf, count, type};
        publish(ep, &a);
        ep_sync_barrier(c);
        ep_sync_barrier(c); /* the others have copied: a and buf may go */
        return rc;
    }
    ep_sync_barrier(c);
    ep_coll_arg_t *a = published(c, actor);
    rc = ep_dt_copy(a->buf, a->count, a->type, buf, count, type, &n);
    ep_sync_barrier(c);
    return rc;
}

/* A buffer for count elements of type t, returned as the pointer to pass as
 * the buffer argument (so true lower bounds are honoured) and the block to free. */
static void *typed_alloc(int count, MPI_Datatype t, void **block)
{
    MPI_Aint lb, ext, tlb, text;
    PMPI_Type_get_extent(t, &lb, &ext);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    size_t span = count > 0 ? (size_t)((count - 1) * ext + text) : 1;
    *block = malloc(span ? span : 1);
    return *block ? (char *)*block - tlb : NULL;
}

/* x0 op x1 op ... op xn-1 for the n inputs at xs (count elements of type
 * each, ext apart), into acc.  Combined right to left with
 * PMPI_Reduce_local (inout = in op inout), which keeps rank order for
 * non-commutative operations (MPI requires associativity). */
static void fold(void *acc, const void *const *xs, int n, int count, MPI_Datatype type, MPI_Op op)
{
    int64_t bytes;
    ep_dt_copy(xs[n - 1], count, type, acc, count, type, &bytes);
    for (int i = n - 2; i >= 0; i--)
        PMPI_Reduce_local(xs[i], acc, count, type, op);
}

/* The gathered path: every rank's input, in rank order, at every rank (an
 * allgather), for reductions and scans on communicators whose ranks are not
 * grouped by process.  Correct for any rank map, not fast.  On success
 * xs[r] points at rank r's input inside *block (free both). */
static ep_status_t gather_inputs(ep_endpoint_t *ep, const void *in, int count, MPI_Datatype type, void **block,
                                 const void ***xs)
{
    ep_comm_t *c = ep->comm;
    MPI_Aint lb, ext;
    int *cnts = malloc(sizeof(int) * (size_t)c->size), *dsp = malloc(sizeof(int) * (size_t)c->size);
    *xs = malloc(sizeof(void *) * (size_t)c->size);
    char *all = typed_alloc(count * c->size, type, block);
    ep_status_t rc = (cnts && dsp && *xs && all) ? EP_OK : EP_ERR_NO_MEM;
    PMPI_Type_get_extent(type, &lb, &ext);
    for (int r = 0; !rc && r < c->size; r++) {
        cnts[r] = count;
        dsp[r] = r * count;
        (*xs)[r] = all + (MPI_Aint)r * count * ext;
    }
    /* Everyone takes part even after a local failure, or the others hang. */
    ep_status_t xrc = rc ? ep_coll_exchange_nothing(ep) : ep_coll_allgatherv(ep, in, count, type, all, cnts, dsp, type);
    free(cnts);
    free(dsp);
    return rc ? rc : xrc;
}

static ep_status_t reduce_gathered(ep_endpoint_t *ep, const void *in, void *rbuf, int count, MPI_Datatype type,
                                   MPI_Op op, int root)
{
    void *block = NULL, *ablock = NULL;
    const void **xs = NULL;
    ep_status_t rc = gather_inputs(ep, in, count, type, &block, &xs);
    if (!rc && (root < 0 || root == ep->rank)) {
        void *acc = typed_alloc(count, type, &ablock);
        int64_t n;
        if (!acc)
            rc = EP_ERR_NO_MEM;
        else {
            fold(acc, xs, ep->comm->size, count, type, op);
            rc = ep_dt_copy(acc, count, type, rbuf, count, type, &n);
        }
    }
    free(xs);
    free(block);
    free(ablock);
    return rc;
}

/* Reduction to every rank (root < 0) or to root: the local inputs are
 * folded by local index 0 (local indices follow rank order), which runs one
 * PMPI reduction over the processes; those are in rank order too when the
 * communicator is blocked, so non-commutative operations stay correct. */
static ep_status_t reduce_common(ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                                 MPI_Op op, int root)
{
    ep_comm_t *c = ep->comm;
    ep_status_t rc = EP_OK;
    int commute = 1;
    int64_t n;
    MPI_Request req;

    PMPI_Op_commutative(op, &commute);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if ((!commute && !c->blocked) || ep_config.coll_gathered)
        return reduce_gathered(ep, in, rbuf, count, type, op, root);
    if (c->nlocal == 1 && root < 0) {
        if (in != rbuf && (rc = ep_dt_copy(in, count, type, rbuf, count, type, &n)))
            return rc;
        if (c->pcomm != MPI_COMM_NULL)
            rc = pmpi_finish(PMPI_Iallreduce(MPI_IN_PLACE, rbuf, count, type, op, c->pcomm, &req), &req);
        return rc;
    }
    publish(ep, (void *)in);
    ep_sync_barrier(c);
    void *block = NULL;
    if (ep->lidx == 0) {
        void *acc = typed_alloc(count, type, &block);
        if (!acc)
            rc = EP_ERR_NO_MEM;
        else {
            fold(acc, (const void *const *)c->sync.ptr, c->nlocal, count, type, op);
            if (c->pcomm != MPI_COMM_NULL) {
                int rproc = root < 0 ? -1 : c->ranks[root].proc;
                if (root < 0)
                    rc = pmpi_finish(PMPI_Iallreduce(MPI_IN_PLACE, acc, count, type, op, c->pcomm, &req), &req);
                else if (rproc == c->myproc)
                    rc = pmpi_finish(PMPI_Ireduce(MPI_IN_PLACE, acc, count, type, op, rproc, c->pcomm, &req), &req);
                else
                    rc = pmpi_finish(PMPI_Ireduce(acc, NULL, count, type, op, rproc, c->pcomm, &req), &req);
            }
        }
        atomic_store(&c->sync.status, rc);
        atomic_store(&c->sync.result, acc);
    }
    ep_sync_barrier(c); /* the result is ready; everyone's input has been read */
    rc = atomic_load(&c->sync.status);
    void *res = atomic_load(&c->sync.result);
    if (!rc && (root < 0 || root == ep->rank))
        rc = ep_dt_copy(res, count, type, rbuf, count, type, &n);
    ep_sync_barrier(c); /* everyone has copied */
    if (ep->lidx == 0)
        free(block);
    return rc;
}

ep_status_t ep_coll_allreduce(ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                              MPI_Op op)
{
    return reduce_common(ep, sbuf, rbuf, count, type, op, -1);
}

ep_status_t ep_coll_reduce(ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                           int root)
{
    return reduce_common(ep, sbuf, rbuf, count, type, op, root);
}

/* Reduce_scatter(_block): a full reduction into a temporary, then each rank
 * keeps its part.  counts NULL: every part has `count` elements. */
ep_status_t ep_coll_reduce_scatter(ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, const int *counts,
                                   MPI_Datatype type, MPI_Op op)
{
    ep_comm_t *c = ep->comm;
    MPI_Aint lb, ext;
    int total = 0, mine = 0;
    int64_t n;
    for (int r = 0; r < c->size; r++) {
        int k = counts ? counts[r] : count;
        if (r < ep->rank)
            mine += k;
        total += k;
    }
    void *block = NULL;
    char *tmp = typed_alloc(total, type, &block);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    /* Take part even without memory, so that the others do not hang. */
    ep_status_t rc = reduce_common(ep, in, tmp ? (void *)tmp : rbuf, tmp ? total : 0, type, op, -1);
    if (!tmp)
        rc = EP_ERR_NO_MEM;
    if (!rc) {
        PMPI_Type_get_extent(type, &lb, &ext);
        int k = counts ? counts[ep->rank] : count;
        rc = ep_dt_copy(tmp + (MPI_Aint)mine * ext, k, type, rbuf, k, type, &n);
    }
    free(block);
    return rc;
}

/* Inclusive (scan) or exclusive (exscan) prefix reduction in rank order. */
ep_status_t ep_coll_scan(ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                         int exclusive)
{
    ep_comm_t *c = ep->comm;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    MPI_Aint lb, ext;
    int64_t n;
    ep_status_t rc = EP_OK;
    PMPI_Type_get_extent(type, &lb, &ext);

    if (!c->blocked || ep_config.coll_gathered) {
        /* Ranks not grouped by process: gather every input, fold our prefix. */
        void *block = NULL, *ablock = NULL;
        const void **xs = NULL;
        int upto = exclusive ? ep->rank : ep->rank + 1; /* inputs 0 .. upto-1 */
        rc = gather_inputs(ep, in, count, type, &block, &xs);
        if (!rc && upto > 0) {
            void *acc = typed_alloc(count, type, &ablock);
            if (!acc)
                rc = EP_ERR_NO_MEM;
            else {
                fold(acc, xs, upto, count, type, op);
                rc = ep_dt_copy(acc, count, type, rbuf, count, type, &n);
            }
        }
        free(xs);
        free(block);
        free(ablock);
        return rc;
    }
    /* Blocked: local index 0 folds the local prefixes and gets the prefix of
     * the processes before it with one PMPI_Exscan of the local totals. */
    publish(ep, (void *)in);
    ep_sync_barrier(c);
    void *block = NULL;
    if (ep->lidx == 0) {
        int nl = c->nlocal;
        MPI_Aint span = (MPI_Aint)count * ext;
        /* Slot k (0..nl): the prefix this process's rank k-1 ends with, and
         * slot nl+1 the earlier processes' prefix. */
        char *pre = typed_alloc(count * (nl + 2), type, &block);
        if (!pre)
            rc = EP_ERR_NO_MEM;
        else {
            const void *const *xs = (const void *const *)c->sync.ptr;
            char *before = pre + (MPI_Aint)(nl + 1) * span;
            for (int k = 1; k <= nl; k++) {
                /* local prefix over ranks 0..k-1 of this process */
                ep_dt_copy(xs[k - 1], count, type, pre + k * span, count, type, &n);
                if (k > 1) {
                    /* pre[k] = pre[k-1] op x[k-1]: reduce_local computes in op inout */
                    PMPI_Reduce_local(pre + (k - 1) * span, pre + k * span, count, type, op);
                }
            }
            if (c->pcomm != MPI_COMM_NULL) {
                MPI_Request req;
                rc = pmpi_finish(PMPI_Iexscan(pre + nl * span, before, count, type, op, c->pcomm, &req), &req);
            }
            if (!rc && c->myproc > 0)
                for (int k = 1; k <= nl; k++) /* earlier processes first */
                    PMPI_Reduce_local(before, pre + k * span, count, type, op);
            if (c->myproc > 0)
                ep_dt_copy(before, count, type, pre, count, type, &n); /* slot 0: what rank 0 of us excludes */
        }
        atomic_store(&c->sync.status, rc);
        atomic_store(&c->sync.result, pre);
    }
    ep_sync_barrier(c);
    rc = atomic_load(&c->sync.status);
    char *pre = atomic_load(&c->sync.result);
    /* Inclusive: slot lidx+1; exclusive: slot lidx (undefined for rank 0). */
    int slot = exclusive ? ep->lidx : ep->lidx + 1;
    if (!rc && !(exclusive && ep->lidx == 0 && c->myproc == 0))
        rc = ep_dt_copy(pre + (MPI_Aint)slot * count * ext, count, type, rbuf, count, type, &n);
    ep_sync_barrier(c);
    if (ep->lidx == 0)
        free(block);
    return rc;
}

ep_status_t ep_coll_allgather(ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                              int rcount, MPI_Datatype rtype)
{
    ep_comm_t *c = ep->comm;
    ep_dt_layout_t rl, one;
    ep_status_t rc;
    MPI_Aint lb, ext;
    MPI_Request req;

    if ((rc = ep_dt_layout(rtype, rcount, &rl)))
        return rc;
    PMPI_Type_get_extent(rtype, &lb, &ext);
    int64_t blk = rl.bytes;
    ep_coll_arg_t mine = {sbuf, scount, stype};
    if (sbuf == MPI_IN_PLACE)
        mine = (ep_coll_arg_t){(char *)rbuf + (MPI_Aint)ep->rank * rcount * ext, rcount, rtype};
    publish(ep, &mine);
    ep_sync_barrier(c);
    if (ep->lidx == 0) {
        char *all = malloc(blk * c->size > 0 ? (size_t)(blk * c->size) : 1);
        if (all) {
            /* Pack this process's blocks in local order, at its offset. */
            for (int i = 0; i < c->nlocal; i++) {
                ep_coll_arg_t *a = published(c, i);
                ep_dt_layout_t sl;
                if (!ep_dt_layout(a->type, a->count, &sl))
                    ep_dt_pack(a->buf, a->count, a->type, &sl, all + (c->proc_first[c->myproc] + i) * blk);
            }
            if (c->pcomm != MPI_COMM_NULL) {
                int *cnt = malloc(sizeof(int) * (size_t)c->nprocs), *dsp = malloc(sizeof(int) * (size_t)c->nprocs);
                if (!cnt || !dsp || blk * c->size > INT32_MAX)
                    rc = EP_ERR_NO_MEM;
                else {
                    for (int p = 0; p < c->nprocs; p++) {
                        cnt[p] = (int)(c->proc_nlocal[p] * blk);
                        dsp[p] = (int)(c->proc_first[p] * blk);
                    }
                    rc = pmpi_finish(PMPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_BYTE, all, cnt, dsp, MPI_BYTE, c->pcomm, &req),
                                     &req);
                }
                free(cnt);
                free(dsp);
            }
        } else
            rc = EP_ERR_NO_MEM;
        atomic_store(&c->sync.result, all);
    }
    ep_sync_barrier(c);
    char *all = atomic_load(&c->sync.result);
    if (all) {
        /* Blocks are stored by process; the receive buffer is in rank order. */
        ep_dt_layout(rtype, rcount, &one);
        for (int r = 0; r < c->size; r++) {
            if (sbuf == MPI_IN_PLACE && r == ep->rank)
                continue;
            ep_rank_loc_t loc = c->ranks[r];
            ep_dt_unpack(all + (c->proc_first[loc.proc] + loc.lidx) * blk, blk, (char *)rbuf + (MPI_Aint)r * rcount * ext,
                         rcount, rtype, &one);
        }
    } else if (!rc)
        rc = EP_ERR_NO_MEM;
    ep_sync_barrier(c);
    if (ep->lidx == 0)
        free(all);
    return rc;
}
