/* MPI_Comm_compare on endpoint communicators.
 * World mode (PxT): MPI_IDENT for the same handle (MPI_COMM_WORLD,
 * MPI_COMM_SELF, a dup); MPI_CONGRUENT between MPI_COMM_WORLD and its dups
 * and between dups; MPI_ALIASED between the handles of one dup held by
 * different endpoints (threads); MPI_CONGRUENT between a dup held by one
 * endpoint and another communicator held by another endpoint; MPI_COMM_SELF
 * vs MPI_COMM_WORLD; endpoints made from MPI_COMM_WORLD, one per rank
 * (MPI_CONGRUENT) and two per rank (MPI_UNEQUAL; MPI_ALIASED between them).
 * Explicit shapes (P:a,b: endpoints per process): handles[0] vs handles[1]
 * MPI_ALIASED; vs the classic parent MPI_COMM_WORLD (and a classic dup of
 * it) MPI_CONGRUENT with exactly one endpoint per process, else
 * MPI_UNEQUAL; vs a classic communicator with the processes in reverse order
 * MPI_SIMILAR / MPI_UNEQUAL; dups, second-level endpoints, a separately
 * created endpoint communicator, and an endpoint made from MPI_COMM_SELF. */
#include "eptest.h"

static const char *res_name(int r)
{
    switch (r) {
    case MPI_IDENT:
        return "MPI_IDENT";
    case MPI_CONGRUENT:
        return "MPI_CONGRUENT";
    case MPI_SIMILAR:
        return "MPI_SIMILAR";
    case MPI_UNEQUAL:
        return "MPI_UNEQUAL";
    case MPI_ALIASED:
        return "MPI_ALIASED";
    default:
        return "?";
    }
}

/* Compares both ways and checks the result. */
#define EXPECT_CMP(a, b, want, what)                                                                                  \
    do {                                                                                                              \
        int r1_ = -1, r2_ = -1;                                                                                       \
        EPT_OK(MPI_Comm_compare((a), (b), &r1_));                                                                     \
        EPT_OK(MPI_Comm_compare((b), (a), &r2_));                                                                     \
        EPT_CHECK(r1_ == (want) && r2_ == (want), "%s: %s vs %s gives %s / %s (reversed), expected %s", what, #a, #b, \
                  res_name(r1_), res_name(r2_), res_name(want));                                                      \
    } while (0)

/* ---- world mode ---------------------------------------------------------- */

static void run_world(int T)
{
    int wsize;
    MPI_Comm *d = malloc(sizeof(MPI_Comm) * (size_t)T);      /* dups of MPI_COMM_WORLD */
    MPI_Comm *sd = malloc(sizeof(MPI_Comm) * (size_t)T);     /* dups of MPI_COMM_SELF */
    MPI_Comm *e1 = malloc(sizeof(MPI_Comm) * (size_t)T);     /* one endpoint per rank */
    MPI_Comm *e2 = malloc(sizeof(MPI_Comm) * 2 * (size_t)T); /* two endpoints per rank */
    EPT_CHECK(d && sd && e1 && e2, "out of memory");
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num(), o = (t + 1) % T;
        MPI_Comm d2, dd;
        EXPECT_CMP(MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_IDENT, "world");
        EXPECT_CMP(MPI_COMM_SELF, MPI_COMM_SELF, MPI_IDENT, "self");
        EXPECT_CMP(MPI_COMM_SELF, MPI_COMM_WORLD, wsize == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, "self vs world");
        EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d[t]));
        EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d2));
        EPT_OK(MPI_Comm_dup(d[t], &dd));
        EPT_OK(MPI_Comm_dup(MPI_COMM_SELF, &sd[t]));
        EXPECT_CMP(d[t], d[t], MPI_IDENT, "dup");
        EXPECT_CMP(MPI_COMM_WORLD, d[t], MPI_CONGRUENT, "dup of world");
        EXPECT_CMP(d[t], d2, MPI_CONGRUENT, "two dups of world");
        EXPECT_CMP(MPI_COMM_WORLD, dd, MPI_CONGRUENT, "dup of a dup");
        EXPECT_CMP(MPI_COMM_SELF, sd[t], MPI_CONGRUENT, "dup of self");
        EXPECT_CMP(MPI_COMM_WORLD, sd[t], wsize == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, "dup of self vs world");
        /* Endpoints from every world rank: one each keeps the group. */
        EPT_OK(MPI_Comm_create_endpoints(MPI_COMM_WORLD, 1, MPI_INFO_NULL, &e1[t]));
        EPT_OK(MPI_Comm_create_endpoints(MPI_COMM_WORLD, 2, MPI_INFO_NULL, &e2[2 * t]));
        EXPECT_CMP(MPI_COMM_WORLD, e1[t], MPI_CONGRUENT, "one endpoint per world rank");
        EXPECT_CMP(d[t], e1[t], MPI_CONGRUENT, "one endpoint per world rank vs dup");
        EXPECT_CMP(MPI_COMM_WORLD, e2[2 * t], MPI_UNEQUAL, "two endpoints per world rank");
        EXPECT_CMP(e1[t], e2[2 * t + 1], MPI_UNEQUAL, "one vs two endpoints per world rank");
        EXPECT_CMP(e2[2 * t], e2[2 * t + 1], MPI_ALIASED, "the two endpoints of one world rank");
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every thread's handles are in the arrays */
        if (T > 1) {
            /* Handles held by other endpoints of this process. */
            EXPECT_CMP(d[t], d[o], MPI_ALIASED, "one dup, two endpoints");
            EXPECT_CMP(MPI_COMM_WORLD, d[o], MPI_CONGRUENT, "world vs another endpoint's dup");
            EXPECT_CMP(d2, d[o], MPI_CONGRUENT, "a dup vs another endpoint's handle of another dup");
            EXPECT_CMP(dd, d[o], MPI_CONGRUENT, "dup of dup vs another endpoint's dup");
            EXPECT_CMP(sd[t], sd[o], MPI_UNEQUAL, "the self dups of two endpoints");
            EXPECT_CMP(e1[t], e1[o], MPI_ALIASED, "one endpoint per rank, two holders");
            EXPECT_CMP(e2[2 * t], e2[2 * o + 1], MPI_ALIASED, "two endpoints per rank, two holders");
        }
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody compares any more */
        EPT_OK(MPI_Comm_free(&d2));
        EPT_OK(MPI_Comm_free(&dd));
        EPT_OK(MPI_Comm_free(&d[t]));
        EPT_OK(MPI_Comm_free(&sd[t]));
        EPT_OK(MPI_Comm_free(&e1[t]));
    }
    /* The two-per-rank endpoints: one thread per handle frees it. */
#pragma omp parallel num_threads(2 * T)
    {
        int k = omp_get_thread_num();
        EPT_OK(MPI_Comm_free(&e2[k]));
    }
    free(d);
    free(sd);
    free(e1);
    free(e2);
}

/* ---- explicit shapes ------------------------------------------------------- */

static void run_explicit(const char *list)
{
    int nprocs, me, allone = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int p = 0; p < nprocs; p++)
        allone &= ept_list_item(list, p) == 1;
    int n = ept_list_item(list, me);
    EPT_CHECK(n >= 1 && n <= 2, "this test wants 1 or 2 endpoints per process, got %d", n);
    int want_world = allone ? MPI_CONGRUENT : MPI_UNEQUAL;

    MPI_Comm h[2], h2[2], d[2], l1[2], l2[4], cdup, rev, self_ep;
    EPT_OK(MPI_Comm_create_endpoints(MPI_COMM_WORLD, n, MPI_INFO_NULL, h));
    EPT_OK(MPI_Comm_create_endpoints(MPI_COMM_WORLD, n, MPI_INFO_NULL, h2)); /* created separately */
    EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &cdup));
    EPT_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - me, &rev));
    EPT_OK(MPI_Comm_create_endpoints(MPI_COMM_SELF, 1, MPI_INFO_NULL, &self_ep));

    for (int i = 0; i < n; i++) {
        EXPECT_CMP(h[i], h[i], MPI_IDENT, "same handle");
        EXPECT_CMP(h[i], MPI_COMM_WORLD, want_world, "endpoints vs their parent MPI_COMM_WORLD");
        EXPECT_CMP(h[i], cdup, want_world, "endpoints vs a classic dup of MPI_COMM_WORLD");
        if (nprocs > 1)
            EXPECT_CMP(h[i], rev, allone ? MPI_SIMILAR : MPI_UNEQUAL, "endpoints vs reversed classic comm");
        EXPECT_CMP(h[i], MPI_COMM_SELF, (allone && nprocs == 1) ? MPI_CONGRUENT : MPI_UNEQUAL,
                   "endpoints vs MPI_COMM_SELF");
        /* A second creation from the same parent: with one endpoint per
         * process both keep the processes; otherwise the endpoints are new
         * MPI processes each time. */
        EXPECT_CMP(h[i], h2[i], want_world, "two separately created endpoint communicators");
    }
    if (n == 2) {
        EXPECT_CMP(h[0], h[1], MPI_ALIASED, "handles[0] vs handles[1]");
        EXPECT_CMP(h2[0], h2[1], MPI_ALIASED, "handles[0] vs handles[1] of the second creation");
    }
    EXPECT_CMP(self_ep, MPI_COMM_SELF, MPI_CONGRUENT, "one endpoint made from MPI_COMM_SELF");
    EXPECT_CMP(self_ep, h[0], (allone && nprocs == 1) ? MPI_CONGRUENT : MPI_UNEQUAL,
               "endpoint of MPI_COMM_SELF vs endpoints of MPI_COMM_WORLD");

#pragma omp parallel num_threads(n)
    {
        int i = omp_get_thread_num();
        EPT_OK(MPI_Comm_dup(h[i], &d[i]));
        EPT_OK(MPI_Comm_create_endpoints(h[i], 1, MPI_INFO_NULL, &l1[i]));
        EPT_OK(MPI_Comm_create_endpoints(h[i], 2, MPI_INFO_NULL, &l2[2 * i]));
        EPT_OK(MPI_Barrier(h[i])); /* all handles are in the arrays */
        EXPECT_CMP(d[i], d[i], MPI_IDENT, "dup");
        EXPECT_CMP(d[i], h[i], MPI_CONGRUENT, "dup of endpoints");
        EXPECT_CMP(d[i], MPI_COMM_WORLD, want_world, "dup of endpoints vs MPI_COMM_WORLD");
        EXPECT_CMP(l1[i], h[i], MPI_CONGRUENT, "one endpoint per endpoint vs its endpoint parent");
        EXPECT_CMP(l1[i], MPI_COMM_WORLD, want_world, "one endpoint per endpoint vs MPI_COMM_WORLD");
        EXPECT_CMP(l2[2 * i], h[i], MPI_UNEQUAL, "two endpoints per endpoint vs its parent");
        EXPECT_CMP(l2[2 * i], l2[2 * i + 1], MPI_ALIASED, "the two endpoints of one parent endpoint");
        if (n == 2) {
            int o = 1 - i;
            EXPECT_CMP(d[i], d[o], MPI_ALIASED, "the dups of handles[0] and handles[1]");
            EXPECT_CMP(d[i], h[o], MPI_CONGRUENT, "a dup vs the other endpoint's original");
            EXPECT_CMP(l1[i], l1[o], MPI_ALIASED, "level 2, one each: two handles");
            EXPECT_CMP(l2[2 * i], l2[2 * o + 1], MPI_ALIASED, "level 2, two each: handles of two threads");
        }
        EPT_OK(MPI_Barrier(h[i])); /* nobody compares any more */
        EPT_OK(MPI_Comm_free(&d[i]));
        EPT_OK(MPI_Comm_free(&l1[i]));
        EPT_OK(MPI_Comm_free(&h2[i]));
    }
#pragma omp parallel num_threads(2 * n)
    {
        int k = omp_get_thread_num();
        EPT_OK(MPI_Comm_free(&l2[k]));
    }
#pragma omp parallel num_threads(n)
    {
        int i = omp_get_thread_num();
        EPT_OK(MPI_Comm_free(&h[i]));
    }
    EPT_OK(MPI_Comm_free(&self_ep));
    EPT_OK(MPI_Comm_free(&cdup));
    EPT_OK(MPI_Comm_free(&rev));
}

int main(int argc, char **argv)
{
    int provided, T = ept_world_endpoints();
    if (T <= 0 && argc < 2) {
        fprintf(stderr, "skip: needs world mode or an explicit shape\n");
        return 77;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    EPT_CHECK(MPI_Comm_create_endpoints != NULL, "MPI_Comm_create_endpoints is missing: is libepmpi.so preloaded?");
    if (T > 0)
        run_world(T);
    else
        run_explicit(argv[1]);
    MPI_Finalize();
    return 0;
}
