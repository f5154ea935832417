/* Messages of more than 2 GiB whose element count fits in an int (N ints,
 * N * 4 > INT_MAX): between threads (1x2), straight to MPICH (2x1) and
 * through epmpi's transport between processes (2x2: ranks 0 and 2).  Rank
 * 0 sends to rank n/2:
 *   send       MPI_Send / MPI_Recv: every 4096th element and the last arrive;
 *   truncate   the receive holds N - 2^20 elements: MPI_ERR_TRUNCATE with
 *              the elements that fit delivered and counted (straight to
 *              MPICH, MPICH delivers nothing of a truncated large message:
 *              only the class is checked);
 *   bsend      MPI_Bsend from space attached with MPI_Buffer_attach_c;
 *   replace    MPI_Sendrecv_replace of the whole buffer, both ways.
 * Each process needs about 10 GB of memory; the test skips (77) with less. */
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
#define N 537000000L /* 2.148e9 bytes of int: over 2 GiB */
#define SHORT (N - (1L << 20))
#define STRIDE 4096

static void mark(int *b, long n, int salt)
{
    for (long i = 0; i < n; i += STRIDE)
        b[i] = (int)(i * 7 + salt);
    b[n - 1] = salt ^ 0x5a5a;
}

static long bad_marks(const int *b, long n, int salt)
{
    long bad = 0;
    for (long i = 0; i < n; i += STRIDE)
        bad += b[i] != (int)(i * 7 + salt);
    return bad;
}

/* 1 when MPICH or UCX may match a receive from another process: what a
 * truncated receive holds is then theirs (MPI leaves it undefined, and
 * neither delivers the part that fits). */
static int matched_below(MPI_Comm c)
{
    return ept_hint_is(c, "epmpi_p2p_path", "mpich") || ept_hint_is(c, "epmpi_transport", "ucx");
}

static int error_class(int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ept_require_world();
    if (ept_skip_huge(20)) {
        MPI_Finalize();
        return 77;
    }
    watchdog_arm(300);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#pragma omp parallel
    {
        int r, n;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &n);
        int peer = r == 0 ? n / 2 : 0;
        if (r == 0 || r == n / 2) {
            int *b = malloc(sizeof(int) * (size_t)N);
            EPT_CHECK(b, "no memory for %ld ints", N);
            MPI_Status st;
            MPI_Count cnt = 0;

            PHASE("send");
            if (r == 0) {
                mark(b, N, 1);
                EPT_OK(MPI_Send(b, (int)N, MPI_INT, peer, 1, MPI_COMM_WORLD));
            } else {
                EPT_OK(MPI_Recv(b, (int)N, MPI_INT, peer, 1, MPI_COMM_WORLD, &st));
                MPI_Get_count_c(&st, MPI_INT, &cnt);
                EPT_CHECK(cnt == N && bad_marks(b, N, 1) == 0 && b[N - 1] == (1 ^ 0x5a5a),
                          "send: count %lld, %ld bad elements", (long long)cnt, bad_marks(b, N, 1));
            }

            PHASE("truncate");
            if (r == 0) {
                mark(b, N, 2);
                EPT_OK(MPI_Send(b, (int)N, MPI_INT, peer, 2, MPI_COMM_WORLD));
            } else {
                int rc = MPI_Recv(b, (int)SHORT, MPI_INT, peer, 2, MPI_COMM_WORLD, &st);
                MPI_Get_count_c(&st, MPI_INT, &cnt);
                EPT_CHECK(error_class(rc) == MPI_ERR_TRUNCATE, "truncate: class %d", error_class(rc));
                EPT_CHECK(matched_below(MPI_COMM_WORLD) || (cnt == SHORT && bad_marks(b, SHORT, 2) == 0),
                          "truncate: count %lld, %ld bad elements", (long long)cnt, bad_marks(b, SHORT, 2));
            }

            PHASE("bsend");
            if (r == 0) {
                MPI_Count space = (MPI_Count)sizeof(int) * N + MPI_BSEND_OVERHEAD;
                void *att = malloc((size_t)space);
                EPT_CHECK(att, "no memory for the attached buffer");
                EPT_OK(MPI_Buffer_attach_c(att, space));
                mark(b, N, 3);
                EPT_OK(MPI_Bsend(b, (int)N, MPI_INT, peer, 3, MPI_COMM_WORLD));
                void *got;
                MPI_Count gsize;
                EPT_OK(MPI_Buffer_detach_c(&got, &gsize));
                free(att);
            } else {
                EPT_OK(MPI_Recv(b, (int)N, MPI_INT, peer, 3, MPI_COMM_WORLD, &st));
                EPT_CHECK(bad_marks(b, N, 3) == 0, "bsend: %ld bad elements", bad_marks(b, N, 3));
            }

            PHASE("replace");
            mark(b, N, 4 + r);
            EPT_OK(MPI_Sendrecv_replace(b, (int)N, MPI_INT, peer, 4, peer, 4, MPI_COMM_WORLD, &st));
            MPI_Get_count_c(&st, MPI_INT, &cnt);
            EPT_CHECK(cnt == N && bad_marks(b, N, 4 + peer) == 0, "replace: count %lld, %ld bad elements",
                      (long long)cnt, bad_marks(b, N, 4 + peer));
            free(b);
        }
    }
    MPI_Finalize();
    return 0;
}

#endif
