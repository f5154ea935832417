/* src/base/grow.h: an array grows by doubling from its first capacity, keeps
 * what it held, and is left as it was when memory runs out or its size
 * would wrap around. */
#include "base/grow.h"

#include "unit.h"

#include <check.h>
#include <stdint.h>

START_TEST(doubles_from_first_and_keeps_the_elements)
{
    long *a = NULL;
    size_t cap = 0;
    int n = 0;
    for (; n < 100; n++) {
        ck_assert(EP_GROW(a, n, cap, 4));
        ck_assert_uint_gt(cap, (size_t)n);
        a[n] = 7L * n;
    }
    ck_assert_uint_eq(cap, 128); /* 4, 8, ..., 128 */
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(a[i], 7L * i);
    long *before = a;
    ck_assert(EP_GROW(a, 100, cap, 4)); /* room already: nothing moves */
    ck_assert_ptr_eq(a, before);
    ck_assert_uint_eq(cap, 128);
    free(a);
}
END_TEST

/* Sanitizers abort on an allocation too large unless told to fail it as
 * the C library does. */
const char *__asan_default_options(void);
const char *__tsan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
const char *__tsan_default_options(void) { return "allocator_may_return_null=1"; }

typedef struct big {
    char bytes[1 << 20];
} big_t;

START_TEST(out_of_memory_leaves_the_array)
{
    big_t *a = NULL;
    size_t cap = 0;
    /* SIZE_MAX / 2 MiB elements of 1 MiB: no realloc can give that */
    ck_assert(!EP_GROW(a, 0, cap, SIZE_MAX >> 21));
    ck_assert_ptr_null(a);
    ck_assert_uint_eq(cap, 0);
    ck_assert(EP_GROW(a, 0, cap, 1));
    ck_assert_uint_eq(cap, 1);
    free(a);
}
END_TEST

/* A capacity whose bytes wrap around size_t is refused, not allocated
 * small: 2^44 + 1 elements of 1 MiB are 2^64 + 2^20 bytes, 1 MiB once
 * wrapped. */
START_TEST(a_size_beyond_size_t_is_refused)
{
    big_t *a = NULL;
    size_t cap = 0;
    ck_assert(!EP_GROW(a, 0, cap, (SIZE_MAX >> 20) + 2));
    ck_assert_ptr_null(a);
    ck_assert_uint_eq(cap, 0);
    long *l = NULL;
    size_t lcap = SIZE_MAX / 2 + 1; /* doubling it would wrap */
    ck_assert(!EP_GROW(l, lcap, lcap, 4));
    ck_assert_ptr_null(l);
    ck_assert_uint_eq(lcap, SIZE_MAX / 2 + 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("grow");
    TCase *tc = tcase_create("arrays");
    tcase_add_test(tc, doubles_from_first_and_keeps_the_elements);
    tcase_add_test(tc, out_of_memory_leaves_the_array);
    tcase_add_test(tc, a_size_beyond_size_t_is_refused);
    suite_add_tcase(s, tc);
    return ep_unit_run(s);
}
