/* Partitioned communication (MPI-4.0 chapter 4) between endpoints.
 *
 * - A ring: every rank sends to its right neighbour and receives from its
 *   left, several rounds of one pair of requests (MPI_Start each round),
 *   with as many partitions on both sides and with different ones (8 x 16
 *   sent, 16 x 8 received, and the reverse), small (inside lanes' reach)
 *   and 1 MiB (a rendezvous between processes); partitions marked ready
 *   last first, by MPI_Pready, MPI_Pready_range and MPI_Pready_list in
 *   turn; the receiver sees each partition through MPI_Parrived before it
 *   waits, checks its values as soon as it arrived, and then the status
 *   (source, tag, count).  MPI_Parrived of an inactive request is true
 *   (MPI-4.1; MPICH_DEVIATES: MPICH 4.0.2 raises an error, not checked on
 *   the classic shapes).
 * - Matching in the order of initialisation (4.2.2): three pairs between
 *   the same ranks with the same tag, started and made ready in another
 *   order, each receive still gets its own send's data.
 * - MPI_Pready from several threads at once (the use partitioned
 *   communication is for): four threads of a rank each mark a quarter of
 *   64 partitions of a 1 MiB message, each after writing its part.
 * - Apart from the user's messages: a receive with MPI_ANY_SOURCE and
 *   MPI_ANY_TAG, posted before the partitioned traffic, takes the plain
 *   message sent after it, not a partitioned one.
 * - Partitions of no elements (an empty message), MPI_PROC_NULL, and MPI_Startall of
 *   partitioned and persistent point-to-point requests together.
 * - Errors (endpoint shapes, where epmpi answers; MPI_ERRORS_RETURN on a
 *   duplicate): MPI_ANY_SOURCE or MPI_ANY_TAG for a partitioned receive, a
 *   negative count of partitions or none (MPI-4.0 allows none, MPICH does not), MPI_Pready on an inactive request,
 * twice in one round, out of range or on a receive, an empty range, MPI_Parrived on a send, MPI_Request_free of an
 * active request.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i.  Classic shapes
 * (P:0): the same checks on MPICH itself.  Built three times:
 * p2p_partitioned with the default settings, p2p_partitioned_mpich with
 * EPMPI_P2P_PATH=mpich, where world mode with one endpoint per process
 * leaves the operation to MPICH's own partitioned calls (src/p2p/direct.h),
 * and p2p_partitioned_noshm with EPMPI_SHM=0 (every message between
 * processes in a UCX tag, which carries the channels). */
#include "eptest.h"

#include <pthread.h>
#if !EP_HAVE_MPI_Psend_init
/* MPI 4.0's partitioned communication: not in this MPI. */
int main(void)
{
    puts("skipped: this MPI has no MPI 4.0's partitioned communication");
    return 77;
}
#else
#define ROUNDS 3

static int val(int src, int round, int pair, long i)
{
    return src * 1000003 + round * 7919 + pair * 104729 + (int)(i % 100003);
}

static void fill_msg(int *b, long n, int src, int round, int pair)
{
    for (long i = 0; i < n; i++)
        b[i] = val(src, round, pair, i);
}

static void check_part(const int *b, long lo, long hi, int src, int round, int pair, const char *what)
{
    for (long i = lo; i < hi; i++)
        EPT_CHECK(b[i] == val(src, round, pair, i), "%s: element %ld is %d, expected %d (from rank %d, round %d)", what,
                  i, b[i], val(src, round, pair, i), src, round);
}

static void check_status(const MPI_Status *st, int src, int tag, long n, const char *what)
{
    MPI_Count cnt = -1;
#if EP_HAVE_MPI_Get_count_c
    MPI_Get_count_c(st, MPI_INT, &cnt);
#else /* Open MPI 5.0: partitioned calls, no large-count ones */
    int icnt = -1;
    MPI_Get_count(st, MPI_INT, &icnt);
    cnt = icnt;
#endif
    EPT_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && cnt == n,
              "%s: status source %d tag %d count %lld, expected %d %d %ld", what, st->MPI_SOURCE, st->MPI_TAG,
              (long long)cnt, src, tag, n);
}

/* Marks every partition of s ready, last first, in turn by the three calls. */
static void ready_all(MPI_Request s, int parts)
{
    int k = 0;
    for (int p = parts - 1; p >= 0; k++) {
        if (k % 3 == 0) {
            EPT_OK(MPI_Pready(p, s));
            p--;
        } else if (k % 3 == 1 && p >= 1) {
            EPT_OK(MPI_Pready_range(p - 1, p, s));
            p -= 2;
        } else {
            int one[1] = {p};
            EPT_OK(MPI_Pready_list(1, one, s));
            p--;
        }
    }
}

static void ring(MPI_Comm comm, int sparts, int rparts, long total, int tag)
{
    int me, n, left, right;
    ept_ring_place(comm, &me, &n, &left, &right);
    int *s = malloc(sizeof *s * (size_t)total), *r = malloc(sizeof *r * (size_t)total);
    char *seen = malloc((size_t)rparts);
    EPT_CHECK(s && r && seen, "out of memory");
    MPI_Request sreq, rreq;
    EPT_OK(MPI_Psend_init(s, sparts, total / sparts, MPI_INT, right, tag, comm, MPI_INFO_NULL, &sreq));
    EPT_OK(MPI_Precv_init(r, rparts, total / rparts, MPI_INT, left, tag, comm, MPI_INFO_NULL, &rreq));
    long per = total / rparts;
    for (int round = 0; round < ROUNDS; round++) {
        char what[96];
        snprintf(what, sizeof what, "ring %d x %ld -> %d x %ld, round %d", sparts, total / sparts, rparts, per, round);
        memset(r, 0xff, sizeof *r * (size_t)total);
        memset(seen, 0, (size_t)rparts);
        EPT_OK(MPI_Start(&rreq));
        EPT_OK(MPI_Start(&sreq));
        fill_msg(s, total, me, round, 0);
        ready_all(sreq, sparts);
        for (int missing = rparts; missing;)
            for (int p = 0; p < rparts; p++) {
                int flag = 0;
                if (seen[p])
                    continue;
                EPT_OK(MPI_Parrived(rreq, p, &flag));
                if (flag) {
                    check_part(r, p * per, (p + 1) * per, left, round, 0, what);
                    seen[p] = 1;
                    missing--;
                }
            }
        MPI_Status st;
        EPT_OK(MPI_Wait(&rreq, &st));
        check_status(&st, left, tag, total, what);
        EPT_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        check_part(r, 0, total, left, round, 0, what);
    }
    /* MPI-4.1 4.2.3 (an inactive request gives true); MPICH 4.0.2 raises
     * "inactive partitioned receive request" instead. */
    int flag = 0;
    if (!ept_classic) {
        EPT_OK(MPI_Parrived(rreq, 0, &flag));
        EPT_CHECK(flag, "MPI_Parrived of an inactive request gave false");
    }
    EPT_OK(MPI_Request_free(&sreq));
    EPT_OK(MPI_Request_free(&rreq));
    EPT_CHECK(sreq == MPI_REQUEST_NULL && rreq == MPI_REQUEST_NULL, "MPI_Request_free left a handle");
    free(s);
    free(r);
    free(seen);
}

#define PAIRS 3
#define PAIR_N 64

static void init_order(MPI_Comm comm)
{
    int me, n, left, right;
    ept_ring_place(comm, &me, &n, &left, &right);
    int sb[PAIRS][PAIR_N], rb[PAIRS][PAIR_N];
    MPI_Request sr[PAIRS], rr[PAIRS];
    for (int k = 0; k < PAIRS; k++) {
        EPT_OK(MPI_Psend_init(sb[k], 4, PAIR_N / 4, MPI_INT, right, 5, comm, MPI_INFO_NULL, &sr[k]));
        EPT_OK(MPI_Precv_init(rb[k], 2, PAIR_N / 2, MPI_INT, left, 5, comm, MPI_INFO_NULL, &rr[k]));
    }
    static const int order[PAIRS] = {2, 0, 1};
    for (int round = 0; round < 2; round++) {
        memset(rb, 0xff, sizeof rb);
        for (int j = 0; j < PAIRS; j++)
            EPT_OK(MPI_Start(&rr[order[(j + round) % PAIRS]]));
        for (int j = PAIRS - 1; j >= 0; j--) {
            int k = order[(j + round) % PAIRS];
            EPT_OK(MPI_Start(&sr[k]));
            fill_msg(sb[k], PAIR_N, me, round, k);
            EPT_OK(MPI_Pready_range(0, 3, sr[k]));
        }
        MPI_Status st[PAIRS];
        EPT_OK(MPI_Waitall(PAIRS, rr, st));
        EPT_OK(MPI_Waitall(PAIRS, sr, statuses_ignore()));
        for (int k = 0; k < PAIRS; k++) {
            check_part(rb[k], 0, PAIR_N, left, round, k, "pairs of one tag, matched in init order");
            check_status(&st[k], left, 5, PAIR_N, "pairs of one tag");
        }
    }
    for (int k = 0; k < PAIRS; k++) {
        EPT_OK(MPI_Request_free(&sr[k]));
        EPT_OK(MPI_Request_free(&rr[k]));
    }
}

#define TH 4
#define TH_PARTS 64
#define TH_TOTAL (1L << 18) /* ints: 1 MiB */

typedef struct {
    MPI_Request req;
    int *buf, me, round, t;
} marker_t;

static void *marker(void *arg)
{
    marker_t *m = arg;
    long per = TH_TOTAL / TH_PARTS;
    for (int p = m->t; p < TH_PARTS; p += TH) {
        for (long i = p * per; i < (p + 1) * per; i++)
            m->buf[i] = val(m->me, m->round, 9, i);
        EPT_OK(MPI_Pready(p, m->req));
    }
    return NULL;
}

static void threads_ready(MPI_Comm comm)
{
    int me, n, left, right;
    ept_ring_place(comm, &me, &n, &left, &right);
    int *s = malloc(sizeof *s * TH_TOTAL), *r = malloc(sizeof *r * TH_TOTAL);
    EPT_CHECK(s && r, "out of memory");
    MPI_Request sreq, rreq;
    EPT_OK(MPI_Psend_init(s, TH_PARTS, TH_TOTAL / TH_PARTS, MPI_INT, right, 9, comm, MPI_INFO_NULL, &sreq));
    EPT_OK(MPI_Precv_init(r, TH_PARTS, TH_TOTAL / TH_PARTS, MPI_INT, left, 9, comm, MPI_INFO_NULL, &rreq));
    for (int round = 0; round < 2; round++) {
        memset(r, 0, sizeof *r * TH_TOTAL);
        EPT_OK(MPI_Start(&rreq));
        EPT_OK(MPI_Start(&sreq));
        pthread_t th[TH];
        marker_t m[TH];
        for (int t = 0; t < TH; t++) {
            m[t] = (marker_t){sreq, s, me, round, t};
            EPT_CHECK(pthread_create(&th[t], NULL, marker, &m[t]) == 0, "pthread_create");
        }
        for (int t = 0; t < TH; t++)
            pthread_join(th[t], NULL);
        MPI_Status st;
        EPT_OK(MPI_Wait(&rreq, &st));
        EPT_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        check_status(&st, left, 9, TH_TOTAL, "partitions marked by four threads");
        check_part(r, 0, TH_TOTAL, left, round, 9, "partitions marked by four threads");
    }
    EPT_OK(MPI_Request_free(&sreq));
    EPT_OK(MPI_Request_free(&rreq));
    free(s);
    free(r);
}

/* A wildcard receive posted first takes the plain message that follows the
 * partitioned traffic, never a partitioned message. */
static void apart_from_wildcards(MPI_Comm comm)
{
    int me, n, left, right;
    ept_ring_place(comm, &me, &n, &left, &right);
    int plain = -1;
    MPI_Request any;
    EPT_OK(MPI_Irecv(&plain, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &any));
    ring(comm, 4, 4, 64, 3);
    int v = 4242 + me;
    EPT_OK(MPI_Send(&v, 1, MPI_INT, right, 77, comm));
    MPI_Status st;
    EPT_OK(MPI_Wait(&any, &st));
    EPT_CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 77 && plain == 4242 + left,
              "the wildcard receive took source %d tag %d value %d, expected the plain message %d %d %d", st.MPI_SOURCE,
              st.MPI_TAG, plain, left, 77, 4242 + left);
}

static void edges(MPI_Comm comm)
{
    int me, n, left, right;
    ept_ring_place(comm, &me, &n, &left, &right);
    /* Partitions of no elements: an empty message. */
    MPI_Request q[4];
    MPI_Status st[4];
    int x = 0;
    EPT_OK(MPI_Psend_init(&x, 3, 0, MPI_INT, right, 1, comm, MPI_INFO_NULL, &q[0]));
    EPT_OK(MPI_Precv_init(&x, 2, 0, MPI_INT, left, 1, comm, MPI_INFO_NULL, &q[1]));
    /* MPI_PROC_NULL on both sides (MPICH_DEVIATES: MPICH 4.0.2 crashes in
     * MPI_Psend_init to MPI_PROC_NULL, so not on the classic shapes). */
    int nq = ept_classic ? 2 : 4;
    if (!ept_classic) {
        EPT_OK(MPI_Psend_init(&x, 1, 1, MPI_INT, MPI_PROC_NULL, 1, comm, MPI_INFO_NULL, &q[2]));
        EPT_OK(MPI_Precv_init(&x, 1, 1, MPI_INT, MPI_PROC_NULL, 1, comm, MPI_INFO_NULL, &q[3]));
    }
    for (int round = 0; round < 2; round++) {
        EPT_OK(MPI_Startall(nq, q));
        EPT_OK(MPI_Pready_range(0, 2, q[0]));
        if (!ept_classic)
            EPT_OK(MPI_Pready(0, q[2]));
        EPT_OK(MPI_Waitall(nq, q, st));
        check_status(&st[1], left, 1, 0, "a partitioned receive of empty partitions");
        if (!ept_classic)
            EPT_CHECK(st[3].MPI_SOURCE == MPI_PROC_NULL && st[3].MPI_TAG == MPI_ANY_TAG,
                      "a partitioned receive from MPI_PROC_NULL: source %d tag %d", st[3].MPI_SOURCE, st[3].MPI_TAG);
    }
    for (int i = 0; i < nq; i++)
        EPT_OK(MPI_Request_free(&q[i]));

    /* MPI_Startall of partitioned and persistent point-to-point requests. */
    int ps[16], pr[16], a = 11 + me, b = -1;
    EPT_OK(MPI_Psend_init(ps, 2, 8, MPI_INT, right, 2, comm, MPI_INFO_NULL, &q[0]));
    EPT_OK(MPI_Recv_init(&b, 1, MPI_INT, left, 2, comm, &q[1]));
    EPT_OK(MPI_Precv_init(pr, 4, 4, MPI_INT, left, 2, comm, MPI_INFO_NULL, &q[2]));
    EPT_OK(MPI_Send_init(&a, 1, MPI_INT, right, 2, comm, &q[3]));
    EPT_OK(MPI_Startall(4, q));
    fill_msg(ps, 16, me, 0, 2);
    EPT_OK(MPI_Pready_range(0, 1, q[0]));
    EPT_OK(MPI_Waitall(4, q, st));
    check_part(pr, 0, 16, left, 0, 2, "MPI_Startall with persistent point-to-point");
    EPT_CHECK(b == 11 + left, "the persistent receive beside partitioned ones got %d, expected %d", b, 11 + left);
    check_status(&st[1], left, 2, 1, "the persistent receive beside partitioned ones");
    check_status(&st[2], left, 2, 16, "the partitioned receive beside persistent ones");
    for (int i = 0; i < 4; i++)
        EPT_OK(MPI_Request_free(&q[i]));
}

static void expect_class(int rc, int cls, const char *what)
{
    int got = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    EPT_CHECK(got == cls, "%s: error class %d, expected %d", what, got, cls);
}

static void errors(MPI_Comm comm)
{
    int me, n, left, right;
    ept_ring_place(comm, &me, &n, &left, &right);
    MPI_Comm d;
    EPT_OK(MPI_Comm_dup(comm, &d));
    EPT_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    int buf[8], rbuf[8], flag;
    MPI_Request s, r, bad = MPI_REQUEST_NULL;
    expect_class(MPI_Precv_init(rbuf, 2, 4, MPI_INT, MPI_ANY_SOURCE, 0, d, MPI_INFO_NULL, &bad), MPI_ERR_RANK,
                 "MPI_Precv_init from MPI_ANY_SOURCE");
    expect_class(MPI_Precv_init(rbuf, 2, 4, MPI_INT, left, MPI_ANY_TAG, d, MPI_INFO_NULL, &bad), MPI_ERR_TAG,
                 "MPI_Precv_init with MPI_ANY_TAG");
    expect_class(MPI_Psend_init(buf, -1, 4, MPI_INT, right, 0, d, MPI_INFO_NULL, &bad), MPI_ERR_ARG,
                 "MPI_Psend_init of -1 partitions");
    expect_class(MPI_Precv_init(buf, 0, 4, MPI_INT, left, 0, d, MPI_INFO_NULL, &bad), MPI_ERR_ARG,
                 "MPI_Precv_init of no partitions (refused as by MPICH)");
    EPT_OK(MPI_Psend_init(buf, 2, 4, MPI_INT, right, 0, d, MPI_INFO_NULL, &s));
    EPT_OK(MPI_Precv_init(rbuf, 2, 4, MPI_INT, left, 0, d, MPI_INFO_NULL, &r));
    expect_class(MPI_Pready(0, s), MPI_ERR_REQUEST, "MPI_Pready before MPI_Start");
    EPT_OK(MPI_Start(&s));
    EPT_OK(MPI_Start(&r));
    expect_class(MPI_Pready(2, s), MPI_ERR_ARG, "MPI_Pready of partition 2 of 2");
    expect_class(MPI_Pready_range(1, 0, s), MPI_ERR_ARG, "MPI_Pready_range(1, 0)");
    expect_class(MPI_Pready(0, r), MPI_ERR_REQUEST, "MPI_Pready on a receive");
    expect_class(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST, "MPI_Parrived on a send");
    expect_class(MPI_Parrived(r, -1, &flag), MPI_ERR_ARG, "MPI_Parrived of partition -1");
    expect_class(MPI_Request_free(&r), MPI_ERR_REQUEST, "MPI_Request_free of an active partitioned receive");
    EPT_OK(MPI_Pready(0, s));
    expect_class(MPI_Pready(0, s), MPI_ERR_ARG, "MPI_Pready of a partition twice");
    for (int i = 0; i < 8; i++)
        buf[i] = me * 8 + i;
    EPT_OK(MPI_Pready(1, s));
    EPT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    EPT_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        EPT_CHECK(rbuf[i] == left * 8 + i, "after the errors: element %d is %d, expected %d", i, rbuf[i], left * 8 + i);
    EPT_OK(MPI_Request_free(&s));
    EPT_OK(MPI_Request_free(&r));
    EPT_OK(MPI_Comm_free(&d));
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
#ifdef EPT_P2P_PATH
    /* One endpoint per process in world mode: MPICH's partitioned calls. */
    if (ept_world_endpoints() == 1)
        EPT_CHECK(ept_hint_is(comm, "epmpi_p2p_path", "mpich"), "EPMPI_P2P_PATH=mpich left the engine's path");
#endif
    PHASE("a ring, equal partitions");
    ring(comm, 8, 8, 128, 1);
    PHASE("a ring, 8 partitions sent, 16 received");
    ring(comm, 8, 16, 128, 2);
    PHASE("a ring of 1 MiB, 64 partitions sent, 16 received");
    ring(comm, 64, 16, 1L << 18, 2);
    PHASE("pairs of one tag, matched in init order");
    init_order(comm);
    PHASE("MPI_Pready by four threads");
    threads_ready(comm);
    PHASE("a wildcard receive beside partitioned traffic");
    apart_from_wildcards(comm);
    PHASE("no partitions, MPI_PROC_NULL, MPI_Startall");
    edges(comm);
    if (!ept_classic) {
        PHASE("errors");
        errors(comm);
    }
}

int main(int argc, char **argv)
{
#ifdef EPT_P2P_PATH
    setenv("EPMPI_P2P_PATH", EPT_P2P_PATH, 1);
#endif
#ifdef EPT_SHM
    setenv("EPMPI_SHM", EPT_SHM, 1);
#endif
    return ept_main_classic(argc, argv, 120, body, NULL);
}

#endif
