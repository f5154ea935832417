/* What depends on the node, checked against the host names the processes
 * report (gethostname), so that the same program holds on one machine and
 * across the simulated hosts of `make check-multinode` (test/multinode/):
 *  - MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives exactly the ranks whose
 *    processes share this rank's host name, in key order;
 *  - MPI_Win_allocate_shared over ranks of several hosts fails with
 *    MPI_ERR_RMA_SHARED and a message naming the call, through the
 *    communicator's error handler; over one host it works, and
 *    MPI_Win_shared_query gives every rank's memory, which the other
 *    ranks of that host read and write directly;
 *  - when the launcher says how many hosts a run spans (EPMPI_TEST_HOSTS,
 *    set by test/multinode/mpiexec.sh), the ranks report that many names,
 *    so a harness that placed everything on one host is caught. */
#include "eptest.h"

typedef struct {
    int n, me;
    ept_host_t *names; /* every rank's host name */
} hosts_t;

static hosts_t hosts_of(MPI_Comm comm)
{
    hosts_t h;
    EPT_OK(MPI_Comm_size(comm, &h.n));
    EPT_OK(MPI_Comm_rank(comm, &h.me));
    h.names = ept_host_names(comm);
    return h;
}

static int same_host(const hosts_t *h, int a, int b) { return !strcmp(h->names[a], h->names[b]); }

static int distinct_hosts(const hosts_t *h)
{
    int d = 0;
    for (int r = 0; r < h->n; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = same_host(h, q, r);
        d += !seen;
    }
    return d;
}

/* SHARED with key = reversed rank: the new ranks are this host's, backwards. */
static void check_split_shared(MPI_Comm comm, const hosts_t *h)
{
    PHASE("node_hosts: MPI_Comm_split_type(SHARED) follows the host names");
    MPI_Comm node;
    EPT_OK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, h->n - h->me, MPI_INFO_NULL, &node));
    EPT_CHECK(node != MPI_COMM_NULL, "rank %d got MPI_COMM_NULL", h->me);
    int want_size = 0, want_rank = 0;
    for (int q = 0; q < h->n; q++)
        if (same_host(h, q, h->me)) {
            want_size++;
            want_rank += q > h->me;
        }
    int ns, nr;
    EPT_OK(MPI_Comm_size(node, &ns));
    EPT_OK(MPI_Comm_rank(node, &nr));
    EPT_CHECK(ns == want_size && nr == want_rank, "rank %d on %s: rank %d of %d in its SHARED part, expected %d of %d",
              h->me, h->names[h->me], nr, ns, want_rank, want_size);
    /* Who is in it: every member's old rank, each on this host. */
    int *members = malloc(sizeof *members * (size_t)ns);
    EPT_CHECK(members, "out of memory");
    EPT_OK(MPI_Allgather(&h->me, 1, MPI_INT, members, 1, MPI_INT, node));
    for (int i = 0; i < ns; i++)
        EPT_CHECK(same_host(h, members[i], h->me) && (i == 0 || members[i] < members[i - 1]),
                  "rank %d on %s: member %d of its SHARED part is rank %d on %s", h->me, h->names[h->me], i, members[i],
                  h->names[members[i]]);
    free(members);
    EPT_OK(MPI_Comm_free(&node));
}

static void check_shared_window_spanning(MPI_Comm comm, const hosts_t *h)
{
    PHASE("node_hosts: MPI_Win_allocate_shared over several hosts");
    int spans = distinct_hosts(h) > 1;
    EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    MPI_Win win = MPI_WIN_NULL;
    int *base = NULL;
    int rc = MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &base, &win);
    if (!spans) {
        EPT_CHECK(rc == MPI_SUCCESS, "rank %d: MPI_Win_allocate_shared on one host failed (%d)", h->me, rc);
        EPT_OK(MPI_Win_free(&win));
    } else {
        int cls = -1, len = 0;
        char msg[MPI_MAX_ERROR_STRING] = "";
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
        EPT_CHECK(cls == MPI_ERR_RMA_SHARED,
                  "rank %d: MPI_Win_allocate_shared over %d hosts gave class %d (%s), "
                  "expected MPI_ERR_RMA_SHARED",
                  h->me, distinct_hosts(h), cls, msg);
        EPT_CHECK(strstr(msg, "MPI_Win_allocate_shared") && strstr(msg, "node"),
                  "rank %d: the message does not name the call and the problem: %s", h->me, msg);
        EPT_CHECK(win == MPI_WIN_NULL, "rank %d: a failed MPI_Win_allocate_shared left a window", h->me);
    }
    EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
}

/* Each rank of a host's part gives (rank + 1) ints; everyone reads and
 * writes the others' directly through MPI_Win_shared_query. */
static void check_shared_window_per_host(MPI_Comm comm, const hosts_t *h)
{
    PHASE("node_hosts: MPI_Win_allocate_shared and MPI_Win_shared_query on one host");
    MPI_Comm node;
    EPT_OK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, h->me, MPI_INFO_NULL, &node));
    int ns, nr;
    EPT_OK(MPI_Comm_size(node, &ns));
    EPT_OK(MPI_Comm_rank(node, &nr));
    int *owner = malloc(sizeof *owner * (size_t)ns); /* host rank -> old rank */
    EPT_CHECK(owner, "out of memory");
    EPT_OK(MPI_Allgather(&h->me, 1, MPI_INT, owner, 1, MPI_INT, node));
    int *mine;
    MPI_Win win;
    EPT_OK(MPI_Win_allocate_shared((MPI_Aint)sizeof(int) * (nr + 1), sizeof(int), MPI_INFO_NULL, node, &mine, &win));
    EPT_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (int i = 0; i <= nr; i++)
        mine[i] = h->me * 1000 + i;
    EPT_OK(MPI_Win_sync(win));
    EPT_OK(MPI_Barrier(node));
    EPT_OK(MPI_Win_sync(win));
    for (int t = 0; t < ns; t++) {
        MPI_Aint size;
        int du;
        int *seg;
        EPT_OK(MPI_Win_shared_query(win, t, &size, &du, &seg));
        EPT_CHECK(size == (MPI_Aint)sizeof(int) * (t + 1) && du == (int)sizeof(int),
                  "rank %d: shared query of host rank %d: size %ld, disp unit %d", h->me, t, (long)size, du);
        for (int i = 0; i <= t; i++)
            EPT_CHECK(seg[i] == owner[t] * 1000 + i, "rank %d: host rank %d's element %d is %d, expected %d", h->me, t,
                      i, seg[i], owner[t] * 1000 + i);
    }
    /* A store into the next rank's memory, seen there. */
    int next = (nr + 1) % ns;
    MPI_Aint size;
    int du;
    int *seg;
    EPT_OK(MPI_Win_shared_query(win, next, &size, &du, &seg));
    EPT_OK(MPI_Barrier(node));
    seg[0] = -1 - h->me;
    EPT_OK(MPI_Win_sync(win));
    EPT_OK(MPI_Barrier(node));
    EPT_OK(MPI_Win_sync(win));
    int prev = (nr + ns - 1) % ns;
    EPT_CHECK(mine[0] == -1 - owner[prev], "rank %d: element 0 is %d after host rank %d's store, expected %d", h->me,
              mine[0], prev, -1 - owner[prev]);
    free(owner);
    EPT_OK(MPI_Win_unlock_all(win));
    EPT_OK(MPI_Win_free(&win));
    EPT_OK(MPI_Comm_free(&node));
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    hosts_t h = hosts_of(comm);
    const char *want = getenv("EPMPI_TEST_HOSTS");
    if (want && h.me == 0)
        EPT_CHECK(distinct_hosts(&h) == atoi(want), "the ranks report %d host names; the launcher placed them on %s",
                  distinct_hosts(&h), want);
    check_split_shared(comm, &h);
    check_shared_window_spanning(comm, &h);
    check_shared_window_per_host(comm, &h);
    free(h.names);
}

int main(int argc, char **argv) { return ept_main(argc, argv, 60, body, NULL); }
