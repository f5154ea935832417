/* Collectives whose counts do not fit in an int, through their _c forms on
 * endpoints: between threads (1x2: the exchange in one process) and
 * between processes (2x1: PMPI_Ialltoallv_c between them).
 * MPI_Alltoallv_c: rank 0 sends N > INT_MAX bytes to rank 1, nothing else
 * moves; every byte arrives.  (The other v and w collectives share the
 * exchange; coll_count_c checks their _c forms with small counts.)
 * The job needs about 10 GB of memory; the test skips (77) on a machine of
 * less than 20 GB. */
#include "eptest.h"

#include <limits.h>
#include <sys/sysinfo.h>

#define N ((MPI_Count)INT_MAX + 4099) /* bytes: over 2 GiB, and not a round number */

static unsigned char pattern(MPI_Count i) { return (unsigned char)(i * 7 + (i >> 20) + 3); }

static void check_all(const unsigned char *b, const char *what)
{
    for (MPI_Count i = 0; i < N; i++)
        if (b[i] != pattern(i))
            EPT_CHECK(0, "%s: byte %lld is %u, expected %u", what, (long long)i, b[i], pattern(i));
}

static void body(MPI_Comm comm, void *arg)
{
    int r, n;
    (void)arg;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    EPT_CHECK(n == 2, "runs with 2 ranks, not %d", n);
    MPI_Count cnt[2] = {0, 0};
    MPI_Aint dsp[2] = {0, 0};
    unsigned char *b = malloc((size_t)N), dummy = 0;
    EPT_CHECK(b, "no memory for %lld bytes", (long long)N);

    PHASE("alltoallv");
    if (r == 0)
        for (MPI_Count i = 0; i < N; i++)
            b[i] = pattern(i);
    else
        memset(b, 0, (size_t)N);
    if (r == 0)
        cnt[1] = N; /* to rank 1 */
    MPI_Count rcnt[2] = {r == 1 ? N : 0, 0};
    EPT_OK(MPI_Alltoallv_c(r == 0 ? b : &dummy, cnt, dsp, MPI_BYTE, r == 1 ? b : &dummy, rcnt, dsp, MPI_BYTE, comm));
    if (r == 1)
        check_all(b, "Alltoallv_c");

    free(b);
}

int main(int argc, char **argv)
{
    struct sysinfo si;
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (sysinfo(&si) == 0 && (double)si.totalram * si.mem_unit < 20e9) {
        fprintf(stderr, "skip: needs 20 GB of memory\n");
        MPI_Finalize();
        return 77;
    }
    watchdog_arm(300);
    run_ranks(local_ranks(argc, argv), body, NULL);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
