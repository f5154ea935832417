/* Persistent and request-management calls on endpoint communicators:
 * MPI_Send_init / MPI_Ssend_init / MPI_Rsend_init / MPI_Bsend_init and
 * MPI_Recv_init around a ring, started with MPI_Start and MPI_Startall and
 * reused over several iterations with new data each time (small and large
 * messages); MPI_Wait on an inactive request returns an empty status;
 * MPI_Request_free of inactive persistent requests; MPI_Cancel of a posted
 * receive that never matches (MPI_Test_cancelled true), also of a started
 * persistent receive that is then reused, and of a receive that already
 * completed (MPI_Test_cancelled false, data delivered); MPI_Request_get_status
 * (false while the message is not sent, then true with the right status,
 * leaving the request to MPI_Wait); MPI_Request_free of a pending MPI_Isend
 * (the receiver still gets the data) and of a pending MPI_Irecv (the buffer
 * still gets the data, checked after a handshake); MPI_Waitany /
 * MPI_Testany / MPI_Waitsome / MPI_Testsome ignore inactive persistent
 * requests; persistent and non-blocking operations with MPI_PROC_NULL.
 * Small sends that are over at once (possibly sharing one completed
 * handle) through MPI_Request_get_status, MPI_Cancel, MPI_Start (an error),
 * MPI_Test, MPI_Request_free and MPI_Waitany.
 * In explicit shapes (MPI_COMM_WORLD classic) also MPI_Startall
 * on an array mixing endpoint and classic persistent requests, and classic
 * inactive persistent requests in those arrays.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#define ITERS 5
#define LARGE (64 * 1024) /* bytes */
#define NMODES 4
static const char *mode_name[NMODES] = {"MPI_Send_init", "MPI_Ssend_init", "MPI_Rsend_init", "MPI_Bsend_init"};

typedef struct {
    MPI_Comm comm;
    int me, n, left, right, classic, wrank, t;
    int fails; /* soft failures: reported, counted, fatal at the end */
} ctx_t;

/* A failed check that leaves the communication pattern intact is reported
 * and counted, and the test goes on, so one run shows every broken call. */
#define SOFT_CHECK(x, cond, ...)                                                                              \
    do {                                                                                                      \
        if (!(cond)) {                                                                                        \
            fprintf(stderr, "FAIL %s:%d (thread %d): %s: ", __FILE__, __LINE__, omp_get_thread_num(), #cond); \
            fprintf(stderr, __VA_ARGS__);                                                                     \
            fprintf(stderr, "\n");                                                                            \
            (x)->fails++;                                                                                     \
        }                                                                                                     \
    } while (0)

static void check_empty(const MPI_Status *st, const char *what, int me)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    EPT_CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && cnt == 0,
              "%s: rank %d: expected an empty status, got source %d tag %d count %d", what, me, st->MPI_SOURCE,
              st->MPI_TAG, cnt);
}

static void check_msg(const char *what, int me, const MPI_Status *st, const unsigned char *b, int src, int tag,
                      int size, int a, int c)
{
    int cnt = -1;
    if (st) {
        MPI_Get_count(st, MPI_BYTE, &cnt);
        EPT_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && cnt == size,
                  "%s: rank %d: status source %d tag %d count %d, expected %d %d %d", what, me, st->MPI_SOURCE,
                  st->MPI_TAG, cnt, src, tag, size);
    }
    size_t bad = first_bad(b, (size_t)size, src, a, c);
    EPT_CHECK(bad == (size_t)size, "%s: rank %d: byte %zu of %d from %d wrong", what, me, bad, size, src);
}

/* Persistent ring: receive from the left, send to the right. */
static void ring(ctx_t *x)
{
    unsigned char *sb = malloc(LARGE), *rb = malloc(LARGE);
    char what[128];
    EPT_CHECK(sb && rb, "out of memory");
    for (int mode = 0; mode < NMODES; mode++) {
        for (int large = 0; large < 2; large++) {
            int size = large ? LARGE : 24, tag = 10 * mode + large;
            MPI_Request rq[2];
            MPI_Status st[2];
            snprintf(what, sizeof what, "%s ring, %d bytes", mode_name[mode], size);
            PHASE(what);
            EPT_OK(MPI_Recv_init(rb, size, MPI_BYTE, x->left, tag, x->comm, &rq[0]));
            switch (mode) {
            case 0:
                EPT_OK(MPI_Send_init(sb, size, MPI_BYTE, x->right, tag, x->comm, &rq[1]));
                break;
            case 1:
                EPT_OK(MPI_Ssend_init(sb, size, MPI_BYTE, x->right, tag, x->comm, &rq[1]));
                break;
            case 2:
                EPT_OK(MPI_Rsend_init(sb, size, MPI_BYTE, x->right, tag, x->comm, &rq[1]));
                break;
            default:
                EPT_OK(MPI_Bsend_init(sb, size, MPI_BYTE, x->right, tag, x->comm, &rq[1]));
                break;
            }
            /* Inactive: waits return at once with an empty status. */
            memset(st, 0x33, sizeof st);
            EPT_OK(MPI_Wait(&rq[0], &st[0]));
            check_empty(&st[0], what, x->me);
            EPT_CHECK(rq[0] != MPI_REQUEST_NULL, "%s: MPI_Wait freed an inactive persistent request", what);
            int flag = 0;
            EPT_OK(MPI_Request_get_status(rq[1], &flag, &st[1]));
            EPT_CHECK(flag, "%s: MPI_Request_get_status of an inactive request: flag false", what);
            check_empty(&st[1], what, x->me);
            for (int it = 0; it < ITERS; it++) {
                fill(sb, (size_t)size, x->me, tag, it);
                memset(rb, 0, (size_t)size);
                if (mode == 2) {
                    /* Ready mode: every receive is started before any send. */
                    EPT_OK(MPI_Start(&rq[0]));
                    EPT_OK(MPI_Barrier(x->comm));
                    EPT_OK(MPI_Start(&rq[1]));
                } else if (it % 2) {
                    EPT_OK(MPI_Startall(2, rq));
                } else {
                    EPT_OK(MPI_Start(&rq[1]));
                    EPT_OK(MPI_Start(&rq[0]));
                }
                switch (it % 3) {
                case 0:
                    EPT_OK(MPI_Waitall(2, rq, st));
                    break;
                case 1:
                    EPT_OK(MPI_Wait(&rq[0], &st[0]));
                    EPT_OK(MPI_Wait(&rq[1], &st[1]));
                    break;
                default:
                    for (int i = 0; i < 2; i++)
                        for (flag = 0; !flag;)
                            EPT_OK(MPI_Test(&rq[i], &flag, &st[i]));
                    break;
                }
                EPT_CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL,
                          "%s: completion freed a persistent request", what);
                check_msg(what, x->me, &st[0], rb, x->left, tag, size, tag, it);
                if (mode == 2)
                    EPT_OK(MPI_Barrier(x->comm)); /* the next Start of rq[0] is ours */
            }
            EPT_OK(MPI_Request_free(&rq[0]));
            EPT_OK(MPI_Request_free(&rq[1]));
            EPT_CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
            EPT_OK(MPI_Barrier(x->comm));
        }
    }
    /* MPI_PROC_NULL: persistent and non-blocking operations complete at once
     * with source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0. */
    PHASE("persistent and non-blocking operations with MPI_PROC_NULL");
    for (int it = 0; it < 2; it++) {
        MPI_Request q[4];
        MPI_Status qs[4];
        EPT_OK(MPI_Recv_init(rb, 4, MPI_BYTE, MPI_PROC_NULL, 1, x->comm, &q[0]));
        EPT_OK(MPI_Send_init(sb, 4, MPI_BYTE, MPI_PROC_NULL, 1, x->comm, &q[1]));
        EPT_OK(MPI_Irecv(rb, 4, MPI_BYTE, MPI_PROC_NULL, MPI_ANY_TAG, x->comm, &q[2]));
        EPT_OK(MPI_Issend(sb, 4, MPI_BYTE, MPI_PROC_NULL, 1, x->comm, &q[3]));
        EPT_OK(MPI_Startall(2, q));
        EPT_OK(MPI_Waitall(4, q, qs));
        for (int i = 0; i < 4; i += 2) {
            int cnt = -1;
            MPI_Get_count(&qs[i], MPI_BYTE, &cnt);
            EPT_CHECK(qs[i].MPI_SOURCE == MPI_PROC_NULL && qs[i].MPI_TAG == MPI_ANY_TAG && cnt == 0,
                      "rank %d: %s receive from MPI_PROC_NULL: source %d tag %d count %d", x->me,
                      i ? "non-blocking" : "persistent", qs[i].MPI_SOURCE, qs[i].MPI_TAG, cnt);
        }
        EPT_CHECK(q[0] != MPI_REQUEST_NULL && q[1] != MPI_REQUEST_NULL && q[2] == MPI_REQUEST_NULL &&
                      q[3] == MPI_REQUEST_NULL,
                  "rank %d: MPI_PROC_NULL requests after MPI_Waitall", x->me);
        EPT_OK(MPI_Request_free(&q[0]));
        EPT_OK(MPI_Request_free(&q[1]));
    }
    /* Never started. */
    MPI_Request r;
    EPT_OK(MPI_Send_init(sb, 4, MPI_BYTE, x->right, 1, x->comm, &r));
    EPT_OK(MPI_Request_free(&r));
    EPT_OK(MPI_Recv_init(rb, 4, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, x->comm, &r));
    EPT_OK(MPI_Request_free(&r));
    EPT_CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
    free(sb);
    free(rb);
}

static void cancels(ctx_t *x)
{
    MPI_Request r;
    MPI_Status st;
    int flag = -1, buf[8] = {0};
    PHASE("MPI_Cancel of a receive that never matches");
    EPT_OK(MPI_Irecv(buf, 8, MPI_INT, MPI_ANY_SOURCE, 31337, x->comm, &r));
    EPT_OK(MPI_Cancel(&r));
    EPT_OK(MPI_Wait(&r, &st));
    EPT_OK(MPI_Test_cancelled(&st, &flag));
    EPT_CHECK(flag, "rank %d: a cancelled unmatched MPI_Irecv: MPI_Test_cancelled false", x->me);
    EPT_CHECK(r == MPI_REQUEST_NULL, "MPI_Wait left the cancelled request");

    EPT_OK(MPI_Irecv(buf, 8, MPI_INT, x->left, 31338, x->comm, &r));
    EPT_OK(MPI_Cancel(&r));
    for (flag = 0; !flag;)
        EPT_OK(MPI_Test(&r, &flag, &st));
    EPT_OK(MPI_Test_cancelled(&st, &flag));
    EPT_CHECK(flag, "rank %d: a cancelled MPI_Irecv (completed by MPI_Test): MPI_Test_cancelled false", x->me);

    /* A persistent receive: started, cancelled, then started again and used. */
    PHASE("MPI_Cancel of a persistent receive, then reuse");
    EPT_OK(MPI_Recv_init(buf, 8, MPI_INT, x->left, 31339, x->comm, &r));
    EPT_OK(MPI_Start(&r));
    EPT_OK(MPI_Cancel(&r));
    EPT_OK(MPI_Wait(&r, &st));
    EPT_OK(MPI_Test_cancelled(&st, &flag));
    EPT_CHECK(flag, "rank %d: a cancelled persistent receive: MPI_Test_cancelled false", x->me);
    EPT_CHECK(r != MPI_REQUEST_NULL, "MPI_Wait freed a persistent request");
    EPT_OK(MPI_Barrier(x->comm)); /* nobody sends tag 31339 before everyone cancelled */
    EPT_OK(MPI_Start(&r));
    int out[8];
    for (int i = 0; i < 8; i++)
        out[i] = x->me * 100 + i;
    EPT_OK(MPI_Send(out, 8, MPI_INT, x->right, 31339, x->comm));
    EPT_OK(MPI_Wait(&r, &st));
    EPT_OK(MPI_Test_cancelled(&st, &flag));
    EPT_CHECK(!flag, "rank %d: a reused persistent receive is reported cancelled", x->me);
    EPT_CHECK(st.MPI_SOURCE == x->left && st.MPI_TAG == 31339 && buf[7] == x->left * 100 + 7,
              "rank %d: reused persistent receive: source %d tag %d buf[7] %d", x->me, st.MPI_SOURCE, st.MPI_TAG,
              buf[7]);
    EPT_OK(MPI_Request_free(&r));

    /* Cancel after completion: no effect. */
    PHASE("MPI_Cancel of a completed receive");
    memset(buf, 0, sizeof buf);
    EPT_OK(MPI_Irecv(buf, 8, MPI_INT, x->left, 31340, x->comm, &r));
    EPT_OK(MPI_Barrier(x->comm));
    EPT_OK(MPI_Send(out, 8, MPI_INT, x->right, 31340, x->comm));
    for (flag = 0; !flag;)
        EPT_OK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
    EPT_OK(MPI_Cancel(&r));
    EPT_OK(MPI_Wait(&r, &st));
    EPT_OK(MPI_Test_cancelled(&st, &flag));
    EPT_CHECK(!flag, "rank %d: a receive cancelled after it completed is reported cancelled", x->me);
    EPT_CHECK(st.MPI_SOURCE == x->left && buf[7] == x->left * 100 + 7, "rank %d: source %d buf[7] %d", x->me,
              st.MPI_SOURCE, buf[7]);
    EPT_OK(MPI_Barrier(x->comm));
}

static void get_status(ctx_t *x)
{
    for (int large = 0; large < 2; large++) {
        int size = large ? LARGE : 40, flag = -1, tag = 400 + large;
        unsigned char *sb = malloc((size_t)size), *rb = malloc((size_t)size);
        MPI_Request r, s;
        MPI_Status st;
        EPT_CHECK(sb && rb, "out of memory");
        PHASE(large ? "MPI_Request_get_status, large" : "MPI_Request_get_status, small");
        fill(sb, (size_t)size, x->me, tag, 9);
        EPT_OK(MPI_Irecv(rb, size, MPI_BYTE, x->left, tag, x->comm, &r));
        EPT_OK(MPI_Request_get_status(r, &flag, &st));
        EPT_CHECK(!flag, "rank %d: MPI_Request_get_status true before the message was sent", x->me);
        EPT_OK(MPI_Barrier(x->comm));
        EPT_OK(MPI_Isend(sb, size, MPI_BYTE, x->right, tag, x->comm, &s));
        for (flag = 0; !flag;)
            EPT_OK(MPI_Request_get_status(r, &flag, &st));
        EPT_CHECK(r != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
        check_msg("MPI_Request_get_status", x->me, &st, rb, x->left, tag, size, tag, 9);
        memset(&st, 0, sizeof st);
        EPT_OK(MPI_Wait(&r, &st));
        EPT_CHECK(r == MPI_REQUEST_NULL, "MPI_Wait left the request");
        check_msg("MPI_Wait after MPI_Request_get_status", x->me, &st, rb, x->left, tag, size, tag, 9);
        for (flag = 0; !flag;)
            EPT_OK(MPI_Request_get_status(s, &flag, MPI_STATUS_IGNORE));
        EPT_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        EPT_OK(MPI_Barrier(x->comm));
        free(sb);
        free(rb);
    }
}

/* MPI_Request_free of requests that are still pending. */
static void free_pending(ctx_t *x)
{
    static const int sizes[3] = {16, 20000, 1 << 20};
    for (int k = 0; k < 3; k++) {
        int size = sizes[k], tag = 500 + k;
        unsigned char *sb = malloc((size_t)size), *rb = malloc((size_t)size);
        MPI_Request r;
        MPI_Status st;
        EPT_CHECK(sb && rb, "out of memory");

        PHASE("MPI_Request_free of a pending MPI_Isend");
        fill(sb, (size_t)size, x->me, tag, 1);
        EPT_OK(MPI_Isend(sb, size, MPI_BYTE, x->right, tag, x->comm, &r));
        EPT_OK(MPI_Request_free(&r));
        EPT_CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
        EPT_OK(MPI_Recv(rb, size, MPI_BYTE, x->left, tag, x->comm, &st));
        check_msg("freed MPI_Isend", x->me, &st, rb, x->left, tag, size, tag, 1);
        EPT_OK(MPI_Barrier(x->comm)); /* every freed send has been received: sb may go */

        PHASE("MPI_Request_free of a pending MPI_Issend");
        fill(sb, (size_t)size, x->me, tag, 2);
        EPT_OK(MPI_Issend(sb, size, MPI_BYTE, x->right, tag, x->comm, &r));
        EPT_OK(MPI_Request_free(&r));
        EPT_OK(MPI_Recv(rb, size, MPI_BYTE, x->left, tag, x->comm, &st));
        check_msg("freed MPI_Issend", x->me, &st, rb, x->left, tag, size, tag, 2);
        EPT_OK(MPI_Barrier(x->comm));

        PHASE("MPI_Request_free of a pending MPI_Irecv");
        memset(rb, 0, (size_t)size);
        EPT_OK(MPI_Irecv(rb, size, MPI_BYTE, x->left, tag, x->comm, &r));
        EPT_OK(MPI_Request_free(&r));
        EPT_CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
        EPT_OK(MPI_Barrier(x->comm)); /* every receive is posted and freed */
        fill(sb, (size_t)size, x->me, tag, 3);
        /* The data, then a synchronous "done" behind it: the freed receive
         * matched the data before "done" can match. */
        EPT_OK(MPI_Send(sb, size, MPI_BYTE, x->right, tag, x->comm));
        MPI_Request done;
        EPT_OK(MPI_Issend(NULL, 0, MPI_BYTE, x->right, tag + 50, x->comm, &done));
        EPT_OK(MPI_Recv(NULL, 0, MPI_BYTE, x->left, tag + 50, x->comm, MPI_STATUS_IGNORE));
        EPT_OK(MPI_Wait(&done, MPI_STATUS_IGNORE));
        EPT_OK(MPI_Barrier(x->comm));
        /* The standard gives no completion point for a freed receive: allow
         * it a few seconds to land, driving progress meanwhile. */
        double t0 = MPI_Wtime();
        size_t bad;
        while ((bad = first_bad(rb, (size_t)size, x->left, tag, 3)) != (size_t)size && MPI_Wtime() - t0 < 5) {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, 99999, x->comm, &flag, MPI_STATUS_IGNORE);
            usleep(1000);
        }
        EPT_CHECK(bad == (size_t)size, "rank %d: freed MPI_Irecv of %d bytes: byte %zu never arrived", x->me, size,
                  bad);
        EPT_OK(MPI_Barrier(x->comm));
        free(sb);
        free(rb);
    }
}

/* MPI_Waitany / MPI_Testany / MPI_Waitsome / MPI_Testsome skip inactive
 * persistent requests; with_classic adds a classic inactive one. */
static void inactive_in_arrays(ctx_t *x, int with_classic)
{
    int sb[4] = {1, 2, 3, 4}, rb[4], ib[4], cb[4];
    MPI_Request a[5];
    MPI_Status st;
    PHASE(with_classic ? "inactive classic persistent requests in Waitany/Testany/Waitsome/Testsome"
                       : "inactive persistent requests in Waitany/Testany/Waitsome/Testsome");
    EPT_OK(MPI_Send_init(sb, 4, MPI_INT, x->right, 600, x->comm, &a[0])); /* never started */
    EPT_OK(MPI_Recv_init(ib, 4, MPI_INT, x->left, 601, x->comm, &a[2]));
    /* a[2] runs once (to completion): inactive again afterwards. */
    EPT_OK(MPI_Start(&a[2]));
    EPT_OK(MPI_Send(sb, 4, MPI_INT, x->right, 601, x->comm));
    EPT_OK(MPI_Wait(&a[2], MPI_STATUS_IGNORE));
    a[3] = MPI_REQUEST_NULL;
    a[4] = MPI_REQUEST_NULL;
    if (with_classic)
        EPT_OK(MPI_Send_init(cb, 4, MPI_INT, x->wrank, 7000 + x->t, MPI_COMM_WORLD, &a[4]));
    for (int how = 0; how < 4; how++) {
        int idx = -5, flag = 0, out = -5, idxs[5];
        MPI_Status sts[5];
        EPT_OK(MPI_Irecv(rb, 4, MPI_INT, x->left, 602 + how, x->comm, &a[1]));
        EPT_OK(MPI_Send(sb, 4, MPI_INT, x->right, 602 + how, x->comm));
        const char *call = how == 0   ? "MPI_Waitany"
                           : how == 1 ? "MPI_Testany"
                           : how == 2 ? "MPI_Waitsome"
                                      : "MPI_Testsome";
        switch (how) {
        case 0:
            EPT_OK(MPI_Waitany(5, a, &idx, &st));
            SOFT_CHECK(x, idx == 1, "rank %d: MPI_Waitany returned index %d: only request 1 is active%s", x->me, idx,
                       idx == 4 ? " (4 is an inactive classic persistent request)" : "");
            break;
        case 1:
            do
                EPT_OK(MPI_Testany(5, a, &idx, &flag, &st));
            while (!flag);
            SOFT_CHECK(x, idx == 1, "rank %d: MPI_Testany returned index %d: only request 1 is active%s", x->me, idx,
                       idx == 4 ? " (4 is an inactive classic persistent request)" : "");
            break;
        case 2:
            EPT_OK(MPI_Waitsome(5, a, &out, idxs, sts));
            SOFT_CHECK(x, out == 1 && idxs[0] == 1,
                       "rank %d: MPI_Waitsome: outcount %d, indices %d %d: only request 1 "
                       "is active",
                       x->me, out, out > 0 ? idxs[0] : -1, out > 1 ? idxs[1] : -1);
            break;
        default:
            do
                EPT_OK(MPI_Testsome(5, a, &out, idxs, sts));
            while (out == 0);
            SOFT_CHECK(x, out == 1 && idxs[0] == 1,
                       "rank %d: MPI_Testsome: outcount %d, indices %d %d: only request 1 "
                       "is active",
                       x->me, out, out > 0 ? idxs[0] : -1, out > 1 ? idxs[1] : -1);
            break;
        }
        /* After a wrong answer the receive may still be pending. */
        if (a[1] != MPI_REQUEST_NULL)
            EPT_OK(MPI_Wait(&a[1], MPI_STATUS_IGNORE));
        EPT_CHECK(rb[3] == 4, "rank %d: the active receive got %d", x->me, rb[3]);
        /* Nothing active is left. */
        switch (how) {
        case 0:
            EPT_OK(MPI_Waitany(5, a, &idx, &st));
            break;
        case 1:
            EPT_OK(MPI_Testany(5, a, &idx, &flag, &st));
            SOFT_CHECK(x, flag, "rank %d: MPI_Testany with no active request: flag false", x->me);
            break;
        case 2:
            EPT_OK(MPI_Waitsome(5, a, &out, idxs, sts));
            idx = out;
            break;
        default:
            EPT_OK(MPI_Testsome(5, a, &out, idxs, sts));
            idx = out;
            break;
        }
        SOFT_CHECK(x, idx == MPI_UNDEFINED, "rank %d: %s with no active request returned %s %d, not MPI_UNDEFINED",
                   x->me, call, how < 2 ? "index" : "outcount", idx);
        EPT_CHECK(a[0] != MPI_REQUEST_NULL && a[2] != MPI_REQUEST_NULL && (!with_classic || a[4] != MPI_REQUEST_NULL),
                  "rank %d: an inactive persistent request was freed", x->me);
    }
    EPT_OK(MPI_Request_free(&a[0]));
    EPT_OK(MPI_Request_free(&a[2]));
    if (with_classic)
        EPT_OK(MPI_Request_free(&a[4]));
    EPT_OK(MPI_Barrier(x->comm));
}

/* Small sends to an endpoint of this process are over before MPI_Isend
 * returns and may share one completed handle: every request call must
 * treat each copy as a request of its own.  MPI_Start of such a
 * (non-persistent) request is an error of class MPI_ERR_REQUEST, raised
 * on the caller's MPI_COMM_WORLD (main() makes the handler return). */
static void sends_over_at_once(ctx_t *x)
{
    enum { N = 8 };
    int out[N], in[N];
    MPI_Request h[N];
    MPI_Status st;
    int flag = 0, idx, seen[N] = {0};
    PHASE("requests of small sends that are over at once");
    for (int i = 0; i < N; i++) {
        out[i] = x->me * 100 + i;
        EPT_OK(MPI_Isend(&out[i], 1, MPI_INT, x->right, 800, x->comm, &h[i]));
    }
    for (flag = 0; !flag;)
        EPT_OK(MPI_Request_get_status(h[0], &flag, &st));
    EPT_OK(MPI_Test_cancelled(&st, &flag));
    SOFT_CHECK(x, !flag && h[0] != MPI_REQUEST_NULL, "rank %d: MPI_Request_get_status of a send", x->me);
    EPT_OK(MPI_Wait(&h[0], &st));
    EPT_OK(MPI_Cancel(&h[1]));
    EPT_OK(MPI_Wait(&h[1], &st));
    EPT_OK(MPI_Test_cancelled(&st, &flag));
    SOFT_CHECK(x, !flag && h[1] == MPI_REQUEST_NULL, "rank %d: a send is reported cancelled", x->me);
    MPI_Errhandler old;
    EPT_OK(MPI_Comm_get_errhandler(x->comm, &old));
    EPT_OK(MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN));
    int rc = MPI_Start(&h[2]), cls = -1;
    MPI_Error_class(rc, &cls);
    SOFT_CHECK(x, cls == MPI_ERR_REQUEST && h[2] != MPI_REQUEST_NULL,
               "rank %d: MPI_Start of a non-persistent send: class %d", x->me, cls);
    EPT_OK(MPI_Comm_set_errhandler(x->comm, old));
    if (old != MPI_ERRORS_ARE_FATAL && old != MPI_ERRORS_RETURN)
        EPT_OK(MPI_Errhandler_free(&old));
    EPT_OK(MPI_Test(&h[2], &flag, MPI_STATUS_IGNORE));
    SOFT_CHECK(x, flag && h[2] == MPI_REQUEST_NULL, "rank %d: MPI_Test of a completed send", x->me);
    EPT_OK(MPI_Request_free(&h[3]));
    SOFT_CHECK(x, h[3] == MPI_REQUEST_NULL, "rank %d: MPI_Request_free left the handle", x->me);
    for (int k = 4; k < N; k++) {
        EPT_OK(MPI_Waitany(N, h, &idx, MPI_STATUS_IGNORE));
        SOFT_CHECK(x, idx >= 4 && idx < N && !seen[idx]++ && h[idx] == MPI_REQUEST_NULL,
                   "rank %d: MPI_Waitany gave index %d", x->me, idx);
    }
    EPT_OK(MPI_Waitany(N, h, &idx, MPI_STATUS_IGNORE));
    SOFT_CHECK(x, idx == MPI_UNDEFINED, "rank %d: MPI_Waitany on null requests gave index %d", x->me, idx);
    for (int i = 0; i < N; i++)
        EPT_OK(MPI_Recv(&in[i], 1, MPI_INT, x->left, 800, x->comm, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        SOFT_CHECK(x, in[i] == x->left * 100 + i, "rank %d: message %d is %d", x->me, i, in[i]);
    EPT_OK(MPI_Barrier(x->comm));
}

/* Explicit shapes: MPI_Startall / MPI_Waitall over endpoint and classic
 * persistent requests together (classic ones to this process on
 * MPI_COMM_WORLD). */
static void mixed_startall(ctx_t *x)
{
    int es[6], er[6], cs[6], cr[6];
    MPI_Request a[4];
    MPI_Status st[4];
    PHASE("MPI_Startall over endpoint and classic persistent requests");
    EPT_OK(MPI_Recv_init(er, 6, MPI_INT, x->left, 700, x->comm, &a[0]));
    EPT_OK(MPI_Recv_init(cr, 6, MPI_INT, x->wrank, 7100 + x->t, MPI_COMM_WORLD, &a[1]));
    EPT_OK(MPI_Send_init(es, 6, MPI_INT, x->right, 700, x->comm, &a[2]));
    EPT_OK(MPI_Send_init(cs, 6, MPI_INT, x->wrank, 7100 + x->t, MPI_COMM_WORLD, &a[3]));
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < 6; i++) {
            es[i] = x->me * 1000 + it * 10 + i;
            cs[i] = -(x->t * 1000 + it * 10 + i);
        }
        EPT_OK(MPI_Startall(4, a));
        EPT_OK(MPI_Waitall(4, a, st));
        for (int i = 0; i < 6; i++) {
            EPT_CHECK(er[i] == x->left * 1000 + it * 10 + i, "rank %d: endpoint persistent receive: int %d is %d",
                      x->me, i, er[i]);
            EPT_CHECK(cr[i] == -(x->t * 1000 + it * 10 + i), "rank %d: classic persistent receive: int %d is %d", x->me,
                      i, cr[i]);
        }
        EPT_CHECK(st[0].MPI_SOURCE == x->left && st[1].MPI_SOURCE == x->wrank && st[1].MPI_TAG == 7100 + x->t,
                  "rank %d: statuses: endpoint source %d, classic source %d tag %d", x->me, st[0].MPI_SOURCE,
                  st[1].MPI_SOURCE, st[1].MPI_TAG);
    }
    for (int i = 0; i < 4; i++)
        EPT_OK(MPI_Request_free(&a[i]));
    EPT_OK(MPI_Barrier(x->comm));
}

static void persistent(MPI_Comm comm, void *arg)
{
    ctx_t x = {.comm = comm};
    x.classic = *(int *)arg;
    x.t = omp_get_thread_num();
    ept_ring_place(comm, &x.me, &x.n, &x.left, &x.right);
    if (x.classic)
        MPI_Comm_rank(MPI_COMM_WORLD, &x.wrank);
    ring(&x);
    cancels(&x);
    get_status(&x);
    free_pending(&x);
    sends_over_at_once(&x);
    inactive_in_arrays(&x, 0);
    if (x.classic) {
        mixed_startall(&x);
        inactive_in_arrays(&x, 1);
    }
    EPT_CHECK(x.fails == 0, "rank %d: %d checks failed (see above)", x.me, x.fails);
}

int main(int argc, char **argv)
{
    int nlocal = ept_init(&argc, &argv, 30);
    int classic = ept_world_endpoints() == 0;
    /* MPI_Bsend_init ring: a rank may start its next send before its right
     * neighbour received the previous one, so up to ITERS messages of one
     * rank can be in the buffer at once. */
    int bsize = ITERS * (LARGE + 24 + 2 * MPI_BSEND_OVERHEAD) * (nlocal > 0 ? nlocal : 1);
    char *bbuf = malloc((size_t)bsize);
    EPT_CHECK(bbuf, "out of memory");
    EPT_OK(MPI_Buffer_attach(bbuf, bsize));
    if (classic) /* errors on no communicator (sends_over_at_once) */
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    run_ranks(nlocal, persistent, &classic);
    PHASE("MPI_Buffer_detach");
    void *addr;
    int dsize;
    EPT_OK(MPI_Buffer_detach(&addr, &dsize));
    free(bbuf);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
