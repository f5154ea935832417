/* src/coll/topo.c: grid arithmetic (ranks, coordinates, shifts, wrapping),
 * each kind's neighbours in MPI's buffer order, and the exchange's view of
 * the edges: a pair of ranks with several edges pairs them in an order both
 * ends agree on (by direction on a grid, in edge order in a graph). */
#include "coll/topo.h"
#include "unit.h"

#include <mpi.h>

START_TEST(grid_ranks_and_shifts)
{
    int dims[2] = {2, 3}, periods[2] = {1, 0}, c[2];
    ep_topo_t *t;
    ck_assert_int_eq(ep_cart_size(2, dims), 6);
    ck_assert_int_eq(ep_topo_cart(2, dims, periods, 4, &t), EP_OK);
    ck_assert_int_eq(t->coords[0], 1); /* row-major: rank 4 is (1, 1) */
    ck_assert_int_eq(t->coords[1], 1);
    ep_cart_coords(t, 5, c);
    ck_assert_int_eq(c[0], 1);
    ck_assert_int_eq(c[1], 2);
    int wrap[2] = {-1, 2}, off[2] = {0, 3};
    ck_assert_int_eq(ep_cart_rank(t, wrap), 5); /* periodic dimension 0 wraps to 1 */
    ck_assert_int_eq(ep_cart_rank(t, off), -1); /* dimension 1 does not */
    int src, dst;
    ep_cart_shift(t, 4, 1, 1, &src, &dst);
    ck_assert_int_eq(src, 3);
    ck_assert_int_eq(dst, 5);
    ep_cart_shift(t, 4, 1, 2, &src, &dst);
    ck_assert_int_eq(src, MPI_PROC_NULL);
    ck_assert_int_eq(dst, MPI_PROC_NULL);
    ep_cart_shift(t, 4, 0, 3, &src, &dst); /* 3 steps around a ring of 2 */
    ck_assert_int_eq(src, 1);
    ck_assert_int_eq(dst, 1);
    ep_topo_free(t);
}
END_TEST

/* Rank 4 of the 2 x 3 grid: dimension 0 (periodic, 2 ranks) has rank 1
 * both ways; dimension 1 has 3 and 5. */
START_TEST(grid_neighbours_pair_by_direction)
{
    int dims[2] = {2, 3}, periods[2] = {1, 0};
    ep_topo_t *t;
    ck_assert_int_eq(ep_topo_cart(2, dims, periods, 4, &t), EP_OK);
    ck_assert_int_eq(t->indegree, 4);
    ck_assert_int_eq(t->outdegree, 4);
    const int want[4] = {1, 1, 3, 5};
    for (int j = 0; j < 4; j++) {
        ck_assert_int_eq(t->sources[j], want[j]);
        ck_assert_int_eq(t->dests[j], want[j]);
    }
    /* To rank 1 go our slot 0 (towards -1), then slot 1.  From it come,
     * in its send order, its slot 0 (towards -1: it arrives from our +1,
     * slot 1), then its slot 1 (our slot 0). */
    ck_assert_int_eq(ep_topo_edge(t->out, t->nout, 1, 0)->slot, 0);
    ck_assert_int_eq(ep_topo_edge(t->out, t->nout, 1, 1)->slot, 1);
    ck_assert_int_eq(ep_topo_edge(t->in, t->nin, 1, 0)->slot, 1);
    ck_assert_int_eq(ep_topo_edge(t->in, t->nin, 1, 1)->slot, 0);
    ck_assert_ptr_null(ep_topo_edge(t->in, t->nin, 1, 2));
    ck_assert_int_eq(ep_topo_edge(t->in, t->nin, 3, 0)->slot, 2);
    ck_assert_ptr_null(ep_topo_edge(t->in, t->nin, 0, 0));
    ep_topo_free(t);
}
END_TEST

START_TEST(grid_edge_has_no_neighbour)
{
    int dims[1] = {3}, periods[1] = {0};
    ep_topo_t *t;
    ck_assert_int_eq(ep_topo_cart(1, dims, periods, 0, &t), EP_OK);
    ck_assert_int_eq(t->sources[0], MPI_PROC_NULL);
    ck_assert_int_eq(t->sources[1], 1);
    ck_assert_int_eq(t->nin, 1); /* MPI_PROC_NULL moves nothing */
    ck_assert_int_eq(t->nout, 1);
    ep_topo_free(t);
    ck_assert_int_eq(ep_topo_cart(0, dims, periods, 0, &t), EP_OK); /* no dimension: no neighbour */
    ck_assert_int_eq(t->indegree, 0);
    ep_topo_free(t);
}
END_TEST

/* Node 0 of a graph with three edges to node 1: they pair in edge order. */
START_TEST(multigraph_in_edge_order)
{
    int index[2] = {3, 6}, edges[6] = {1, 1, 1, 0, 0, 0};
    ep_topo_t *t, *c;
    ck_assert_int_eq(ep_topo_graph(2, index, edges, 0, &t), EP_OK);
    ck_assert_int_eq(t->indegree, 3);
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(ep_topo_edge(t->out, t->nout, 1, k)->slot, k);
        ck_assert_int_eq(ep_topo_edge(t->in, t->nin, 1, k)->slot, k);
    }
    ck_assert_ptr_null(ep_topo_edge(t->out, t->nout, 1, 3));
    ck_assert_int_eq(ep_topo_copy(t, &c), EP_OK); /* MPI_Comm_dup's copy */
    ck_assert_int_eq(c->kind, MPI_GRAPH);
    ck_assert_int_eq(c->nnodes, 2);
    ck_assert_int_eq(c->edges[5], 0);
    ck_assert_int_eq(c->nout, 3);
    ep_topo_free(c);
    ep_topo_free(t);
}
END_TEST

START_TEST(distributed_graph_keeps_weights)
{
    int src[2] = {2, 0}, sw[2] = {7, 8}, dst[3] = {1, 2, 1}, dw[3] = {4, 5, 6};
    ep_topo_t *t, *c;
    ck_assert_int_eq(ep_topo_dist(0, 2, src, sw, 3, dst, dw, 1, &t), EP_OK);
    ck_assert_int_eq(ep_topo_copy(t, &c), EP_OK);
    ck_assert_int_eq(c->weighted, 1);
    ck_assert_int_eq(c->sweights[1], 8);
    ck_assert_int_eq(c->dweights[2], 6);
    /* Edges by peer: to 1 slots 0 and 2, to 2 slot 1. */
    ck_assert_int_eq(ep_topo_edge(c->out, c->nout, 1, 0)->slot, 0);
    ck_assert_int_eq(ep_topo_edge(c->out, c->nout, 1, 1)->slot, 2);
    ck_assert_int_eq(ep_topo_edge(c->out, c->nout, 2, 0)->slot, 1);
    ck_assert_int_eq(ep_topo_edge(c->in, c->nin, 0, 0)->slot, 1);
    ep_topo_free(c);
    ep_topo_free(t);
    ck_assert_int_eq(ep_topo_dist(0, 0, NULL, NULL, 0, NULL, NULL, 0, &t), EP_OK); /* no edge at all */
    ck_assert_int_eq(t->nin + t->nout, 0);
    ep_topo_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("topo");
    TCase *tc = tcase_create("topologies");
    tcase_add_test(tc, grid_ranks_and_shifts);
    tcase_add_test(tc, grid_neighbours_pair_by_direction);
    tcase_add_test(tc, grid_edge_has_no_neighbour);
    tcase_add_test(tc, multigraph_in_edge_order);
    tcase_add_test(tc, distributed_graph_keeps_weights);
    suite_add_tcase(s, tc);
    return ep_unit_run(s);
}
