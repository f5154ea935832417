/* Inboxes (inbox.h): the many-producer, one-consumer ring of records on
 * its own, in one process's memory (between processes it is the same
 * code on a shared mapping).  A full inbox refuses and takes records again
 * once the consumer releases; a record that would cross the end of the
 * ring is preceded by padding the consumer skips; a payload word that
 * looks like a later record's stamp is never read as one; the usual
 * reservation refuses what needs padding or a new look at head; and several
 * producers filling records of many sizes at once each get every record
 * through once, whole and in their order; a record whose header no
 * producer could have written (a kind, size, source or tag out of range,
 * padding that does not fit) is named, never skipped by its length.
 * Runs clean under
 * ThreadSanitizer (configure --enable-tsan). */
#include "transport/inbox.h"

#include "unit.h"

#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { SMALL_CAP = 1024, PRODUCERS = 3, RECORDS = 100000, BIG_CAP = 8192 };

static ep_inbox_t *inbox_new(uint64_t cap)
{
    ep_inbox_t *b = aligned_alloc(EP_INBOX_LINE, ep_inbox_size(cap));
    ck_assert_ptr_nonnull(b);
    ep_inbox_init(b, cap);
    return b;
}

/* Reserves and publishes a DATA record of n bytes, each byte `fill`;
 * returns its position, or -1 when the inbox refused. */
static long put(ep_inbox_t *b, _Atomic uint64_t *seen, uint64_t n, int tag, char fill)
{
    uint64_t pos;
    ep_inbox_rec_t *r = ep_inbox_reserve(b, n, seen, &pos);
    if (!r)
        return -1;
    r->kind = EP_INBOX_DATA;
    r->tag = tag;
    r->bytes = (int64_t)n;
    memset(r->data, fill, n);
    ep_inbox_publish(r, pos);
    return (long)pos;
}

/* Takes the next record, which must have tag `tag`. */
static void take(ep_inbox_t *b, int tag)
{
    ep_inbox_rec_t *r = ep_inbox_peek(b);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->tag, tag);
    ep_inbox_release(b, r);
}

START_TEST(full_inbox_refuses_until_released)
{
    ep_inbox_t *b = inbox_new(SMALL_CAP);
    _Atomic uint64_t seen = 0;
    uint64_t most = ep_inbox_max_payload(SMALL_CAP);
    ck_assert_uint_eq(ep_inbox_span(most), SMALL_CAP / 4);
    ck_assert_ptr_null(ep_inbox_peek(b));
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(put(b, &seen, most, i, 'a'), i * (SMALL_CAP / 4));
    ck_assert_int_eq(put(b, &seen, 0, 9, 'x'), -1); /* no room for the smallest record */
    take(b, 0);
    ck_assert_int_eq(put(b, &seen, 0, 4, 'b'), SMALL_CAP); /* the look at head is renewed */
    for (int i = 1; i <= 4; i++)
        take(b, i);
    ck_assert_ptr_null(ep_inbox_peek(b));
    free(b);
}
END_TEST

START_TEST(padding_at_the_end_is_skipped)
{
    ep_inbox_t *b = inbox_new(SMALL_CAP);
    _Atomic uint64_t seen = 0;
    /* Records of 256 bytes up to 768 and one of 192 up to 960; then one
     * of 256 does not fit before the end: 64 bytes of padding, and it
     * starts at 1024, the start of the ring. */
    for (int i = 0; i < 3; i++)
        put(b, &seen, 200, i, 'p');
    ck_assert_int_eq(put(b, &seen, 100, 3, 'q'), 768);
    for (int i = 0; i < 4; i++)
        take(b, i);
    ck_assert_int_eq(put(b, &seen, 200, 4, 'r'), 1024);
    ep_inbox_rec_t *r = ep_inbox_peek(b);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->tag, 4);
    ck_assert_int_eq(r->bytes, 200);
    ck_assert_int_eq(r->data[199], 'r');
    ck_assert_ptr_eq(r, (ep_inbox_rec_t *)b->ring);
    ep_inbox_release(b, r);
    ck_assert_uint_eq(atomic_load(&b->head), 1024 + 256);
    free(b);
}
END_TEST

START_TEST(payload_never_read_as_a_stamp)
{
    ep_inbox_t *b = inbox_new(SMALL_CAP);
    _Atomic uint64_t seen = 0;
    /* Record 0's payload covers the lines at offsets 64, 128 and 192; each
     * word of it is what a record at position 1088 (offset 64, one lap
     * on) would have for a stamp. */
    uint64_t pos;
    ep_inbox_rec_t *r = ep_inbox_reserve(b, 224, &seen, &pos);
    ck_assert_ptr_nonnull(r);
    r->kind = EP_INBOX_DATA;
    r->tag = 0;
    r->bytes = 224;
    for (int i = 0; i < 224 / 8; i++) {
        uint64_t fake = SMALL_CAP + 64 + 1;
        memcpy(r->data + 8 * i, &fake, 8);
    }
    ep_inbox_publish(r, pos);
    take(b, 0);
    /* Up to position 1088 with records that leave offset 64 alone. */
    for (int i = 1; i <= 3; i++)
        put(b, &seen, 224, i, 'z');
    put(b, &seen, 0, 4, 'z');
    for (int i = 1; i <= 4; i++)
        take(b, i);
    ck_assert_uint_eq(atomic_load(&b->head), SMALL_CAP + 64);
    ck_assert_ptr_null(ep_inbox_peek(b)); /* nothing published there */
    free(b);
}
END_TEST

/* The usual reservation refuses n bytes, the tail staying at `tail`. */
static void usual_refuses(ep_inbox_t *b, _Atomic uint64_t *seen, uint64_t n, uint64_t tail)
{
    uint64_t pos;
    ck_assert_ptr_null(ep_inbox_reserve_usual(b, n, seen, &pos));
    ck_assert_uint_eq(atomic_load(&b->tail), tail);
}

/* The usual reservation takes the record at the tail, and refuses (the
 * tail unmoved) what needs the full one: padding before the record, or a
 * new look at head because the old one says the room is short. */
START_TEST(usual_reserve_leaves_the_rare_ways)
{
    ep_inbox_t *b = inbox_new(SMALL_CAP);
    _Atomic uint64_t seen = 0;
    uint64_t pos = 99;
    ep_inbox_rec_t *r = ep_inbox_reserve_usual(b, 8, &seen, &pos);
    ck_assert_ptr_eq(r, (ep_inbox_rec_t *)b->ring);
    ck_assert_uint_eq(pos, 0);
    r->kind = EP_INBOX_DATA;
    r->tag = 0;
    r->bytes = 8;
    ep_inbox_publish(r, pos);
    take(b, 0);
    /* Records of 256 and 64 bytes up to 896: one of 256 needs padding. */
    for (int i = 1; i <= 3; i++)
        put(b, &seen, 200, i, 'u');
    ck_assert_int_eq(put(b, &seen, 8, 4, 'u'), 832);
    for (int i = 1; i <= 4; i++)
        take(b, i);
    usual_refuses(b, &seen, 200, 896);
    ck_assert_int_eq(put(b, &seen, 200, 5, 'u'), 1024);
    ck_assert_uint_eq(atomic_load(&seen), 896);
    /* Two more records, taken: head is at 1792, the look still at 896. */
    put(b, &seen, 200, 6, 'u');
    put(b, &seen, 200, 7, 'u');
    for (int i = 5; i <= 7; i++)
        take(b, i);
    usual_refuses(b, &seen, 200, 1792);
    ck_assert_int_eq(put(b, &seen, 200, 8, 'u'), 1792);
    ck_assert_uint_eq(atomic_load(&seen), 1792);
    free(b);
}
END_TEST

struct producer {
    ep_inbox_t *b;
    _Atomic uint64_t *seen; /* shared by the producers, as a process's threads share it */
    int id;
};

/* Record k of producer id: tag k, source id, k % 300 bytes of (k + id). */
static void *produce(void *arg)
{
    struct producer *p = arg;
    for (int k = 0; k < RECORDS;) {
        uint64_t pos, n = (uint64_t)(k % 300);
        /* Every other record tries the usual way first, as senders do. */
        ep_inbox_rec_t *r = k % 2 ? ep_inbox_reserve_usual(p->b, n, p->seen, &pos) : NULL;
        if (!r && !(r = ep_inbox_reserve(p->b, n, p->seen, &pos)))
            continue; /* full: the consumer catches up */
        r->kind = EP_INBOX_DATA;
        r->tag = k;
        r->source = p->id;
        r->bytes = (int64_t)n;
        memset(r->data, (char)(k + p->id), n);
        ep_inbox_publish(r, pos);
        k++;
    }
    return NULL;
}

START_TEST(producers_keep_their_order)
{
    ep_inbox_t *b = inbox_new(BIG_CAP);
    _Atomic uint64_t seen = 0;
    struct producer p[PRODUCERS];
    pthread_t t[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        p[i] = (struct producer){b, &seen, i};
        ck_assert_int_eq(pthread_create(&t[i], NULL, produce, &p[i]), 0);
    }
    int next[PRODUCERS] = {0};
    long bad = 0;
    for (int got = 0; got < PRODUCERS * RECORDS;) {
        ep_inbox_rec_t *r = ep_inbox_peek(b);
        if (!r)
            continue;
        int id = r->source, k = r->tag;
        bad += id < 0 || id >= PRODUCERS || r->kind != EP_INBOX_DATA;
        if (id >= 0 && id < PRODUCERS) {
            bad += k != next[id]++ || r->bytes != k % 300;
            for (int64_t j = 0; j < r->bytes; j++)
                bad += r->data[j] != (char)(k + id);
        }
        ep_inbox_release(b, r);
        got++;
    }
    for (int i = 0; i < PRODUCERS; i++)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    ck_assert_int_eq(bad, 0);
    ck_assert_ptr_null(ep_inbox_peek(b));
    free(b);
}
END_TEST

/* Publishes a record of kind `kind` whose header says `bytes` and `source`
 * (taking the ring bytes of an n-byte payload), as a spoilt producer could. */
static ep_inbox_rec_t *put_raw(ep_inbox_t *b, _Atomic uint64_t *seen, uint64_t n, int kind, int64_t bytes, int source)
{
    uint64_t pos;
    ep_inbox_rec_t *r = ep_inbox_reserve(b, n, seen, &pos);
    ck_assert_ptr_nonnull(r);
    r->kind = (uint16_t)kind;
    r->bytes = bytes;
    r->source = source;
    r->tag = 7;
    ep_inbox_publish(r, pos);
    return r;
}

START_TEST(records_a_producer_wrote_pass)
{
    ep_inbox_t *b = inbox_new(BIG_CAP);
    _Atomic uint64_t seen = 0;
    put_raw(b, &seen, 100, EP_INBOX_DATA, 100, 0);
    put_raw(b, &seen, 0, EP_INBOX_DATA, 0, 3);
    put_raw(b, &seen, EP_INBOX_FOLLOWS_BYTES, EP_INBOX_FOLLOWS, 1 << 30, 2);
    for (int i = 0; i < 3; i++) {
        ep_inbox_rec_t *r = ep_inbox_peek(b);
        ck_assert_ptr_nonnull(r);
        ck_assert_ptr_null(ep_inbox_rec_fault(r, 100));
        ep_inbox_release(b, r);
    }
    ck_assert_ptr_null(ep_inbox_peek(b));
    free(b);
}
END_TEST

/* Each spoilt header is named, and ep_inbox_peek hands it over rather
 * than believing its length. */
START_TEST(spoilt_records_are_named)
{
    static const struct {
        int kind;
        int64_t bytes;
        int source;
        const char *fault;
    } cases[] = {
        {EP_INBOX_DATA, 100, -1, "a negative source or tag"},
        {EP_INBOX_FOLLOWS, 8, -5, "a negative source or tag"},
        {EP_INBOX_DATA, 101, 0, "a payload size its record cannot hold"},
        {EP_INBOX_DATA, -64, 0, "a payload size its record cannot hold"},
        {EP_INBOX_FOLLOWS, -1, 0, "a negative message size"},
        {0, 100, 0, "an unknown kind of record"},
        {EP_INBOX_FOLLOWS + 1, 100, 0, "an unknown kind of record"},
        {EP_INBOX_PAD, 100, 0, "padding that does not end on a line within the ring"},
        {EP_INBOX_PAD, 0, 0, "padding that does not end on a line within the ring"},
        {EP_INBOX_PAD, -128, 0, "padding that does not end on a line within the ring"},
        {EP_INBOX_PAD, 2 * BIG_CAP, 0, "padding that does not end on a line within the ring"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ep_inbox_t *b = inbox_new(BIG_CAP);
        _Atomic uint64_t seen = 0;
        ep_inbox_rec_t *w = put_raw(b, &seen, 100, cases[i].kind, cases[i].bytes, cases[i].source);
        ep_inbox_rec_t *r = ep_inbox_peek(b);
        ck_assert_ptr_eq(r, w);
        ck_assert_ptr_nonnull(ep_inbox_rec_fault(r, 100));
        ck_assert_str_eq(ep_inbox_rec_fault(r, 100), cases[i].fault);
        ck_assert_uint_eq(atomic_load(&b->head), 0);
        free(b);
    }
}
END_TEST

/* Padding in the middle of the ring (a send whose data could not be
 * packed leaves its record as padding) is skipped like padding at the
 * end. */
START_TEST(padding_inside_the_ring_is_skipped)
{
    ep_inbox_t *b = inbox_new(BIG_CAP);
    _Atomic uint64_t seen = 0;
    put_raw(b, &seen, 100, EP_INBOX_PAD, (int64_t)ep_inbox_span(100), 0);
    put(b, &seen, 10, 9, 'x');
    take(b, 9);
    ck_assert_ptr_null(ep_inbox_peek(b));
    free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("inbox");
    TCase *tc = tcase_create("inbox");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, full_inbox_refuses_until_released);
    tcase_add_test(tc, padding_at_the_end_is_skipped);
    tcase_add_test(tc, payload_never_read_as_a_stamp);
    tcase_add_test(tc, usual_reserve_leaves_the_rare_ways);
    tcase_add_test(tc, producers_keep_their_order);
    tcase_add_test(tc, records_a_producer_wrote_pass);
    tcase_add_test(tc, spoilt_records_are_named);
    tcase_add_test(tc, padding_inside_the_ring_is_skipped);
    suite_add_tcase(s, tc);
    return ep_unit_run(s);
}
