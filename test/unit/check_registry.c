/* The handle registry: minting, lookup, stale handles, concurrency. */
#include "registry.h"
#include "request.h"

#include "unit.h"

#include <check.h>
#include <pthread.h>
#include <stdlib.h>

START_TEST(handles_look_like_endpoint_handles)
{
    ep_object_t o = {EP_OBJ_ENDPOINT};
    int h = ep_registry_add(EP_HTYPE_COMM, &o);
    ck_assert_int_ne(h, 0);
    ck_assert(ep_handle_is_ep(h));
    ck_assert_uint_eq(ep_handle_type(h), EP_HTYPE_COMM);
    ck_assert_int_ne(h, (int)MPI_COMM_NULL);
    ck_assert(!ep_handle_is_ep((int)MPI_COMM_WORLD));
    ck_assert(!ep_handle_is_ep((int)MPI_COMM_NULL));
    ck_assert(!ep_handle_is_ep((int)MPI_REQUEST_NULL));
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
        hs[i] = (int)r->handle;
        ck_assert_ptr_eq(ep_request_get(r->handle), r);
        for (int j = 0; j < i; j++)
            ck_assert_int_ne(hs[j], hs[i]);
        ep_request_destroy(r);
        ck_assert_ptr_null(ep_request_get(hs[i]));
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
    tcase_add_test(tc, retired_slot_stays_reserved_until_released);
    tcase_add_test(tc, recycled_requests_leave_stale_handles);
    suite_add_tcase(s, tc);
    return ep_unit_run(s);
}
