/* src/io/file.c's file views: filetypes flattened from their constructors
 * into byte runs in typemap order (vector, indexed block, struct with
 * resize, C and Fortran subarrays, and darray through the packing
 * fallback), the byte of the file where each byte of the view's data lies
 * (tiles of the filetype from disp), how much of the data lies before a
 * byte of the file, and a filetype that holds no whole etype refused. */
#include "io/file.h"
#include "unit.h"

#include <mpi.h>
#include <string.h>

/* Checks v's runs against want[n][2] = {offset, length}. */
static void expect_runs(const ep_file_view_t *v, const int64_t (*want)[2], int n)
{
    ck_assert_int_eq(v->nrun, n);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(v->run_off[i], want[i][0]);
        ck_assert_int_eq(v->run_len[i], want[i][1]);
    }
}

static void view_of(ep_file_view_t *v, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype t)
{
    ck_assert_int_eq(PMPI_Type_commit(&t), MPI_SUCCESS);
    ck_assert_int_eq(ep_file_view_make(v, disp, etype, t, 1), EP_OK);
    PMPI_Type_free(&t); /* the view keeps its own */
}

START_TEST(vector_runs_and_tiles)
{
    MPI_Datatype t;
    ep_file_view_t v;
    ck_assert_int_eq(PMPI_Type_vector(3, 2, 5, MPI_INT, &t), MPI_SUCCESS);
    view_of(&v, 100, MPI_INT, t);
    const int64_t want[3][2] = {{0, 8}, {20, 8}, {40, 8}};
    expect_runs(&v, want, 3);
    ck_assert_int_eq(v.size, 24);
    ck_assert_int_eq(v.extent, 48);
    ck_assert_int_eq(ep_file_view_byte(&v, 0, NULL), 100);
    ck_assert_int_eq(ep_file_view_byte(&v, 8, NULL), 120); /* the second run */
    ck_assert_int_eq(ep_file_view_byte(&v, 23, NULL), 147);
    ck_assert_int_eq(ep_file_view_byte(&v, 24, NULL), 148); /* the next tile, 48 bytes on */
    ck_assert_int_eq(ep_file_view_data_before(&v, 100), 0);
    ck_assert_int_eq(ep_file_view_data_before(&v, 126), 14); /* 8 bytes, then 6 of the second run */
    ck_assert_int_eq(ep_file_view_data_before(&v, 130), 16); /* and no more: the run is 8 long */
    ck_assert_int_eq(ep_file_view_data_before(&v, 148 + 4), 28);
    ep_file_view_free(&v);
}
END_TEST

START_TEST(indexed_block_and_resized_struct)
{
    MPI_Datatype t, s, r;
    ep_file_view_t v;
    int disp[2] = {0, 5};
    ck_assert_int_eq(PMPI_Type_create_indexed_block(2, 2, disp, MPI_INT, &t), MPI_SUCCESS);
    view_of(&v, 0, MPI_INT, t);
    const int64_t want[2][2] = {{0, 8}, {20, 8}};
    expect_runs(&v, want, 2);
    ep_file_view_free(&v);
    /* {int at 0, double at 8}, resized to 24 bytes: a hole of 4, then one at the end. */
    int bl[2] = {1, 1};
    MPI_Aint off[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    ck_assert_int_eq(PMPI_Type_create_struct(2, bl, off, ty, &s), MPI_SUCCESS);
    ck_assert_int_eq(PMPI_Type_create_resized(s, 0, 24, &r), MPI_SUCCESS);
    PMPI_Type_free(&s);
    view_of(&v, 0, MPI_BYTE, r);
    const int64_t want2[2][2] = {{0, 4}, {8, 8}};
    expect_runs(&v, want2, 2);
    ck_assert_int_eq(v.extent, 24);
    ck_assert_int_eq(ep_file_view_byte(&v, 12, NULL), 24); /* tile 1 starts again at its int */
    ep_file_view_free(&v);
}
END_TEST

/* A 2 x 3 block at (1, 2) of a 4 x 6 array of ints. */
START_TEST(subarrays_in_both_orders)
{
    MPI_Datatype t;
    ep_file_view_t v;
    int sizes[2] = {4, 6}, sub[2] = {2, 3}, start[2] = {1, 2};
    ck_assert_int_eq(PMPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
    view_of(&v, 0, MPI_INT, t);
    const int64_t c_rows[2][2] = {{32, 12}, {56, 12}}; /* rows 1 and 2, columns 2 to 4 */
    expect_runs(&v, c_rows, 2);
    ck_assert_int_eq(v.extent, 96);
    ep_file_view_free(&v);
    ck_assert_int_eq(PMPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_FORTRAN, MPI_INT, &t), MPI_SUCCESS);
    view_of(&v, 0, MPI_INT, t);
    const int64_t f_cols[3][2] = {{36, 8}, {52, 8}, {68, 8}}; /* columns 2 to 4, rows 1 and 2 */
    expect_runs(&v, f_cols, 3);
    ep_file_view_free(&v);
}
END_TEST

/* darray has no constructor decoding: its runs come from packing. */
START_TEST(darray_through_packing)
{
    MPI_Datatype t;
    ep_file_view_t v;
    int gs[1] = {8}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {2};
    ck_assert_int_eq(PMPI_Type_create_darray(2, 1, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
    view_of(&v, 0, MPI_INT, t);
    const int64_t want[1][2] = {{16, 16}}; /* process 1's half: ints 4 to 7 */
    expect_runs(&v, want, 1);
    ck_assert_int_eq(v.extent, 32);
    ep_file_view_free(&v);
}
END_TEST

/* A darray beyond what packing lays out (EP_TYPEMAP_PACK_MAX) is refused
 * with a message that says why, before any buffer is made: process 1's
 * half of 2^26 ints spans 128 MiB. */
START_TEST(a_huge_packed_filetype_is_refused_clearly)
{
    MPI_Datatype t;
    ep_file_view_t v;
    int gs[1] = {1 << 26}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {2};
    ck_assert_int_eq(PMPI_Type_create_darray(2, 1, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
    ck_assert_int_eq(PMPI_Type_commit(&t), MPI_SUCCESS);
    ck_assert_int_eq(ep_file_view_make(&v, 0, MPI_INT, t, 0), EP_ERR_TYPE);
    const char *why = ep_status_take_text(EP_ERR_TYPE);
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "the file view's filetype spans 134217728 bytes"), "%s", why);
    PMPI_Type_free(&t);
}
END_TEST

START_TEST(filetype_must_hold_whole_etypes)
{
    MPI_Datatype t;
    ep_file_view_t v;
    ck_assert_int_eq(PMPI_Type_contiguous(3, MPI_SHORT, &t), MPI_SUCCESS); /* 6 bytes */
    ck_assert_int_eq(PMPI_Type_commit(&t), MPI_SUCCESS);
    ck_assert_int_eq(ep_file_view_make(&v, 0, MPI_INT, t, 1), EP_ERR_ARG);
    PMPI_Type_free(&t);
    ck_assert_int_eq(ep_file_view_make(&v, 0, MPI_BYTE, MPI_BYTE, 1), EP_OK); /* the default view */
    ck_assert_int_eq(ep_file_view_byte(&v, 12345, NULL), 12345);
    ep_file_view_free(&v);
}
END_TEST

/* An indexed type of two blocks of ints at int displacements d0 (b0 ints)
 * and d1 (one). */
static MPI_Datatype two_blocks(int d0, int b0, int d1)
{
    MPI_Datatype t;
    int blen[2] = {b0, 1}, disp[2] = {d0, d1};
    ck_assert_int_eq(PMPI_Type_indexed(2, blen, disp, MPI_INT, &t), MPI_SUCCESS);
    ck_assert_int_eq(PMPI_Type_commit(&t), MPI_SUCCESS);
    return t;
}

/* MPI-4.0 14.3, as ROMIO checks it: negative and decreasing displacements
 * are refused in an etype and a filetype; overlapping regions only in a
 * file open for writing. */
START_TEST(typemaps_must_go_forward)
{
    ep_file_view_t v;
    MPI_Datatype neg = two_blocks(-2, 1, 2), dec = two_blocks(3, 1, 0), over = two_blocks(0, 3, 1);
    for (int writable = 0; writable < 2; writable++) {
        ck_assert_int_eq(ep_file_view_make(&v, 0, neg, neg, writable), EP_ERR_VIEW);
        ck_assert_int_eq(ep_file_view_make(&v, 0, dec, dec, writable), EP_ERR_VIEW);
        ck_assert_int_eq(ep_file_view_make(&v, 0, MPI_INT, neg, writable), EP_ERR_VIEW);
        ck_assert_int_eq(ep_file_view_make(&v, 0, MPI_INT, dec, writable), EP_ERR_VIEW);
    }
    ck_assert_str_eq(ep_status_take_text(EP_ERR_VIEW), "the filetype has decreasing displacements (a file view "
                                                       "needs non-negative, non-decreasing, non-overlapping "
                                                       "displacements)");
    /* Two ints listed backwards, their bytes without a gap: a typemap
     * that goes back all the same. */
    MPI_Datatype back, ints[2] = {MPI_INT, MPI_INT};
    int one[2] = {1, 1};
    MPI_Aint at[2] = {4, 0};
    ck_assert_int_eq(PMPI_Type_create_struct(2, one, at, ints, &back), MPI_SUCCESS);
    ck_assert_int_eq(PMPI_Type_commit(&back), MPI_SUCCESS);
    ck_assert_int_eq(ep_file_view_make(&v, 0, MPI_INT, back, 0), EP_ERR_VIEW);
    PMPI_Type_free(&back);
    ck_assert_int_eq(ep_file_view_make(&v, 0, MPI_INT, over, 1), EP_ERR_VIEW);
    ck_assert_int_eq(ep_file_view_make(&v, 0, over, over, 1), EP_ERR_VIEW);
    ck_assert_int_eq(ep_file_view_make(&v, 0, MPI_INT, over, 0), EP_OK); /* read-only: allowed */
    ep_file_view_free(&v);
    ck_assert_int_eq(ep_file_view_make(&v, 0, over, over, 0), EP_OK);
    ep_file_view_free(&v);
    PMPI_Type_free(&neg), PMPI_Type_free(&dec), PMPI_Type_free(&over);
}
END_TEST

int main(int argc, char **argv)
{
    int provided;
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    Suite *s = suite_create("file_view");
    TCase *tc = tcase_create("views");
    tcase_add_test(tc, vector_runs_and_tiles);
    tcase_add_test(tc, indexed_block_and_resized_struct);
    tcase_add_test(tc, subarrays_in_both_orders);
    tcase_add_test(tc, darray_through_packing);
    tcase_add_test(tc, filetype_must_hold_whole_etypes);
    tcase_add_test(tc, a_huge_packed_filetype_is_refused_clearly);
    tcase_add_test(tc, typemaps_must_go_forward);
    suite_add_tcase(s, tc);
    int rc = ep_unit_run_nofork(s);
    PMPI_Finalize();
    return rc;
}
