/* Virtual topologies on endpoint communicators (topo.h). */
#include "coll/topo.h"

#include "coll/coll.h"
#include "core/comm_create.h"

#include <stdlib.h>
#include <string.h>

/* ---- the topology record ---------------------------------------------------- */

/* A copy of n ints (room for one when n is 0, so NULL means no memory). */
static int *ints(const int *v, int n, int *ok)
{
    int *p = calloc(n > 0 ? (size_t)n : 1, sizeof *p);
    if (!p)
        *ok = 0;
    else if (v && n > 0)
        memcpy(p, v, sizeof *p * (size_t)n);
    return p;
}

static int cmp_edge(const void *a, const void *b)
{
    const ep_edge_t *x = a, *y = b;
    if (x->peer != y->peer)
        return x->peer < y->peer ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

/* The exchange's view of n neighbours (MPI_PROC_NULL ones move nothing):
 * key = slot ^ flip. */
static ep_edge_t *edges_by_peer(const int *nbr, int n, int flip, int *count, int *ok)
{
    ep_edge_t *e = calloc(n > 0 ? (size_t)n : 1, sizeof *e);
    int m = 0;
    if (!e) {
        *ok = 0;
        return NULL;
    }
    for (int j = 0; j < n; j++)
        if (nbr[j] != MPI_PROC_NULL)
            e[m++] = (ep_edge_t){nbr[j], j, j ^ flip};
    qsort(e, (size_t)m, sizeof *e, cmp_edge);
    *count = m;
    return e;
}

/* Fills the exchange's view from sources / dests; flip as above for the
 * receive side. */
static ep_status_t finish(ep_topo_t *t, int flip, ep_topo_t **out)
{
    int ok = 1;
    t->in = edges_by_peer(t->sources, t->indegree, flip, &t->nin, &ok);
    t->out = edges_by_peer(t->dests, t->outdegree, 0, &t->nout, &ok);
    if (!ok) {
        ep_topo_free(t);
        return EP_ERR_NO_MEM;
    }
    *out = t;
    return EP_OK;
}

/* An empty record of kind for rank. */
static ep_topo_t *topo_new(int kind, int rank, ep_topo_t **out)
{
    ep_topo_t *t = calloc(1, sizeof *t);
    *out = NULL;
    if (t) {
        t->kind = kind;
        t->rank = rank;
    }
    return t;
}

int ep_cart_size(int ndims, const int *dims)
{
    int n = 1;
    for (int d = 0; d < ndims; d++)
        n *= dims[d];
    return n;
}

ep_status_t ep_topo_cart(int ndims, const int *dims, const int *periods, int rank, ep_topo_t **out)
{
    ep_topo_t *t = topo_new(MPI_CART, rank, out);
    int ok = 1;
    if (!t)
        return EP_ERR_NO_MEM;
    t->ndims = ndims;
    t->dims = ints(dims, ndims, &ok);
    t->periods = ints(NULL, ndims, &ok);
    t->coords = ints(NULL, ndims, &ok);
    t->indegree = t->outdegree = 2 * ndims;
    t->sources = ints(NULL, 2 * ndims, &ok);
    t->dests = ints(NULL, 2 * ndims, &ok);
    if (!ok) {
        ep_topo_free(t);
        return EP_ERR_NO_MEM;
    }
    for (int d = 0; d < ndims; d++)
        t->periods[d] = periods[d] != 0;
    ep_cart_coords(t, rank, t->coords);
    /* Dimension d: direction -1, then +1 (MPI_Cart_shift(d, 1)'s source,
     * then its destination), the same list both ways. */
    for (int d = 0; d < ndims; d++) {
        ep_cart_shift(t, rank, d, 1, &t->sources[2 * d], &t->sources[2 * d + 1]);
        t->dests[2 * d] = t->sources[2 * d];
        t->dests[2 * d + 1] = t->sources[2 * d + 1];
    }
    return finish(t, 1, out);
}

ep_status_t ep_topo_graph(int nnodes, const int *index, const int *edges, int rank, ep_topo_t **out)
{
    ep_topo_t *t = topo_new(MPI_GRAPH, rank, out);
    int ok = 1, nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    if (!t)
        return EP_ERR_NO_MEM;
    t->nnodes = nnodes;
    t->index = ints(index, nnodes, &ok);
    t->edges = ints(edges, nedges, &ok);
    int first = rank > 0 ? index[rank - 1] : 0;
    t->indegree = t->outdegree = index[rank] - first;
    t->sources = ints(edges + first, t->indegree, &ok);
    t->dests = ints(edges + first, t->outdegree, &ok);
    if (!ok) {
        ep_topo_free(t);
        return EP_ERR_NO_MEM;
    }
    return finish(t, 0, out);
}

ep_status_t ep_topo_dist(int rank, int indegree, const int *sources, const int *sweights, int outdegree,
                         const int *dests, const int *dweights, int weighted, ep_topo_t **out)
{
    ep_topo_t *t = topo_new(MPI_DIST_GRAPH, rank, out);
    int ok = 1;
    if (!t)
        return EP_ERR_NO_MEM;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->sources = ints(sources, indegree, &ok);
    t->dests = ints(dests, outdegree, &ok);
    t->weighted = weighted;
    if (weighted) {
        t->sweights = ints(sweights, indegree, &ok);
        t->dweights = ints(dweights, outdegree, &ok);
    }
    if (!ok) {
        ep_topo_free(t);
        return EP_ERR_NO_MEM;
    }
    return finish(t, 0, out);
}

ep_status_t ep_topo_copy(const ep_topo_t *t, ep_topo_t **out)
{
    *out = NULL;
    if (!t)
        return EP_OK;
    switch (t->kind) {
    case MPI_CART:
        return ep_topo_cart(t->ndims, t->dims, t->periods, t->rank, out);
    case MPI_GRAPH:
        return ep_topo_graph(t->nnodes, t->index, t->edges, t->rank, out);
    default:
        return ep_topo_dist(t->rank, t->indegree, t->sources, t->sweights, t->outdegree, t->dests, t->dweights,
                            t->weighted, out);
    }
}

void ep_topo_free(ep_topo_t *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->coords);
    free(t->index);
    free(t->edges);
    free(t->sources);
    free(t->dests);
    free(t->sweights);
    free(t->dweights);
    free(t->in);
    free(t->out);
    free(t);
}

/* ---- grids ------------------------------------------------------------------ */

/* Row-major, as MPI numbers a grid: the last dimension varies fastest. */
int ep_cart_rank(const ep_topo_t *t, const int *coords)
{
    int rank = 0;
    for (int d = 0; d < t->ndims; d++) {
        int c = coords[d], n = t->dims[d];
        if (c < 0 || c >= n) {
            if (!t->periods[d])
                return -1;
            c %= n;
            if (c < 0)
                c += n;
        }
        rank = rank * n + c;
    }
    return rank;
}

void ep_cart_coords(const ep_topo_t *t, int rank, int *coords)
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

void ep_cart_shift(const ep_topo_t *t, int rank, int dir, int disp, int *source, int *dest)
{
    int c[t->ndims > 0 ? t->ndims : 1];
    ep_cart_coords(t, rank, c);
    int here = c[dir];
    c[dir] = here + disp;
    *dest = ep_cart_rank(t, c);
    c[dir] = here - disp;
    *source = ep_cart_rank(t, c);
    if (*dest < 0)
        *dest = MPI_PROC_NULL;
    if (*source < 0)
        *source = MPI_PROC_NULL;
}

const ep_edge_t *ep_topo_edge(const ep_edge_t *e, int n, int peer, int k)
{
    int lo = 0, hi = n; /* the first edge to peer or beyond */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (e[mid].peer < peer)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo + k < n && e[lo + k].peer == peer ? &e[lo + k] : NULL;
}

/* ---- constructors ----------------------------------------------------------- */

/* Splits ep's communicator by colour (MPI_UNDEFINED: left out), ranks
 * in their old order; the rank's new endpoint gets t, made for its rank
 * (`made`: the status of making it).  Whatever fails frees t. */
static ep_status_t split_attach(ep_endpoint_t *ep, int color, ep_status_t made, ep_topo_t *t, MPI_Comm *out)
{
    /* A rank that could not make its topology still takes part in the
     * split, which the others run, and fails after it. */
    ep_status_t st = ep_comm_split(ep, made ? MPI_UNDEFINED : color, ep_local_rank(ep), out);
    if (st || made || *out == MPI_COMM_NULL) {
        ep_topo_free(t);
        return st ? st : made;
    }
    ep_endpoint_get(*out)->topo = t;
    return EP_OK;
}

ep_status_t ep_topo_cart_create(ep_endpoint_t *ep, int ndims, const int *dims, const int *periods, MPI_Comm *out)
{
    int rank = ep_local_rank(ep), in = rank < ep_cart_size(ndims, dims);
    ep_topo_t *t = NULL;
    ep_status_t made = in ? ep_topo_cart(ndims, dims, periods, rank, &t) : EP_OK;
    return split_attach(ep, in ? 0 : MPI_UNDEFINED, made, t, out);
}

ep_status_t ep_topo_cart_sub(ep_endpoint_t *ep, const int *remain, MPI_Comm *out)
{
    const ep_topo_t *g = ep->topo;
    int n = 0, color = 0, rank = 0;
    int dims[g->ndims > 0 ? g->ndims : 1], periods[g->ndims > 0 ? g->ndims : 1];
    /* The colour numbers the dropped coordinates, the new rank the kept
     * ones (row-major both, so key order is the old rank order). */
    for (int d = 0; d < g->ndims; d++) {
        if (remain[d]) {
            dims[n] = g->dims[d];
            periods[n++] = g->periods[d];
            rank = rank * g->dims[d] + g->coords[d];
        } else {
            color = color * g->dims[d] + g->coords[d];
        }
    }
    /* No dimension kept: one zero-dimensional communicator, of rank 0
     * alone, the others get MPI_COMM_NULL (as MPICH does, and as
     * MPI_Cart_create makes a zero-dimensional one). */
    if (n == 0)
        color = ep_local_rank(ep) == 0 ? 0 : MPI_UNDEFINED;
    ep_topo_t *t = NULL;
    ep_status_t made = color == MPI_UNDEFINED ? EP_OK : ep_topo_cart(n, dims, periods, rank, &t);
    return split_attach(ep, color, made, t, out);
}

ep_status_t ep_topo_graph_create(ep_endpoint_t *ep, int nnodes, const int *index, const int *edges, MPI_Comm *out)
{
    int rank = ep_local_rank(ep), in = rank < nnodes;
    ep_topo_t *t = NULL;
    ep_status_t made = in ? ep_topo_graph(nnodes, index, edges, rank, &t) : EP_OK;
    return split_attach(ep, in ? 0 : MPI_UNDEFINED, made, t, out);
}

ep_status_t ep_topo_dist_adjacent(ep_endpoint_t *ep, int indegree, const int *sources, const int *sweights,
                                  int outdegree, const int *dests, const int *dweights, int weighted, MPI_Comm *out)
{
    ep_topo_t *t = NULL;
    ep_status_t made =
        ep_topo_dist(ep_local_rank(ep), indegree, sources, sweights, outdegree, dests, dweights, weighted, &t);
    return split_attach(ep, 0, made, t, out);
}

/* MPI_Dist_graph_create: every edge s -> d named anywhere is told to s (an
 * out-edge) and to d (an in-edge) by one all-to-all of counts and one of
 * records {direction, other end, weight}.  Each rank's neighbours follow
 * the rank that named them, then the order it named them in. */
enum { EDGE_OUT, EDGE_IN, EDGE_INTS = 3 };

ep_status_t ep_topo_dist_create(ep_endpoint_t *ep, int n, const int *sources, const int *degrees, const int *dests,
                                const int *weights, int weighted, MPI_Comm *out)
{
    int size = ep_local_size(ep), total = 0, rtotal = 0, ok = 1;
    for (int i = 0; i < n; i++)
        total += degrees[i];
    /* counts, displacements and fill marks, sent and received */
    int *v = ints(NULL, 5 * size, &ok), *scount = v, *sdispl = v + size, *rcount = v + 2 * size, *rdispl = v + 3 * size,
        *fill = v + 4 * size;
    int *rec = ints(NULL, 2 * total * EDGE_INTS, &ok), *got = NULL;
    ep_coll_args_t a;
    ep_status_t st;
    if (!ok) { /* a few ints: the others' exchanges fail too if memory is this short */
        free(v), free(rec);
        return EP_ERR_NO_MEM;
    }
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            scount[sources[i]] += EDGE_INTS;
            scount[dests[e]] += EDGE_INTS;
        }
    for (int r = 1; r < size; r++)
        sdispl[r] = sdispl[r - 1] + scount[r - 1];
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            int w = weighted ? weights[e] : 1, s = sources[i], d = dests[e];
            int *o = rec + sdispl[s] + fill[s], *p;
            fill[s] += EDGE_INTS;
            p = rec + sdispl[d] + fill[d];
            fill[d] += EDGE_INTS;
            o[0] = EDGE_OUT, o[1] = d, o[2] = w;
            p[0] = EDGE_IN, p[1] = s, p[2] = w;
        }
    ep_coll_alltoallw(&a, ep, scount, 1, NULL, NULL, MPI_INT, NULL, rcount, 1, NULL, NULL, MPI_INT, NULL, 0);
    st = ep_coll_run(ep, &a);
    for (int r = 0; r < size && !st; r++) {
        rdispl[r] = rtotal;
        rtotal += rcount[r];
    }
    if (!st && !(got = ints(NULL, rtotal, &ok)))
        st = EP_ERR_NO_MEM;
    if (!st) {
        ep_coll_alltoallw(&a, ep, rec, 0, scount, sdispl, MPI_INT, NULL, got, 0, rcount, rdispl, MPI_INT, NULL, 0);
        st = ep_coll_run(ep, &a);
    }
    int indeg = 0, outdeg = 0;
    for (int i = 0; i < rtotal && !st; i += EDGE_INTS)
        got[i] == EDGE_OUT ? outdeg++ : indeg++;
    int *nb = ints(NULL, 2 * (indeg + outdeg), &ok), *src = nb, *sw = nb + indeg, *dst = nb + 2 * indeg,
        *dw = dst + outdeg;
    if (!st && !ok)
        st = EP_ERR_NO_MEM;
    for (int i = 0, ni = 0, no = 0; i < rtotal && !st; i += EDGE_INTS) {
        if (got[i] == EDGE_OUT) {
            dst[no] = got[i + 1];
            dw[no++] = got[i + 2];
        } else {
            src[ni] = got[i + 1];
            sw[ni++] = got[i + 2];
        }
    }
    ep_topo_t *t = NULL;
    ep_status_t made = st ? st : ep_topo_dist(ep_local_rank(ep), indeg, src, sw, outdeg, dst, dw, weighted, &t);
    free(v), free(rec), free(got), free(nb);
    return split_attach(ep, 0, made, t, out);
}
