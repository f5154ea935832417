/* Communicator construction on the test communicator (MPI_COMM_WORLD in
 * world mode, the endpoints of argv[1] in explicit shapes, the classic
 * MPI_COMM_WORLD when every entry of argv[1] is 0 or there is no argv[1]:
 * then every call goes straight to MPICH, which checks the test itself):
 *  - MPI_Comm_create_group: the even ranks; all ranks in reverse order; the
 *    even and the odd ranks at the same time with the same tag, then with
 *    different tags; each rank alone; a negative tag (MPI_ERR_TAG), a
 *    caller outside the group (MPI_ERR_GROUP) and an intercommunicator
 *    (MPI_ERR_COMM) refused;
 *  - MPI_Comm_idup / MPI_Comm_idup_with_info: two idups and an Ibarrier
 *    started back to back and completed in another order (Waitall, then
 *    Test loops), attributes through a counting copy callback (value + 1),
 *    the info hint kept, contexts kept apart, an idup of an idup; an idup
 *    that must not block (rank 0 receives 1 MiB from rank 1, sent before
 *    rank 1's idup, before waiting for its own idup);
 *  - on an intercommunicator between the even and the odd ranks:
 *    MPI_Comm_split (a colour on both sides, one on the left only,
 *    MPI_UNDEFINED, reversed keys) with traffic across, an Allreduce and a
 *    merge; MPI_Comm_create from subgroups of each local group (one in
 *    reverse order), with Bcasts across (MPI_ROOT / MPI_PROC_NULL), and
 *    with an empty group on one side (MPI_COMM_NULL everywhere).
 * Every new communicator is checked against values computed here: rank,
 * size, the group translated back, a ring carrying the old ranks and a sum
 * of the old ranks.  EPT_CONSTRUCT_PARTS (e.g. "idup,inter") runs only the
 * parts named. */
#include "eptest.h"

/* rc must be an error of class cls. */
static void expect_class(int rc, int cls, int r, const char *what)
{
    int c = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    EPT_CHECK(rc != MPI_SUCCESS, "rank %d: %s succeeded, expected error class %d", r, what, cls);
    MPI_Error_class(rc, &c);
    MPI_Error_string(rc, msg, &len);
    EPT_CHECK(c == cls, "rank %d: %s gave error class %d, expected %d ('%s')", r, what, c, cls, msg);
}

/* The group of comm, translated: member i of group g is rank want[i] of
 * the group of comm. */
static void check_translate(MPI_Group g, MPI_Comm comm, const int *want, int m, int r, const char *what)
{
    MPI_Group cg;
    int gs = -1, *idx = malloc(sizeof(int) * (size_t)(m + 1)), *out = malloc(sizeof(int) * (size_t)(m + 1));
    EPT_CHECK(idx && out, "out of memory");
    EPT_OK(MPI_Group_size(g, &gs));
    EPT_CHECK(gs == m, "%s: rank %d: group size %d, expected %d", what, r, gs, m);
    EPT_OK(MPI_Comm_group(comm, &cg));
    for (int i = 0; i < m; i++) {
        idx[i] = i;
        out[i] = -7;
    }
    EPT_OK(MPI_Group_translate_ranks(g, m, idx, cg, out));
    for (int i = 0; i < m; i++)
        EPT_CHECK(out[i] == want[i], "%s: rank %d: group member %d translates to rank %d of the parent, expected %d",
                  what, r, i, out[i], want[i]);
    EPT_OK(MPI_Group_free(&cg));
    free(idx);
    free(out);
}

static int position(const int *list, int m, int x)
{
    for (int i = 0; i < m; i++)
        if (list[i] == x)
            return i;
    return -1;
}

/* nc, made from comm (n ranks) by the caller, old rank r: an
 * intracommunicator whose rank i is old rank olds[i], i < m. */
static void check_intra(MPI_Comm comm, int n, MPI_Comm nc, const int *olds, int m, int r, const char *what)
{
    int pos = position(olds, m, r), me = -1, size = -1, flag = 1, res = -1, want_res = MPI_CONGRUENT;
    EPT_CHECK(pos >= 0, "%s: test bug: rank %d is not a member", what, r);
    EPT_CHECK(nc != MPI_COMM_NULL, "%s: old rank %d got MPI_COMM_NULL, expected rank %d of %d", what, r, pos, m);
    EPT_CHECK(nc != comm, "%s: old rank %d got the parent handle back", what, r);
    EPT_OK(MPI_Comm_test_inter(nc, &flag));
    EPT_CHECK(!flag, "%s: old rank %d: the new communicator is an intercommunicator", what, r);
    EPT_OK(MPI_Comm_rank(nc, &me));
    EPT_OK(MPI_Comm_size(nc, &size));
    EPT_CHECK(me == pos && size == m, "%s: old rank %d is rank %d of %d, expected %d of %d", what, r, me, size, pos, m);
    if (m != n)
        want_res = MPI_UNEQUAL;
    else
        for (int i = 0; i < m; i++)
            if (olds[i] != i)
                want_res = MPI_SIMILAR;
    EPT_OK(MPI_Comm_compare(comm, nc, &res));
    EPT_CHECK(res == want_res, "%s: old rank %d: MPI_Comm_compare with the parent gave %d, expected %d", what, r, res,
              want_res);

    /* A ring carrying the old ranks. */
    int right = (pos + 1) % m, left = (pos + m - 1) % m, got = -1;
    MPI_Status st;
    EPT_OK(MPI_Sendrecv(&r, 1, MPI_INT, right, 11, &got, 1, MPI_INT, left, 11, nc, &st));
    EPT_CHECK(got == olds[left] && st.MPI_SOURCE == left && st.MPI_TAG == 11,
              "%s: old rank %d (new %d): ring got %d from source %d tag %d, expected old rank %d from %d", what, r, pos,
              got, st.MPI_SOURCE, st.MPI_TAG, olds[left], left);

    /* Sum of the old ranks. */
    int sum = -1, want_sum = 0;
    for (int i = 0; i < m; i++)
        want_sum += olds[i];
    EPT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, nc));
    EPT_CHECK(sum == want_sum, "%s: old rank %d: allreduce of the old ranks gave %d, expected %d", what, r, sum,
              want_sum);

    MPI_Group ng;
    EPT_OK(MPI_Comm_group(nc, &ng));
    check_translate(ng, comm, olds, m, r, what);
    EPT_OK(MPI_Group_free(&ng));
}

/* ---- MPI_Comm_create_group --------------------------------------------- */

/* Members olds[0..m) of comm call MPI_Comm_create_group with them, in that
 * order; the caller r must be one of them. */
static void create_group_case(MPI_Comm comm, int n, MPI_Group cg, const int *olds, int m, int tag, int r,
                              const char *what)
{
    MPI_Group g;
    MPI_Comm nc = MPI_COMM_NULL;
    PHASE(what);
    EPT_OK(MPI_Group_incl(cg, m, olds, &g));
    EPT_OK(MPI_Comm_create_group(comm, g, tag, &nc));
    check_intra(comm, n, nc, olds, m, r, what);
    EPT_OK(MPI_Comm_free(&nc));
    EPT_CHECK(nc == MPI_COMM_NULL, "%s: MPI_Comm_free did not null the handle", what);
    EPT_OK(MPI_Group_free(&g));
}

static void create_group_cases(MPI_Comm comm, int r, int n)
{
    MPI_Group cg;
    int *olds = malloc(sizeof(int) * (size_t)n), m;
    EPT_CHECK(olds, "out of memory");
    EPT_OK(MPI_Comm_group(comm, &cg));

    /* (a) The even ranks only; the odd ranks go on. */
    m = (n + 1) / 2;
    for (int i = 0; i < m; i++)
        olds[i] = 2 * i;
    if (r % 2 == 0)
        create_group_case(comm, n, cg, olds, m, 5, r, "create_group of the even ranks");

    /* (b) All ranks in reverse order: new rank = position in the group. */
    for (int i = 0; i < n; i++)
        olds[i] = n - 1 - i;
    create_group_case(comm, n, cg, olds, n, 6, r, "create_group of all ranks reversed");

    /* (c) The even and the odd ranks each make their own, at the same time:
     * with the same tag, then with different tags. */
    for (int round = 0; round < 2; round++) {
        int p = r % 2;
        m = p ? n / 2 : (n + 1) / 2;
        for (int i = 0; i < m; i++)
            olds[i] = 2 * i + p;
        create_group_case(
            comm, n, cg, olds, m, round == 0 ? 7 : 8 + p, r,
            round == 0 ? (p ? "create_group of the odd ranks, same tag as the even ranks"
                            : "create_group of the even ranks, same tag as the odd ranks")
                       : (p ? "create_group of the odd ranks, own tag" : "create_group of the even ranks, own tag"));
    }

    /* (d) Every rank alone, all with the same tag. */
    olds[0] = r;
    create_group_case(comm, n, cg, olds, 1, 10, r, "create_group of the caller alone");

    /* A negative tag is refused. */
    PHASE("create_group with a negative tag");
    MPI_Group self;
    MPI_Comm nc = MPI_COMM_NULL;
    EPT_OK(MPI_Group_incl(cg, 1, &r, &self));
    EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    expect_class(MPI_Comm_create_group(comm, self, -1, &nc), MPI_ERR_TAG, r, "MPI_Comm_create_group with tag -1");
    if (!ept_classic && n > 1) { /* erroneous in MPI; epmpi names it (MPICH's answer is its own) */
        MPI_Group other;
        int next = (r + 1) % n;
        EPT_OK(MPI_Group_incl(cg, 1, &next, &other));
        expect_class(MPI_Comm_create_group(comm, other, 3, &nc), MPI_ERR_GROUP, r,
                     "MPI_Comm_create_group by a rank outside the group");
        EPT_OK(MPI_Group_free(&other));
    }
    EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
    EPT_OK(MPI_Group_free(&self));
    EPT_OK(MPI_Group_free(&cg));
    free(olds);
}

/* ---- MPI_Comm_idup ------------------------------------------------------ */

typedef struct {
    atomic_int copies;
    _Atomic MPI_Comm last; /* the communicator the last copy was called with */
} copy_count_t;

/* One keyval per rank, its counter as extra_state. */
static int copy_cb(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    copy_count_t *c = extra;
    (void)keyval;
    atomic_fetch_add(&c->copies, 1);
    atomic_store(&c->last, oldcomm);
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

/* The value of kv on d, which must be there. */
static void check_attr(MPI_Comm d, int kv, intptr_t want, int r, const char *what)
{
    void *v = NULL;
    int flag = 0;
    EPT_OK(MPI_Comm_get_attr(d, kv, &v, &flag));
    EPT_CHECK(flag, "%s: rank %d: the attribute was not copied", what, r);
    EPT_CHECK((intptr_t)v == want, "%s: rank %d: attribute %ld, expected %ld", what, r, (long)(intptr_t)v, (long)want);
}

/* The hint "mpi_assert_no_any_source" on d: want "true", or not set (want
 * NULL): absent, or "false" where MPICH reports every hint it knows. */
#if EP_HAVE_MPI_Comm_idup_with_info
#define IDUP_WITH_INFO(c, info, out, rq) MPI_Comm_idup_with_info(c, info, out, rq)
#define IDUP_HINT "true"
#else /* MPI 4.0's, not in this MPI: a plain idup in its place, without the hint */
#define IDUP_WITH_INFO(c, info, out, rq) MPI_Comm_idup(c, out, rq)
#define IDUP_HINT NULL
#endif

static void check_hint(MPI_Comm d, const char *want, int r, const char *what)
{
    MPI_Info used = MPI_INFO_NULL;
    char buf[64] = "";
    int len = (int)sizeof buf, flag = -1;
    EPT_OK(MPI_Comm_get_info(d, &used));
    EPT_CHECK(used != MPI_INFO_NULL, "%s: rank %d: MPI_Comm_get_info returned MPI_INFO_NULL", what, r);
#if EP_HAVE_MPI_Info_get_string
    EPT_OK(MPI_Info_get_string(used, "mpi_assert_no_any_source", &len, buf, &flag));
#else /* MPI 4.0's, not in this MPI */
    EPT_OK(MPI_Info_get(used, "mpi_assert_no_any_source", len - 1, buf, &flag));
#endif
    if (!want)
        EPT_CHECK(!flag || !strcmp(buf, "false"), "%s: rank %d: hint mpi_assert_no_any_source is '%s', expected none",
                  what, r, buf);
    else
        EPT_CHECK(flag && !strcmp(buf, want), "%s: rank %d: hint mpi_assert_no_any_source is %s'%s', expected '%s'",
                  what, r, flag ? "" : "absent ", flag ? buf : "", want);
    EPT_OK(MPI_Info_free(&used));
}

/* Messages on comm and two of its dups with the same tag to the right
 * neighbour, received in another order: each stays on its communicator. */
static void check_apart(MPI_Comm comm, MPI_Comm d1, MPI_Comm d2, int r, int n, const char *what)
{
    int right = (r + 1) % n, left = (r + n - 1) % n, out[3] = {r, r + 1000, r + 2000}, in[3] = {-1, -1, -1};
    MPI_Comm cs[3] = {comm, d1, d2};
    MPI_Request rq[3];
    for (int k = 0; k < 3; k++)
        EPT_OK(MPI_Isend(&out[k], 1, MPI_INT, right, 12, cs[k], &rq[k]));
    for (int k = 2; k >= 0; k--)
        EPT_OK(MPI_Recv(&in[k], 1, MPI_INT, left, 12, cs[k], MPI_STATUS_IGNORE));
    EPT_OK(MPI_Waitall(3, rq, statuses_ignore()));
    for (int k = 0; k < 3; k++)
        EPT_CHECK(in[k] == left + 1000 * k, "%s: rank %d: message on communicator %d carried %d, expected %d", what, r,
                  k, in[k], left + 1000 * k);
}

static void idup_cases(MPI_Comm comm, int r, int n)
{
    copy_count_t cnt;
    int kv, *ident = malloc(sizeof(int) * (size_t)n);
    EPT_CHECK(ident, "out of memory");
    for (int i = 0; i < n; i++)
        ident[i] = i;
    atomic_init(&cnt.copies, 0);
    atomic_init(&cnt.last, MPI_COMM_NULL);
    EPT_OK(MPI_Comm_create_keyval(copy_cb, MPI_COMM_NULL_DELETE_FN, &kv, &cnt));
    EPT_OK(MPI_Comm_set_attr(comm, kv, (void *)(intptr_t)(1000 + r)));
    MPI_Info info;
    EPT_OK(MPI_Info_create(&info));
    EPT_OK(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));

    /* Two idups and an Ibarrier back to back, completed in reverse order. */
    PHASE("idup: idup, idup_with_info and Ibarrier, Waitall in reverse order");
    MPI_Comm d1 = MPI_COMM_NULL, d2 = MPI_COMM_NULL;
    MPI_Request rq[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    EPT_OK(MPI_Comm_idup(comm, &d1, &rq[0]));
    EPT_OK(IDUP_WITH_INFO(comm, info, &d2, &rq[1]));
    EPT_OK(MPI_Ibarrier(comm, &rq[2]));
    for (int k = 0; k < 3; k++)
        EPT_CHECK(rq[k] != MPI_REQUEST_NULL, "rank %d: request %d of idup, idup_with_info, ibarrier is null", r, k);
    MPI_Request rev[3] = {rq[2], rq[1], rq[0]};
    EPT_OK(MPI_Waitall(3, rev, statuses_ignore()));
    for (int k = 0; k < 3; k++)
        EPT_CHECK(rev[k] == MPI_REQUEST_NULL, "rank %d: MPI_Waitall left request %d active", r, k);
    EPT_CHECK(d1 != d2, "rank %d: both idups gave handle " EPT_HFMT, r, EPT_HARG(d1));
    check_intra(comm, n, d1, ident, n, r, "MPI_Comm_idup");
    check_intra(comm, n, d2, ident, n, r, "MPI_Comm_idup_with_info");
    check_apart(comm, d1, d2, r, n, "idup contexts");
    EPT_CHECK(atomic_load(&cnt.copies) == 2, "rank %d: the copy callback ran %d times for two idups", r,
              atomic_load(&cnt.copies));
    EPT_CHECK(atomic_load(&cnt.last) == comm,
              "rank %d: the copy callback got communicator " EPT_HFMT ", expected " EPT_HFMT, r,
              EPT_HARG(atomic_load(&cnt.last)), EPT_HARG(comm));
    check_attr(d1, kv, 1001 + r, r, "MPI_Comm_idup");
    check_attr(d2, kv, 1001 + r, r, "MPI_Comm_idup_with_info");
    check_hint(d2, IDUP_HINT, r, "MPI_Comm_idup_with_info");
    check_hint(d1, NULL, r, "MPI_Comm_idup");

    /* Again in another order, completed with Test loops, last first. */
    PHASE("idup: Ibarrier, idup and idup_with_info, Test loops");
    MPI_Comm e1 = MPI_COMM_NULL, e2 = MPI_COMM_NULL;
    int done[3] = {0, 0, 0}, left = 3, res = -1;
    EPT_OK(MPI_Ibarrier(comm, &rq[0]));
    EPT_OK(MPI_Comm_idup(comm, &e1, &rq[1]));
    EPT_OK(IDUP_WITH_INFO(comm, info, &e2, &rq[2]));
    while (left > 0)
        for (int k = 2; k >= 0; k--)
            if (!done[k]) {
                EPT_OK(MPI_Test(&rq[k], &done[k], MPI_STATUS_IGNORE));
                left -= done[k];
            }
    for (int k = 0; k < 3; k++)
        EPT_CHECK(rq[k] == MPI_REQUEST_NULL, "rank %d: MPI_Test left request %d active", r, k);
    check_intra(comm, n, e1, ident, n, r, "MPI_Comm_idup (Test loop)");
    check_intra(comm, n, e2, ident, n, r, "MPI_Comm_idup_with_info (Test loop)");
    check_apart(e1, e2, d1, r, n, "idup contexts (Test loop)");
    EPT_OK(MPI_Comm_compare(d1, e1, &res));
    EPT_CHECK(res == MPI_CONGRUENT, "rank %d: two idups of one communicator compare as %d", r, res);
    EPT_CHECK(atomic_load(&cnt.copies) == 4, "rank %d: the copy callback ran %d times for four idups", r,
              atomic_load(&cnt.copies));
    check_attr(e1, kv, 1001 + r, r, "MPI_Comm_idup (Test loop)");
    check_attr(e2, kv, 1001 + r, r, "MPI_Comm_idup_with_info (Test loop)");
    check_hint(e2, IDUP_HINT, r, "MPI_Comm_idup_with_info (Test loop)");
    /* A dup of the dup: the attribute goes one further. */
    MPI_Comm f = MPI_COMM_NULL;
    MPI_Request q = MPI_REQUEST_NULL;
    EPT_OK(MPI_Comm_idup(d1, &f, &q));
    EPT_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    check_intra(comm, n, f, ident, n, r, "MPI_Comm_idup of an idup");
    check_attr(f, kv, 1002 + r, r, "MPI_Comm_idup of an idup");
    EPT_CHECK(atomic_load(&cnt.last) == d1,
              "rank %d: the copy callback got communicator " EPT_HFMT ", expected " EPT_HFMT, r,
              EPT_HARG(atomic_load(&cnt.last)), EPT_HARG(d1));
    EPT_OK(MPI_Comm_delete_attr(comm, kv));
    EPT_OK(MPI_Info_free(&info));

    /* An idup that blocked would deadlock here: rank 1 sends 1 MiB to rank
     * 0 before its idup; rank 0 receives it after starting its idup. */
    if (n >= 2) {
        PHASE("idup: rank 0 receives 1 MiB from rank 1 between its idup and the wait");
        const size_t big = (size_t)1 << 20;
        unsigned char *buf = malloc(big);
        MPI_Comm d3 = MPI_COMM_NULL;
        EPT_CHECK(buf, "out of memory");
        q = MPI_REQUEST_NULL;
        if (r == 0) {
            MPI_Status st;
            int cnt_got = -1;
            memset(buf, 0, big);
            EPT_OK(MPI_Comm_idup(comm, &d3, &q));
            EPT_OK(MPI_Recv(buf, (int)big, MPI_BYTE, 1, 21, comm, &st));
            EPT_OK(MPI_Get_count(&st, MPI_BYTE, &cnt_got));
            size_t bad = first_bad(buf, big, 1, 0, 21);
            EPT_CHECK(cnt_got == (int)big && bad == big,
                      "rank 0: 1 MiB from rank 1 during an idup: %d bytes, first bad byte %zu", cnt_got, bad);
            EPT_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else if (r == 1) {
            fill(buf, big, 1, 0, 21);
            EPT_OK(MPI_Send(buf, (int)big, MPI_BYTE, 0, 21, comm));
            EPT_OK(MPI_Comm_idup(comm, &d3, &q));
            EPT_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            EPT_OK(MPI_Comm_idup(comm, &d3, &q));
            EPT_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        }
        check_intra(comm, n, d3, ident, n, r, "MPI_Comm_idup around a 1 MiB message");
        EPT_CHECK(atomic_load(&cnt.copies) == 5, "rank %d: the copy callback ran %d times, expected 5", r,
                  atomic_load(&cnt.copies));
        EPT_OK(MPI_Comm_free(&d3));
        free(buf);
    }
    EPT_OK(MPI_Comm_free(&f));
    EPT_OK(MPI_Comm_free(&e1));
    EPT_OK(MPI_Comm_free(&e2));
    EPT_OK(MPI_Comm_free(&d1));
    EPT_OK(MPI_Comm_free(&d2));
    EPT_OK(MPI_Comm_free_keyval(&kv));
    free(ident);
}

/* ---- on an intercommunicator ------------------------------------------- */

/* The intercommunicator joins the even ranks (group 0, the left group) and
 * the odd ranks (group 1): local rank i of group g is old rank 2i + g. */

/* Colours of MPI_Comm_split: 0 on both sides, 5 on the left only (local
 * rank 1), MPI_UNDEFINED on the right (local rank 2); keys reversed. */
static int split_colour(int g, int i)
{
    if (g == 0 && i == 1)
        return 5;
    if (g == 1 && i == 2)
        return MPI_UNDEFINED;
    return 0;
}
static int split_key(int q, int n) { return n - q; }

/* The old ranks of group g with colour c in their new order (by key, then
 * old rank); returns how many. */
static int split_members(int n, int g, int c, int *out)
{
    int m = 0;
    for (int q = g; q < n; q += 2) {
        if (split_colour(g, q / 2) != c)
            continue;
        int j = m++;
        while (j > 0 && (split_key(out[j - 1], n) > split_key(q, n) ||
                         (split_key(out[j - 1], n) == split_key(q, n) && out[j - 1] > q))) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = q;
    }
    return m;
}

/* nc: an intercommunicator whose local group is old ranks loc[0..nl) and
 * remote group old ranks rem[0..nr) of comm. */
static void check_inter(MPI_Comm comm, MPI_Comm parent, MPI_Comm nc, const int *loc, int nl, const int *rem, int nr,
                        int r, const char *what)
{
    int pos = position(loc, nl, r), flag = 0, me = -1, size = -1, rsize = -1;
    MPI_Group g;
    EPT_CHECK(nc != MPI_COMM_NULL, "%s: old rank %d got MPI_COMM_NULL, expected rank %d of %d (remote size %d)", what,
              r, pos, nl, nr);
    EPT_CHECK(nc != parent, "%s: old rank %d got the parent handle back", what, r);
    EPT_OK(MPI_Comm_test_inter(nc, &flag));
    EPT_CHECK(flag, "%s: old rank %d: MPI_Comm_test_inter says intra", what, r);
    EPT_OK(MPI_Comm_rank(nc, &me));
    EPT_OK(MPI_Comm_size(nc, &size));
    EPT_OK(MPI_Comm_remote_size(nc, &rsize));
    EPT_CHECK(me == pos && size == nl && rsize == nr,
              "%s: old rank %d is rank %d of %d, remote size %d, expected rank %d of %d, remote size %d", what, r, me,
              size, rsize, pos, nl, nr);
    EPT_OK(MPI_Comm_group(nc, &g));
    check_translate(g, comm, loc, nl, r, what);
    EPT_OK(MPI_Group_free(&g));
    EPT_OK(MPI_Comm_remote_group(nc, &g));
    check_translate(g, comm, rem, nr, r, what);
    EPT_OK(MPI_Group_free(&g));
}

static void inter_split(MPI_Comm comm, MPI_Comm inter, int r, int n)
{
    int g = r % 2, c = split_colour(g, r / 2);
    int *loc = malloc(sizeof(int) * (size_t)n), *rem = malloc(sizeof(int) * (size_t)n);
    EPT_CHECK(loc && rem, "out of memory");
    PHASE("MPI_Comm_split on the intercommunicator");
    MPI_Comm nc = MPI_COMM_NULL;
    EPT_OK(MPI_Comm_split(inter, c, split_key(r, n), &nc));
    int nl = c == MPI_UNDEFINED ? 0 : split_members(n, g, c, loc);
    int nr = c == MPI_UNDEFINED ? 0 : split_members(n, 1 - g, c, rem);
    if (c == MPI_UNDEFINED) {
        EPT_CHECK(nc == MPI_COMM_NULL, "intercomm split: old rank %d with MPI_UNDEFINED got a communicator", r);
    } else if (nr == 0) {
        EPT_CHECK(nc == MPI_COMM_NULL, "intercomm split: old rank %d, colour %d on its side only, got a communicator",
                  r, c);
    } else {
        char what[64];
        snprintf(what, sizeof what, "intercomm split, colour %d", c);
        check_inter(comm, inter, nc, loc, nl, rem, nr, r, what);
        int pos = position(loc, nl, r), v = -1;
        /* Left rank k sends its old rank to right rank k % (right size). */
        if (g == 0) {
            EPT_OK(MPI_Send(&r, 1, MPI_INT, pos % nr, 41, nc));
        } else {
            int expect = 0, seen = 0;
            for (int k = 0; k < nr; k++)
                expect += k % nl == pos;
            for (int j = 0; j < expect; j++) {
                MPI_Status st;
                EPT_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 41, nc, &st));
                int s = st.MPI_SOURCE;
                EPT_CHECK(s >= 0 && s < nr && s % nl == pos && v == rem[s] && !(seen >> s & 1),
                          "%s: old rank %d (right rank %d): got %d from left rank %d; expected old rank %d from a "
                          "left rank k with k %% %d == %d, once each",
                          what, r, pos, v, s, s >= 0 && s < nr ? rem[s] : -1, nl, pos);
                seen |= 1 << s;
            }
        }
        /* Allreduce across: the sum of the remote old ranks. */
        int sum = -1, want = 0, all = 0;
        for (int k = 0; k < nr; k++)
            want += rem[k];
        EPT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, nc));
        EPT_CHECK(sum == want, "%s: old rank %d: allreduce across gave %d, expected %d (remote sum)", what, r, sum,
                  want);
        /* Merge, the left group first. */
        MPI_Comm m = MPI_COMM_NULL;
        int mr = -1, ms = -1;
        EPT_OK(MPI_Intercomm_merge(nc, g, &m));
        EPT_OK(MPI_Comm_rank(m, &mr));
        EPT_OK(MPI_Comm_size(m, &ms));
        EPT_CHECK(ms == nl + nr && mr == (g == 0 ? pos : nr + pos),
                  "%s: old rank %d: merged rank %d of %d, expected %d of %d", what, r, mr, ms, g == 0 ? pos : nr + pos,
                  nl + nr);
        for (int k = 0; k < nl; k++)
            all += loc[k];
        EPT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, m));
        EPT_CHECK(sum == want + all, "%s: old rank %d: allreduce on the merge gave %d, expected %d", what, r, sum,
                  want + all);
        EPT_OK(MPI_Comm_free(&m));
        EPT_OK(MPI_Comm_free(&nc));
    }
    free(loc);
    free(rem);
}

/* MPI_Comm_create on the intercommunicator: the left group offers its
 * first half in order, the right group all its ranks in reverse order
 * (or, with empty_right, MPI_GROUP_EMPTY). */
static int create_sub(int g, int i, const int *sz) { return g == 0 ? i : sz[1] - 1 - i; }

static void inter_create(MPI_Comm comm, MPI_Comm inter, int r, int n, int empty_right)
{
    int g = r % 2, sz[2] = {(n + 1) / 2, n / 2}, k[2] = {(sz[0] + 1) / 2, empty_right ? 0 : sz[1]};
    int *lranks = malloc(sizeof(int) * (size_t)n), *loc = malloc(sizeof(int) * (size_t)n),
        *rem = malloc(sizeof(int) * (size_t)n);
    EPT_CHECK(lranks && loc && rem, "out of memory");
    PHASE(empty_right ? "MPI_Comm_create on the intercommunicator, the right group empty"
                      : "MPI_Comm_create on the intercommunicator");
    for (int j = 0; j < k[g]; j++) {
        lranks[j] = create_sub(g, j, sz);
        loc[j] = 2 * lranks[j] + g;
    }
    for (int j = 0; j < k[1 - g]; j++)
        rem[j] = 2 * create_sub(1 - g, j, sz) + 1 - g;
    MPI_Group lg, sg;
    EPT_OK(MPI_Comm_group(inter, &lg));
    if (k[g] > 0)
        EPT_OK(MPI_Group_incl(lg, k[g], lranks, &sg));
    else
        sg = MPI_GROUP_EMPTY;
    MPI_Comm nc = MPI_COMM_NULL;
    EPT_OK(MPI_Comm_create(inter, sg, &nc));
    int pos = position(loc, k[g], r);
    if (pos < 0 || k[1 - g] == 0) {
        EPT_CHECK(nc == MPI_COMM_NULL, "intercomm create%s: old rank %d (%s) got a communicator",
                  empty_right ? ", right group empty" : "", r, pos < 0 ? "not in its group" : "remote group empty");
    } else {
        const char *what = "intercomm create";
        check_inter(comm, inter, nc, loc, k[g], rem, k[1 - g], r, what);
        /* Left new rank 0 broadcasts to the right, then right new rank
         * (size - 1) to the left. */
        for (int from = 0; from < 2; from++) {
            int rootpos = from == 0 ? 0 : k[1] - 1, root, v = -1, want;
            if (g == from) {
                root = pos == rootpos ? MPI_ROOT : MPI_PROC_NULL;
                v = pos == rootpos ? 7000 + r : -5;
                want = v;
            } else {
                root = rootpos;
                want = 7000 + rem[rootpos];
            }
            EPT_OK(MPI_Bcast(&v, 1, MPI_INT, root, nc));
            EPT_CHECK(v == want, "%s: old rank %d: Bcast from the %s group's rank %d: buffer %d, expected %d%s", what,
                      r, from == 0 ? "left" : "right", rootpos, v, want,
                      g == from && pos != rootpos ? " (MPI_PROC_NULL: untouched)" : "");
        }
        EPT_OK(MPI_Comm_free(&nc));
    }
    if (sg != MPI_GROUP_EMPTY)
        EPT_OK(MPI_Group_free(&sg));
    EPT_OK(MPI_Group_free(&lg));
    free(lranks);
    free(loc);
    free(rem);
}

static void inter_cases(MPI_Comm comm, int r, int n)
{
    int g = r % 2, li = r / 2, sz[2] = {(n + 1) / 2, n / 2}, flag = 0, v = -1;
    MPI_Comm local, inter;
    PHASE("intercommunicator by rank parity");
    EPT_OK(MPI_Comm_split(comm, g, r, &local));
    EPT_OK(MPI_Intercomm_create(local, 0, comm, g == 0 ? 1 : 0, 31, &inter));
    EPT_OK(MPI_Comm_test_inter(inter, &flag));
    EPT_OK(MPI_Comm_rank(inter, &v));
    EPT_CHECK(flag && v == li, "parity intercommunicator: old rank %d: inter %d, rank %d, expected rank %d", r, flag, v,
              li);
    EPT_OK(MPI_Comm_remote_size(inter, &v));
    EPT_CHECK(v == sz[1 - g], "parity intercommunicator: old rank %d: remote size %d, expected %d", r, v, sz[1 - g]);

    /* MPI_Comm_create_group wants an intracommunicator. */
    PHASE("create_group on an intercommunicator");
    MPI_Group lg, self;
    MPI_Comm nc = MPI_COMM_NULL;
    EPT_OK(MPI_Comm_group(inter, &lg));
    EPT_OK(MPI_Group_incl(lg, 1, &li, &self));
    EPT_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    if (!(ept_classic && EPT_OPEN_MPI)) /* Open MPI 4.1 makes one */
        expect_class(MPI_Comm_create_group(inter, self, 12, &nc), MPI_ERR_COMM, r,
                     "MPI_Comm_create_group on an intercommunicator");
    EPT_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_ARE_FATAL));
    EPT_OK(MPI_Group_free(&self));
    EPT_OK(MPI_Group_free(&lg));

    inter_split(comm, inter, r, n);
    inter_create(comm, inter, r, n, 0);
    inter_create(comm, inter, r, n, 1);
    EPT_OK(MPI_Comm_free(&inter));
    EPT_OK(MPI_Comm_free(&local));
}

static void body(MPI_Comm comm, void *arg)
{
    int r, n;
    (void)arg;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    /* EPT_CONSTRUCT_PARTS (a list of group, idup, inter; default all) runs
     * only some parts, to follow an implementation part by part. */
    const char *parts = getenv("EPT_CONSTRUCT_PARTS");
    if (!parts || strstr(parts, "group"))
        create_group_cases(comm, r, n);
    if (!parts || strstr(parts, "idup"))
        idup_cases(comm, r, n);
    if (n >= 2 && (!parts || strstr(parts, "inter")))
        inter_cases(comm, r, n);
    PHASE("done");
}

int main(int argc, char **argv) { return ept_main_classic(argc, argv, 60, body, NULL); }
