/* Concurrent MPI_Intercomm_create calls with the same tag on duplicates of
 * one communicator (MPICH's threads/comm/idup_comm_gen does this): every
 * rank starts three threads, each with a duplicate of its own; each thread
 * splits its duplicate in halves, makes an intercommunicator of them with
 * tag 99 (peer: its duplicate), merges it and checks sizes, ranks and an
 * MPI_Allreduce on both, several rounds.  The duplicates' members are the
 * same, so only their contexts tell the creations apart: before that, two
 * threads' creations met as one and hung or mixed their groups.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#include <pthread.h>

#define NT 3
#define ROUNDS 4

static void *one(void *arg)
{
    MPI_Comm dup = *(MPI_Comm *)arg, local, inter, merged;
    int r, n, lr, ln, rn, mr, mn, sum = -1;
    EPT_OK(MPI_Comm_rank(dup, &r));
    EPT_OK(MPI_Comm_size(dup, &n));
    int left = r < n / 2, half = n / 2;
    for (int round = 0; round < ROUNDS; round++) {
        EPT_OK(MPI_Comm_split(dup, left, r, &local));
        EPT_OK(MPI_Intercomm_create(local, 0, dup, left ? half : 0, 99, &inter));
        EPT_OK(MPI_Comm_rank(inter, &lr));
        EPT_OK(MPI_Comm_size(inter, &ln));
        EPT_OK(MPI_Comm_remote_size(inter, &rn));
        EPT_CHECK(ln == (left ? half : n - half) && rn == n - ln && lr == (left ? r : r - half),
                  "rank %d: the intercommunicator has rank %d of %d, remote %d", r, lr, ln, rn);
        EPT_OK(MPI_Intercomm_merge(inter, !left, &merged));
        EPT_OK(MPI_Comm_rank(merged, &mr));
        EPT_OK(MPI_Comm_size(merged, &mn));
        EPT_CHECK(mn == n && mr == r, "rank %d: merged rank %d of %d", r, mr, mn);
        EPT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, merged));
        EPT_CHECK(sum == n * (n - 1) / 2, "rank %d: sum over the merged communicator %d", r, sum);
        EPT_OK(MPI_Comm_free(&merged));
        EPT_OK(MPI_Comm_free(&inter));
        EPT_OK(MPI_Comm_free(&local));
    }
    return NULL;
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    int n;
    EPT_OK(MPI_Comm_size(comm, &n));
    EPT_CHECK(n >= 2, "needs two ranks");
    MPI_Comm dup[NT];
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        EPT_OK(MPI_Comm_dup(comm, &dup[t]));
    PHASE("three threads making intercommunicators with one tag");
    for (int t = 0; t < NT; t++)
        EPT_CHECK(pthread_create(&th[t], NULL, one, &dup[t]) == 0, "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++)
        EPT_OK(MPI_Comm_free(&dup[t]));
}

int main(int argc, char **argv) { return ept_main(argc, argv, 60, body, NULL); }
