/* MPI 4.1's MPI_Request_get_status_all, _any and _some (MPICH 4.2 and
 * later; skipped where mpi.h lacks them) on endpoint requests mixed with
 * null and inactive persistent ones, in world mode:
 *
 * - while a receive is pending, _all says not complete, _any gives flag
 *   false and index MPI_UNDEFINED, _some outcount 0;
 * - once it arrived, each gives the receive's status (source, tag, count)
 *   without freeing it: the handle stays, the next call gives the same
 *   status, and MPI_Waitall then completes and frees it;
 * - an array of only null and inactive requests: _any flag true, index
 *   MPI_UNDEFINED, empty status; _some outcount MPI_UNDEFINED; _all true.
 *
 * Every rank receives from its left neighbour, which sends only after a
 * barrier that follows the first looks. */
#include "eptest.h"

#if MPI_VERSION * 10 + MPI_SUBVERSION < 41
int main(void)
{
    fprintf(stderr, "skip: this MPI (%d.%d) has no MPI_Request_get_status_all (MPI 4.1)\n", MPI_VERSION,
            MPI_SUBVERSION);
    return 77;
}
#else
static void check_status(const MPI_Status *st, int source, const char *call)
{
    int n = -1;
    MPI_Get_count(st, MPI_INT, &n);
    EPT_CHECK(st->MPI_SOURCE == source && st->MPI_TAG == 5 && n == 1, "%s: source %d tag %d count %d, expected %d 5 1",
              call, st->MPI_SOURCE, st->MPI_TAG, n, source);
}

int main(int argc, char **argv)
{
    int provided;
    watchdog_arm(60);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    ept_require_world();
#pragma omp parallel
    {
        int r, s, got = -1, flag = -1, idx = -2, outcount = -2, idxs[3];
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &s);
        int left = (r + s - 1) % s, right = (r + 1) % s, dummy = 0;
        MPI_Request reqs[3], send;
        MPI_Status sts[3], st;
        EPT_OK(MPI_Irecv(&got, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &reqs[1]));
        reqs[0] = MPI_REQUEST_NULL;
        EPT_OK(MPI_Send_init(&dummy, 1, MPI_INT, right, 6, MPI_COMM_WORLD, &reqs[2])); /* never started */

        /* Nothing is sent before everyone has looked. */
        EPT_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
        EPT_CHECK(flag == 0, "get_status_all: flag %d while the receive is pending", flag);
        EPT_OK(MPI_Request_get_status_any(3, reqs, &idx, &flag, &st));
        EPT_CHECK(flag == 0 && idx == MPI_UNDEFINED, "get_status_any: flag %d index %d while pending", flag, idx);
        EPT_OK(MPI_Request_get_status_some(3, reqs, &outcount, idxs, sts));
        EPT_CHECK(outcount == 0, "get_status_some: outcount %d while pending", outcount);
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
        EPT_OK(MPI_Isend(&r, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &send));

        do
            EPT_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
        while (!flag);
        check_status(&sts[1], left, "get_status_all");
        EPT_CHECK(sts[0].MPI_SOURCE == MPI_ANY_SOURCE && sts[2].MPI_TAG == MPI_ANY_TAG,
                  "get_status_all: null / inactive requests' statuses are not empty");
        EPT_CHECK(reqs[1] != MPI_REQUEST_NULL, "get_status_all freed the request");
        EPT_OK(MPI_Request_get_status_any(3, reqs, &idx, &flag, &st));
        EPT_CHECK(flag == 1 && idx == 1, "get_status_any: flag %d index %d once arrived", flag, idx);
        check_status(&st, left, "get_status_any");
        EPT_OK(MPI_Request_get_status_some(3, reqs, &outcount, idxs, sts));
        EPT_CHECK(outcount == 1 && idxs[0] == 1, "get_status_some: outcount %d index %d", outcount, idxs[0]);
        check_status(&sts[0], left, "get_status_some");
        EPT_CHECK(reqs[1] != MPI_REQUEST_NULL, "get_status_some freed the request");

        EPT_OK(MPI_Waitall(3, reqs, sts));
        check_status(&sts[1], left, "MPI_Waitall after the looks");
        EPT_CHECK(got == left && reqs[1] == MPI_REQUEST_NULL && reqs[2] != MPI_REQUEST_NULL,
                  "got %d (expected %d); waitall left the handles wrong", got, left);
        EPT_OK(MPI_Wait(&send, MPI_STATUS_IGNORE));

        /* Only null and inactive requests left. */
        EPT_OK(MPI_Request_get_status_any(3, reqs, &idx, &flag, &st));
        EPT_CHECK(flag == 1 && idx == MPI_UNDEFINED && st.MPI_SOURCE == MPI_ANY_SOURCE,
                  "get_status_any on inactive requests: flag %d index %d source %d", flag, idx, st.MPI_SOURCE);
        EPT_OK(MPI_Request_get_status_some(3, reqs, &outcount, idxs, sts));
        EPT_CHECK(outcount == MPI_UNDEFINED, "get_status_some on inactive requests: outcount %d", outcount);
        EPT_OK(MPI_Request_get_status_all(3, reqs, &flag, MPI_STATUSES_IGNORE));
        EPT_CHECK(flag == 1, "get_status_all on inactive requests: flag %d", flag);
        EPT_OK(MPI_Request_free(&reqs[2]));
    }
    MPI_Finalize();
    return 0;
}
#endif
