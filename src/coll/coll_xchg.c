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
 *         for each rank r living in q (q's lidx order): blocks i -> r
 *           (block 0, 1, ...: several only in neighbourhood collectives)
 *
 * and runs one PMPI_Ialltoallv_c on the process-level communicator (none
 * when the communicator lives in one process: the receive layout is then
 * the send layout).  Every endpoint then unpacks the blocks addressed to
 * it, in rank order, straight into its receive buffer.  Any rank map works:
 * ranks of one process need not be contiguous.  The gathered reductions
 * (coll.c) reuse the exchange. */
#include "coll/coll.h"
#include "abi/large.h"

#include "core/datatype.h"
#include "coll/topo.h"

#include <stdlib.h>
#include <string.h>

/* Where blocks land: scratch[0] the packed send buffer, scratch[1] the
 * received bytes (NULL when one process: the send buffer is the receive
 * buffer), scratch[2] the offsets [rank * nlocal + lidx] of block
 * rank -> lidx, scratch[3] the PMPI counts and displacements (MPI_Count, then
 * MPI_Aint). */

static int64_t block_bytes(const ep_block_t *b) { return ep_coll_bytes(b->type, b->count); }

/* Packs every local block in the order of coll_xchg.h and starts one
 * PMPI_Ialltoallv_c. */
ep_status_t ep_coll_xchg_start(ep_coll_inst_t *in)
{
    ep_comm_t *c = in->c;
    int n = c->nlocal, np = c->nprocs;
    int64_t total_s = 0, total_r = 0;
    /* The PMPI step's counts and displacements, in MPICH's large-count
     * form: more than 2 GiB may go to or come from a process (counts beyond
     * INT_MAX), and MPICH 4.0.2's int form converts to it anyway (no
     * slower, measured). */
    MPI_Count *scnt = in->scratch[3] = malloc((sizeof(MPI_Count) + sizeof(MPI_Aint)) * 2 * (size_t)np);
    int64_t *off = in->scratch[2] = malloc(sizeof *off * (size_t)c->size * (size_t)n);
    ep_status_t rc = EP_OK;
    if (!scnt || !off)
        return EP_ERR_NO_MEM;
    MPI_Count *rcnt = scnt + np;
    MPI_Aint *sd = (MPI_Aint *)(rcnt + np), *rd = sd + np;
    /* Sizes, in the layout described in coll_xchg.h. */
    for (int q = 0; q < np; q++) {
        sd[q] = total_s;
        for (int i = 0; i < n; i++) {
            const ep_coll_args_t *ai = in->args[i];
            for (int k = 0; k < c->proc_nlocal[q]; k++) {
                int peer = c->proc_ranks[c->proc_first[q] + k], more = 1;
                for (int e = 0; more; e++) {
                    ep_block_t b = {NULL, 0, MPI_BYTE};
                    more = ai->send_block(ai, peer, e, &b);
                    total_s += block_bytes(&b);
                }
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
                off[(size_t)s * n + j] = total_r;
                for (int e = 0, more = 1; more; e++) {
                    ep_block_t b = {NULL, 0, MPI_BYTE};
                    more = aj->recv_block(aj, s, e, &b);
                    total_r += block_bytes(&b);
                }
            }
        }
        rcnt[p] = total_r - rd[p];
    }
    char *sendbuf = in->scratch[0] = malloc(total_s ? (size_t)total_s : 1);
    if (!sendbuf)
        return EP_ERR_NO_MEM;
    char *pos = sendbuf;
    for (int q = 0; q < np; q++)
        for (int i = 0; i < n; i++) {
            const ep_coll_args_t *ai = in->args[i];
            for (int k = 0; k < c->proc_nlocal[q]; k++) {
                int peer = c->proc_ranks[c->proc_first[q] + k], more = 1;
                for (int e = 0; more; e++) {
                    ep_block_t b = {NULL, 0, MPI_BYTE};
                    ep_dt_layout_t l;
                    more = ai->send_block(ai, peer, e, &b);
                    if (b.count > 0 && !ep_dt_layout(b.type, b.count, &l)) {
                        /* A block that cannot be packed fails the call; the
                         * others still take their places and the PMPI step
                         * still runs, so the processes stay in step. */
                        ep_status_t p = ep_dt_pack(b.buf, b.count, b.type, &l, pos);
                        rc = rc ? rc : p;
                        pos += l.bytes;
                    }
                }
            }
        }
    if (c->pcomm == MPI_COMM_NULL)
        return rc; /* one process: what it sends is what it receives */
    if (!(in->scratch[1] = malloc(total_r ? (size_t)total_r : 1)))
        return EP_ERR_NO_MEM;
    if (ep_pmpi_ialltoallv_c(sendbuf, scnt, sd, MPI_BYTE, in->scratch[1], rcnt, rd, MPI_BYTE, c->pcomm, &in->preq) !=
            MPI_SUCCESS &&
        !rc)
        rc = EP_ERR_INTERN;
    return rc;
}

/* Unpacks the blocks addressed to local endpoint lidx, in rank order (a
 * peer's several blocks follow each other). */
ep_status_t ep_coll_xchg_finish(ep_coll_inst_t *in, int lidx)
{
    ep_comm_t *c = in->c;
    const ep_coll_args_t *a = in->args[lidx];
    const char *buf = in->scratch[1] ? in->scratch[1] : in->scratch[0];
    const int64_t *off = in->scratch[2];
    ep_status_t rc = EP_OK;
    for (int s = 0; s < c->size; s++) {
        const char *from = buf + off[(size_t)s * c->nlocal + lidx];
        for (int e = 0, more = 1; more; e++) {
            ep_block_t b = {NULL, 0, MPI_BYTE};
            ep_dt_layout_t l;
            more = a->recv_block(a, s, e, &b);
            if (b.count > 0 && !ep_dt_layout(b.type, b.count, &l)) {
                ep_status_t u = ep_dt_unpack(from, l.bytes, (void *)b.buf, b.count, b.type, &l);
                rc = rc ? rc : u;
                from += l.bytes;
            }
        }
    }
    return rc;
}

static const ep_coll_kind_t xchg_kind = {.start = ep_coll_xchg_start, .finish = ep_coll_xchg_finish, .copy_finish = 1};

/* ---- the collectives as exchanges ----------------------------------------
 *
 * Every block function only names peers the rank addresses (ep_coll_slot
 * >= 0: everyone in an intracommunicator, the other group in an
 * intercommunicator), and places a peer's block at its slot in per-rank
 * buffers.  Roots are ep_coll_args_t's root / at_root, so the same
 * functions serve both kinds of communicator (MPI_IN_PLACE only occurs on
 * intracommunicators). */

static const ep_block_t none = {NULL, 0, MPI_BYTE};

static const char *at(const void *buf, MPI_Aint disp, MPI_Aint ext) { return (const char *)buf + disp * ext; }

/* Block r of a per-rank buffer: counts NULL for the uniform form, types
 * NULL when all blocks have one type. */
static void block_at(const void *buf, int count, const int *counts, const int *displs, MPI_Datatype type,
                     const MPI_Datatype *types, MPI_Aint ext, int r, ep_block_t *b)
{
    if (counts)
        *b = (ep_block_t){at(buf, displs[r], ext), counts[r], types ? types[r] : type};
    else
        *b = (ep_block_t){at(buf, (MPI_Aint)r * count, ext), count, type};
}

/* Bcast: the root's buffer to everyone it addresses. */
static int bcast_send(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    (void)k;
    *b = none;
    if (x->at_root && ep_coll_slot(x, peer) >= 0)
        *b = (ep_block_t){x->rbuf, x->rcount, x->rtype};
    return 0;
}

static int bcast_recv(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    (void)k;
    *b = none;
    if (peer == x->root && !x->at_root)
        *b = (ep_block_t){x->rbuf, x->rcount, x->rtype};
    return 0;
}

void ep_coll_xchg_bcast(ep_coll_args_t *a, ep_endpoint_t *ep, void *buf, int count, MPI_Datatype type, int root)
{
    ep_coll_args_init(a, &xchg_kind, ep);
    a->traffic = ep_coll_bcast_traffic;
    a->send_block = bcast_send;
    a->recv_block = bcast_recv;
    ep_coll_recv_side(a, buf, count, type);
    ep_coll_set_root(a, ep, root);
}

/* Gather(v): everyone sends one block to the root; the root receives one
 * from everyone (its own stays in place under MPI_IN_PLACE). */
static int gather_send(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    (void)k;
    *b = none;
    if (peer == x->root && !(x->at_root && x->sbuf == MPI_IN_PLACE))
        *b = (ep_block_t){x->sbuf, x->scount, x->stype};
    return 0;
}

static int gather_recv(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    (void)k;
    int r = ep_coll_slot(x, peer);
    *b = none;
    if (x->at_root && r >= 0 && !(peer == x->me && x->sbuf == MPI_IN_PLACE))
        block_at(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rtypes, x->rext, r, b);
    return 0;
}

/* The blocks of the receive side (send side) for the rsize ranks the
 * call addresses, and the one of slot r. */
static int64_t recv_blocks(const ep_coll_args_t *x)
{
    return ep_coll_blocks_bytes(x->rsize, x->rcount, x->rcounts, x->rtype, x->rtypes);
}
static int64_t send_blocks(const ep_coll_args_t *x)
{
    return ep_coll_blocks_bytes(x->rsize, x->scount, x->scounts, x->stype, x->stypes);
}
static int64_t recv_block_of(const ep_coll_args_t *x, int r)
{
    return ep_coll_bytes(x->rtypes ? x->rtypes[r] : x->rtype, x->rcounts ? x->rcounts[r] : x->rcount);
}
static int64_t send_block_of(const ep_coll_args_t *x, int r)
{
    return ep_coll_bytes(x->stypes ? x->stypes[r] : x->stype, x->scounts ? x->scounts[r] : x->scount);
}

/* Every rank that addresses the root sends its block (the root's own
 * under MPI_IN_PLACE is in place); the root receives them all. */
static void gather_traffic(const ep_coll_args_t *x, int64_t *sent, int64_t *received)
{
    *sent = x->root < 0 ? 0 : x->sbuf == MPI_IN_PLACE ? recv_block_of(x, x->me) : ep_coll_bytes(x->stype, x->scount);
    *received = x->at_root ? recv_blocks(x) : 0;
}

void ep_coll_gatherv(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                     int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype, int root)
{
    ep_coll_args_init(a, &xchg_kind, ep);
    ep_coll_set_root(a, ep, root);
    a->traffic = gather_traffic;
    a->send_block = gather_send;
    a->recv_block = gather_recv;
    ep_coll_send_side(a, sbuf, scount, stype);
    ep_coll_recv_side(a, rbuf, rcount, rtype);
    a->rcounts = rcounts;
    a->rdispls = displs;
    if (a->at_root) { /* the receive side means something at the root only */
        a->rext = ep_coll_extent(rtype);
        a->nr = rcounts ? a->rsize : 0;
    }
}

/* Scatter(v): the mirror image. */
static int scatter_send(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    (void)k;
    int r = ep_coll_slot(x, peer);
    *b = none;
    if (x->at_root && r >= 0 && !(peer == x->me && x->rbuf == MPI_IN_PLACE))
        block_at(x->sbuf, x->scount, x->scounts, x->sdispls, x->stype, x->stypes, x->sext, r, b);
    return 0;
}

static int scatter_recv(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    (void)k;
    *b = none;
    if (peer == x->root && !(x->at_root && x->rbuf == MPI_IN_PLACE))
        *b = (ep_block_t){x->rbuf, x->rcount, x->rtype};
    return 0;
}

/* The mirror image of gather_traffic. */
static void scatter_traffic(const ep_coll_args_t *x, int64_t *sent, int64_t *received)
{
    *sent = x->at_root ? send_blocks(x) : 0;
    *received = x->root < 0               ? 0
                : x->rbuf == MPI_IN_PLACE ? send_block_of(x, x->me)
                                          : ep_coll_bytes(x->rtype, x->rcount);
}

void ep_coll_scatterv(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, const int *scounts,
                      const int *displs, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root)
{
    ep_coll_args_init(a, &xchg_kind, ep);
    ep_coll_set_root(a, ep, root);
    a->traffic = scatter_traffic;
    a->send_block = scatter_send;
    a->recv_block = scatter_recv;
    ep_coll_send_side(a, sbuf, scount, stype);
    a->scounts = scounts;
    a->sdispls = displs;
    ep_coll_recv_side(a, rbuf, rcount, rtype);
    if (a->at_root) {
        a->sext = ep_coll_extent(stype);
        a->ns = scounts ? a->rsize : 0;
    }
}

/* Allgather(v): one block to everyone; under MPI_IN_PLACE the block is
 * this rank's part of the receive buffer, which stays where it is. */
static int allgatherv_send(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    (void)k;
    *b = none;
    if (ep_coll_slot(x, peer) < 0 || (peer == x->me && x->sbuf == MPI_IN_PLACE))
        return 0;
    if (x->sbuf != MPI_IN_PLACE)
        *b = (ep_block_t){x->sbuf, x->scount, x->stype};
    else
        block_at(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rtypes, x->rext, x->me, b);
    return 0;
}

static int allgatherv_recv(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    (void)k;
    int r = ep_coll_slot(x, peer);
    *b = none;
    if (r >= 0 && !(peer == x->me && x->sbuf == MPI_IN_PLACE))
        block_at(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rtypes, x->rext, r, b);
    return 0;
}

/* One block out (under MPI_IN_PLACE, this rank's in the receive buffer),
 * one in from each rank addressed. */
void ep_coll_allgather_traffic(const ep_coll_args_t *x, int64_t *sent, int64_t *received)
{
    *sent = x->sbuf == MPI_IN_PLACE ? recv_block_of(x, x->me) : ep_coll_bytes(x->stype, x->scount);
    *received = recv_blocks(x);
}

void ep_coll_allgatherv(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype,
                        void *rbuf, int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype)
{
    ep_coll_args_init(a, &xchg_kind, ep);
    a->traffic = ep_coll_allgather_traffic;
    a->send_block = allgatherv_send;
    a->recv_block = allgatherv_recv;
    ep_coll_send_side(a, sbuf, scount, stype);
    ep_coll_recv_side(a, rbuf, rcount, rtype);
    a->rcounts = rcounts;
    a->rdispls = displs;
    a->nr = rcounts ? a->rsize : 0;
    a->rext = ep_coll_extent(rtype);
}

/* All-to-all in its three forms.  Under MPI_IN_PLACE the send blocks are
 * the receive blocks: safe, because every block is packed before any
 * receive buffer is written. */
static int a2a_send(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    (void)k;
    int r = ep_coll_slot(x, peer);
    *b = none;
    if (r < 0)
        return 0;
    if (x->sbuf == MPI_IN_PLACE)
        block_at(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rtypes, x->rext, r, b);
    else
        block_at(x->sbuf, x->scount, x->scounts, x->sdispls, x->stype, x->stypes, x->sext, r, b);
    return 0;
}

static int a2a_recv(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    (void)k;
    int r = ep_coll_slot(x, peer);
    *b = none;
    if (r >= 0)
        block_at(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rtypes, x->rext, r, b);
    return 0;
}

/* A block to and from each rank addressed (under MPI_IN_PLACE the send
 * blocks are the receive blocks). */
static void a2a_traffic(const ep_coll_args_t *x, int64_t *sent, int64_t *received)
{
    *received = recv_blocks(x);
    *sent = x->sbuf == MPI_IN_PLACE ? *received : send_blocks(x);
}

void ep_coll_alltoallw(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, const int *scounts,
                       const int *sdispls, MPI_Datatype stype, const MPI_Datatype *stypes, void *rbuf, int rcount,
                       const int *rcounts, const int *rdispls, MPI_Datatype rtype, const MPI_Datatype *rtypes,
                       int byte_displs)
{
    ep_coll_args_init(a, &xchg_kind, ep);
    a->traffic = a2a_traffic;
    a->send_block = a2a_send;
    a->recv_block = a2a_recv;
    ep_coll_send_side(a, sbuf, scount, stype);
    a->scounts = scounts;
    a->sdispls = sdispls;
    a->stypes = stypes;
    ep_coll_recv_side(a, rbuf, rcount, rtype);
    a->rcounts = rcounts;
    a->rdispls = rdispls;
    a->rtypes = rtypes;
    a->ns = scounts && sbuf != MPI_IN_PLACE ? a->rsize : 0;
    a->nr = rcounts ? a->rsize : 0;
    /* Displacements count extents of the type, or bytes (Alltoallw). */
    a->sext = byte_displs || sbuf == MPI_IN_PLACE ? 1 : ep_coll_extent(stype);
    a->rext = byte_displs ? 1 : ep_coll_extent(rtype);
}

/* Neighbourhood collectives: block k between this rank and a peer is
 * their k-th edge in the order both sides agree on (topo.h); the edge's
 * slot places it in the buffers. */
static int nbr_next(const ep_edge_t *e, int n, int peer, int k) { return ep_topo_edge(e, n, peer, k + 1) != NULL; }

static int nbr_send(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    const ep_topo_t *t = x->topo;
    const ep_edge_t *e = ep_topo_edge(t->out, t->nout, peer, k);
    *b = none;
    if (!e)
        return 0;
    if (x->sbdispls)
        *b = (ep_block_t){(const char *)x->sbuf + x->sbdispls[e->slot], x->scounts[e->slot], x->stypes[e->slot]};
    else
        block_at(x->sbuf, x->scount, x->scounts, x->sdispls, x->stype, x->stypes, x->sext, e->slot, b);
    return nbr_next(t->out, t->nout, peer, k);
}

/* Neighbor_allgather(v): the one send block along every out-edge. */
static int nbr_allgather_send(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    const ep_topo_t *t = x->topo;
    *b = none;
    if (!ep_topo_edge(t->out, t->nout, peer, k))
        return 0;
    *b = (ep_block_t){x->sbuf, x->scount, x->stype};
    return nbr_next(t->out, t->nout, peer, k);
}

static int nbr_recv(const ep_coll_args_t *x, int peer, int k, ep_block_t *b)
{
    const ep_topo_t *t = x->topo;
    const ep_edge_t *e = ep_topo_edge(t->in, t->nin, peer, k);
    *b = none;
    if (!e)
        return 0;
    if (x->rbdispls)
        *b = (ep_block_t){(char *)x->rbuf + x->rbdispls[e->slot], x->rcounts[e->slot], x->rtypes[e->slot]};
    else
        block_at(x->rbuf, x->rcount, x->rcounts, x->rdispls, x->rtype, x->rtypes, x->rext, e->slot, b);
    return nbr_next(t->in, t->nin, peer, k);
}

/* The blocks of real edges (not MPI_PROC_NULL), at their slots. */
static int64_t edge_bytes(const ep_edge_t *e, int n, int count, const int *counts, MPI_Datatype t,
                          const MPI_Datatype *types)
{
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += ep_coll_bytes(types ? types[e[i].slot] : t, counts ? counts[e[i].slot] : count);
    return sum;
}

static void nbr_traffic(const ep_coll_args_t *x, int64_t *sent, int64_t *received)
{
    const ep_topo_t *t = x->topo;
    *sent = edge_bytes(t->out, t->nout, x->scount, x->scounts, x->stype, x->stypes);
    *received = edge_bytes(t->in, t->nin, x->rcount, x->rcounts, x->rtype, x->rtypes);
}

/* Neighbor_allgather(v) reads its one block, whatever its out-degree. */
static void nbr_allgather_traffic(const ep_coll_args_t *x, int64_t *sent, int64_t *received)
{
    const ep_topo_t *t = x->topo;
    *sent = t->nout ? ep_coll_bytes(x->stype, x->scount) : 0;
    *received = edge_bytes(t->in, t->nin, x->rcount, x->rcounts, x->rtype, x->rtypes);
}

void ep_coll_neighbor(ep_coll_args_t *a, ep_endpoint_t *ep, int allgather, const void *sbuf, int scount,
                      const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf, int rcount,
                      const int *rcounts, const int *rdispls, MPI_Datatype rtype)
{
    ep_coll_args_init(a, &xchg_kind, ep);
    a->topo = ep->topo;
    a->traffic = allgather ? nbr_allgather_traffic : nbr_traffic;
    a->send_block = allgather ? nbr_allgather_send : nbr_send;
    a->recv_block = nbr_recv;
    ep_coll_send_side(a, sbuf, scount, stype);
    a->scounts = scounts;
    a->sdispls = sdispls;
    a->ns = scounts ? ep->topo->outdegree : 0;
    a->sext = ep_coll_extent(stype);
    ep_coll_recv_side(a, rbuf, rcount, rtype);
    a->rcounts = rcounts;
    a->rdispls = rdispls;
    a->nr = rcounts ? ep->topo->indegree : 0;
    a->rext = ep_coll_extent(rtype);
}

void ep_coll_neighbor_w(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, const int *scounts,
                        const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf, const int *rcounts,
                        const MPI_Aint *rdispls, const MPI_Datatype *rtypes)
{
    ep_coll_args_init(a, &xchg_kind, ep);
    a->topo = ep->topo;
    a->traffic = nbr_traffic;
    a->send_block = nbr_send;
    a->recv_block = nbr_recv;
    ep_coll_send_side(a, sbuf, 0, MPI_BYTE);
    a->scounts = scounts;
    a->sbdispls = sdispls;
    a->stypes = stypes;
    a->ns = ep->topo->outdegree;
    ep_coll_recv_side(a, rbuf, 0, MPI_BYTE);
    a->rcounts = rcounts;
    a->rbdispls = rdispls;
    a->rtypes = rtypes;
    a->nr = ep->topo->indegree;
}
