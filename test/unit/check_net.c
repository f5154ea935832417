/* The inter-process transport and the progress engine, driven by threads:
 * messages a process sends to its own endpoints through MPICH (headers on
 * the ring, rendezvous payloads, synchronous and buffered sends), delivered
 * by whichever waiting thread wins the progress try-lock, and requests freed
 * while pending, which the progress engine finishes and destroys.  MPICH
 * runs as a singleton; Check runs the tests in this process (CK_NOFORK). */
#include "core/bsend.h"
#include "core/comm.h"
#include "transport/net.h"
#include "p2p/p2p.h"
#include "core/proc.h"
#include "threads.h"
#include "unit.h"

#include <check.h>
#include <time.h>

/* The net path to the process itself: what a send to an endpoint of
 * another process does, with this process as the other one. */
static ep_status_t send_loopback(ep_request_t *s)
{
    ep_status_t rc = ep_dt_layout(s->type, s->count, &s->lay);
    if (rc)
        return rc;
    atomic_store(&s->state, EP_RS_PENDING);
    return ep_net_send(s, ep_proc_world_rank(), s->ep->comm->ctx, ep_local_rank(s->ep), s->peer, &s->lay);
}

START_TEST(threads_exchange_through_mpich)
{
    ep_comm_t *c = ep_unit_local_comm(EP_UNIT_NT);
    ep_unit_run_threads(c, send_loopback, ep_unit_exchange);
    ep_unit_comm_free(c);
}
END_TEST

/* Each thread sends rendezvous messages with handle-carrying requests and
 * frees them at once (MPI_Request_free), then receives its peers'. */
enum { DETACH_ROUNDS = 40 };
static int payload[EP_UNIT_BIG];

static void *detach_worker(void *arg)
{
    ep_unit_worker_t *w = arg;
    ep_endpoint_t *ep = &w->c->local[w->me];
    int n = w->c->nlocal, *in = malloc(sizeof payload);
    for (int k = 0; k < DETACH_ROUNDS && in && !w->err[0]; k++) {
        for (int p = 0; p < n; p++) {
            if (p == w->me)
                continue;
            ep_request_t *s = ep_request_new(EP_REQ_SEND, ep, 1);
            if (!s) {
                snprintf(w->err, sizeof w->err, "out of memory");
                break;
            }
            ep_request_describe_send(s, payload, EP_UNIT_BIG, MPI_INT, p, k, EP_SEND_STANDARD);
            if (w->send(s) != EP_OK)
                snprintf(w->err, sizeof w->err, "sending failed");
            ep_registry_remove(EP_HID(s->handle));
            s->handle = MPI_REQUEST_NULL;
            ep_progress_detach(s);
        }
        for (int i = 0; i < n - 1; i++) {
            ep_request_t r;
            ep_request_init(&r, EP_REQ_RECV, ep);
            ep_request_describe_recv(&r, in, EP_UNIT_BIG, MPI_INT, MPI_ANY_SOURCE, k);
            in[EP_UNIT_BIG - 1] = -1;
            if (ep_recv_start(&r) != EP_OK)
                snprintf(w->err, sizeof w->err, "ep_recv_start failed");
            ep_request_wait(&r);
            if (r.status.MPI_ERROR != MPI_SUCCESS || in[EP_UNIT_BIG - 1] != EP_UNIT_BIG - 1)
                snprintf(w->err, sizeof w->err, "round %d: damaged message from %d", k, r.status.MPI_SOURCE);
        }
    }
    free(in);
    return NULL;
}

START_TEST(freed_requests_are_finished_by_progress)
{
    for (int i = 0; i < EP_UNIT_BIG; i++)
        payload[i] = i;
    ep_comm_t *c = ep_unit_local_comm(EP_UNIT_NT);
    int live0 = ep_registry_live();
    ep_unit_run_threads(c, send_loopback, detach_worker);
    /* Every receive has completed, so every freed send is complete in
     * MPICH; progress must destroy them all (their handles went at once). */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        ep_progress_reclaim();
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (ep_progress_detached() && t.tv_sec - t0.tv_sec < 10);
    ck_assert_int_eq(ep_progress_detached(), 0);
    ck_assert_int_eq(ep_registry_live(), live0);
    ep_unit_comm_free(c);
}
END_TEST

int main(int argc, char **argv)
{
    int provided;
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    ep_proc_init();
    ep_net_init();
    ep_bsend_attach(1 << 20);
    Suite *s = suite_create("net");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, threads_exchange_through_mpich);
    tcase_add_test(tc, freed_requests_are_finished_by_progress);
    suite_add_tcase(s, tc);
    int rc = ep_unit_run_nofork(s);
    ep_net_finalize();
    ep_proc_finalize();
    PMPI_Finalize();
    return rc;
}
