/* src/core/datatype.c, holding: a held datatype is freed only at its last
 * release, a second free of it is told apart, and predefined types are
 * never held; a type that cannot be learnt for want of memory is told
 * apart from an invalid one. */
#include "core/datatype.h"
#include "unit.h"

#include <mpi.h>
#include <stddef.h>

/* This program's calloc, which the engine (linked in) calls: it fails
 * while fail_calloc is set.  Not under a sanitizer, whose own allocator
 * would then be handed glibc's blocks to free. */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define CALLOC_CAN_FAIL 1
void *__libc_calloc(size_t n, size_t size);
static volatile int fail_calloc;
void *calloc(size_t n, size_t size) { return fail_calloc ? NULL : __libc_calloc(n, size); }
#endif

START_TEST(held_type_freed_at_last_release)
{
    MPI_Datatype t;
    ck_assert_int_eq(PMPI_Type_contiguous(3, MPI_INT, &t), MPI_SUCCESS);
    ck_assert_int_eq(ep_dt_free_deferred(t), 0); /* not held: MPICH frees it now */
    ep_dt_rec_t *rec = ep_dt_hold_rec(t);
    ck_assert_ptr_nonnull(rec);
    ck_assert_ptr_eq(ep_dt_hold_rec(t), rec); /* one record per type */
    ck_assert_int_eq(ep_dt_free_deferred(t), 1);
    ck_assert_int_eq(ep_dt_free_deferred(t), -1); /* freed already */
    ep_dt_release_rec(rec);
    int size = 0;
    ck_assert_int_eq(PMPI_Type_size(t, &size), MPI_SUCCESS); /* one hold left: still alive */
    ck_assert_int_eq(size, 3 * (int)sizeof(int));
    ep_dt_release_rec(rec); /* the last: MPICH frees it, and the record goes */
    ck_assert_int_eq(ep_dt_free_deferred(t), 0);
}
END_TEST

START_TEST(held_type_released_without_free_stays)
{
    MPI_Datatype t;
    int size = 0;
    ck_assert_int_eq(PMPI_Type_contiguous(2, MPI_DOUBLE, &t), MPI_SUCCESS);
    ep_dt_release_rec(ep_dt_hold_rec(t));
    ck_assert_int_eq(PMPI_Type_size(t, &size), MPI_SUCCESS);
    ck_assert_int_eq(size, 2 * (int)sizeof(double));
    ck_assert_int_eq(PMPI_Type_free(&t), MPI_SUCCESS);
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

#endif

int main(int argc, char **argv)
{
    int provided;
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    Suite *s = suite_create("datatype");
    TCase *tc = tcase_create("holds");
    tcase_add_test(tc, held_type_freed_at_last_release);
    tcase_add_test(tc, held_type_released_without_free_stays);
#ifdef CALLOC_CAN_FAIL
    tcase_add_test(tc, out_of_memory_is_not_a_bad_type);
#endif
    suite_add_tcase(s, tc);
    int rc = ep_unit_run_nofork(s);
    PMPI_Finalize();
    return rc;
}
