/* Environment settings seen end to end: the wait policy given at build time
 * (EPT_WAIT: spin, yield or sleep) runs an oversubscribed ring and barrier
 * to completion, and EPMPI_VERBOSE=1 prints one settings line per process
 * at MPI_Init naming the version, world mode, endpoint count and policy. */
#include "eptest.h"

int main(int argc, char **argv)
{
    int T = ept_require_world();
    char line[1024], want[128];
    setenv("EPMPI_WAIT", EPT_WAIT, 1);
    setenv("EPMPI_VERBOSE", "1", 1);
    watchdog_arm(60);
    ept_init_caught(&argc, &argv, line, sizeof line);
    snprintf(want, sizeof want, "world mode on, %d endpoints, threads openmp, OpenMP threads %d, wait %s", T, T,
             EPT_WAIT);
    EPT_CHECK(strstr(line, "epmpi " EPMPI_VERSION ": process") && strstr(line, want) &&
                  (strstr(line, "MPICH") || strstr(line, "Open MPI")),
              "EPMPI_VERBOSE line '%s' lacks '%s'", line, want);
#pragma omp parallel
    {
        int r, s, got = -1;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &s);
        for (int i = 0; i < 200; i++) {
            EPT_OK(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % s, i, &got, 1, MPI_INT, (r + s - 1) % s, i, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
            EPT_CHECK(got == (r + s - 1) % s, "round %d got %d", i, got);
            if (i % 20 == 0)
                EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    MPI_Finalize();
    return 0;
}
