/* Lanes (lane.h): the single-producer, single-consumer ring on its own.
 * One thread fills, another empties, through many wraps of the ring and of
 * the slots' sequence numbers' starting point; every value must arrive once
 * and in order, and a full lane must refuse.  Runs clean under
 * ThreadSanitizer (configure --enable-tsan). */
#include "p2p/lane.h"

#include "unit.h"

#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { VALUES = 200000 };

START_TEST(full_lane_refuses)
{
    ep_lane_t *l = ep_lane_new(3);
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(l->source, 3);
    ck_assert_ptr_null(ep_lane_peek(l));
    for (int i = 0; i < EP_LANE_SLOTS; i++) {
        ep_lane_slot_t *s = ep_lane_reserve(l);
        ck_assert_ptr_nonnull(s);
        s->tag = i;
        ep_lane_publish(l, s);
    }
    ck_assert_ptr_null(ep_lane_reserve(l));
    ep_lane_slot_t *s = ep_lane_peek(l);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->tag, 0);
    ep_lane_release(l);
    ck_assert_ptr_nonnull(ep_lane_reserve(l)); /* one slot free again */
    free(l);
}
END_TEST

static void *consume(void *arg)
{
    ep_lane_t *l = arg;
    long bad = 0;
    for (int want = 0; want < VALUES;) {
        ep_lane_slot_t *s = ep_lane_peek(l);
        if (!s)
            continue;
        int got;
        memcpy(&got, s->data, sizeof got);
        bad += got != want || s->tag != want % 1000 || s->bytes != want % 41;
        ep_lane_release(l);
        want++;
    }
    return (void *)bad;
}

START_TEST(values_cross_in_order)
{
    ep_lane_t *l = ep_lane_new(0);
    ck_assert_ptr_nonnull(l);
    /* Start near the wrap of the 32-bit positions. */
    l->tail = l->head_seen = UINT32_MAX - 1000;
    atomic_store(&l->head, UINT32_MAX - 1000);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, consume, l), 0);
    for (int i = 0; i < VALUES;) {
        ep_lane_slot_t *s = ep_lane_reserve(l);
        if (!s)
            continue; /* full: the consumer catches up */
        s->tag = i % 1000;
        s->bytes = i % 41;
        memcpy(s->data, &i, sizeof i);
        ep_lane_publish(l, s);
        i++;
    }
    void *bad;
    ck_assert_int_eq(pthread_join(t, &bad), 0);
    ck_assert_int_eq((long)bad, 0);
    free(l);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lane");
    TCase *tc = tcase_create("lane");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, full_lane_refuses);
    tcase_add_test(tc, values_cross_in_order);
    suite_add_tcase(s, tc);
    return ep_unit_run(s);
}
