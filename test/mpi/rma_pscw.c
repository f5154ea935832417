/* Generalized active-target synchronisation (MPI_Win_post / start /
 * complete / wait / test) on the test communicator (see rma_common.h for
 * the shapes), with groups built by MPI_Group_incl from the window's group:
 *  - a ring, one way: each rank exposes its window to its left neighbour
 *    and accesses its right one (the same rank, or itself, in small rings);
 *  - both ways at once, the exposure ended by a loop of MPI_Win_test;
 *  - gets, with MPI_MODE_NOSTORE | MPI_MODE_NOPUT on the post and
 *    MPI_MODE_NOCHECK on the start (the posts are done: a barrier);
 *  - MPI_Win_test returns false while the origin has not completed (it
 *    waits for a message sent after the test), then true;
 *  - accumulate from all to one (rank 0, the only rank that posts, its
 *    group being the whole window group) in MPI_Win_allocate memory;
 *  - in explicit shapes, an endpoint group with a classic window: a clear
 *    MPI_ERR_GROUP from MPI_Win_post and MPI_Win_start.
 * Every value is checked against values computed here. */
#include "rma_common.h"

#define K 16

static int val(int r, int i) { return r * 1000 + i + 1; }

/* The group of ranks a and b (once if a == b) of win's group. */
static MPI_Group pair_group(MPI_Win win, int a, int b)
{
    MPI_Group wg, g;
    int ranks[2] = {a, b};
    EPT_OK(MPI_Win_get_group(win, &wg));
    EPT_OK(MPI_Group_incl(wg, a == b ? 1 : 2, ranks, &g));
    EPT_OK(MPI_Group_free(&wg));
    return g;
}

static void wait_by_test(MPI_Win win)
{
    int flag = 0;
    while (!flag)
        EPT_OK(MPI_Win_test(win, &flag));
}

static void check_block(const int *buf, int r, int first, int me, const char *what)
{
    for (int i = 0; i < K; i++)
        EPT_CHECK(buf[i] == val(r, first + i), "rank %d: %s: element %d is %d, expected %d from rank %d", me, what, i,
                  buf[i], val(r, first + i), r);
}

static void part_ring(MPI_Comm comm)
{
    int me, n, left, right, src[2 * K], got[K];
    ept_ring_place(comm, &me, &n, &left, &right);
    int *buf = malloc(sizeof(int) * 2 * K);
    EPT_CHECK(buf, "out of memory");
    for (int i = 0; i < 2 * K; i++)
        buf[i] = -1;
    MPI_Win win;
    PHASE("rma_pscw: MPI_Win_create");
    EPT_OK(MPI_Win_create(buf, sizeof(int) * 2 * K, sizeof(int), MPI_INFO_NULL, comm, &win));
    MPI_Group from_left = pair_group(win, left, left), to_right = pair_group(win, right, right),
              both = pair_group(win, left, right);

    PHASE("rma_pscw: one way");
    for (int i = 0; i < K; i++)
        src[i] = val(me, i);
    EPT_OK(MPI_Win_post(from_left, 0, win));
    EPT_OK(MPI_Win_start(to_right, 0, win));
    EPT_OK(MPI_Put(src, K, MPI_INT, right, 0, K, MPI_INT, win));
    EPT_OK(MPI_Win_complete(win));
    EPT_OK(MPI_Win_wait(win));
    check_block(buf, left, 0, me, "one way");

    PHASE("rma_pscw: both ways, Win_test");
    for (int i = 0; i < K; i++) {
        src[i] = val(me, 100 + i);
        src[K + i] = val(me, 200 + i);
    }
    EPT_OK(MPI_Win_post(both, 0, win));
    EPT_OK(MPI_Win_start(both, 0, win));
    EPT_OK(MPI_Put(src, K, MPI_INT, right, 0, K, MPI_INT, win));
    EPT_OK(MPI_Put(src + K, K, MPI_INT, left, K, K, MPI_INT, win));
    EPT_OK(MPI_Win_complete(win));
    wait_by_test(win);
    check_block(buf, left, 100, me, "both ways, from the left");
    check_block(buf + K, right, 200, me, "both ways, from the right");

    PHASE("rma_pscw: gets, NOCHECK");
    for (int i = 0; i < K; i++)
        got[i] = -2;
    /* NOCHECK on the start needs it on every matching post (MPI-4.0
     * 12.5.5); without it Open MPI's next start took this post's notice */
    EPT_OK(MPI_Win_post(both, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
    EPT_OK(MPI_Barrier(comm)); /* every post is done before any start */
    EPT_OK(MPI_Win_start(both, MPI_MODE_NOCHECK, win));
    EPT_OK(MPI_Get(got, K, MPI_INT, right, 0, K, MPI_INT, win));
    EPT_OK(MPI_Win_complete(win));
    EPT_OK(MPI_Win_wait(win));
    check_block(got, me, 100, me, "get from the right neighbour");

    PHASE("rma_pscw: Win_test before the origin completes");
    int flag = 1, go = 0, got_go = -1;
    MPI_Request req;
    for (int i = 0; i < K; i++)
        src[i] = val(me, 300 + i);
    EPT_OK(MPI_Win_post(from_left, 0, win));
    /* The left neighbour has not completed: it waits for this message. */
    EPT_OK(MPI_Win_test(win, &flag));
    EPT_CHECK(!flag, "rank %d: MPI_Win_test is true before the origin (rank %d) completed", me, left);
    EPT_OK(MPI_Isend(&go, 1, MPI_INT, left, 7, comm, &req));
    EPT_OK(MPI_Recv(&got_go, 1, MPI_INT, right, 7, comm, MPI_STATUS_IGNORE));
    EPT_OK(MPI_Win_start(to_right, 0, win));
    EPT_OK(MPI_Put(src, K, MPI_INT, right, 0, K, MPI_INT, win));
    EPT_OK(MPI_Win_complete(win));
    EPT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    wait_by_test(win);
    check_block(buf, left, 300, me, "after Win_test");

    EPT_OK(MPI_Group_free(&from_left));
    EPT_OK(MPI_Group_free(&to_right));
    EPT_OK(MPI_Group_free(&both));
    EPT_OK(MPI_Win_free(&win));
    free(buf);
}

static void part_all_to_one(MPI_Comm comm)
{
    int me, n, *base = NULL, add[K];
    EPT_OK(MPI_Comm_rank(comm, &me));
    EPT_OK(MPI_Comm_size(comm, &n));
    MPI_Win win;
    PHASE("rma_pscw: all to one: MPI_Win_allocate");
    /* Only rank 0 exposes memory; K ints is a multiple of 16 bytes. */
    EPT_OK(MPI_Win_allocate(me == 0 ? sizeof(int) * K : 0, sizeof(int), MPI_INFO_NULL, comm, &base, &win));
    MPI_Group wg, root;
    EPT_OK(MPI_Win_get_group(win, &wg));
    root = pair_group(win, 0, 0);
    for (int i = 0; i < K; i++)
        add[i] = val(me, i);
    if (me == 0) {
        for (int i = 0; i < K; i++)
            base[i] = i;
        EPT_OK(MPI_Win_post(wg, 0, win));
    }
    PHASE("rma_pscw: all to one: accumulate");
    EPT_OK(MPI_Win_start(root, 0, win));
    EPT_OK(MPI_Accumulate(add, K, MPI_INT, 0, 0, K, MPI_INT, MPI_SUM, win));
    EPT_OK(MPI_Win_complete(win));
    if (me == 0) {
        EPT_OK(MPI_Win_wait(win));
        for (int i = 0; i < K; i++) {
            int want = i;
            for (int r = 0; r < n; r++)
                want += val(r, i);
            EPT_CHECK(base[i] == want, "all to one: element %d is %d, expected %d", i, base[i], want);
        }
    }
    EPT_OK(MPI_Group_free(&wg));
    EPT_OK(MPI_Group_free(&root));
    EPT_OK(MPI_Win_free(&win));
}

/* An endpoint group given with a classic window (explicit shapes, where
 * MPI_COMM_SELF is classic) never reaches MPICH: MPI_ERR_GROUP on the
 * window's handler, with epmpi's message naming the call. */
static void part_classic_window(MPI_Comm comm)
{
    if (!ept_hint_is(comm, "epmpi_p2p_path", "engine") && !ept_hint_is(comm, "epmpi_p2p_path", "mpich"))
        return; /* comm is classic: no endpoint group */
    if (ept_hint_is(MPI_COMM_SELF, "epmpi_p2p_path", "engine"))
        return; /* world mode: no classic window to be made */
    PHASE("rma_pscw: an endpoint group with a classic window");
    int x = 0;
    MPI_Group g;
    MPI_Win win;
    /* Open MPI 4.1's default one-sided component makes no window on
     * MPI_COMM_SELF in a job of several processes (plain programs fail
     * alike): there the part is skipped.  The process's endpoints share
     * MPI_COMM_SELF and its handler: one at a time. */
    int made;
#pragma omp critical(rma_pscw_self)
    {
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
        made = MPI_Win_create(&x, sizeof x, 1, MPI_INFO_NULL, MPI_COMM_SELF, &win);
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    }
    EPT_CHECK(made == MPI_SUCCESS || EPT_OPEN_MPI, "MPI_Win_create on MPI_COMM_SELF failed (%d)", made);
    if (made != MPI_SUCCESS)
        return;
    EPT_OK(MPI_Comm_group(comm, &g));
    EPT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    static const char *calls[] = {"MPI_Win_post", "MPI_Win_start"};
    for (int i = 0; i < 2; i++) {
        int rc = i ? MPI_Win_start(g, 0, win) : MPI_Win_post(g, 0, win), cls = MPI_SUCCESS, len = 0;
        char msg[MPI_MAX_ERROR_STRING] = "";
        if (rc != MPI_SUCCESS) {
            MPI_Error_class(rc, &cls);
            MPI_Error_string(rc, msg, &len);
        }
        /* epmpi's own message: MPICH never saw the group. */
        EPT_CHECK(cls == MPI_ERR_GROUP && strstr(msg, calls[i]) && strstr(msg, "group of endpoints"),
                  "%s with an endpoint group on a classic window: class %d, message '%s'", calls[i], cls, msg);
    }
    EPT_OK(MPI_Win_free(&win));
    EPT_OK(MPI_Group_free(&g));
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    part_ring(comm);
    part_all_to_one(comm);
    part_classic_window(comm);
}

int main(int argc, char **argv) { return ept_main_classic(argc, argv, 60, body, NULL); }
