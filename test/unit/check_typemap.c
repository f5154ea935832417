/* src/core/typemap.c, the one datatype decoder: runs come in typemap order
 * (a struct that lists its blocks backwards is two runs, not one), types
 * made with large counts decode as their int twins do, a gap-free typemap
 * is one run however it was built (and so contiguous), a padded pair type
 * is not (one instance or several, packed once), the run cap stops the
 * decoding early, and a count beyond INT_MAX costs nothing. */
#include "abi/large.h"
#include "core/typemap.h"
#include "unit.h"

#include <limits.h>
#include <mpi.h>

/* t's runs (one instance at base 0), checked against want[n][2] =
 * {offset, length}; t is committed and freed. */
static void expect_runs(MPI_Datatype t, const int64_t (*want)[2], int n)
{
    ep_runs_t r = {0};
    ck_assert_int_eq(PMPI_Type_commit(&t), MPI_SUCCESS);
    ck_assert_int_eq(ep_typemap_runs(t, 0, 1, &r), EP_OK);
    ck_assert_int_eq(r.n, n);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(r.off[i], want[i][0]);
        ck_assert_int_eq(r.len[i], want[i][1]);
    }
    ep_runs_free(&r);
    PMPI_Type_free(&t);
}

static MPI_Datatype two_ints_at(MPI_Aint d0, MPI_Aint d1)
{
    MPI_Datatype t, types[2] = {MPI_INT, MPI_INT};
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {d0, d1};
    ck_assert_int_eq(PMPI_Type_create_struct(2, bl, d, types, &t), MPI_SUCCESS);
    ck_assert_int_eq(PMPI_Type_commit(&t), MPI_SUCCESS);
    return t;
}

START_TEST(runs_follow_the_typemap_not_memory)
{
    /* Size equals true extent, yet packing swaps the two ints. */
    MPI_Datatype back = two_ints_at(4, 0), fwd = two_ints_at(0, 4);
    const int64_t want[2][2] = {{4, 4}, {0, 4}};
    MPI_Datatype dup;
    PMPI_Type_dup(back, &dup);
    expect_runs(dup, want, 2);
    ck_assert_int_eq(ep_typemap_contiguous(back, 0), 0);
    ck_assert_int_eq(ep_typemap_contiguous(fwd, 0), 1); /* gap-free in order: one run */
    ck_assert_int_eq(ep_typemap_contiguous(fwd, 1), 1);
    PMPI_Type_free(&back), PMPI_Type_free(&fwd);
}
END_TEST

#if EP_MPI_LARGE_COUNT /* the MPI's own _c constructors (not in Open MPI) */
START_TEST(large_count_constructors_decode_like_int_ones)
{
    MPI_Datatype a, b;
    const int64_t vec[3][2] = {{0, 8}, {20, 8}, {40, 8}};
    PMPI_Type_vector(3, 2, 5, MPI_INT, &a);
    PMPI_Type_vector_c(3, 2, 5, MPI_INT, &b);
    expect_runs(a, vec, 3);
    expect_runs(b, vec, 3);
    MPI_Count blc[2] = {2, 1}, dc[2] = {40, 8};
    int bli[2] = {2, 1};
    MPI_Aint di[2] = {40, 8};
    const int64_t hidx[2][2] = {{40, 8}, {8, 4}};
    PMPI_Type_create_hindexed(2, bli, di, MPI_INT, &a);
    PMPI_Type_create_hindexed_c(2, blc, dc, MPI_INT, &b);
    expect_runs(a, hidx, 2);
    expect_runs(b, hidx, 2);
    /* A Fortran-order subarray: columns of 2 ints of a 4 x 3 array. */
    int si[2] = {4, 3}, subi[2] = {2, 2}, sti[2] = {1, 1};
    MPI_Count sc[2] = {4, 3}, subc[2] = {2, 2}, stc[2] = {1, 1};
    const int64_t sub[2][2] = {{20, 8}, {36, 8}};
    PMPI_Type_create_subarray(2, si, subi, sti, MPI_ORDER_FORTRAN, MPI_INT, &a);
    PMPI_Type_create_subarray_c(2, sc, subc, stc, MPI_ORDER_FORTRAN, MPI_INT, &b);
    expect_runs(a, sub, 2);
    expect_runs(b, sub, 2);
}
END_TEST
#endif

START_TEST(a_count_beyond_int_max_is_one_run)
{
    MPI_Datatype t, one;
    MPI_Count n = (MPI_Count)INT_MAX + 10, bl = n, d = 64;
    ck_assert_int_eq(ep_pmpi_type_contiguous_c(n, MPI_INT, &t), MPI_SUCCESS);
    ck_assert_int_eq(PMPI_Type_commit(&t), MPI_SUCCESS);
    ck_assert_int_eq(ep_typemap_contiguous(t, 1), 1);
    ck_assert_int_eq(ep_pmpi_type_create_hindexed_c(1, &bl, &d, MPI_INT, &one), MPI_SUCCESS);
    ck_assert_int_eq(PMPI_Type_commit(&one), MPI_SUCCESS);
    ck_assert_int_eq(ep_typemap_contiguous(one, 0), 1);
    ck_assert_int_eq(ep_typemap_contiguous(one, 1), 1); /* its extent starts with its data, at 64 */
    const int64_t want[1][2] = {{0, 4 * n}};
    expect_runs(t, want, 1);
    PMPI_Type_free(&one);
}
END_TEST

START_TEST(padded_pairs_and_the_run_cap)
{
    /* MPI_SHORT_INT: a short, two bytes of padding, an int. */
    const int64_t want[2][2] = {{0, 2}, {4, 4}};
    MPI_Datatype t;
    PMPI_Type_dup(MPI_SHORT_INT, &t);
    expect_runs(t, want, 2);
    ck_assert_int_eq(ep_typemap_contiguous(MPI_SHORT_INT, 0), 0);
    /* Three of them: packed once, repeated every extent (8 bytes). */
    const int64_t three[4][2] = {{0, 2}, {4, 6}, {12, 6}, {20, 4}};
    PMPI_Type_contiguous(3, MPI_SHORT_INT, &t);
    expect_runs(t, three, 4);
    /* A vector of many blocks, asked for one run: stops at the second. */
    ep_runs_t r = {.max = 1};
    PMPI_Type_vector(100000, 1, 2, MPI_INT, &t);
    PMPI_Type_commit(&t);
    ck_assert_int_eq(ep_typemap_runs(t, 0, 1, &r), EP_OK);
    ck_assert_int_eq(r.full, 1);
    ck_assert_int_eq(r.n, 1);
    ep_runs_free(&r);
    ck_assert_int_eq(ep_typemap_contiguous(t, 0), 0);
    /* Several instances of a derived type repeat at its extent; the last
     * block of one and the first of the next touch, and merge. */
    ck_assert_int_eq(ep_typemap_runs(t, 1000, 2, &r), EP_OK);
    ck_assert_int_eq(r.n, 2 * 100000 - 1);
    ck_assert_int_eq(r.off[99999], 1000 + 99999 * 8);
    ck_assert_int_eq(r.len[99999], 8);
    ep_runs_free(&r);
    PMPI_Type_free(&t);
}
END_TEST

int main(int argc, char **argv)
{
    int provided;
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    Suite *s = suite_create("typemap");
    TCase *tc = tcase_create("runs");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, runs_follow_the_typemap_not_memory);
#if EP_MPI_LARGE_COUNT
    tcase_add_test(tc, large_count_constructors_decode_like_int_ones);
#endif
    tcase_add_test(tc, a_count_beyond_int_max_is_one_run);
    tcase_add_test(tc, padded_pairs_and_the_run_cap);
    suite_add_tcase(s, tc);
    int rc = ep_unit_run_nofork(s);
    PMPI_Finalize();
    return rc;
}
