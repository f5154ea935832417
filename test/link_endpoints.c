/* installcheck: a program linked with -lepmpi through pkg-config runs under
 * plain mpiexec (no launcher, no LD_PRELOAD) and makes endpoints. */
#include <epmpi.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int provided, rank = -1, size = -1;
    MPI_Comm ep;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (MPI_Comm_create_endpoints(MPI_COMM_WORLD, 1, MPI_INFO_NULL, &ep) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(ep, &rank);
    MPI_Comm_size(ep, &size);
    printf("linked endpoint %d of %d\n", rank, size);
    MPI_Comm_free(&ep);
    MPI_Finalize();
    return 0;
}
