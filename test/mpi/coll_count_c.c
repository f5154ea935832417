/* The large-count (_c) collectives with count arrays on the test
 * communicator (MPI_COMM_WORLD in world mode, endpoints in explicit
 * shapes, the classic MPI_COMM_WORLD in P:0 shapes, where MPICH checks the
 * test itself): Gatherv_c, Scatterv_c, Allgatherv_c, Alltoallv_c,
 * Alltoallw_c, Reduce_scatter_c, the non-blocking Iallgatherv_c and
 * Ialltoallv_c, and Neighbor_allgatherv_c, Neighbor_alltoallv_c,
 * Neighbor_alltoallw_c on a periodic ring; rank q sends k + 1 ints to rank
 * k, every value checked.
 *
 * Each call runs twice: with the displacements as they are, and with
 * displacements beyond INT_MAX from a base address moved back as far (the
 * same bytes move), which the int forms cannot express: on endpoints this
 * takes the path for counts beyond INT_MAX, whose blocks become derived
 * types (count_huge_c moves more than 2 GiB).  A count beyond INT_MAX in
 * Reduce_scatter_c takes the reductions' path in pieces, which checks the
 * datatype first: a null one is MPI_ERR_TYPE naming the call. */
#include "eptest.h"

#include <limits.h>
#include <stdint.h>
#if !EP_HAVE_MPI_Send_c
/* MPI 4.0's large-count (_c) calls: not in this MPI. */
int main(void)
{
    puts("skipped: this MPI has no MPI 4.0's large-count (_c) calls");
    return 77;
}
#else
/* The far round's extra displacement, in ints: past INT_MAX in elements
 * and in bytes. */
#define FAR ((MPI_Aint)INT_MAX + 12345)
static _Thread_local MPI_Aint far; /* 0 or FAR: each rank (thread) its own */

/* buf moved back by `far` ints: displacement d + far then addresses buf + d
 * (computed as an integer, as MPI_BOTTOM addressing is). */
static void *back(void *buf) { return (void *)((uintptr_t)buf - (uintptr_t)far * sizeof(int)); }

static MPI_Aint *shifted(const MPI_Aint *d, int n, MPI_Aint unit)
{
    MPI_Aint *o = malloc(sizeof *o * (size_t)n);
    for (int k = 0; k < n; k++)
        o[k] = d[k] + far * unit;
    return o;
}

static int val(int from, int to, int i) { return from * 10000 + to * 100 + i; }

/* Per-peer arrays: peer k gets k + 1 ints at displacement k (k + 1) / 2
 * (blocks packed in rank order). */
static void layout(int n, MPI_Count *cnt, MPI_Aint *dsp)
{
    for (int k = 0; k < n; k++) {
        cnt[k] = k + 1;
        dsp[k] = (MPI_Aint)k * (k + 1) / 2;
    }
}

static void check(const int *buf, int from, int to, int count, const char *what)
{
    for (int i = 0; i < count; i++)
        EPT_CHECK(buf[i] == val(from, to, i), "%s: element %d from %d is %d, expected %d", what, i, from, buf[i],
                  val(from, to, i));
}

static void round_(MPI_Comm comm)
{
    int r, n;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    int tot = n * (n + 1) / 2;
    MPI_Count *cnt = malloc(sizeof *cnt * (size_t)n), *one = malloc(sizeof *one * (size_t)n);
    MPI_Aint *dsp = malloc(sizeof *dsp * (size_t)n), *bytes = malloc(sizeof *bytes * (size_t)n);
    MPI_Datatype *types = malloc(sizeof *types * (size_t)n);
    int *sb = malloc(sizeof(int) * (size_t)tot), *rb = malloc(sizeof(int) * (size_t)(tot * n + n));
    layout(n, cnt, dsp);
    for (int k = 0; k < n; k++) {
        one[k] = r + 1; /* what each rank sends to everyone in the gathers */
        bytes[k] = dsp[k] * (MPI_Aint)sizeof(int);
        types[k] = MPI_INT;
    }

    PHASE("Gatherv_c / Scatterv_c / Allgatherv_c");
    int mine[64];
    for (int i = 0; i < r + 1; i++)
        mine[i] = val(r, 0, i);
    MPI_Aint *fd = shifted(dsp, n, 1), *frd = NULL, *fbytes = shifted(bytes, n, sizeof(int)), *frdb = NULL;
    EPT_OK(MPI_Gatherv_c(mine, r + 1, MPI_INT, back(rb), cnt, fd, MPI_INT, 0, comm));
    for (int q = 0; q < n && r == 0; q++)
        check(rb + dsp[q], q, 0, q + 1, "Gatherv_c");
    for (int k = 0; k < tot && r == 0; k++)
        sb[k] = 0;
    for (int k = 0; k < n && r == 0; k++)
        for (int i = 0; i <= k; i++)
            sb[dsp[k] + i] = val(0, k, i);
    EPT_OK(MPI_Scatterv_c(back(sb), cnt, fd, MPI_INT, rb, r + 1, MPI_INT, 0, comm));
    check(rb, 0, r, r + 1, "Scatterv_c");
    EPT_OK(MPI_Allgatherv_c(mine, r + 1, MPI_INT, back(rb), cnt, fd, MPI_INT, comm));
    for (int q = 0; q < n; q++)
        check(rb + dsp[q], q, 0, q + 1, "Allgatherv_c");

    PHASE("Alltoallv_c / Alltoallw_c");
    /* Rank r sends k + 1 ints to rank k and receives r + 1 from each. */
    for (int k = 0; k < n; k++)
        for (int i = 0; i <= k; i++)
            sb[dsp[k] + i] = val(r, k, i);
    MPI_Count *rc = malloc(sizeof *rc * (size_t)n);
    MPI_Aint *rd = malloc(sizeof *rd * (size_t)n), *rdb = malloc(sizeof *rdb * (size_t)n);
    for (int q = 0; q < n; q++) {
        rc[q] = r + 1;
        rd[q] = (MPI_Aint)q * (r + 1);
        rdb[q] = rd[q] * (MPI_Aint)sizeof(int);
    }
    frd = shifted(rd, n, 1);
    frdb = shifted(rdb, n, sizeof(int));
    EPT_OK(MPI_Alltoallv_c(back(sb), cnt, fd, MPI_INT, back(rb), rc, frd, MPI_INT, comm));
    for (int q = 0; q < n; q++)
        check(rb + rd[q], q, r, r + 1, "Alltoallv_c");
    memset(rb, 0, sizeof(int) * (size_t)(n * (r + 1)));
    EPT_OK(MPI_Alltoallw_c(back(sb), cnt, fbytes, types, back(rb), rc, frdb, types, comm));
    for (int q = 0; q < n; q++)
        check(rb + rd[q], q, r, r + 1, "Alltoallw_c");

    PHASE("Reduce_scatter_c");
    /* Rank k's share is k + 1 sums of val(q, k, i) over q. */
    for (int k = 0; k < n; k++)
        for (int i = 0; i <= k; i++)
            sb[dsp[k] + i] = val(r, k, i);
    EPT_OK(MPI_Reduce_scatter_c(sb, rb, cnt, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i <= r; i++) {
        int want = 0;
        for (int q = 0; q < n; q++)
            want += val(q, r, i);
        EPT_CHECK(rb[i] == want, "Reduce_scatter_c element %d: %d, expected %d", i, rb[i], want);
    }

    PHASE("Iallgatherv_c / Ialltoallv_c");
    int *rb2 = malloc(sizeof(int) * (size_t)tot);
    MPI_Request q[2];
    for (int k = 0; k < n; k++)
        for (int i = 0; i <= k; i++)
            sb[dsp[k] + i] = val(r, k, i);
    EPT_OK(MPI_Iallgatherv_c(mine, r + 1, MPI_INT, back(rb2), cnt, fd, MPI_INT, comm, &q[0]));
    EPT_OK(MPI_Ialltoallv_c(back(sb), cnt, fd, MPI_INT, back(rb), rc, frd, MPI_INT, comm, &q[1]));
    EPT_OK(MPI_Waitall(2, q, statuses_ignore()));
    for (int p = 0; p < n; p++) {
        check(rb2 + dsp[p], p, 0, p + 1, "Iallgatherv_c");
        check(rb + rd[p], p, r, r + 1, "Ialltoallv_c");
    }
    free(rb2);

    PHASE("neighbourhood _c forms on a ring");
    MPI_Comm ring;
    int dims[1] = {n}, per[1] = {1}, src, dst;
    EPT_OK(MPI_Cart_create(comm, 1, dims, per, 0, &ring));
    EPT_OK(MPI_Cart_shift(ring, 0, 1, &src, &dst));
    /* Slot 0 (towards -1) carries 1 int, slot 1 (towards +1) 2 ints; the
     * block from -1 is that rank's slot 1. */
    MPI_Count sc2[2] = {1, 2}, rc2[2] = {2, 1};
    MPI_Aint sd2[2] = {0, 1}, rd2[2] = {0, 2}, sdb[2] = {0, sizeof(int)}, rdb2[2] = {0, 2 * sizeof(int)};
    MPI_Datatype t2[2] = {MPI_INT, MPI_INT};
    int s3[3] = {val(r, 0, 0), val(r, 1, 0), val(r, 1, 1)}, r3[3];
    int nb[2] = {src, dst};
    for (int k = 0; k < 2; k++) {
        sd2[k] += far, rd2[k] += far;
        sdb[k] += far * (MPI_Aint)sizeof(int), rdb2[k] += far * (MPI_Aint)sizeof(int);
    }
    EPT_OK(MPI_Neighbor_alltoallv_c(back(s3), sc2, sd2, MPI_INT, back(r3), rc2, rd2, MPI_INT, ring));
    check(r3, nb[0], 1, 2, "Neighbor_alltoallv_c from -1");
    check(r3 + 2, nb[1], 0, 1, "Neighbor_alltoallv_c from +1");
    memset(r3, 0, sizeof r3);
    EPT_OK(MPI_Neighbor_alltoallw_c(back(s3), sc2, sdb, t2, back(r3), rc2, rdb2, t2, ring));
    check(r3, nb[0], 1, 2, "Neighbor_alltoallw_c from -1");
    check(r3 + 2, nb[1], 0, 1, "Neighbor_alltoallw_c from +1");
    MPI_Count ac[2] = {1, 1};
    MPI_Aint ad[2] = {1 + far, far};
    EPT_OK(MPI_Neighbor_allgatherv_c(s3, 1, MPI_INT, back(r3), ac, ad, MPI_INT, ring));
    EPT_CHECK(r3[1] == val(nb[0], 0, 0) && r3[0] == val(nb[1], 0, 0), "Neighbor_allgatherv_c: %d %d", r3[0], r3[1]);
    EPT_OK(MPI_Comm_free(&ring));

    if (!ept_classic && !far) {
        PHASE("Reduce_scatter_c: a count beyond INT_MAX, a null datatype");
        MPI_Comm c;
        int cls = -1, len = 0;
        char msg[MPI_MAX_ERROR_STRING] = "";
        EPT_OK(MPI_Comm_dup(comm, &c));
        EPT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        cnt[n - 1] = (MPI_Count)INT_MAX + 1;
        int rc_ = MPI_Reduce_scatter_c(sb, rb, cnt, MPI_DATATYPE_NULL, MPI_SUM, c);
        MPI_Error_class(rc_, &cls);
        MPI_Error_string(rc_, msg, &len);
        EPT_CHECK(cls == MPI_ERR_TYPE && strstr(msg, "MPI_Reduce_scatter_c"),
                  "Reduce_scatter_c with a count beyond INT_MAX: class %d, '%s'", cls, msg);
        EPT_OK(MPI_Comm_free(&c));
    }
    free(fd), free(frd), free(fbytes), free(frdb);
    free(cnt), free(one), free(dsp), free(bytes), free(types), free(sb), free(rb), free(rc), free(rd), free(rdb);
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    far = 0;
    round_(comm);
    far = FAR;
    round_(comm);
}

int main(int argc, char **argv) { return ept_main_classic(argc, argv, 60, body, NULL); }

#endif
