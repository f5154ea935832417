/* Many windows alive at once (see rma_common.h for the shapes), as MPICH's
 * own test rma/window_creation keeps 1000: an endpoint window must not use
 * up more of MPICH's context ids than the processes' communicators can
 * spare (MPICH 4.0.2 has 2048; a window once cost three and the 681st
 * failed).  Then every rank holds an exclusive lock on its right
 * neighbour in all of them at once: no two ranks ask for the same lock,
 * so a lock that waits would mean two windows' lock words are one. */
#include "rma_common.h"

#define NWIN 1000

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win *win = malloc(NWIN * sizeof *win);
    long **mem = malloc(NWIN * sizeof *mem), *cells = calloc(NWIN, sizeof *cells);
    EPT_CHECK(win && mem && cells, "out of memory");

    PHASE("create");
    for (int i = 0; i < NWIN; i++) {
        if (i % 2) {
            /* 16 bytes: MPICH 4.0.2 places a segment of 8 at an offset its
             * RMA does not use (rank 1's Put lands beside it) */
            EPT_OK(MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, comm, &mem[i], &win[i]));
            *mem[i] = -1;
        } else {
            mem[i] = &cells[i];
            *mem[i] = -1;
            EPT_OK(MPI_Win_create(mem[i], sizeof(long), sizeof(long), MPI_INFO_NULL, comm, &win[i]));
        }
    }
    EPT_OK(MPI_Barrier(comm));

    PHASE("locks");
    long me = rank;
    for (int i = 0; i < NWIN; i++)
        EPT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win[i]));
    for (int i = 0; i < NWIN; i++)
        EPT_OK(MPI_Put(&me, 1, MPI_LONG, right, 0, 1, MPI_LONG, win[i]));
    for (int i = 0; i < NWIN; i++)
        EPT_OK(MPI_Win_unlock(right, win[i]));
    EPT_OK(MPI_Barrier(comm));

    PHASE("check");
    for (int i = 0; i < NWIN; i++) {
        EPT_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win[i]));
        EPT_CHECK(*mem[i] == left, "window %d: rank %d holds %ld, expected %d (its left neighbour's put)", i, rank,
                  *mem[i], left);
        EPT_OK(MPI_Win_unlock(rank, win[i]));
    }

    PHASE("free");
    for (int i = 0; i < NWIN; i++)
        EPT_OK(MPI_Win_free(&win[i]));
    free(win);
    free(mem);
    free(cells);
}

int main(int argc, char **argv) { return ept_main_classic(argc, argv, 120, body, NULL); }
