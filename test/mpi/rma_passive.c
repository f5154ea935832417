/* Passive-target one-sided communication on the test communicator (see
 * rma_common.h for the shapes), in MPI_Win_allocate memory:
 *  - a shared counter: every rank adds 1 ITER times with MPI_Fetch_and_op
 *    under MPI_LOCK_SHARED, with MPI_Win_flush every few; the values
 *    fetched by all ranks together are exactly 0 .. ITER * n - 1 and the
 *    counter ends at ITER * n (read with MPI_NO_OP);
 *  - elections with MPI_Compare_and_swap on slots of several ranks: exactly
 *    one winner, every loser fetches the winner, the slot holds the winner;
 *  - mutual exclusion: a counter incremented XITER times per rank by a
 *    non-atomic read-modify-write under MPI_LOCK_EXCLUSIVE (Get, flush,
 *    Put by the others; load and store by the owner) ends exact, and
 *    every rank can hold an exclusive lock on itself at the same time;
 *  - MPI_Win_lock_all with request-based operations completed by MPI_Wait:
 *    Rput (origin buffer reusable after the wait, data at the target after
 *    MPI_Win_flush), Rget, Raccumulate to every rank, Rget_accumulate with
 *    MPI_SUM on a counter (exact) and MPI_NO_OP;
 *  - MPI_Win_flush_local and MPI_Win_flush_local_all (origin buffers reused
 *    before the remote flush), MPI_Win_flush_all;
 *  - MPI_Win_sync: remote puts seen by local loads, local stores seen by
 *    remote gets, each side separated by MPI_Barrier;
 *  - a 4 MiB Put flushed, then a message to its target, which must find
 *    the whole of it (only the flush orders the two);
 *  - the counter and mutual exclusion again on windows over rank 0 alone
 *    and over the other ranks: a window over some of the processes keeps
 *    its lock words in a lock window of its own (src/rma/win.c), where a
 *    process's rank differs from its rank in MPI_COMM_WORLD (3 x 1: the
 *    processes 1 and 2 are 0 and 1 there).
 * Every value is checked against values computed here. */
#include "rma_common.h"

#define ITER 200       /* Fetch_and_op increments per rank */
#define FLUSH_EVERY 10 /* Fetch_and_op calls between flushes */
#define XITER 30       /* exclusive read-modify-writes per rank */
#define RITER 20       /* Rget_accumulate increments per rank */
#define ROUNDS 4       /* Compare_and_swap elections */
#define K 8            /* longs per origin in the lock_all part */

static long val(int r, int i) { return r * 1000L + i + 1; }

/* Allocates a window of count longs (rounded up to an even count: see
 * below), set to init under an exclusive lock on this rank's own window
 * (valid in both memory models), then waits for every rank. */
static long *alloc_longs(MPI_Comm comm, int count, long init, MPI_Win *win)
{
    int me;
    long *base = NULL;
    /* MPICH 4.0.2 misplaces the windows of ranks above 0 by 8 bytes when
     * the size is not a multiple of 16: RMA lands before the base pointer
     * it returns.  The tests keep away from that bug. */
    count += count % 2;
    EPT_OK(MPI_Comm_rank(comm, &me));
    EPT_OK(MPI_Win_allocate(sizeof(long) * count, sizeof(long), MPI_INFO_NULL, comm, &base, win));
    rma_check_attrs(*win, base, sizeof(long) * count, sizeof(long), MPI_WIN_FLAVOR_ALLOCATE, "allocated window");
    EPT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, *win));
    for (int i = 0; i < count; i++)
        base[i] = init;
    EPT_OK(MPI_Win_unlock(me, *win));
    EPT_OK(MPI_Barrier(comm));
    return base;
}

/* ---- shared counter ------------------------------------------------------- */

static void part_counter(MPI_Comm comm)
{
    int me, n;
    EPT_OK(MPI_Comm_rank(comm, &me));
    EPT_OK(MPI_Comm_size(comm, &n));
    int t = n / 2;
    long one = 1, fetched[ITER], final = -1;
    MPI_Win win;
    PHASE("rma_passive: counter: allocate");
    alloc_longs(comm, 1, 0, &win);
    PHASE("rma_passive: counter: Fetch_and_op");
    EPT_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    for (int i = 0; i < ITER; i++) {
        EPT_OK(MPI_Fetch_and_op(&one, &fetched[i], MPI_LONG, t, 0, MPI_SUM, win));
        if (i % FLUSH_EVERY == FLUSH_EVERY - 1)
            EPT_OK(MPI_Win_flush(t, win));
    }
    EPT_OK(MPI_Win_unlock(t, win));
    /* Accumulates from one origin to one location are ordered by default
     * (accumulate_ordering), so each rank's values increase. */
    for (int i = 1; i < ITER; i++)
        EPT_CHECK(fetched[i] > fetched[i - 1], "rank %d: increment %d fetched %ld after %ld", me, i, fetched[i],
                  fetched[i - 1]);
    rma_check_permutation(fetched, ITER, NULL, 0, 0, comm, "shared counter");
    EPT_OK(MPI_Barrier(comm)); /* every increment is complete at the target */
    EPT_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    EPT_OK(MPI_Fetch_and_op(NULL, &final, MPI_LONG, t, 0, MPI_NO_OP, win));
    EPT_OK(MPI_Win_unlock(t, win));
    EPT_CHECK(final == (long)ITER * n, "rank %d: the counter at rank %d ends at %ld, expected %ld", me, t, final,
              (long)ITER * n);
    EPT_OK(MPI_Win_free(&win));
}

/* ---- Compare_and_swap elections ------------------------------------------- */

static void part_election(MPI_Comm comm)
{
    int me, n;
    EPT_OK(MPI_Comm_rank(comm, &me));
    EPT_OK(MPI_Comm_size(comm, &n));
    MPI_Win win;
    PHASE("rma_passive: election: allocate");
    alloc_longs(comm, ROUNDS, -1, &win);
    PHASE("rma_passive: election: Compare_and_swap");
    for (int k = 0; k < ROUNDS; k++) {
        int t = (k * 5 + 1) % n, wins = 0, winner = -1;
        long none = -1, result = -7, held = -7, mine = me;
        EPT_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        EPT_OK(MPI_Compare_and_swap(&mine, &none, &result, MPI_LONG, t, k, win));
        EPT_OK(MPI_Win_unlock(t, win));
        int won = result == -1;
        EPT_CHECK(won || (result >= 0 && result < n), "rank %d: election %d fetched %ld", me, k, result);
        EPT_OK(MPI_Allreduce(&won, &wins, 1, MPI_INT, MPI_SUM, comm));
        EPT_CHECK(wins == 1, "rank %d: election %d at rank %d has %d winners", me, k, t, wins);
        int claim = won ? me : -1;
        EPT_OK(MPI_Allreduce(&claim, &winner, 1, MPI_INT, MPI_MAX, comm));
        EPT_CHECK(won || result == winner, "rank %d: election %d: lost to %ld but rank %d won", me, k, result, winner);
        EPT_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        EPT_OK(MPI_Get(&held, 1, MPI_LONG, t, k, 1, MPI_LONG, win));
        EPT_OK(MPI_Win_unlock(t, win));
        EPT_CHECK(held == winner, "rank %d: election %d: the slot holds %ld, the winner is %d", me, k, held, winner);
    }
    EPT_OK(MPI_Win_free(&win));
}

/* ---- exclusive locks -------------------------------------------------------- */

static void part_exclusive(MPI_Comm comm)
{
    int me, n;
    EPT_OK(MPI_Comm_rank(comm, &me));
    EPT_OK(MPI_Comm_size(comm, &n));
    int t = n - 1;
    long v = -1;
    MPI_Win win;
    PHASE("rma_passive: exclusive: allocate");
    long *c = alloc_longs(comm, 1, 0, &win);
    PHASE("rma_passive: exclusive: read-modify-write");
    for (int i = 0; i < XITER; i++) {
        EPT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        if (me == t && i % 2) {
            /* The owner's own load and store, excluded by the same lock. */
            v = *(volatile long *)c;
            *(volatile long *)c = v + 1;
        } else {
            EPT_OK(MPI_Get(&v, 1, MPI_LONG, t, 0, 1, MPI_LONG, win));
            EPT_OK(MPI_Win_flush(t, win));
            v++;
            EPT_OK(MPI_Put(&v, 1, MPI_LONG, t, 0, 1, MPI_LONG, win));
        }
        EPT_OK(MPI_Win_unlock(t, win));
    }
    EPT_OK(MPI_Barrier(comm));
    EPT_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    EPT_OK(MPI_Get(&v, 1, MPI_LONG, t, 0, 1, MPI_LONG, win));
    EPT_OK(MPI_Win_unlock(t, win));
    EPT_CHECK(v == (long)XITER * n, "rank %d: the counter under exclusive locks ends at %ld, expected %ld", me, v,
              (long)XITER * n);
    /* Every rank holds an exclusive lock on itself at the same time: the
     * locks of different ranks are independent, whatever the processes
     * (a lock word misplaced onto another rank's deadlocks here). */
    PHASE("rma_passive: exclusive: every rank locks itself at once");
    EPT_OK(MPI_Barrier(comm)); /* nobody reads the counter any more */
    EPT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    EPT_OK(MPI_Barrier(comm));
    EPT_OK(MPI_Win_unlock(me, win));
    EPT_OK(MPI_Win_free(&win));
}

/* ---- lock_all, request-based operations, flushes, Win_sync ----------------- */

/* Window layout (longs): slot of each origin (n * K), then acc (K), then cnt. */
typedef struct {
    MPI_Comm comm;
    MPI_Win win;
    long *base;
    int me, n, left, right;
} lockall_t;

/* Waits for every origin's flushed operations, then makes them visible to
 * this rank's loads. */
static void settle(lockall_t *s)
{
    EPT_OK(MPI_Barrier(s->comm));
    EPT_OK(MPI_Win_sync(s->win));
}

/* Slot of origin r at this rank must hold val(r, first + i). */
static void check_slot(lockall_t *s, int r, int first, const char *what)
{
    for (int i = 0; i < K; i++)
        EPT_CHECK(s->base[r * K + i] == val(r, first + i),
                  "rank %d: %s: slot of rank %d element %d is %ld, "
                  "expected %ld",
                  s->me, what, r, i, s->base[r * K + i], val(r, first + i));
}

static void lockall_requests(lockall_t *s)
{
    long src[K], got[K], add[K], f[RITER], one = 1;
    MPI_Aint acc = (MPI_Aint)s->n * K, cnt = acc + K;
    MPI_Request req, *reqs = malloc(sizeof(MPI_Request) * (size_t)s->n);
    EPT_CHECK(reqs, "out of memory");
    PHASE("rma_passive: lock_all: Rput and Rget");
    for (int i = 0; i < K; i++) {
        src[i] = val(s->me, i);
        add[i] = (s->me + 1L) * (i + 1);
    }
    EPT_OK(MPI_Rput(src, K, MPI_LONG, s->right, s->me * K, K, MPI_LONG, s->win, &req));
    EPT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < K; i++)
        src[i] = -9; /* locally complete: the buffer is free again */
    EPT_OK(MPI_Win_flush(s->right, s->win));
    EPT_OK(MPI_Rget(got, K, MPI_LONG, s->right, s->me * K, K, MPI_LONG, s->win, &req));
    EPT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < K; i++)
        EPT_CHECK(got[i] == val(s->me, i), "rank %d: Rget after Rput and flush: element %d is %ld, expected %ld", s->me,
                  i, got[i], val(s->me, i));

    PHASE("rma_passive: lock_all: Raccumulate and Rget_accumulate");
    for (int t = 0; t < s->n; t++)
        EPT_OK(MPI_Raccumulate(add, K, MPI_LONG, t, acc, K, MPI_LONG, MPI_SUM, s->win, &reqs[t]));
    EPT_OK(MPI_Waitall(s->n, reqs, statuses_ignore()));
    for (int i = 0; i < RITER; i++) {
        EPT_OK(MPI_Rget_accumulate(&one, 1, MPI_LONG, &f[i], 1, MPI_LONG, 0, cnt, 1, MPI_LONG, MPI_SUM, s->win, &req));
        EPT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    EPT_OK(MPI_Win_flush_all(s->win));
    rma_check_permutation(f, RITER, NULL, 0, 0, s->comm, "Rget_accumulate counter");
    settle(s);
    check_slot(s, s->left, 0, "Rput");
    for (int i = 0; i < K; i++) {
        long want = (i + 1L) * s->n * (s->n + 1) / 2;
        EPT_CHECK(s->base[acc + i] == want, "rank %d: Raccumulate from all: element %d is %ld, expected %ld", s->me, i,
                  s->base[acc + i], want);
    }
    /* The same, read through RMA on itself. */
    EPT_OK(MPI_Rget_accumulate(NULL, 0, MPI_LONG, got, K, MPI_LONG, s->me, acc, K, MPI_LONG, MPI_NO_OP, s->win, &req));
    EPT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    EPT_CHECK(memcmp(got, s->base + acc, sizeof got) == 0, "rank %d: Rget_accumulate MPI_NO_OP differs from memory",
              s->me);
    EPT_CHECK(s->me != 0 || s->base[cnt] == (long)RITER * s->n, "the Rget_accumulate counter ends at %ld, expected %ld",
              s->base[cnt], (long)RITER * s->n);
    EPT_OK(MPI_Barrier(s->comm)); /* every rank has read before the next writes */
    free(reqs);
}

static void lockall_flush_local(lockall_t *s)
{
    long src[K];
    PHASE("rma_passive: lock_all: flush_local");
    for (int i = 0; i < K; i++)
        src[i] = val(s->me, 100 + i);
    EPT_OK(MPI_Put(src, K, MPI_LONG, s->right, s->me * K, K, MPI_LONG, s->win));
    EPT_OK(MPI_Win_flush_local(s->right, s->win));
    for (int i = 0; i < K; i++)
        src[i] = -9;
    EPT_OK(MPI_Win_flush(s->right, s->win));
    settle(s);
    check_slot(s, s->left, 100, "Put with flush_local");
    EPT_OK(MPI_Barrier(s->comm));

    PHASE("rma_passive: lock_all: flush_local_all");
    for (int i = 0; i < K; i++)
        src[i] = val(s->me, 200 + i);
    for (int t = 0; t < s->n; t++)
        EPT_OK(MPI_Put(src, K, MPI_LONG, t, s->me * K, K, MPI_LONG, s->win));
    EPT_OK(MPI_Win_flush_local_all(s->win));
    for (int i = 0; i < K; i++)
        src[i] = -9;
    EPT_OK(MPI_Win_flush_all(s->win));
    settle(s);
    for (int r = 0; r < s->n; r++)
        check_slot(s, r, 200, "Put to all with flush_local_all");
    EPT_OK(MPI_Barrier(s->comm));
}

/* Local stores made visible by Win_sync, read by the left neighbour. */
static void lockall_sync(lockall_t *s)
{
    long got[K];
    PHASE("rma_passive: lock_all: Win_sync");
    for (int i = 0; i < K; i++)
        s->base[s->me * K + i] = val(s->me, 300 + i);
    EPT_OK(MPI_Win_sync(s->win));
    EPT_OK(MPI_Barrier(s->comm));
    EPT_OK(MPI_Get(got, K, MPI_LONG, s->right, s->right * K, K, MPI_LONG, s->win));
    EPT_OK(MPI_Win_flush(s->right, s->win));
    for (int i = 0; i < K; i++)
        EPT_CHECK(got[i] == val(s->right, 300 + i),
                  "rank %d: the right neighbour's local store: element %d is %ld, "
                  "expected %ld",
                  s->me, i, got[i], val(s->right, 300 + i));
    EPT_OK(MPI_Barrier(s->comm));
}

static void part_lockall(MPI_Comm comm)
{
    lockall_t s = {.comm = comm};
    ept_ring_place(comm, &s.me, &s.n, &s.left, &s.right);
    PHASE("rma_passive: lock_all: allocate");
    s.base = alloc_longs(comm, s.n * K + K + 1, 0, &s.win);
    EPT_OK(MPI_Win_lock_all(0, s.win));
    lockall_requests(&s);
    lockall_flush_local(&s);
    lockall_sync(&s);
    EPT_OK(MPI_Win_unlock_all(s.win));
    EPT_OK(MPI_Win_free(&s.win));
}

/* ---- a flush seen through a message ----------------------------------------- */
#define NOTICE_LONGS (512 * 1024) /* 4 MiB: more than MPICH moves at once */
#define NOTICE_ROUNDS 3

/* Each rank puts a large block into its right neighbour's window,
 * flushes it, and tells the neighbour with a message; the neighbour, once
 * it has the message, must find the whole block there.  The message takes
 * another way than the Put (epmpi's transports, not MPICH's window), so
 * only the flush orders the two. */
static void part_flush_notice(MPI_Comm comm)
{
    int me, n, left, right;
    MPI_Win win;
    ept_ring_place(comm, &me, &n, &left, &right);
    PHASE("rma_passive: flush then notice: allocate");
    long *base = alloc_longs(comm, NOTICE_LONGS, 0, &win);
    long *block = malloc(sizeof *block * NOTICE_LONGS);
    EPT_CHECK(block, "out of memory");
    PHASE("rma_passive: flush then notice: Put, flush, send");
    EPT_OK(MPI_Win_lock_all(0, win));
    for (int round = 0; round < NOTICE_ROUNDS; round++) {
        for (long i = 0; i < NOTICE_LONGS; i++)
            block[i] = val(me, round) * 7919 + i;
        EPT_OK(MPI_Put(block, NOTICE_LONGS, MPI_LONG, right, 0, NOTICE_LONGS, MPI_LONG, win));
        EPT_OK(MPI_Win_flush(right, win));
        int notice = round, got = -1;
        EPT_OK(MPI_Sendrecv(&notice, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, comm, MPI_STATUS_IGNORE));
        EPT_CHECK(got == round, "rank %d: notice %d from rank %d, expected %d", me, got, left, round);
        EPT_OK(MPI_Win_sync(win));
        for (long i = 0; i < NOTICE_LONGS; i++) {
            long v = base[i]; /* read once: a late Put may still be landing */
            if (v != val(left, round) * 7919 + i) {
                EPT_CHECK(0, "rank %d, round %d: element %ld of rank %d's flushed Put is %ld, expected %ld", me, round,
                          i, left, v, val(left, round) * 7919 + i);
                break;
            }
        }
        EPT_OK(MPI_Barrier(comm)); /* checked before the next round's Put */
    }
    EPT_OK(MPI_Win_unlock_all(win));
    EPT_OK(MPI_Win_free(&win));
    free(block);
}

static void part_subset(MPI_Comm comm)
{
    int me;
    MPI_Comm sub;
    EPT_OK(MPI_Comm_rank(comm, &me));
    EPT_OK(MPI_Comm_split(comm, me > 0, me, &sub));
    part_counter(sub);
    part_exclusive(sub);
    EPT_OK(MPI_Comm_free(&sub));
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    part_counter(comm);
    part_election(comm);
    part_exclusive(comm);
    part_lockall(comm);
    part_flush_notice(comm);
    part_subset(comm);
}

int main(int argc, char **argv) { return ept_main_classic(argc, argv, 60, body, NULL); }
