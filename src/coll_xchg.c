/* The data-movement collectives (gather, scatter, all-to-all and their v / w
 * forms, allgatherv) as one kind: an exchange in which every endpoint
 * names, for each peer rank, the block it sends to it and the block it
 * receives from it (ep_coll_args_t's send_block / recv_block).
 *
 * Local index 0 packs all blocks bound for each process into one byte
 * buffer, ordered
 *
 *     for each destination process q:
 *       for each local source endpoint i (lidx order):
 *         for each rank r living in q (q's lidx order): block i -> r
 *
 * and runs one PMPI_Ialltoallv on the process-level communicator (or none
 * when the communicator lives in one process: the receive layout is then
 * the send layout).  Every endpoint then unpacks the blocks addressed to
 * it, in rank order, straight into its receive buffer.  Any rank map works:
 * ranks of one process need not be contiguous.  The gathered reductions
 * (coll.c) reuse the exchange. */
#include "coll.h"

#include "datatype.h"

#include <stdlib.h>
#include <string.h>

/* Where blocks land: scratch[0] the packed send buffer, scratch[1] the
 * received bytes (NULL when one process: the send buffer is the receive
 * buffer), scratch[2] the offsets [rank * nlocal + lidx] of block
 * rank -> lidx, scratch[3] the PMPI counts and displacements. */

static int64_t block_bytes(const ep_block_t *b)
{
    ep_dt_layout_t l;
    if (b->count <= 0 || ep_dt_layout(b->type, b->count, &l))
        return 0;
    return l.bytes;
}

/* Packs every local block in the order of coll_xchg.h and starts one
 * PMPI_Ialltoallv. */
ep_status_t ep_coll_xchg_start(ep_coll_inst_t *in)
{
    ep_comm_t *c = in->c;
    int n = c->nlocal, np = c->nprocs;
    int64_t total_s = 0, total_r = 0;
    int64_t *sd = calloc(4 * (size_t)np, sizeof *sd), *rd = sd + np, *scnt = rd + np, *rcnt = scnt + np;
    int64_t *off = malloc(sizeof *off * (size_t)c->size * (size_t)n);
    ep_status_t rc = EP_OK;
    in->scratch[2] = off;
    if (!sd || !off) {
        free(sd);
        return EP_ERR_NO_MEM;
    }
    /* Sizes, in the layout described in coll_xchg.h. */
    for (int q = 0; q < np; q++) {
        sd[q] = total_s;
        for (int i = 0; i < n; i++) {
            const ep_coll_args_t *ai = in->args[i];
            for (int k = 0; k < c->proc_nlocal[q]; k++) {
                ep_block_t b = {NULL, 0, MPI_BYTE};
                ai->send_block(ai, c->proc_ranks[c->proc_first[q] + k], &b);
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
                const ep_coll_args_t *aj = in->args[j];
                ep_block_t b = {NULL, 0, MPI_BYTE};
                aj->recv_block(aj, s, &b);
                off[(size_t)s * n + j] = total_r;
                total_r += block_bytes(&b);
            }
        }
        rcnt[p] = total_r - rd[p];
    }
    char *sendbuf = in->scratch[0] = malloc(total_s ? (size_t)total_s : 1);
    if (!sendbuf) {
        rc = EP_ERR_NO_MEM;
        goto out;
    }
    char *pos = sendbuf;
    for (int q = 0; q < np; q++)
        for (int i = 0; i < n; i++) {
            const ep_coll_args_t *ai = in->args[i];
            for (int k = 0; k < c->proc_nlocal[q]; k++) {
                ep_block_t b = {NULL, 0, MPI_BYTE};
                ep_dt_layout_t l;
                ai->send_block(ai, c->proc_ranks[c->proc_first[q] + k], &b);
                if (b.count > 0 && !ep_dt_layout(b.type, b.count, &l)) {
                    ep_dt_pack(b.buf, b.count, b.type, &l, pos);
                    pos += l.bytes;
                }
            }
        }
    if (c->pcomm == MPI_COMM_NULL)
        goto out; /* one process: what it sends is what it receives */
    if (total_s > INT32_MAX || total_r > INT32_MAX) {
        rc = EP_ERR_COUNT; /* byte displacements of PMPI_Alltoallv are ints */
        goto out;
    }
    int *iv = in->scratch[3] = malloc(4 * sizeof(int) * (size_t)np);
    if (!iv || !(in->scratch[1] = malloc(total_r ? (size_t)total_r : 1))) {
        rc = EP_ERR_NO_MEM;
        goto out;
    }
    for (int p = 0; p < np; p++) {
        iv[p] = (int)scnt[p];
        iv[np + p] = (int)sd[p];
        iv[2 * np + p] = (int)rcnt[p];
        iv[3 * np + p] = (int)rd[p];
    }
    if (PMPI_Ialltoallv(sendbuf, iv, iv + np, MPI_BYTE, in->scratch[1], iv + 2 * np, iv + 3 * np, MPI_BYTE, c->pcomm,
                        &in->preq) != MPI_SUCCESS)
        rc = EP_ERR_INTERN;
out:
    free(sd);
    return rc;
}

/* Unpacks the blocks addressed to local endpoint lidx, in rank order. */
ep_status_t ep_coll_xchg_finish(ep_coll_inst_t *in, int lidx)
{
    ep_comm_t *c = in->c;
    const ep_coll_args_t *a = in->args[lidx];
    const char *buf = in->scratch[1] ? in->scratch[1] : in->scratch[0];
    const int64_t *off = in->scratch[2];
    for (int s = 0; s < c->size; s++) {
        ep_block_t b = {NULL, 0, MPI_BYTE};
        ep_dt_layout_t l;
        a->recv_block(a, s, &b);
        if (b.count > 0 && !ep_dt_layout(b.type, b.count, &l))
            ep_dt_unpack(buf + off[(size_t)s * c->nlocal + lidx], l.bytes, (void *)b.buf, b.count, b.type, &l);
    }
    return EP_OK;
}

static const ep_coll_kind_t xchg_kind = {"exchange", ep_coll_xchg_start, NULL, ep_coll_xchg_finish};

/* ---- the collectives as exchanges ---------------------------------------- */

static const ep_block_t none = {NULL, 0, MPI_BYTE};

static const char *at(const void *buf, MPI_Aint disp, MPI_Aint ext) { return (const char *)buf + disp * ext; }

/* Intercommunicators: blocks travel between the groups only, and a peer's
 * place in the buffers is its rank in the remote group (peer - roff).
 * Under MPI_ROOT the root's side; a rank of the other group names the
 * root; MPI_PROC_NULL takes no part. */
static int remote_rank(const ep_coll_args_t *x, int peer)
{
    return peer >= x->roff && peer < x->roff + x->rsize ? peer - x->roff : -1;
}

static int from_root(const ep_coll_args_t *x, int peer) { return x->root >= 0 && peer == x->roff + x->root; }

static void ibcast_send(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (x->root == MPI_ROOT && remote_rank(x, peer) >= 0)
        *b = (ep_block_t){x->rbuf, x->rcount, x->rtype};
}

static void ibcast_recv(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (from_root(x, peer))
        *b = (ep_block_t){x->rbuf, x->rcount, x->rtype};
}

static void iblock(const void *buf, int count, const int *counts, const int *displs, MPI_Datatype type,
                   MPI_Aint ext, int r, ep_block_t *b)
{
    if (counts)
        *b = (ep_block_t){at(buf, displs[r], ext), counts[r], type};
    else
        *b = (ep_block_t){at(buf, (MPI_Aint)r * count, ext), count, type};
}

static void igather_send(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (from_root(x, peer))
        *b = (ep_block_t){x->sbuf, x->scount, x->stype};
}

static void igather_recv(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    int r = remote_rank(x, peer);
    *b = none;
    if (x->root == MPI_ROOT && r >= 0)
        iblock(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rext, r, b);
}

static void iscatter_send(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    int r = remote_rank(x, peer);
    *b = none;
    if (x->root == MPI_ROOT && r >= 0)
        iblock(x->sbuf, x->scount, x->scounts, x->sdispls, x->stype, x->sext, r, b);
}

static void iscatter_recv(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (from_root(x, peer))
        *b = (ep_block_t){x->rbuf, x->rcount, x->rtype};
}

static void iallgather_send(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (remote_rank(x, peer) >= 0)
        *b = (ep_block_t){x->sbuf, x->scount, x->stype};
}

static void iallgather_recv(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    int r = remote_rank(x, peer);
    *b = none;
    if (r >= 0)
        iblock(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rext, r, b);
}

static void a2a_block(const void *buf, int count, const int *counts, const int *displs, MPI_Datatype type,
                      const MPI_Datatype *types, MPI_Aint ext, int peer, ep_block_t *b);

static void ia2a_send(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    int r = remote_rank(x, peer);
    *b = none;
    if (r >= 0)
        a2a_block(x->sbuf, x->scount, x->scounts, x->sdispls, x->stype, x->stypes, x->sext, r, b);
}

static void ia2a_recv(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    int r = remote_rank(x, peer);
    *b = none;
    if (r >= 0)
        a2a_block(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rtypes, x->rext, r, b);
}

typedef void (*block_fn)(const ep_coll_args_t *, int, ep_block_t *);

/* Makes a's exchange the intercommunicator form when ep's communicator is one. */
static void inter_form(ep_coll_args_t *a, const ep_endpoint_t *ep, block_fn send, block_fn recv)
{
    a->roff = ep->comm->group_off[ep_remote_side(ep)];
    a->rsize = ep_remote_size(ep);
    if (ep->comm->inter) {
        a->send_block = send;
        a->recv_block = recv;
    }
}

/* Does this rank hold the root's arguments? */
static int at_root(const ep_endpoint_t *ep, int root) { return ep->comm->inter ? root == MPI_ROOT : ep->rank == root; }

/* Gather(v): everyone sends one block to the root; the root receives one
 * from everyone (its own stays in place under MPI_IN_PLACE). */
static void gather_send(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (peer == x->root && !(x->me == x->root && x->sbuf == MPI_IN_PLACE))
        *b = (ep_block_t){x->sbuf, x->scount, x->stype};
}

static void gather_recv(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (x->me != x->root || (peer == x->me && x->sbuf == MPI_IN_PLACE))
        return;
    if (x->rcounts)
        *b = (ep_block_t){at(x->rbuf, x->rdispls[peer], x->rext), x->rcounts[peer], x->rtype};
    else
        *b = (ep_block_t){at(x->rbuf, (MPI_Aint)peer * x->rcount, x->rext), x->rcount, x->rtype};
}

void ep_coll_gatherv(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype, int root)
{
    MPI_Aint lb, ext = 0;
    if (at_root(ep, root))
        PMPI_Type_get_extent(rtype, &lb, &ext);
    *a = (ep_coll_args_t){.kind = &xchg_kind, .send_block = gather_send, .recv_block = gather_recv, .me = ep->rank, .root = root,
                   .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf, .rcount = rcount,
                   .rcounts = rcounts, .rdispls = displs, .rtype = rtype, .rext = ext};
    inter_form(a, ep, igather_send, igather_recv);
}

/* Scatter(v): the mirror image. */
static void scatter_send(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (x->me != x->root || (peer == x->me && x->rbuf == MPI_IN_PLACE))
        return;
    if (x->scounts)
        *b = (ep_block_t){at(x->sbuf, x->sdispls[peer], x->sext), x->scounts[peer], x->stype};
    else
        *b = (ep_block_t){at(x->sbuf, (MPI_Aint)peer * x->scount, x->sext), x->scount, x->stype};
}

static void scatter_recv(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (peer == x->root && !(x->me == x->root && x->rbuf == MPI_IN_PLACE))
        *b = (ep_block_t){x->rbuf, x->rcount, x->rtype};
}

void ep_coll_scatterv(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, const int *scounts, const int *displs,
                             MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root)
{
    MPI_Aint lb, ext = 0;
    if (at_root(ep, root))
        PMPI_Type_get_extent(stype, &lb, &ext);
    *a = (ep_coll_args_t){.kind = &xchg_kind, .send_block = scatter_send, .recv_block = scatter_recv, .me = ep->rank, .root = root,
                   .sbuf = sbuf, .scount = scount, .scounts = scounts, .sdispls = displs, .stype = stype,
                   .sext = ext, .rbuf = rbuf, .rcount = rcount, .rtype = rtype};
    inter_form(a, ep, iscatter_send, iscatter_recv);
}

/* Allgatherv: one block to everyone; under MPI_IN_PLACE the block is this
 * rank's part of the receive buffer, which stays where it is. */
static void allgatherv_send(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    if (x->sbuf != MPI_IN_PLACE)
        *b = (ep_block_t){x->sbuf, x->scount, x->stype};
    else if (peer == x->me)
        *b = none;
    else
        *b = (ep_block_t){at(x->rbuf, x->rdispls[x->me], x->rext), x->rcounts[x->me], x->rtype};
}

static void allgatherv_recv(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    *b = none;
    if (!(peer == x->me && x->sbuf == MPI_IN_PLACE))
        *b = (ep_block_t){at(x->rbuf, x->rdispls[peer], x->rext), x->rcounts[peer], x->rtype};
}

void ep_coll_allgatherv(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                               const int *rcounts, const int *displs, MPI_Datatype rtype)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(rtype, &lb, &ext);
    *a = (ep_coll_args_t){.kind = &xchg_kind, .send_block = allgatherv_send, .recv_block = allgatherv_recv, .me = ep->rank, .sbuf = sbuf,
                   .scount = scount, .stype = stype, .rbuf = rbuf, .rcounts = rcounts, .rdispls = displs,
                   .rtype = rtype, .rext = ext};
    inter_form(a, ep, iallgather_send, iallgather_recv);
}

/* Intercommunicator forms of collectives that have their own kind on
 * intracommunicators. */
void ep_coll_inter_allgather(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype,
                             void *rbuf, int rcount, MPI_Datatype rtype)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(rtype, &lb, &ext);
    *a = (ep_coll_args_t){.kind = &xchg_kind, .me = ep->rank, .sbuf = sbuf, .scount = scount, .stype = stype,
                          .rbuf = rbuf, .rcount = rcount, .rtype = rtype, .rext = ext};
    inter_form(a, ep, iallgather_send, iallgather_recv);
}

void ep_coll_inter_bcast(ep_coll_args_t *a, ep_endpoint_t *ep, void *buf, int count, MPI_Datatype type, int root)
{
    *a = (ep_coll_args_t){.kind = &xchg_kind, .me = ep->rank, .root = root, .rbuf = buf, .rcount = count,
                          .rtype = type};
    inter_form(a, ep, ibcast_send, ibcast_recv);
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

static void a2a_send(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    if (x->sbuf == MPI_IN_PLACE)
        a2a_block(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rtypes, x->rext, peer, b);
    else
        a2a_block(x->sbuf, x->scount, x->scounts, x->sdispls, x->stype, x->stypes, x->sext, peer, b);
}

static void a2a_recv(const ep_coll_args_t *x, int peer, ep_block_t *b)
{
    a2a_block(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rtypes, x->rext, peer, b);
}

void ep_coll_alltoallw(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, const int *scounts,
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
    *a = (ep_coll_args_t){.kind = &xchg_kind, .send_block = a2a_send, .recv_block = a2a_recv, .me = ep->rank, .sbuf = sbuf, .scount = scount,
                   .scounts = scounts, .sdispls = sdispls, .stype = stype, .stypes = stypes, .sext = sext,
                   .rbuf = rbuf, .rcount = rcount, .rcounts = rcounts, .rdispls = rdispls, .rtype = rtype,
                   .rtypes = rtypes, .rext = rext};
    inter_form(a, ep, ia2a_send, ia2a_recv);
}
