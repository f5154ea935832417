/* MPI-4's constructors from a group alone, MPI_Comm_create_from_group and
 * MPI_Intercomm_create_from_groups (MPI-4.0 7.4.2), on groups of endpoints.
 * What the standard says and this test checks:
 *   - the new communicator's group is the group given, ranks in its order
 *     (a reversed group reverses the ranks);
 *   - only the group's members call; disjoint groups may call at the same
 *     time with the same string tag; calls are told apart by string tag;
 *   - the error handler passed is the new communicator's, the info's hints
 *     are its hints;
 *   - MPI_GROUP_EMPTY gives MPI_COMM_NULL, locally;
 *   - the two groups of an intercommunicator are its local and remote
 *     groups, here two groups whose members share processes;
 *   - groups of MPI_COMM_SELF make an intercommunicator of two ranks;
 *   - errors go to the error handler passed: a caller outside the group, a
 *     NULL or too long string tag, overlapping groups, a bad leader, and
 *     (epmpi's own limit) a group of endpoints whose communicators are all
 *     freed.
 *
 * World mode (PxT), explicit shapes (P:a,b,..) and, for comparison, plain
 * MPICH processes (P:0). */
#include "eptest.h"
#if !EP_HAVE_MPI_Comm_create_from_group
/* MPI 4.0's MPI_Comm_create_from_group: not in this MPI. */
int main(void)
{
    puts("skipped: this MPI has no MPI 4.0's MPI_Comm_create_from_group");
    return 77;
}
#else
/* Group of the ranks of comm's group listed in order. */
static MPI_Group subgroup(MPI_Group world, int n, int (*pick)(int, int), int size)
{
    int *r = malloc(sizeof *r * (size_t)(size ? size : 1)), k = 0;
    EPT_CHECK(r, "out of memory");
    for (int i = 0; i < n; i++)
        if (pick(i, size) >= 0)
            r[k++] = pick(i, size);
    MPI_Group g;
    EPT_OK(MPI_Group_incl(world, k, r, &g));
    free(r);
    return g;
}
static int rev(int i, int n) { return n - 1 - i; }
static int evens(int i, int n) { return 2 * i < n ? 2 * i : -1; }
static int odds(int i, int n) { return 2 * i + 1 < n ? 2 * i + 1 : -1; }

static int error_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* nc's group must be g, with the caller at its rank in g. */
static void check_group(MPI_Comm nc, MPI_Group g, const char *what)
{
    int ns, nr, gs, gr, res;
    EPT_OK(MPI_Comm_size(nc, &ns));
    EPT_OK(MPI_Comm_rank(nc, &nr));
    EPT_OK(MPI_Group_size(g, &gs));
    EPT_OK(MPI_Group_rank(g, &gr));
    EPT_CHECK(ns == gs && nr == gr, "%s: rank %d of %d, the group says %d of %d", what, nr, ns, gr, gs);
    MPI_Group ng;
    EPT_OK(MPI_Comm_group(nc, &ng));
    EPT_OK(MPI_Group_compare(ng, g, &res));
    EPT_CHECK(res == MPI_IDENT, "%s: the communicator's group compares %d with the group given", what, res);
    EPT_OK(MPI_Group_free(&ng));
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    int r, n, res;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    MPI_Group world;
    EPT_OK(MPI_Comm_group(comm, &world));

    PHASE("the whole group");
    {
        MPI_Comm nc;
        EPT_OK(MPI_Comm_create_from_group(world, "epmpi.test.whole", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &nc));
        EPT_CHECK(nc != MPI_COMM_NULL, "got MPI_COMM_NULL");
        EPT_OK(MPI_Comm_compare(nc, comm, &res));
        EPT_CHECK(res == MPI_CONGRUENT, "compare with the communicator the group came from: %d", res);
        int sum = -1;
        EPT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, nc));
        EPT_CHECK(sum == n * (n - 1) / 2, "allreduce over the new communicator: %d", sum);
        int right = (r + 1) % n, left = (r + n - 1) % n, got = -1;
        EPT_OK(MPI_Sendrecv(&r, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, nc, MPI_STATUS_IGNORE));
        EPT_CHECK(got == left, "ring: got %d from %d", got, left);
        EPT_OK(MPI_Comm_free(&nc));
    }

    PHASE("a reversed group: ranks follow the group");
    {
        MPI_Group g = subgroup(world, n, rev, n);
        MPI_Comm nc;
        EPT_OK(MPI_Comm_create_from_group(g, "epmpi.test.reversed", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &nc));
        int nr, *all = malloc(sizeof *all * (size_t)n);
        EPT_CHECK(all, "out of memory");
        EPT_OK(MPI_Comm_rank(nc, &nr));
        EPT_CHECK(nr == n - 1 - r, "rank %d in the reversed communicator is %d", r, nr);
        EPT_OK(MPI_Allgather(&r, 1, MPI_INT, all, 1, MPI_INT, nc));
        for (int i = 0; i < n; i++)
            EPT_CHECK(all[i] == n - 1 - i, "reversed: rank %d is old rank %d", i, all[i]);
        check_group(nc, g, "reversed");
        free(all);
        EPT_OK(MPI_Comm_free(&nc));
        EPT_OK(MPI_Group_free(&g));
    }

    PHASE("disjoint groups at once, one string tag");
    {
        MPI_Group g = subgroup(world, n, r % 2 ? odds : evens, n);
        MPI_Comm nc;
        EPT_OK(MPI_Comm_create_from_group(g, "epmpi.test.halves", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &nc));
        int ns, nr, sum = -1, want = 0;
        EPT_OK(MPI_Comm_size(nc, &ns));
        EPT_OK(MPI_Comm_rank(nc, &nr));
        EPT_CHECK(ns == (r % 2 ? n / 2 : (n + 1) / 2) && nr == r / 2, "half: rank %d of %d", nr, ns);
        for (int q = r % 2; q < n; q += 2)
            want += q;
        EPT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, nc));
        EPT_CHECK(sum == want, "half: sum %d, expected %d", sum, want);
        check_group(nc, g, "half");
        EPT_OK(MPI_Comm_free(&nc));
        EPT_OK(MPI_Group_free(&g));
    }

    PHASE("one group, two string tags, one after the other");
    {
        MPI_Comm a, b;
        EPT_OK(MPI_Comm_create_from_group(world, "epmpi.test.first", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &a));
        EPT_OK(MPI_Comm_create_from_group(world, "epmpi.test.second", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &b));
        EPT_OK(MPI_Comm_compare(a, b, &res));
        EPT_CHECK(res == MPI_CONGRUENT, "two communicators of one group compare %d", res);
        /* Traffic on one is not seen by the other. */
        int x = -1, y = -2;
        if (n > 1) {
            if (r == 0) {
                int one = 1, two = 2;
                EPT_OK(MPI_Send(&one, 1, MPI_INT, 1, 0, a));
                EPT_OK(MPI_Send(&two, 1, MPI_INT, 1, 0, b));
            } else if (r == 1) {
                EPT_OK(MPI_Recv(&y, 1, MPI_INT, 0, 0, b, MPI_STATUS_IGNORE));
                EPT_OK(MPI_Recv(&x, 1, MPI_INT, 0, 0, a, MPI_STATUS_IGNORE));
                EPT_CHECK(x == 1 && y == 2, "messages crossed communicators: %d %d", x, y);
            }
        }
        EPT_OK(MPI_Comm_free(&a));
        EPT_OK(MPI_Comm_free(&b));
    }

    PHASE("the error handler and the hints passed");
    {
        MPI_Info info, used;
        MPI_Comm nc;
        MPI_Errhandler eh;
        char value[32] = "";
        int flag = 0;
        EPT_OK(MPI_Info_create(&info));
        EPT_OK(MPI_Info_set(info, "mpi_assert_exact_length", "true"));
        EPT_OK(MPI_Comm_create_from_group(world, "epmpi.test.hints", info, MPI_ERRORS_RETURN, &nc));
        EPT_OK(MPI_Info_free(&info));
        EPT_OK(MPI_Comm_get_errhandler(nc, &eh));
        EPT_CHECK(eh == MPI_ERRORS_RETURN, "the new communicator's error handler is not the one passed");
        EPT_OK(MPI_Errhandler_free(&eh));
        EPT_OK(MPI_Comm_get_info(nc, &used));
        EPT_OK(MPI_Info_get(used, "mpi_assert_exact_length", sizeof value - 1, value, &flag));
        EPT_CHECK(flag && !strcmp(value, "true"), "the hint passed is not the communicator's (flag %d, '%s')", flag,
                  value);
        EPT_OK(MPI_Info_free(&used));
        /* MPI_ERRORS_RETURN is really there: an invalid rank returns. */
        int rc = MPI_Send(&r, 1, MPI_INT, n + 5, 0, nc);
        EPT_CHECK(error_class(rc) == MPI_ERR_RANK, "send to rank %d on the new communicator: class %d", n + 5,
                  error_class(rc));
        EPT_OK(MPI_Comm_free(&nc));
    }

    PHASE("MPI_GROUP_EMPTY");
    {
        MPI_Comm nc = MPI_COMM_WORLD;
        EPT_OK(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "epmpi.test.empty", MPI_INFO_NULL, MPI_ERRORS_RETURN, &nc));
        EPT_CHECK(nc == MPI_COMM_NULL, "the empty group gave a communicator");
    }

    PHASE("errors go to the handler passed");
    if (!ept_classic) { /* MPICH 4.0.2 does not check these: it would wait */
        MPI_Comm nc = MPI_COMM_WORLD;
        char longtag[MPI_MAX_STRINGTAG_LEN + 8];
        memset(longtag, 'x', sizeof longtag - 1);
        longtag[sizeof longtag - 1] = 0;
        int rc = MPI_Comm_create_from_group(world, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &nc);
        EPT_CHECK(error_class(rc) == MPI_ERR_ARG, "a NULL string tag: class %d", error_class(rc));
        rc = MPI_Comm_create_from_group(world, longtag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &nc);
        EPT_CHECK(error_class(rc) == MPI_ERR_ARG, "a too long string tag: class %d", error_class(rc));
        if (n > 1) {
            int other = (r + 1) % n;
            MPI_Group g;
            EPT_OK(MPI_Group_incl(world, 1, &other, &g));
            rc = MPI_Comm_create_from_group(g, "epmpi.test.outside", MPI_INFO_NULL, MPI_ERRORS_RETURN, &nc);
            EPT_CHECK(error_class(rc) == MPI_ERR_GROUP, "a group without the caller: class %d", error_class(rc));
            EPT_OK(MPI_Group_free(&g));
        }
        EPT_CHECK(nc == MPI_COMM_WORLD, "a failed call wrote the new communicator's handle");

        /* Endpoints whose communicators are all freed: no process can tell
         * where they live any more. */
        MPI_Comm two[2];
        MPI_Group gone;
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        EPT_OK(MPI_Comm_create_endpoints(comm, 2, MPI_INFO_NULL, two));
        EPT_OK(MPI_Comm_group(two[0], &gone));
        EPT_OK(MPI_Comm_free(&two[0]));
        EPT_OK(MPI_Comm_free(&two[1]));
        EPT_OK(MPI_Barrier(comm)); /* every process's handles are gone */
        rc = MPI_Comm_create_from_group(gone, "epmpi.test.gone", MPI_INFO_NULL, MPI_ERRORS_RETURN, &nc);
        MPI_Error_string(rc, text, &len);
        EPT_CHECK(error_class(rc) == MPI_ERR_GROUP && strstr(text, "no communicator of this process"),
                  "a group of freed endpoints: class %d, '%s'", error_class(rc), text);
        EPT_OK(MPI_Group_free(&gone));
    }

    if (n > 1) {
        PHASE("MPI_Intercomm_create_from_groups: evens and odds");
        MPI_Group ev = subgroup(world, n, evens, n), od = subgroup(world, n, odds, n);
        MPI_Group mine = r % 2 ? od : ev, other = r % 2 ? ev : od;
        int nev = (n + 1) / 2, nod = n / 2, lsize = r % 2 ? nod : nev, rsize = r % 2 ? nev : nod;
        MPI_Comm ic;
        EPT_OK(MPI_Intercomm_create_from_groups(mine, lsize - 1, other, rsize - 1, "epmpi.test.inter", MPI_INFO_NULL,
                                                MPI_ERRORS_ARE_FATAL, &ic));
        int flag = 0, ls, rs, lr;
        EPT_OK(MPI_Comm_test_inter(ic, &flag));
        EPT_OK(MPI_Comm_size(ic, &ls));
        EPT_OK(MPI_Comm_remote_size(ic, &rs));
        EPT_OK(MPI_Comm_rank(ic, &lr));
        EPT_CHECK(flag && ls == lsize && rs == rsize && lr == r / 2, "intercomm: inter %d, rank %d of %d, remote %d",
                  flag, lr, ls, rs);
        MPI_Group lg, rg;
        EPT_OK(MPI_Comm_group(ic, &lg));
        EPT_OK(MPI_Comm_remote_group(ic, &rg));
        EPT_OK(MPI_Group_compare(lg, mine, &res));
        EPT_CHECK(res == MPI_IDENT, "the local group compares %d", res);
        EPT_OK(MPI_Group_compare(rg, other, &res));
        EPT_CHECK(res == MPI_IDENT, "the remote group compares %d", res);
        EPT_OK(MPI_Group_free(&lg));
        EPT_OK(MPI_Group_free(&rg));
        /* An allreduce over an intercommunicator gives the other group's sum. */
        int sum = -1, want = 0;
        for (int q = 1 - r % 2; q < n; q += 2)
            want += q;
        EPT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, ic));
        EPT_CHECK(sum == want, "intercomm allreduce: %d, expected %d", sum, want);
        /* Point to point: rank i of each group and rank i of the other. */
        if (lr < rs) {
            int got = -1;
            EPT_OK(MPI_Sendrecv(&r, 1, MPI_INT, lr, 3, &got, 1, MPI_INT, lr, 3, ic, MPI_STATUS_IGNORE));
            EPT_CHECK(got == 2 * lr + 1 - r % 2, "intercomm exchange: got %d", got);
        }
        MPI_Comm merged;
        EPT_OK(MPI_Intercomm_merge(ic, r % 2, &merged));
        int mr;
        EPT_OK(MPI_Comm_rank(merged, &mr));
        EPT_CHECK(mr == (r % 2 ? nev + r / 2 : r / 2), "merged: rank %d", mr);
        EPT_OK(MPI_Comm_free(&merged));
        EPT_OK(MPI_Comm_free(&ic));

        if (!ept_classic) {
            PHASE("MPI_Intercomm_create_from_groups: errors");
            int rc = MPI_Intercomm_create_from_groups(mine, 0, world, 0, "epmpi.test.overlap", MPI_INFO_NULL,
                                                      MPI_ERRORS_RETURN, &ic);
            EPT_CHECK(error_class(rc) == MPI_ERR_GROUP, "overlapping groups: class %d", error_class(rc));
            rc = MPI_Intercomm_create_from_groups(mine, lsize, other, 0, "epmpi.test.leader", MPI_INFO_NULL,
                                                  MPI_ERRORS_RETURN, &ic);
            EPT_CHECK(error_class(rc) == MPI_ERR_RANK, "local leader %d of %d: class %d", lsize, lsize,
                      error_class(rc));
        }
        EPT_OK(MPI_Group_free(&ev));
        EPT_OK(MPI_Group_free(&od));
    }

    if (n > 1 && r < 2 && comm == MPI_COMM_WORLD) {
        PHASE("MPI_Intercomm_create_from_groups: two MPI_COMM_SELF groups");
        MPI_Group self, peer;
        MPI_Comm ic;
        int p = 1 - r, got = -1;
        EPT_OK(MPI_Comm_group(MPI_COMM_SELF, &self));
        EPT_OK(MPI_Group_incl(world, 1, &p, &peer));
        EPT_OK(MPI_Intercomm_create_from_groups(self, 0, peer, 0, "epmpi.test.selves", MPI_INFO_NULL,
                                                MPI_ERRORS_ARE_FATAL, &ic));
        EPT_OK(MPI_Sendrecv(&r, 1, MPI_INT, 0, 13, &got, 1, MPI_INT, 0, 13, ic, MPI_STATUS_IGNORE));
        EPT_CHECK(got == p, "self intercomm: got %d from %d", got, p);
        EPT_OK(MPI_Comm_free(&ic));
        EPT_OK(MPI_Group_free(&self));
        EPT_OK(MPI_Group_free(&peer));
    }
    EPT_OK(MPI_Group_free(&world));
}

int main(int argc, char **argv) { return ept_main_classic(argc, argv, 60, body, NULL); }

#endif
