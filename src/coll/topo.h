/* Virtual topologies on endpoint communicators: Cartesian grids, graphs
 * and distributed graphs.
 *
 * A topology belongs to one endpoint (ep_endpoint_t.topo): what MPI lets
 * every rank ask (the grid, the whole graph) and this rank's neighbours in
 * MPI's buffer order.  It is built by the constructors of
 * comm/topo_create.h, copied by MPI_Comm_dup, never changed, and freed
 * with the communicator.
 *
 * Neighbourhood collectives (coll_xchg.c) move one block per edge.  Two
 * ranks can share several edges (a multigraph, or a periodic dimension of
 * one or two ranks), so each side lists its edges by peer, in an order both
 * sides agree on: the sender's edges to a peer in send-buffer order, the
 * receiver's edges from it sorted by the sender's slot, which the receiver
 * knows (in a graph, the k-th edge from a peer is the peer's k-th edge to
 * it; on a grid, the block a rank sends in direction -1 of a dimension
 * arrives as the block the receiver takes from direction +1, as MPICH
 * does it). */
#ifndef EP_TOPO_H
#define EP_TOPO_H

#include "core/comm.h"

/* One edge of a rank, as the exchange walks them. */
typedef struct ep_edge {
    int peer; /* the rank at the other end */
    int slot; /* the block's place in this rank's buffer (in- or out-neighbour index) */
    int key;  /* the order of a pair's edges, the same on both sides */
} ep_edge_t;

typedef struct ep_topo {
    int kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    int rank; /* the owner's rank */
    /* MPI_CART */
    int ndims;
    int *dims, *periods, *coords; /* [ndims] the grid and the owner's place in it */
    /* MPI_GRAPH: the whole graph as MPI_Graph_create took it */
    int nnodes;
    int *index, *edges; /* [nnodes], [index[nnodes - 1]] */
    /* every kind: the owner's neighbours in buffer order (grids: MPI_PROC_NULL
     * where a non-periodic dimension ends) */
    int indegree, outdegree;
    int *sources, *dests;
    int weighted;             /* MPI_DIST_GRAPH: weights were given */
    int *sweights, *dweights; /* [indegree], [outdegree] when weighted */
    /* the exchange's view: real edges sorted by (peer, key) */
    int nin, nout;
    ep_edge_t *in, *out;
} ep_topo_t;

/* The topology of `rank` (not checked: the entry points check). */
ep_status_t ep_topo_cart(int ndims, const int *dims, const int *periods, int rank, ep_topo_t **out);
ep_status_t ep_topo_graph(int nnodes, const int *index, const int *edges, int rank, ep_topo_t **out);
/* weights NULL: unweighted. */
ep_status_t ep_topo_dist(int rank, int indegree, const int *sources, const int *sweights, int outdegree,
                         const int *dests, const int *dweights, int weighted, ep_topo_t **out);
/* A copy (MPI_Comm_dup); NULL for NULL, or when memory is short. */
ep_status_t ep_topo_copy(const ep_topo_t *t, ep_topo_t **out);
void ep_topo_free(ep_topo_t *t);

/* Grids. */
int ep_cart_size(int ndims, const int *dims);
/* The rank at coords, wrapping periodic dimensions; -1 when a coordinate
 * of a non-periodic dimension lies outside the grid. */
int ep_cart_rank(const ep_topo_t *t, const int *coords);
void ep_cart_coords(const ep_topo_t *t, int rank, int *coords);
/* MPI_Cart_shift from rank: the ranks disp steps back and forward along
 * direction dir (MPI_PROC_NULL off a non-periodic grid). */
void ep_cart_shift(const ep_topo_t *t, int rank, int dir, int disp, int *source, int *dest);

/* Block k (0, 1, ...) between the owner and peer among n edges sorted by
 * (peer, key), or NULL. */
const ep_edge_t *ep_topo_edge(const ep_edge_t *e, int n, int peer, int k);

/* A copy of n ints, or n zeroes when v is NULL (room for one when n is 0,
 * so NULL means no memory, and then *ok = 0). */
int *ep_topo_ints(const int *v, int n, int *ok);

#endif
