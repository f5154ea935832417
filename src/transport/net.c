#include "transport/net.h"
#include "abi/large.h"

#include "base/settings.h"
#include "base/thread.h"
#include "abi/handle.h"
#include "base/invariant.h"
#include "core/proc.h"
#include "transport/transport.h"
#include "base/wait.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define EP_RING 32 /* pre-posted header receives */
/* Headers, pokes (ep_net_poke_mpich) and rendezvous payloads share one
 * communicator, each payload under a tag of its own from EP_DTAG_FIRST
 * on, below MPICH's MPI_TAG_UB. */
#define EP_HDR_TAG 0
#define EP_POKE_TAG 1
#define EP_DTAG_FIRST 2
#define EP_DTAG_MASK 0x0fffffff

typedef struct ep_ring_slot {
    MPI_Request req;
    char *buf; /* header + eager payload */
} ep_ring_slot_t;

/* An early header: its communicator is not registered here yet. */
typedef struct ep_early {
    struct ep_early *next;
    int src_world;
    ep_wire_hdr_t hdr;
    char payload[]; /* eager payload */
} ep_early_t;

/* Progress state.  Everything below is guarded by progress_lock, except the
 * communicators and counters, which are set up before any endpoint exists. */
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Comm tcomm = MPI_COMM_NULL; /* proc.c's group communicator, kept here as
                                          every send reads it */

static ep_ring_slot_t ring[EP_RING];
static char *ring_mem; /* the slots' buffers, one block */
static int ring_head;
static int ring_unposted; /* slots before ring_head whose receive is not yet re-posted */
_Atomic int ep_net_ring_on;
static size_t ring_bufsize;
static ep_early_t *early_head, **early_tailp = &early_head;
static _Atomic unsigned next_dtag;

/* progress_lock, and in assertion builds whether this thread holds it (the
 * functions that need it say so with EP_ASSERT). */
#ifdef EP_ASSERTS
static __thread int progress_held;
#define PROGRESS_HELD() progress_held
#define PROGRESS_MARK(v) (progress_held = (v))
#else
#define PROGRESS_MARK(v) ((void)0)
#endif

static void progress_take(void)
{
    pthread_mutex_lock(&progress_lock);
    PROGRESS_MARK(1);
}

static int progress_try(void)
{
    if (pthread_mutex_trylock(&progress_lock))
        return 0;
    PROGRESS_MARK(1);
    return 1;
}

static void progress_give(void)
{
    PROGRESS_MARK(0);
    pthread_mutex_unlock(&progress_lock);
}

ep_status_t ep_net_init(void)
{
    tcomm = ep_proc_group_comm();
    return EP_OK;
}

/* A header receive that cannot be posted, or tested, loses the headers
 * meant for it: nothing can go on after that. */
static void post_slot(ep_ring_slot_t *s)
{
    int rc = PMPI_Irecv(s->buf, (int)ring_bufsize, MPI_BYTE, MPI_ANY_SOURCE, EP_HDR_TAG, tcomm, &s->req);
    if (rc != MPI_SUCCESS)
        ep_fatal(MPI_ERR_INTERN,
                 "process %d could not post a receive for message headers (MPI_Irecv "
                 "failed with code %d)",
                 ep_proc_world_rank(), rc);
}

/* Re-posts the slots emptied by earlier polls, oldest first, so MPICH
 * keeps matching headers in ring order.  Called with progress_lock held. */
static void repost_ring(void)
{
    EP_ASSERT(PROGRESS_HELD());
    for (; ring_unposted; ring_unposted--)
        post_slot(&ring[(ring_head - ring_unposted + EP_RING) % EP_RING]);
}

ep_status_t ep_net_activate(void)
{
    ep_status_t rc = EP_OK;
    if (atomic_load(&ep_net_ring_on))
        return EP_OK;
    progress_take();
    if (!atomic_load(&ep_net_ring_on)) {
        ring_bufsize = sizeof(ep_wire_hdr_t) + ep_config.eager_limit;
        if (!(ring_mem = malloc(EP_RING * ring_bufsize))) {
            rc = EP_ERR_NO_MEM;
        } else {
            for (int i = 0; i < EP_RING; i++) {
                ring[i].buf = ring_mem + (size_t)i * ring_bufsize;
                post_slot(&ring[i]);
            }
            ring_head = 0;
            atomic_store(&ep_net_ring_on, 1);
        }
    }
    progress_give();
    return rc;
}

void ep_net_finalize(void)
{
    /* Freed requests still inside MPICH (buffered sends, rendezvous data)
     * have finished (ep_progress_finalize): the communicators may go. */
    if (atomic_load(&ep_net_ring_on)) {
        progress_take();
        repost_ring();
        progress_give();
        for (int i = 0; i < EP_RING; i++) {
            PMPI_Cancel(&ring[i].req);
            PMPI_Wait(&ring[i].req, MPI_STATUS_IGNORE);
        }
        free(ring_mem);
        ring_mem = NULL;
        atomic_store(&ep_net_ring_on, 0);
    }
    while (early_head) {
        ep_early_t *e = early_head;
        early_head = e->next;
        free(e);
    }
    early_tailp = &early_head;
    tcomm = MPI_COMM_NULL; /* proc.c's */
}

/* ---- sending ----------------------------------------------------------- */

/* The header of rendezvous send s went out (s->net[0]) but its payload
 * could not be sent (PMPI code rc).  The receiver will match the header
 * and wait for the payload: an empty message in its place tells it the
 * data is not coming (finish_mpi in transport.c).  s keeps its header's
 * PMPI request, whose buffer (s->tmp) MPICH may still read, and completes
 * with the error once both are over.  If not even the empty message can
 * be sent, the receiver would wait forever: a fatal error. */
static void payload_failed(ep_request_t *s, int dst_world, int dtag, int rc)
{
    if (PMPI_Isend(NULL, 0, MPI_BYTE, dst_world, dtag, tcomm, &s->net[s->nnet]) != MPI_SUCCESS)
        ep_fatal(MPI_ERR_OTHER,
                 "the data of a %lld-byte message from process %d to process %d could not "
                 "be sent after its header (code %d), nor could the receiver be told",
                 (long long)s->lay.bytes, ep_proc_world_rank(), dst_world, rc);
    s->nnet++;
    ep_net_sent(s);
    /* A buffered send was complete already (its error has nobody to go
     * to: the receiver reports it). */
    if (ep_request_state(s) == EP_RS_NET) {
        s->status.MPI_ERROR = ep_status_class(EP_ERR_SEND_FAILED);
        s->failure = EP_ERR_SEND_FAILED;
    }
}

ep_status_t ep_net_send(ep_request_t *s, int dst_world, uint64_t ctx, int src, int dst_lidx, const ep_dt_layout_t *lay)
{
    int eager = s->mode != EP_SEND_SYNC && (size_t)lay->bytes <= ep_config.eager_limit;
    size_t hbytes = sizeof(ep_wire_hdr_t) + (eager ? (size_t)lay->bytes : 0);
    /* A buffered send hands its header to another request (below). */
    int inl = eager && s->mode != EP_SEND_BUFFERED && hbytes <= sizeof s->wire_inline;
    ep_wire_hdr_t *h = inl ? (ep_wire_hdr_t *)(void *)s->wire_inline : malloc(hbytes);
    int rc = MPI_SUCCESS;

    if (!h)
        return EP_ERR_NO_MEM;
    h->ctx = ctx;
    h->src = src;
    h->dst = dst_lidx;
    h->tag = s->tag;
    h->flags = eager ? 0 : EP_WIRE_RNDV;
    h->bytes = lay->bytes;
    h->dtag = 0;
    h->pad = 0;
    s->tmp = inl ? NULL : h;
    s->nnet = 0;
    ep_status_t st = ep_net_activate();
    if (!st && eager) {
        st = ep_dt_pack(s->buf, s->count, s->type, lay, h + 1);
    } else if (!st) {
        h->dtag = EP_DTAG_FIRST + (int)(atomic_fetch_add(&next_dtag, 1) % (EP_DTAG_MASK - EP_DTAG_FIRST + 1));
        if (s->mode == EP_SEND_BUFFERED) {
            /* The user's buffer is free as soon as the call returns. */
            char *copy = realloc(h, sizeof *h + (size_t)lay->bytes);
            if (!copy) {
                st = EP_ERR_NO_MEM;
            } else {
                h = (ep_wire_hdr_t *)copy;
                s->tmp = h;
                st = ep_dt_pack(s->buf, s->count, s->type, lay, h + 1);
            }
        }
    }
    if (st)
        return st; /* nothing went out; the caller frees s->tmp with s */
    /* Header first: the receiver matches on it, the payload follows. */
    rc = PMPI_Isend(h, (int)hbytes, MPI_BYTE, dst_world, EP_HDR_TAG, tcomm, &s->net[s->nnet++]);
    if (rc != MPI_SUCCESS) {
        s->nnet = 0;
        return EP_ERR_TRANSPORT;
    }
    if (!eager) {
        if (s->mode == EP_SEND_BUFFERED)
            rc = ep_pmpi_isend_c(h + 1, lay->bytes, MPI_BYTE, dst_world, h->dtag, tcomm, &s->net[s->nnet]);
        else if (s->mode == EP_SEND_SYNC)
            rc = PMPI_Issend(s->buf, s->count, s->type, dst_world, h->dtag, tcomm, &s->net[s->nnet]);
        else
            rc = PMPI_Isend(s->buf, s->count, s->type, dst_world, h->dtag, tcomm, &s->net[s->nnet]);
        if (rc != MPI_SUCCESS) {
            payload_failed(s, dst_world, h->dtag, rc);
            return EP_OK;
        }
        s->nnet++;
    }
    ep_net_sent(s);
    return EP_OK;
}

/* A buffered send is complete once its data is copied: the PMPI part of s
 * (net[] and tmp) moves to an internal request that the progress engine
 * finishes, giving the attached-buffer space back.  That request holds
 * its endpoint as a request with a handle does: the program may free the
 * communicator (or finalize, which frees MPI_COMM_WORLD's endpoints)
 * while the data still travel, and testing it reads the endpoint's
 * worker.  Returns 0, changing nothing, when no request is left for that. */
static int hand_off(ep_request_t *s)
{
    ep_request_t *inner = ep_request_new(EP_REQ_SEND, s->ep, 0);
    if (!inner)
        return 0;
    ep_request_hold_ep(inner);
    inner->nnet = s->nnet;
    memcpy(inner->net, s->net, sizeof s->net);
    inner->ucx_req = s->ucx_req;
    inner->tmp = s->tmp;
    inner->bsend_bytes = s->bsend_bytes;
    inner->direct = s->direct;
    atomic_store_explicit(&inner->state, EP_RS_NET, memory_order_relaxed);
    s->nnet = 0;
    s->ucx_req = NULL;
    s->tmp = NULL;
    s->bsend_bytes = 0;
    ep_progress_detach(inner);
    ep_request_set_done(s);
    return 1;
}

void ep_net_sent(ep_request_t *s)
{
    ep_mpi_status_set(&s->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    if (s->mode == EP_SEND_BUFFERED && hand_off(s))
        return;
    atomic_store_explicit(&s->state, EP_RS_NET, memory_order_release);
}

void ep_net_recv_rndv(ep_request_t *r, const ep_msg_t *m)
{
    int64_t bytes = m->bytes;
    int err = MPI_SUCCESS;
    int rc;

    /* The sender's payload waits for this receive: without it, both sides
     * would wait forever. */
    r->nnet = 0;
    if (bytes > r->lay.bytes) {
        /* Take the whole payload aside, keep what fits (see finish_net). */
        err = MPI_ERR_TRUNCATE;
        if (!(r->tmp = malloc((size_t)bytes)))
            ep_fatal(MPI_ERR_NO_MEM, "out of memory receiving a truncated %lld-byte message from process %d",
                     (long long)bytes, m->src_world);
        rc = ep_pmpi_irecv_c(r->tmp, bytes, MPI_BYTE, m->src_world, m->dtag, tcomm, &r->net[r->nnet++]);
        bytes = r->lay.bytes;
    } else {
        rc = PMPI_Irecv(r->buf, r->count, r->type, m->src_world, m->dtag, tcomm, &r->net[r->nnet++]);
    }
    if (rc != MPI_SUCCESS)
        ep_fatal(MPI_ERR_INTERN,
                 "process %d could not post the receive of a %lld-byte message's data from "
                 "process %d (code %d)",
                 ep_proc_world_rank(), (long long)m->bytes, m->src_world, rc);
    ep_mpi_status_set(&r->status, m->link.source, m->link.tag, err, bytes, 0);
    atomic_store_explicit(&r->state, EP_RS_NET, memory_order_release);
}

/* ---- receiving headers -------------------------------------------------- */

/* A header that does not hold together (a corrupt or hostile message on
 * epmpi's own communicator) is never used to index anything: fatal. */
static void corrupt_header(int src_world, const ep_wire_hdr_t *h, const char *what)
{
    ep_fatal(MPI_ERR_INTERN,
             "process %d received a corrupt message header from process %d (%s: context "
             "%llu, source %d, destination %d, tag %d, flags 0x%x, %lld bytes)",
             ep_proc_world_rank(), src_world, what, (unsigned long long)h->ctx, h->src, h->dst, h->tag,
             (unsigned)h->flags, (long long)h->bytes);
}

/* What can be checked before the communicator is known: the header
 * arrived whole (received: bytes in the ring slot), with an eager payload
 * of the size it names. */
static void check_header(int src_world, const ep_wire_hdr_t *h, MPI_Count received)
{
    if (received < (MPI_Count)sizeof *h)
        corrupt_header(src_world, h, "shorter than a header");
    if (h->flags & ~EP_WIRE_RNDV)
        corrupt_header(src_world, h, "unknown flags");
    if (h->bytes < 0 || h->tag < 0 || h->src < 0 || h->dst < 0 || h->dtag < 0 || h->dtag > EP_DTAG_MASK)
        corrupt_header(src_world, h, "a negative field");
    if (received != (MPI_Count)sizeof *h + ((h->flags & EP_WIRE_RNDV) ? 0 : h->bytes))
        corrupt_header(src_world, h, "its size does not match its payload");
}

/* Returns 1 when the header completed a posted receive. */
static int deliver_header(int src_world, const ep_wire_hdr_t *h, const void *payload)
{
    EP_ASSERT(PROGRESS_HELD());
    ep_comm_t *c = ep_ctx_lookup(h->ctx);
    if (!c) {
        size_t pl = (h->flags & EP_WIRE_RNDV) ? 0 : (size_t)h->bytes;
        ep_early_t *e = malloc(sizeof *e + pl);
        if (!e) /* dropping it would leave its receiver waiting forever */
            ep_fatal(MPI_ERR_NO_MEM,
                     "out of memory keeping a %lld-byte message from process %d that "
                     "arrived before its communicator",
                     (long long)h->bytes, src_world);
        e->next = NULL;
        e->src_world = src_world;
        e->hdr = *h;
        memcpy(e->payload, payload, pl);
        *early_tailp = e;
        early_tailp = &e->next;
        return 0;
    }
    if (h->dst >= c->nlocal || !ep_chan_source_valid(h->src, c->size))
        corrupt_header(src_world, h, "no such rank in its communicator");
    ep_msg_t m = {.bytes = h->bytes};
    m.link.source = h->src;
    m.link.tag = h->tag;
    if (h->flags & EP_WIRE_RNDV) {
        m.kind = EP_MSG_NET_RNDV;
        m.src_world = src_world;
        m.dtag = h->dtag;
    } else {
        m.kind = EP_MSG_EAGER;
        m.data = (void *)payload;
    }
    return ep_p2p_arrive(&c->local[h->dst], &m);
}

/* Delivers the headers that have arrived, up to the first that completes a
 * posted receive: a thread may be waiting for that one, and returns sooner
 * (the rest wait for the next poll).  For the same reason a slot is
 * re-posted by the next poll, not at once; that poll usually runs while
 * its thread waits anyway. */
static void poll_ring(void)
{
    EP_ASSERT(PROGRESS_HELD());
    repost_ring();
    for (int n = 0; n < EP_RING; n++) {
        ep_ring_slot_t *s = &ring[ring_head];
        int flag = 0;
        MPI_Status st;
        MPI_Count received = 0;
        int rc = PMPI_Test(&s->req, &flag, &st);
        if (rc == MPI_SUCCESS && !flag)
            return;
        if (rc != MPI_SUCCESS || ep_pmpi_get_count_c(&st, MPI_BYTE, &received) != MPI_SUCCESS)
            ep_fatal(MPI_ERR_INTERN,
                     "process %d could not receive a message header (MPI_Test failed with "
                     "code %d)",
                     ep_proc_world_rank(), rc);
        const ep_wire_hdr_t *h = (const ep_wire_hdr_t *)s->buf;
        check_header(st.MPI_SOURCE, h, received);
        int completed = deliver_header(st.MPI_SOURCE, h, h + 1);
        ring_head = (ring_head + 1) % EP_RING;
        ring_unposted++;
        if (completed)
            return;
    }
}

void ep_net_poke_mpich(void)
{
    int flag;
    if (tcomm != MPI_COMM_NULL)
        PMPI_Iprobe(MPI_ANY_SOURCE, EP_POKE_TAG, tcomm, &flag, MPI_STATUS_IGNORE);
}

void ep_net_progress(void)
{
    if (!atomic_load_explicit(&ep_net_ring_on, memory_order_relaxed) || !progress_try())
        return;
    if (atomic_load_explicit(&ep_net_ring_on, memory_order_relaxed))
        poll_ring();
    progress_give();
}

void ep_net_comm_ready(ep_comm_t *c)
{
    progress_take();
    ep_ctx_register(c);
    for (ep_early_t **pp = &early_head; *pp;) {
        ep_early_t *e = *pp;
        if (e->hdr.ctx == c->ctx) {
            *pp = e->next;
            if (early_tailp == &e->next)
                early_tailp = pp;
            deliver_header(e->src_world, &e->hdr, e->payload);
            free(e);
        } else {
            pp = &e->next;
        }
    }
    progress_give();
}

void ep_net_comm_gone(ep_comm_t *c)
{
    progress_take();
    ep_ctx_unregister(c);
    progress_give();
}

void ep_ctx_table_lock(void) { progress_take(); }
void ep_ctx_table_unlock(void) { progress_give(); }
