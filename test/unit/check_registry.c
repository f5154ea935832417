/* The handle registry: minting, lookup, stale handles, concurrency. */
#include "core/registry.h"
#include "core/request.h"

#include "unit.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

START_TEST(handles_look_like_endpoint_handles)
{
    ep_object_t o = {EP_OBJ_ENDPOINT};
    int h = ep_registry_add(EP_HTYPE_COMM, &o);
    ck_assert_int_ne(h, 0);
    ck_assert(ep_handle_is_ep(h));
    ck_assert_uint_eq(ep_handle_type(h), EP_HTYPE_COMM);
    ck_assert_int_ne(h, EP_HID(MPI_COMM_NULL));
    ck_assert(!ep_handle_is_ep(EP_HID(MPI_COMM_WORLD)));
    ck_assert(!ep_handle_is_ep(EP_HID(MPI_COMM_NULL)));
    ck_assert(!ep_handle_is_ep(EP_HID(MPI_REQUEST_NULL)));
    ck_assert_ptr_eq(ep_registry_get(h, EP_OBJ_ENDPOINT), &o);
    ep_registry_remove(h);
}
END_TEST

START_TEST(wrong_kind_is_rejected)
{
    ep_object_t o = {EP_OBJ_REQUEST};
    int h = ep_registry_add(EP_HTYPE_REQUEST, &o);
    ck_assert_ptr_null(ep_registry_get(h, EP_OBJ_MESSAGE));
    ck_assert_ptr_eq(ep_registry_get(h, EP_OBJ_REQUEST), &o);
    ep_registry_remove(h);
}
END_TEST

START_TEST(stale_handle_fails_after_reuse)
{
    enum { N = 8 };
    ep_object_t a = {EP_OBJ_ENDPOINT}, o[N];
    int ha = ep_registry_add(EP_HTYPE_COMM, &a), h[N];
    ep_registry_remove(ha);
    /* Free slots are reused oldest first; keep allocating until ha's slot comes back. */
    int found = -1;
    for (int i = 0; i < N && found < 0; i++) {
        o[i].kind = EP_OBJ_ENDPOINT;
        h[i] = ep_registry_add(EP_HTYPE_COMM, &o[i]);
        ck_assert_int_ne(h[i], ha);
        ck_assert_ptr_null(ep_registry_get(ha, EP_OBJ_ENDPOINT));
        if (ep_handle_index(h[i]) == ep_handle_index(ha))
            found = i;
    }
    ck_assert_int_ge(found, 0);
    ck_assert_ptr_eq(ep_registry_get(h[found], EP_OBJ_ENDPOINT), &o[found]);
    for (int i = 0; i <= found; i++)
        ep_registry_remove(h[i]);
}
END_TEST

START_TEST(freed_slot_is_not_reused_at_once)
{
    ep_object_t a = {EP_OBJ_ENDPOINT}, b = {EP_OBJ_ENDPOINT}, c = {EP_OBJ_ENDPOINT};
    int ha = ep_registry_add(EP_HTYPE_COMM, &a), hb = ep_registry_add(EP_HTYPE_COMM, &b);
    ep_registry_remove(ha);
    ep_registry_remove(hb);
    int hc = ep_registry_add(EP_HTYPE_COMM, &c);
    ck_assert_uint_ne(ep_handle_index(hc), ep_handle_index(hb)); /* not LIFO */
    ep_registry_remove(hc);
}
END_TEST

START_TEST(many_handles_no_small_cap)
{
    enum { N = 100000 };
    static ep_object_t objs[N];
    static int hs[N];
    int live0 = ep_registry_live();
    for (int i = 0; i < N; i++) {
        objs[i].kind = EP_OBJ_REQUEST;
        hs[i] = ep_registry_add(EP_HTYPE_REQUEST, &objs[i]);
        ck_assert_int_ne(hs[i], 0);
    }
    for (int i = 0; i < N; i += 997)
        ck_assert_ptr_eq(ep_registry_get(hs[i], EP_OBJ_REQUEST), &objs[i]);
    for (int i = 0; i < N; i++)
        ep_registry_remove(hs[i]);
    ck_assert_int_eq(ep_registry_live(), live0);
}
END_TEST

START_TEST(retired_slot_stays_reserved_until_released)
{
    ep_object_t a = {EP_OBJ_REQUEST}, b = {EP_OBJ_REQUEST};
    int live0 = ep_registry_live();
    int h = ep_registry_add(EP_HTYPE_REQUEST, &a);
    unsigned idx = ep_registry_retire(h);
    ck_assert_uint_eq(idx, ep_handle_index(h));
    ck_assert_ptr_null(ep_registry_get(h, EP_OBJ_REQUEST));
    ck_assert_uint_eq(ep_registry_retire(h), 0); /* a stale handle retires nothing */
    ck_assert_int_eq(ep_registry_live(), live0);
    /* Reserved: new handles go elsewhere. */
    int other = ep_registry_add(EP_HTYPE_REQUEST, &b);
    ck_assert_uint_ne(ep_handle_index(other), idx);
    ep_registry_remove(other);
    int h2 = ep_registry_reissue(idx, EP_HTYPE_REQUEST, &b);
    ck_assert_int_ne(h2, h);
    ck_assert_uint_eq(ep_handle_index(h2), idx);
    ck_assert_ptr_eq(ep_registry_get(h2, EP_OBJ_REQUEST), &b);
    ck_assert_ptr_null(ep_registry_get(h, EP_OBJ_REQUEST));
    ck_assert_int_eq(ep_registry_live(), live0 + 1);
    ep_registry_release(ep_registry_retire(h2));
    ck_assert_int_eq(ep_registry_live(), live0);
}
END_TEST

/* Requests are recycled through a per-thread pool without the registry
 * lock; a freed request's handle must still be recognised as stale for a
 * while (request.c: EP_REQ_POOL_KEEP). */
START_TEST(recycled_requests_leave_stale_handles)
{
    enum { N = 300 }; /* handles repeat after 64 generations of one slot */
    static int hs[N];
    int live0 = ep_registry_live();
    for (int i = 0; i < N; i++) {
        ep_request_t *r = ep_request_new(EP_REQ_SEND, NULL, 1);
        ck_assert_ptr_nonnull(r);
        hs[i] = EP_HID(r->handle);
        ck_assert_ptr_eq(ep_request_get(r->handle), r);
        for (int j = 0; j < i; j++)
            ck_assert_int_ne(hs[j], hs[i]);
        ep_request_destroy(r);
        ck_assert_ptr_null(ep_request_get(EP_HANDLE(MPI_Request, hs[i])));
    }
    ck_assert_int_eq(ep_registry_live(), live0);
    ep_request_pools_free();
}
END_TEST

/* The pool keeps the slots of retired handles reserved, whether the
 * request served with a handle, without one (internal requests), or lost
 * its handle early (MPI_Request_free): a slot is never both reserved and
 * free, so a handle minted elsewhere never lands on it. */
START_TEST(recycled_slots_are_never_shared)
{
    enum { N = 400, OTHERS = 64 };
    static int others[OTHERS];
    ep_object_t o[OTHERS];
    int live0 = ep_registry_live();
    for (int i = 0; i < N; i++) {
        ep_request_t *r = ep_request_new(EP_REQ_SEND, NULL, i % 3 != 2);
        ck_assert_ptr_nonnull(r);
        int h = EP_HID(r->handle);
        if (i % 3 == 1) {
            ep_request_drop_handle(r);
            ck_assert_ptr_null(ep_request_get(EP_HANDLE(MPI_Request, h)));
        }
        ep_request_destroy(r);
    }
    ck_assert_int_eq(ep_registry_live(), live0);
    /* Handles made now, while the pool holds reserved slots, must all
     * survive the pool handing its objects out again. */
    for (int k = 0; k < OTHERS; k++) {
        o[k].kind = EP_OBJ_REQUEST;
        others[k] = ep_registry_add(EP_HTYPE_REQUEST, &o[k]);
    }
    ep_request_t *again[OTHERS];
    for (int k = 0; k < OTHERS; k++)
        ck_assert_ptr_nonnull(again[k] = ep_request_new(EP_REQ_SEND, NULL, 1));
    for (int k = 0; k < OTHERS; k++)
        ck_assert_ptr_eq(ep_registry_get(others[k], EP_OBJ_REQUEST), &o[k]);
    for (int k = 0; k < OTHERS; k++) {
        ep_request_destroy(again[k]);
        ep_registry_remove(others[k]);
    }
    ck_assert_int_eq(ep_registry_live(), live0);
    ep_request_pools_free();
}
END_TEST

static void *churn(void *arg)
{
    ep_object_t o = {EP_OBJ_REQUEST};
    (void)arg;
    for (int i = 0; i < 20000; i++) {
        int h = ep_registry_add(EP_HTYPE_REQUEST, &o);
        if (!h || ep_registry_get(h, EP_OBJ_REQUEST) != &o)
            return (void *)1;
        ep_registry_remove(h);
    }
    return NULL;
}

START_TEST(concurrent_add_remove)
{
    pthread_t t[4];
    void *res;
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, churn, NULL);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], &res);
        ck_assert_ptr_null(res);
    }
}
END_TEST

/* Writers mint and free handles while readers look up what the writers
 * published: a lookup gives the object the handle was minted for or, once
 * the handle is freed, nothing, even after its slot went to another object
 * (the generation differs).  The free list is primed with PRIME slots, so
 * a slot comes back only after PRIME other allocations: in the writers'
 * WRITERS * WRITES allocations no slot goes through all 64 generations. */
enum { WRITERS = 2, READERS = 2, WRITES = 20000, PRIME = 4096 };
typedef struct {
    ep_object_t obj;
    int id;
} tobj_t;
static tobj_t tobjs[WRITERS][2];
static _Atomic uint64_t published[WRITERS]; /* handle << 32 | object id */
static _Atomic int writers_done;

static void *writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    int prev = 0;
    for (int i = 0; i < WRITES; i++) {
        tobj_t *o = &tobjs[w][i % 2];
        int h = ep_registry_add(EP_HTYPE_REQUEST, &o->obj);
        if (!h || h == prev)
            return (void *)"a handle was minted twice";
        atomic_store(&published[w], (uint64_t)(unsigned)h << 32 | (unsigned)o->id);
        if ((ep_object_t *)ep_registry_get(h, EP_OBJ_REQUEST) != &o->obj)
            return (void *)"a live handle did not find its object";
        ep_registry_remove(h);
        if (ep_registry_get(h, EP_OBJ_REQUEST))
            return (void *)"a freed handle still found an object";
        prev = h;
    }
    atomic_fetch_add(&writers_done, 1);
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    while (atomic_load(&writers_done) < WRITERS)
        for (int w = 0; w < WRITERS; w++) {
            uint64_t p = atomic_load(&published[w]);
            int h = (int)(p >> 32), id = (int)(p & 0xffffffffu);
            ep_object_t *o = h ? ep_registry_get(h, EP_OBJ_REQUEST) : NULL;
            if (o && ((tobj_t *)o)->id != id)
                return (void *)"a stale handle found another object";
        }
    return NULL;
}

START_TEST(concurrent_lookup_sees_live_or_nothing)
{
    static ep_object_t prime[PRIME];
    int hp[PRIME], live0 = ep_registry_live();
    for (int i = 0; i < PRIME; i++) {
        prime[i].kind = EP_OBJ_REQUEST;
        hp[i] = ep_registry_add(EP_HTYPE_REQUEST, &prime[i]);
    }
    for (int i = 0; i < PRIME; i++)
        ep_registry_remove(hp[i]);
    for (int w = 0; w < WRITERS; w++)
        for (int j = 0; j < 2; j++)
            tobjs[w][j] = (tobj_t){{EP_OBJ_REQUEST}, w * 2 + j};
    pthread_t t[WRITERS + READERS];
    void *res;
    for (int i = 0; i < WRITERS + READERS; i++)
        pthread_create(&t[i], NULL, i < WRITERS ? writer : reader, (void *)(intptr_t)i);
    for (int i = 0; i < WRITERS + READERS; i++) {
        pthread_join(t[i], &res);
        ck_assert_msg(res == NULL, "%s", (const char *)res);
    }
    ck_assert_int_eq(ep_registry_live(), live0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("handles");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, handles_look_like_endpoint_handles);
    tcase_add_test(tc, wrong_kind_is_rejected);
    tcase_add_test(tc, stale_handle_fails_after_reuse);
    tcase_add_test(tc, freed_slot_is_not_reused_at_once);
    tcase_add_test(tc, many_handles_no_small_cap);
    tcase_add_test(tc, concurrent_add_remove);
    tcase_add_test(tc, concurrent_lookup_sees_live_or_nothing);
    tcase_add_test(tc, retired_slot_stays_reserved_until_released);
    tcase_add_test(tc, recycled_requests_leave_stale_handles);
    tcase_add_test(tc, recycled_slots_are_never_shared);
    suite_add_tcase(s, tc);
    return ep_unit_run(s);
}
