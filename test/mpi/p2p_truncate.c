/* A receive too short for its message fails with MPI_ERR_TRUNCATE, and
 * its status still names the message's source and tag (MPI-4.0 3.2.5),
 * whatever the receive's own pattern: a given source or MPI_ANY_SOURCE,
 * a given tag or MPI_ANY_TAG; blocking (which epmpi may post in UCX
 * itself) and non-blocking; posted before the message arrives or after;
 * for an eager size and two rendezvous sizes.  (What the buffer then
 * holds, MPI leaves open: UCX writes nothing there.)
 *
 * Every rank sends to its right neighbour and receives from its left, on
 * a duplicate of the ring's communicator with MPI_ERRORS_RETURN; a second
 * duplicate carries the handshakes, which no wildcard of the first can
 * take.  Built twice: p2p_truncate with the default settings,
 * p2p_truncate_noshm with EPMPI_SHM=0 (between processes of the node,
 * UCX's tag matching instead of the node inboxes).
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

static const int sizes[] = {64, 100 * 1024, 1 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof *sizes))
#define ROOM 16 /* bytes the receive has */

/* One truncated message from left to me, received with the given
 * patterns; `early`: the receive is posted before the message is sent
 * (else the sender goes first). */
static void one(MPI_Comm comm, MPI_Comm ctl, int size, int any_source, int any_tag, int blocking, int early, int tag)
{
    int me, n, left, right;
    ept_ring_place(comm, &me, &n, &left, &right);
    unsigned char *s = malloc((size_t)size), r[ROOM];
    EPT_CHECK(s, "out of memory");
    fill(s, (size_t)size, me, right, tag);
    char go = 0, word = 0;
    MPI_Request sreq, rreq = MPI_REQUEST_NULL, wreq;
    MPI_Status st;
    int src = any_source ? MPI_ANY_SOURCE : left, tg = any_tag ? MPI_ANY_TAG : tag, rc;
    if (early) {
        /* The receiver posts (a blocking one as good as: it is about to),
         * then tells its sender to go. */
        if (!blocking)
            EPT_OK(MPI_Irecv(r, ROOM, MPI_BYTE, src, tg, comm, &rreq));
        EPT_OK(MPI_Isend(&word, 1, MPI_BYTE, left, 0, ctl, &wreq));
        EPT_OK(MPI_Recv(&go, 1, MPI_BYTE, right, 0, ctl, MPI_STATUS_IGNORE));
        EPT_OK(MPI_Isend(s, size, MPI_BYTE, right, tag, comm, &sreq));
    } else {
        /* The sender goes first, then says so: the message has likely
         * arrived when the word has. */
        EPT_OK(MPI_Isend(s, size, MPI_BYTE, right, tag, comm, &sreq));
        EPT_OK(MPI_Isend(&word, 1, MPI_BYTE, right, 0, ctl, &wreq));
        EPT_OK(MPI_Recv(&go, 1, MPI_BYTE, left, 0, ctl, MPI_STATUS_IGNORE));
    }
    memset(&st, 0x5a, sizeof st);
    if (blocking)
        rc = MPI_Recv(r, ROOM, MPI_BYTE, src, tg, comm, &st);
    else if (rreq != MPI_REQUEST_NULL)
        rc = MPI_Wait(&rreq, &st);
    else {
        EPT_OK(MPI_Irecv(r, ROOM, MPI_BYTE, src, tg, comm, &rreq));
        rc = MPI_Wait(&rreq, &st);
    }
    int cls = -1;
    MPI_Error_class(rc, &cls);
    const char *how = blocking ? "MPI_Recv" : "MPI_Irecv";
    EPT_CHECK(cls == MPI_ERR_TRUNCATE, "rank %d, %s of %d bytes into %d (source %d, tag %d, %s): class %d, not %d", me,
              how, size, ROOM, src, tg, early ? "posted first" : "posted after", cls, MPI_ERR_TRUNCATE);
    EPT_CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag,
              "rank %d, truncated %s of %d bytes (source %d, tag %d, %s): status source %d tag %d, expected %d %d", me,
              how, size, src, tg, early ? "posted first" : "posted after", st.MPI_SOURCE, st.MPI_TAG, left, tag);
    EPT_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    EPT_OK(MPI_Wait(&wreq, MPI_STATUS_IGNORE));
    free(s);
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    MPI_Comm d, ctl;
    EPT_OK(MPI_Comm_dup(comm, &d));
    EPT_OK(MPI_Comm_dup(comm, &ctl));
    EPT_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    int tag = 1;
    for (int i = 0; i < NSIZES; i++)
        for (int way = 0; way < 16; way++) {
            PHASE("a truncated receive");
            one(d, ctl, sizes[i], way & 1, way >> 1 & 1, way >> 2 & 1, way >> 3 & 1, tag++);
        }
    EPT_OK(MPI_Comm_free(&ctl));
    EPT_OK(MPI_Comm_free(&d));
}

int main(int argc, char **argv)
{
#ifdef EPT_SHM
    setenv("EPMPI_SHM", EPT_SHM, 1);
#endif
    return ept_main(argc, argv, 60, body, NULL);
}
