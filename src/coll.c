#include "coll.h"

#include "datatype.h"
#include "net.h"

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

ep_status_t ep_coll_allreduce(ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                              MPI_Op op)
{
    ep_comm_t *c = ep->comm;
    ep_status_t rc = EP_OK;
    int commute = 1;
    int64_t n;
    MPI_Request req;

    PMPI_Op_commutative(op, &commute);
    if (!commute && !c->blocked)
        return EP_ERR_UNSUPPORTED;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (c->nlocal == 1) {
        if (in != rbuf && (rc = ep_dt_copy(in, count, type, rbuf, count, type, &n)))
            return rc;
        if (c->pcomm != MPI_COMM_NULL)
            rc = pmpi_finish(PMPI_Iallreduce(MPI_IN_PLACE, rbuf, count, type, op, c->pcomm, &req), &req);
        return rc;
    }
    publish(ep, (void *)in);
    ep_sync_barrier(c);
    void *block = NULL, *acc = NULL;
    if (ep->lidx == 0) {
        /* Local endpoints are numbered in rank order; combine right to left so
         * that acc = x0 op (x1 op (... op xn-1)), which keeps rank order for
         * non-commutative operations (MPI requires associativity). */
        acc = typed_alloc(count, type, &block);
        if (!acc)
            rc = EP_ERR_NO_MEM;
        else {
            ep_dt_copy(published(c, c->nlocal - 1), count, type, acc, count, type, &n);
            for (int i = c->nlocal - 2; i >= 0; i--)
                PMPI_Reduce_local(published(c, i), acc, count, type, op);
            if (c->pcomm != MPI_COMM_NULL)
                rc = pmpi_finish(PMPI_Iallreduce(MPI_IN_PLACE, acc, count, type, op, c->pcomm, &req), &req);
        }
        atomic_store(&c->sync.result, acc);
    }
    ep_sync_barrier(c); /* acc is ready; everyone's input has been read */
    void *res = atomic_load(&c->sync.result);
    if (res)
        ep_dt_copy(res, count, type, rbuf, count, type, &n);
    else
        rc = EP_ERR_NO_MEM;
    ep_sync_barrier(c); /* everyone has copied */
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
