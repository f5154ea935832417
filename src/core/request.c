#include "core/request.h"

#include "core/bsend.h"
#include "coll/coll.h"
#include "core/datatype.h"
#include "p2p/direct.h"
#include "abi/handle.h"
#include "p2p/p2p.h"
#include "p2p/partitioned.h"
#include "base/thread.h"
#include "transport/ucx.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- per-thread pool of request objects (request.h) --------------------- */

__thread ep_req_pool_t *ep_req_pool EP_TLS;
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static ep_req_pool_t *pools;
static pthread_key_t pool_key;
static pthread_once_t pool_key_once = PTHREAD_ONCE_INIT;

static void request_free_mem(ep_request_t *r)
{
    if (r->pool_slot)
        ep_registry_release(r->pool_slot);
    free(r);
}

static void pool_drain(ep_req_pool_t *p)
{
    while (p->nobj)
        free(p->obj[--p->nobj]);
    for (; p->nslot; p->nslot--, p->shead = (p->shead + 1) % EP_REQ_POOL)
        ep_registry_release(p->slot[p->shead]);
}

static void pool_thread_exit(void *arg)
{
    ep_req_pool_t *p = arg;
    pthread_mutex_lock(&pools_lock);
    pool_drain(p);
    if (p->prev)
        p->prev->next = p->next;
    else
        pools = p->next;
    if (p->next)
        p->next->prev = p->prev;
    pthread_mutex_unlock(&pools_lock);
    ep_req_pool = NULL; /* a later request of this thread makes a new pool */
    free(p);
}

static void pool_key_make(void) { pthread_key_create(&pool_key, pool_thread_exit); }

/* The calling thread's pool, made at its first request.  Only threads
 * that make requests have one: a thread that only frees them (UCX's
 * progress helper finishing buffered sends) would keep objects that
 * nobody takes again, up to EP_REQ_POOL of them. */
static ep_req_pool_t *pool_mine(void)
{
    ep_req_pool_t *p = ep_req_pool;
    if (p || !(p = calloc(1, sizeof *p)))
        return p;
    ep_req_pool = p;
    pthread_once(&pool_key_once, pool_key_make);
    pthread_mutex_lock(&pools_lock);
    p->next = pools;
    if (pools)
        pools->prev = p;
    pools = p;
    pthread_mutex_unlock(&pools_lock);
    pthread_setspecific(pool_key, p);
    return p;
}

/* Keeps r (its handle already retired, its slot in r->pool_slot) in the
 * calling thread's pool; 0 when there is no pool or no room for the
 * object (the caller frees it, and with it any slot it still holds). */
static int pool_put(ep_request_t *r)
{
    ep_req_pool_t *p = ep_req_pool;
    if (!p)
        return 0;
    if (r->pool_slot && p->nslot < EP_REQ_POOL) {
        p->slot[(p->shead + p->nslot++) % EP_REQ_POOL] = r->pool_slot;
        r->pool_slot = 0;
    }
    if (p->nobj == EP_REQ_POOL)
        return 0;
    p->obj[p->nobj++] = r;
    return 1;
}

static ep_request_t *pool_get_obj(void)
{
    ep_req_pool_t *p = pool_mine();
    return p && p->nobj ? p->obj[--p->nobj] : NULL;
}

/* A retired slot to mint the next handle on, or 0 (the registry gives one). */
static unsigned pool_get_slot(void)
{
    ep_req_pool_t *p = ep_req_pool;
    return p && p->nslot > EP_REQ_POOL_KEEP ? ep_req_pool_take_slot(p) : 0;
}

void ep_request_pools_free(void)
{
    pthread_mutex_lock(&pools_lock);
    for (ep_req_pool_t *p = pools; p; p = p->next)
        pool_drain(p);
    pthread_mutex_unlock(&pools_lock);
}

/* ---- requests ---------------------------------------------------------- */

ep_request_t ep_request_sent = {
    .obj = {EP_OBJ_REQUEST},
    .state = EP_RS_DONE,
    .kind = EP_REQ_SEND,
    .handle = EP_REQUEST_SENT,
    .status = {.MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG, .MPI_ERROR = MPI_SUCCESS},
};

/* ep_request_new's ways that call out (request.h): the first request of
 * a thread, an empty pool, a handle from the registry. */
ep_request_t *ep_request_new_slow(ep_req_kind_t kind, ep_endpoint_t *ep, int with_handle)
{
    ep_request_t *r = pool_get_obj();
    if (!r && !(r = aligned_alloc(_Alignof(ep_request_t), sizeof *r)))
        return NULL;
    ep_request_init(r, kind, ep);
    if (with_handle) {
        unsigned slot = pool_get_slot();
        r->handle = (MPI_Request)(slot ? ep_registry_reissue(slot, EP_HTYPE_REQUEST, &r->obj)
                                       : ep_registry_add(EP_HTYPE_REQUEST, &r->obj));
        if (!r->handle) {
            free(r);
            return NULL;
        }
        ep_request_hold_ep(r);
    }
    return r;
}

ep_request_t *ep_request_completed(ep_endpoint_t *ep, const MPI_Status *st)
{
    ep_request_t *r = ep_request_new(EP_REQ_COLL, ep, 1);
    if (r) {
        r->status = *st;
        ep_request_set_done(r);
    }
    return r;
}

ep_status_t ep_request_set_parts(ep_request_t *r, int n)
{
    r->part = n <= 2 ? r->part_room : calloc((size_t)n, sizeof *r->part);
    if (!r->part)
        return EP_ERR_NO_MEM;
    r->part_room[0] = r->part_room[1] = NULL;
    r->nparts = n;
    return EP_OK;
}

static inline void drop_handle(ep_request_t *r)
{
    if (r->handle != MPI_REQUEST_NULL)
        r->pool_slot = ep_registry_retire((int)r->handle);
    r->handle = MPI_REQUEST_NULL;
}

void ep_request_drop_handle(ep_request_t *r)
{
    if (r != &ep_request_sent)
        drop_handle(r);
}

/* What r owns besides itself goes (apart from ep_request_destroy, which
 * then saves no registers in the usual case, where it owns nothing). */
static __attribute__((noinline)) void destroy_owned(ep_request_t *r)
{
    for (int i = 0; i < r->nparts; i++)
        if (r->part[i])
            ep_request_destroy(r->part[i]);
    if (r->part != r->part_room)
        free(r->part);
    if (r->partitioned)
        ep_part_free(r->partitioned);
    if (r->kind == EP_REQ_COLL)
        ep_coll_seq_free(r->tmp); /* the calls it is made of (coll.h) */
    else
        free(r->tmp);
    if (r->type_rec)
        ep_dt_release_rec(r->type_rec);
}

void ep_request_destroy(ep_request_t *r)
{
    if (r == &ep_request_sent)
        return;
    if (r->part || r->tmp || r->type_rec || r->partitioned)
        destroy_owned(r);
    ep_endpoint_t *held = r->holds_ep ? r->ep : NULL;
    drop_handle(r);
    if (!pool_put(r))
        request_free_mem(r);
    if (held) /* last: this may free the communicator */
        ep_endpoint_release(held);
}

void ep_request_hold_derived_type(ep_request_t *r) { r->type_rec = ep_dt_hold_rec(r->type); }

/* What every PMPI or UCX part leaves to do once over: a receive's data
 * that landed in tmp (truncated, or of a derived layout) goes where it
 * belongs, what fits; tmp and attached-buffer space go. */
void ep_request_finish_transfer(ep_request_t *r)
{
    if (r->kind == EP_REQ_RECV && r->tmp && !r->failure)
        ep_dt_unpack(r->tmp, r->sent_bytes < r->lay.bytes ? r->sent_bytes : r->lay.bytes, r->buf, r->count, r->type,
                     &r->lay);
    free(r->tmp);
    r->tmp = NULL;
    r->nnet = 0;
    if (r->bsend_bytes) {
        ep_bsend_release(r->bsend_bytes);
        r->bsend_bytes = 0;
    }
    ep_request_set_done(r);
}

/* The PMPI part of r finished, with status st and code err: finish what
 * the engine owes it.  A direct receive's status is MPICH's; any other
 * request has its own, and a PMPI failure is an internal error. */
static void finish_net(ep_request_t *r, const MPI_Status *st, int err)
{
    MPI_Count got;
    if (r->direct)
        ep_direct_status(r, st, err);
    else if (err != MPI_SUCCESS)
        r->status.MPI_ERROR = MPI_ERR_INTERN;
    else if (r->kind == EP_REQ_RECV && r->sent_bytes > 0 &&
             (PMPI_Get_count_c(st, MPI_BYTE, &got) != MPI_SUCCESS || got == 0)) {
        /* A rendezvous payload (a receive's only PMPI part) came empty: the
         * sender could not send it after its header (net.c). */
        r->failure = EP_ERR_PEER_FAILED;
        ep_mpi_status_set(&r->status, r->status.MPI_SOURCE, r->status.MPI_TAG, ep_status_class(r->failure), 0, 0);
    }
    ep_request_finish_transfer(r);
}

void ep_request_poll_net(ep_request_t *const rs[], int n)
{
    MPI_Request preq[EP_POLL_NET_MAX];
    ep_request_t *who[EP_POLL_NET_MAX];
    int idx[EP_POLL_NET_MAX];
    MPI_Status sts[EP_POLL_NET_MAX];
    int k = 0, out = 0;
    for (int i = 0; i < n && k < EP_POLL_NET_MAX; i++)
        if (rs[i]->nnet == 1 && ep_request_state(rs[i]) == EP_RS_NET) {
            who[k] = rs[i];
            preq[k++] = rs[i]->net[0];
        }
    if (k < 2)
        return;          /* ep_request_poll does as well */
    ep_direct_quiet = 1; /* errors come back in the statuses (direct.h) */
    int rc = PMPI_Testsome(k, preq, &out, idx, sts);
    ep_direct_quiet = 0;
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS && PMPI_Error_class(rc, &cls) == MPI_SUCCESS && cls != MPI_ERR_IN_STATUS)
        return; /* nothing known: ep_request_poll tests them one by one */
    for (int j = 0; j < out && out != MPI_UNDEFINED; j++) {
        ep_request_t *r = who[idx[j]];
        r->net[0] = MPI_REQUEST_NULL;
        finish_net(r, &sts[j], rc == MPI_SUCCESS ? MPI_SUCCESS : sts[j].MPI_ERROR);
    }
}

/* A request of parts is over when all are.  Its status is its first
 * part's (a pair's receive); its error the last failed part's (a pair's
 * send if that failed, else its receive's: the order MPI_Sendrecv reports
 * them in), with what entry_request_error_code (pmpi/entry.c) needs to describe it. */
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

int ep_request_poll(ep_request_t *r)
{
    int st = ep_request_state(r);
    if (st == EP_RS_DONE || st == EP_RS_INACTIVE)
        return 1;
    if (r->nparts)
        return parts_poll(r);
    if (r->kind == EP_REQ_COLL)
        return ep_coll_poll(r);
    if (r->kind == EP_REQ_PART)
        return ep_part_poll(r);
    if (st == EP_RS_PENDING) {
        /* The other side of a large message between threads may be
         * copying it: take chunks of the copy meanwhile (p2p.h). */
        ep_copy_help(r);
        if (r->kind != EP_REQ_RECV)
            return ep_request_state(r) == EP_RS_DONE;
        /* A message for it may wait in a lane (p2p.h), or at its UCX
         * worker (ucx.h). */
        ep_p2p_drain(r->ep, 0);
        if (r->ep->comm->ucx && ep_request_state(r) == EP_RS_PENDING)
            ep_ucx_poll_ep(r->ep);
        return ep_request_state(r) == EP_RS_DONE;
    }
    if (r->ucx_req) {
        int st = ep_ucx_test(r);
        if (st < 0)
            return 0;
        if (st) {
            r->failure = (ep_status_t)st;
            r->status.MPI_ERROR = ep_status_class(r->failure);
        }
        ep_request_finish_transfer(r);
        return 1;
    }
    int flag = 0;
    MPI_Status sts[EP_REQ_MAX_NET];
    /* Errors come back as codes, raised on the request's endpoint, not on
     * classic MPI_COMM_WORLD (direct.h). */
    ep_direct_quiet = 1;
    int rc = r->direct ? PMPI_Test(&r->net[0], &flag, sts) : PMPI_Testall(r->nnet, r->net, &flag, sts);
    ep_direct_quiet = 0;
    if (rc == MPI_SUCCESS && !flag)
        return 0;
    finish_net(r, &sts[0], rc);
    return 1;
}

void ep_request_wait(ep_request_t *r) { EP_WAIT_UNTIL(ep_request_poll(r)); }
