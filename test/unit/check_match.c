/* Matching queues: MPI's matching and ordering rules. */
#include "core/match.h"

#include "unit.h"

#include <check.h>
#include <stdlib.h>

static ep_match_item_t items[8];

static ep_match_item_t *item(int i, int source, int tag)
{
    items[i].source = source;
    items[i].tag = tag;
    items[i].next = NULL;
    return &items[i];
}

START_TEST(posted_oldest_match_wins)
{
    ep_match_queue_t q;
    ep_mq_init(&q);
    ep_mq_append(&q, item(0, 3, 7));
    ep_mq_append(&q, item(1, MPI_ANY_SOURCE, 7));
    ep_mq_append(&q, item(2, MPI_ANY_SOURCE, MPI_ANY_TAG));
    /* A message from 5, tag 7 skips the receive for source 3. */
    ck_assert_ptr_eq(ep_mq_take_posted(&q, 5, 7), &items[1]);
    ck_assert_ptr_eq(ep_mq_take_posted(&q, 5, 7), &items[2]);
    ck_assert_ptr_null(ep_mq_take_posted(&q, 5, 7));
    ck_assert_ptr_eq(ep_mq_take_posted(&q, 3, 7), &items[0]);
    ck_assert(ep_mq_empty(&q));
}
END_TEST

START_TEST(unexpected_wildcards_in_order)
{
    ep_match_queue_t q;
    ep_mq_init(&q);
    ep_mq_append(&q, item(0, 1, 10));
    ep_mq_append(&q, item(1, 2, 20));
    ep_mq_append(&q, item(2, 1, 20));
    ck_assert_ptr_eq(ep_mq_find_unexpected(&q, MPI_ANY_SOURCE, 20, 0), &items[1]);
    ck_assert_ptr_eq(ep_mq_find_unexpected(&q, 1, MPI_ANY_TAG, 1), &items[0]);
    ck_assert_ptr_eq(ep_mq_find_unexpected(&q, 1, MPI_ANY_TAG, 1), &items[2]);
    ck_assert_ptr_eq(ep_mq_find_unexpected(&q, MPI_ANY_SOURCE, MPI_ANY_TAG, 1), &items[1]);
    ck_assert_ptr_null(ep_mq_find_unexpected(&q, MPI_ANY_SOURCE, MPI_ANY_TAG, 1));
}
END_TEST

START_TEST(no_overtaking_same_envelope)
{
    ep_match_queue_t q;
    ep_mq_init(&q);
    for (int i = 0; i < 8; i++)
        ep_mq_append(&q, item(i, 4, 9));
    for (int i = 0; i < 8; i++)
        ck_assert_ptr_eq(ep_mq_find_unexpected(&q, 4, 9, 1), &items[i]);
}
END_TEST

START_TEST(remove_keeps_tail_valid)
{
    ep_match_queue_t q;
    ep_mq_init(&q);
    ep_mq_append(&q, item(0, 0, 0));
    ep_mq_append(&q, item(1, 0, 1));
    ck_assert(ep_mq_remove(&q, &items[1]));
    ck_assert(!ep_mq_remove(&q, &items[1]));
    ep_mq_append(&q, item(2, 0, 2)); /* would be lost if tailp pointed at a removed item */
    ck_assert_ptr_eq(ep_mq_pop(&q), &items[0]);
    ck_assert_ptr_eq(ep_mq_pop(&q), &items[2]);
    ck_assert_ptr_null(ep_mq_pop(&q));
}
END_TEST

START_TEST(tag_zero_is_not_a_wildcard)
{
    ck_assert(ep_match_fits(MPI_ANY_SOURCE, MPI_ANY_TAG, 0, 0));
    ck_assert(!ep_match_fits(0, 0, 0, 1));
    ck_assert(!ep_match_fits(0, 0, 1, 0));
    ck_assert(ep_match_fits(0, 2147483647, 0, 2147483647));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("match");
    TCase *tc = tcase_create("queues");
    tcase_add_test(tc, posted_oldest_match_wins);
    tcase_add_test(tc, unexpected_wildcards_in_order);
    tcase_add_test(tc, no_overtaking_same_envelope);
    tcase_add_test(tc, remove_keeps_tail_valid);
    tcase_add_test(tc, tag_zero_is_not_a_wildcard);
    suite_add_tcase(s, tc);
    return ep_unit_run(s);
}
