/* Progress (src/progress.c) of what needs no transport: a request made of
 * parts completes when all of them have, with its first part's status and
 * its last failed part's error, and runs its `then` step once; what an
 * upper layer hangs on a request goes with it; a request freed while it
 * ran stays on the detached list until it is over, then goes. */
#include "base/wait.h"
#include "core/request.h"

#include "unit.h"

#include <check.h>

static ep_request_t *part_new(void)
{
    ep_request_t *r = ep_request_new(EP_REQ_SEND, NULL, 0);
    ck_assert_ptr_nonnull(r);
    atomic_store(&r->state, EP_RS_PENDING);
    return r;
}

static void part_done(ep_request_t *r, int source, int err)
{
    ep_mpi_status_set(&r->status, source, 5, err, 0, 0);
    ep_request_set_done(r);
}

static ep_request_t *pair_new(void)
{
    ep_request_t *pair = ep_request_new(EP_REQ_PAIR, NULL, 0);
    ck_assert_ptr_nonnull(pair);
    ck_assert_int_eq(ep_request_set_parts(pair, 2), EP_OK);
    pair->part[0] = part_new();
    pair->part[1] = part_new();
    atomic_store(&pair->state, EP_RS_PENDING);
    return pair;
}

START_TEST(parts_complete_together_with_the_first_parts_status)
{
    ep_request_t *pair = pair_new();
    ck_assert_int_eq(ep_request_poll(pair), 0);
    part_done(pair->part[1], 3, MPI_SUCCESS);
    ck_assert_int_eq(ep_request_poll(pair), 0);
    part_done(pair->part[0], 7, MPI_SUCCESS);
    ck_assert_int_eq(ep_request_poll(pair), 1);
    ck_assert_int_eq(ep_request_state(pair), EP_RS_DONE);
    ck_assert_int_eq(pair->status.MPI_SOURCE, 7);
    ck_assert_int_eq(pair->status.MPI_ERROR, MPI_SUCCESS);
    ep_request_destroy(pair);
    ep_request_pools_free();
}
END_TEST

START_TEST(a_parts_error_is_the_last_failed_parts)
{
    ep_request_t *pair = pair_new();
    part_done(pair->part[0], 7, MPI_ERR_TRUNCATE);
    part_done(pair->part[1], 3, MPI_ERR_RANK);
    pair->part[1]->failure = EP_ERR_PEER_FAILED;
    ck_assert_int_eq(ep_request_poll(pair), 1);
    ck_assert_int_eq(pair->status.MPI_SOURCE, 7);
    ck_assert_int_eq(pair->status.MPI_ERROR, MPI_ERR_RANK);
    ck_assert_int_eq(pair->failure, EP_ERR_PEER_FAILED);
    ep_request_destroy(pair);
    ep_request_pools_free();
}
END_TEST

static int then_runs;

static void then_fails(ep_request_t *r)
{
    then_runs++;
    r->failure = EP_ERR_NO_MEM;
}

START_TEST(the_then_step_runs_once_and_its_failure_counts)
{
    ep_request_t *pair = pair_new();
    pair->then = then_fails;
    then_runs = 0;
    part_done(pair->part[0], 1, MPI_SUCCESS);
    part_done(pair->part[1], 1, MPI_SUCCESS);
    ck_assert_int_eq(ep_request_poll(pair), 1);
    ck_assert_int_eq(ep_request_poll(pair), 1);
    ck_assert_int_eq(then_runs, 1);
    ck_assert_int_eq(pair->status.MPI_ERROR, ep_status_class(EP_ERR_NO_MEM));
    ep_request_destroy(pair);
    ep_request_pools_free();
}
END_TEST

static int ext_freed;
static void ext_free(void *ext)
{
    ck_assert_ptr_eq(ext, &ext_freed);
    ext_freed++;
}

START_TEST(what_a_layer_hangs_on_a_request_goes_with_it)
{
    ep_request_t *r = ep_request_new(EP_REQ_COLL, NULL, 1);
    ck_assert_ptr_nonnull(r);
    r->ext = &ext_freed;
    r->ext_free = ext_free;
    ext_freed = 0;
    ep_request_destroy(r);
    ck_assert_int_eq(ext_freed, 1);
    /* The object comes back cleared: nothing is freed twice. */
    r = ep_request_new(EP_REQ_COLL, NULL, 0);
    ck_assert_ptr_null(r->ext);
    ep_request_destroy(r);
    ck_assert_int_eq(ext_freed, 1);
    ep_request_pools_free();
}
END_TEST

START_TEST(a_detached_request_goes_once_it_is_over)
{
    ep_request_t *r = part_new();
    ep_request_t *other = part_new();
    ck_assert_int_eq(ep_progress_detached(), 0);
    ep_progress_detach(r);
    ep_progress_detach(other);
    ck_assert_int_eq(ep_progress_detached(), 2);
    ep_progress_reclaim();
    ck_assert_int_eq(ep_progress_detached(), 2);
    part_done(r, 0, MPI_SUCCESS);
    ep_progress_reclaim();
    ck_assert_int_eq(ep_progress_detached(), 1);
    part_done(other, 0, MPI_SUCCESS);
    ep_progress_reclaim();
    ck_assert_int_eq(ep_progress_detached(), 0);
    ep_request_pools_free();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("progress");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parts_complete_together_with_the_first_parts_status);
    tcase_add_test(tc, a_parts_error_is_the_last_failed_parts);
    tcase_add_test(tc, the_then_step_runs_once_and_its_failure_counts);
    tcase_add_test(tc, what_a_layer_hangs_on_a_request_goes_with_it);
    tcase_add_test(tc, a_detached_request_goes_once_it_is_over);
    suite_add_tcase(s, tc);
    /* Each test in a process of its own: the detached list and the pools
     * start empty. */
    return ep_unit_run_mode(s, CK_FORK);
}
