/* A wait on one non-blocking collective moves the others on (MPI-4.0
 * 2.9, progress): on two duplicates A and B of the communicator, the even
 * ranks start MPI_Comm_idup of A, then of B, and wait for A's first; the
 * odd ranks start B's, then A's, and wait for B's first.  Each idup takes
 * several steps between the processes; a process waiting for its first
 * must still take the steps of its second, which the others wait for
 * (MPICH's comm/comm_idup_overlap in world mode hung until epmpi's waits
 * drove every running collective).  Then the same with MPI_Iallreduce,
 * every result checked, and the new communicators used.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#define ROUNDS 20

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    int me, n, left, right;
    ept_ring_place(comm, &me, &n, &left, &right);
    MPI_Comm ab[2], dup[2];
    EPT_OK(MPI_Comm_dup(comm, &ab[0]));
    EPT_OK(MPI_Comm_dup(comm, &ab[1]));
    int first = me % 2, second = 1 - first;
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Request rq[2];
        PHASE("MPI_Comm_idup in crossed orders");
        EPT_OK(MPI_Comm_idup(ab[first], &dup[first], &rq[first]));
        EPT_OK(MPI_Comm_idup(ab[second], &dup[second], &rq[second]));
        EPT_OK(MPI_Wait(&rq[first], MPI_STATUS_IGNORE));
        EPT_OK(MPI_Wait(&rq[second], MPI_STATUS_IGNORE));
        PHASE("MPI_Iallreduce in crossed orders");
        int in[2] = {me + round, 2 * me}, out[2] = {-1, -1};
        EPT_OK(MPI_Iallreduce(&in[first], &out[first], 1, MPI_INT, MPI_SUM, dup[first], &rq[first]));
        EPT_OK(MPI_Iallreduce(&in[second], &out[second], 1, MPI_INT, MPI_SUM, dup[second], &rq[second]));
        EPT_OK(MPI_Wait(&rq[first], MPI_STATUS_IGNORE));
        EPT_OK(MPI_Wait(&rq[second], MPI_STATUS_IGNORE));
        int want0 = n * (n - 1) / 2 + n * round, want1 = n * (n - 1);
        EPT_CHECK(out[0] == want0 && out[1] == want1, "rank %d, round %d: sums %d and %d, expected %d and %d", me,
                  round, out[0], out[1], want0, want1);
        EPT_OK(MPI_Comm_free(&dup[0]));
        EPT_OK(MPI_Comm_free(&dup[1]));
    }
    EPT_OK(MPI_Comm_free(&ab[0]));
    EPT_OK(MPI_Comm_free(&ab[1]));
}

int main(int argc, char **argv) { return ept_main(argc, argv, 60, body, NULL); }
