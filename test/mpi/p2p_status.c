/* What the completion and probe calls leave in a status, as MPI-4.0 says:
 *
 * - A call that completes or probes one operation never writes the
 *   MPI_ERROR field (3.2.5: only the calls of 3.7.5 that complete several
 *   requests set it, and only when they return MPI_ERR_IN_STATUS): MPI_Recv,
 *   MPI_Wait, MPI_Test, MPI_Waitany, MPI_Testany, MPI_Request_get_status,
 *   MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Sendrecv,
 *   MPI_Sendrecv_replace, and the waits of sends, of MPI_Isendrecv and
 *   MPI_Isendrecv_replace, of persistent requests, of a non-blocking
 *   collective and of RMA requests.
 * - A receive's status gives the message's source, tag and count, and
 *   MPI_Test_cancelled false; MPI_Isendrecv and MPI_Isendrecv_replace give
 *   their receive's (3.10).
 * - A null or inactive request (MPI_REQUEST_NULL, a persistent request not
 *   started) completes at once with an empty status (3.7.3): source
 *   MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0, not cancelled, MPI_ERROR
 *   kept; MPI_Waitany / MPI_Testany give index MPI_UNDEFINED, MPI_Waitsome /
 *   MPI_Testsome outcount MPI_UNDEFINED, and the inactive request stays;
 *   starting a persistent request twice is MPI_ERR_REQUEST (3.9).
 * - A receive or probe from MPI_PROC_NULL gives source MPI_PROC_NULL, tag
 *   MPI_ANY_TAG and count 0 (3.11); MPI_Mprobe / MPI_Improbe give
 *   MPI_MESSAGE_NO_PROC, whose MPI_Mrecv / MPI_Imrecv do the same.
 * - A message of no elements of MPI_DATATYPE_NULL (MPICH accepts it).
 * - MPI_Isendrecv: freed before it is over, it still delivers; of a type
 *   freed meanwhile, it still uses it; MPI_Cancel leaves it to complete
 *   (epmpi's choice: MPI allows a cancel or a completion, not both, and
 *   its send goes on); a short receive gives MPI_ERR_TRUNCATE.
 *
 * Every rank sends to its right neighbour and receives from its left, so
 * that the shapes cover messages between threads of a process, between
 * processes, and direct communicators (one rank per process); small and
 * large (rendezvous) messages.  The N:0 shapes run the same checks on
 * classic MPI_COMM_WORLD, where MPICH answers, to cross-check the
 * expectations; what MPICH 4.0.2 itself gets wrong is left out there only
 * (MPICH_DEVIATES below).
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#define KEEP 987654 /* what MPI_ERROR holds before each call: it must stay */
#define LARGE 6000  /* ints: 24 KB, above the eager limits */
#define TAG0 300

typedef enum {
    V_RECV,
    V_RECV_ANY,
    V_WAIT,
    V_TEST,
    V_WAITANY,
    V_TESTANY,
    V_GET_STATUS,
    V_PROBE,
    V_IPROBE,
    V_MPROBE,
    V_IMPROBE,
    V_RECV_INIT,
    V_SENDRECV,
    V_SENDRECV_REPLACE,
    V_ISENDRECV,
    V_ISENDRECV_REPLACE,
    V_COUNT
} variant_t;

static const char *const variant_name[V_COUNT] = {
    "MPI_Recv",
    "MPI_Recv (MPI_ANY_SOURCE, MPI_ANY_TAG)",
    "MPI_Irecv + MPI_Wait",
    "MPI_Irecv + MPI_Test",
    "MPI_Irecv + MPI_Waitany",
    "MPI_Irecv + MPI_Testany",
    "MPI_Irecv + MPI_Request_get_status",
    "MPI_Probe + MPI_Recv",
    "MPI_Iprobe + MPI_Recv",
    "MPI_Mprobe + MPI_Mrecv",
    "MPI_Improbe + MPI_Imrecv + MPI_Wait",
    "MPI_Recv_init + MPI_Start + MPI_Wait",
    "MPI_Sendrecv",
    "MPI_Sendrecv_replace",
    "MPI_Isendrecv + MPI_Wait",
    "MPI_Isendrecv_replace + MPI_Test",
};

typedef struct {
    MPI_Comm comm;
    int me, n, left, right;
    int *sbuf, *rbuf;
} ctx_t;

/* What MPICH 4.0.2 gets wrong, seen in this test's N:0 shapes; checked on
 * endpoints, skipped on classic MPI_COMM_WORLD:
 *   MPICH_ERROR      MPI_Probe, MPI_Iprobe and MPI_Sendrecv_replace set
 *                    MPI_ERROR;
 *   MPICH_STATUS     an MPI_Irecv from MPI_PROC_NULL completes with source
 *                    and tag 0, MPI_Isendrecv(_replace) with a wrong tag
 *                    and count, and no MPI_ERR_TRUNCATE for a short receive;
 *                    MPI_Testany of no active request leaves the status;
 *   MPICH_CANCELLED  the probes leave the cancelled flag as it was;
 *   MPICH_FAILS      MPI_Isendrecv(_replace) with MPI_PROC_NULL crashes,
 *                    MPI_Request_free and MPI_Cancel refuse an MPI_Isendrecv
 *                    request (an internal error for the cancel), and
 *                    MPI_Isendrecv_replace of a derived datatype drops a
 *                    reference to it that it does not hold (an assertion
 *                    fails at MPI_Type_free or in the wait);
 * and MPICH 4.2 and later (seen with 4.2.1) set MPI_ERROR in every call that
 * completes one operation (MPI_Wait, MPI_Test, MPI_Waitany, MPI_Testany,
 * MPI_Request_get_status). */
enum { MPICH_ERROR = 1, MPICH_STATUS = 2, MPICH_FAILS = 4, MPICH_CANCELLED = 8 };
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40200000
#define MPICH_WRITES_ERROR 1
#else
#define MPICH_WRITES_ERROR 0
#endif
#define MPICH_DEVIATES(what) (ept_classic && ((what)&deviations))
static __thread int deviations; /* of the call being checked */

static int val(int s, int tag, int i) { return (s * 7919 + tag) * 131 + i; }

/* Every field set to what no call should leave: a call must write the
 * count and the cancelled flag, not keep them. */
static void fresh(MPI_Status *st)
{
    st->MPI_SOURCE = -5;
    st->MPI_TAG = -5;
    st->MPI_ERROR = KEEP;
    MPI_Status_set_elements(st, MPI_BYTE, 77);
    MPI_Status_set_cancelled(st, 1);
}

static void expect_error_kept(const ctx_t *c, const char *what, const MPI_Status *st)
{
    if (MPICH_DEVIATES(MPICH_ERROR) || (ept_classic && MPICH_WRITES_ERROR))
        return;
    EPT_CHECK(st->MPI_ERROR == KEEP,
              "%s: rank %d: MPI_ERROR is %d afterwards; a call that completes one operation must leave it (%d)", what,
              c->me, st->MPI_ERROR, KEEP);
}

/* A status of a completed receive (or a probe) of count ints from src
 * with tag. */
static void expect_status(const ctx_t *c, const char *what, const MPI_Status *st, int src, int tag, int count)
{
    int cnt = -1, cancelled = -1;
    expect_error_kept(c, what, st);
    if (MPICH_DEVIATES(MPICH_STATUS))
        return;
    EPT_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag, "%s: rank %d: status source %d tag %d, expected %d and %d",
              what, c->me, st->MPI_SOURCE, st->MPI_TAG, src, tag);
    EPT_OK(MPI_Get_count(st, MPI_INT, &cnt));
    EPT_CHECK(cnt == count, "%s: rank %d: status count %d, expected %d", what, c->me, cnt, count);
    EPT_OK(MPI_Test_cancelled(st, &cancelled));
    EPT_CHECK(!cancelled || MPICH_DEVIATES(MPICH_CANCELLED), "%s: rank %d: MPI_Test_cancelled says cancelled", what,
              c->me);
}

static void expect_proc_null(const ctx_t *c, const char *what, const MPI_Status *st)
{
    expect_status(c, what, st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
}

static void expect_data(const ctx_t *c, const char *what, const int *b, int src, int tag, int count)
{
    for (int i = 0; i < count; i++)
        EPT_CHECK(b[i] == val(src, tag, i), "%s: rank %d: int %d from %d is %d, expected %d", what, c->me, i, src, b[i],
                  val(src, tag, i));
}

/* Completes *req with MPI_Test, one status per call. */
static void test_until_done(MPI_Request *req, MPI_Status *st)
{
    int flag = 0;
    while (!flag)
        EPT_OK(MPI_Test(req, &flag, st));
}

/* Receives from the left neighbour the message of tag (count ints) with
 * variant v, into c->rbuf; *st gets the status to check. */
static void receive(ctx_t *c, variant_t v, int tag, int count, MPI_Status *st)
{
    MPI_Request req = MPI_REQUEST_NULL, pair[2];
    MPI_Status probed;
    MPI_Message msg;
    int flag = 0, idx = -1;
    switch (v) {
    case V_RECV:
        EPT_OK(MPI_Recv(c->rbuf, count, MPI_INT, c->left, tag, c->comm, st));
        break;
    case V_RECV_ANY:
        EPT_OK(MPI_Recv(c->rbuf, count, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c->comm, st));
        break;
    case V_WAIT:
        EPT_OK(MPI_Irecv(c->rbuf, count, MPI_INT, c->left, tag, c->comm, &req));
        EPT_OK(MPI_Wait(&req, st));
        break;
    case V_TEST:
        EPT_OK(MPI_Irecv(c->rbuf, count, MPI_INT, c->left, tag, c->comm, &req));
        test_until_done(&req, st);
        break;
    case V_WAITANY:
        pair[0] = MPI_REQUEST_NULL;
        EPT_OK(MPI_Irecv(c->rbuf, count, MPI_INT, c->left, tag, c->comm, &pair[1]));
        EPT_OK(MPI_Waitany(2, pair, &idx, st));
        EPT_CHECK(idx == 1, "MPI_Waitany: index %d, expected 1", idx);
        break;
    case V_TESTANY:
        pair[0] = MPI_REQUEST_NULL;
        EPT_OK(MPI_Irecv(c->rbuf, count, MPI_INT, c->left, tag, c->comm, &pair[1]));
        while (!flag)
            EPT_OK(MPI_Testany(2, pair, &idx, &flag, st));
        EPT_CHECK(idx == 1, "MPI_Testany: index %d, expected 1", idx);
        break;
    case V_GET_STATUS:
        EPT_OK(MPI_Irecv(c->rbuf, count, MPI_INT, c->left, tag, c->comm, &req));
        while (!flag)
            EPT_OK(MPI_Request_get_status(req, &flag, st));
        EPT_CHECK(req != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
        EPT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        break;
    case V_PROBE:
        EPT_OK(MPI_Probe(c->left, tag, c->comm, st));
        deviations = MPICH_ERROR | MPICH_CANCELLED;
        expect_status(c, "MPI_Probe", st, c->left, tag, count);
        deviations = 0;
        fresh(st);
        EPT_OK(MPI_Recv(c->rbuf, count, MPI_INT, c->left, tag, c->comm, st));
        break;
    case V_IPROBE:
        while (!flag)
            EPT_OK(MPI_Iprobe(MPI_ANY_SOURCE, tag, c->comm, &flag, st));
        deviations = MPICH_ERROR | MPICH_CANCELLED;
        expect_status(c, "MPI_Iprobe", st, c->left, tag, count);
        deviations = 0;
        fresh(st);
        EPT_OK(MPI_Recv(c->rbuf, count, MPI_INT, c->left, MPI_ANY_TAG, c->comm, st));
        break;
    case V_MPROBE:
        fresh(&probed);
        EPT_OK(MPI_Mprobe(c->left, MPI_ANY_TAG, c->comm, &msg, &probed));
        deviations = MPICH_CANCELLED;
        expect_status(c, "MPI_Mprobe", &probed, c->left, tag, count);
        deviations = 0;
        EPT_OK(MPI_Mrecv(c->rbuf, count, MPI_INT, &msg, st));
        EPT_CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv left the message handle");
        break;
    case V_IMPROBE:
        fresh(&probed);
        while (!flag)
            EPT_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->comm, &flag, &msg, &probed));
        deviations = MPICH_CANCELLED;
        expect_status(c, "MPI_Improbe", &probed, c->left, tag, count);
        deviations = 0;
        EPT_OK(MPI_Imrecv(c->rbuf, count, MPI_INT, &msg, &req));
        EPT_OK(MPI_Wait(&req, st));
        break;
    case V_RECV_INIT:
        EPT_OK(MPI_Recv_init(c->rbuf, count, MPI_INT, c->left, tag, c->comm, &req));
        EPT_OK(MPI_Start(&req));
        EPT_OK(MPI_Wait(&req, st));
        EPT_CHECK(req != MPI_REQUEST_NULL, "MPI_Wait freed a persistent request");
        EPT_OK(MPI_Request_free(&req));
        break;
#if !EP_HAVE_MPI_Isendrecv /* MPI 4.0's, not in this MPI: the blocking forms in their place */
    case V_ISENDRECV:
#endif
    case V_SENDRECV:
        EPT_OK(
            MPI_Sendrecv(c->sbuf, count, MPI_INT, c->right, tag, c->rbuf, count, MPI_INT, c->left, tag, c->comm, st));
        break;
#if !EP_HAVE_MPI_Isendrecv
    case V_ISENDRECV_REPLACE:
#endif
    case V_SENDRECV_REPLACE:
        memcpy(c->rbuf, c->sbuf, sizeof(int) * (size_t)count);
        EPT_OK(MPI_Sendrecv_replace(c->rbuf, count, MPI_INT, c->right, tag, c->left, tag, c->comm, st));
        break;
#if EP_HAVE_MPI_Isendrecv
    case V_ISENDRECV:
        EPT_OK(MPI_Isendrecv(c->sbuf, count, MPI_INT, c->right, tag, c->rbuf, count, MPI_INT, c->left, tag, c->comm,
                             &req));
        EPT_OK(MPI_Wait(&req, st));
        break;
    case V_ISENDRECV_REPLACE:
        memcpy(c->rbuf, c->sbuf, sizeof(int) * (size_t)count);
        EPT_OK(MPI_Isendrecv_replace(c->rbuf, count, MPI_INT, c->right, tag, MPI_ANY_SOURCE, tag, c->comm, &req));
        test_until_done(&req, st);
        break;
#endif
    case V_COUNT:
        break;
    }
    EPT_CHECK(req == MPI_REQUEST_NULL, "%s: the request handle was not set to MPI_REQUEST_NULL", variant_name[v]);
}

static int sends_itself(variant_t v) { return v >= V_SENDRECV; }

/* One message from every rank to its right neighbour, received with v. */
static void message_round(ctx_t *c, variant_t v, int large)
{
    int tag = TAG0 + 2 * (int)v + large, count = large ? LARGE : 1 + (int)v;
    char what[96];
    snprintf(what, sizeof what, "%s, %s message", variant_name[v], large ? "large" : "small");
    PHASE(variant_name[v]);
    for (int i = 0; i < count; i++)
        c->sbuf[i] = val(c->me, tag, i);
    memset(c->rbuf, 0xff, sizeof(int) * (size_t)count);
    MPI_Request sreq = MPI_REQUEST_NULL;
    /* Synchronous sends for half the variants: their request stays open
     * until the receive matches. */
    if (!sends_itself(v)) {
        if (v & 1)
            EPT_OK(MPI_Issend(c->sbuf, count, MPI_INT, c->right, tag, c->comm, &sreq));
        else
            EPT_OK(MPI_Isend(c->sbuf, count, MPI_INT, c->right, tag, c->comm, &sreq));
    }
    MPI_Status st;
    fresh(&st);
    receive(c, v, tag, count, &st);
    deviations = v == V_SENDRECV_REPLACE ? MPICH_ERROR : v >= V_ISENDRECV ? MPICH_STATUS : 0;
    expect_status(c, what, &st, c->left, tag, count);
    deviations = 0;
    expect_data(c, what, c->rbuf, c->left, tag, count);
    if (!sends_itself(v)) {
        fresh(&st);
        if (v & 2)
            test_until_done(&sreq, &st);
        else
            EPT_OK(MPI_Wait(&sreq, &st));
        expect_error_kept(c, "the send's MPI_Wait / MPI_Test", &st);
    }
}

/* Every receive and probe call with MPI_PROC_NULL as the source. */
static void proc_null(ctx_t *c)
{
    MPI_Status st;
    MPI_Request req;
    MPI_Message msg;
    int flag = 0, canary = 12345;
    PHASE("MPI_PROC_NULL");
    fresh(&st);
    EPT_OK(MPI_Recv(&canary, 1, MPI_INT, MPI_PROC_NULL, 5, c->comm, &st));
    expect_proc_null(c, "MPI_Recv from MPI_PROC_NULL", &st);
    EPT_CHECK(canary == 12345, "MPI_Recv from MPI_PROC_NULL wrote the buffer");

    fresh(&st);
    EPT_OK(MPI_Irecv(&canary, 1, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, c->comm, &req));
    EPT_OK(MPI_Wait(&req, &st));
    deviations = MPICH_STATUS;
    expect_proc_null(c, "MPI_Irecv from MPI_PROC_NULL + MPI_Wait", &st);

    fresh(&st);
    EPT_OK(MPI_Irecv(&canary, 1, MPI_INT, MPI_PROC_NULL, 5, c->comm, &req));
    test_until_done(&req, &st);
    expect_proc_null(c, "MPI_Irecv from MPI_PROC_NULL + MPI_Test", &st);
    deviations = 0;

    fresh(&st);
    EPT_OK(MPI_Probe(MPI_PROC_NULL, 5, c->comm, &st));
    expect_proc_null(c, "MPI_Probe of MPI_PROC_NULL", &st);

    fresh(&st);
    EPT_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, c->comm, &flag, &st));
    EPT_CHECK(flag, "MPI_Iprobe of MPI_PROC_NULL: flag false");
    expect_proc_null(c, "MPI_Iprobe of MPI_PROC_NULL", &st);

    fresh(&st);
    EPT_OK(MPI_Mprobe(MPI_PROC_NULL, 5, c->comm, &msg, &st));
    EPT_CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Mprobe of MPI_PROC_NULL: message " EPT_HFMT, EPT_HARG(msg));
    expect_proc_null(c, "MPI_Mprobe of MPI_PROC_NULL", &st);
    fresh(&st);
    EPT_OK(MPI_Mrecv(&canary, 1, MPI_INT, &msg, &st));
    EPT_CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv of MPI_MESSAGE_NO_PROC: message " EPT_HFMT, EPT_HARG(msg));
    expect_proc_null(c, "MPI_Mrecv of MPI_MESSAGE_NO_PROC", &st);

    fresh(&st);
    flag = 0;
    EPT_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, c->comm, &flag, &msg, &st));
    EPT_CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "MPI_Improbe of MPI_PROC_NULL: flag %d message " EPT_HFMT, flag,
              EPT_HARG(msg));
    expect_proc_null(c, "MPI_Improbe of MPI_PROC_NULL", &st);
    fresh(&st);
    EPT_OK(MPI_Imrecv(&canary, 1, MPI_INT, &msg, &req));
    EPT_OK(MPI_Wait(&req, &st));
    expect_proc_null(c, "MPI_Imrecv of MPI_MESSAGE_NO_PROC + MPI_Wait", &st);

    fresh(&st);
    EPT_OK(MPI_Sendrecv(&canary, 1, MPI_INT, MPI_PROC_NULL, 5, &canary, 1, MPI_INT, MPI_PROC_NULL, 5, c->comm, &st));
    expect_proc_null(c, "MPI_Sendrecv with MPI_PROC_NULL", &st);

    deviations = MPICH_FAILS;
    if (MPICH_DEVIATES(MPICH_FAILS))
        goto sends;
    deviations = 0;
#if EP_HAVE_MPI_Isendrecv /* MPI 4.0's, not in every MPI */
    fresh(&st);
    EPT_OK(MPI_Isendrecv(&canary, 1, MPI_INT, MPI_PROC_NULL, 5, &canary, 1, MPI_INT, MPI_PROC_NULL, 5, c->comm, &req));
    EPT_OK(MPI_Wait(&req, &st));
    expect_proc_null(c, "MPI_Isendrecv with MPI_PROC_NULL + MPI_Wait", &st);

    fresh(&st);
    EPT_OK(MPI_Isendrecv_replace(&canary, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_PROC_NULL, 5, c->comm, &req));
    EPT_OK(MPI_Wait(&req, &st));
    expect_proc_null(c, "MPI_Isendrecv_replace with MPI_PROC_NULL + MPI_Wait", &st);
    EPT_CHECK(canary == 12345, "a receive from MPI_PROC_NULL wrote the buffer");
#endif

sends:
    deviations = 0;
    fresh(&st);
    EPT_OK(MPI_Isend(&canary, 1, MPI_INT, MPI_PROC_NULL, 5, c->comm, &req));
    EPT_OK(MPI_Wait(&req, &st));
    expect_error_kept(c, "MPI_Isend to MPI_PROC_NULL + MPI_Wait", &st);
}

/* MPI_Isendrecv freed with MPI_Request_free before it is over (3.7.3: the
 * operations still complete).  Nothing tells when, short of MPI_Finalize:
 * the buffers stay until then, and main checks the data after it. */
typedef struct {
    int *sbuf, *rbuf;
    int left, me;
} freed_t;
static freed_t freed[64];
static _Atomic int nfreed;
#define FREED_TAG (TAG0 + 2 * V_COUNT)

static void isendrecv_freed(ctx_t *c)
{
#if EP_HAVE_MPI_Isendrecv /* MPI 4.0's, not in every MPI */
    deviations = MPICH_FAILS;
    if (MPICH_DEVIATES(MPICH_FAILS))
        return;
    deviations = 0;
    int k = atomic_fetch_add(&nfreed, 1);
    EPT_CHECK(k < 64, "more than 64 ranks in a process");
    freed_t *f = &freed[k];
    f->sbuf = malloc(sizeof(int) * LARGE);
    f->rbuf = malloc(sizeof(int) * LARGE);
    EPT_CHECK(f->sbuf && f->rbuf, "out of memory");
    f->left = c->left;
    f->me = c->me;
    PHASE("MPI_Isendrecv + MPI_Request_free");
    for (int i = 0; i < LARGE; i++)
        f->sbuf[i] = val(c->me, FREED_TAG, i);
    MPI_Request req;
    EPT_OK(MPI_Isendrecv(f->sbuf, LARGE, MPI_INT, c->right, FREED_TAG, f->rbuf, LARGE, MPI_INT, c->left, FREED_TAG,
                         c->comm, &req));
    EPT_OK(MPI_Request_free(&req));
    EPT_CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
    /* The next message from the left with the same tag goes to the next
     * receive: messages and receives between a pair match in order. */
    int ack = -1;
    EPT_OK(MPI_Sendrecv(&c->me, 1, MPI_INT, c->right, FREED_TAG, &ack, 1, MPI_INT, c->left, FREED_TAG, c->comm,
                        MPI_STATUS_IGNORE));
    EPT_CHECK(ack == c->left, "the message after a freed MPI_Isendrecv: %d, expected %d", ack, c->left);
#else
    (void)c;
#endif
}

/* After MPI_Finalize: the freed MPI_Isendrecv calls delivered their data. */
static int check_freed(void)
{
    int bad = 0;
    for (int k = 0; k < nfreed; k++) {
        freed_t *f = &freed[k];
        for (int i = 0; i < LARGE && !bad; i++)
            if (f->rbuf[i] != val(f->left, FREED_TAG, i)) {
                fprintf(stderr, "FAIL: a freed MPI_Isendrecv of rank %d: int %d from %d is %d, expected %d\n", f->me, i,
                        f->left, f->rbuf[i], val(f->left, FREED_TAG, i));
                bad = 1;
            }
        free(f->sbuf);
        free(f->rbuf);
    }
    return bad;
}

/* MPI_Isendrecv_replace with a non-contiguous type freed while the call
 * is on, and MPI_Isendrecv whose receive is too short: MPI_ERR_TRUNCATE
 * from the wait, MPI_ERROR still as it was. */
static void isendrecv_types_and_errors(ctx_t *c)
{
#if EP_HAVE_MPI_Isendrecv /* MPI 4.0's, not in every MPI */
    int tag = TAG0 + 2 * V_COUNT + 1;
    MPI_Datatype vec;
    MPI_Request req;
    MPI_Status st;
    PHASE("MPI_Isendrecv_replace of a vector type");
    deviations = MPICH_FAILS;
    if (MPICH_DEVIATES(MPICH_FAILS))
        goto truncated;
    EPT_OK(MPI_Type_vector(4, 2, 3, MPI_INT, &vec));
    EPT_OK(MPI_Type_commit(&vec));
    int buf[12];
    for (int i = 0; i < 12; i++)
        buf[i] = i % 3 == 2 ? -7 : val(c->me, tag, i);
    EPT_OK(MPI_Isendrecv_replace(buf, 1, vec, c->right, tag, c->left, tag, c->comm, &req));
    EPT_OK(MPI_Type_free(&vec)); /* MPI allows it: the type goes once the call is over */
    fresh(&st);
    EPT_OK(MPI_Wait(&req, &st));
    expect_status(c, "MPI_Isendrecv_replace of a vector", &st, c->left, tag, 8);
    for (int i = 0; i < 12; i++) {
        int want = i % 3 == 2 ? -7 : val(c->left, tag, i);
        EPT_CHECK(buf[i] == want, "MPI_Isendrecv_replace of a vector: rank %d: int %d is %d, expected %d", c->me, i,
                  buf[i], want);
    }
    EPT_OK(MPI_Barrier(c->comm));

truncated:
    deviations = 0;
    PHASE("MPI_Isendrecv cancelled");
    deviations = MPICH_FAILS;
    if (!MPICH_DEVIATES(MPICH_FAILS)) {
        /* Not cancelled: its send goes on whatever happens to its
         * receive, and MPI allows a cancel or a completion, not both. */
        int out = val(c->me, tag, 0), in = -1, cancelled = -1;
        EPT_OK(MPI_Isendrecv(&out, 1, MPI_INT, c->right, tag, &in, 1, MPI_INT, c->left, tag, c->comm, &req));
        EPT_OK(MPI_Cancel(&req));
        fresh(&st);
        EPT_OK(MPI_Wait(&req, &st));
        EPT_OK(MPI_Test_cancelled(&st, &cancelled));
        EPT_CHECK(!cancelled && in == val(c->left, tag, 0),
                  "MPI_Cancel of an MPI_Isendrecv: cancelled %d, received %d (expected %d, not cancelled)", cancelled,
                  in, val(c->left, tag, 0));
        EPT_OK(MPI_Barrier(c->comm));
    }
    deviations = 0;

    PHASE("MPI_Isendrecv truncated");
    EPT_OK(MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN));
    int out[4] = {1, 2, 3, 4}, in[2];
    EPT_OK(MPI_Isendrecv(out, 4, MPI_INT, c->right, tag, in, 2, MPI_INT, c->left, tag, c->comm, &req));
    fresh(&st);
    int rc = MPI_Wait(&req, &st), cls = -1;
    MPI_Error_class(rc, &cls);
    deviations = MPICH_STATUS;
    EPT_CHECK(cls == MPI_ERR_TRUNCATE || MPICH_DEVIATES(MPICH_STATUS),
              "MPI_Isendrecv with a short receive: MPI_Wait gave class %d, expected %d", cls, MPI_ERR_TRUNCATE);
    deviations = 0;
    expect_error_kept(c, "MPI_Isendrecv truncated + MPI_Wait", &st);
    EPT_CHECK(req == MPI_REQUEST_NULL, "MPI_Wait of a failed MPI_Isendrecv left the handle");
    EPT_OK(MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_ARE_FATAL));
    EPT_OK(MPI_Barrier(c->comm));
#else
    (void)c;
#endif
}

/* The waits of a non-blocking collective and of RMA requests. */
static void other_requests(ctx_t *c)
{
    MPI_Request req;
    MPI_Status st;
    PHASE("MPI_Ibarrier + MPI_Wait");
    fresh(&st);
    EPT_OK(MPI_Ibarrier(c->comm, &req));
    EPT_OK(MPI_Wait(&req, &st));
    expect_error_kept(c, "MPI_Ibarrier + MPI_Wait", &st);

    PHASE("MPI_Ibcast + MPI_Test");
    int root_val = c->me == 0 ? 77 : -1;
    fresh(&st);
    EPT_OK(MPI_Ibcast(&root_val, 1, MPI_INT, 0, c->comm, &req));
    test_until_done(&req, &st);
    expect_error_kept(c, "MPI_Ibcast + MPI_Test", &st);
    EPT_CHECK(root_val == 77, "MPI_Ibcast gave %d", root_val);

    PHASE("MPI_Rput / MPI_Rget + MPI_Wait");
    int *base;
    MPI_Win win;
    EPT_OK(MPI_Win_allocate(sizeof(int) * 4, sizeof(int), MPI_INFO_NULL, c->comm, &base, &win));
    base[0] = base[1] = -1;
    EPT_OK(MPI_Barrier(c->comm));
    EPT_OK(MPI_Win_lock_all(0, win));
    int put = 1000 + c->me, got = -1;
    fresh(&st);
    EPT_OK(MPI_Rput(&put, 1, MPI_INT, c->right, 0, 1, MPI_INT, win, &req));
    EPT_OK(MPI_Wait(&req, &st));
    expect_error_kept(c, "MPI_Rput + MPI_Wait", &st);
    EPT_OK(MPI_Win_flush_all(win));
    EPT_OK(MPI_Barrier(c->comm));
    fresh(&st);
    EPT_OK(MPI_Rget(&got, 1, MPI_INT, c->right, 0, 1, MPI_INT, win, &req));
    test_until_done(&req, &st);
    expect_error_kept(c, "MPI_Rget + MPI_Test", &st);
    EPT_CHECK(got == 1000 + c->me, "MPI_Rget from rank %d gave %d, expected %d (our MPI_Rput)", c->right, got,
              1000 + c->me);
    EPT_OK(MPI_Win_unlock_all(win));
    EPT_OK(MPI_Win_free(&win));
}

static void expect_empty(const ctx_t *c, const char *what, const MPI_Status *st)
{
    expect_status(c, what, st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
}

/* The calls completing several requests may set MPI_ERROR (3.2.5). */
static void expect_empty_of_all(const ctx_t *c, const char *what, MPI_Status *st)
{
    st->MPI_ERROR = KEEP;
    expect_empty(c, what, st);
}

/* Completion calls on MPI_REQUEST_NULL next to an inactive persistent
 * receive. */
static void null_and_inactive(ctx_t *c)
{
    MPI_Status st, sts[2];
    MPI_Request q[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int flag = 0, index = -5, outcount = -5, indices[2], canary = 12345;
    PHASE("null and inactive requests");
    EPT_OK(MPI_Recv_init(&canary, 1, MPI_INT, c->left, 5, c->comm, &q[1]));
    const char *name[] = {"MPI_Wait", "MPI_Test", "MPI_Request_get_status"};
    for (int k = 0; k < 3; k++) {
        fresh(&st);
        flag = 0;
        if (k == 0)
            EPT_OK(MPI_Wait(&q[1], &st));
        else if (k == 1)
            EPT_OK(MPI_Test(&q[1], &flag, &st));
        else
            EPT_OK(MPI_Request_get_status(q[1], &flag, &st));
        EPT_CHECK(k == 0 || flag, "%s of an inactive request: flag 0", name[k]);
        expect_empty(c, name[k], &st);
    }
    fresh(&st);
    EPT_OK(MPI_Waitany(2, q, &index, &st));
    EPT_CHECK(index == MPI_UNDEFINED, "MPI_Waitany of null and inactive requests: index %d", index);
    expect_empty(c, "MPI_Waitany", &st);
    fresh(&st);
    flag = 0;
    EPT_OK(MPI_Testany(2, q, &index, &flag, &st));
    EPT_CHECK(flag && index == MPI_UNDEFINED, "MPI_Testany of null and inactive requests: flag %d index %d", flag,
              index);
    deviations = MPICH_STATUS;
    expect_empty(c, "MPI_Testany", &st);
    deviations = 0;
    EPT_OK(MPI_Waitsome(2, q, &outcount, indices, sts));
    EPT_CHECK(outcount == MPI_UNDEFINED, "MPI_Waitsome of null and inactive requests: outcount %d", outcount);
    outcount = -5;
    EPT_OK(MPI_Testsome(2, q, &outcount, indices, sts));
    EPT_CHECK(outcount == MPI_UNDEFINED, "MPI_Testsome of null and inactive requests: outcount %d", outcount);
    fresh(&sts[0]);
    fresh(&sts[1]);
    EPT_OK(MPI_Waitall(2, q, sts));
    expect_empty_of_all(c, "MPI_Waitall, null request", &sts[0]);
    expect_empty_of_all(c, "MPI_Waitall, inactive request", &sts[1]);
    fresh(&sts[0]);
    fresh(&sts[1]);
    flag = 0;
    EPT_OK(MPI_Testall(2, q, &flag, sts));
    EPT_CHECK(flag, "MPI_Testall of null and inactive requests: flag 0");
    expect_empty_of_all(c, "MPI_Testall, null request", &sts[0]);
    expect_empty_of_all(c, "MPI_Testall, inactive request", &sts[1]);
    EPT_CHECK(q[0] == MPI_REQUEST_NULL && q[1] != MPI_REQUEST_NULL && canary == 12345,
              "null and inactive requests: handles " EPT_HFMT " " EPT_HFMT " afterwards, buffer %d", EPT_HARG(q[0]),
              EPT_HARG(q[1]), canary);
    /* Starting it twice is an error (3.9), which Open MPI does not check
     * (its classic shapes leave it out); the first start goes on. */
    EPT_OK(MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN));
    EPT_OK(MPI_Start(&q[1]));
    if (!(ept_classic && EPT_OPEN_MPI)) {
        int rc = MPI_Start(&q[1]), cls = -1;
        MPI_Error_class(rc, &cls);
        EPT_CHECK(cls == MPI_ERR_REQUEST, "MPI_Start of an active persistent request: class %d", cls);
    }
    EPT_OK(MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_ARE_FATAL));
    EPT_OK(MPI_Cancel(&q[1]));
    EPT_OK(MPI_Wait(&q[1], &st));
    EPT_OK(MPI_Test_cancelled(&st, &flag));
    EPT_CHECK(flag && canary == 12345, "a started persistent receive that nothing matches was not cancelled");
    EPT_OK(MPI_Request_free(&q[1]));
}

/* A message of no elements of MPI_DATATYPE_NULL, which MPICH accepts (its
 * own suite sends them): blocking and non-blocking, status count 0. */
static void null_type_empty(ctx_t *c)
{
    MPI_Status st;
    MPI_Request rq[2];
    if (ept_classic && EPT_OPEN_MPI) /* Open MPI refuses the type (MPI_ERR_TYPE) */
        return;
    PHASE("empty messages of MPI_DATATYPE_NULL");
    fresh(&st);
    EPT_OK(
        MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, c->right, 21, NULL, 0, MPI_DATATYPE_NULL, c->left, 21, c->comm, &st));
    expect_status(c, "MPI_Sendrecv of MPI_DATATYPE_NULL", &st, c->left, 21, 0);
    EPT_OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, c->left, 22, c->comm, &rq[0]));
    EPT_OK(MPI_Isend(NULL, 0, MPI_DATATYPE_NULL, c->right, 22, c->comm, &rq[1]));
    fresh(&st);
    EPT_OK(MPI_Wait(&rq[0], &st));
    expect_status(c, "MPI_Irecv of MPI_DATATYPE_NULL", &st, c->left, 22, 0);
    EPT_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    ctx_t c = {.comm = comm};
    ept_ring_place(comm, &c.me, &c.n, &c.left, &c.right);
    c.sbuf = malloc(sizeof(int) * LARGE);
    c.rbuf = malloc(sizeof(int) * LARGE);
    EPT_CHECK(c.sbuf && c.rbuf, "out of memory");
    for (int large = 0; large < 2; large++)
        for (int v = 0; v < V_COUNT; v++) {
            /* Barriers between rounds: a receive with MPI_ANY_SOURCE or
             * MPI_ANY_TAG must find only this round's message. */
            message_round(&c, (variant_t)v, large);
            EPT_OK(MPI_Barrier(comm));
        }
    proc_null(&c);
    null_type_empty(&c);
    null_and_inactive(&c);
    isendrecv_freed(&c);
    isendrecv_types_and_errors(&c);
    other_requests(&c);
    free(c.sbuf);
    free(c.rbuf);
}

int main(int argc, char **argv)
{
    int rc = ept_main_classic(argc, argv, 60, body, NULL);
    return check_freed() ? 1 : rc;
}
