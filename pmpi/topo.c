/* Virtual topologies on endpoint communicators: the constructors and the
 * queries (src/coll/topo.h).  The neighbourhood collectives are in coll.c. */
#include "entry.h"
#include "coll/topo.h"
#include "comm/topo_create.h"

#include <string.h>

/* ---- shared checks ---------------------------------------------------------- */

/* A topology constructor's old communicator: an intracommunicator. */
static int check_old(ep_endpoint_t *ep, const char *call, MPI_Comm *newcomm)
{
    if (ep->comm->inter)
        return entry_raise(ep, call, MPI_ERR_COMM, "an intercommunicator cannot carry a topology");
    if (!newcomm)
        return entry_raise(ep, call, MPI_ERR_ARG, "the new communicator pointer is NULL");
    return MPI_SUCCESS;
}

/* ep's topology when it is of kind `kind` (0: any kind). */
static int need_topo(ep_endpoint_t *ep, const char *call, int kind, const ep_topo_t **t)
{
    static const char *const names[] = {
        [MPI_CART] = "Cartesian", [MPI_GRAPH] = "graph", [MPI_DIST_GRAPH] = "distributed graph"};
    *t = ep->topo;
    if (!*t)
        return entry_raise(ep, call, MPI_ERR_TOPOLOGY, "the communicator has no topology");
    if (kind && (*t)->kind != kind)
        return entry_raise(ep, call, MPI_ERR_TOPOLOGY, "the communicator has a %s topology, not a %s one",
                           names[(*t)->kind], names[kind]);
    return MPI_SUCCESS;
}

static int check_ptr(ep_endpoint_t *ep, const char *call, const void *p, const char *what)
{
    return p ? MPI_SUCCESS : entry_raise(ep, call, MPI_ERR_ARG, "%s is NULL", what);
}

static int done(ep_endpoint_t *ep, const char *call, ep_status_t st)
{
    return st ? entry_raise_status(ep, call, st, NULL) : MPI_SUCCESS;
}

/* A grid's dimensions: ndims >= 0, every extent positive, at most `size`
 * points (size < 0: any number). */
static int check_grid(ep_endpoint_t *ep, const char *call, int ndims, const int dims[], const int periods[], int size)
{
    int rc;
    long long points = 1;
    if (ndims < 0)
        return entry_raise(ep, call, MPI_ERR_ARG, "ndims is %d (must be non-negative)", ndims);
    if (ndims > 0 && ((rc = check_ptr(ep, call, dims, "dims")) || (rc = check_ptr(ep, call, periods, "periods"))))
        return rc;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return entry_raise(ep, call, MPI_ERR_DIMS, "dims[%d] is %d (must be positive)", d, dims[d]);
        if ((points *= dims[d]) > INT32_MAX)
            return entry_raise(ep, call, MPI_ERR_DIMS, "the grid has more than %d points", INT32_MAX);
    }
    if (size >= 0 && points > size)
        return entry_raise(ep, call, MPI_ERR_ARG,
                           "the grid has %lld points, more than the %d ranks of the communicator", points, size);
    return MPI_SUCCESS;
}

/* A graph as MPI_Graph_create takes it. */
static int check_graph(ep_endpoint_t *ep, const char *call, int nnodes, const int index[], const int edges[], int size)
{
    int rc;
    if (nnodes < 0 || nnodes > size)
        return entry_raise(ep, call, MPI_ERR_ARG, "nnodes is %d (must be 0 to the communicator's size %d)", nnodes,
                           size);
    if (nnodes == 0)
        return MPI_SUCCESS;
    if ((rc = check_ptr(ep, call, index, "index")))
        return rc;
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return entry_raise(ep, call, MPI_ERR_ARG, "index[%d] is %d, less than the one before", i, index[i]);
    if (index[nnodes - 1] > 0 && (rc = check_ptr(ep, call, edges, "edges")))
        return rc;
    for (int e = 0; e < index[nnodes - 1]; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return entry_raise(ep, call, MPI_ERR_ARG, "edges[%d] is %d, not a node (0 to %d)", e, edges[e], nnodes - 1);
    return MPI_SUCCESS;
}

/* n ranks of ep's communicator, and their weights unless unweighted. */
static int check_ranks(ep_endpoint_t *ep, const char *call, const char *what, const int ranks[], const int w[],
                       int weighted, int n)
{
    int rc, size = ep_local_size(ep);
    if (n < 0)
        return entry_raise(ep, call, MPI_ERR_ARG, "the number of %s is %d (must be non-negative)", what, n);
    if (n > 0 && ((rc = check_ptr(ep, call, ranks, what)) || (weighted && (rc = check_ptr(ep, call, w, "weights")))))
        return rc;
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= size)
            return entry_raise(ep, call, MPI_ERR_RANK, "%s[%d] is %d (the communicator has %d ranks)", what, i,
                               ranks[i], size);
        if (weighted && w[i] < 0)
            return entry_raise(ep, call, MPI_ERR_ARG, "weight %d of %s is %d (must be non-negative)", i, what, w[i]);
    }
    return MPI_SUCCESS;
}

/* MPI_UNWEIGHTED means no weights; MPI_WEIGHTS_EMPTY is an empty array. */
static int weighted_arg(const int *w) { return w != MPI_UNWEIGHTED; }

/* ---- Cartesian grids -------------------------------------------------------- */

/* reorder is accepted and ranks are kept, as MPI allows. */
ENTRY_ENDPOINT_PATH int cart_create_ep(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                                       MPI_Comm *comm_cart)
{
    static const char call[] = "MPI_Cart_create";
    ep_endpoint_t *ep;
    int rc;
    (void)reorder;
    ENTRY_RESOLVE_EP(call, comm_old, ep);
    if ((rc = check_old(ep, call, comm_cart)) || (rc = check_grid(ep, call, ndims, dims, periods, ep_local_size(ep))))
        return rc;
    return done(ep, call, ep_topo_cart_create(ep, ndims, dims, periods, comm_cart));
}

ENTRY_ENDPOINT_PATH int cart_sub_ep(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Cart_sub";
    ep_endpoint_t *ep;
    const ep_topo_t *t;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = need_topo(ep, call, MPI_CART, &t)) || (rc = check_old(ep, call, newcomm)) ||
        (t->ndims > 0 && (rc = check_ptr(ep, call, remain_dims, "remain_dims"))))
        return rc;
    return done(ep, call, ep_topo_cart_sub(ep, remain_dims, newcomm));
}

ENTRY_ENDPOINT_PATH int cartdim_get_ep(MPI_Comm comm, int *ndims)
{
    static const char call[] = "MPI_Cartdim_get";
    ep_endpoint_t *ep;
    const ep_topo_t *t;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = need_topo(ep, call, MPI_CART, &t)) || (rc = check_ptr(ep, call, ndims, "ndims")))
        return rc;
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int cart_get_ep(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    static const char call[] = "MPI_Cart_get";
    ep_endpoint_t *ep;
    const ep_topo_t *t;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = need_topo(ep, call, MPI_CART, &t)))
        return rc;
    if (maxdims < t->ndims)
        return entry_raise(ep, call, MPI_ERR_ARG, "maxdims is %d, less than the grid's %d dimensions", maxdims,
                           t->ndims);
    if (t->ndims > 0 && ((rc = check_ptr(ep, call, dims, "dims")) || (rc = check_ptr(ep, call, periods, "periods")) ||
                         (rc = check_ptr(ep, call, coords, "coords"))))
        return rc;
    for (int d = 0; d < t->ndims; d++) {
        dims[d] = t->dims[d];
        periods[d] = t->periods[d];
        coords[d] = t->coords[d];
    }
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int cart_rank_ep(MPI_Comm comm, const int coords[], int *rank)
{
    static const char call[] = "MPI_Cart_rank";
    ep_endpoint_t *ep;
    const ep_topo_t *t;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = need_topo(ep, call, MPI_CART, &t)) || (rc = check_ptr(ep, call, rank, "rank")) ||
        (t->ndims > 0 && (rc = check_ptr(ep, call, coords, "coords"))))
        return rc;
    for (int d = 0; d < t->ndims; d++)
        if (!t->periods[d] && (coords[d] < 0 || coords[d] >= t->dims[d]))
            return entry_raise(ep, call, MPI_ERR_ARG, "coords[%d] is %d, outside the non-periodic dimension of %d", d,
                               coords[d], t->dims[d]);
    *rank = ep_cart_rank(t, coords);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int cart_coords_ep(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    static const char call[] = "MPI_Cart_coords";
    ep_endpoint_t *ep;
    const ep_topo_t *t;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = need_topo(ep, call, MPI_CART, &t)))
        return rc;
    if (rank < 0 || rank >= ep_local_size(ep))
        return entry_raise(ep, call, MPI_ERR_RANK, "rank %d is not in the communicator (size %d)", rank,
                           ep_local_size(ep));
    if (maxdims < t->ndims)
        return entry_raise(ep, call, MPI_ERR_ARG, "maxdims is %d, less than the grid's %d dimensions", maxdims,
                           t->ndims);
    if (t->ndims > 0 && (rc = check_ptr(ep, call, coords, "coords")))
        return rc;
    ep_cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int cart_shift_ep(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    static const char call[] = "MPI_Cart_shift";
    ep_endpoint_t *ep;
    const ep_topo_t *t;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = need_topo(ep, call, MPI_CART, &t)) || (rc = check_ptr(ep, call, rank_source, "rank_source")) ||
        (rc = check_ptr(ep, call, rank_dest, "rank_dest")))
        return rc;
    if (direction < 0 || direction >= t->ndims)
        return entry_raise(ep, call, MPI_ERR_ARG, "direction %d is not a dimension of the grid (0 to %d)", direction,
                           t->ndims - 1);
    ep_cart_shift(t, t->rank, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}

/* Where MPI_Cart_create would put this rank: ranks are kept. */
ENTRY_ENDPOINT_PATH int cart_map_ep(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    static const char call[] = "MPI_Cart_map";
    ep_endpoint_t *ep;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = check_ptr(ep, call, newrank, "newrank")) ||
        (rc = check_grid(ep, call, ndims, dims, periods, ep_local_size(ep))))
        return rc;
    *newrank = ep_local_rank(ep) < ep_cart_size(ndims, dims) ? ep_local_rank(ep) : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- graphs ----------------------------------------------------------------- */

ENTRY_API int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                               MPI_Comm *comm_graph)
{
    static const char call[] = "MPI_Graph_create";
    ep_endpoint_t *ep;
    int rc;
    ENTRY_RESOLVE(call, comm_old, ep, PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph));
    if ((rc = check_old(ep, call, comm_graph)) || (rc = check_graph(ep, call, nnodes, index, edges, ep_local_size(ep))))
        return rc;
    return done(ep, call, ep_topo_graph_create(ep, nnodes, index, edges, comm_graph));
}

ENTRY_ENDPOINT_PATH int graphdims_get_ep(MPI_Comm comm, int *nnodes, int *nedges)
{
    static const char call[] = "MPI_Graphdims_get";
    ep_endpoint_t *ep;
    const ep_topo_t *t;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = need_topo(ep, call, MPI_GRAPH, &t)) || (rc = check_ptr(ep, call, nnodes, "nnodes")) ||
        (rc = check_ptr(ep, call, nedges, "nedges")))
        return rc;
    *nnodes = t->nnodes;
    *nedges = t->nnodes ? t->index[t->nnodes - 1] : 0;
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    static const char call[] = "MPI_Graph_get";
    ep_endpoint_t *ep;
    const ep_topo_t *t;
    int rc;
    ENTRY_RESOLVE(call, comm, ep, PMPI_Graph_get(comm, maxindex, maxedges, index, edges));
    if ((rc = need_topo(ep, call, MPI_GRAPH, &t)))
        return rc;
    int nedges = t->nnodes ? t->index[t->nnodes - 1] : 0;
    if (maxindex < t->nnodes || maxedges < nedges)
        return entry_raise(ep, call, MPI_ERR_ARG, "maxindex %d and maxedges %d cannot hold %d nodes and %d edges",
                           maxindex, maxedges, t->nnodes, nedges);
    if ((t->nnodes && (rc = check_ptr(ep, call, index, "index"))) ||
        (nedges && (rc = check_ptr(ep, call, edges, "edges"))))
        return rc;
    if (t->nnodes)
        memcpy(index, t->index, sizeof *index * (size_t)t->nnodes);
    if (nedges)
        memcpy(edges, t->edges, sizeof *edges * (size_t)nedges);
    return MPI_SUCCESS;
}

/* A graph node's neighbours: [first, end) in the edge list. */
static int graph_node(ep_endpoint_t *ep, const char *call, const ep_topo_t *t, int rank, int *first, int *end)
{
    if (rank < 0 || rank >= t->nnodes)
        return entry_raise(ep, call, MPI_ERR_RANK, "rank %d is not a node of the graph (0 to %d)", rank, t->nnodes - 1);
    *first = rank ? t->index[rank - 1] : 0;
    *end = t->index[rank];
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int graph_neighbors_count_ep(MPI_Comm comm, int rank, int *nneighbors)
{
    static const char call[] = "MPI_Graph_neighbors_count";
    ep_endpoint_t *ep;
    const ep_topo_t *t;
    int rc, first, end;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = need_topo(ep, call, MPI_GRAPH, &t)) || (rc = graph_node(ep, call, t, rank, &first, &end)) ||
        (rc = check_ptr(ep, call, nneighbors, "nneighbors")))
        return rc;
    *nneighbors = end - first;
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int graph_neighbors_ep(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    static const char call[] = "MPI_Graph_neighbors";
    ep_endpoint_t *ep;
    const ep_topo_t *t;
    int rc, first, end;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = need_topo(ep, call, MPI_GRAPH, &t)) || (rc = graph_node(ep, call, t, rank, &first, &end)))
        return rc;
    int n = end - first < maxneighbors ? end - first : maxneighbors;
    if (n > 0 && (rc = check_ptr(ep, call, neighbors, "neighbors")))
        return rc;
    for (int i = 0; i < n; i++)
        neighbors[i] = t->edges[first + i];
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    static const char call[] = "MPI_Graph_map";
    ep_endpoint_t *ep;
    int rc;
    ENTRY_RESOLVE(call, comm, ep, PMPI_Graph_map(comm, nnodes, index, edges, newrank));
    if ((rc = check_ptr(ep, call, newrank, "newrank")) ||
        (rc = check_graph(ep, call, nnodes, index, edges, ep_local_size(ep))))
        return rc;
    *newrank = ep_local_rank(ep) < nnodes ? ep_local_rank(ep) : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- distributed graphs ------------------------------------------------------- */

/* Info hints change nothing (MPI lets an implementation ignore them). */
ENTRY_API int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                             const int sourceweights[], int outdegree, const int destinations[],
                                             const int destweights[], MPI_Info info, int reorder,
                                             MPI_Comm *comm_dist_graph)
{
    static const char call[] = "MPI_Dist_graph_create_adjacent";
    ep_endpoint_t *ep;
    int rc, weighted = weighted_arg(sourceweights) && weighted_arg(destweights);
    ENTRY_RESOLVE(call, comm_old, ep,
                  PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                                  destweights, info, reorder, comm_dist_graph));
    if ((rc = check_old(ep, call, comm_dist_graph)) ||
        (rc = check_ranks(ep, call, "sources", sources, sourceweights, weighted, indegree)) ||
        (rc = check_ranks(ep, call, "destinations", destinations, destweights, weighted, outdegree)))
        return rc;
    return done(ep, call,
                ep_topo_dist_adjacent(ep, indegree, sources, weighted ? sourceweights : NULL, outdegree, destinations,
                                      weighted ? destweights : NULL, weighted, comm_dist_graph));
}

ENTRY_API int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                                    const int destinations[], const int weights[], MPI_Info info, int reorder,
                                    MPI_Comm *comm_dist_graph)
{
    static const char call[] = "MPI_Dist_graph_create";
    ep_endpoint_t *ep;
    int rc, weighted = weighted_arg(weights), total = 0;
    ENTRY_RESOLVE(
        call, comm_old, ep,
        PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph));
    if ((rc = check_old(ep, call, comm_dist_graph)) || (rc = check_ranks(ep, call, "sources", sources, NULL, 0, n)) ||
        (n > 0 && (rc = check_ptr(ep, call, degrees, "degrees"))))
        return rc;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return entry_raise(ep, call, MPI_ERR_ARG, "degrees[%d] is %d (must be non-negative)", i, degrees[i]);
        if (degrees[i] > INT32_MAX - total)
            return entry_raise(ep, call, MPI_ERR_ARG, "more than %d edges", INT32_MAX);
        total += degrees[i];
    }
    if ((rc = check_ranks(ep, call, "destinations", destinations, weights, weighted, total)))
        return rc;
    return done(ep, call,
                ep_topo_dist_create(ep, n, sources, degrees, destinations, weighted ? weights : NULL, weighted,
                                    comm_dist_graph));
}

ENTRY_ENDPOINT_PATH int dist_graph_neighbors_count_ep(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    static const char call[] = "MPI_Dist_graph_neighbors_count";
    ep_endpoint_t *ep;
    const ep_topo_t *t;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = need_topo(ep, call, MPI_DIST_GRAPH, &t)) || (rc = check_ptr(ep, call, indegree, "indegree")) ||
        (rc = check_ptr(ep, call, outdegree, "outdegree")) || (rc = check_ptr(ep, call, weighted, "weighted")))
        return rc;
    *indegree = t->indegree;
    *outdegree = t->outdegree;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                                       int maxoutdegree, int destinations[], int destweights[])
{
    static const char call[] = "MPI_Dist_graph_neighbors";
    ep_endpoint_t *ep;
    const ep_topo_t *t;
    int rc;
    ENTRY_RESOLVE(
        call, comm, ep,
        PMPI_Dist_graph_neighbors(comm, maxindegree, sources, sourceweights, maxoutdegree, destinations, destweights));
    if ((rc = need_topo(ep, call, MPI_DIST_GRAPH, &t)))
        return rc;
    if (maxindegree < t->indegree || maxoutdegree < t->outdegree)
        return entry_raise(ep, call, MPI_ERR_ARG, "maxindegree %d and maxoutdegree %d cannot hold degrees %d and %d",
                           maxindegree, maxoutdegree, t->indegree, t->outdegree);
    if ((t->indegree && (rc = check_ptr(ep, call, sources, "sources"))) ||
        (t->outdegree && (rc = check_ptr(ep, call, destinations, "destinations"))))
        return rc;
    for (int i = 0; i < t->indegree; i++) {
        sources[i] = t->sources[i];
        if (t->weighted && weighted_arg(sourceweights) && sourceweights)
            sourceweights[i] = t->sweights[i];
    }
    for (int i = 0; i < t->outdegree; i++) {
        destinations[i] = t->dests[i];
        if (t->weighted && weighted_arg(destweights) && destweights)
            destweights[i] = t->dweights[i];
    }
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int topo_test_ep(MPI_Comm comm, int *status)
{
    static const char call[] = "MPI_Topo_test";
    ep_endpoint_t *ep;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = check_ptr(ep, call, status, "status")))
        return rc;
    *status = ep->topo ? ep->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* The entry points whose dispatch is data (maint/dispatch.txt). */
#include "topo.entry.gen.inc"
