/* Groups of endpoint communicators and MPI_Comm_create: Comm_group, size
 * and rank, translate_ranks (to a reordered split and with MPI_PROC_NULL),
 * compare (IDENT / SIMILAR / UNEQUAL), incl / excl / range_incl /
 * range_excl, union / intersection / difference, MPI_GROUP_EMPTY results,
 * and MPI_Comm_create from a group of every other rank, with traffic and a
 * reduction on the result, and of the evens' and the odds' groups at once
 * (two communicators).  Edges from MPI-4.0 (7.3, 7.4): an empty
 * inclusion is MPI_GROUP_EMPTY; a descending range; a zero stride and an
 * exclusion out of range are errors; MPI_Comm_create with MPI_GROUP_EMPTY
 * gives MPI_COMM_NULL everywhere, with a group that is not a subgroup of
 * the communicator's MPI_ERR_GROUP; MPI_Comm_split with MPI_UNDEFINED
 * everywhere gives MPI_COMM_NULL; MPI_Comm_free(MPI_COMM_NULL) is
 * MPI_ERR_COMM; MPI_COMM_SELF's group is the caller alone; its dup is
 * congruent to it, and it is unequal to a communicator of several.  In explicit shapes with one endpoint per
 * process, the endpoint group equals MPI_COMM_WORLD's classic group. */
#include "eptest.h"

static int explicit_all_ones; /* explicit shape, one endpoint everywhere */

static void body(MPI_Comm comm, void *arg)
{
    int r, n, gs = -1, gr = -1, res = -1;
    MPI_Group world, evens, odds, rev, u, x, d, t;
    MPI_Comm revcomm, ec;
    (void)arg;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    EPT_OK(MPI_Comm_group(comm, &world));
    MPI_Group_size(world, &gs);
    MPI_Group_rank(world, &gr);
    EPT_CHECK(gs == n && gr == r, "MPI_Comm_group: rank %d of %d, expected %d of %d", gr, gs, r, n);

    PHASE("translate_ranks");
    EPT_OK(MPI_Comm_split(comm, 0, n - r, &revcomm)); /* reversed ranks */
    EPT_OK(MPI_Comm_group(revcomm, &rev));
    int *in = malloc(sizeof(int) * (size_t)(n + 1)), *out = malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        in[i] = i;
    in[n] = MPI_PROC_NULL;
    EPT_OK(MPI_Group_translate_ranks(world, n + 1, in, rev, out));
    for (int i = 0; i < n; i++)
        EPT_CHECK(out[i] == n - 1 - i, "translate world rank %d to the reversed split: %d", i, out[i]);
    EPT_CHECK(out[n] == MPI_PROC_NULL, "MPI_PROC_NULL translated to %d", out[n]);
    EPT_OK(MPI_Group_compare(world, world, &res));
    EPT_CHECK(res == MPI_IDENT, "a group compared with itself: %d", res);
    EPT_OK(MPI_Group_compare(world, rev, &res));
    EPT_CHECK(res == (n > 1 ? MPI_SIMILAR : MPI_IDENT), "world vs reversed: %d", res);

    PHASE("incl / excl / ranges");
    int ne = (n + 1) / 2, *ev = malloc(sizeof(int) * (size_t)ne);
    for (int i = 0; i < ne; i++)
        ev[i] = 2 * i;
    EPT_OK(MPI_Group_incl(world, ne, ev, &evens));
    EPT_OK(MPI_Group_excl(world, ne, ev, &odds));
    MPI_Group_size(evens, &gs);
    MPI_Group_rank(evens, &gr);
    EPT_CHECK(gs == ne && gr == (r % 2 ? MPI_UNDEFINED : r / 2), "evens: rank %d of %d", gr, gs);
    MPI_Group_size(odds, &gs);
    MPI_Group_rank(odds, &gr);
    EPT_CHECK(gs == n - ne && gr == (r % 2 ? r / 2 : MPI_UNDEFINED), "odds: rank %d of %d", gr, gs);
    int range[1][3] = {{0, n - 1, 2}};
    EPT_OK(MPI_Group_range_incl(world, 1, range, &t));
    EPT_OK(MPI_Group_compare(t, evens, &res));
    EPT_CHECK(res == MPI_IDENT, "range_incl (0, n-1, 2) vs incl of the evens: %d", res);
    MPI_Group_free(&t);
    EPT_OK(MPI_Group_range_excl(world, 1, range, &t));
    EPT_OK(MPI_Group_compare(t, odds, &res));
    EPT_CHECK(res == MPI_IDENT, "range_excl vs excl: %d", res);
    MPI_Group_free(&t);
    int bad[2] = {0, 0};
    /* Group errors belong to no communicator: MPI_COMM_WORLD's handler. */
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Group_incl(world, 2, bad, &t), cls = -1;
    MPI_Error_class(rc, &cls);
    EPT_CHECK(n < 2 || cls == MPI_ERR_RANK, "a rank listed twice: class %d", cls);
    EPT_OK(MPI_Group_incl(world, 0, bad, &t));
    EPT_CHECK(t == MPI_GROUP_EMPTY, "an inclusion of no rank is not MPI_GROUP_EMPTY");
    int down[1][3] = {{n - 1, 0, -1}};
    EPT_OK(MPI_Group_range_incl(world, 1, down, &t));
    EPT_OK(MPI_Group_rank(t, &gr));
    EPT_CHECK(gr == n - 1 - r, "range (n-1, 0, -1): rank %d, want %d", gr, n - 1 - r);
    MPI_Group_free(&t);
    int flat[1][3] = {{0, n - 1, 0}};
    t = MPI_GROUP_NULL;
    EPT_CHECK(MPI_Group_range_incl(world, 1, flat, &t) != MPI_SUCCESS, "a range of stride 0 was accepted");
    EPT_CHECK(MPI_Group_excl(world, 1, (int[]){n}, &t) != MPI_SUCCESS, "an exclusion of rank %d of %d was accepted", n,
              n);

    PHASE("set operations");
    EPT_OK(MPI_Group_union(evens, odds, &u));
    EPT_OK(MPI_Group_compare(u, world, &res));
    EPT_CHECK(res == (n > 2 ? MPI_SIMILAR : MPI_IDENT), "evens + odds vs world: %d", res);
    MPI_Group_translate_ranks(u, 1, (int[]){ne}, world, out); /* the first odd rank follows the evens */
    EPT_CHECK(n < 2 || out[0] == 1, "union order: member %d is world rank %d", ne, out[0]);
    EPT_OK(MPI_Group_intersection(world, evens, &x));
    EPT_OK(MPI_Group_compare(x, evens, &res));
    EPT_CHECK(res == MPI_IDENT, "world and evens vs evens: %d", res);
    EPT_OK(MPI_Group_difference(world, evens, &d));
    EPT_OK(MPI_Group_compare(d, odds, &res));
    EPT_CHECK(res == MPI_IDENT, "world - evens vs odds: %d", res);
    MPI_Group_free(&d);
    EPT_OK(MPI_Group_difference(evens, world, &d));
    EPT_CHECK(d == MPI_GROUP_EMPTY, "evens - world is not MPI_GROUP_EMPTY");

    PHASE("MPI_Comm_create");
    EPT_OK(MPI_Comm_create(comm, evens, &ec));
    if (r % 2) {
        EPT_CHECK(ec == MPI_COMM_NULL, "an odd rank got a communicator");
    } else {
        int er, es, sum = 0;
        MPI_Comm_rank(ec, &er);
        MPI_Comm_size(ec, &es);
        EPT_CHECK(er == r / 2 && es == ne, "MPI_Comm_create: rank %d of %d", er, es);
        EPT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, ec));
        EPT_CHECK(sum == 2 * (ne * (ne - 1) / 2), "sum of even ranks %d", sum);
        MPI_Group eg;
        EPT_OK(MPI_Comm_group(ec, &eg));
        EPT_OK(MPI_Group_compare(eg, evens, &res));
        EPT_CHECK(res == MPI_IDENT, "the new communicator's group vs evens: %d", res);
        MPI_Group_free(&eg);
        EPT_OK(MPI_Comm_free(&ec));
    }
    /* Disjoint groups at once (MPI-4.0 7.4.2): the evens pass theirs, the
     * odds theirs, and each group gets a communicator of its own. */
    PHASE("MPI_Comm_create of disjoint groups");
    EPT_OK(MPI_Comm_create(comm, r % 2 ? odds : evens, &ec));
    {
        int er = -1, es = -1, sum = 0, mine = r % 2 ? n - ne : ne, want = 0;
        EPT_CHECK(ec != MPI_COMM_NULL, "rank %d: no communicator from its own half's group", r);
        MPI_Comm_rank(ec, &er);
        MPI_Comm_size(ec, &es);
        EPT_CHECK(er == r / 2 && es == mine,
                  "MPI_Comm_create of disjoint groups: rank %d: rank %d of %d, expected %d "
                  "of %d",
                  r, er, es, r / 2, mine);
        EPT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, ec));
        for (int q = r % 2; q < n; q += 2)
            want += q;
        EPT_CHECK(sum == want, "rank %d: sum over its half %d, expected %d", r, sum, want);
        EPT_OK(MPI_Comm_free(&ec));
    }

    PHASE("communicator edges");
    EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    MPI_Comm nc = comm, half;
    EPT_OK(MPI_Comm_create(comm, MPI_GROUP_EMPTY, &nc));
    EPT_CHECK(nc == MPI_COMM_NULL, "MPI_Comm_create with MPI_GROUP_EMPTY gave a communicator");
    EPT_OK(MPI_Comm_split(comm, MPI_UNDEFINED, r, &nc));
    EPT_CHECK(nc == MPI_COMM_NULL, "MPI_Comm_split with MPI_UNDEFINED everywhere gave a communicator");
    EPT_OK(MPI_Comm_split(comm, r % 2, r, &half));
    EPT_OK(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
    if (n > 1) {
        nc = comm;
        rc = MPI_Comm_create(half, world, &nc);
        MPI_Error_class(rc, &cls);
        EPT_CHECK(cls == MPI_ERR_GROUP, "MPI_Comm_create with a group larger than the communicator: class %d", cls);
    }
    EPT_OK(MPI_Comm_free(&half));
    EPT_CHECK(half == MPI_COMM_NULL, "MPI_Comm_free did not null the handle");
    rc = MPI_Comm_free(&half);
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_COMM, "MPI_Comm_free(MPI_COMM_NULL): class %d", cls);
    MPI_Group sg;
    EPT_OK(MPI_Comm_group(MPI_COMM_SELF, &sg));
    EPT_OK(MPI_Group_size(sg, &gs));
    EPT_OK(MPI_Group_translate_ranks(sg, 1, (int[]){0}, world, out));
    /* In world mode MPI_COMM_SELF is the endpoint, which is rank r of the
     * test communicator (MPI_COMM_WORLD); in explicit shapes it is the
     * classic process. */
    EPT_CHECK(gs == 1, "MPI_COMM_SELF's group has %d members", gs);
    EPT_CHECK(!ept_world_endpoints() || out[0] == r, "MPI_COMM_SELF's member is rank %d of MPI_COMM_WORLD, not %d",
              out[0], r);
    MPI_Group_free(&sg);
    EPT_OK(MPI_Comm_dup(MPI_COMM_SELF, &nc));
    EPT_OK(MPI_Comm_compare(nc, MPI_COMM_SELF, &res));
    EPT_CHECK(res == MPI_CONGRUENT, "a dup of MPI_COMM_SELF vs MPI_COMM_SELF: %d", res);
    EPT_OK(MPI_Comm_compare(comm, MPI_COMM_SELF, &res));
    EPT_CHECK(res == (n > 1 ? MPI_UNEQUAL : MPI_CONGRUENT), "the test communicator vs MPI_COMM_SELF: %d", res);
    EPT_OK(MPI_Comm_free(&nc));
    EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));

    if (explicit_all_ones) {
        PHASE("classic and endpoint groups");
        MPI_Group cw;
        PMPI_Comm_group(MPI_COMM_WORLD, &cw);
        EPT_OK(MPI_Group_compare(cw, world, &res));
        EPT_CHECK(res == MPI_IDENT, "one endpoint per process: classic world group vs endpoint group: %d", res);
        PMPI_Group_free(&cw);
    }
    MPI_Group_free(&u);
    MPI_Group_free(&x);
    MPI_Group_free(&evens);
    MPI_Group_free(&odds);
    MPI_Group_free(&rev);
    MPI_Group_free(&world);
    EPT_CHECK(world == MPI_GROUP_NULL, "MPI_Group_free did not null the handle");
    MPI_Comm_free(&revcomm);
    free(in);
    free(out);
    free(ev);
}

int main(int argc, char **argv)
{
    explicit_all_ones = ept_world_endpoints() == 0 && argc > 1 && strspn(argv[1], "1,") == strlen(argv[1]);
    return ept_main(argc, argv, 30, body, NULL);
}
