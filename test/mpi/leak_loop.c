/* No leaks in a loop: every round creates and frees what an endpoint
 * program makes over and over (communicators from create_endpoints, dup,
 * idup, split, intercomm_create and merge; groups; attributes; windows from
 * Win_create and Win_allocate; non-blocking, persistent, freed-while-pending
 * and collective requests; matched-probe messages), and uses each once.
 * The heap in use in each process (malloc's own count, or the sanitizer's
 * under AddressSanitizer) is measured after `warm` rounds, and again after
 * each of two windows of `warm` more, at points where all the process's
 * ranks are between rounds.  A leak of even the smallest block (32 bytes
 * with malloc's header) once a round grows the heap by more than
 * GROWTH_LIMIT bytes a round in both windows.  malloc's count also moves
 * without a leak, by a few KiB either way: request objects that one
 * thread frees and another allocates go back through malloc, and aligned
 * blocks keep a varying part of the chunk they were cut from.  That moves
 * the count once, not in both windows, so the test fails only when both
 * windows grew. */
#include "eptest.h"

#include <malloc.h>

/* Rounds before the first measurement and in each window.  A sanitizer's
 * count is exact and its rounds slow (12 s for 450 rounds of 2 x 2, a
 * minute beside another test on 2 cores), so it measures after fewer. */
#define WARM_PLAIN 150
#define WARM_SANITIZER 50
static int warm = WARM_PLAIN;
#define GROWTH_LIMIT 24 /* bytes a round */
#define BIG 6000        /* ints: above the eager limit */

/* Under a sanitizer, malloc is the sanitizer's and keeps its own count. */
#pragma weak __sanitizer_get_current_allocated_bytes
size_t __sanitizer_get_current_allocated_bytes(void);

static size_t heap_in_use(void)
{
    if (__sanitizer_get_current_allocated_bytes)
        return __sanitizer_get_current_allocated_bytes();
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* glibc's per-thread caches keep freed blocks that mallinfo2 counts as in
 * use, which makes its count drift by kilobytes.  Without them the count is
 * exact; they are set at start-up only, so the program runs itself again. */
static void exact_malloc_count(char **argv)
{
    if (__sanitizer_get_current_allocated_bytes || getenv("EPT_LEAK_EXACT"))
        return;
    setenv("EPT_LEAK_EXACT", "1", 1);
    setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", 1);
    execv("/proc/self/exe", argv);
    perror("leak_loop: execv /proc/self/exe");
    exit(1);
}

static int deleted; /* attribute delete callbacks run (per process) */

static int count_delete(MPI_Comm c, int key, void *val, void *extra)
{
    (void)c, (void)key, (void)val, (void)extra;
#pragma omp atomic
    deleted++;
    return MPI_SUCCESS;
}

static void comms(MPI_Comm comm, int rank, int size, int i)
{
    MPI_Comm ep, d, id, s, ic, m;
    MPI_Request rq;
    int key, v = i;

    PHASE("create_endpoints");
    EPT_OK(MPI_Comm_create_endpoints(comm, 1, MPI_INFO_NULL, &ep));
    EPT_OK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, ep));
    EPT_CHECK(v == i, "round %d: allreduce gave %d", i, v);
    EPT_OK(MPI_Comm_free(&ep));

    PHASE("dup, attributes");
    EPT_OK(MPI_Comm_dup(comm, &d));
    EPT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &key, NULL));
    EPT_OK(MPI_Comm_set_attr(d, key, &v));
    EPT_OK(MPI_Comm_idup(d, &id, &rq));
    EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));

    PHASE("split, intercomm");
    EPT_OK(MPI_Comm_split(id, rank % 2, rank, &s));
    if (size > 1) {
        /* Leaders: rank 0 of each half, ranks 0 and 1 of d. */
        EPT_OK(MPI_Intercomm_create(s, 0, d, rank % 2 ? 0 : 1, i, &ic));
        EPT_OK(MPI_Intercomm_merge(ic, rank % 2, &m));
        EPT_OK(MPI_Barrier(m));
        EPT_OK(MPI_Comm_free(&m));
        EPT_OK(MPI_Comm_free(&ic));
    }

    PHASE("groups");
    MPI_Group g, g0;
    int zero = 0;
    EPT_OK(MPI_Comm_group(s, &g));
    EPT_OK(MPI_Group_incl(g, 1, &zero, &g0));
    EPT_OK(MPI_Group_free(&g0));
    EPT_OK(MPI_Group_free(&g));

    EPT_OK(MPI_Comm_free(&s));
    EPT_OK(MPI_Comm_free(&id));
    EPT_OK(MPI_Comm_free(&d));
    EPT_OK(MPI_Comm_free_keyval(&key));
}

static void windows(MPI_Comm comm, int rank, int size, int i)
{
    int wbuf[2] = {-1, -1}, *base;
    MPI_Win w;
    PHASE("windows");
    EPT_OK(MPI_Win_create(wbuf, sizeof wbuf, sizeof(int), MPI_INFO_NULL, comm, &w));
    EPT_OK(MPI_Win_fence(0, w));
    EPT_OK(MPI_Put(&rank, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, w));
    EPT_OK(MPI_Win_fence(0, w));
    EPT_CHECK(wbuf[0] == (rank + size - 1) % size, "round %d: window holds %d", i, wbuf[0]);
    EPT_OK(MPI_Win_free(&w));
    EPT_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &base, &w));
    EPT_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w));
    *base = i;
    EPT_OK(MPI_Win_unlock(rank, w));
    EPT_OK(MPI_Win_free(&w));
}

static void requests(MPI_Comm comm, int rank, int size, int i, int *out, int *in)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size, a = i, b = -1;
    MPI_Request rq[2];
    MPI_Message msg;

    PHASE("non-blocking");
    out[0] = rank;
    out[BIG - 1] = i;
    EPT_OK(MPI_Irecv(in, BIG, MPI_INT, left, 1, comm, &rq[0]));
    EPT_OK(MPI_Isend(out, BIG, MPI_INT, right, 1, comm, &rq[1]));
    EPT_OK(MPI_Waitall(2, rq, statuses_ignore()));
    EPT_CHECK(in[0] == left && in[BIG - 1] == i, "round %d: large message damaged", i);

    PHASE("persistent");
    EPT_OK(MPI_Recv_init(&b, 1, MPI_INT, left, 2, comm, &rq[0]));
    EPT_OK(MPI_Send_init(&a, 1, MPI_INT, right, 2, comm, &rq[1]));
    for (int k = 0; k < 2; k++) {
        EPT_OK(MPI_Startall(2, rq));
        EPT_OK(MPI_Waitall(2, rq, statuses_ignore()));
        EPT_CHECK(b == i, "round %d: persistent receive got %d", i, b);
    }
    EPT_OK(MPI_Request_free(&rq[0]));
    EPT_OK(MPI_Request_free(&rq[1]));

    PHASE("freed while pending, matched probe");
    EPT_OK(MPI_Isend(out, BIG, MPI_INT, right, 3, comm, &rq[0]));
    EPT_OK(MPI_Request_free(&rq[0]));
    EPT_OK(MPI_Send(&a, 1, MPI_INT, right, 4, comm));
    EPT_OK(MPI_Recv(in, BIG, MPI_INT, left, 3, comm, MPI_STATUS_IGNORE));
    EPT_OK(MPI_Mprobe(left, 4, comm, &msg, MPI_STATUS_IGNORE));
    EPT_OK(MPI_Mrecv(&b, 1, MPI_INT, &msg, MPI_STATUS_IGNORE));
    EPT_CHECK(b == i, "round %d: matched probe got %d", i, b);

    PHASE("collective requests");
    EPT_OK(MPI_Ibarrier(comm, &rq[0]));
    EPT_OK(MPI_Iallreduce(&a, &b, 1, MPI_INT, MPI_SUM, comm, &rq[1]));
    EPT_OK(MPI_Waitall(2, rq, statuses_ignore()));
    EPT_CHECK(b == i * size, "round %d: iallreduce gave %d", i, b);
}

static size_t measured[3];

/* Each thread keeps some freed request objects for reuse, up to a few
 * hundred, and how many it holds varies from round to round.  Having many
 * alive at once, then freeing them, leaves every cache full: done by every
 * thread just before each measurement, it takes the caches out of it. */
static void fill_request_caches(MPI_Comm comm)
{
    enum { N = 1024 };
    static _Thread_local MPI_Request rq[N];
    int x;
    for (int k = 0; k < N; k++)
        EPT_OK(MPI_Recv_init(&x, 1, MPI_INT, 0, 0, comm, &rq[k]));
    for (int k = 0; k < N; k++)
        EPT_OK(MPI_Request_free(&rq[k]));
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    int rank, size;
    int *out = malloc(BIG * sizeof *out), *in = malloc(BIG * sizeof *in);
    EPT_CHECK(out && in, "out of memory");
    EPT_OK(MPI_Comm_rank(comm, &rank));
    EPT_OK(MPI_Comm_size(comm, &size));
    for (int i = 0; i < 3 * warm; i++) {
        comms(comm, rank, size, i);
        windows(comm, rank, size, i);
        requests(comm, rank, size, i, out, in);
        if ((i + 1) % warm == 0) {
            /* Every rank is done with round i; those of this process wait
             * here while one of them measures. */
            EPT_OK(MPI_Barrier(comm));
            fill_request_caches(comm);
#pragma omp barrier
#pragma omp masked
            measured[(i + 1) / warm - 1] = heap_in_use();
#pragma omp barrier
        }
    }
    free(out);
    free(in);
    long grew[2] = {(long)measured[1] - (long)measured[0], (long)measured[2] - (long)measured[1]};
    if (rank == 0)
        printf("heap in use after %d rounds: %zu bytes, after %d: %zu (%+ld), after %d: %zu (%+ld)\n", warm,
               measured[0], 2 * warm, measured[1], grew[0], 3 * warm, measured[2], grew[1]);
    EPT_CHECK(grew[0] < (long)warm * GROWTH_LIMIT || grew[1] < (long)warm * GROWTH_LIMIT,
              "the heap grew by %ld bytes in rounds %d-%d and by %ld in rounds %d-%d", grew[0], warm, 2 * warm, grew[1],
              2 * warm, 3 * warm);
#pragma omp masked
    EPT_CHECK(deleted == 3 * warm * omp_get_num_threads(), "%d attribute delete callbacks ran", deleted);
}

int main(int argc, char **argv)
{
    exact_malloc_count(argv);
    if (__sanitizer_get_current_allocated_bytes)
        warm = WARM_SANITIZER;
    return ept_main(argc, argv, 300, body, NULL);
}
