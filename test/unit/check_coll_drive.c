/* The collective drivers (coll_drive.c) on their own, with a kind of the
 * test's: each endpoint contributes a number, start adds them up, finish
 * hands every endpoint the sum.  Four threads, each driving one endpoint
 * of a communicator in this process, as an endpoint program's do.
 *   - blocking (ep_coll_run): per call, start and complete run once and
 *     finish once per endpoint, and every endpoint gets the sum; a kind
 *     whose finish is not a plain copy finishes on each endpoint's thread;
 *   - a call where one endpoint passes another kind fails on every
 *     endpoint with EP_ERR_CALL_MISMATCH, without start, and the next
 *     call runs in step;
 *   - a start that fails: every endpoint gets its error, fail runs once,
 *     finish never;
 *   - non-blocking (ep_coll_start, ep_coll_poll): calls started in a row
 *     and polled in the reverse order each run once with their own sums. */
#include "coll/coll.h"

#include "transport/net.h"
#include "core/proc.h"
#include "threads.h"
#include "unit.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { ROUNDS = 300, NB_CALLS = 3, BAD = -1 };

static atomic_int starts, completes, fails;
static atomic_int finishes[EP_UNIT_NT];

static ep_status_t sum_start(ep_coll_inst_t *in)
{
    atomic_fetch_add(&starts, 1);
    long *sum = in->scratch[0] = malloc(sizeof *sum);
    if (!sum)
        return EP_ERR_NO_MEM;
    *sum = 0;
    for (int i = 0; i < in->c->nlocal; i++) {
        if (in->args[i]->scount == BAD)
            return EP_ERR_INTERN;
        *sum += in->args[i]->scount;
    }
    in->res = sum;
    return EP_OK;
}

static ep_status_t sum_complete(ep_coll_inst_t *in)
{
    (void)in;
    atomic_fetch_add(&completes, 1);
    return EP_OK;
}

/* The thread of each endpoint, and finishes that must stay on it (no
 * copy_finish) run elsewhere. */
static pthread_t owner[EP_UNIT_NT];
static atomic_int foreign_finishes;

static ep_status_t sum_finish(ep_coll_inst_t *in, int lidx)
{
    atomic_fetch_add(&finishes[lidx], 1);
    if (!in->args[lidx]->kind->copy_finish && !pthread_equal(pthread_self(), owner[lidx]))
        atomic_fetch_add(&foreign_finishes, 1);
    *(long *)in->args[lidx]->rbuf = *(const long *)in->res;
    return EP_OK;
}

static void sum_fail(ep_coll_inst_t *in)
{
    (void)in;
    atomic_fetch_add(&fails, 1);
}

/* sum_kind's finish only copies (the blocking driver's actor runs it for
 * every endpoint); own_kind's stands for one that calls the program's
 * code, which must run on the endpoint's own thread. */
static const ep_coll_kind_t sum_kind = {sum_start, sum_complete, sum_finish, sum_fail, 0, 1};
static const ep_coll_kind_t own_kind = {sum_start, sum_complete, sum_finish, sum_fail, 0, 0};
static const ep_coll_kind_t other_kind = {sum_start, sum_complete, sum_finish, sum_fail, 0, 1};

static void counters_reset(void)
{
    atomic_store(&starts, 0);
    atomic_store(&completes, 0);
    atomic_store(&fails, 0);
    atomic_store(&foreign_finishes, 0);
    for (int i = 0; i < EP_UNIT_NT; i++)
        atomic_store(&finishes[i], 0);
}

/* Endpoint me's arguments: it contributes value, the sum lands in *out. */
static void sum_args(ep_coll_args_t *a, const ep_coll_kind_t *k, ep_endpoint_t *ep, int value, long *out)
{
    ep_coll_args_init(a, k, ep);
    a->scount = value;
    a->stype = a->rtype = MPI_BYTE;
    a->rbuf = out;
}

static long want_sum(int round) { return (long)EP_UNIT_NT * round * 10 + EP_UNIT_NT * (EP_UNIT_NT - 1) / 2; }

/* The test case a worker runs: 0 blocking, 1 mismatch and failed start,
 * 2 non-blocking. */
static int scenario;

static const char *blocking_rounds(ep_endpoint_t *ep)
{
    for (int k = 0; k < ROUNDS; k++) {
        ep_coll_args_t a;
        long got = -7;
        sum_args(&a, k % 2 ? &own_kind : &sum_kind, ep, k * 10 + ep->lidx, &got);
        if (ep_coll_run(ep, &a) != EP_OK)
            return "a blocking call failed";
        if (got != want_sum(k))
            return "a blocking call gave the wrong sum";
    }
    return NULL;
}

static const char *failing_calls(ep_endpoint_t *ep)
{
    ep_coll_args_t a;
    long got = -7;
    /* Endpoint 2 calls another collective: a mismatch everywhere. */
    sum_args(&a, ep->lidx == 2 ? &other_kind : &sum_kind, ep, 1, &got);
    if (ep_coll_run(ep, &a) != EP_ERR_CALL_MISMATCH || got != -7)
        return "a call with mismatched kinds did not fail with EP_ERR_CALL_MISMATCH on this endpoint";
    /* The next call runs in step. */
    sum_args(&a, &sum_kind, ep, ep->lidx, &got);
    if (ep_coll_run(ep, &a) != EP_OK || got != want_sum(0))
        return "the call after a mismatch did not run in step";
    /* A start that fails (endpoint 1 brings the bad value). */
    got = -7;
    sum_args(&a, &sum_kind, ep, ep->lidx == 1 ? BAD : 0, &got);
    if (ep_coll_run(ep, &a) != EP_ERR_INTERN || got != -7)
        return "a failed start was not reported on this endpoint, or finish ran";
    return NULL;
}

static const char *nonblocking_calls(ep_endpoint_t *ep)
{
    for (int k = 0; k < ROUNDS / 10; k++) {
        ep_coll_args_t a;
        ep_request_t *r[NB_CALLS];
        long got[NB_CALLS];
        for (int j = 0; j < NB_CALLS; j++) {
            got[j] = -7;
            sum_args(&a, &sum_kind, ep, (k * NB_CALLS + j) * 10 + ep->lidx, &got[j]);
            if (ep_coll_start(ep, &a, &r[j]) != EP_OK)
                return "a non-blocking call did not start";
        }
        for (int j = NB_CALLS - 1; j >= 0; j--) {
            EP_WAIT_UNTIL(ep_coll_poll(r[j]));
            int failed = r[j]->status.MPI_ERROR != MPI_SUCCESS;
            ep_request_destroy(r[j]);
            if (failed)
                return "a non-blocking call failed";
            if (got[j] != want_sum(k * NB_CALLS + j))
                return "a non-blocking call gave the wrong sum";
        }
    }
    return NULL;
}

static void *worker(void *arg)
{
    ep_unit_worker_t *w = arg;
    ep_endpoint_t *ep = &w->c->local[w->me];
    owner[w->me] = pthread_self();
    const char *e = scenario == 0 ? blocking_rounds(ep) : scenario == 1 ? failing_calls(ep) : nonblocking_calls(ep);
    if (e)
        snprintf(w->err, sizeof w->err, "%s", e);
    return NULL;
}

static void run(int which)
{
    ep_comm_t *c = ep_unit_local_comm(EP_UNIT_NT);
    scenario = which;
    counters_reset();
    ep_unit_run_threads(c, NULL, worker);
    ep_unit_comm_free(c);
}

START_TEST(blocking_runs_each_step_once)
{
    run(0);
    ck_assert_int_eq(atomic_load(&starts), ROUNDS);
    ck_assert_int_eq(atomic_load(&completes), ROUNDS);
    ck_assert_int_eq(atomic_load(&fails), 0);
    for (int i = 0; i < EP_UNIT_NT; i++)
        ck_assert_int_eq(atomic_load(&finishes[i]), ROUNDS);
    ck_assert_int_eq(atomic_load(&foreign_finishes), 0);
}
END_TEST

START_TEST(mismatch_and_failed_start_reach_every_endpoint)
{
    run(1);
    /* The mismatched call starts nothing; the next one and the failing
     * one each start once. */
    ck_assert_int_eq(atomic_load(&starts), 2);
    ck_assert_int_eq(atomic_load(&fails), 1);
    for (int i = 0; i < EP_UNIT_NT; i++)
        ck_assert_int_eq(atomic_load(&finishes[i]), 1);
}
END_TEST

START_TEST(nonblocking_calls_polled_in_any_order)
{
    int calls = ROUNDS / 10 * NB_CALLS;
    run(2);
    ck_assert_int_eq(atomic_load(&starts), calls);
    ck_assert_int_eq(atomic_load(&completes), calls);
    for (int i = 0; i < EP_UNIT_NT; i++)
        ck_assert_int_eq(atomic_load(&finishes[i]), calls);
}
END_TEST

int main(int argc, char **argv)
{
    int provided;
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    ep_proc_init();
    ep_net_init();
    Suite *s = suite_create("coll_drive");
    TCase *tc = tcase_create("drivers");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, blocking_runs_each_step_once);
    tcase_add_test(tc, mismatch_and_failed_start_reach_every_endpoint);
    tcase_add_test(tc, nonblocking_calls_polled_in_any_order);
    suite_add_tcase(s, tc);
    int rc = ep_unit_run_nofork(s);
    ep_net_finalize();
    ep_proc_finalize();
    PMPI_Finalize();
    return rc;
}
