/* Request pools (request.c): each thread reuses the requests it frees and
 * their registry slots without a lock.  What must hold: objects come back
 * most recently freed first, slots oldest first and only after a delay,
 * the slots a thread holds stay few, and a thread that exits, a pool
 * emptied at MPI_Finalize and a thread without a pool give everything
 * back to the registry.  A request with a handle holds its endpoint; a
 * thread takes those holds in batches (its credit), and every hold taken
 * comes back: the credit when the thread turns to another endpoint, frees
 * the endpoint, ends or finalizes, a request's hold when it is destroyed.
 * (Stale handles: check_registry.) */
#include "core/registry.h"
#include "core/request.h"

#include "unit.h"

#include <check.h>
#include <pthread.h>

/* request.c keeps a freed slot for EP_REQ_POOL_KEEP (16) further requests
 * of its thread before minting on it again; the bound below leaves room
 * for that and for the slots taken before the pool has any. */
#define FEW_SLOTS 40

static ep_request_t *new_req(int with_handle)
{
    ep_request_t *r = ep_request_new(EP_REQ_SEND, NULL, with_handle);
    ck_assert_ptr_nonnull(r);
    return r;
}

START_TEST(objects_come_back_most_recently_freed_first)
{
    ep_request_t *a = new_req(0), *b = new_req(0);
    ep_request_destroy(a);
    ep_request_destroy(b);
    ck_assert_ptr_eq(new_req(0), b);
    ck_assert_ptr_eq(new_req(0), a);
    ep_request_destroy(a);
    ep_request_destroy(b);
    ep_request_pools_free();
}
END_TEST

START_TEST(reused_objects_are_cleared)
{
    ep_request_t *a = new_req(1);
    a->count = 7;
    a->tag = 99;
    atomic_store(&a->state, EP_RS_DONE);
    ep_request_destroy(a);
    ep_request_t *b = new_req(0);
    ck_assert_ptr_eq(b, a);
    ck_assert_int_eq(b->count, 0);
    ck_assert_int_eq(b->tag, 0);
    ck_assert_int_eq(ep_request_state(b), EP_RS_INACTIVE);
    ck_assert(b->handle == MPI_REQUEST_NULL);
    ep_request_destroy(b);
    ep_request_pools_free();
}
END_TEST

/* A loop of new and free, as a message-rate loop does: a slot comes back
 * only after many others, and the thread holds few slots in all. */
START_TEST(slots_are_reused_late_and_stay_few)
{
    enum { N = 2000, KEEP = 16 };
    static unsigned idx[N];
    unsigned most = 0;
    for (int i = 0; i < N; i++) {
        ep_request_t *r = new_req(1);
        idx[i] = ep_handle_index(EP_HID(r->handle));
        most = idx[i] > most ? idx[i] : most;
        for (int j = i - KEEP; j < i; j++)
            if (j >= 0)
                ck_assert_uint_ne(idx[j], idx[i]);
        ep_request_destroy(r);
    }
    ck_assert_uint_le(most, FEW_SLOTS);
    ep_request_pools_free();
}
END_TEST

START_TEST(requests_without_handles_take_no_slot)
{
    int h0 = ep_registry_add(EP_HTYPE_REQUEST, &(ep_object_t){EP_OBJ_REQUEST});
    for (int i = 0; i < 500; i++)
        ep_request_destroy(new_req(0));
    ep_object_t o = {EP_OBJ_REQUEST};
    int h = ep_registry_add(EP_HTYPE_REQUEST, &o);
    ck_assert_uint_eq(ep_handle_index(h), ep_handle_index(h0) + 1);
    ep_registry_remove(h);
    ep_registry_remove(h0);
    ep_request_pools_free();
}
END_TEST

/* After slots up to index `most` were used and handed back, the registry
 * mints `most` handles without a slot beyond it. */
static void assert_slots_returned(unsigned most)
{
    static int hs[FEW_SLOTS + 1];
    ep_object_t o = {EP_OBJ_REQUEST};
    ck_assert_uint_le(most, FEW_SLOTS);
    ck_assert_int_eq(ep_registry_live(), 0);
    for (unsigned i = 0; i < most; i++) {
        hs[i] = ep_registry_add(EP_HTYPE_REQUEST, &o);
        ck_assert_uint_le(ep_handle_index(hs[i]), most);
    }
    for (unsigned i = 0; i < most; i++)
        ep_registry_remove(hs[i]);
}

static void *churn(void *arg)
{
    unsigned *most = arg;
    for (int i = 0; i < 300; i++) {
        ep_request_t *r = ep_request_new(EP_REQ_RECV, NULL, 1);
        if (!r)
            abort();
        unsigned k = ep_handle_index(EP_HID(r->handle));
        *most = k > *most ? k : *most;
        ep_request_destroy(r);
    }
    return NULL;
}

START_TEST(a_thread_that_exits_gives_its_pool_back)
{
    unsigned most = 0;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, churn, &most), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    assert_slots_returned(most);
}
END_TEST

START_TEST(pools_free_empties_every_pool)
{
    unsigned most = 0;
    churn(&most);
    ep_request_pools_free();
    assert_slots_returned(most);
    /* The pool is empty but still this thread's: it fills again. */
    ep_request_t *r = new_req(1);
    ck_assert_ptr_eq(ep_request_get(r->handle), r);
    ep_request_destroy(r);
    ep_request_pools_free();
}
END_TEST

static void *destroy_it(void *arg)
{
    ep_request_destroy(arg);
    return NULL;
}

/* A thread that never made a request (UCX's progress helper finishing a
 * freed send) keeps no pool: what it frees goes back at once. */
START_TEST(a_thread_without_requests_keeps_none)
{
    ep_request_t *r = new_req(1);
    int h = EP_HID(r->handle);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, destroy_it, r), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_ptr_null(ep_request_get(EP_HANDLE(MPI_Request, h)));
    ck_assert_int_eq(ep_registry_live(), 0);
    ep_object_t o = {EP_OBJ_REQUEST};
    int h2 = ep_registry_add(EP_HTYPE_REQUEST, &o);
    ck_assert_uint_eq(ep_handle_index(h2), ep_handle_index(h)); /* its slot is free again */
    ep_registry_remove(h2);
    ep_request_pools_free();
}
END_TEST

/* ---- holds of the endpoint ------------------------------------------------------
 * A stand-in endpoint whose holds start high, so that none of the tests
 * releases it (that would tear down a communicator it has not got). */
#define BASE 1000

static ep_endpoint_t *fake_ep(void)
{
    ep_endpoint_t *ep = aligned_alloc(_Alignof(ep_endpoint_t), sizeof *ep);
    ck_assert_ptr_nonnull(ep);
    memset(ep, 0, sizeof *ep);
    atomic_init(&ep->holds, BASE);
    return ep;
}

static int holds(ep_endpoint_t *ep) { return atomic_load(&ep->holds); }

START_TEST(holds_are_taken_in_batches_and_come_back)
{
    ep_endpoint_t *a = fake_ep(), *b = fake_ep();
    ep_request_t *r[3];
    for (int i = 0; i < 3; i++)
        r[i] = ep_request_new(EP_REQ_SEND, a, 1);
    ck_assert_int_eq(holds(a), BASE + EP_HOLD_BATCH); /* one batch for three requests */
    for (int i = 0; i < 3; i++)
        ep_request_destroy(r[i]);
    ck_assert_int_eq(holds(a), BASE + EP_HOLD_BATCH); /* their holds went back to the credit */
    /* Turning to another endpoint gives the first one's credit back. */
    ep_request_t *x = ep_request_new(EP_REQ_SEND, b, 1);
    ck_assert_int_eq(holds(a), BASE);
    ck_assert_int_eq(holds(b), BASE + EP_HOLD_BATCH);
    /* A request of a's made now, destroyed after b's credit is dropped,
     * gives its own hold back. */
    ep_request_t *y = ep_request_new(EP_REQ_SEND, a, 1);
    ck_assert_int_eq(holds(b), BASE + 1); /* x's */
    ep_request_credit_drop(a);
    ck_assert_int_eq(holds(a), BASE + 1); /* y's */
    ep_request_destroy(y);
    ck_assert_int_eq(holds(a), BASE);
    ep_request_destroy(x);
    ck_assert_int_eq(holds(b), BASE);
    /* More than a batch outstanding: every one is held. */
    ep_request_t *many[EP_HOLD_BATCH + 5];
    for (int i = 0; i < EP_HOLD_BATCH + 5; i++)
        many[i] = ep_request_new(EP_REQ_SEND, b, 1);
    ck_assert_int_ge(holds(b), BASE + EP_HOLD_BATCH + 5);
    for (int i = 0; i < EP_HOLD_BATCH + 5; i++)
        ep_request_destroy(many[i]);
    ep_request_credit_drop(b);
    ck_assert_int_eq(holds(b), BASE);
    ep_request_pools_free();
    free(a), free(b);
}
END_TEST

static void *make_and_keep(void *arg)
{
    ep_request_destroy(ep_request_new(EP_REQ_SEND, arg, 1));
    return NULL;
}

START_TEST(a_thread_that_exits_gives_its_credit_back)
{
    ep_endpoint_t *a = fake_ep();
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, make_and_keep, a), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(holds(a), BASE);
    free(a);
}
END_TEST

static pthread_barrier_t keep_until;

static void *make_and_wait(void *arg)
{
    ep_request_destroy(ep_request_new(EP_REQ_SEND, arg, 1));
    pthread_barrier_wait(&keep_until);
    pthread_barrier_wait(&keep_until);
    return NULL;
}

/* MPI_Finalize gives back every thread's credit before the endpoints go. */
START_TEST(finalize_takes_back_every_credit)
{
    ep_endpoint_t *a = fake_ep();
    pthread_t t;
    pthread_barrier_init(&keep_until, NULL, 2);
    ck_assert_int_eq(pthread_create(&t, NULL, make_and_wait, a), 0);
    pthread_barrier_wait(&keep_until);
    make_and_keep(a);
    ck_assert_int_eq(holds(a), BASE + 2 * EP_HOLD_BATCH);
    ep_request_credits_drop_all();
    ck_assert_int_eq(holds(a), BASE);
    pthread_barrier_wait(&keep_until);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(holds(a), BASE);
    ep_request_pools_free();
    free(a);
}
END_TEST

START_TEST(the_shared_sent_request_is_never_freed)
{
    ep_request_t *s = ep_request_get(EP_REQUEST_SENT);
    ck_assert_ptr_eq(s, &ep_request_sent);
    ep_request_destroy(s);
    ep_request_drop_handle(s);
    ck_assert_ptr_eq(ep_request_get(EP_REQUEST_SENT), &ep_request_sent);
    ck_assert_int_eq(ep_request_state(s), EP_RS_DONE);
    ep_request_t *r = new_req(0);
    ck_assert_ptr_ne(r, s);
    ep_request_destroy(r);
    ep_request_pools_free();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("request");
    TCase *tc = tcase_create("pools");
    tcase_add_test(tc, objects_come_back_most_recently_freed_first);
    tcase_add_test(tc, reused_objects_are_cleared);
    tcase_add_test(tc, slots_are_reused_late_and_stay_few);
    tcase_add_test(tc, requests_without_handles_take_no_slot);
    tcase_add_test(tc, a_thread_that_exits_gives_its_pool_back);
    tcase_add_test(tc, pools_free_empties_every_pool);
    tcase_add_test(tc, a_thread_without_requests_keeps_none);
    tcase_add_test(tc, the_shared_sent_request_is_never_freed);
    tcase_add_test(tc, holds_are_taken_in_batches_and_come_back);
    tcase_add_test(tc, a_thread_that_exits_gives_its_credit_back);
    tcase_add_test(tc, finalize_takes_back_every_credit);
    suite_add_tcase(s, tc);
    /* Each test in a process of its own: they count registry slots from a
     * fresh registry. */
    return ep_unit_run_mode(s, CK_FORK);
}
