/* Communicators with a virtual topology (coll/topo.h).
 *
 * The constructors keep ranks (MPI allows it whatever `reorder` says): the
 * new communicator is a split of the old one, colour 0 for the ranks the
 * topology holds, MPI_UNDEFINED for the others, key the old rank. */
#ifndef EP_TOPO_CREATE_H
#define EP_TOPO_CREATE_H

#include "core/comm.h"

/* The constructors, called by every rank of ep's intracommunicator: *out
 * the new handle, or MPI_COMM_NULL for a rank the topology leaves out. */
ep_status_t ep_topo_cart_create(ep_endpoint_t *ep, int ndims, const int *dims, const int *periods, MPI_Comm *out);
/* MPI_Cart_sub of ep's grid. */
ep_status_t ep_topo_cart_sub(ep_endpoint_t *ep, const int *remain, MPI_Comm *out);
ep_status_t ep_topo_graph_create(ep_endpoint_t *ep, int nnodes, const int *index, const int *edges, MPI_Comm *out);
ep_status_t ep_topo_dist_adjacent(ep_endpoint_t *ep, int indegree, const int *sources, const int *sweights,
                                  int outdegree, const int *dests, const int *dweights, int weighted, MPI_Comm *out);
/* MPI_Dist_graph_create: each rank names any edges (n sources, each with
 * degrees[i] destinations); every rank learns its own. */
ep_status_t ep_topo_dist_create(ep_endpoint_t *ep, int n, const int *sources, const int *degrees, const int *dests,
                                const int *weights, int weighted, MPI_Comm *out);

#endif
