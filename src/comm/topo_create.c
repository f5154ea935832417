/* The constructors of communicators with a topology (topo_create.h): a
 * split of the old communicator, each new endpoint given its topology
 * record (coll/topo.h). */
#include "comm/topo_create.h"

#include "coll/coll.h"
#include "coll/topo.h"
#include "comm/comm_create.h"

#include <stdlib.h>

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
    /* No dimension kept: every rank its own zero-dimensional communicator
     * (MPI-4.0 8.5.7; MPICH gives one to rank 0 alone), the colour then
     * numbering every coordinate. */
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
    int *v = ep_topo_ints(NULL, 5 * size, &ok), *scount = v, *sdispl = v + size, *rcount = v + 2 * size,
        *rdispl = v + 3 * size, *fill = v + 4 * size;
    int *rec = ep_topo_ints(NULL, 2 * total * EDGE_INTS, &ok), *got = NULL;
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
    if (!st && !(got = ep_topo_ints(NULL, rtotal, &ok)))
        st = EP_ERR_NO_MEM;
    if (!st) {
        ep_coll_alltoallw(&a, ep, rec, 0, scount, sdispl, MPI_INT, NULL, got, 0, rcount, rdispl, MPI_INT, NULL, 0);
        st = ep_coll_run(ep, &a);
    }
    int indeg = 0, outdeg = 0;
    for (int i = 0; i < rtotal && !st; i += EDGE_INTS)
        got[i] == EDGE_OUT ? outdeg++ : indeg++;
    int *nb = ep_topo_ints(NULL, 2 * (indeg + outdeg), &ok), *src = nb, *sw = nb + indeg, *dst = nb + 2 * indeg,
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
