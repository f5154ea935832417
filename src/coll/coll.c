/* Collective kinds other than the exchanges: barrier, bcast, reductions,
 * scans and allgather (see coll.h for how kinds run). */
#include "coll/coll.h"
#include "abi/large.h"

#include "base/clear.h"
#include "core/datatype.h"
#include "core/op.h"
#include "base/settings.h"

#include <stdlib.h>
#include <string.h>

void ep_coll_args_init(ep_coll_args_t *a, const ep_coll_kind_t *k, const ep_endpoint_t *ep)
{
    ep_clear(a, sizeof *a);
    a->kind = k;
    a->me = ep->rank;
    a->root = -1;
    a->agree = -1;
    a->op = MPI_OP_NULL;
    a->info = MPI_INFO_NULL;
    a->roff = ep->comm->group_off[ep_remote_side(ep)];
    a->rsize = ep_remote_size(ep);
}

ep_status_t ep_coll_agree(const ep_comm_t *c, const ep_coll_args_t *a, const ep_coll_args_t *b)
{
    if (c->inter) /* the two groups pass different roots and amounts */
        return EP_OK;
    if (a->kind != b->kind || a->local != b->local)
        return EP_ERR_CALL_MISMATCH;
    if (a->root != b->root)
        return EP_ERR_ROOT_MISMATCH;
    return a->agree == b->agree ? EP_OK : EP_ERR_COUNT_MISMATCH;
}

void ep_coll_set_root(ep_coll_args_t *a, const ep_endpoint_t *ep, int root)
{
    if (ep->comm->inter) {
        a->at_root = root == MPI_ROOT;
        a->root = root >= 0 ? a->roff + root : -1;
    } else {
        a->at_root = ep->rank == root;
        a->root = root;
    }
}

static int has_pcomm(const ep_coll_inst_t *in) { return in->c->pcomm != MPI_COMM_NULL; }

static ep_status_t pmpi_rc(int rc) { return rc == MPI_SUCCESS ? EP_OK : EP_ERR_INTERN; }

/* A buffer for count elements of type t, returned as the pointer to pass as
 * the buffer argument (so true lower bounds are honoured) and the block to free. */
void *ep_coll_typed_alloc(int64_t count, MPI_Datatype t, void **block)
{
    MPI_Aint lb, ext, tlb, text;
    PMPI_Type_get_extent(t, &lb, &ext);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    size_t span = count > 0 ? (size_t)((count - 1) * ext + text) : 1;
    *block = malloc(span ? span : 1);
    return *block ? (char *)*block - tlb : NULL;
}

MPI_Aint ep_coll_extent(MPI_Datatype t)
{
    int bs = ep_datatype_builtin_size(t);
    if (bs >= 0)
        return bs;
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

int64_t ep_coll_bytes(MPI_Datatype t, int count)
{
    ep_dt_layout_t l;
    return count > 0 && !ep_dt_layout(t, count, &l) ? l.bytes : 0;
}

int64_t ep_coll_blocks_bytes(int n, int count, const int *counts, MPI_Datatype t, const MPI_Datatype *types)
{
    if (!counts && !types)
        return n * ep_coll_bytes(t, count);
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += ep_coll_bytes(types ? types[i] : t, counts ? counts[i] : count);
    return sum;
}

/* ---- barrier ------------------------------------------------------------ */

static void barrier_traffic(const ep_coll_args_t *a, int64_t *sent, int64_t *received)
{
    (void)a;
    *sent = *received = 0;
}

static ep_status_t barrier_start(ep_coll_inst_t *in)
{
    return has_pcomm(in) ? pmpi_rc(PMPI_Ibarrier(in->c->pcomm, &in->preq)) : EP_OK;
}

static const ep_coll_kind_t barrier_kind = {.start = barrier_start};

void ep_coll_barrier(ep_coll_args_t *a, ep_endpoint_t *ep)
{
    ep_coll_args_init(a, &barrier_kind, ep);
    a->traffic = barrier_traffic;
    a->local = EP_LOCAL_BARRIER;
}

/* ---- bcast: the root's endpoint (or local index 0 where the root is
 * remote) takes part in the PMPI broadcast; the others copy from it. ------ */

/* MPICH 4.0.2's non-blocking broadcast fails beyond 2 GiB (MPI_Ibcast_c
 * of MPI_BYTE too), which counts beyond INT_MAX reach: a larger contiguous
 * buffer goes in pieces of this many bytes, one PMPI_Ibcast each. */
#define EP_BCAST_PIECE ((int64_t)1 << 30)

/* Piece k of the source's buffer (contiguous, over 2 GiB). */
static ep_status_t bcast_piece(ep_coll_inst_t *in, int k)
{
    ep_comm_t *c = in->c;
    const ep_coll_args_t *s = in->args[in->src];
    ep_dt_layout_t lay;
    ep_status_t rc;
    if ((rc = ep_dt_layout(s->rtype, s->rcount, &lay)))
        return rc;
    int64_t off = (int64_t)k * EP_BCAST_PIECE, left = lay.bytes - off;
    int n = (int)(left < EP_BCAST_PIECE ? left : EP_BCAST_PIECE);
    return pmpi_rc(
        PMPI_Ibcast((char *)s->rbuf + lay.offset + off, n, MPI_BYTE, c->ranks[s->root].proc, c->pcomm, &in->preq));
}

static ep_status_t bcast_start(ep_coll_inst_t *in)
{
    ep_comm_t *c = in->c;
    ep_rank_loc_t rl = c->ranks[in->args[0]->root];
    in->src = rl.proc == c->myproc ? rl.lidx : 0;
    const ep_coll_args_t *s = in->args[in->src];
    ep_dt_layout_t lay;
    if (!has_pcomm(in))
        return EP_OK;
    if (!ep_dt_layout(s->rtype, s->rcount, &lay) && lay.bytes > INT32_MAX) {
        if (!lay.contig) {
            ep_status_explain(EP_ERR_COUNT,
                              "%lld bytes of a non-contiguous datatype in one broadcast between "
                              "processes: MPICH's non-blocking broadcast fails beyond 2 GiB",
                              (long long)lay.bytes);
            return EP_ERR_COUNT;
        }
        return bcast_piece(in, 0);
    }
    return pmpi_rc(PMPI_Ibcast(s->rbuf, s->rcount, s->rtype, rl.proc, c->pcomm, &in->preq));
}

/* After piece in->stage (start sent piece 0): the next one, if any. */
static ep_status_t bcast_complete(ep_coll_inst_t *in)
{
    const ep_coll_args_t *s = in->args[in->src];
    ep_dt_layout_t lay;
    int next = in->stage + 1;
    if (!has_pcomm(in) || ep_dt_layout(s->rtype, s->rcount, &lay) || lay.bytes <= INT32_MAX ||
        (int64_t)next * EP_BCAST_PIECE >= lay.bytes)
        return EP_OK;
    return bcast_piece(in, next);
}

/* The source's data and every local reader's buffer contiguous: where
 * each starts. */
static int bcast_contig(const ep_coll_inst_t *in, int64_t *bytes)
{
    ep_dt_layout_t lay;
    for (int j = 0; j < in->c->nlocal; j++)
        if (ep_dt_layout(in->args[j]->rtype, in->args[j]->rcount, &lay) || !lay.contig)
            return 0;
        else
            *bytes = lay.bytes;
    return 1;
}

/* Where the data is contiguous everywhere, endpoint lidx copies its
 * chunk (a share of the data, in whole pages) into every other local
 * endpoint's buffer, all endpoints at once: one copy of the data in all,
 * spread over the threads, instead of each reader copying it whole.  Else
 * each reader copies from the source.  Every endpoint's finish runs before
 * any returns (coll_drive.c), by each one or by the actor for all. */
static ep_status_t bcast_finish(ep_coll_inst_t *in, int lidx)
{
    const ep_coll_args_t *s = in->args[in->src], *a = in->args[lidx];
    int64_t bytes = 0, n = in->c->nlocal;
    if (bcast_contig(in, &bytes)) {
        int64_t per = ((bytes + n - 1) / n + 4095) & ~(int64_t)4095, lo = per * lidx < bytes ? per * lidx : bytes;
        int64_t len = per < bytes - lo ? per : bytes - lo;
        ep_dt_layout_t sl, rl;
        ep_dt_layout(s->rtype, s->rcount, &sl);
        for (int j = 0; j < n && len > 0; j++) {
            const ep_coll_args_t *r = in->args[j];
            if (j == in->src)
                continue;
            ep_dt_layout(r->rtype, r->rcount, &rl);
            memcpy((char *)r->rbuf + rl.offset + lo, (const char *)s->rbuf + sl.offset + lo, (size_t)len);
        }
        return EP_OK;
    }
    if (lidx == in->src)
        return EP_OK;
    return ep_dt_copy(s->rbuf, s->rcount, s->rtype, a->rbuf, a->rcount, a->rtype, &bytes);
}

static const ep_coll_kind_t bcast_kind = {
    .start = bcast_start, .complete = bcast_complete, .finish = bcast_finish, .copy_finish = 1};

/* The root sends its buffer, the others receive it (intercommunicators:
 * the root's group, MPI_PROC_NULL, neither). */
void ep_coll_bcast_traffic(const ep_coll_args_t *a, int64_t *sent, int64_t *received)
{
    int64_t b = ep_coll_bytes(a->rtype, a->rcount);
    *sent = a->at_root ? b : 0;
    *received = !a->at_root && a->root >= 0 ? b : 0;
}

void ep_coll_bcast(ep_coll_args_t *a, ep_endpoint_t *ep, void *buf, int count, MPI_Datatype type, int root)
{
    if (ep->comm->inter) {
        ep_coll_xchg_bcast(a, ep, buf, count, type, root);
        return;
    }
    ep_dt_layout_t lay;
    ep_coll_args_init(a, &bcast_kind, ep);
    ep_coll_recv_side(a, buf, count, type);
    ep_coll_set_root(a, ep, root);
    a->traffic = ep_coll_bcast_traffic;
    a->local = EP_LOCAL_BCAST;
    if (!ep_dt_layout(type, count, &lay))
        a->agree = lay.bytes;
}

/* ---- reductions ----------------------------------------------------------
 *
 * Arguments: the input (sbuf, scount elements of stype; rbuf under
 * MPI_IN_PLACE), the op, the root or all, and the part of the
 * result this rank keeps: rcount elements from part_off (the whole result
 * for Reduce / Allreduce, one block for Reduce_scatter).
 *
 * Hierarchical: the local inputs are folded (local indices follow rank
 * order) and one PMPI reduction runs over the processes, which are in rank
 * order too when the communicator has its ranks by process
 * (ranks_by_process).  Otherwise non-commutative
 * operations take the gathered path: an exchange brings every input to the
 * ranks that need it, which fold them in rank order. */

/* Combined right to left with ep_op_reduce_local (inout = in op inout),
 * which keeps rank order. */
ep_status_t ep_coll_fold(void *acc, const void *const *xs, int n, int count, MPI_Datatype type, MPI_Op op)
{
    int64_t bytes;
    int bs = ep_datatype_builtin_size(type);
    ep_status_t rc = EP_OK;
    if (bs > 0) /* the common case, without working out a layout */
        memcpy(acc, xs[n - 1], (size_t)bs * (size_t)count);
    else
        rc = ep_dt_copy(xs[n - 1], count, type, acc, count, type, &bytes);
    for (int i = n - 2; i >= 0 && !rc; i--)
        if (ep_op_reduce_local(xs[i], acc, count, type, op) != MPI_SUCCESS)
            rc = EP_ERR_INTERN;
    return rc;
}

/* ---- large dense reductions: the local endpoints fold a chunk each -------
 * The vector is cut into one chunk per local endpoint; endpoint j folds
 * chunk j of every local input, in local order, so the work and the memory
 * traffic are spread over the threads instead of one.  Used by the
 * one-process path (coll_local.c) and by the blocking driver before a
 * reduction's PMPI step (ep_coll_run). */

int ep_coll_dense(MPI_Datatype t, int count, int64_t *bytes)
{
    ep_dt_layout_t lay;
    MPI_Aint lb = 0, ext;
    if (ep_dt_layout(t, count, &lay) || !lay.contig || lay.offset != 0)
        return 0;
    if ((ext = ep_datatype_builtin_size(t)) < 0)
        PMPI_Type_get_extent(t, &lb, &ext);
    *bytes = lay.bytes;
    return lb == 0 && ext == lay.type_size;
}

void ep_coll_chunk(int j, int n, int count, int *lo, int *hi)
{
    int64_t per = (count + (int64_t)n - 1) / n;
    *lo = (int)(per * j < count ? per * j : count);
    *hi = (int)(per * (j + 1) < count ? per * (j + 1) : count);
}

ep_status_t ep_coll_fold_share(ep_comm_t *c, int me, void *out, int aliased)
{
    const ep_coll_args_t *a = atomic_load(&c->sync.ptr[me]);
    int n = c->nlocal, lo, hi;
    MPI_Aint size = ep_coll_extent(a->stype);
    ep_status_t rc = EP_OK;

    /* Every endpoint reads every input: all must have one size, which
     * each checks alike (the same verdict everywhere, so none folds). */
    for (int j = 1; j < n; j++)
        if ((rc = ep_coll_agree(c, atomic_load(&c->sync.ptr[0]), atomic_load(&c->sync.ptr[j]))))
            return rc;
    ep_coll_chunk(me, n, a->scount, &lo, &hi);
    if (hi <= lo)
        return EP_OK;
    /* A scratch chunk when out is also an input (MPI_IN_PLACE), which the
     * fold reads meanwhile. */
    char *dst = (char *)out + lo * size, *acc = dst, *tmp = NULL;
    const void **xs = calloc((size_t)n, sizeof *xs);
    if (!xs || (aliased && !(acc = tmp = malloc((size_t)((hi - lo) * size)))))
        rc = EP_ERR_NO_MEM;
    for (int j = 0; j < n && !rc; j++)
        xs[j] = (const char *)ep_coll_input(atomic_load(&c->sync.ptr[j])) + lo * size;
    if (!rc)
        rc = ep_coll_fold(acc, xs, n, hi - lo, a->stype, a->op);
    if (tmp && !rc)
        memcpy(dst, tmp, (size_t)((hi - lo) * size));
    free(tmp);
    free(xs);
    return rc;
}

int ep_coll_share_size(const ep_coll_args_t *a, int nlocal, int64_t *bytes)
{
    return a->kind->fold_shared && nlocal > 1 && ep_coll_dense(a->stype, a->scount, bytes) &&
           *bytes >= EP_COLL_SHARE_MIN;
}

static ep_status_t keep_part(const ep_coll_args_t *a, const char *result)
{
    int64_t n;
    MPI_Aint ext = ep_coll_extent(a->stype);
    return ep_dt_copy(result + (MPI_Aint)a->part_off * ext, a->rcount, a->stype, a->rbuf, a->rcount, a->stype, &n);
}

static int wants_result(const ep_coll_args_t *a) { return a->all || a->at_root; }

/* The local inputs folded into a scratch vector, in->res. */
static ep_status_t fold_local(ep_coll_inst_t *in)
{
    const ep_coll_args_t *a0 = in->args[0];
    int n = in->c->nlocal;
    const void **xs = malloc(sizeof *xs * (size_t)n);
    void *acc = ep_coll_typed_alloc(a0->scount, a0->stype, &in->scratch[0]);
    ep_status_t rc = EP_ERR_NO_MEM;
    if (xs && acc) {
        for (int i = 0; i < n; i++)
            xs[i] = ep_coll_input(in->args[i]);
        rc = ep_coll_fold(acc, xs, n, a0->scount, a0->stype, a0->op);
    }
    free(xs);
    in->res = acc;
    return rc;
}

static ep_status_t reduce_start(ep_coll_inst_t *in)
{
    ep_comm_t *c = in->c;
    const ep_coll_args_t *a0 = in->args[0];
    int count = a0->scount;
    MPI_Datatype type = a0->stype;
    ep_status_t rc;

    if (c->nlocal == 1 && a0->all && a0->part_off == 0 && a0->rcount == count) {
        /* Reduce straight into the receive buffer. */
        int64_t n;
        in->res = a0->rbuf;
        if (a0->sbuf != MPI_IN_PLACE && (rc = ep_dt_copy(a0->sbuf, count, type, a0->rbuf, count, type, &n)))
            return rc;
        if (!has_pcomm(in))
            return EP_OK;
        return pmpi_rc(PMPI_Iallreduce(MPI_IN_PLACE, a0->rbuf, count, type, a0->op, c->pcomm, &in->preq));
    }
    /* in->res is set when the endpoints have folded in shares (ep_coll_run). */
    if (!in->res && (rc = fold_local(in)))
        return rc;
    if (!has_pcomm(in))
        return EP_OK;
    void *acc = in->res;
    if (a0->all)
        return pmpi_rc(PMPI_Iallreduce(MPI_IN_PLACE, acc, count, type, a0->op, c->pcomm, &in->preq));
    int rproc = c->ranks[a0->root].proc;
    return pmpi_rc(PMPI_Ireduce(rproc == c->myproc ? MPI_IN_PLACE : acc, rproc == c->myproc ? acc : NULL, count, type,
                                a0->op, rproc, c->pcomm, &in->preq));
}

static ep_status_t reduce_finish(ep_coll_inst_t *in, int lidx)
{
    const ep_coll_args_t *a = in->args[lidx];
    if (!wants_result(a) || in->res == a->rbuf) /* reduced in place */
        return EP_OK;
    return keep_part(a, in->res);
}

static const ep_coll_kind_t reduce_kind = {
    .start = reduce_start, .finish = reduce_finish, .fold_shared = 1, .copy_finish = 1};

void *ep_coll_share_target(const ep_coll_args_t *a)
{
    return a->kind == &reduce_kind && a->all && a->part_off == 0 && a->rcount == a->scount ? a->rbuf : NULL;
}

/* The gathered path.  Inputs travel to every rank that folds them, among
 * the ranks their sender addresses: the root, everyone (all), or for scans
 * the ranks from the sender on.  Rank s's input lands in slot
 * ep_coll_slot(s) of the folding rank's tmp. */

/* How many inputs the scan of `rank` folds (ranks 0 .. n-1). */
static int scan_inputs(const ep_coll_args_t *a, int rank) { return a->scan == 2 ? rank : rank + 1; }

static int gathered_send(const ep_coll_args_t *a, int peer, int k, ep_block_t *b)
{
    (void)k;
    *b = (ep_block_t){NULL, 0, MPI_BYTE};
    if (ep_coll_slot(a, peer) >= 0 && (a->scan ? a->me < scan_inputs(a, peer) : a->all || peer == a->root))
        *b = (ep_block_t){ep_coll_input(a), a->scount, a->stype};
    return 0;
}

static int gathered_recv(const ep_coll_args_t *a, int peer, int k, ep_block_t *b)
{
    (void)k;
    int r = ep_coll_slot(a, peer);
    *b = (ep_block_t){NULL, 0, MPI_BYTE};
    if (r >= 0 && (a->scan ? peer < scan_inputs(a, a->me) : wants_result(a)))
        *b = (ep_block_t){(char *)a->tmp + (MPI_Aint)r * a->scount * a->sext, a->scount, a->stype};
    return 0;
}

static ep_status_t gathered_finish(ep_coll_inst_t *in, int lidx)
{
    ep_coll_args_t *a = in->args[lidx];
    int n = a->scan ? scan_inputs(a, a->me) : a->rsize;
    void *block = NULL, *ablock = NULL;
    ep_status_t rc = EP_OK;
    if (!wants_result(a) || n == 0)
        return EP_OK;
    a->tmp = ep_coll_typed_alloc((int64_t)a->scount * n, a->stype, &block);
    void *acc = ep_coll_typed_alloc(a->scount, a->stype, &ablock);
    const void **xs = malloc(sizeof *xs * (size_t)n);
    if (!a->tmp || !acc || !xs)
        rc = EP_ERR_NO_MEM;
    if (!rc)
        rc = ep_coll_xchg_finish(in, lidx);
    if (!rc) {
        for (int r = 0; r < n; r++)
            xs[r] = (char *)a->tmp + (MPI_Aint)r * a->scount * a->sext;
        rc = ep_coll_fold(acc, xs, n, a->scount, a->stype, a->op);
    }
    if (!rc)
        rc = keep_part(a, acc);
    free(xs);
    free(block);
    free(ablock);
    a->tmp = NULL;
    return rc;
}

static const ep_coll_kind_t gathered_kind = {.start = ep_coll_xchg_start, .finish = gathered_finish, .copy_finish = 1};

/* The kind for a reduction on ep's communicator with op. */
static const ep_coll_kind_t *reduction_kind(ep_endpoint_t *ep, MPI_Op op)
{
    int commute = 1;
    ep_op_commutative(op, &commute);
    return (!commute && !ep->comm->ranks_by_process) || ep->comm->inter || ep_config.coll_gathered ? &gathered_kind
                                                                                                   : &reduce_kind;
}

/* The input from every rank that gives one (all, or a root it addresses:
 * not the root's group of an intercommunicator); the result where it is
 * kept (all, the root; an exclusive scan's rank 0 gets none). */
static void reduction_traffic(const ep_coll_args_t *a, int64_t *sent, int64_t *received)
{
    *sent = a->all || a->root >= 0 ? ep_coll_bytes(a->stype, a->scount) : 0;
    *received = (a->all || a->at_root) && !(a->scan == 2 && a->me == 0) ? ep_coll_bytes(a->rtype, a->rcount) : 0;
}

static void reduction_args(ep_coll_args_t *a, ep_endpoint_t *ep, const ep_coll_kind_t *k, const void *sbuf, void *rbuf,
                           int count, MPI_Datatype type, MPI_Op op)
{
    ep_coll_args_init(a, k, ep);
    a->traffic = reduction_traffic;
    a->send_block = gathered_send;
    a->recv_block = gathered_recv;
    ep_coll_send_side(a, sbuf, count, type);
    a->sext = ep_coll_extent(type);
    ep_coll_recv_side(a, rbuf, count, type);
    a->op = op;
    a->agree = count;
}

void ep_coll_reduce(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                    MPI_Op op, int all, int root)
{
    reduction_args(a, ep, reduction_kind(ep, op), sbuf, rbuf, count, type, op);
    a->all = all;
    if (!all)
        ep_coll_set_root(a, ep, root);
    a->local = EP_LOCAL_REDUCE;
}

/* Reduce_scatter(_block): a reduction of the whole vector; each rank keeps
 * its block.  Under MPI_IN_PLACE the input is the receive buffer.  On an
 * intercommunicator the vector reduced is the other group's (MPI requires
 * both groups' totals to agree), scattered by this group's counts. */
void ep_coll_reduce_scatter(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count,
                            const int *counts, MPI_Datatype type, MPI_Op op)
{
    int total = 0, mine = 0;
    for (int r = 0; r < ep_local_size(ep); r++) {
        int k = counts ? counts[r] : count;
        if (r < ep_local_rank(ep))
            mine += k;
        total += k;
    }
    reduction_args(a, ep, reduction_kind(ep, op), sbuf, rbuf, total, type, op);
    a->all = 1;
    a->part_off = mine;
    a->rcount = counts ? counts[ep_local_rank(ep)] : count;
}

/* ---- scans: with ranks by process, local index 0 folds the local
 * prefixes and gets the earlier processes' prefix with one PMPI_Iexscan of
 * the local totals; otherwise the gathered path. ------------------------ */

/* res: nl + 2 slots; slot k (1..nl) the prefix ending with local
 * rank k-1, slot nl+1 the earlier processes' prefix, slot 0 what local
 * rank 0 excludes. */
static ep_status_t scan_start(ep_coll_inst_t *in)
{
    ep_comm_t *c = in->c;
    const ep_coll_args_t *a0 = in->args[0];
    int nl = c->nlocal, count = a0->scount;
    MPI_Datatype type = a0->stype;
    MPI_Aint span = (MPI_Aint)count * a0->sext;
    int64_t n;
    char *pre = ep_coll_typed_alloc((int64_t)count * (nl + 2), type, &in->scratch[0]);
    if (!pre)
        return EP_ERR_NO_MEM;
    in->res = pre;
    for (int k = 1; k <= nl; k++) {
        ep_dt_copy(ep_coll_input(in->args[k - 1]), count, type, pre + k * span, count, type, &n);
        if (k > 1) /* pre[k] = pre[k-1] op x[k-1] */
            ep_op_reduce_local(pre + (k - 1) * span, pre + k * span, count, type, a0->op);
    }
    if (!has_pcomm(in))
        return EP_OK;
    return pmpi_rc(PMPI_Iexscan(pre + nl * span, pre + (nl + 1) * span, count, type, a0->op, c->pcomm, &in->preq));
}

static ep_status_t scan_complete(ep_coll_inst_t *in)
{
    ep_comm_t *c = in->c;
    const ep_coll_args_t *a0 = in->args[0];
    int nl = c->nlocal, count = a0->scount;
    MPI_Aint span = (MPI_Aint)count * a0->sext;
    char *pre = in->res, *before = pre + (nl + 1) * span;
    int64_t n;
    if (c->myproc == 0)
        return EP_OK;
    for (int k = 1; k <= nl; k++) /* earlier processes first */
        ep_op_reduce_local(before, pre + k * span, count, a0->stype, a0->op);
    return ep_dt_copy(before, count, a0->stype, pre, count, a0->stype, &n);
}

static ep_status_t scan_finish(ep_coll_inst_t *in, int lidx)
{
    const ep_coll_args_t *a = in->args[lidx];
    int slot = a->scan == 2 ? lidx : lidx + 1;
    int64_t n;
    if (a->scan == 2 && a->me == 0)
        return EP_OK; /* exscan: rank 0's result is undefined */
    return ep_dt_copy((char *)in->res + (MPI_Aint)slot * a->scount * a->sext, a->scount, a->stype, a->rbuf, a->scount,
                      a->stype, &n);
}

static const ep_coll_kind_t scan_kind = {
    .start = scan_start, .complete = scan_complete, .finish = scan_finish, .copy_finish = 1};

void ep_coll_scan(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                  MPI_Op op, int exclusive)
{
    const ep_coll_kind_t *k = !ep->comm->ranks_by_process || ep_config.coll_gathered ? &gathered_kind : &scan_kind;
    reduction_args(a, ep, k, sbuf, rbuf, count, type, op);
    a->all = 1;
    a->scan = exclusive ? 2 : 1;
}

/* ---- allgather: local index 0 packs the local blocks at this process's
 * offset of one byte buffer, one PMPI_Iallgatherv_c fills in the others, and
 * each endpoint unpacks in rank order.  scratch: [0] the buffer, [1] the
 * PMPI counts and displacements. ------------------------------------------ */

static int64_t allgather_block(const ep_coll_args_t *a) { return ep_coll_bytes(a->rtype, a->rcount); }

static ep_status_t allgather_start(ep_coll_inst_t *in)
{
    ep_comm_t *c = in->c;
    int64_t blk = allgather_block(in->args[0]);
    char *all = malloc(blk * c->size > 0 ? (size_t)(blk * c->size) : 1);
    if (!(in->scratch[0] = all))
        return EP_ERR_NO_MEM;
    ep_status_t rc = EP_OK;
    for (int i = 0; i < c->nlocal; i++) {
        const ep_coll_args_t *a = in->args[i];
        ep_dt_layout_t sl;
        const void *buf = a->sbuf;
        int count = a->scount;
        MPI_Datatype type = a->stype;
        if (buf == MPI_IN_PLACE) {
            buf = (char *)a->rbuf + (MPI_Aint)a->me * a->rcount * a->rext;
            count = a->rcount;
            type = a->rtype;
        }
        if (!ep_dt_layout(type, count, &sl)) {
            /* a block that cannot be packed fails the call; the PMPI step
             * still runs, so that the processes stay in step */
            ep_status_t p = ep_dt_pack(buf, count, type, &sl, all + (c->proc_first[c->myproc] + i) * blk);
            rc = rc ? rc : p;
        }
    }
    if (!has_pcomm(in))
        return rc;
    /* MPICH's large-count form, as the exchange's (coll_xchg.c): more than
     * 2 GiB may come from a process. */
    MPI_Count *cnt = malloc((sizeof(MPI_Count) + sizeof(MPI_Aint)) * (size_t)c->nprocs);
    MPI_Aint *dsp = (MPI_Aint *)(cnt + c->nprocs);
    if (!(in->scratch[1] = cnt))
        return EP_ERR_NO_MEM;
    for (int p = 0; p < c->nprocs; p++) {
        cnt[p] = c->proc_nlocal[p] * blk;
        dsp[p] = c->proc_first[p] * blk;
    }
    ep_status_t st =
        pmpi_rc(ep_pmpi_iallgatherv_c(MPI_IN_PLACE, 0, MPI_BYTE, all, cnt, dsp, MPI_BYTE, c->pcomm, &in->preq));
    return rc ? rc : st;
}

static ep_status_t allgather_finish(ep_coll_inst_t *in, int lidx)
{
    ep_comm_t *c = in->c;
    const ep_coll_args_t *a = in->args[lidx];
    int64_t blk = allgather_block(a);
    const char *all = in->scratch[0];
    ep_dt_layout_t one;
    ep_status_t rc;
    if ((rc = ep_dt_layout(a->rtype, a->rcount, &one)))
        return rc;
    /* Blocks are stored by process; the receive buffer is in rank order. */
    for (int r = 0; r < c->size; r++) {
        if (a->sbuf == MPI_IN_PLACE && r == a->me)
            continue;
        ep_rank_loc_t loc = c->ranks[r];
        ep_dt_unpack(all + (c->proc_first[loc.proc] + loc.lidx) * blk, blk,
                     (char *)a->rbuf + (MPI_Aint)r * a->rcount * a->rext, a->rcount, a->rtype, &one);
    }
    return EP_OK;
}

static const ep_coll_kind_t allgather_kind = {.start = allgather_start, .finish = allgather_finish, .copy_finish = 1};

void ep_coll_allgather(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype,
                       void *rbuf, int rcount, MPI_Datatype rtype)
{
    if (ep->comm->inter) {
        ep_coll_allgatherv(a, ep, sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype);
        return;
    }
    ep_coll_args_init(a, &allgather_kind, ep);
    a->traffic = ep_coll_allgather_traffic;
    ep_coll_send_side(a, sbuf, scount, stype);
    ep_coll_recv_side(a, rbuf, rcount, rtype);
    a->rext = ep_coll_extent(rtype);
}
