/* src/core/bsend.c: buffered-send space is reserved only while it fits in what
 * was attached (an exact fit included), comes back on release, and detach
 * waits for the messages in flight; threads reserving at once never hold
 * more than was attached. */
#include "core/bsend.h"
#include "unit.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

START_TEST(reserve_within_the_attached_space)
{
    ep_bsend_attach(100);
    ck_assert_int_eq(ep_bsend_reserve(60), 1);
    ck_assert_int_eq(ep_bsend_reserve(50), 0); /* 110 > 100 */
    ck_assert_int_eq(ep_bsend_reserve(40), 1); /* exactly full */
    ck_assert_int_eq(ep_bsend_reserve(1), 0);
    ep_bsend_release(60);
    ck_assert_int_eq(ep_bsend_reserve(50), 1);
    ep_bsend_release(50);
    ep_bsend_release(40);
    ep_bsend_release(0); /* a send that held nothing */
    ck_assert_int_eq((int)ep_bsend_detach(), 100);
    ck_assert_int_eq(ep_bsend_reserve(1), 0); /* nothing attached */
}
END_TEST

/* Released 1 ms after the reserve began waiting; the wait is stretched to
 * 10 s for this test because a loaded machine (TSan, make -j2) once took
 * more than the default 20 ms to run this thread at all. */
static void *release_later(void *arg)
{
    usleep(1000);
    ep_bsend_release(*(size_t *)arg);
    return NULL;
}

/* A message whose transport says it is over only a little after its
 * receiver has it (a rendezvous acknowledgement still on its way): a
 * buffered send that needs its space waits for it, briefly; when no space
 * comes, it still fails. */
START_TEST(reserve_waits_briefly_for_space_in_flight)
{
    size_t n = 60;
    pthread_t t;
    ep_bsend_attach(100);
    ep_bsend_set_reclaim_wait(10000000000ull);
    ck_assert_int_eq(ep_bsend_reserve(n), 1);
    ck_assert_int_eq(pthread_create(&t, NULL, release_later, &n), 0);
    ck_assert_int_eq(ep_bsend_reserve(50), 1); /* once the 60 bytes come back */
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ep_bsend_set_reclaim_wait(20000000); /* the default again */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    ck_assert_int_eq(ep_bsend_reserve(60), 0); /* 50 + 60 > 100, and the 50 stay */
    clock_gettime(CLOCK_MONOTONIC, &b);
    double waited = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    ck_assert(waited < 2.0);
    ep_bsend_release(50);
    ck_assert_int_eq((int)ep_bsend_detach(), 100);
}
END_TEST

static atomic_int detached;

static void *detach_thread(void *arg)
{
    *(size_t *)arg = ep_bsend_detach();
    atomic_store(&detached, 1);
    return NULL;
}

START_TEST(detach_waits_for_messages_in_flight)
{
    size_t got = 0;
    pthread_t t;
    ep_bsend_attach(64);
    ck_assert_int_eq(ep_bsend_reserve(10), 1);
    atomic_store(&detached, 0);
    ck_assert_int_eq(pthread_create(&t, NULL, detach_thread, &got), 0);
    usleep(20000);
    ck_assert_int_eq(atomic_load(&detached), 0); /* still held */
    ep_bsend_release(10);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(atomic_load(&detached), 1);
    ck_assert_int_eq((int)got, 64);
}
END_TEST

#define SPACE 8
#define NT 4
#define ROUNDS 20000
static atomic_int held, most;

static void *reserver(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        if (!ep_bsend_reserve(1))
            continue;
        int now = atomic_fetch_add(&held, 1) + 1, m = atomic_load(&most);
        while (now > m && !atomic_compare_exchange_weak(&most, &m, now))
            ;
        atomic_fetch_sub(&held, 1);
        ep_bsend_release(1);
    }
    return NULL;
}

START_TEST(concurrent_reservations_stay_within_the_space)
{
    pthread_t t[NT];
    ep_bsend_attach(SPACE);
    for (int i = 0; i < NT; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, reserver, NULL), 0);
    for (int i = 0; i < NT; i++)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    ck_assert_int_le(atomic_load(&most), SPACE);
    ck_assert_int_ge(atomic_load(&most), 1);
    ck_assert_int_eq((int)ep_bsend_detach(), SPACE); /* everything was given back */
}
END_TEST

int main(int argc, char **argv)
{
    int provided;
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    Suite *s = suite_create("bsend");
    TCase *tc = tcase_create("space");
    tcase_add_test(tc, reserve_within_the_attached_space);
    tcase_add_test(tc, detach_waits_for_messages_in_flight);
    tcase_add_test(tc, reserve_waits_briefly_for_space_in_flight);
    tcase_add_test(tc, concurrent_reservations_stay_within_the_space);
    suite_add_tcase(s, tc);
    int rc = ep_unit_run_nofork(s);
    PMPI_Finalize();
    return rc;
}
