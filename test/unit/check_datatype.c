/* src/datatype.c, holding: a held datatype or operation is freed
 * only at its last release, a second free of it is told apart, and
 * predefined handles are never held; a type that cannot be learnt for
 * want of memory is told apart from an invalid one, and an operation whose
 * hold cannot be recorded is reported. */
#include "datatype.h"
#include "unit.h"

#include <mpi.h>
#include <stddef.h>

/* This program's calloc, which the engine (linked in) calls: it fails
 * while fail_calloc is set.  Not under a sanitizer, whose own allocator
 * would then be handed glibc's blocks to free. */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define CALLOC_CAN_FAIL 1
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
static volatile int fail_calloc, fail_realloc;
void *calloc(size_t n, size_t size)
{
    return fail_calloc ? NULL : __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
    return fail_realloc ? NULL : __libc_realloc(p, n);
}
#endif

START_TEST(held_type_freed_at_last_release)
{
    MPI_Datatype t;
    ck_assert_int_eq(PMPI_Type_contiguous(3, MPI_INT, &t), MPI_SUCCESS);
    ck_assert_int_eq(ep_handle_free_deferred((int)t), 0); /* not held: MPICH frees it now */
    ep_dt_rec_t *rec = ep_type_hold_rec(t);
    ck_assert_ptr_nonnull(rec);
    ck_assert_ptr_eq(ep_type_hold_rec(t), rec); /* one record per type */
    ck_assert_int_eq(ep_handle_free_deferred((int)t), 1);
    ck_assert_int_eq(ep_handle_free_deferred((int)t), -1); /* freed already */
    ep_type_release_rec(rec);
    int size = 0;
    ck_assert_int_eq(PMPI_Type_size(t, &size), MPI_SUCCESS); /* one hold left: still alive */
    ck_assert_int_eq(size, 3 * (int)sizeof(int));
    ep_type_release_rec(rec); /* the last: MPICH frees it, and the record goes */
    ck_assert_int_eq(ep_handle_free_deferred((int)t), 0);
}
END_TEST

START_TEST(held_type_released_without_free_stays)
{
    MPI_Datatype t;
    int size = 0;
    ck_assert_int_eq(PMPI_Type_contiguous(2, MPI_DOUBLE, &t), MPI_SUCCESS);
    ep_type_release_rec(ep_type_hold_rec(t));
    ck_assert_int_eq(PMPI_Type_size(t, &size), MPI_SUCCESS);
    ck_assert_int_eq(size, 2 * (int)sizeof(double));
    ck_assert_int_eq(PMPI_Type_free(&t), MPI_SUCCESS);
}
END_TEST

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

START_TEST(held_op_and_predefined_handles)
{
    MPI_Op op;
    ck_assert_int_eq(PMPI_Op_create(sum_fn, 1, &op), MPI_SUCCESS);
    ep_op_hold(op);
    ck_assert_int_eq(ep_handle_free_deferred((int)op), 1);
    int a = 2, b = 3;
    ck_assert_int_eq(PMPI_Reduce_local(&a, &b, 1, MPI_INT, op), MPI_SUCCESS); /* still usable */
    ck_assert_int_eq(b, 5);
    ep_op_release(op);
    ck_assert_int_eq(ep_handle_free_deferred((int)op), 0);
    ck_assert_ptr_null(ep_type_hold_rec(MPI_INT)); /* predefined: nothing held */
    ep_op_hold(MPI_SUM);
    ck_assert_int_eq(ep_handle_free_deferred((int)MPI_INT), 0);
    ck_assert_int_eq(ep_handle_free_deferred((int)MPI_SUM), 0);
    ep_op_release(MPI_SUM);
}
END_TEST

#ifdef CALLOC_CAN_FAIL
START_TEST(out_of_memory_is_not_a_bad_type)
{
    MPI_Datatype t;
    ep_dt_layout_t lay;
    ck_assert_int_eq(PMPI_Type_contiguous(5, MPI_INT, &t), MPI_SUCCESS);
    ck_assert_int_eq(PMPI_Type_commit(&t), MPI_SUCCESS);
    fail_calloc = 1; /* its record cannot be made */
    ep_status_t check = ep_dt_check(t), layout = ep_dt_layout(t, 2, &lay);
    fail_calloc = 0;
    ck_assert_int_eq(check, EP_ERR_NO_MEM);
    ck_assert_int_eq(layout, EP_ERR_NO_MEM);
    ck_assert_int_eq(ep_dt_check(t), EP_OK); /* learnt now */
    ck_assert_int_eq(ep_dt_layout(t, 2, &lay), EP_OK);
    ck_assert_int_eq(lay.bytes, 40);
    ck_assert_int_eq(PMPI_Type_free(&t), MPI_SUCCESS);
}
END_TEST

/* A hold that cannot be recorded (no memory to grow the table) says so,
 * and the operation is then not held: MPI_Op_free would free it at once,
 * so the caller must not go on with it (a non-blocking collective fails). */
START_TEST(op_hold_out_of_memory_is_reported)
{
    enum { N = 40 };
    MPI_Op ops[N];
    ep_status_t st[N];
    int failed = -1;
    fail_realloc = 1; /* the table has room for some, then must grow */
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(PMPI_Op_create(sum_fn, 1, &ops[i]), MPI_SUCCESS);
        st[i] = ep_op_hold(ops[i]);
        if (st[i] && failed < 0)
            failed = i;
    }
    fail_realloc = 0;
    ck_assert_int_ge(failed, 0);
    ck_assert_int_eq(st[failed], EP_ERR_NO_MEM);
    ck_assert_int_eq(ep_handle_free_deferred((int)ops[failed]), 0); /* not held */
    for (int i = 0; i < N; i++) {
        if (!st[i]) {
            ck_assert_int_eq(ep_handle_free_deferred((int)ops[i]), 1); /* held: freed at its release */
            ep_op_release(ops[i]);
        } else {
            ck_assert_int_eq(PMPI_Op_free(&ops[i]), MPI_SUCCESS);
        }
    }
}
END_TEST
#endif

int main(int argc, char **argv)
{
    int provided;
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    Suite *s = suite_create("datatype");
    TCase *tc = tcase_create("holds");
    tcase_add_test(tc, held_type_freed_at_last_release);
    tcase_add_test(tc, held_type_released_without_free_stays);
    tcase_add_test(tc, held_op_and_predefined_handles);
#ifdef CALLOC_CAN_FAIL
    tcase_add_test(tc, out_of_memory_is_not_a_bad_type);
    tcase_add_test(tc, op_hold_out_of_memory_is_reported);
#endif
    suite_add_tcase(s, tc);
    int rc = ep_unit_run_nofork(s);
    PMPI_Finalize();
    return rc;
}
