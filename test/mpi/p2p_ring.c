/* Blocking point-to-point around a ring of endpoint ranks: MPI_Send,
 * MPI_Ssend, MPI_Rsend (only once the receive is known to be posted, after a
 * handshake) and MPI_Bsend (with MPI_Buffer_attach / MPI_Buffer_detach), for
 * sizes from 0 bytes to 1 MiB (eager and rendezvous, inside a process and
 * between processes); every byte, the status source / tag and MPI_Get_count
 * are checked.  Sends to and receives from MPI_PROC_NULL complete at once
 * with source MPI_PROC_NULL, tag MPI_ANY_TAG and count 0.  In world mode,
 * every endpoint's MPI_COMM_SELF is its own: all threads send to themselves
 * on it at once and each gets its own data.  In explicit shapes: space in
 * the attached buffer is free again once a buffered message was received.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

static const int sizes[] = {0, 1, 8, 1024, 16384, 16385, 20 * 1024, 100 * 1024, 1 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof *sizes))
#define MAXSIZE (1 << 20)
#define NMODES 4
static const char *mode_name[NMODES] = {"MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend"};

static void check_recv(const unsigned char *rbuf, int size, int src, int tag, const MPI_Status *st, int me,
                       const char *what)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    EPT_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && cnt == size,
              "rank %d, %s of %d bytes: status source %d tag %d count %d, expected %d %d %d", me, what, size,
              st->MPI_SOURCE, st->MPI_TAG, cnt, src, tag, size);
    size_t bad = first_bad(rbuf, (size_t)size, src, tag, 0);
    EPT_CHECK(bad == (size_t)size, "rank %d, %s of %d bytes from %d: byte %zu wrong", me, what, size, src, bad);
}

static void send_mode(int mode, const void *buf, int n, int dest, int tag, MPI_Comm comm)
{
    switch (mode) {
    case 0:
        EPT_OK(MPI_Send(buf, n, MPI_BYTE, dest, tag, comm));
        break;
    case 1:
        EPT_OK(MPI_Ssend(buf, n, MPI_BYTE, dest, tag, comm));
        break;
    case 2:
        EPT_OK(MPI_Rsend(buf, n, MPI_BYTE, dest, tag, comm));
        break;
    default:
        EPT_OK(MPI_Bsend(buf, n, MPI_BYTE, dest, tag, comm));
        break;
    }
}

static void check_null_status(const MPI_Status *st, int me, const char *what)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    EPT_CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && cnt == 0,
              "rank %d: %s gave source %d tag %d count %d", me, what, st->MPI_SOURCE, st->MPI_TAG, cnt);
}

static void proc_null_checks(MPI_Comm comm, int me)
{
    char b[8] = {0};
    MPI_Status st;
    PHASE("sends to and receives from MPI_PROC_NULL");
    for (int mode = 0; mode < NMODES; mode++)
        send_mode(mode, b, 8, MPI_PROC_NULL, 3, comm);
    memset(&st, 0x5a, sizeof st);
    EPT_OK(MPI_Recv(b, 8, MPI_BYTE, MPI_PROC_NULL, 3, comm, &st));
    check_null_status(&st, me, "MPI_Recv from MPI_PROC_NULL");
    memset(&st, 0x5a, sizeof st);
    EPT_OK(MPI_Recv(b, 8, MPI_BYTE, MPI_PROC_NULL, MPI_ANY_TAG, comm, &st));
    check_null_status(&st, me, "MPI_Recv from MPI_PROC_NULL with MPI_ANY_TAG");
    memset(&st, 0x5a, sizeof st);
    EPT_OK(MPI_Sendrecv(b, 8, MPI_BYTE, MPI_PROC_NULL, 4, b, 8, MPI_BYTE, MPI_PROC_NULL, 4, comm, &st));
    check_null_status(&st, me, "MPI_Sendrecv with MPI_PROC_NULL");
    for (int i = 0; i < 8; i++)
        EPT_CHECK(b[i] == 0, "rank %d: a receive from MPI_PROC_NULL wrote the buffer", me);
}

/* World mode: MPI_COMM_SELF is each endpoint's own communicator of size 1;
 * all threads use it at once with the same tag, so a mix-up between the
 * threads' MPI_COMM_SELF would deliver another rank's data. */
static void self_checks(int me)
{
    static const int ssizes[3] = {8, 1024, 100 * 1024};
    PHASE("MPI_COMM_SELF in world mode");
    for (int i = 0; i < 3; i++) {
        int size = ssizes[i], r = -1, s = -1;
        unsigned char *sb = malloc((size_t)size), *rb = malloc((size_t)size);
        MPI_Status st;
        MPI_Request q;
        EPT_CHECK(sb && rb, "out of memory");
        MPI_Comm_rank(MPI_COMM_SELF, &r);
        MPI_Comm_size(MPI_COMM_SELF, &s);
        EPT_CHECK(r == 0 && s == 1, "MPI_COMM_SELF: rank %d size %d", r, s);
        fill(sb, (size_t)size, me, 7, 1);
        EPT_OK(MPI_Sendrecv(sb, size, MPI_BYTE, 0, 7, rb, size, MPI_BYTE, 0, 7, MPI_COMM_SELF, &st));
        EPT_CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 7 && first_bad(rb, (size_t)size, me, 7, 1) == (size_t)size,
                  "rank %d: MPI_Sendrecv on MPI_COMM_SELF, %d bytes: source %d, wrong data", me, size, st.MPI_SOURCE);
        fill(sb, (size_t)size, me, 8, 2);
        EPT_OK(MPI_Irecv(rb, size, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &q));
        EPT_OK(MPI_Send(sb, size, MPI_BYTE, 0, 8, MPI_COMM_SELF));
        EPT_OK(MPI_Wait(&q, &st));
        EPT_CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 8 && first_bad(rb, (size_t)size, me, 8, 2) == (size_t)size,
                  "rank %d: MPI_Send to oneself on MPI_COMM_SELF, %d bytes: source %d tag %d, wrong data", me, size,
                  st.MPI_SOURCE, st.MPI_TAG);
        free(sb);
        free(rb);
    }
}

static void ring(MPI_Comm comm, void *arg)
{
    (void)arg;
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *sbuf = malloc(MAXSIZE), *rbuf = malloc(MAXSIZE);
    EPT_CHECK(sbuf && rbuf, "out of memory");

    proc_null_checks(comm, me);
    if (ept_world_endpoints() > 0)
        self_checks(me);

    for (int mode = 0; mode < NMODES; mode++) {
        PHASE(mode_name[mode]);
        for (int si = 0; si < NSIZES; si++) {
            int size = sizes[si], tag = 100 * mode + si;
            MPI_Status st;
            fill(sbuf, (size_t)size, me, tag, 0);
            memset(rbuf, 0xee, (size_t)size);
            if (mode == 2) {
                /* Rsend: post the receive, tell the left neighbour (which sends
                 * to us), wait for the right neighbour's go, then send. */
                MPI_Request rreq, greq;
                char go = 1, got = 0;
                EPT_OK(MPI_Irecv(rbuf, size, MPI_BYTE, left, tag, comm, &rreq));
                EPT_OK(MPI_Isend(&go, 1, MPI_CHAR, left, 9999, comm, &greq));
                EPT_OK(MPI_Recv(&got, 1, MPI_CHAR, right, 9999, comm, MPI_STATUS_IGNORE));
                EPT_CHECK(got == 1, "handshake byte %d", got);
                send_mode(mode, sbuf, size, right, tag, comm);
                EPT_OK(MPI_Wait(&greq, MPI_STATUS_IGNORE));
                EPT_OK(MPI_Wait(&rreq, &st));
            } else if (mode == 3) {
                /* Bsend completes locally: everyone sends, then receives. */
                send_mode(mode, sbuf, size, right, tag, comm);
                EPT_OK(MPI_Recv(rbuf, size, MPI_BYTE, left, tag, comm, &st));
            } else if (n == 1) {
                /* A single rank sends to itself: the receive goes first. */
                MPI_Request rreq;
                EPT_OK(MPI_Irecv(rbuf, size, MPI_BYTE, left, tag, comm, &rreq));
                send_mode(mode, sbuf, size, right, tag, comm);
                EPT_OK(MPI_Wait(&rreq, &st));
            } else if (me == 0) {
                /* A token ring: rank 0 sends first, everyone else receives
                 * first, so blocking (even synchronous) sends cannot deadlock. */
                send_mode(mode, sbuf, size, right, tag, comm);
                EPT_OK(MPI_Recv(rbuf, size, MPI_BYTE, left, tag, comm, &st));
            } else {
                EPT_OK(MPI_Recv(rbuf, size, MPI_BYTE, left, tag, comm, &st));
                send_mode(mode, sbuf, size, right, tag, comm);
            }
            check_recv(rbuf, size, left, tag, &st, me, mode_name[mode]);
        }
        EPT_OK(MPI_Barrier(comm));
    }
    free(sbuf);
    free(rbuf);
}

/* Explicit shapes (MPI_COMM_WORLD classic), at least two processes: the
 * attached buffer has room for exactly one buffered message.  On a
 * communicator with one endpoint per process, process 0 sends to process 1
 * with MPI_Bsend, process 1 receives and acknowledges on the classic
 * MPI_COMM_WORLD, and process 0 sends again once acknowledged: the previous
 * message has been received, so its space is free again, small or large. */
static void bsend_space_reuse(void)
{
    int w, ws;
    MPI_Comm_rank(MPI_COMM_WORLD, &w);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    if (ws < 2)
        return;
    PHASE("MPI_Bsend space reused once the previous message was received");
    MPI_Comm ep;
    EPT_OK(MPI_Comm_create_endpoints(MPI_COMM_WORLD, 1, MPI_INFO_NULL, &ep));
    static const int rsizes[2] = {64, 100 * 1024};
    for (int k = 0; k < 2; k++) {
        int size = rsizes[k], bs = size + MPI_BSEND_OVERHEAD, me;
        unsigned char *b = malloc((size_t)bs), *s = malloc((size_t)size), *r = malloc((size_t)size);
        char ack = 0;
        EPT_CHECK(b && s && r, "out of memory");
        EPT_OK(MPI_Buffer_attach(b, bs));
        MPI_Comm_rank(ep, &me);
        for (int i = 0; i < 10 && w < 2; i++) {
            if (w == 0) {
                MPI_Errhandler old;
                fill(s, (size_t)size, me, i, 5);
                EPT_OK(MPI_Comm_get_errhandler(ep, &old));
                EPT_OK(MPI_Comm_set_errhandler(ep, MPI_ERRORS_RETURN));
                int rc = MPI_Bsend(s, size, MPI_BYTE, 1, i, ep);
                EPT_OK(MPI_Comm_set_errhandler(ep, old));
                EPT_CHECK(rc == MPI_SUCCESS,
                          "MPI_Bsend of %d bytes, round %d: error although the attached buffer has room for it once "
                          "the previous buffered message was received (and acknowledged)",
                          size, i);
                EPT_OK(MPI_Recv(&ack, 1, MPI_CHAR, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                MPI_Status st;
                EPT_OK(MPI_Recv(r, size, MPI_BYTE, 0, i, ep, &st));
                EPT_CHECK(first_bad(r, (size_t)size, 0, i, 5) == (size_t)size, "buffered message %d: wrong data", i);
                EPT_OK(MPI_Send(&ack, 1, MPI_CHAR, 0, 77, MPI_COMM_WORLD));
            }
        }
        void *addr;
        int dsize;
        EPT_OK(MPI_Buffer_detach(&addr, &dsize));
        free(b);
        free(s);
        free(r);
    }
    EPT_OK(MPI_Comm_free(&ep));
}

int main(int argc, char **argv)
{
    int provided;
    watchdog_arm(30);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    EPT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    int T = ept_world_endpoints();
    int nlocal = local_ranks(argc, argv);
    /* Buffered sends: every local rank may have all its Bsend messages in
     * flight at once. */
    size_t per_rank = 0;
    for (int i = 0; i < NSIZES; i++)
        per_rank += (size_t)sizes[i] + MPI_BSEND_OVERHEAD;
    int bsize = (int)(per_rank * (size_t)(nlocal > 0 ? nlocal : 1));
    char *bbuf = malloc((size_t)bsize);
    EPT_CHECK(bbuf, "out of memory");
    EPT_OK(MPI_Buffer_attach(bbuf, bsize));

    run_ranks(nlocal, ring, NULL);

    PHASE("MPI_Buffer_detach");
    void *addr;
    int dsize;
    EPT_OK(MPI_Buffer_detach(&addr, &dsize));
    EPT_CHECK(addr == bbuf && dsize == bsize, "detach gave %p/%d, attached %p/%d", addr, dsize, (void *)bbuf, bsize);
    free(bbuf);
    if (T == 0)
        bsend_space_reuse();
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
