/* What MPI-4.0 (6.2 to 6.11) says of the blocking collectives that the
 * other collective tests leave out:
 *  - MPI_IN_PLACE in MPI_Gatherv (at the root: the root's block stays in
 *    place), MPI_Alltoallv and MPI_Alltoallw (the receive buffer is sent and
 *    replaced), MPI_Reduce_scatter (the result block replaces the start of
 *    the buffer) and MPI_Exscan (the result replaces the input; rank 0's is
 *    undefined and not checked);
 *  - zero counts in every collective: nothing is written anywhere.
 * Every root for the rooted calls.  The N:0 shapes run the same checks on
 * classic MPI_COMM_WORLD, where MPICH answers.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes
 * (P:a,b,..): endpoints made with MPI_Comm_create_endpoints. */
#include "eptest.h"

#define CANARY (-777)

static void gatherv_in_place(MPI_Comm comm, int r, int n, int *b, int *cnt, int *dsp)
{
    PHASE("MPI_Gatherv with MPI_IN_PLACE");
    for (int i = 0; i < n; i++) {
        cnt[i] = i + 1;
        dsp[i] = i * (n + 1);
    }
    for (int root = 0; root < n; root++) {
        if (r != root) {
            int v[64];
            for (int k = 0; k <= r; k++)
                v[k] = r * 100 + k;
            EPT_OK(MPI_Gatherv(v, r + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, root, comm));
            continue;
        }
        for (int i = 0; i < n * (n + 1); i++)
            b[i] = CANARY;
        for (int k = 0; k <= r; k++)
            b[r * (n + 1) + k] = r * 100 + k;
        EPT_OK(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, cnt, dsp, MPI_INT, root, comm));
        for (int i = 0; i < n; i++)
            for (int k = 0; k <= n; k++) {
                int want = k <= i ? i * 100 + k : CANARY;
                EPT_CHECK(b[i * (n + 1) + k] == want,
                          "MPI_Gatherv in place, root %d: int %d of block %d is %d, want %d", root, k, i,
                          b[i * (n + 1) + k], want);
            }
    }
}

static void alltoall_in_place(MPI_Comm comm, int r, int n, int *b, int *cnt, int *dsp)
{
    PHASE("MPI_Alltoallv with MPI_IN_PLACE");
    for (int i = 0; i < n; i++) {
        cnt[i] = 2;
        dsp[i] = 2 * (n - 1 - i); /* blocks in reverse order */
        b[dsp[i]] = r * 1000 + i;
        b[dsp[i] + 1] = -r;
    }
    EPT_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, b, cnt, dsp, MPI_INT, comm));
    for (int i = 0; i < n; i++)
        EPT_CHECK(b[dsp[i]] == i * 1000 + r && b[dsp[i] + 1] == -i, "MPI_Alltoallv in place: block from %d is %d %d", i,
                  b[dsp[i]], b[dsp[i] + 1]);

    PHASE("MPI_Alltoallw with MPI_IN_PLACE");
    MPI_Datatype *ty = malloc(sizeof *ty * (size_t)n);
    EPT_CHECK(ty, "out of memory");
    for (int i = 0; i < n; i++) {
        cnt[i] = 1;
        dsp[i] = (int)sizeof(int) * i; /* bytes */
        ty[i] = MPI_INT;
        b[i] = r * 10 + i;
    }
    EPT_OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, b, cnt, dsp, ty, comm));
    for (int i = 0; i < n; i++)
        EPT_CHECK(b[i] == i * 10 + r, "MPI_Alltoallw in place: int from %d is %d", i, b[i]);
    free(ty);
}

static void reductions_in_place(MPI_Comm comm, int r, int n, int *b, int *cnt)
{
    PHASE("MPI_Reduce_scatter with MPI_IN_PLACE");
    int total = 0, off = 0;
    for (int i = 0; i < n; i++) {
        cnt[i] = i % 2 + 1;
        off += i < r ? cnt[i] : 0;
        total += cnt[i];
    }
    for (int i = 0; i < total; i++)
        b[i] = i + r;
    EPT_OK(MPI_Reduce_scatter(MPI_IN_PLACE, b, cnt, MPI_INT, MPI_SUM, comm));
    for (int k = 0; k < cnt[r]; k++) {
        int want = n * (off + k) + n * (n - 1) / 2;
        EPT_CHECK(b[k] == want, "MPI_Reduce_scatter in place: int %d is %d, want %d", k, b[k], want);
    }

    PHASE("MPI_Exscan with MPI_IN_PLACE");
    b[0] = r + 1;
    EPT_OK(MPI_Exscan(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, comm));
    EPT_CHECK(r == 0 || b[0] == r * (r + 1) / 2, "MPI_Exscan in place: %d, want %d", b[0], r * (r + 1) / 2);
}

/* Every collective with zero counts: the buffers keep the canary. */
static void zero_counts(MPI_Comm comm, int n, int *b, int *cnt, int *dsp)
{
    PHASE("zero counts");
    int z = CANARY, size = 4 * n;
    for (int i = 0; i < size; i++)
        b[i] = CANARY;
    for (int i = 0; i < n; i++)
        cnt[i] = dsp[i] = 0;
    for (int root = 0; root < n; root++) {
        EPT_OK(MPI_Bcast(&z, 0, MPI_INT, root, comm));
        EPT_OK(MPI_Reduce(&z, b, 0, MPI_INT, MPI_SUM, root, comm));
        EPT_OK(MPI_Gather(&z, 0, MPI_INT, b, 0, MPI_INT, root, comm));
        EPT_OK(MPI_Gatherv(&z, 0, MPI_INT, b, cnt, dsp, MPI_INT, root, comm));
        EPT_OK(MPI_Scatter(b, 0, MPI_INT, &z, 0, MPI_INT, root, comm));
        EPT_OK(MPI_Scatterv(b, cnt, dsp, MPI_INT, &z, 0, MPI_INT, root, comm));
    }
    EPT_OK(MPI_Allreduce(&z, b, 0, MPI_INT, MPI_SUM, comm));
    EPT_OK(MPI_Scan(&z, b, 0, MPI_INT, MPI_SUM, comm));
    EPT_OK(MPI_Exscan(&z, b, 0, MPI_INT, MPI_SUM, comm));
    EPT_OK(MPI_Allgather(&z, 0, MPI_INT, b, 0, MPI_INT, comm));
    EPT_OK(MPI_Allgatherv(&z, 0, MPI_INT, b, cnt, dsp, MPI_INT, comm));
    EPT_OK(MPI_Alltoall(&z, 0, MPI_INT, b, 0, MPI_INT, comm));
    EPT_OK(MPI_Alltoallv(&z, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, comm));
    EPT_OK(MPI_Reduce_scatter(&z, b, cnt, MPI_INT, MPI_SUM, comm));
    EPT_OK(MPI_Reduce_scatter_block(&z, b, 0, MPI_INT, MPI_SUM, comm));
    EPT_CHECK(z == CANARY, "a zero-count collective wrote its send or receive value: %d", z);
    for (int i = 0; i < size; i++)
        EPT_CHECK(b[i] == CANARY, "a zero-count collective wrote int %d of the receive buffer: %d", i, b[i]);
}

static void body(MPI_Comm comm, void *arg)
{
    int r, n;
    (void)arg;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    int *b = malloc(sizeof(int) * (size_t)(4 * n * n + 16)), *cnt = malloc(sizeof(int) * (size_t)n),
        *dsp = malloc(sizeof(int) * (size_t)n);
    EPT_CHECK(b && cnt && dsp, "out of memory");
    gatherv_in_place(comm, r, n, b, cnt, dsp);
    alltoall_in_place(comm, r, n, b, cnt, dsp);
    reductions_in_place(comm, r, n, b, cnt);
    zero_counts(comm, n, b, cnt, dsp);
    EPT_OK(MPI_Barrier(comm));
    free(b);
    free(cnt);
    free(dsp);
}

int main(int argc, char **argv) { return ept_main_classic(argc, argv, 60, body, NULL); }
