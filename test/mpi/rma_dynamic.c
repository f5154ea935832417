/* Dynamic and shared-memory windows on the test communicator (see
 * rma_common.h for the shapes):
 *  - MPI_Win_create_dynamic: attributes (MPI_BOTTOM, size 0, disp unit 1);
 *    two regions attached, their addresses (MPI_Get_address) exchanged with
 *    MPI_Allgather; under MPI_Win_lock_all, a Put into the right
 *    neighbour's first region, a Put with a vector target type into its
 *    second, a Get back; one region detached, Accumulate into the other, a
 *    third region attached and reached; on endpoints, a Put into the
 *    detached region, a Get across a region's end and a second detach of
 *    one region fail with MPI_ERR_RMA_RANGE; all detached before
 *    MPI_Win_free;
 *  - MPI_Win_allocate_shared among the ranks of one node (MPI_Comm_split_type
 *    MPI_COMM_TYPE_SHARED): rank 0 gives no memory, the others (r + 2) * K
 *    ints, odd ranks count displacements in bytes; MPI_Win_shared_query
 *    gives each rank's size, disp unit and a pointer, the segments follow
 *    each other in rank order, MPI_PROC_NULL gives rank 1's; direct stores
 *    into the right neighbour's segment and direct loads, separated by
 *    MPI_Win_sync and MPI_Barrier; Puts with each target's disp unit, seen
 *    by direct loads.
 * Every value is checked against values computed here. */
#include "rma_common.h"

#define K 16

static long val(int r, int i) { return r * 1000L + i + 1; }

/* ---- dynamic windows ------------------------------------------------------ */

/* Attaches a new region of K longs set to -1 and returns it; addr[i] gets
 * the region's address at every rank i. */
static long *attach_region(MPI_Comm comm, MPI_Win win, MPI_Aint *addr)
{
    long *p = malloc(sizeof(long) * K);
    MPI_Aint mine;
    EPT_CHECK(p, "out of memory");
    for (int i = 0; i < K; i++)
        p[i] = -1;
    EPT_OK(MPI_Win_attach(win, p, sizeof(long) * K));
    EPT_OK(MPI_Get_address(p, &mine));
    EPT_OK(MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, comm));
    return p;
}

/* Every rank's remote operations are flushed: wait for all of them, then
 * make them visible to this rank's loads (and this rank's stores to them). */
static void settle(MPI_Comm comm, MPI_Win win)
{
    EPT_OK(MPI_Win_sync(win));
    EPT_OK(MPI_Barrier(comm));
    EPT_OK(MPI_Win_sync(win));
}

static void check_longs(const long *p, int count, int stride, int r, int first, int me, const char *what)
{
    for (int i = 0; i < count; i++)
        EPT_CHECK(p[i * stride] == val(r, first + i), "rank %d: %s: element %d is %ld, expected %ld from rank %d", me,
                  what, i * stride, p[i * stride], val(r, first + i), r);
}

static void part_dynamic(MPI_Comm comm)
{
    int me, n, left, right, flag = 0;
    ept_ring_place(comm, &me, &n, &left, &right);
    MPI_Aint *a_addr = malloc(sizeof(MPI_Aint) * (size_t)n * 3), *b_addr = a_addr + n, *c_addr = b_addr + n;
    long src[K], got[K];
    void *base = &flag;
    EPT_CHECK(a_addr, "out of memory");
    MPI_Win win;
    PHASE("rma_dynamic: MPI_Win_create_dynamic");
    EPT_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win));
    rma_check_attrs(win, NULL, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, "dynamic window");
    EPT_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    EPT_CHECK(flag && base == MPI_BOTTOM, "rank %d: dynamic window: MPI_WIN_BASE %p, expected MPI_BOTTOM", me, base);

    PHASE("rma_dynamic: attach");
    long *a = attach_region(comm, win, a_addr), *b = attach_region(comm, win, b_addr);
    MPI_Datatype every2;
    EPT_OK(MPI_Type_vector(K / 2, 1, 2, MPI_LONG, &every2));
    EPT_OK(MPI_Type_commit(&every2));
    EPT_OK(MPI_Win_lock_all(0, win));
    settle(comm, win); /* the -1 stores are public before anyone accesses */

    PHASE("rma_dynamic: puts and gets");
    for (int i = 0; i < K; i++)
        src[i] = val(me, i);
    EPT_OK(MPI_Put(src, K, MPI_LONG, right, a_addr[right], K, MPI_LONG, win));
    EPT_OK(MPI_Put(src, K / 2, MPI_LONG, right, b_addr[right], 1, every2, win));
    EPT_OK(MPI_Win_flush(right, win));
    EPT_OK(MPI_Get(got, K, MPI_LONG, right, a_addr[right], K, MPI_LONG, win));
    EPT_OK(MPI_Win_flush(right, win));
    check_longs(got, K, 1, me, 0, me, "get back from the first region");
    settle(comm, win);
    check_longs(a, K, 1, left, 0, me, "put into the first region");
    check_longs(b, K / 2, 2, left, 0, me, "vector put into the second region");
    for (int i = 1; i < K; i += 2)
        EPT_CHECK(b[i] == -1, "rank %d: the vector put wrote element %d (%ld)", me, i, b[i]);
    EPT_OK(MPI_Barrier(comm)); /* nobody accesses the first region any more */

    PHASE("rma_dynamic: detach, accumulate, attach again");
    EPT_OK(MPI_Win_detach(win, a));
    long *c = attach_region(comm, win, c_addr); /* the Allgather also orders the detach */
    EPT_OK(MPI_Accumulate(src, K / 2, MPI_LONG, right, b_addr[right], 1, every2, MPI_SUM, win));
    EPT_OK(MPI_Put(src, K, MPI_LONG, left, c_addr[left], K, MPI_LONG, win));
    EPT_OK(MPI_Win_flush_all(win));
    settle(comm, win);
    for (int i = 0; i < K / 2; i++)
        EPT_CHECK(b[2 * i] == 2 * val(left, i),
                  "rank %d: accumulate into the second region: element %d is %ld, "
                  "expected %ld",
                  me, 2 * i, b[2 * i], 2 * val(left, i));
    check_longs(c, K, 1, right, 0, me, "put into the third region");
    if (comm != MPI_COMM_WORLD || ept_world_endpoints() > 0) {
        /* On endpoints, accesses to this process's memory are checked
         * against what is attached, and so is a detach. */
        EPT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        rma_expect_error(MPI_Put(src, 1, MPI_LONG, me, a_addr[me], 1, MPI_LONG, win), MPI_ERR_RMA_RANGE, "MPI_Put",
                         "Put into a detached region");
        rma_expect_error(MPI_Get(got, 2, MPI_LONG, me, b_addr[me] + (K - 1) * (MPI_Aint)sizeof(long), 2, MPI_LONG, win),
                         MPI_ERR_RMA_RANGE, "MPI_Get", "Get across the end of a region");
        rma_expect_error(MPI_Win_detach(win, a), MPI_ERR_RMA_RANGE, "MPI_Win_detach", "detach of a detached region");
    }
    EPT_OK(MPI_Barrier(comm));

    EPT_OK(MPI_Win_unlock_all(win));
    EPT_OK(MPI_Win_detach(win, b));
    EPT_OK(MPI_Win_detach(win, c));
    EPT_OK(MPI_Win_free(&win));
    EPT_OK(MPI_Type_free(&every2));
    free(a);
    free(b);
    free(c);
    free(a_addr);
}

/* ---- shared-memory windows ------------------------------------------------ */

static MPI_Aint seg_ints(int r, int ns)
{
    return r == 0 && ns > 1 ? 0 : (r + 2) * K; /* multiples of 16 bytes: see rma_passive.c */
}

static int seg_unit(int r) { return r % 2 ? 1 : (int)sizeof(int); }

static void part_shared(MPI_Comm comm)
{
    MPI_Comm node;
    int me, ns, *mine = NULL;
    PHASE("rma_dynamic: MPI_Win_allocate_shared");
    EPT_OK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    EPT_OK(MPI_Comm_rank(node, &me));
    EPT_OK(MPI_Comm_size(node, &ns));
    MPI_Win win;
    EPT_OK(MPI_Win_allocate_shared(sizeof(int) * seg_ints(me, ns), seg_unit(me), MPI_INFO_NULL, node, &mine, &win));
    rma_check_attrs(win, seg_ints(me, ns) ? mine : NULL, sizeof(int) * seg_ints(me, ns), seg_unit(me),
                    MPI_WIN_FLAVOR_SHARED, "shared window");

    /* Every rank's segment; contiguous in rank order (the default). */
    int **seg = malloc(sizeof(int *) * (size_t)ns), *prev_end = NULL;
    EPT_CHECK(seg, "out of memory");
    for (int r = 0; r < ns; r++) {
        MPI_Aint size = -1;
        int du = -1;
        EPT_OK(MPI_Win_shared_query(win, r, &size, &du, &seg[r]));
        EPT_CHECK(size == (MPI_Aint)sizeof(int) * seg_ints(r, ns) && du == seg_unit(r),
                  "rank %d: shared query of rank %d: size %ld, disp unit %d, expected %ld and %d", me, r, (long)size,
                  du, (long)sizeof(int) * seg_ints(r, ns), seg_unit(r));
        if (size > 0) {
            EPT_CHECK(prev_end == NULL || seg[r] == prev_end,
                      "rank %d: the segment of rank %d is at %p, not at %p "
                      "after the previous one",
                      me, r, (void *)seg[r], (void *)prev_end);
            prev_end = seg[r] + seg_ints(r, ns);
        }
    }
    EPT_CHECK(seg_ints(me, ns) == 0 || seg[me] == mine, "rank %d: shared query gives %p for itself, allocate gave %p",
              me, (void *)seg[me], (void *)mine);
    MPI_Aint size = -1;
    int du = -1, first = ns > 1, *p = NULL;
    EPT_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &du, &p));
    EPT_CHECK(p == seg[first] && size == (MPI_Aint)sizeof(int) * seg_ints(first, ns) && du == seg_unit(first),
              "rank %d: shared query of MPI_PROC_NULL: %p, size %ld, disp unit %d; expected rank %d's segment", me,
              (void *)p, (long)size, du, first);

    /* Rank r writes the segment of rank r + 1 (rank 0 its own when alone). */
    int target = ns > 1 ? me + 1 : 0, writer = ns > 1 ? me - 1 : 0;
    PHASE("rma_dynamic: shared: direct stores");
    EPT_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    if (target < ns)
        for (int i = 0; i < seg_ints(target, ns); i++)
            seg[target][i] = (int)val(me, i);
    settle(node, win);
    for (int w = 0; w < ns; w++) { /* every segment, by direct loads */
        int t = ns > 1 ? w + 1 : 0;
        for (int i = 0; t < ns && i < seg_ints(t, ns); i++)
            EPT_CHECK(seg[t][i] == (int)val(w, i), "rank %d: shared segment of rank %d, element %d: %d, expected %d",
                      me, t, i, seg[t][i], (int)val(w, i));
    }
    EPT_OK(MPI_Barrier(node)); /* every load is done before the puts */

    PHASE("rma_dynamic: shared: puts with each target's disp unit");
    int src[K];
    for (int i = 0; i < K; i++)
        src[i] = (int)val(me, 500 + i);
    if (target < ns) {
        MPI_Aint disp = (MPI_Aint)K * (MPI_Aint)sizeof(int) / seg_unit(target); /* int K of the segment */
        EPT_OK(MPI_Put(src, K, MPI_INT, target, disp, K, MPI_INT, win));
        EPT_OK(MPI_Win_flush(target, win));
    }
    settle(node, win);
    if (writer >= 0)
        for (int i = 0; i < seg_ints(me, ns); i++) {
            int want = (int)(i >= K && i < 2 * K ? val(writer, 500 + i - K) : val(writer, i));
            EPT_CHECK(mine[i] == want, "rank %d: after the put from rank %d: element %d is %d, expected %d", me, writer,
                      i, mine[i], want);
        }
    EPT_OK(MPI_Win_unlock_all(win));
    EPT_OK(MPI_Win_free(&win));
    EPT_OK(MPI_Comm_free(&node));
    free(seg);
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    part_dynamic(comm);
    part_shared(comm);
}

int main(int argc, char **argv) { return ept_main_classic(argc, argv, 60, body, NULL); }
