/* Error handling with MPI_ERRORS_RETURN on endpoint communicators, in world
 * mode.  MPI_Comm_set_errhandler(MPI_COMM_WORLD / MPI_COMM_SELF,
 * MPI_ERRORS_RETURN) is called outside the parallel region (all endpoints)
 * and again inside.  Every erroneous call must return an error code whose
 * MPI_Error_class is the right class and whose MPI_Error_string names the
 * MPI function and the problem:
 *   bad destination / source ranks (size, -5), negative tags, negative
 *   counts (MPI_Send_c's below INT_MIN too), MPI_DATATYPE_NULL, a NULL buffer, invalid Bcast roots,
 *   MPI_OP_NULL and a negative count in Allreduce, MPI_DATATYPE_NULL in
 *   Allgather, a freed (stale) endpoint communicator handle, MPI_Wait /
 *   MPI_Test / MPI_Request_free on a stale request handle, truncation
 *   (small and 1 MiB messages, within a process and between processes; with
 *   MPI_Recv, MPI_Wait and MPI_Waitall), MPI_Comm_free of MPI_COMM_WORLD and
 *   MPI_COMM_SELF, and functions not supported on endpoint communicators
 *   (MPI_Comm_spawn, _disconnect, _connect, _accept) on
 *   MPI_COMM_WORLD and on a dup: MPI_ERR_COMM and "not supported".
 * Then: nothing was sent by the erroneous calls, and the program goes on
 * normally (point-to-point, Allreduce, Barrier).  An error on a dup whose
 * handler is MPI_ERRORS_RETURN must not be raised on MPI_COMM_WORLD's
 * handler (a user handler that counts its calls), while an error MPICH
 * raises with no communicator (MPI_Type_commit of MPI_DATATYPE_NULL) must
 * reach the calling thread's MPI_COMM_WORLD handler.  Last, MPI_File_open
 * of a missing file on a dup: MPI_ERR_NO_SUCH_FILE through the files'
 * default handler, not the communicator's.
 * Checks of expected errors are collected, so one run lists every problem;
 * the program fails at the end if any was found. */
#include "eptest.h"

#include <limits.h>
#include <stdatomic.h>

static _Atomic int failures;

#define SOFT_CHECK(cond, ...)                                                                \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            int r_ = -1;                                                                     \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                              \
            char m_[600];                                                                    \
            snprintf(m_, sizeof m_, __VA_ARGS__);                                            \
            fprintf(stderr, "FAIL %s:%d (world rank %d): %s\n", __FILE__, __LINE__, r_, m_); \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

static const char *class_name(int c)
{
    switch (c) {
    case MPI_ERR_RANK:
        return "MPI_ERR_RANK";
    case MPI_ERR_TAG:
        return "MPI_ERR_TAG";
    case MPI_ERR_COUNT:
        return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE:
        return "MPI_ERR_TYPE";
    case MPI_ERR_ROOT:
        return "MPI_ERR_ROOT";
    case MPI_ERR_OP:
        return "MPI_ERR_OP";
    case MPI_ERR_COMM:
        return "MPI_ERR_COMM";
    case MPI_ERR_REQUEST:
        return "MPI_ERR_REQUEST";
    case MPI_ERR_TRUNCATE:
        return "MPI_ERR_TRUNCATE";
    case MPI_ERR_BUFFER:
        return "MPI_ERR_BUFFER";
    case MPI_ERR_IN_STATUS:
        return "MPI_ERR_IN_STATUS";
    case MPI_ERR_ARG:
        return "MPI_ERR_ARG";
    case MPI_SUCCESS:
        return "MPI_SUCCESS";
    default:
        return "another class";
    }
}

static int ci_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n))
            return 1;
    return 0;
}

/* rc must be an error of class cls whose text names call and contains word. */
static void expect_err(int rc, int cls, const char *call, const char *word, const char *what)
{
    if (rc == MPI_SUCCESS) {
        SOFT_CHECK(0, "%s: %s returned MPI_SUCCESS, expected %s", what, call, class_name(cls));
        return;
    }
    int c = -1, len = -1;
    char msg[MPI_MAX_ERROR_STRING] = "";
    SOFT_CHECK(MPI_Error_class(rc, &c) == MPI_SUCCESS, "%s: MPI_Error_class(%d) failed", what, rc);
    SOFT_CHECK(MPI_Error_string(rc, msg, &len) == MPI_SUCCESS, "%s: MPI_Error_string(%d) failed", what, rc);
    SOFT_CHECK(len == (int)strlen(msg), "%s: MPI_Error_string length %d for '%s'", what, len, msg);
    SOFT_CHECK(c == cls, "%s: error class %d (%s), expected %s; message '%s'", what, c, class_name(c), class_name(cls),
               msg);
    SOFT_CHECK(strstr(msg, call) != NULL, "%s: the message '%s' does not name %s", what, msg, call);
    SOFT_CHECK(ci_contains(msg, word), "%s: the message '%s' does not say '%s'", what, msg, word);
}

/* ---- functions that endpoint communicators do not support -------------- */

#define N_UNSUPPORTED 4

static int call_unsupported(int k, MPI_Comm c, const char **name)
{
    MPI_Comm nc = MPI_COMM_NULL;
    MPI_Info info = MPI_INFO_NULL;
    switch (k) {
#define U(fn, ...) \
    *name = #fn;   \
    return fn(__VA_ARGS__)
    case 0:
        U(MPI_Comm_spawn, "true", MPI_ARGV_NULL, 1, info, 0, c, &nc, MPI_ERRCODES_IGNORE);
    case 1:
        U(MPI_Comm_disconnect, &c);
    case 2:
        U(MPI_Comm_connect, "no-port", MPI_INFO_NULL, 0, c, &nc);
    case 3:
        U(MPI_Comm_accept, "no-port", info, 0, c, &nc);
#undef U
    }
    return MPI_SUCCESS;
}

/* ---- the erroneous calls, run by every endpoint ----------------------------- */

static void point_to_point_errors(int r, int s)
{
    int v[16] = {0}, rc;
    MPI_Request rq;
    MPI_Status st;

    rc = MPI_Send(v, 1, MPI_INT, s, 0, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_RANK, "MPI_Send", "rank", "MPI_Send to rank size");
    rc = MPI_Send(v, 1, MPI_INT, -5, 0, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_RANK, "MPI_Send", "rank", "MPI_Send to rank -5");
    rc = MPI_Isend(v, 1, MPI_INT, s + 3, 0, MPI_COMM_WORLD, &rq);
    expect_err(rc, MPI_ERR_RANK, "MPI_Isend", "rank", "MPI_Isend to rank size+3");
    rc = MPI_Ssend(v, 1, MPI_INT, 1, 0, MPI_COMM_SELF);
    expect_err(rc, MPI_ERR_RANK, "MPI_Ssend", "rank", "MPI_Ssend to rank 1 of MPI_COMM_SELF");
    rc = MPI_Recv(v, 1, MPI_INT, s, 0, MPI_COMM_WORLD, &st);
    expect_err(rc, MPI_ERR_RANK, "MPI_Recv", "rank", "MPI_Recv from rank size");
    rc = MPI_Recv(v, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &st);
    expect_err(rc, MPI_ERR_RANK, "MPI_Recv", "rank", "MPI_Recv from rank -5");
    rc = MPI_Irecv(v, 1, MPI_INT, s, 0, MPI_COMM_WORLD, &rq);
    expect_err(rc, MPI_ERR_RANK, "MPI_Irecv", "rank", "MPI_Irecv from rank size");

    rc = MPI_Send(v, 1, MPI_INT, r, -1, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_TAG, "MPI_Send", "tag", "MPI_Send with tag -1");
    rc = MPI_Isend(v, 1, MPI_INT, r, -100, MPI_COMM_WORLD, &rq);
    expect_err(rc, MPI_ERR_TAG, "MPI_Isend", "tag", "MPI_Isend with tag -100");
    rc = MPI_Recv(v, 1, MPI_INT, r, -7, MPI_COMM_WORLD, &st);
    expect_err(rc, MPI_ERR_TAG, "MPI_Recv", "tag", "MPI_Recv with tag -7");
    {
        int *ub = NULL, flag = 0;
        EPT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
        if (flag && *ub < INT_MAX) {
            rc = MPI_Send(v, 1, MPI_INT, r, *ub + 1, MPI_COMM_WORLD);
            expect_err(rc, MPI_ERR_TAG, "MPI_Send", "MPI_TAG_UB", "MPI_Send with tag MPI_TAG_UB + 1");
            rc = MPI_Irecv(v, 1, MPI_INT, r, *ub + 1, MPI_COMM_WORLD, &rq);
            expect_err(rc, MPI_ERR_TAG, "MPI_Irecv", "MPI_TAG_UB", "MPI_Irecv with tag MPI_TAG_UB + 1");
        }
    }

    rc = MPI_Send(v, -1, MPI_INT, r, 0, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_COUNT, "MPI_Send", "count", "MPI_Send with count -1");
    rc = MPI_Recv(v, -2, MPI_INT, r, 0, MPI_COMM_WORLD, &st);
    expect_err(rc, MPI_ERR_COUNT, "MPI_Recv", "count", "MPI_Recv with count -2");
#if EP_HAVE_MPI_Send_c
    rc = MPI_Send_c(v, (MPI_Count)INT_MIN - 1, MPI_INT, r, 0, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_COUNT, "MPI_Send_c", "negative", "MPI_Send_c with count INT_MIN - 1");
#endif

    rc = MPI_Send(v, 1, MPI_DATATYPE_NULL, r, 0, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_TYPE, "MPI_Send", "datatype", "MPI_Send with MPI_DATATYPE_NULL");
    rc = MPI_Irecv(v, 1, MPI_DATATYPE_NULL, r, 0, MPI_COMM_WORLD, &rq);
    expect_err(rc, MPI_ERR_TYPE, "MPI_Irecv", "datatype", "MPI_Irecv with MPI_DATATYPE_NULL");

    rc = MPI_Send(NULL, 4, MPI_INT, r, 0, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_BUFFER, "MPI_Send", "buffer", "MPI_Send from a NULL buffer");

    /* No buffer is attached: a buffered send has no space, and sends nothing. */
    rc = MPI_Bsend(v, 4, MPI_INT, r, 0, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_BUFFER, "MPI_Bsend", "MPI_Buffer_attach", "MPI_Bsend without an attached buffer");
    rc = MPI_Ibsend(v, 4, MPI_INT, r, 0, MPI_COMM_WORLD, &rq);
    expect_err(rc, MPI_ERR_BUFFER, "MPI_Ibsend", "4 elements", "MPI_Ibsend without an attached buffer");
    EPT_OK(MPI_Bsend_init(v, 4, MPI_INT, r, 0, MPI_COMM_WORLD, &rq));
    rc = MPI_Start(&rq);
    expect_err(rc, MPI_ERR_BUFFER, "MPI_Start", "MPI_Buffer_attach", "MPI_Start of a MPI_Bsend_init without a buffer");
    EPT_OK(MPI_Request_free(&rq)); /* inactive again: it can be freed */
    int flag = 1;
    EPT_OK(MPI_Iprobe(r, 0, MPI_COMM_WORLD, &flag, &st));
    SOFT_CHECK(!flag, "a buffered send that failed for want of space sent a message");
}

static void collective_errors(int s)
{
    int v[8] = {0}, w[64], rc;
    rc = MPI_Bcast(v, 1, MPI_INT, s, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_ROOT, "MPI_Bcast", "root", "MPI_Bcast with root size");
    rc = MPI_Bcast(v, 1, MPI_INT, -1, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_ROOT, "MPI_Bcast", "root", "MPI_Bcast with root -1");
    rc = MPI_Bcast(v, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_TYPE, "MPI_Bcast", "datatype", "MPI_Bcast with MPI_DATATYPE_NULL");
    rc = MPI_Allreduce(v, v + 4, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_OP, "MPI_Allreduce", "op", "MPI_Allreduce with MPI_OP_NULL");
    double d[2] = {1, 2};
    rc = MPI_Allreduce(d, d + 1, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_OP, "MPI_Allreduce", "MPI_BAND", "MPI_Allreduce of doubles with MPI_BAND");
    rc = MPI_Allreduce(v, v + 4, -3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_COUNT, "MPI_Allreduce", "count", "MPI_Allreduce with count -3");
    rc = MPI_Allgather(v, 1, MPI_INT, w, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_TYPE, "MPI_Allgather", "datatype", "MPI_Allgather with MPI_DATATYPE_NULL");
    rc = MPI_Reduce(v, w, 1, MPI_INT, MPI_SUM, s, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_ROOT, "MPI_Reduce", "root", "MPI_Reduce with root size");
    rc = MPI_Gather(v, 1, MPI_INT, w, 1, MPI_INT, -2, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_ROOT, "MPI_Gather", "root", "MPI_Gather with root -2");
    rc = MPI_Scatter(w, 1, MPI_INT, v, -1, MPI_INT, 0, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_COUNT, "MPI_Scatter", "count", "MPI_Scatter with receive count -1");
    rc = MPI_Alltoall(v, 1, MPI_DATATYPE_NULL, w, 1, MPI_INT, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_TYPE, "MPI_Alltoall", "datatype", "MPI_Alltoall with MPI_DATATYPE_NULL");
    rc = MPI_Scan(v, w, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_OP, "MPI_Scan", "op", "MPI_Scan with MPI_OP_NULL");
    rc = MPI_Alltoallv(v, NULL, NULL, MPI_INT, w, NULL, NULL, MPI_INT, MPI_COMM_WORLD);
    expect_err(rc, MPI_ERR_ARG, "MPI_Alltoallv", "NULL", "MPI_Alltoallv with NULL counts");
}

static void stale_handle_errors(int r)
{
    int v = 0, rc, rank;
    MPI_Comm d, stale;
    EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    stale = d;
    EPT_OK(MPI_Comm_free(&d));
    rc = MPI_Send(&v, 1, MPI_INT, 0, 0, stale);
    expect_err(rc, MPI_ERR_COMM, "MPI_Send", "communicator", "MPI_Send on a freed communicator");
    rc = MPI_Comm_rank(stale, &rank);
    expect_err(rc, MPI_ERR_COMM, "MPI_Comm_rank", "communicator", "MPI_Comm_rank on a freed communicator");
    rc = MPI_Barrier(stale);
    expect_err(rc, MPI_ERR_COMM, "MPI_Barrier", "communicator", "MPI_Barrier on a freed communicator");
    rc = MPI_Comm_free(&stale);
    expect_err(rc, MPI_ERR_COMM, "MPI_Comm_free", "communicator", "MPI_Comm_free of a freed communicator");

    /* A request completed by MPI_Wait, then waited for again by its old value. */
    MPI_Request rq, old;
    MPI_Status st;
    int flag = 0;
    EPT_OK(MPI_Irecv(&v, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &rq));
    old = rq;
    EPT_OK(MPI_Send(&r, 1, MPI_INT, 0, 3, MPI_COMM_SELF));
    EPT_OK(MPI_Wait(&rq, &st));
    SOFT_CHECK(rq == MPI_REQUEST_NULL && v == r, "MPI_Wait: request " EPT_HFMT ", value %d", EPT_HARG(rq), v);
    rq = old;
    rc = MPI_Wait(&rq, &st);
    expect_err(rc, MPI_ERR_REQUEST, "MPI_Wait", "request", "MPI_Wait on a stale request");
    rq = old;
    rc = MPI_Test(&rq, &flag, &st);
    expect_err(rc, MPI_ERR_REQUEST, "MPI_Test", "request", "MPI_Test on a stale request");
    rq = old;
    rc = MPI_Request_free(&rq);
    expect_err(rc, MPI_ERR_REQUEST, "MPI_Request_free", "request", "MPI_Request_free of a stale request");
}

static void truncation_errors(int r, int s)
{
    const int big = 1 << 20;
    int to = (r + 1) % s, from = (r + s - 1) % s, rc;
    int small_out[10], small_in[6];
    char *bout = malloc((size_t)big), *bin = malloc((size_t)big / 2 + 1);
    MPI_Request sr, rr, rq[2];
    MPI_Status st, sts[2];
    EPT_CHECK(bout && bin, "out of memory");
    for (int i = 0; i < 10; i++)
        small_out[i] = r * 10 + i;
    memset(bout, r, (size_t)big);

    /* Small message, MPI_Recv. */
    EPT_OK(MPI_Isend(small_out, 10, MPI_INT, to, 30, MPI_COMM_WORLD, &sr));
    rc = MPI_Recv(small_in, 5, MPI_INT, from, 30, MPI_COMM_WORLD, &st);
    expect_err(rc, MPI_ERR_TRUNCATE, "MPI_Recv", "truncat", "10 ints into 5 with MPI_Recv");
    SOFT_CHECK(MPI_Wait(&sr, &st) == MPI_SUCCESS, "the send of a truncated message failed");
    /* 1 MiB into 512 KiB, MPI_Recv. */
    EPT_OK(MPI_Isend(bout, big, MPI_BYTE, to, 31, MPI_COMM_WORLD, &sr));
    rc = MPI_Recv(bin, big / 2, MPI_BYTE, from, 31, MPI_COMM_WORLD, &st);
    expect_err(rc, MPI_ERR_TRUNCATE, "MPI_Recv", "truncat", "1 MiB into 512 KiB with MPI_Recv");
    SOFT_CHECK(MPI_Wait(&sr, &st) == MPI_SUCCESS, "the send of a truncated 1 MiB message failed");
    /* Irecv posted first, then MPI_Wait. */
    EPT_OK(MPI_Irecv(bin, big / 2, MPI_BYTE, from, 32, MPI_COMM_WORLD, &rr));
    EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
    EPT_OK(MPI_Isend(bout, big, MPI_BYTE, to, 32, MPI_COMM_WORLD, &sr));
    rc = MPI_Wait(&rr, &st);
    expect_err(rc, MPI_ERR_TRUNCATE, "MPI_Wait", "truncat", "1 MiB into 512 KiB with MPI_Irecv + MPI_Wait");
    SOFT_CHECK(rr == MPI_REQUEST_NULL, "MPI_Wait of a truncated receive left the request");
    SOFT_CHECK(MPI_Wait(&sr, &st) == MPI_SUCCESS, "the send of a truncated 1 MiB message failed");
    /* MPI_Waitall: MPI_ERR_IN_STATUS, the receive's status has the class. */
    EPT_OK(MPI_Irecv(small_in, 2, MPI_INT, from, 33, MPI_COMM_WORLD, &rq[0]));
    EPT_OK(MPI_Isend(small_out, 3, MPI_INT, to, 33, MPI_COMM_WORLD, &rq[1]));
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = -12345;
    rc = MPI_Waitall(2, rq, sts);
    expect_err(rc, MPI_ERR_IN_STATUS, "MPI_Waitall", "status", "3 ints into 2 with MPI_Waitall");
    {
        int c0 = -1;
        MPI_Error_class(sts[0].MPI_ERROR, &c0);
        SOFT_CHECK(c0 == MPI_ERR_TRUNCATE && sts[1].MPI_ERROR == MPI_SUCCESS,
                   "MPI_Waitall statuses: receive error class %d (want MPI_ERR_TRUNCATE), send error %d", c0,
                   sts[1].MPI_ERROR);
    }
    /* Two receives waited for together (on the direct path one PMPI test
     * takes both): only the truncated one has the error. */
    {
        int two[2] = {0, 0}, three[3] = {0, 0, 0}, out3[3] = {7, 8, 9};
        EPT_OK(MPI_Irecv(two, 2, MPI_INT, from, 34, MPI_COMM_WORLD, &rq[0]));
        EPT_OK(MPI_Irecv(three, 3, MPI_INT, from, 35, MPI_COMM_WORLD, &rq[1]));
        EPT_OK(MPI_Send(out3, 3, MPI_INT, to, 34, MPI_COMM_WORLD));
        EPT_OK(MPI_Send(out3, 3, MPI_INT, to, 35, MPI_COMM_WORLD));
        sts[0].MPI_ERROR = sts[1].MPI_ERROR = -12345;
        rc = MPI_Waitall(2, rq, sts);
        expect_err(rc, MPI_ERR_IN_STATUS, "MPI_Waitall", "status", "3 ints into 2, and 3 into 3, with MPI_Waitall");
        int c0 = -1, n1 = -1;
        MPI_Error_class(sts[0].MPI_ERROR, &c0);
        MPI_Get_count(&sts[1], MPI_INT, &n1);
        SOFT_CHECK(c0 == MPI_ERR_TRUNCATE && sts[1].MPI_ERROR == MPI_SUCCESS,
                   "MPI_Waitall of two receives: error class %d (want MPI_ERR_TRUNCATE), second error %d", c0,
                   sts[1].MPI_ERROR);
        SOFT_CHECK(n1 == 3 && sts[1].MPI_SOURCE == from && sts[1].MPI_TAG == 35 && three[2] == 9,
                   "MPI_Waitall of two receives: second got %d ints from %d tag %d, last %d", n1, sts[1].MPI_SOURCE,
                   sts[1].MPI_TAG, three[2]);
        SOFT_CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "MPI_Waitall left a request");
    }
    free(bout);
    free(bin);
}

static void free_predefined_errors(void)
{
    MPI_Comm c = MPI_COMM_WORLD;
    int rc = MPI_Comm_free(&c);
    expect_err(rc, MPI_ERR_COMM, "MPI_Comm_free", "MPI_COMM_WORLD", "MPI_Comm_free(MPI_COMM_WORLD)");
    SOFT_CHECK(c == MPI_COMM_WORLD, "MPI_Comm_free(MPI_COMM_WORLD) changed the handle to " EPT_HFMT, EPT_HARG(c));
    c = MPI_COMM_SELF;
    rc = MPI_Comm_free(&c);
    expect_err(rc, MPI_ERR_COMM, "MPI_Comm_free", "MPI_COMM_SELF", "MPI_Comm_free(MPI_COMM_SELF)");
    SOFT_CHECK(c == MPI_COMM_SELF, "MPI_Comm_free(MPI_COMM_SELF) changed the handle to " EPT_HFMT, EPT_HARG(c));
}

static void unsupported_errors(MPI_Comm c, const char *cname)
{
    for (int k = 0; k < N_UNSUPPORTED; k++) {
        const char *name = "?";
        char what[128];
        int rc = call_unsupported(k, c, &name);
        snprintf(what, sizeof what, "%s on %s", name, cname);
        expect_err(rc, MPI_ERR_COMM, name, "not supported", what);
    }
}

/* ---- routing: the communicator's handler, not MPI_COMM_WORLD's ------------ */

#define MAXT 64
static int world_eh_calls[MAXT];

static void world_eh(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    world_eh_calls[omp_get_thread_num()]++;
}

/* A truncated receive completed by each call that completes several
 * requests, on d (MPI_ERRORS_RETURN): MPI_ERR_IN_STATUS comes back, and
 * MPI_COMM_WORLD's handler is not called; then by MPI_Recv. */
static void multi_completion_routing(MPI_Comm d, int t)
{
    static const char *const names[] = {"MPI_Waitall", "MPI_Testall", "MPI_Waitsome", "MPI_Testsome"};
    int me, out[3] = {1, 2, 3};
    EPT_OK(MPI_Comm_rank(d, &me));
    for (int k = 0; k < 4; k++) {
        int in[2], flag = 0, n, idx[2], rc = MPI_SUCCESS, got = MPI_SUCCESS;
        MPI_Request rq[2];
        MPI_Status sts[2];
        EPT_OK(MPI_Irecv(in, 2, MPI_INT, me, 40 + k, d, &rq[0]));
        EPT_OK(MPI_Isend(out, 3, MPI_INT, me, 40 + k, d, &rq[1]));
        world_eh_calls[t] = 0;
        if (k == 0)
            got = MPI_Waitall(2, rq, sts);
        while (k == 1 && !flag)
            got = MPI_Testall(2, rq, &flag, sts);
        while (k >= 2 && rq[0] != MPI_REQUEST_NULL) {
            rc = k == 2 ? MPI_Waitsome(2, rq, &n, idx, sts) : MPI_Testsome(2, rq, &n, idx, sts);
            if (rc != MPI_SUCCESS)
                got = rc;
        }
        if (rq[1] != MPI_REQUEST_NULL)
            EPT_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        expect_err(got, MPI_ERR_IN_STATUS, names[k], "status", "a truncated receive on a dup with MPI_ERRORS_RETURN");
        SOFT_CHECK(world_eh_calls[t] == 0, "%s of a truncated receive on a dup: raised on MPI_COMM_WORLD's handler",
                   names[k]);
    }
    /* A blocking MPI_Recv (with one endpoint per process on cores of their
     * own, a single PMPI_Recv: src/p2p/direct.h), with and without a status. */
    for (int k = 0; k < 2; k++) {
        int in[2] = {0, 0}, rc;
        MPI_Request sr;
        MPI_Status st;
        st.MPI_ERROR = -12345;
        EPT_OK(MPI_Isend(out, 3, MPI_INT, me, 50 + k, d, &sr));
        world_eh_calls[t] = 0;
        rc = MPI_Recv(in, 2, MPI_INT, me, 50 + k, d, k ? &st : MPI_STATUS_IGNORE);
        EPT_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        expect_err(rc, MPI_ERR_TRUNCATE, "MPI_Recv", "truncat", "3 ints into 2 with MPI_Recv on a dup");
        SOFT_CHECK(world_eh_calls[t] == 0,
                   "MPI_Recv of a truncated message on a dup: raised on MPI_COMM_WORLD's handler");
        SOFT_CHECK(!k || (st.MPI_SOURCE == me && st.MPI_TAG == 51 && st.MPI_ERROR == -12345),
                   "MPI_Recv of a truncated message: status source %d tag %d error %d (want %d, 51, untouched)",
                   st.MPI_SOURCE, st.MPI_TAG, st.MPI_ERROR, me);
    }
}

int main(int argc, char **argv)
{
    int provided;
    int T = ept_require_world();
    EPT_CHECK(T <= MAXT, "at most %d endpoints", MAXT);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Errhandler counting;
    EPT_OK(MPI_Comm_create_errhandler(world_eh, &counting));

#pragma omp parallel num_threads(T)
    {
        int r = -1, s = -1, t = omp_get_thread_num();
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
        EPT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &r));
        EPT_OK(MPI_Comm_size(MPI_COMM_WORLD, &s));

        point_to_point_errors(r, s);
        collective_errors(s);
        stale_handle_errors(r);
        truncation_errors(r, s);
        free_predefined_errors();
        {
            MPI_Comm d;
            EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
            unsupported_errors(MPI_COMM_WORLD, "MPI_COMM_WORLD");
            unsupported_errors(d, "a dup of MPI_COMM_WORLD");
            EPT_OK(MPI_Comm_free(&d));
        }

        /* Nothing was sent by the erroneous calls. */
        int flag = 1, cnt = -1;
        MPI_Status pst;
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
        EPT_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &pst));
        if (flag)
            MPI_Get_count(&pst, MPI_BYTE, &cnt);
        SOFT_CHECK(!flag,
                   "a message is pending on MPI_COMM_WORLD after the erroneous calls (from %d, tag %d, %d bytes)",
                   flag ? pst.MPI_SOURCE : -1, flag ? pst.MPI_TAG : -1, cnt);
        EPT_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, &pst));
        if (flag)
            MPI_Get_count(&pst, MPI_BYTE, &cnt);
        SOFT_CHECK(!flag, "a message is pending on MPI_COMM_SELF after the erroneous calls (tag %d, %d bytes)",
                   flag ? pst.MPI_TAG : -1, cnt);
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every endpoint has probed */

        /* The program goes on normally. */
        int x = r, sum = -1, got = -1;
        EPT_OK(MPI_Sendrecv(&x, 1, MPI_INT, (r + 1) % s, 1, &got, 1, MPI_INT, (r + s - 1) % s, 1, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        EPT_CHECK(got == (r + s - 1) % s, "ring after the errors: got %d", got);
        EPT_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EPT_CHECK(sum == s * (s - 1) / 2, "allreduce after the errors: %d", sum);
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD));

        /* Routing: a dup with MPI_ERRORS_RETURN while MPI_COMM_WORLD has a
         * handler that counts its calls. */
        MPI_Comm d;
        EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, counting));
        world_eh_calls[t] = 0;
        int v = 0, rc = MPI_Send(&v, 1, MPI_INT, -5, 0, d);
        expect_err(rc, MPI_ERR_RANK, "MPI_Send", "rank", "MPI_Send to -5 on a dup with MPI_ERRORS_RETURN");
        SOFT_CHECK(world_eh_calls[t] == 0, "MPI_Send to -5 on a dup: raised on MPI_COMM_WORLD's handler");
        for (int k = 0; k < N_UNSUPPORTED; k++) {
            const char *name = "?";
            world_eh_calls[t] = 0;
            rc = call_unsupported(k, d, &name);
            SOFT_CHECK(rc != MPI_SUCCESS && world_eh_calls[t] == 0,
                       "%s on a dup with MPI_ERRORS_RETURN: returned %d after %d calls of MPI_COMM_WORLD's handler "
                       "(the error must be raised on the dup's handler only)",
                       name, rc, world_eh_calls[t]);
        }
        multi_completion_routing(d, t);
        /* An error tied to no communicator, raised by MPICH itself, goes
         * to the calling thread's MPI_COMM_WORLD handler. */
        MPI_Datatype none = MPI_DATATYPE_NULL;
        world_eh_calls[t] = 0;
        rc = MPI_Type_commit(&none);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        SOFT_CHECK(cls == MPI_ERR_TYPE && world_eh_calls[t] == 1,
                   "MPI_Type_commit(MPI_DATATYPE_NULL): class %d after %d calls of the thread's MPI_COMM_WORLD "
                   "handler, expected MPI_ERR_TYPE after 1",
                   cls, world_eh_calls[t]);
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        EPT_OK(MPI_Comm_free(&d));
        EPT_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EPT_CHECK(sum == s * (s - 1) / 2, "final allreduce: %d", sum);

        /* Last, MPI_File_open of a missing file on a dup whose handler
         * counts: the error goes to the files' default handler
         * (MPI_ERRORS_RETURN), not to the communicator's. */
        EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        EPT_OK(MPI_Comm_set_errhandler(d, counting));
        world_eh_calls[t] = 0;
        MPI_File fh = MPI_FILE_NULL;
        rc = MPI_File_open(d, "/nonexistent-epmpi-dir/file", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        expect_err(rc, MPI_ERR_NO_SUCH_FILE, "MPI_File_open", "", "MPI_File_open of a missing file on a dup");
        SOFT_CHECK(world_eh_calls[t] == 0, "MPI_File_open's error reached the communicator's handler");
        EPT_OK(MPI_Comm_free(&d));
    }
    EPT_OK(MPI_Errhandler_free(&counting));
    int f = failures;
    EPT_CHECK(f == 0, "%d checks of the error handling failed (see above)", f);
    MPI_Finalize();
    return 0;
}
