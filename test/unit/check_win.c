/* src/rma/win.c, the ranks' lock words: an exclusive lock keeps out every
 * other endpoint (those of the target's own process included), shared
 * locks are held together, an exclusive lock waits for the shared ones
 * to go, and every lock word is back at zero when the locks are given
 * back.  Four threads, one endpoint each, of a communicator in this
 * process; the window's collective creation and free run as in a
 * program. */
#include "core/comm.h"
#include "transport/net.h"
#include "core/proc.h"
#include "rma/win.h"

#include "threads.h"
#include "unit.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 200

static ep_comm_t *c; /* each test's */
static MPI_Win handles[EP_UNIT_NT];
static pthread_barrier_t bar;

/* Fails the worker with a message (the first one kept). */
#define WFAIL(w, ...)                                        \
    do {                                                     \
        if (!(w)->err[0])                                    \
            snprintf((w)->err, sizeof(w)->err, __VA_ARGS__); \
    } while (0)

static ep_win_ep_t *open_window(ep_unit_worker_t *w)
{
    void *base = NULL;
    ep_status_t rc = ep_win_create(&c->local[w->me], EP_WIN_ALLOCATE, NULL, 64, 1, &base, &handles[w->me]);
    if (rc) {
        WFAIL(w, "ep_win_create: status %d", (int)rc);
        return NULL;
    }
    return ep_win_get(handles[w->me]);
}

static void close_window(ep_unit_worker_t *w, ep_win_ep_t *we)
{
    ep_status_t rc = ep_win_free(we);
    if (rc)
        WFAIL(w, "ep_win_free: status %d", (int)rc);
}

/* Inside an exclusive lock of rank 0, nobody else is. */
static atomic_int inside, most_inside, total;

static void *exclusive_worker(void *arg)
{
    ep_unit_worker_t *w = arg;
    ep_win_ep_t *we = open_window(w);
    if (!we)
        return NULL;
    for (int k = 0; k < ROUNDS && !w->err[0]; k++) {
        if (ep_win_lock(we, MPI_LOCK_EXCLUSIVE, 0, 0)) {
            WFAIL(w, "lock, round %d", k);
            break;
        }
        int now = atomic_fetch_add(&inside, 1) + 1, m = atomic_load(&most_inside);
        while (now > m && !atomic_compare_exchange_weak(&most_inside, &m, now))
            ;
        if (k % 8 == 0)
            sched_yield();           /* give the others time to get in, were the lock broken */
        int t = atomic_load(&total); /* a read-modify-write the lock must keep whole */
        atomic_store(&total, t + 1);
        atomic_fetch_sub(&inside, 1);
        if (ep_win_unlock(we, 0)) {
            WFAIL(w, "unlock, round %d", k);
            break;
        }
    }
    pthread_barrier_wait(&bar);
    if (*we->w->lwords[0] != 0)
        WFAIL(w, "rank 0's lock word is %lld after every unlock", (long long)*we->w->lwords[0]);
    pthread_barrier_wait(&bar);
    close_window(w, we);
    return NULL;
}

START_TEST(an_exclusive_lock_keeps_everyone_out)
{
    atomic_store(&inside, 0);
    atomic_store(&most_inside, 0);
    atomic_store(&total, 0);
    c = ep_unit_local_comm(EP_UNIT_NT);
    ep_unit_run_threads(c, NULL, exclusive_worker);
    ep_unit_comm_free(c);
    int most = atomic_load(&most_inside), sum = atomic_load(&total);
    ck_assert_msg(most == 1, "%d endpoints were inside an exclusive lock at once", most);
    ck_assert_int_eq(sum, EP_UNIT_NT * ROUNDS);
}
END_TEST

/* Every rank takes a shared lock of rank 1 and waits, holding it, until
 * all hold it together; then rank 0 asks for an exclusive lock, which
 * must wait until the others have given theirs back. */
static atomic_int holding, excl_taken, shared_out;

static int wait_for(atomic_int *v, int want, int ms)
{
    for (int i = 0; i < ms * 10 && atomic_load(v) < want; i++)
        usleep(100);
    return atomic_load(v) >= want;
}

static void *shared_worker(void *arg)
{
    ep_unit_worker_t *w = arg;
    ep_win_ep_t *we = open_window(w);
    if (!we)
        return NULL;
    if (ep_win_lock(we, MPI_LOCK_SHARED, 1, 0)) {
        WFAIL(w, "shared lock");
    } else {
        atomic_fetch_add(&holding, 1);
        if (!wait_for(&holding, EP_UNIT_NT, 5000))
            WFAIL(w, "shared locks not held together: %d of %d", atomic_load(&holding), EP_UNIT_NT);
        if (ep_win_unlock(we, 1))
            WFAIL(w, "shared unlock");
    }
    pthread_barrier_wait(&bar);
    /* Rank 2 holds a shared lock while rank 0 asks for an exclusive one. */
    if (w->me == 2) {
        if (ep_win_lock(we, MPI_LOCK_SHARED, 1, 0))
            WFAIL(w, "second shared lock");
        pthread_barrier_wait(&bar);
        usleep(30000);
        if (atomic_load(&excl_taken))
            WFAIL(w, "the exclusive lock was taken while a shared one was held");
        atomic_store(&shared_out, 1);
        if (ep_win_unlock(we, 1))
            WFAIL(w, "second shared unlock");
    } else if (w->me == 0) {
        pthread_barrier_wait(&bar);
        if (ep_win_lock(we, MPI_LOCK_EXCLUSIVE, 1, 0))
            WFAIL(w, "exclusive lock");
        atomic_store(&excl_taken, 1);
        if (!atomic_load(&shared_out))
            WFAIL(w, "the exclusive lock came before the shared one was given back");
        if (ep_win_unlock(we, 1))
            WFAIL(w, "exclusive unlock");
    } else {
        pthread_barrier_wait(&bar);
    }
    pthread_barrier_wait(&bar);
    for (int r = 0; r < EP_UNIT_NT; r++)
        if (*we->w->lwords[r] != 0)
            WFAIL(w, "rank %d's lock word is %lld after every unlock", r, (long long)*we->w->lwords[r]);
    pthread_barrier_wait(&bar);
    close_window(w, we);
    return NULL;
}

START_TEST(shared_locks_together_and_exclusive_after_them)
{
    atomic_store(&holding, 0);
    atomic_store(&excl_taken, 0);
    atomic_store(&shared_out, 0);
    c = ep_unit_local_comm(EP_UNIT_NT);
    ep_unit_run_threads(c, NULL, shared_worker);
    ep_unit_comm_free(c);
}
END_TEST

int main(int argc, char **argv)
{
    int provided;
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    ep_proc_init();
    ep_net_init();
    pthread_barrier_init(&bar, NULL, EP_UNIT_NT);
    Suite *s = suite_create("win");
    TCase *tc = tcase_create("lock words");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, an_exclusive_lock_keeps_everyone_out);
    tcase_add_test(tc, shared_locks_together_and_exclusive_after_them);
    suite_add_tcase(s, tc);
    int rc = ep_unit_run_nofork(s);
    ep_win_finalize();
    ep_net_finalize();
    ep_proc_finalize();
    PMPI_Finalize();
    return rc;
}
