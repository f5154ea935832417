/* Thousands of endpoint communicators created and freed in a loop (the
 * project's one such loop): 5000 rounds of MPI_Comm_dup (every other round
 * also an MPI_Comm_split of the dup, every hundredth an intercommunicator
 * and its merge), each used once, then freed.  Fails if MPICH's
 * communicator space (2048 context ids) runs out, as it would if dups or
 * splits leaked a process-level communicator each, if a round's message goes
 * astray, or if the resident size grows by more than 8 MiB after the first
 * 200 rounds (not checked under AddressSanitizer). */
#include "eptest.h"

#define ROUNDS 5000

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    int rank, size;
    long base = 0;
    EPT_OK(MPI_Comm_rank(comm, &rank));
    EPT_OK(MPI_Comm_size(comm, &size));
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Comm d;
        PHASE("dup");
        EPT_OK(MPI_Comm_dup(comm, &d));
        int v = rank + i, got = -1;
        EPT_OK(MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, i, &got, 1, MPI_INT, (rank + size - 1) % size, i, d,
                            MPI_STATUS_IGNORE));
        EPT_CHECK(got == (rank + size - 1) % size + i, "round %d: got %d", i, got);
        if (i % 2 == 0) {
            MPI_Comm s;
            PHASE("split");
            EPT_OK(MPI_Comm_split(d, rank % 2, -rank, &s));
            EPT_OK(MPI_Barrier(s));
            if (i % 100 == 0 && size > 1) {
                MPI_Comm ic, m;
                PHASE("intercomm");
                /* Keys -rank: each group's leader is its largest rank. */
                int odd_leader = size % 2 ? size - 2 : size - 1, even_leader = size % 2 ? size - 1 : size - 2;
                EPT_OK(MPI_Intercomm_create(s, 0, d, rank % 2 ? even_leader : odd_leader, i, &ic));
                EPT_OK(MPI_Intercomm_merge(ic, rank % 2, &m));
                EPT_OK(MPI_Comm_free(&m));
                EPT_OK(MPI_Comm_free(&ic));
            }
            EPT_OK(MPI_Comm_free(&s));
        }
        EPT_OK(MPI_Comm_free(&d));
        if (i == 200)
            base = rss_kib();
    }
    /* AddressSanitizer holds freed memory in quarantine: no size check. */
    long now = getenv("ASAN_OPTIONS") ? base : rss_kib();
    EPT_CHECK(base <= 0 || now - base < 8192, "resident size grew from %ld KiB to %ld KiB", base, now);
}

int main(int argc, char **argv) { return ept_main(argc, argv, 120, body, NULL); }
