/* Virtual topologies on the test communicator (MPI_COMM_WORLD in world
 * mode, endpoints in explicit shapes, the classic MPI_COMM_WORLD in P:0
 * shapes, where MPICH checks the test itself):
 *  - MPI_Cart_create of MPI_Dims_create's 2-D grid (periodic in the first
 *    dimension, reorder true) and every query: Topo_test, Cartdim_get,
 *    Cart_get, Cart_rank (periodic coordinates wrap), Cart_coords of every
 *    rank, Cart_shift by 1, -1 and 2 against values computed here,
 *    Cart_map; a grid of fewer points than ranks (MPI_COMM_NULL for the
 *    others); Cart_sub into rows and into no dimension (each rank alone;
 *    classic MPICH: rank 0 alone); MPI_Comm_dup keeps
 *    the topology, MPI_Comm_split does not;
 *  - MPI_Graph_create of a ring with a chord, Graphdims_get, Graph_get,
 *    Graph_neighbors(_count) of every node, Graph_map;
 *  - MPI_Dist_graph_create_adjacent (weighted) and MPI_Dist_graph_create
 *    (edges named by other ranks, unweighted): the degrees, neighbours and
 *    weights each rank learns;
 *  - errors: queries of the wrong kind (MPI_ERR_TOPOLOGY), a grid larger
 *    than the communicator or ndims -1 (MPI_ERR_ARG), a zero extent
 *    (MPI_ERR_DIMS), a rank outside the communicator (MPI_ERR_RANK).  Traffic on these
 *    communicators is topo_neighbor's. */
#include "eptest.h"
#include "topo_common.h"

/* Row-major grid arithmetic, written out independently of the library. */
static int grid_rank(int nd, const int *dims, const int *per, const int *c)
{
    int r = 0;
    for (int d = 0; d < nd; d++) {
        int x = c[d];
        if (x < 0 || x >= dims[d]) {
            if (!per[d])
                return MPI_PROC_NULL;
            x = ((x % dims[d]) + dims[d]) % dims[d];
        }
        r = r * dims[d] + x;
    }
    return r;
}

static void grid_coords(int nd, const int *dims, int r, int *c)
{
    for (int d = nd - 1; d >= 0; d--) {
        c[d] = r % dims[d];
        r /= dims[d];
    }
}

static void check_topo(MPI_Comm c, int kind, const char *what)
{
    int t = -2;
    EPT_OK(MPI_Topo_test(c, &t));
    EPT_CHECK(t == kind, "%s: MPI_Topo_test gave %d, expected %d", what, t, kind);
}

static int fails_with(int rc, int cls)
{
    int got = -1;
    if (rc == MPI_SUCCESS)
        return 0;
    MPI_Error_class(rc, &got);
    return got == cls;
}

static void cart(MPI_Comm comm, int r, int n)
{
    int dims[2] = {0, 0}, per[2] = {1, 0}, got_dims[2], got_per[2], c[2], nd = -1, rank = -1;
    MPI_Comm g, dup, row, point, split;
    PHASE("cart: create");
    EPT_OK(MPI_Dims_create(n, 2, dims));
    EPT_OK(MPI_Cart_create(comm, 2, dims, per, 1, &g));
    EPT_CHECK(g != MPI_COMM_NULL, "every rank has a place in a grid of all ranks");
    check_topo(g, MPI_CART, "cart");
    EPT_OK(MPI_Comm_rank(g, &rank));
    EPT_CHECK(rank == r, "rank %d in the grid, %d before (reorder keeps ranks here)", rank, r);
    EPT_OK(MPI_Cartdim_get(g, &nd));
    EPT_CHECK(nd == 2, "Cartdim_get %d", nd);
    EPT_OK(MPI_Cart_get(g, 2, got_dims, got_per, c));
    int want[2];
    grid_coords(2, dims, r, want);
    EPT_CHECK(got_dims[0] == dims[0] && got_dims[1] == dims[1] && got_per[0] == 1 && got_per[1] == 0 &&
                  c[0] == want[0] && c[1] == want[1],
              "Cart_get: dims %dx%d periods %d,%d coords %d,%d", got_dims[0], got_dims[1], got_per[0], got_per[1], c[0],
              c[1]);
    for (int q = 0; q < n; q++) {
        int qc[2], back = -1;
        grid_coords(2, dims, q, want);
        EPT_OK(MPI_Cart_coords(g, q, 2, qc));
        EPT_CHECK(qc[0] == want[0] && qc[1] == want[1], "Cart_coords(%d) = %d,%d", q, qc[0], qc[1]);
        EPT_OK(MPI_Cart_rank(g, qc, &back));
        EPT_CHECK(back == q, "Cart_rank(coords of %d) = %d", q, back);
        int wrapped[2] = {qc[0] + 3 * dims[0], qc[1]};
        EPT_OK(MPI_Cart_rank(g, wrapped, &back));
        EPT_CHECK(back == q, "Cart_rank wrapping the periodic dimension: %d, expected %d", back, q);
    }
    static const int disps[] = {1, -1, 2};
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 3; i++) {
            int src = -2, dst = -2, cc[2];
            EPT_OK(MPI_Cart_shift(g, d, disps[i], &src, &dst));
            grid_coords(2, dims, r, cc);
            cc[d] += disps[i];
            int wd = grid_rank(2, dims, per, cc);
            cc[d] -= 2 * disps[i];
            int ws = grid_rank(2, dims, per, cc);
            EPT_CHECK(src == ws && dst == wd, "Cart_shift(%d, %d): %d -> %d, expected %d -> %d", d, disps[i], src, dst,
                      ws, wd);
        }
    int nr = -2;
    EPT_OK(MPI_Cart_map(comm, 2, dims, per, &nr));
    EPT_CHECK(nr == r, "Cart_map: %d", nr);

    PHASE("cart: dup and split");
    EPT_OK(MPI_Comm_dup(g, &dup));
    check_topo(dup, MPI_CART, "dup of a grid");
    EPT_OK(MPI_Cart_coords(dup, r, 2, c));
    grid_coords(2, dims, r, want);
    EPT_CHECK(c[0] == want[0] && c[1] == want[1], "coords on the dup: %d,%d", c[0], c[1]);
    EPT_OK(MPI_Comm_free(&dup));
    EPT_OK(MPI_Comm_split(g, 0, r, &split));
    check_topo(split, MPI_UNDEFINED, "split of a grid");
    EPT_OK(MPI_Comm_free(&split));

    PHASE("cart: sub");
    int rows[2] = {0, 1}, none[2] = {0, 0}, size = -1;
    EPT_OK(MPI_Cart_sub(g, rows, &row));
    check_topo(row, MPI_CART, "row");
    EPT_OK(MPI_Comm_size(row, &size));
    EPT_OK(MPI_Comm_rank(row, &rank));
    grid_coords(2, dims, r, want);
    EPT_CHECK(size == dims[1] && rank == want[1], "row: rank %d of %d, expected %d of %d", rank, size, want[1],
              dims[1]);
    EPT_OK(MPI_Cart_get(row, 1, got_dims, got_per, c));
    EPT_CHECK(got_dims[0] == dims[1] && got_per[0] == 0 && c[0] == want[1], "row grid %d period %d coord %d",
              got_dims[0], got_per[0], c[0]);
    /* The row holds the ranks of my grid row, in order. */
    int *members = malloc(sizeof(int) * (size_t)dims[1]);
    EPT_OK(MPI_Allgather(&r, 1, MPI_INT, members, 1, MPI_INT, row));
    for (int i = 0; i < dims[1]; i++)
        EPT_CHECK(members[i] == want[0] * dims[1] + i, "row member %d is rank %d", i, members[i]);
    free(members);
    /* No dimension kept: each rank its own zero-dimensional grid (MPI-4.0
     * 8.5.7), as on endpoints and in Open MPI; MPICH gives rank 0 one and
     * the others MPI_COMM_NULL (its classic shapes accept that). */
    EPT_OK(MPI_Cart_sub(g, none, &point));
    EPT_CHECK(point != MPI_COMM_NULL || (ept_classic && !EPT_OPEN_MPI && r != 0), "rank %d, no dimension kept: %s", r,
              "MPI_COMM_NULL");
    if (point != MPI_COMM_NULL) {
        EPT_OK(MPI_Comm_size(point, &size));
        EPT_OK(MPI_Cartdim_get(point, &nd));
        EPT_CHECK(size == 1 && nd == 0, "no dimension kept: size %d, %d dimensions", size, nd);
    }
    if (point != MPI_COMM_NULL)
        EPT_OK(MPI_Comm_free(&point));
    EPT_OK(MPI_Comm_free(&row));
    EPT_OK(MPI_Comm_free(&g));

    PHASE("cart: fewer points than ranks");
    int small[1] = {(n + 1) / 2}, ring[1] = {1};
    EPT_OK(MPI_Cart_create(comm, 1, small, ring, 0, &g));
    EPT_CHECK((g == MPI_COMM_NULL) == (r >= small[0]), "rank %d of %d: grid of %d %s", r, n, small[0],
              g == MPI_COMM_NULL ? "left it out" : "took it");
    if (g != MPI_COMM_NULL) {
        EPT_OK(MPI_Comm_size(g, &size));
        EPT_CHECK(size == small[0], "small grid size %d", size);
        EPT_OK(MPI_Comm_free(&g));
    }
    EPT_OK(MPI_Cart_map(comm, 1, small, ring, &nr));
    /* (Open MPI 4.1 gives every rank a place, in or out of the grid) */
    EPT_CHECK(nr == (r < small[0] ? r : MPI_UNDEFINED) || (ept_classic && EPT_OPEN_MPI),
              "Cart_map of the small grid: %d", nr);
}

static void graph(MPI_Comm comm, int r, int n)
{
    int *index, *edges, total = topo_ring_chord_arrays(n, &index, &edges);
    MPI_Comm g;
    PHASE("graph");
    EPT_OK(MPI_Graph_create(comm, n, index, edges, 0, &g));
    check_topo(g, MPI_GRAPH, "graph");
    int nn = -1, ne = -1;
    EPT_OK(MPI_Graphdims_get(g, &nn, &ne));
    EPT_CHECK(nn == n && ne == total, "Graphdims_get %d nodes %d edges", nn, ne);
    int *gi = malloc(sizeof(int) * (size_t)n), *ge = malloc(sizeof(int) * (size_t)total);
    EPT_OK(MPI_Graph_get(g, n, total, gi, ge));
    EPT_CHECK(!memcmp(gi, index, sizeof(int) * (size_t)n) && !memcmp(ge, edges, sizeof(int) * (size_t)total),
              "Graph_get differs from what was given");
    for (int i = 0; i < n; i++) {
        int want[4], got[4], k = topo_ring_chord(i, n, want), cnt = -1;
        EPT_OK(MPI_Graph_neighbors_count(g, i, &cnt));
        EPT_OK(MPI_Graph_neighbors(g, i, 4, got));
        EPT_CHECK(cnt == k && !memcmp(got, want, sizeof(int) * (size_t)k), "node %d: %d neighbours", i, cnt);
    }
    int nr = -2;
    EPT_OK(MPI_Graph_map(comm, n, index, edges, &nr));
    EPT_CHECK(nr == r, "Graph_map %d", nr);
    EPT_OK(MPI_Comm_free(&g));
    free(gi), free(ge), free(index), free(edges);
}

static void dist_graph(MPI_Comm comm, int r, int n)
{
    MPI_Comm g;
    int in = -1, out = -1, weighted = -1;
    PHASE("dist graph: adjacent");
    /* Out to r+1 and r+2 (weights 10 + k), in from r-1 and r-2 (weights 20 + k). */
    int dst[2] = {(r + 1) % n, (r + 2) % n}, src[2] = {(r + n - 1) % n, (r + 2 * n - 2) % n};
    int dw[2] = {10, 11}, sw[2] = {20, 21};
    EPT_OK(MPI_Dist_graph_create_adjacent(comm, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 1, &g));
    check_topo(g, MPI_DIST_GRAPH, "adjacent");
    EPT_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted));
    EPT_CHECK(in == 2 && out == 2 && weighted, "degrees %d, %d weighted %d", in, out, weighted);
    int s[2], w1[2], d[2], w2[2];
    EPT_OK(MPI_Dist_graph_neighbors(g, 2, s, w1, 2, d, w2));
    EPT_CHECK(!memcmp(s, src, sizeof s) && !memcmp(d, dst, sizeof d) && !memcmp(w1, sw, sizeof w1) &&
                  !memcmp(w2, dw, sizeof w2),
              "adjacent neighbours: in %d,%d (%d,%d) out %d,%d (%d,%d)", s[0], s[1], w1[0], w1[1], d[0], d[1], w2[0],
              w2[1]);
    EPT_OK(MPI_Comm_free(&g));

    PHASE("dist graph: general");
    /* Every rank names its edge to r+1; rank 0 also names n-1 -> 0, which
     * rank n-1 names itself too: rank 0 has two in-edges from n-1. */
    int srcs[2] = {r, n - 1}, degs[2] = {1, 1}, dsts[2] = {(r + 1) % n, 0};
    EPT_OK(MPI_Dist_graph_create(comm, r == 0 ? 2 : 1, srcs, degs, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    check_topo(g, MPI_DIST_GRAPH, "general");
    EPT_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted));
    int win = r == 0 ? 2 : 1, wout = r == n - 1 ? 2 : 1;
    if (n == 1) /* the one rank names 0 -> 0 twice */
        win = wout = 2;
    EPT_CHECK(in == win && out == wout && !weighted, "general: degrees %d, %d (expected %d, %d), weighted %d", in, out,
              win, wout, weighted);
    int gs[2] = {-1, -1}, gd[2] = {-1, -1};
    /* MPICH 4.0.2's MPI_Dist_graph_neighbors reads weights past the end of
     * its own array for an unweighted MPI_Dist_graph_create (AddressSanitizer
     * reports it), so the classic run does not ask. */
    if (ept_classic) {
        EPT_OK(MPI_Comm_free(&g));
        return;
    }
    EPT_OK(MPI_Dist_graph_neighbors(g, 2, gs, MPI_UNWEIGHTED, 2, gd, MPI_UNWEIGHTED));
    for (int i = 0; i < in; i++)
        EPT_CHECK(gs[i] == (r + n - 1) % n, "general: in-neighbour %d is %d", i, gs[i]);
    for (int i = 0; i < out; i++)
        EPT_CHECK(gd[i] == (r + 1) % n, "general: out-neighbour %d is %d", i, gd[i]);
    EPT_OK(MPI_Comm_free(&g));
}

static void errors(MPI_Comm comm, int r, int n)
{
    MPI_Comm c, g;
    int dims[1] = {n + 1}, zero[1] = {0}, per[1] = {0}, x;
    if (ept_classic && EPT_OPEN_MPI) /* Open MPI checks less (a rank past the grid's end) */
        return;
    PHASE("errors");
    EPT_OK(MPI_Comm_dup(comm, &c));
    EPT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    EPT_CHECK(fails_with(MPI_Cart_create(c, 1, dims, per, 0, &g), MPI_ERR_ARG), "a grid larger than the ranks");
    /* MPICH 4.0.2 takes any extent (a grid of no points) */
    if (!ept_classic)
        EPT_CHECK(fails_with(MPI_Cart_create(c, 1, zero, per, 0, &g), MPI_ERR_DIMS), "an extent of 0");
    EPT_CHECK(fails_with(MPI_Cart_create(c, -1, dims, per, 0, &g), MPI_ERR_ARG), "ndims -1");
    EPT_CHECK(fails_with(MPI_Cartdim_get(c, &x), MPI_ERR_TOPOLOGY), "Cartdim_get without a topology");
    dims[0] = n;
    EPT_OK(MPI_Cart_create(c, 1, dims, per, 0, &g));
    EPT_OK(MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN));
    EPT_CHECK(fails_with(MPI_Graphdims_get(g, &x, &x), MPI_ERR_TOPOLOGY), "Graphdims_get on a grid");
    EPT_CHECK(fails_with(MPI_Cart_coords(g, n, 1, &x), MPI_ERR_RANK), "Cart_coords of rank %d", n);
    EPT_OK(MPI_Comm_free(&g));
    EPT_OK(MPI_Comm_free(&c));
    (void)r;
}

static void body(MPI_Comm comm, void *arg)
{
    int r, n;
    (void)arg;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    check_topo(comm, MPI_UNDEFINED, "the test communicator");
    cart(comm, r, n);
    graph(comm, r, n);
    dist_graph(comm, r, n);
    errors(comm, r, n);
}

int main(int argc, char **argv) { return ept_main_classic(argc, argv, 60, body, NULL); }
