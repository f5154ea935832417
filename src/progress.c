/* Progress: what moves every kind of request forward.
 *
 * This is the one place that knows every kind of request (point-to-point,
 * pairs and other requests made of parts, collectives, partitioned
 * operations) and hands the ones whose data is in a transport to the
 * transport interface.  It sits at the top of the engine, beside engine.c,
 * and the layers below reach it through the calls they declare for it:
 * ep_progress and the detached requests (base/wait.h), ep_request_poll,
 * ep_request_wait and ep_request_abandon (core/request.h). */
#include "base/wait.h"
#include "coll/coll.h"
#include "core/request.h"
#include "p2p/p2p.h"
#include "p2p/partitioned.h"
#include "transport/transport.h"

#include <pthread.h>
#include <stdatomic.h>

/* ---- one request ------------------------------------------------------- */

/* A request of parts is over when all are.  Its status is its first
 * part's (a pair's receive); its error the last failed part's (a pair's
 * send if that failed, else its receive's: the order MPI_Sendrecv reports
 * them in), with what entry_request_error_code (pmpi/entry.c) needs to
 * describe it. */
static int parts_poll(ep_request_t *r)
{
    int over = 1;
    for (int i = 0; i < r->nparts; i++)
        over &= ep_request_poll(r->part[i]);
    if (!over)
        return 0;
    const ep_request_t *why = r->part[0];
    for (int i = r->nparts - 1; i >= 0; i--)
        if (r->part[i]->status.MPI_ERROR != MPI_SUCCESS) {
            why = r->part[i];
            break;
        }
    r->status = r->part[0]->status;
    r->status.MPI_ERROR = why->status.MPI_ERROR;
    r->failure = why->failure;
    r->direct = why->direct;
    r->lay = why->lay;
    r->sent_bytes = why->sent_bytes;
    if (r->then && r->status.MPI_ERROR == MPI_SUCCESS) {
        r->then(r);
        if (r->failure)
            r->status.MPI_ERROR = ep_status_class(r->failure);
    }
    ep_request_set_done(r);
    return 1;
}

int ep_request_poll(ep_request_t *r)
{
    int st = ep_request_state(r);
    if (st == EP_RS_DONE || st == EP_RS_INACTIVE)
        return 1;
    if (r->nparts)
        return parts_poll(r);
    if (r->kind == EP_REQ_COLL)
        return ep_coll_poll(r);
    if (ep_request_partitioned(r))
        return ep_part_poll(r);
    if (st == EP_RS_PENDING) {
        /* The other side of a large message between threads may be
         * copying it: take chunks of the copy meanwhile (p2p.h). */
        ep_copy_help(r);
        if (r->kind != EP_REQ_RECV)
            return ep_request_state(r) == EP_RS_DONE;
        /* A message for it may wait in a lane (p2p.h), or at a transport
         * queue of its endpoint. */
        ep_p2p_drain(r->ep, 0);
        if (ep_request_state(r) == EP_RS_PENDING)
            ep_transport_poll_ep(r->ep);
        return ep_request_state(r) == EP_RS_DONE;
    }
    return ep_transport_test(r);
}

void ep_request_wait(ep_request_t *r) { EP_WAIT_UNTIL(ep_request_poll(r)); }

int ep_request_abandon(ep_request_t *r)
{
    /* A receive nobody sent to ends here: at once when epmpi matches it,
     * once MPICH confirms the cancel when it is direct.  So does a pair's. */
    ep_request_t *recv = r->kind == EP_REQ_PAIR ? r->part[0] : r;
    if (recv->kind == EP_REQ_RECV && ep_request_state(recv) != EP_RS_DONE)
        ep_recv_cancel(recv);
    if (ep_request_poll(r))
        return 1;
    int in_net = ep_request_state(r) == EP_RS_NET;
    for (int i = 0; i < r->nparts; i++)
        in_net |= ep_request_state(r->part[i]) == EP_RS_NET;
    return in_net ? 0 : -1;
}

/* ---- requests the user freed while they ran ----------------------------
 *
 * They stay here until they are over, then go.  Whoever holds
 * detached_lock polls them; a thread that finds it taken does not wait. */

static pthread_mutex_t detached_lock = PTHREAD_MUTEX_INITIALIZER;
static ep_request_t *detached;
static _Atomic int n_detached;

static void destroy_all(ep_request_t *r)
{
    while (r) {
        ep_request_t *next = r->next_detached;
        ep_request_destroy(r);
        r = next;
    }
}

/* One pass over the detached requests, under detached_lock (waited for,
 * or with wait 0 only when free): over(r) > 0 when r is over (it goes),
 * < 0 when it is to be dropped, 0 to keep it.  The ones that are over are
 * destroyed once the lock is released: destroying one may free its
 * communicator, which takes locks of the transports.  Returns how many
 * stay (0 when the lock was busy). */
static int sweep(int (*over)(ep_request_t *r), int wait)
{
    ep_request_t *gone = NULL;
    int kept = 0;
    if (wait ? pthread_mutex_lock(&detached_lock) : pthread_mutex_trylock(&detached_lock))
        return 0;
    for (ep_request_t **pp = &detached; *pp;) {
        ep_request_t *r = *pp;
        int where = over(r);
        if (where == 0) {
            kept++;
            pp = &r->next_detached;
            continue;
        }
        *pp = r->next_detached;
        atomic_fetch_sub(&n_detached, 1);
        if (where > 0) {
            r->next_detached = gone;
            gone = r;
        }
    }
    pthread_mutex_unlock(&detached_lock);
    destroy_all(gone);
    return kept;
}

void ep_progress_reclaim(void) { sweep(ep_request_poll, 1); }

void ep_progress_detach(ep_request_t *r)
{
    pthread_mutex_lock(&detached_lock);
    r->next_detached = detached;
    detached = r;
    atomic_fetch_add(&n_detached, 1);
    pthread_mutex_unlock(&detached_lock);
}

int ep_progress_detached(void) { return atomic_load(&n_detached); }

/* At MPI_Finalize the freed requests that are over go and those that no
 * partner ever matched are dropped, until none is inside a transport. */
void ep_progress_finalize(void) { EP_WAIT_UNTIL(sweep(ep_request_abandon, 1) == 0); }

/* ---- progress ---------------------------------------------------------- */

void ep_progress(void)
{
    ep_coll_progress();
    ep_transport_progress();
    if (atomic_load_explicit(&n_detached, memory_order_relaxed))
        sweep(ep_request_poll, 0);
}
