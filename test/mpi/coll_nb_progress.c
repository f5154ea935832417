/* Progress and polling of non-blocking collectives (coll_nb.h):
 *  - rank A does Ibarrier then Wait while every other rank does Ibarrier, a
 *    blocking MPI_Recv of what A sends only after its Wait, then Wait; an
 *    Ibcast (64 KiB and 8 MiB) whose root waits and then tells the others,
 *    which only then wait;
 *  - MPI_Request_get_status and MPI_Test polling: never complete before the
 *    last rank has called (it arrives late on purpose), the result is in
 *    place as soon as get_status reports completion, and the request stays
 *    valid until MPI_Wait frees it. */
#include "coll_nb.h"

/* ---- progress ----------------------------------------------------------- */

static void t_progress(MPI_Comm c, int r, int s)
{
    MPI_Request rq;
    for (int k = 0; k < 2; k++) {
        int A = k ? s - 1 : 0;
        PHASE("progress: Ibarrier, A waits while the others block in MPI_Recv");
        EPT_OK(MPI_Ibarrier(c, &rq));
        if (r == A) {
            EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            for (int q = 0; q < s; q++)
                if (q != A) {
                    int tok = 500 + q;
                    EPT_OK(MPI_Send(&tok, 1, MPI_INT, q, 77, c));
                }
        } else {
            int tok = -1;
            EPT_OK(MPI_Recv(&tok, 1, MPI_INT, A, 77, c, MPI_STATUS_IGNORE));
            EPT_CHECK(tok == 500 + r, "progress: token %d from %d", tok, A);
            EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
    }

    /* Ibcast of 64 KiB and 8 MiB: the root waits first, then tells the
     * others, which only then wait. */
    const int sizes[2] = {16384, 2 * 1024 * 1024};
    int *buf = malloc(sizeof(int) * (size_t)sizes[1]);
    EPT_CHECK(buf != NULL, "out of memory");
    for (int k = 0; k < 2; k++) {
        int n = sizes[k], root = k ? s - 1 : 1 % s;
        PHASE(k ? "progress: 8 MiB Ibcast, the root waits first" : "progress: 64 KiB Ibcast, the root waits first");
        for (int i = 0; i < n; i++)
            buf[i] = r == root ? bval(root, n, i) : -1;
        EPT_OK(MPI_Ibcast(buf, n, MPI_INT, root, c, &rq));
        if (r == root) {
            EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            for (int q = 0; q < s; q++)
                if (q != root)
                    EPT_OK(MPI_Send(&k, 1, MPI_INT, q, 78, c));
        } else {
            int tok = -1;
            EPT_OK(MPI_Recv(&tok, 1, MPI_INT, root, 78, c, MPI_STATUS_IGNORE));
            EPT_CHECK(tok == k, "progress: Ibcast token %d", tok);
            EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        for (int i = 0; i < n; i++)
            if (buf[i] != bval(root, n, i))
                EPT_CHECK(0, "Ibcast of %d ints from %d: element %d is %d, expected %d", n, root, i, buf[i],
                          bval(root, n, i));
    }
    free(buf);
}

/* ---- polling ------------------------------------------------------------ */

static void t_polling(MPI_Comm c, int r, int s)
{
    MPI_Request rq;
    MPI_Status st;
    PHASE("MPI_Request_get_status polling");
    for (int k = 0; k < 2; k++) {
        int late = k ? 0 : s - 1, in[2] = {r, 1}, out[2] = {-1, -1}, flag = 0;
        /* Only the late rank bumps the counter, once per round, just before its call. */
        if (r == late) {
            usleep(30000);
            atomic_fetch_add(&shared[1], 1);
        }
        EPT_OK(MPI_Iallreduce(in, out, 2, MPI_INT, MPI_SUM, c, &rq));
        for (;;) {
            if (k)
                EPT_OK(MPI_Test(&rq, &flag, &st));
            else
                EPT_OK(MPI_Request_get_status(rq, &flag, &st));
            if (flag) {
                long arrived = atomic_load(&shared[1]);
                EPT_CHECK(arrived >= k + 1,
                          "%s reported completion before the last rank called MPI_Iallreduce (counter %ld)",
                          k ? "MPI_Test" : "MPI_Request_get_status", arrived);
                break;
            }
            sched_yield();
        }
        /* Complete: the result is there, whichever call reported it. */
        EPT_CHECK(out[0] == s * (s - 1) / 2 && out[1] == s, "%s polling: Iallreduce gave %d %d",
                  k ? "MPI_Test" : "MPI_Request_get_status", out[0], out[1]);
        if (!k) {
            EPT_CHECK(rq != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
            EPT_OK(MPI_Request_get_status(rq, &flag, MPI_STATUS_IGNORE));
            EPT_CHECK(flag, "MPI_Request_get_status: a second look says incomplete");
            EPT_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
            EPT_CHECK(flag && rq == MPI_REQUEST_NULL, "MPI_Test after MPI_Request_get_status: flag %d", flag);
        } else {
            EPT_CHECK(rq == MPI_REQUEST_NULL, "MPI_Test left the request");
        }
        /* A null request: complete, empty status. */
        EPT_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
        EPT_CHECK(flag && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
                  "MPI_Request_get_status(MPI_REQUEST_NULL): flag %d source %d tag %d", flag, st.MPI_SOURCE,
                  st.MPI_TAG);
        int cancelled = 1;
        EPT_OK(MPI_Test_cancelled(&st, &cancelled));
        EPT_CHECK(!cancelled, "an empty status says cancelled");
    }
}

static void tests(MPI_Comm c, int r, int s)
{
    t_progress(c, r, s);
    t_polling(c, r, s);
}

int main(int argc, char **argv) { return coll_nb_main(argc, argv, tests); }
