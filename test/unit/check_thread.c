/* Thread identity (thread.h) under EPMPI_THREADS=first-call: the thread
 * that begins world mode holds endpoint 0; other threads take the lowest
 * free endpoint at their first look and keep it; a thread that ends gives
 * its endpoint back; with every endpoint held a thread gets
 * EP_THREAD_NONE; MPI_Init's thread speaks for the endpoints nobody holds.
 * Under the openmp rule a thread outside any region is endpoint 0. */
#include "base/thread.h"

#include "unit.h"

#include <check.h>
#include <pthread.h>

static void *look(void *arg)
{
    int *out = arg;
    out[0] = ep_thread_index();
    out[1] = ep_thread_index(); /* the same endpoint again */
    out[2] = ep_thread_index_peek();
    return NULL;
}

/* The endpoints a new thread gets (first, again, peek). */
static void in_thread(int out[3])
{
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, look, out), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
}

typedef struct {
    pthread_barrier_t *hold; /* keep the endpoint until all have taken theirs */
    int got;
} holder_t;

static void *hold(void *arg)
{
    holder_t *h = arg;
    h->got = ep_thread_index();
    pthread_barrier_wait(h->hold);
    pthread_barrier_wait(h->hold);
    return NULL;
}

START_TEST(first_call_takes_lowest_free)
{
    enum { N = 4 };
    ep_thread_world(N, 1);
    ck_assert_int_eq(ep_thread_index(), 0);
    ck_assert_int_eq(ep_thread_endpoint_held(0), 1);
    /* Threads one after another: each ends before the next, so each finds
     * endpoint 1 free again. */
    for (int i = 0; i < 3; i++) {
        int got[3];
        in_thread(got);
        ck_assert_int_eq(got[0], 1);
        ck_assert_int_eq(got[1], 1);
        ck_assert_int_eq(got[2], 1);
        ck_assert_int_eq(ep_thread_endpoint_held(1), 0);
    }
    /* N - 1 threads alive at once hold 1..N-1, in some order; one more
     * gets none; the main thread speaks for none of theirs. */
    pthread_barrier_t b;
    pthread_barrier_init(&b, NULL, N);
    pthread_t t[N - 1];
    holder_t h[N - 1];
    for (int i = 0; i < N - 1; i++) {
        h[i] = (holder_t){&b, -1};
        ck_assert_int_eq(pthread_create(&t[i], NULL, hold, &h[i]), 0);
    }
    pthread_barrier_wait(&b);
    int seen = 0;
    for (int i = 0; i < N - 1; i++) {
        ck_assert_int_ge(h[i].got, 1);
        ck_assert_int_lt(h[i].got, N);
        seen |= 1 << h[i].got;
    }
    ck_assert_int_eq(seen, ((1 << N) - 1) & ~1);
    int none[3];
    in_thread(none);
    ck_assert_int_eq(none[0], EP_THREAD_NONE);
    ck_assert_int_eq(none[2], EP_THREAD_NONE);
    ck_assert_int_eq(ep_thread_speaks_for(0), 1);
    for (int e = 1; e < N; e++)
        ck_assert_int_eq(ep_thread_speaks_for(e), 0);
    pthread_barrier_wait(&b);
    for (int i = 0; i < N - 1; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&b);
    for (int e = 1; e < N; e++) {
        ck_assert_int_eq(ep_thread_endpoint_held(e), 0);
        ck_assert_int_eq(ep_thread_speaks_for(e), 1);
    }
    ep_thread_world(0, 0);
}
END_TEST

START_TEST(openmp_rule_outside_regions)
{
    ep_thread_world(4, 0);
    ck_assert_int_eq(ep_thread_index(), 0);
    int got[3];
    in_thread(got); /* not an OpenMP thread: endpoint 0 */
    ck_assert_int_eq(got[0], 0);
    ck_assert_int_eq(got[2], 0);
    ck_assert_int_eq(ep_thread_speaks_for(3), 1);
    ep_thread_world(0, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("thread");
    TCase *tc = tcase_create("thread");
    tcase_add_test(tc, first_call_takes_lowest_free);
    tcase_add_test(tc, openmp_rule_outside_regions);
    suite_add_tcase(s, tc);
    return ep_unit_run(s);
}
