/* Neighbourhood collectives on the test communicator's topologies
 * (MPI_COMM_WORLD in world mode, endpoints in explicit shapes, the classic
 * MPI_COMM_WORLD in P:0 shapes, where MPICH checks the test itself), every
 * received value checked against one computed here from the sender's rank
 * and slot:
 *  - a 2-D grid (periodic first dimension), a 1-D periodic ring of all
 *    ranks, and rings of 1 and 2 ranks, where a rank is the same neighbour
 *    twice (the block sent towards -1 arrives as the one from +1);
 *    Neighbor_alltoall, _allgather, _alltoallv with a different count per
 *    direction, _allgatherv; MPI_PROC_NULL neighbours leave their blocks
 *    untouched;
 *  - a graph (ring with a chord, two edges between the same nodes on small
 *    rings) and a distributed graph (r -> r+1, r+2): Neighbor_alltoall and
 *    Neighbor_alltoallw with an int block and a double block per edge;
 *  - the non-blocking forms, two started back to back and completed in
 *    the other order, on a grid and its dup;
 *  - errors: a communicator without topology (MPI_ERR_TOPOLOGY). */
#include "eptest.h"
#include "topo_common.h"

#include <stddef.h>

#define UNTOUCHED (-7)

static int wrap(int x, int n) { return ((x % n) + n) % n; }

/* The value sender s puts in element i of its block for slot k. */
static int val(int s, int k, int i) { return s * 1000 + k * 10 + i; }

/* Neighbours of a topology in MPI's order, as the test computes them: for
 * each slot j the in-neighbour, and the sender's slot its block comes
 * from. */
typedef struct {
    int deg;
    int nb[8];   /* neighbour of slot j (MPI_PROC_NULL: none) */
    int from[8]; /* the slot the neighbour sends this rank's block from */
    int twice;   /* a neighbour appears twice (two edges between the same ranks) */
    int graph;   /* a graph, not a grid */
} nbrs_t;

/* A grid of nd dimensions: slot 2d is direction -1, 2d + 1 direction +1;
 * the block from direction -1 is what that neighbour sent towards +1. */
static nbrs_t grid_nbrs(MPI_Comm g, int nd)
{
    nbrs_t x = {2 * nd, {0}, {0}, 0, 0};
    for (int d = 0; d < nd; d++) {
        EPT_OK(MPI_Cart_shift(g, d, 1, &x.nb[2 * d], &x.nb[2 * d + 1]));
        x.from[2 * d] = 2 * d + 1;
        x.from[2 * d + 1] = 2 * d;
        x.twice |= x.nb[2 * d] == x.nb[2 * d + 1] && x.nb[2 * d] != MPI_PROC_NULL;
    }
    return x;
}

/* Where two edges join the same ranks, MPICH 4.0.2 pairs their blocks its
 * own way: on a grid its Neighbor_alltoallv and _alltoallw (and the I
 * forms) in send order, not by direction as MPI and its Neighbor_alltoall
 * do; on a multigraph not in edge order.  Open MPI 4.1 pairs them in send
 * order in Neighbor_alltoall too.  The classic run skips the checks that
 * tell the blocks of such edges apart. */
static int mpich_pairs_by_order(const nbrs_t *x) { return ept_classic && x->twice; }

/* Checks block j (count elements) of buf received per x. */
static void check_blocks(const int *buf, const int *counts, const int *displs, const nbrs_t *x, int uniform_from,
                         const char *call, const char *what)
{
    for (int j = 0; j < x->deg; j++)
        for (int i = 0; i < counts[j]; i++) {
            int want = x->nb[j] == MPI_PROC_NULL ? UNTOUCHED : val(x->nb[j], uniform_from ? 0 : x->from[j], i);
            EPT_CHECK(buf[displs[j] + i] == want, "%s on the %s: slot %d element %d is %d, expected %d (neighbour %d)",
                      call, what, j, i, buf[displs[j] + i], want, x->nb[j]);
        }
}

/* The four int collectives on a communicator whose neighbours (in = out)
 * are x. */
static void exercise(MPI_Comm g, int r, const nbrs_t *x, const char *what)
{
    int deg = x->deg, n1[8], d1[8], cnt[8], dsp[8], scnt[8], sdsp[8], rb[64], sb[64], tot = 0, stot = 0;
    for (int j = 0; j < deg; j++) {
        n1[j] = 1;
        d1[j] = j;
    }
    /* alltoall: one int per slot */
    for (int j = 0; j < deg; j++)
        sb[j] = val(r, j, 0);
    for (int j = 0; j < 64; j++)
        rb[j] = UNTOUCHED;
    EPT_OK(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, g));
    if (!mpich_pairs_by_order(x) || (!x->graph && !EPT_OPEN_MPI))
        check_blocks(rb, n1, d1, x, 0, "Neighbor_alltoall", what);
    /* allgather: my rank's slot-0 value to everyone */
    for (int j = 0; j < 64; j++)
        rb[j] = UNTOUCHED;
    sb[0] = val(r, 0, 0);
    EPT_OK(MPI_Neighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, g));
    check_blocks(rb, n1, d1, x, 1, "Neighbor_allgather", what);
    /* alltoallv: slot k carries k + 1 ints, so each receive slot expects
     * the count of the sender's slot; blocks packed in reverse order with
     * gaps */
    for (int j = deg - 1; j >= 0; j--) {
        scnt[j] = j + 1;
        sdsp[j] = stot;
        for (int i = 0; i < scnt[j]; i++)
            sb[stot + i] = val(r, j, i);
        stot += scnt[j] + 1;
        cnt[j] = x->from[j] + 1;
        dsp[j] = tot;
        tot += cnt[j] + 1;
    }
    for (int j = 0; j < 64; j++)
        rb[j] = UNTOUCHED;
    EPT_OK(MPI_Neighbor_alltoallv(sb, scnt, sdsp, MPI_INT, rb, cnt, dsp, MPI_INT, g));
    if (!mpich_pairs_by_order(x))
        check_blocks(rb, cnt, dsp, x, 0, "Neighbor_alltoallv", what);
    /* allgatherv: 2 ints from everyone, at displacements 3 j */
    for (int j = 0; j < deg; j++) {
        cnt[j] = 2;
        dsp[j] = 3 * j;
    }
    sb[0] = val(r, 0, 0);
    sb[1] = val(r, 0, 1);
    for (int j = 0; j < 64; j++)
        rb[j] = UNTOUCHED;
    EPT_OK(MPI_Neighbor_allgatherv(sb, 2, MPI_INT, rb, cnt, dsp, MPI_INT, g));
    check_blocks(rb, cnt, dsp, x, 1, "Neighbor_allgatherv", what);
}

static void grids(MPI_Comm comm, int r, int n)
{
    int dims[2] = {0, 0}, per[2] = {1, 0};
    MPI_Comm g;
    PHASE("grid 2-D");
    EPT_OK(MPI_Dims_create(n, 2, dims));
    EPT_OK(MPI_Cart_create(comm, 2, dims, per, 0, &g));
    nbrs_t x = grid_nbrs(g, 2);
    exercise(g, r, &x, "2-D grid");
    EPT_OK(MPI_Comm_free(&g));

    PHASE("ring of all ranks");
    int all[1] = {n}, ring[1] = {1};
    EPT_OK(MPI_Cart_create(comm, 1, all, ring, 0, &g));
    x = grid_nbrs(g, 1);
    exercise(g, r, &x, "ring");
    EPT_OK(MPI_Comm_free(&g));

    /* Rings of one and two ranks: the neighbour on both sides is the same
     * rank (the rank itself on a ring of one). */
    for (int size = 1; size <= 2 && size <= n; size++) {
        PHASE(size == 1 ? "ring of 1" : "ring of 2");
        int d1[1] = {size};
        EPT_OK(MPI_Cart_create(comm, 1, d1, ring, 0, &g));
        if (g == MPI_COMM_NULL)
            continue;
        x = grid_nbrs(g, 1);
        EPT_CHECK(x.nb[0] == x.nb[1] && x.nb[0] == wrap(r + 1, size), "small ring neighbours %d %d", x.nb[0], x.nb[1]);
        exercise(g, r, &x, size == 1 ? "ring of 1" : "ring of 2");
        EPT_OK(MPI_Comm_free(&g));
    }
}

/* In a graph the k-th edge between two nodes meets the other's k-th. */
static nbrs_t graph_nbrs(int r, int n)
{
    nbrs_t x = {0, {0}, {0}, 0, 1};
    x.deg = topo_ring_chord(r, n, x.nb);
    for (int j = 0; j < x.deg; j++) {
        int p = x.nb[j], k = 0, pl[8], pd = topo_ring_chord(p, n, pl);
        for (int i = 0; i < j; i++)
            k += x.nb[i] == p;
        x.twice |= k > 0;
        for (int i = 0; i < pd; i++)
            if (pl[i] == r && k-- == 0) {
                x.from[j] = i;
                break;
            }
    }
    return x;
}

static void graphs(MPI_Comm comm, int r, int n)
{
    int *index, *edges;
    MPI_Comm g;
    PHASE("graph");
    topo_ring_chord_arrays(n, &index, &edges);
    EPT_OK(MPI_Graph_create(comm, n, index, edges, 0, &g));
    nbrs_t x = graph_nbrs(r, n);
    exercise(g, r, &x, "graph");
    EPT_OK(MPI_Comm_free(&g));
    free(index), free(edges);

    PHASE("distributed graph");
    /* Out to r+1, r+2; in from r-1 (its slot 0) and r-2 (its slot 1). */
    int dst[2] = {wrap(r + 1, n), wrap(r + 2, n)}, src[2] = {wrap(r - 1, n), wrap(r - 2, n)};
    EPT_OK(MPI_Dist_graph_create_adjacent(comm, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    /* alltoallw: per edge one int then one double, described by a struct
     * type per slot at byte displacements */
    struct blk {
        int i;
        double d;
    } sb[2], rb[2];
    MPI_Datatype t;
    int bl[2] = {1, 1};
    MPI_Aint off[2] = {offsetof(struct blk, i), offsetof(struct blk, d)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    EPT_OK(MPI_Type_create_struct(2, bl, off, ty, &t));
    EPT_OK(MPI_Type_commit(&t));
    int one[2] = {1, 1};
    MPI_Aint disp[2] = {0, sizeof(struct blk)};
    MPI_Datatype types[2] = {t, t};
    for (int k = 0; k < 2; k++) {
        sb[k] = (struct blk){val(r, k, 0), val(r, k, 1) + 0.5};
        rb[k] = (struct blk){UNTOUCHED, 0};
    }
    EPT_OK(MPI_Neighbor_alltoallw(sb, one, disp, types, rb, one, disp, types, g));
    EPT_OK(MPI_Type_free(&t));
    int skip = ept_classic && n == 1; /* two edges 0 -> 0 (see mpich_pairs_by_order) */
    for (int j = 0; j < 2 && !skip; j++)
        EPT_CHECK(rb[j].i == val(src[j], j, 0) && rb[j].d == val(src[j], j, 1) + 0.5,
                  "alltoallw slot %d: %d %.1f from %d", j, rb[j].i, rb[j].d, src[j]);
    int ib[2] = {UNTOUCHED, UNTOUCHED}, is[2] = {val(r, 0, 0), val(r, 1, 0)};
    EPT_OK(MPI_Neighbor_alltoall(is, 1, MPI_INT, ib, 1, MPI_INT, g));
    for (int j = 0; j < 2 && !skip; j++)
        EPT_CHECK(ib[j] == val(src[j], j, 0), "dist alltoall slot %d: %d", j, ib[j]);
    EPT_OK(MPI_Comm_free(&g));
}

static void nonblocking(MPI_Comm comm, int r, int n)
{
    int dims[2] = {0, 0}, per[2] = {0, 1};
    MPI_Comm g, dup;
    MPI_Request q[2];
    PHASE("non-blocking");
    EPT_OK(MPI_Dims_create(n, 2, dims));
    EPT_OK(MPI_Cart_create(comm, 2, dims, per, 0, &g));
    EPT_OK(MPI_Comm_dup(g, &dup));
    nbrs_t x = grid_nbrs(g, 2);
    int sa[4], ra[4], sg = val(r, 0, 0), rg[4], n1[4] = {1, 1, 1, 1}, d1[4] = {0, 1, 2, 3};
    for (int j = 0; j < 4; j++) {
        sa[j] = val(r, j, 0);
        ra[j] = rg[j] = UNTOUCHED;
    }
    EPT_OK(MPI_Ineighbor_alltoall(sa, 1, MPI_INT, ra, 1, MPI_INT, g, &q[0]));
    EPT_OK(MPI_Ineighbor_allgather(&sg, 1, MPI_INT, rg, 1, MPI_INT, dup, &q[1]));
    EPT_OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
    EPT_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
    if (!(mpich_pairs_by_order(&x) && EPT_OPEN_MPI))
        check_blocks(ra, n1, d1, &x, 0, "Ineighbor_alltoall", "grid");
    check_blocks(rg, n1, d1, &x, 1, "Ineighbor_allgather", "dup of the grid");
    /* v and w forms, waited together */
    int sc[4], sd[4], rc[4], rd[4], sv[16], rv[16], rw[4];
    MPI_Aint wd[4];
    MPI_Datatype wt[4];
    for (int j = 0, o = 0, p = 0; j < 4; j++) {
        sc[j] = j + 1;
        sd[j] = o;
        for (int i = 0; i < sc[j]; i++)
            sv[o + i] = val(r, j, i);
        o += sc[j];
        rc[j] = x.from[j] + 1;
        rd[j] = p;
        p += rc[j];
        wd[j] = (MPI_Aint)(j * sizeof(int));
        wt[j] = MPI_INT;
        rw[j] = UNTOUCHED;
    }
    for (int j = 0; j < 16; j++)
        rv[j] = UNTOUCHED;
    EPT_OK(MPI_Ineighbor_alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, g, &q[0]));
    EPT_OK(MPI_Ineighbor_alltoallw(sa, n1, wd, wt, rw, n1, wd, wt, dup, &q[1]));
    EPT_OK(MPI_Waitall(2, q, statuses_ignore()));
    if (!mpich_pairs_by_order(&x)) {
        check_blocks(rv, rc, rd, &x, 0, "Ineighbor_alltoallv", "grid");
        check_blocks(rw, n1, d1, &x, 0, "Ineighbor_alltoallw", "dup of the grid");
    }
    EPT_OK(MPI_Comm_free(&dup));
    EPT_OK(MPI_Comm_free(&g));
}

static void errors(MPI_Comm comm)
{
    MPI_Comm c;
    int a = 0, b = 0, cls = -1;
    if (ept_classic && EPT_OPEN_MPI) /* Open MPI 4.1 raises it on MPI_COMM_WORLD, not on c */
        return;
    PHASE("errors");
    EPT_OK(MPI_Comm_dup(comm, &c));
    EPT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    int rc = MPI_Neighbor_alltoall(&a, 1, MPI_INT, &b, 1, MPI_INT, c);
    EPT_CHECK(rc != MPI_SUCCESS, "Neighbor_alltoall without a topology succeeded");
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_TOPOLOGY, "Neighbor_alltoall without a topology: class %d", cls);
    EPT_OK(MPI_Comm_free(&c));
}

static void body(MPI_Comm comm, void *arg)
{
    int r, n;
    (void)arg;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    grids(comm, r, n);
    graphs(comm, r, n);
    nonblocking(comm, r, n);
    errors(comm);
}

int main(int argc, char **argv) { return ept_main_classic(argc, argv, 60, body, NULL); }
