#include "core/request.h"

#include "abi/handle.h"
#include "base/thread.h"
#include "core/bsend.h"
#include "core/datatype.h"

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

/* p's credit back to its endpoint, whose holds it is. */
static void credit_return(ep_req_pool_t *p)
{
    ep_endpoint_t *ep = p->credit_ep;
    int n = p->credit;
    p->credit_ep = NULL;
    p->credit = 0;
    if (ep && n)
        ep_endpoint_release_n(ep, n);
}

void ep_request_hold_slow(ep_req_pool_t *p, ep_endpoint_t *ep)
{
    if (!p) {
        atomic_fetch_add_explicit(&ep->holds, 1, memory_order_relaxed);
        return;
    }
    credit_return(p);
    atomic_fetch_add_explicit(&ep->holds, EP_HOLD_BATCH, memory_order_relaxed);
    p->credit_ep = ep;
    p->credit = EP_HOLD_BATCH - 1;
}

void ep_request_credit_drop(ep_endpoint_t *ep)
{
    ep_req_pool_t *p = ep_req_pool;
    if (p && p->credit_ep == ep)
        credit_return(p);
}

void ep_request_credits_drop_all(void)
{
    pthread_mutex_lock(&pools_lock);
    for (ep_req_pool_t *p = pools; p; p = p->next)
        credit_return(p);
    pthread_mutex_unlock(&pools_lock);
}

static void pool_thread_exit(void *arg)
{
    ep_req_pool_t *p = arg;
    pthread_mutex_lock(&pools_lock);
    credit_return(p);
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
    .kind = EP_REQ_SEND, /* its handle, EP_REQUEST_SENT, is recognised by value (request.h) */
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
        r->handle = EP_HANDLE_NEW(MPI_Request,
                                  slot ? ep_registry_reissue(slot, EP_HTYPE_REQUEST, &r->obj)
                                       : ep_registry_add(EP_HTYPE_REQUEST, &r->obj),
                                  MPI_REQUEST_NULL);
        if (r->handle == MPI_REQUEST_NULL) {
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
        r->pool_slot = ep_registry_retire(EP_HID(r->handle));
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
    if (r->ext)
        r->ext_free(r->ext);
    free(r->tmp);
    if (r->type_rec)
        ep_dt_release_rec(r->type_rec);
}

void ep_request_destroy(ep_request_t *r)
{
    if (r == &ep_request_sent)
        return;
    if (r->part || r->tmp || r->type_rec || r->ext)
        destroy_owned(r);
    ep_endpoint_t *held = r->holds_ep ? r->ep : NULL;
    drop_handle(r);
    if (!pool_put(r))
        request_free_mem(r);
    ep_req_pool_t *p = ep_req_pool;
    if (held && p && p->credit_ep == held && p->credit < 2 * EP_HOLD_BATCH)
        p->credit++; /* the hold goes back to this thread's credit */
    else if (held)   /* last: this may free the communicator */
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
