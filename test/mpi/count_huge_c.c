/* Counts beyond INT_MAX in the large-count (_c) forms on endpoints: NB >
 * INT_MAX bytes between two ranks, in one process (1x2: the copy between
 * threads and the exchange in shared memory) and in two (2:1,1: epmpi's
 * transport, and MPICH's large-count all-to-all between the processes).
 * Rank 0 sends, rank 1 receives; every 4096th byte and the last are
 * checked, with the count the status reports:
 *   send       MPI_Send_c / MPI_Recv_c (a count becomes one element of a
 *              type of its elements);
 *   bcast      MPI_Bcast_c from rank 0;
 *   alltoallv  MPI_Alltoallv_c (per-rank blocks become derived types);
 *   gatherv    MPI_Gatherv_c at root 1 with sendcount NB at rank 0;
 *   ialltoallw MPI_Ialltoallw_c with a block of a type made by
 *              MPI_Type_vector_c (large-count constructors have no int
 *              envelope: MPICH fails that query), freed while in flight;
 *   reductions MPI_Ireduce_scatter_c with a block beyond INT_MAX (1x2),
 *              MPI_Ireduce_scatter with blocks that fit in an int but not
 *              their sum (2:1,1), MPI_Reduce_c at root 1, MPI_Allreduce_c
 *              and MPI_Exscan_c (1x2), of NB elements in place (pieces of
 *              int counts);
 *   init       (count_huge_init_c, this file built with EPT_HUGE_INIT=1,
 *              1x2 alone) MPI_Allreduce_init_c in place, started twice on
 *              new values, MPI_Reduce_scatter_init_c in place,
 *              MPI_Bcast_init_c from rank 1, MPI_Gatherv_init_c at root 0;
 *   file       MPI_File_write_at_all_c of NB bytes from rank 0, read back
 *              by rank 1 with MPI_File_read_at_c and by rank 0 with
 *              MPI_File_read_at_all_c (1x2; ROMIO's own _c calls stop at
 *              INT_MAX, epmpi's file engine goes round that), a read past
 *              the end of the file (the count it reports).
 * The job needs about 14 GB of memory; the test skips (77) with less than
 * 20 GB or under EPMPI_TEST_HUGE=0 (ept_skip_huge), and under
 * EPMPI_TRANSPORT=mpi: the collectives do not depend on the transport, and
 * p2p_huge moves more than 2 GiB over it (CI runs the whole table under
 * both transports; this test costs about a minute). */
#include "eptest.h"

#include <limits.h>
#if !EP_HAVE_MPI_Send_c
/* MPI 4.0's large-count (_c) calls: not in this MPI. */
int main(void)
{
    puts("skipped: this MPI has no MPI 4.0's large-count (_c) calls");
    return 77;
}
#else
#define NB ((MPI_Count)INT_MAX + 4099) /* bytes: over 2 GiB, not a round number */
#define STRIDE 4096

static unsigned char bpat(MPI_Count i, int salt) { return (unsigned char)(i * 7 + (i >> 20) + salt); }

static void mark(unsigned char *b, MPI_Count n, int salt)
{
    for (MPI_Count i = 0; i < n; i += STRIDE)
        b[i] = bpat(i, salt);
    b[n - 1] = bpat(n - 1, salt);
}

static MPI_Count bad(const unsigned char *b, MPI_Count n, int salt)
{
    MPI_Count k = b[n - 1] != bpat(n - 1, salt);
    for (MPI_Count i = 0; i < n; i += STRIDE)
        k += b[i] != bpat(i, salt);
    return k;
}

static unsigned char sum_of(MPI_Count e, int salt, int nr)
{
    unsigned char want = 0;
    for (int j = 0; j < nr; j++)
        want = (unsigned char)(want + bpat(e, salt + j));
    return want;
}

/* How many marked elements from .. from+n-1 (of NB), held in b[0 .. n-1],
 * are not the sum of ranks 0 .. nr-1's patterns (salts salt + rank). */
static MPI_Count sum_bad(const unsigned char *b, MPI_Count from, MPI_Count n, int salt, int nr)
{
    MPI_Count k = 0;
    for (MPI_Count e = (from + STRIDE - 1) / STRIDE * STRIDE; e < from + n; e += STRIDE)
        k += b[e - from] != sum_of(e, salt, nr);
    if (from + n == NB)
        k += b[n - 1] != sum_of(NB - 1, salt, nr);
    return k;
}

/* count_huge_init_c (this file built with EPT_HUGE_INIT=1): the init
 * forms beyond INT_MAX, in a program of their own so that each stays well
 * within the time a test has.  Each start runs on the buffer's values
 * then. */
#ifndef EPT_HUGE_INIT
#define EPT_HUGE_INIT 0
#endif

static void init_body(MPI_Comm comm, void *arg)
{
    int r, n;
    (void)arg;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    EPT_CHECK(n == 2, "runs with 2 ranks, not %d", n);
    unsigned char *b = malloc((size_t)NB);
    EPT_CHECK(b, "no memory for %lld bytes", (long long)NB);
    MPI_Count rsc[2] = {NB - 8, 8};
    MPI_Aint d[2] = {0, 0};
    unsigned char dummy = 0;
    PHASE("allreduce_init");
    /* An allreduce in place (in pieces), started twice. */
    MPI_Request pq;
    EPT_OK(MPI_Allreduce_init_c(MPI_IN_PLACE, b, NB, MPI_UINT8_T, MPI_SUM, comm, MPI_INFO_NULL, &pq));
    for (int round = 0; round < 2; round++) {
        mark(b, NB, 60 + 2 * round + r);
        EPT_OK(MPI_Start(&pq));
        EPT_OK(MPI_Wait(&pq, MPI_STATUS_IGNORE));
        EPT_CHECK(sum_bad(b, 0, NB, 60 + 2 * round, 2) == 0, "allreduce_init round %d: %lld bad bytes", round,
                  (long long)sum_bad(b, 0, NB, 60 + 2 * round, 2));
    }
    EPT_OK(MPI_Request_free(&pq));
    /* A reduce-scatter in place whose block at rank 0 is beyond INT_MAX
     * (the whole vector reduced in pieces, then the block kept). */
    EPT_OK(MPI_Reduce_scatter_init_c(MPI_IN_PLACE, b, rsc, MPI_UINT8_T, MPI_SUM, comm, MPI_INFO_NULL, &pq));
    mark(b, NB, 70 + r);
    EPT_OK(MPI_Start(&pq));
    EPT_OK(MPI_Wait(&pq, MPI_STATUS_IGNORE));
    EPT_CHECK(sum_bad(b, r ? NB - rsc[1] : 0, rsc[r], 70, 2) == 0, "reduce_scatter_init: %lld bad bytes",
              (long long)sum_bad(b, r ? NB - rsc[1] : 0, rsc[r], 70, 2));
    EPT_OK(MPI_Request_free(&pq));
    /* A broadcast from rank 1 (a type of the count's elements). */
    if (r == 1)
        mark(b, NB, 80);
    else
        memset(b, 0, (size_t)NB);
    EPT_OK(MPI_Bcast_init_c(b, NB, MPI_BYTE, 1, comm, MPI_INFO_NULL, &pq));
    EPT_OK(MPI_Start(&pq));
    EPT_OK(MPI_Wait(&pq, MPI_STATUS_IGNORE));
    EPT_CHECK(bad(b, NB, 80) == 0, "bcast_init: %lld bad bytes", (long long)bad(b, NB, 80));
    EPT_OK(MPI_Request_free(&pq));
    /* A gatherv at root 0 of NB bytes from rank 1 (a type per block). */
    MPI_Count pgc[2] = {0, NB};
    if (r == 1)
        mark(b, NB, 81);
    else
        memset(b, 0, (size_t)NB);
    EPT_OK(MPI_Gatherv_init_c(r == 1 ? b : &dummy, r == 1 ? NB : 0, MPI_BYTE, r == 0 ? b : NULL, pgc, d, MPI_BYTE, 0,
                              comm, MPI_INFO_NULL, &pq));
    EPT_OK(MPI_Start(&pq));
    EPT_OK(MPI_Wait(&pq, MPI_STATUS_IGNORE));
    EPT_CHECK(r == 1 || bad(b, NB, 81) == 0, "gatherv_init: %lld bad bytes", (long long)bad(b, NB, 81));
    EPT_OK(MPI_Request_free(&pq));
    free(b);
}

static void body(MPI_Comm comm, void *arg)
{
    int r, n, one_process = *(const int *)arg == 2;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    EPT_CHECK(n == 2, "runs with 2 ranks, not %d", n);
    unsigned char *b = malloc((size_t)NB), dummy = 0;
    EPT_CHECK(b, "no memory for %lld bytes", (long long)NB);
    MPI_Status st;
    MPI_Request q;
    MPI_Count cnt = -1;

    PHASE("send");
    memset(b, 0, (size_t)NB);
    if (r == 0) {
        mark(b, NB, 1);
        EPT_OK(MPI_Send_c(b, NB, MPI_BYTE, 1, 1, comm));
    } else {
        EPT_OK(MPI_Recv_c(b, NB, MPI_BYTE, 0, 1, comm, &st));
        MPI_Get_count_c(&st, MPI_BYTE, &cnt);
        EPT_CHECK(cnt == NB && bad(b, NB, 1) == 0, "send: count %lld, %lld bad bytes", (long long)cnt,
                  (long long)bad(b, NB, 1));
    }

    PHASE("bcast");
    if (r == 0)
        mark(b, NB, 6);
    else
        memset(b, 0, (size_t)NB);
    EPT_OK(MPI_Bcast_c(b, NB, MPI_BYTE, 0, comm));
    EPT_CHECK(bad(b, NB, 6) == 0, "bcast: %lld bad bytes", (long long)bad(b, NB, 6));

    PHASE("alltoallv");
    MPI_Count sc[2] = {0, r == 0 ? NB : 0}, rc[2] = {r == 1 ? NB : 0, 0};
    MPI_Aint d[2] = {0, 0};
    if (r == 0)
        mark(b, NB, 3);
    else
        memset(b, 0, (size_t)NB);
    EPT_OK(MPI_Alltoallv_c(r == 0 ? b : &dummy, sc, d, MPI_BYTE, r == 1 ? b : &dummy, rc, d, MPI_BYTE, comm));
    EPT_CHECK(r == 0 || bad(b, NB, 3) == 0, "alltoallv: %lld bad bytes", (long long)bad(b, NB, 3));

    PHASE("gatherv");
    /* Root 1 gathers NB bytes from rank 0 and none from itself. */
    MPI_Count gc[2] = {NB, 0};
    if (r == 0)
        mark(b, NB, 4);
    else
        memset(b, 0, (size_t)NB);
    EPT_OK(MPI_Gatherv_c(r == 0 ? b : &dummy, r == 0 ? NB : 0, MPI_BYTE, r == 1 ? b : NULL, gc, d, MPI_BYTE, 1, comm));
    EPT_CHECK(r == 0 || bad(b, NB, 4) == 0, "gatherv: %lld bad bytes", (long long)bad(b, NB, 4));

    PHASE("ialltoallw");
    /* Rank 0 sends every other byte of b (a vector: NB / 2 bytes of data),
     * rank 1 receives them contiguously. */
    MPI_Datatype every_other, types[2] = {MPI_BYTE, MPI_BYTE};
    MPI_Count half = NB / 2;
    EPT_OK(MPI_Type_vector_c(half, 1, 2, MPI_BYTE, &every_other));
    EPT_OK(MPI_Type_commit(&every_other));
    MPI_Count wc[2] = {0, r == 0 ? 1 : 0}, wr[2] = {r == 1 ? half : 0, 0};
    if (r == 0) {
        for (MPI_Count i = 0; i < half; i += STRIDE / 2)
            b[2 * i] = bpat(i, 5);
        b[2 * (half - 1)] = bpat(half - 1, 5);
        types[1] = every_other;
    } else {
        memset(b, 0, (size_t)half);
    }
    EPT_OK(MPI_Ialltoallw_c(r == 0 ? b : &dummy, wc, d, types, r == 1 ? b : &dummy, wr, d, types, comm, &q));
    EPT_OK(MPI_Type_free(&every_other)); /* the call holds it */
    EPT_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    if (r == 1) {
        MPI_Count k = b[half - 1] != bpat(half - 1, 5);
        for (MPI_Count i = 0; i < half; i += STRIDE / 2)
            k += b[i] != bpat(i, 5);
        EPT_CHECK(k == 0, "ialltoallw: %lld bad bytes", (long long)k);
    }

    /* Reductions: MPI_UINT8_T sums of every rank's pattern (salts
     * 10 + rank), in place on the NB bytes of b. */
    PHASE("ireduce_scatter");
    /* Rank 0 keeps the first elements, rank 1 the rest, at the start of b:
     * in 1x2 through the _c form with a block beyond INT_MAX, in 2:1,1
     * through the int form, whose blocks fit in an int but not their sum. */
    MPI_Count rsc[2] = {NB - 8, 8};
    int rsi[2] = {INT_MAX - 8, (int)(NB - INT_MAX + 8)};
    MPI_Count mine = one_process ? rsc[r] : rsi[r], from = r ? NB - mine : 0;
    mark(b, NB, 10 + r);
    if (one_process)
        EPT_OK(MPI_Ireduce_scatter_c(MPI_IN_PLACE, b, rsc, MPI_UINT8_T, MPI_SUM, comm, &q));
    else
        EPT_OK(MPI_Ireduce_scatter(MPI_IN_PLACE, b, rsi, MPI_UINT8_T, MPI_SUM, comm, &q));
    EPT_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    EPT_CHECK(sum_bad(b, from, mine, 10, 2) == 0, "ireduce_scatter: %lld bad bytes",
              (long long)sum_bad(b, from, mine, 10, 2));

    /* In one process only: between two, MPICH's own non-blocking reduce
     * and exscan of each piece take 15 s and test nothing of epmpi's. */
    if (one_process) {
        PHASE("reduce");
        mark(b, NB, 20 + r);
        EPT_OK(MPI_Reduce_c(r == 1 ? MPI_IN_PLACE : b, r == 1 ? b : NULL, NB, MPI_UINT8_T, MPI_SUM, 1, comm));
        EPT_CHECK(r == 0 || sum_bad(b, 0, NB, 20, 2) == 0, "reduce: %lld bad bytes",
                  (long long)sum_bad(b, 0, NB, 20, 2));

        PHASE("allreduce");
        mark(b, NB, 50 + r);
        EPT_OK(MPI_Allreduce_c(MPI_IN_PLACE, b, NB, MPI_UINT8_T, MPI_SUM, comm));
        EPT_CHECK(sum_bad(b, 0, NB, 50, 2) == 0, "allreduce: %lld bad bytes", (long long)sum_bad(b, 0, NB, 50, 2));

        PHASE("exscan");
        /* Rank 1 gets rank 0's vector; rank 0's buffer is undefined. */
        mark(b, NB, 30 + r);
        EPT_OK(MPI_Exscan_c(MPI_IN_PLACE, b, NB, MPI_UINT8_T, MPI_SUM, comm));
        EPT_CHECK(r == 0 || sum_bad(b, 0, NB, 30, 1) == 0, "exscan: %lld bad bytes",
                  (long long)sum_bad(b, 0, NB, 30, 1));

        PHASE("file");
        /* Rank 0 writes NB bytes at 0 and rank 1 STRIDE bytes after them,
         * collectively; rank 1 reads rank 0's block back independently,
         * rank 0 reads NB bytes from 10 before its end: 10 + STRIDE come. */
        char path[64];
        int id = (int)getpid();
        MPI_File fh;
        EPT_OK(MPI_Bcast(&id, 1, MPI_INT, 0, comm));
        snprintf(path, sizeof path, "/tmp/epmpi_count_huge_c_%d", id);
        EPT_OK(
            MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
        MPI_Count wn = r == 0 ? NB : STRIDE;
        if (r == 1)
            memset(b, 0, (size_t)wn);
        mark(b, wn, 40 + r);
        EPT_OK(MPI_File_write_at_all_c(fh, r == 0 ? 0 : NB, b, wn, MPI_BYTE, &st));
        MPI_Get_count_c(&st, MPI_BYTE, &cnt);
        EPT_CHECK(cnt == wn, "file: wrote %lld bytes of %lld", (long long)cnt, (long long)wn);
        EPT_OK(MPI_File_sync(fh));
        EPT_OK(MPI_Barrier(comm));
        EPT_OK(MPI_File_sync(fh));
        memset(b, 0, (size_t)NB);
        EPT_OK(MPI_File_read_at_c(fh, r == 0 ? NB - 10 : 0, b, NB, MPI_BYTE, &st));
        MPI_Get_count_c(&st, MPI_BYTE, &cnt);
        if (r == 1) {
            EPT_CHECK(cnt == NB && bad(b, NB, 40) == 0, "file: read %lld bytes, %lld bad", (long long)cnt,
                      (long long)bad(b, NB, 40));
        } else {
            MPI_Count k = (b[8] != bpat(NB - 2, 40)) + (b[9] != bpat(NB - 1, 40));
            for (MPI_Count i = 0; i < STRIDE; i += 1024)
                k += b[10 + i] != (i % STRIDE ? 0 : bpat(i, 41));
            k += b[10 + STRIDE - 1] != bpat(STRIDE - 1, 41);
            EPT_CHECK(cnt == 10 + STRIDE && k == 0, "file: read %lld bytes of the last %d, %lld bad", (long long)cnt,
                      10 + STRIDE, (long long)k);
        }
        /* Rank 0 reads its block back collectively: two endpoints of one
         * process, staged in more than 1 GiB. */
        memset(b, 0, (size_t)NB);
        EPT_OK(MPI_File_read_at_all_c(fh, 0, b, r == 0 ? NB : 0, MPI_BYTE, &st));
        MPI_Get_count_c(&st, MPI_BYTE, &cnt);
        EPT_CHECK(r == 1 || (cnt == NB && bad(b, NB, 40) == 0), "file: read_all %lld bytes, %lld bad", (long long)cnt,
                  (long long)bad(b, NB, 40));
        EPT_OK(MPI_File_close(&fh));
    }
    free(b);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    const char *transport = getenv("EPMPI_TRANSPORT");
    if (transport && !strcmp(transport, "mpi")) {
        fprintf(stderr, "skip: nothing here depends on the transport (p2p_huge covers the MPI one)\n");
        MPI_Finalize();
        return 77;
    }
    if (ept_skip_huge(20)) {
        MPI_Finalize();
        return 77;
    }
    watchdog_arm(300);
    int nlocal = local_ranks(argc, argv);
    run_ranks(nlocal, EPT_HUGE_INIT ? init_body : body, &nlocal);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}

#endif
