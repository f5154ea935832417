/* MPI_Comm_split and MPI_Comm_split_type on endpoint communicators:
 * several colours inside one process, MPI_UNDEFINED, keys ordered globally
 * (reversed keys, equal keys falling back to the old rank order), ranks and
 * sizes checked against values computed here; traffic, collectives
 * (including a non-commutative reduction and scans on a communicator whose
 * ranks interleave processes) and MPI_Comm_compare on the results; split of
 * a split (create/free loops: comm_loop).
 *
 * World mode (PxT) and explicit shapes (P:a,b,..). */
#include "eptest.h"

static MPI_Datatype mat_type;
static MPI_Op mat_mpi_op;

/* Expected new rank and size of old rank r when every rank q chooses
 * color(q) and key(q): ranks of one colour ordered by (key, old rank). */
static void expect(int n, int r, int (*color)(int, int), int (*key)(int, int), int *nr, int *ns)
{
    *nr = 0;
    *ns = 0;
    for (int q = 0; q < n; q++) {
        if (color(q, n) != color(r, n))
            continue;
        (*ns)++;
        if (key(q, n) < key(r, n) || (key(q, n) == key(r, n) && q < r))
            (*nr)++;
    }
}

static int c_parity(int q, int n)
{
    (void)n;
    return q % 2;
}
static int k_reverse(int q, int n) { return n - q; }
static int c_third(int q, int n)
{
    (void)n;
    return q % 3 == 2 ? MPI_UNDEFINED : q % 3;
}
static int k_equal(int q, int n)
{
    (void)q;
    (void)n;
    return 7;
}
static int c_one(int q, int n)
{
    (void)q;
    (void)n;
    return 0;
}
/* Interleave the processes: even old ranks first (in world mode 2x2 this
 * puts ranks of process 0 and 1 alternately). */
static int k_interleave(int q, int n) { return (q % 2) * n + q / 2; }

static void check_split(MPI_Comm comm, int r, int n, int (*color)(int, int), int (*key)(int, int), const char *what,
                        MPI_Comm *out)
{
    int nr, ns, gr = -1, gs = -1;
    expect(n, r, color, key, &nr, &ns);
    EPT_OK(MPI_Comm_split(comm, color(r, n), key(r, n), out));
    if (color(r, n) == MPI_UNDEFINED) {
        EPT_CHECK(*out == MPI_COMM_NULL, "%s: MPI_UNDEFINED gave a communicator", what);
        return;
    }
    EPT_OK(MPI_Comm_rank(*out, &gr));
    EPT_OK(MPI_Comm_size(*out, &gs));
    EPT_CHECK(gr == nr && gs == ns, "%s: old rank %d got rank %d of %d, expected %d of %d", what, r, gr, gs, nr, ns);
    /* Traffic: a ring on the new communicator, old ranks as payload. */
    int right = (gr + 1) % gs, left = (gr + gs - 1) % gs, got = -1, want = -1;
    for (int q = 0; q < n; q++) { /* the old rank of my left neighbour */
        int qr, qs;
        if (color(q, n) != color(r, n))
            continue;
        expect(n, q, color, key, &qr, &qs);
        if (qr == left)
            want = q;
    }
    EPT_OK(MPI_Sendrecv(&r, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, *out, MPI_STATUS_IGNORE));
    EPT_CHECK(got == want, "%s: ring got old rank %d from the left, expected %d", what, got, want);
    /* Collectives in new-rank order, whatever process each rank lives in. */
    int *all = malloc(sizeof(int) * (size_t)gs);
    EPT_OK(MPI_Allgather(&r, 1, MPI_INT, all, 1, MPI_INT, *out));
    for (int i = 0; i < gs; i++) {
        int ir, is;
        expect(n, all[i], color, key, &ir, &is);
        EPT_CHECK(ir == i && color(all[i], n) == color(r, n), "%s: allgather slot %d holds old rank %d", what, i,
                  all[i]);
    }
    ept_mat_t m = {{gr + 2, 1, 1, 0}}, prod, pre, want_prod = {{1, 0, 0, 1}}, want_pre = {{1, 0, 0, 1}};
    for (int i = 0; i < gs; i++) {
        want_prod = ept_mat_mul(want_prod, (ept_mat_t){{i + 2, 1, 1, 0}});
        if (i == gr)
            want_pre = want_prod;
    }
    EPT_OK(MPI_Allreduce(&m, &prod, 1, mat_type, mat_mpi_op, *out));
    EPT_CHECK(!memcmp(&prod, &want_prod, sizeof prod), "%s: non-commutative allreduce out of rank order", what);
    EPT_OK(MPI_Scan(&m, &pre, 1, mat_type, mat_mpi_op, *out));
    EPT_CHECK(!memcmp(&pre, &want_pre, sizeof pre), "%s: non-commutative scan out of rank order", what);
    int root = gs - 1, *gathered = malloc(sizeof(int) * (size_t)gs);
    EPT_OK(MPI_Gather(&r, 1, MPI_INT, gathered, 1, MPI_INT, root, *out));
    if (gr == root)
        for (int i = 0; i < gs; i++)
            EPT_CHECK(gathered[i] == all[i], "%s: gather slot %d", what, i);
    free(gathered);
    free(all);
}

static void body(MPI_Comm comm, void *arg)
{
    int r, n, res;
    MPI_Comm a, b, c, d, e, f;
    (void)arg;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    PHASE("split by parity, reversed keys");
    check_split(comm, r, n, c_parity, k_reverse, "parity/reverse", &a);
    PHASE("split in thirds with MPI_UNDEFINED, equal keys");
    check_split(comm, r, n, c_third, k_equal, "thirds/equal", &b);
    PHASE("one colour, interleaved processes");
    check_split(comm, r, n, c_one, k_interleave, "one/interleave", &c);
    PHASE("one colour, keys equal: congruent");
    check_split(comm, r, n, c_one, k_equal, "one/equal", &d);
    EPT_OK(MPI_Comm_compare(comm, d, &res));
    EPT_CHECK(res == MPI_CONGRUENT, "split with one colour and equal keys vs parent: %d", res);
    EPT_OK(MPI_Comm_compare(comm, c, &res));
    EPT_CHECK(res == (n > 2    ? MPI_SIMILAR
                      : n == 2 ? MPI_CONGRUENT
                               : MPI_CONGRUENT) ||
                  n <= 2,
              "interleaved split vs parent: %d", res);
    PHASE("split of a split");
    {
        int ar, as, er = -1, es = -1;
        MPI_Comm_rank(a, &ar);
        MPI_Comm_size(a, &as);
        EPT_OK(MPI_Comm_split(a, ar < as / 2, -ar, &e));
        MPI_Comm_rank(e, &er);
        MPI_Comm_size(e, &es);
        int lo = ar < as / 2, want_size = lo ? as / 2 : as - as / 2, want_rank = lo ? as / 2 - 1 - ar : as - 1 - ar;
        EPT_CHECK(es == want_size && er == want_rank, "split of a split: rank %d of %d, expected %d of %d", er, es,
                  want_rank, want_size);
        EPT_OK(MPI_Comm_free(&e));
    }
    PHASE("MPI_Comm_split_type shared");
    {
        int sr, ss, want_size = 0, want_rank = 0;
        ept_host_t *host = ept_host_names(comm); /* the ranks of this host, in rank order */
        for (int q = 0; q < n; q++)
            if (!strcmp(host[q], host[r])) {
                want_size++;
                want_rank += q < r;
            }
        free(host);
        EPT_OK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &f));
        MPI_Comm_rank(f, &sr);
        MPI_Comm_size(f, &ss);
        EPT_CHECK(ss == want_size && sr == want_rank,
                  "MPI_COMM_TYPE_SHARED: rank %d of %d (old %d of %d), expected %d of %d", sr, ss, r, n, want_rank,
                  want_size);
        EPT_OK(MPI_Comm_free(&f));
        EPT_OK(MPI_Comm_split_type(comm, MPI_UNDEFINED, r, MPI_INFO_NULL, &f));
        EPT_CHECK(f == MPI_COMM_NULL, "MPI_UNDEFINED split type gave a communicator");
    }
    EPT_OK(MPI_Comm_free(&a));
    if (b != MPI_COMM_NULL)
        EPT_OK(MPI_Comm_free(&b));
    EPT_OK(MPI_Comm_free(&c));
    EPT_OK(MPI_Comm_free(&d));
    PHASE("done");
}

int main(int argc, char **argv)
{
    int provided;
    watchdog_arm(100);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    ept_mat_create(&mat_type, &mat_mpi_op);
    run_ranks(local_ranks(argc, argv), body, NULL);
    MPI_Op_free(&mat_mpi_op);
    MPI_Type_free(&mat_type);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
