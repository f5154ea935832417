/* The epmpi demo: an ordinary MPI+OpenMP program.  Run under
 * `epmpiexec -n P -t T`, every OpenMP thread is its own rank of
 * MPI_COMM_WORLD; the ranks pass a token around a ring and sum their ranks. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
#pragma omp parallel
    {
        int rank, size, token, sum;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        /* A ring: rank 0 starts the token, everyone adds one. */
        if (rank == 0) {
            token = 0;
            if (size > 1) {
                MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        } else {
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
        }
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        const char *proc = getenv("PMI_RANK"); /* MPICH's launcher; Open MPI's: */
        proc = proc ? proc : getenv("OMPI_COMM_WORLD_RANK");
        printf("process %s, OpenMP thread %d: rank %d of %d in MPI_COMM_WORLD (token %d, sum of ranks %d)\n",
               proc ? proc : "?", omp_get_thread_num(), rank, size, token, sum);
    }
    MPI_Finalize();
    return 0;
}
