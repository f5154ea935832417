#include "coll_xchg.h"

#include "datatype.h"
#include "net.h"

#include <stdlib.h>
#include <string.h>

/* What local index 0 publishes once the bytes have arrived. */
typedef struct xchg_result {
    char *buf;    /* received bytes (the send buffer when nprocs == 1) */
    int64_t *off; /* [rank * nlocal + lidx] where block rank -> lidx starts */
} xchg_result_t;

static int64_t block_bytes(const ep_block_t *b)
{
    ep_dt_layout_t l;
    if (b->count <= 0 || ep_dt_layout(b->type, b->count, &l))
        return 0;
    return l.bytes;
}

/* Local index 0: packs, exchanges, and computes where each block landed. */
static ep_status_t leader_exchange(ep_comm_t *c, xchg_result_t *res, char **sendbuf)
{
    int n = c->nlocal, np = c->nprocs;
    ep_status_t rc = EP_OK;
    int64_t total_s = 0, total_r = 0;
    int64_t *sd = calloc((size_t)np, sizeof *sd), *rd = calloc((size_t)np, sizeof *rd);
    int64_t *scnt = calloc((size_t)np, sizeof *scnt), *rcnt = calloc((size_t)np, sizeof *rcnt);
    int *isc = NULL, *isd = NULL, *irc = NULL, *ird = NULL;
    res->off = malloc(sizeof *res->off * (size_t)c->size * (size_t)n);
    if (!sd || !rd || !scnt || !rcnt || !res->off) {
        rc = EP_ERR_NO_MEM;
        goto out;
    }
    /* Sizes, in the layout described in coll_xchg.h. */
    for (int q = 0; q < np; q++) {
        sd[q] = total_s;
        for (int i = 0; i < n; i++) {
            const ep_xchg_t *xi = atomic_load(&c->sync.ptr[i]);
            for (int k = 0; k < c->proc_nlocal[q]; k++) {
                ep_block_t b = {NULL, 0, MPI_BYTE};
                xi->send_block(xi, c->proc_ranks[c->proc_first[q] + k], &b);
                total_s += block_bytes(&b);
            }
        }
        scnt[q] = total_s - sd[q];
    }
    for (int p = 0; p < np; p++) {
        rd[p] = total_r;
        for (int k = 0; k < c->proc_nlocal[p]; k++) {
            int s = c->proc_ranks[c->proc_first[p] + k];
            for (int j = 0; j < n; j++) {
                const ep_xchg_t *xj = atomic_load(&c->sync.ptr[j]);
                ep_block_t b = {NULL, 0, MPI_BYTE};
                xj->recv_block(xj, s, &b);
                res->off[(size_t)s * n + j] = total_r;
                total_r += block_bytes(&b);
            }
        }
        rcnt[p] = total_r - rd[p];
    }
    if (!(*sendbuf = malloc(total_s ? (size_t)total_s : 1))) {
        rc = EP_ERR_NO_MEM;
        goto out;
    }
    char *pos = *sendbuf;
    for (int q = 0; q < np; q++)
        for (int i = 0; i < n; i++) {
            const ep_xchg_t *xi = atomic_load(&c->sync.ptr[i]);
            for (int k = 0; k < c->proc_nlocal[q]; k++) {
                ep_block_t b = {NULL, 0, MPI_BYTE};
                ep_dt_layout_t l;
                xi->send_block(xi, c->proc_ranks[c->proc_first[q] + k], &b);
                if (b.count > 0 && !ep_dt_layout(b.type, b.count, &l)) {
                    ep_dt_pack(b.buf, b.count, b.type, &l, pos);
                    pos += l.bytes;
                }
            }
        }
    if (c->pcomm == MPI_COMM_NULL) {
        res->buf = *sendbuf; /* one process: what it sends is what it receives */
        goto out;
    }
    if (total_s > INT32_MAX || total_r > INT32_MAX) {
        rc = EP_ERR_COUNT; /* byte displacements of PMPI_Alltoallv are ints */
        goto out;
    }
    isc = malloc(sizeof(int) * (size_t)np);
    isd = malloc(sizeof(int) * (size_t)np);
    irc = malloc(sizeof(int) * (size_t)np);
    ird = malloc(sizeof(int) * (size_t)np);
    res->buf = malloc(total_r ? (size_t)total_r : 1);
    if (!isc || !isd || !irc || !ird || !res->buf) {
        rc = EP_ERR_NO_MEM;
        goto out;
    }
    for (int p = 0; p < np; p++) {
        isc[p] = (int)scnt[p];
        isd[p] = (int)sd[p];
        irc[p] = (int)rcnt[p];
        ird[p] = (int)rd[p];
    }
    MPI_Request req;
    if (PMPI_Ialltoallv(*sendbuf, isc, isd, MPI_BYTE, res->buf, irc, ird, MPI_BYTE, c->pcomm, &req) != MPI_SUCCESS ||
        ep_net_wait_pmpi(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        rc = EP_ERR_INTERN;
out:
    free(sd);
    free(rd);
    free(scnt);
    free(rcnt);
    free(isc);
    free(isd);
    free(irc);
    free(ird);
    return rc;
}

ep_status_t ep_coll_exchange(ep_endpoint_t *ep, const ep_xchg_t *x)
{
    ep_comm_t *c = ep->comm;
    xchg_result_t res = {NULL, NULL};
    char *sendbuf = NULL;

    atomic_store(&c->sync.ptr[ep->lidx], (void *)x);
    ep_sync_barrier(c);
    if (ep->lidx == 0) {
        ep_status_t rc = leader_exchange(c, &res, &sendbuf);
        atomic_store(&c->sync.status, rc);
        atomic_store(&c->sync.result, rc ? NULL : &res);
    }
    ep_sync_barrier(c); /* everything is packed: receive buffers may be written */
    ep_status_t rc = atomic_load(&c->sync.status);
    const xchg_result_t *r = atomic_load(&c->sync.result);
    if (!rc && r) {
        for (int s = 0; s < c->size; s++) {
            ep_block_t b = {NULL, 0, MPI_BYTE};
            ep_dt_layout_t l;
            x->recv_block(x, s, &b);
            if (b.count > 0 && !ep_dt_layout(b.type, b.count, &l))
                ep_dt_unpack(r->buf + r->off[(size_t)s * c->nlocal + ep->lidx], l.bytes, (void *)b.buf, b.count,
                             b.type, &l);
        }
    }
    ep_sync_barrier(c); /* everyone has unpacked */
    if (ep->lidx == 0) {
        if (res.buf != sendbuf)
            free(res.buf);
        free(sendbuf);
        free(res.off);
    }
    return rc;
}

/* ---- the collectives as exchanges ---------------------------------------- */

static const ep_block_t none = {NULL, 0, MPI_BYTE};

static const char *at(const void *buf, MPI_Aint disp, MPI_Aint ext) { return (const char *)buf + disp * ext; }

static void nothing(const ep_xchg_t *x, int peer, ep_block_t *b)
{
    (void)x;
    (void)peer;
    *b = none;
}

ep_status_t ep_coll_exchange_nothing(ep_endpoint_t *ep)
{
    ep_xchg_t x = {.send_block = nothing, .recv_block = nothing, .me = ep->rank};
    return ep_coll_exchange(ep, &x);
}

/* Gather(v): everyone sends one block to the root; the root receives one
 * from everyone (its own stays in place under MPI_IN_PLACE). */
static void gather_send(const ep_xchg_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (peer == x->root && !(x->me == x->root && x->sbuf == MPI_IN_PLACE))
        *b = (ep_block_t){x->sbuf, x->scount, x->stype};
}

static void gather_recv(const ep_xchg_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (x->me != x->root || (peer == x->me && x->sbuf == MPI_IN_PLACE))
        return;
    if (x->rcounts)
        *b = (ep_block_t){at(x->rbuf, x->rdispls[peer], x->rext), x->rcounts[peer], x->rtype};
    else
        *b = (ep_block_t){at(x->rbuf, (MPI_Aint)peer * x->rcount, x->rext), x->rcount, x->rtype};
}

ep_status_t ep_coll_gatherv(ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype, int root)
{
    MPI_Aint lb, ext = 0;
    if (ep->rank == root)
        PMPI_Type_get_extent(rtype, &lb, &ext);
    ep_xchg_t x = {.send_block = gather_send, .recv_block = gather_recv, .me = ep->rank, .root = root,
                   .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf, .rcount = rcount,
                   .rcounts = rcounts, .rdispls = displs, .rtype = rtype, .rext = ext};
    return ep_coll_exchange(ep, &x);
}

/* Scatter(v): the mirror image. */
static void scatter_send(const ep_xchg_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (x->me != x->root || (peer == x->me && x->rbuf == MPI_IN_PLACE))
        return;
    if (x->scounts)
        *b = (ep_block_t){at(x->sbuf, x->sdispls[peer], x->sext), x->scounts[peer], x->stype};
    else
        *b = (ep_block_t){at(x->sbuf, (MPI_Aint)peer * x->scount, x->sext), x->scount, x->stype};
}

static void scatter_recv(const ep_xchg_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (peer == x->root && !(x->me == x->root && x->rbuf == MPI_IN_PLACE))
        *b = (ep_block_t){x->rbuf, x->rcount, x->rtype};
}

ep_status_t ep_coll_scatterv(ep_endpoint_t *ep, const void *sbuf, int scount, const int *scounts, const int *displs,
                             MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root)
{
    MPI_Aint lb, ext = 0;
    if (ep->rank == root)
        PMPI_Type_get_extent(stype, &lb, &ext);
    ep_xchg_t x = {.send_block = scatter_send, .recv_block = scatter_recv, .me = ep->rank, .root = root,
                   .sbuf = sbuf, .scount = scount, .scounts = scounts, .sdispls = displs, .stype = stype,
                   .sext = ext, .rbuf = rbuf, .rcount = rcount, .rtype = rtype};
    return ep_coll_exchange(ep, &x);
}

/* Allgatherv: one block to everyone; under MPI_IN_PLACE the block is this
 * rank's part of the receive buffer, which stays where it is. */
static void allgatherv_send(const ep_xchg_t *x, int peer, ep_block_t *b)
{
    if (x->sbuf != MPI_IN_PLACE)
        *b = (ep_block_t){x->sbuf, x->scount, x->stype};
    else if (peer == x->me)
        *b = none;
    else
        *b = (ep_block_t){at(x->rbuf, x->rdispls[x->me], x->rext), x->rcounts[x->me], x->rtype};
}

static void allgatherv_recv(const ep_xchg_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (!(peer == x->me && x->sbuf == MPI_IN_PLACE))
        *b = (ep_block_t){at(x->rbuf, x->rdispls[peer], x->rext), x->rcounts[peer], x->rtype};
}

ep_status_t ep_coll_allgatherv(ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                               const int *rcounts, const int *displs, MPI_Datatype rtype)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(rtype, &lb, &ext);
    ep_xchg_t x = {.send_block = allgatherv_send, .recv_block = allgatherv_recv, .me = ep->rank, .sbuf = sbuf,
                   .scount = scount, .stype = stype, .rbuf = rbuf, .rcounts = rcounts, .rdispls = displs,
                   .rtype = rtype, .rext = ext};
    return ep_coll_exchange(ep, &x);
}

/* All-to-all in its three forms.  Under MPI_IN_PLACE the send blocks are
 * the receive blocks: safe, because every block is packed before any
 * receive buffer is written. */
static void a2a_block(const void *buf, int count, const int *counts, const int *displs, MPI_Datatype type,
                      const MPI_Datatype *types, MPI_Aint ext, int peer, ep_block_t *b)
{
    if (counts)
        *b = (ep_block_t){at(buf, displs[peer], ext), counts[peer], types ? types[peer] : type};
    else
        *b = (ep_block_t){at(buf, (MPI_Aint)peer * count, ext), count, type};
}

static void a2a_send(const ep_xchg_t *x, int peer, ep_block_t *b)
{
    if (x->sbuf == MPI_IN_PLACE)
        a2a_block(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rtypes, x->rext, peer, b);
    else
        a2a_block(x->sbuf, x->scount, x->scounts, x->sdispls, x->stype, x->stypes, x->sext, peer, b);
}

static void a2a_recv(const ep_xchg_t *x, int peer, ep_block_t *b)
{
    a2a_block(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rtypes, x->rext, peer, b);
}

ep_status_t ep_coll_alltoallw(ep_endpoint_t *ep, const void *sbuf, int scount, const int *scounts,
                              const int *sdispls, MPI_Datatype stype, const MPI_Datatype *stypes, void *rbuf,
                              int rcount, const int *rcounts, const int *rdispls, MPI_Datatype rtype,
                              const MPI_Datatype *rtypes, int byte_displs)
{
    MPI_Aint lb, sext = 1, rext = 1;
    if (!byte_displs) {
        if (sbuf != MPI_IN_PLACE)
            PMPI_Type_get_extent(stype, &lb, &sext);
        PMPI_Type_get_extent(rtype, &lb, &rext);
    }
    ep_xchg_t x = {.send_block = a2a_send, .recv_block = a2a_recv, .me = ep->rank, .sbuf = sbuf, .scount = scount,
                   .scounts = scounts, .sdispls = sdispls, .stype = stype, .stypes = stypes, .sext = sext,
                   .rbuf = rbuf, .rcount = rcount, .rcounts = rcounts, .rdispls = rdispls, .rtype = rtype,
                   .rtypes = rtypes, .rext = rext};
    return ep_coll_exchange(ep, &x);
}
