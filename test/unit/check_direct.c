/* src/p2p/direct.c: which communicators are direct (one endpoint per process,
 * rank r in process r, an intracommunicator with a process communicator,
 * world mode, EPMPI_P2P_PATH not engine; with auto, not all on a node
 * with inboxes, which needs UCX and so never holds here), and messages on a direct one:
 * they go to MPICH (the requests say so), in order, with wildcards, and a
 * truncated receive is reported on the request.  MPICH runs as a
 * singleton, so the direct communicator is one endpoint with a duplicate
 * of MPI_COMM_SELF as its process communicator, talking to itself. */
#include "core/comm.h"
#include "p2p/direct.h"
#include "transport/net.h"
#include "core/proc.h"
#include "p2p/p2p.h"
#include "base/settings.h"
#include "unit.h"

#include <check.h>
#include <string.h>

/* A communicator of n ranks whose rank r lives in process procs[r]. */
static int decided(int n, const int *procs, int nprocs, int inter, MPI_Comm pcomm)
{
    ep_rank_loc_t ranks[8];
    ep_comm_t c;
    memset(&c, 0, sizeof c);
    for (int r = 0; r < n; r++)
        ranks[r] = (ep_rank_loc_t){procs[r], 0};
    c.size = n;
    c.nprocs = nprocs;
    c.inter = inter;
    c.pcomm = pcomm;
    c.ranks = ranks;
    c.direct = -1;
    ep_direct_decide(&c);
    return c.direct;
}

START_TEST(only_process_shaped_communicators_are_direct)
{
    static const int in_order[] = {0, 1, 2}, swapped[] = {1, 0, 2}, shared[] = {0, 0, 1};
    MPI_Comm pc;
    ep_config_t saved = ep_config;
    ck_assert_int_eq(PMPI_Comm_dup(MPI_COMM_SELF, &pc), MPI_SUCCESS);
    ep_config.endpoints = 2;
    ep_config.p2p_path = EP_P2P_AUTO;
    ck_assert_int_eq(decided(3, in_order, 3, 0, pc), 1);
    ck_assert_int_eq(decided(3, swapped, 3, 0, pc), 0);             /* rank 0 not in process 0 */
    ck_assert_int_eq(decided(3, shared, 2, 0, pc), 0);              /* two ranks in process 0 */
    ck_assert_int_eq(decided(3, in_order, 3, 1, pc), 0);            /* an intercommunicator */
    ck_assert_int_eq(decided(3, in_order, 3, 0, MPI_COMM_NULL), 0); /* this process alone */
    ep_config.p2p_path = EP_P2P_ENGINE;                             /* EPMPI_P2P_PATH=engine */
    ck_assert_int_eq(decided(3, in_order, 3, 0, pc), 0);
    ep_config.p2p_path = EP_P2P_MPICH;
    ck_assert_int_eq(decided(3, in_order, 3, 0, pc), 1);
    ck_assert_int_eq(decided(3, swapped, 3, 0, pc), 0);
    ep_config.endpoints = 0; /* not world mode */
    ck_assert_int_eq(decided(3, in_order, 3, 0, pc), 0);
    ep_config = saved;
    ck_assert_int_eq(PMPI_Comm_free(&pc), MPI_SUCCESS);
}
END_TEST

static ep_comm_t *c; /* direct: one endpoint over a duplicate of MPI_COMM_SELF */

static void isend(ep_request_t *r, int tag, int *buf, int count)
{
    ep_request_init(r, EP_REQ_SEND, &c->local[0]);
    ep_request_describe_send(r, buf, count, MPI_INT, 0, tag, EP_SEND_STANDARD);
    ck_assert_int_eq(ep_send_start(r), EP_OK);
}

static void irecv(ep_request_t *r, int source, int tag, int *buf, int count)
{
    ep_request_init(r, EP_REQ_RECV, &c->local[0]);
    ep_request_describe_recv(r, buf, count, MPI_INT, source, tag);
    ck_assert_int_eq(ep_recv_start(r), EP_OK);
}

START_TEST(messages_go_to_mpich_in_order)
{
    ep_request_t s[3], r[3];
    int out[3] = {10, 11, 12}, in[3] = {0, 0, 0};
    ck_assert_int_eq(c->direct, 1);
    for (int i = 0; i < 3; i++)
        isend(&s[i], 5, &out[i], 1);
    /* Same tag, then any tag, then any source: MPI's order per sender. */
    irecv(&r[0], 0, 5, &in[0], 1);
    irecv(&r[1], 0, MPI_ANY_TAG, &in[1], 1);
    irecv(&r[2], MPI_ANY_SOURCE, MPI_ANY_TAG, &in[2], 1);
    for (int i = 0; i < 3; i++) {
        ep_request_wait(&r[i]);
        ep_request_wait(&s[i]);
        ck_assert_int_eq(r[i].direct, 1); /* through MPICH, not the engine's queues */
        ck_assert_int_eq(s[i].direct, 1);
        ck_assert_int_eq(in[i], out[i]);
        ck_assert_int_eq(r[i].status.MPI_SOURCE, 0);
        ck_assert_int_eq(r[i].status.MPI_TAG, 5);
        ck_assert_int_eq(r[i].status.MPI_ERROR, MPI_SUCCESS);
    }
}
END_TEST

START_TEST(truncation_is_reported_on_the_request)
{
    ep_request_t s, r;
    int out[4] = {1, 2, 3, 4}, in[2] = {0, 0};
    isend(&s, 9, out, 4);
    irecv(&r, 0, 9, in, 2);
    ep_request_wait(&r);
    ep_request_wait(&s);
    int cls = -1;
    PMPI_Error_class(r.status.MPI_ERROR, &cls);
    ck_assert_int_eq(cls, MPI_ERR_TRUNCATE);
    ck_assert_int_eq(in[0], 1);
}
END_TEST

int main(int argc, char **argv)
{
    int provided;
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    ep_proc_init();
    ep_net_init();
    Suite *s = suite_create("direct");
    TCase *tc = tcase_create("decision");
    tcase_add_test(tc, only_process_shaped_communicators_are_direct);
    suite_add_tcase(s, tc);
    /* A communicator of one process has no process communicator (its
     * messages stay in the engine): this one gets a duplicate of
     * MPI_COMM_SELF as its own, and is decided in world mode, which makes
     * it direct. */
    MPI_Comm pc;
    ep_new_ep_t ne = {0, {0, 0}};
    ep_config.endpoints = 1;
    ep_config.p2p_path = EP_P2P_AUTO;
    if (ep_comm_build(MPI_COMM_NULL, 1, 1, &ne, MPI_ERRORS_RETURN, &c) != EP_OK ||
        PMPI_Comm_dup(MPI_COMM_SELF, &pc) != MPI_SUCCESS)
        return EXIT_FAILURE;
    c->pcomm = pc;
    ep_direct_decide(c);
    /* MPICH raises a completed request's error (the truncation) on classic
     * MPI_COMM_WORLD's handler, which world mode's start-up replaces with
     * one that stays quiet for direct requests (direct.h). */
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    tc = tcase_create("messages");
    tcase_add_test(tc, messages_go_to_mpich_in_order);
    tcase_add_test(tc, truncation_is_reported_on_the_request);
    suite_add_tcase(s, tc);
    int rc = ep_unit_run_nofork(s);
    PMPI_Finalize();
    return rc;
}
