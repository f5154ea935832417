/* Virtual topologies on endpoint communicators (topo.h). */
#include "coll/topo.h"

#include <stdlib.h>
#include <string.h>

/* ---- the topology record ---------------------------------------------------- */

int *ep_topo_ints(const int *v, int n, int *ok)
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
    t->dims = ep_topo_ints(dims, ndims, &ok);
    t->periods = ep_topo_ints(NULL, ndims, &ok);
    t->coords = ep_topo_ints(NULL, ndims, &ok);
    t->indegree = t->outdegree = 2 * ndims;
    t->sources = ep_topo_ints(NULL, 2 * ndims, &ok);
    t->dests = ep_topo_ints(NULL, 2 * ndims, &ok);
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
    t->index = ep_topo_ints(index, nnodes, &ok);
    t->edges = ep_topo_ints(edges, nedges, &ok);
    int first = rank > 0 ? index[rank - 1] : 0;
    t->indegree = t->outdegree = index[rank] - first;
    t->sources = ep_topo_ints(edges + first, t->indegree, &ok);
    t->dests = ep_topo_ints(edges + first, t->outdegree, &ok);
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
    t->sources = ep_topo_ints(sources, indegree, &ok);
    t->dests = ep_topo_ints(dests, outdegree, &ok);
    t->weighted = weighted;
    if (weighted) {
        t->sweights = ep_topo_ints(sweights, indegree, &ok);
        t->dweights = ep_topo_ints(dweights, outdegree, &ok);
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
