/* A buffered send is complete once MPI_Bsend returns (MPI-4.0 3.6): what
 * it sent may still travel after the program freed its communicator or
 * finalized MPI, and must still arrive whole.
 *
 * - Rounds around a ring on a duplicate of the ring's communicator: every
 *   rank buffers a 1 MiB message to its right neighbour (a rendezvous
 *   between processes), receives its left neighbour's, and frees the
 *   duplicate at once, while its own message may still be on its way.
 * - Then one more such message on the ring's communicator itself, right
 *   before MPI_Finalize without MPI_Buffer_detach (in world mode that is
 *   MPI_COMM_WORLD, whose endpoints MPI_Finalize frees).
 *
 * Under AddressSanitizer (configure --enable-sanitizers) a use of the
 * freed endpoint by the send's internal request fails the test.  Built
 * twice: p2p_lifetime with the default settings, p2p_lifetime_noshm with
 * EPMPI_SHM=0 (UCX's own transports between processes of the node instead
 * of the node inboxes).
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#define BIG (1 << 20)
#define ROUNDS 4

static void ring_bsend(MPI_Comm comm, int round)
{
    int me, n, left, right;
    ept_ring_place(comm, &me, &n, &left, &right);
    unsigned char *s = malloc(BIG), *r = malloc(BIG);
    EPT_CHECK(s && r, "out of memory");
    fill(s, BIG, me, right, round);
    EPT_OK(MPI_Bsend(s, BIG, MPI_BYTE, right, round, comm));
    free(s); /* the call is over: the message no longer needs it */
    MPI_Status st;
    EPT_OK(MPI_Recv(r, BIG, MPI_BYTE, left, round, comm, &st));
    size_t bad = first_bad(r, BIG, left, me, round);
    EPT_CHECK(bad == BIG, "rank %d, round %d: byte %zu from rank %d wrong", me, round, bad, left);
    free(r);
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Comm dup;
        PHASE("MPI_Comm_dup");
        EPT_OK(MPI_Comm_dup(comm, &dup));
        PHASE("a buffered ring on a duplicate, freed at once");
        ring_bsend(dup, round);
        EPT_OK(MPI_Comm_free(&dup));
    }
    /* Lets no earlier round's message be counted in the next. */
    EPT_OK(MPI_Barrier(comm));
}

int main(int argc, char **argv)
{
#ifdef EPT_SHM
    setenv("EPMPI_SHM", EPT_SHM, 1);
#endif
    int nlocal = ept_init(&argc, &argv, 60);
    /* Every local rank may have all its messages in the buffer at once. */
    int bsize = (ROUNDS + 1) * (BIG + MPI_BSEND_OVERHEAD) * (nlocal > 0 ? nlocal : 1);
    char *bbuf = malloc((size_t)bsize);
    EPT_CHECK(bbuf, "out of memory");
    EPT_OK(MPI_Buffer_attach(bbuf, bsize));

    run_ranks(nlocal, body, NULL);

    /* The last message goes out on the communicator that MPI_Finalize
     * takes down with it (world mode), or on MPI_COMM_WORLD. */
    PHASE("a buffered ring, then MPI_Finalize");
    if (ept_world_endpoints() > 0) {
#pragma omp parallel num_threads(nlocal)
        ring_bsend(MPI_COMM_WORLD, ROUNDS);
    } else {
        ring_bsend(MPI_COMM_WORLD, ROUNDS);
    }
    PHASE("MPI_Finalize");
    MPI_Finalize();
    free(bbuf);
    return 0;
}
