/* src/core/op.c: the operations epmpi applies itself give what MPICH's
 * PMPI_Reduce_local gives, for every (type, predefined operation) it
 * claims, on values that include zero, negative numbers and ties; the
 * others are left to MPICH; the predefined operations are commutative.
 * Holding: a held user operation is freed only at its last release, a
 * second free of it is told apart, predefined operations are never held,
 * and a hold that cannot be recorded is reported. */
#include "core/op.h"
#include "unit.h"

#include <mpi.h>
#include <stddef.h>
#include <string.h>

/* This program's realloc, which the engine (linked in) calls: it fails
 * while fail_realloc is set.  Not under a sanitizer, whose own allocator
 * would then be handed glibc's blocks to free. */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define REALLOC_CAN_FAIL 1
void *__libc_realloc(void *p, size_t n);
static volatile int fail_realloc;
void *realloc(void *p, size_t n) { return fail_realloc ? NULL : __libc_realloc(p, n); }
#endif

#define N 7

static const MPI_Datatype types[] = {
    MPI_INT,           MPI_INT32_T,  MPI_UNSIGNED,  MPI_UINT32_T,           MPI_LONG,  MPI_INT64_T,
    MPI_UNSIGNED_LONG, MPI_UINT64_T, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE};
static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN, MPI_LAND,
                             MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};

static int is_unsigned(MPI_Datatype t)
{
    return t == MPI_UNSIGNED || t == MPI_UINT32_T || t == MPI_UNSIGNED_LONG || t == MPI_UINT64_T ||
           t == MPI_UNSIGNED_LONG_LONG;
}

/* Values of type t: x[i] = v[i] converted (its magnitude for unsigned
 * types: MPICH 4.0.2 orders MPI_UNSIGNED values of 2^31 and more as if
 * they were negative, see unsigned_order below). */
static void fill(void *x, MPI_Datatype t, const int *v)
{
    for (int i = 0; i < N; i++) {
        int w = is_unsigned(t) && v[i] < 0 ? -v[i] : v[i];
        if (t == MPI_FLOAT)
            ((float *)x)[i] = (float)w / 2;
        else if (t == MPI_DOUBLE)
            ((double *)x)[i] = (double)w / 2;
        else if (t == MPI_INT || t == MPI_INT32_T || t == MPI_UNSIGNED || t == MPI_UINT32_T)
            ((int *)x)[i] = w;
        else
            ((long long *)x)[i] = w;
    }
}

START_TEST(same_as_mpich)
{
    static const int a[N] = {0, 1, -3, 5, 7, 0, 12}, b[N] = {0, 0, 4, -5, 7, 9, 10};
    int applied = 0;
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++)
        for (size_t oi = 0; oi < sizeof ops / sizeof *ops; oi++) {
            MPI_Datatype t = types[ti];
            MPI_Op op = ops[oi];
            long long in[N], mine[N], theirs[N];
            int size;
            MPI_Type_size(t, &size);
            fill(in, t, a);
            fill(mine, t, b);
            fill(theirs, t, b);
            int done = ep_op_apply(in, mine, N, t, op);
            int real = t == MPI_FLOAT || t == MPI_DOUBLE;
            /* Every pair is applied here, except logical and bit operations on reals. */
            ck_assert_int_eq(done, !real || oi < 4);
            if (!done)
                continue;
            applied++;
            ck_assert_int_eq(PMPI_Reduce_local(in, theirs, N, t, op), MPI_SUCCESS);
            ck_assert_msg(!memcmp(mine, theirs, (size_t)size * N), "type %zu op %zu differs from MPICH", ti, oi);
        }
    ck_assert_int_eq(applied, 10 * 10 + 2 * 4);
}
END_TEST

/* Unsigned values order as unsigned numbers, as MPI says. */
START_TEST(unsigned_order)
{
    unsigned a[2] = {4294967293u, 5}, b[2] = {4, 4294967291u};
    unsigned long long c[1] = {18446744073709551615ull}, d[1] = {1};
    ck_assert(ep_op_apply(a, b, 2, MPI_UNSIGNED, MPI_MAX));
    ck_assert(b[0] == 4294967293u && b[1] == 4294967291u);
    ck_assert(ep_op_apply(c, d, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN));
    ck_assert(d[0] == 1);
}
END_TEST

START_TEST(others_go_to_mpich)
{
    struct {
        double v;
        int loc;
    } in[2] = {{1, 0}, {5, 0}}, io[2] = {{1, 1}, {2, 1}};
    char c1[2] = {1, 2}, c2[2] = {3, 4};
    ck_assert_int_eq(ep_op_apply(in, io, 2, MPI_DOUBLE_INT, MPI_MAXLOC), 0);
    ck_assert_int_eq(ep_op_apply(c1, c2, 2, MPI_SIGNED_CHAR, MPI_SUM), 0);
    ck_assert_int_eq(ep_op_reduce_local(in, io, 2, MPI_DOUBLE_INT, MPI_MAXLOC), MPI_SUCCESS);
    ck_assert(io[0].v == 1 && io[0].loc == 0 && io[1].v == 5 && io[1].loc == 0);
    ck_assert_int_eq(ep_op_reduce_local(c1, c2, 2, MPI_SIGNED_CHAR, MPI_SUM), MPI_SUCCESS);
    ck_assert(c2[0] == 4 && c2[1] == 6);
}
END_TEST

static void noncommutative_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)in, (void)inout, (void)len, (void)t;
}

START_TEST(commutativity)
{
    MPI_Op user;
    int commute = -1;
    for (size_t oi = 0; oi < sizeof ops / sizeof *ops; oi++) {
        ck_assert_int_eq(ep_op_commutative(ops[oi], &commute), MPI_SUCCESS);
        ck_assert_int_eq(commute, 1);
    }
    ck_assert_int_eq(ep_op_commutative(MPI_MAXLOC, &commute), MPI_SUCCESS);
    ck_assert_int_eq(commute, 1);
    ck_assert_int_eq(MPI_Op_create(noncommutative_fn, 0, &user), MPI_SUCCESS);
    ck_assert_int_eq(ep_op_commutative(user, &commute), MPI_SUCCESS);
    ck_assert_int_eq(commute, 0);
    MPI_Op_free(&user);
}
END_TEST

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

START_TEST(held_op_freed_at_last_release)
{
    MPI_Op op;
    ck_assert_int_eq(PMPI_Op_create(sum_fn, 1, &op), MPI_SUCCESS);
    ep_op_hold(op);
    ck_assert_int_eq(ep_op_free_deferred(op), 1);
    int a = 2, b = 3;
    ck_assert_int_eq(PMPI_Reduce_local(&a, &b, 1, MPI_INT, op), MPI_SUCCESS); /* still usable */
    ck_assert_int_eq(b, 5);
    ep_op_release(op);
    ck_assert_int_eq(ep_op_free_deferred(op), 0);
    ep_op_hold(MPI_SUM); /* predefined: nothing held */
    ck_assert_int_eq(ep_op_free_deferred(MPI_SUM), 0);
    ep_op_release(MPI_SUM);
}
END_TEST

#ifdef REALLOC_CAN_FAIL
/* A hold that cannot be recorded (no memory to grow the table) says so,
 * and the operation is then not held: MPI_Op_free would free it at once,
 * so the caller must not go on with it (a non-blocking collective fails). */
START_TEST(op_hold_out_of_memory_is_reported)
{
    enum { NOPS = 40 };
    MPI_Op held_ops[NOPS];
    ep_status_t st[NOPS];
    int failed = -1;
    for (int i = 0; i < NOPS; i++) /* first: the MPI's own tables grow with realloc too (Open MPI's) */
        ck_assert_int_eq(PMPI_Op_create(sum_fn, 1, &held_ops[i]), MPI_SUCCESS);
    fail_realloc = 1; /* the table has room for some, then must grow */
    for (int i = 0; i < NOPS; i++) {
        st[i] = ep_op_hold(held_ops[i]);
        if (st[i] && failed < 0)
            failed = i;
    }
    fail_realloc = 0;
    ck_assert_int_ge(failed, 0);
    ck_assert_int_eq(st[failed], EP_ERR_NO_MEM);
    ck_assert_int_eq(ep_op_free_deferred(held_ops[failed]), 0); /* not held */
    for (int i = 0; i < NOPS; i++) {
        if (!st[i]) {
            ck_assert_int_eq(ep_op_free_deferred(held_ops[i]), 1); /* held: freed at its release */
            ep_op_release(held_ops[i]);
        } else {
            ck_assert_int_eq(PMPI_Op_free(&held_ops[i]), MPI_SUCCESS);
        }
    }
}
END_TEST
#endif

int main(int argc, char **argv)
{
    int provided;
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    Suite *s = suite_create("op");
    TCase *tc = tcase_create("operations");
    tcase_add_test(tc, same_as_mpich);
    tcase_add_test(tc, unsigned_order);
    tcase_add_test(tc, others_go_to_mpich);
    tcase_add_test(tc, commutativity);
    suite_add_tcase(s, tc);
    tc = tcase_create("holds");
    tcase_add_test(tc, held_op_freed_at_last_release);
#ifdef REALLOC_CAN_FAIL
    tcase_add_test(tc, op_hold_out_of_memory_is_reported);
#endif
    suite_add_tcase(s, tc);
    int rc = ep_unit_run_nofork(s);
    PMPI_Finalize();
    return rc;
}
