/* Requests and messages.
 *
 * ep_request_t is the object behind an endpoint request handle; ep_msg_t is
 * a message that arrived before its receive (an unexpected-queue entry) or
 * was taken by MPI_Mprobe (then it has a message handle).
 *
 * Request state machine (state is atomic; the thread that moves a request to
 * DONE stores status first, then state with release order):
 *
 *   INACTIVE --start--> PENDING --matched, data copied--> DONE
 *                          |                               ^
 *                          +--data in a transport----------+ (NET: completed
 *                             by whoever tests the request)
 *
 * PENDING requests are completed by another thread (whoever drains the
 * lanes into the receiving endpoint, a sender that copies into a posted
 * receive, a receiver that copies from a waiting sender, the progress
 * engine).  NET requests are completed only by the thread testing
 * them (the owner, or the progress engine for a request freed while
 * pending), since PMPI requests must not be tested by two threads at once;
 * their data is in a transport (transport/transport.h): PMPI requests in
 * net[], or a UCX request.
 */
#ifndef EP_REQUEST_H
#define EP_REQUEST_H

#include "core/bsend.h"
#include "base/clear.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/match.h"
#include "core/registry.h"
#include "base/thread.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* EP_REQ_PAIR: a send and a receive that complete as one (MPI_Isendrecv,
 * MPI_Isendrecv_replace), two parts of one request (ep_request_set_parts). */
/* EP_REQ_PART_SEND, _RECV: a partitioned send or receive (partitioned.h),
 * the last kinds (ep_request_partitioned). */
typedef enum { EP_REQ_SEND, EP_REQ_RECV, EP_REQ_COLL, EP_REQ_PAIR, EP_REQ_PART_SEND, EP_REQ_PART_RECV } ep_req_kind_t;
typedef enum { EP_SEND_STANDARD, EP_SEND_SYNC, EP_SEND_READY, EP_SEND_BUFFERED } ep_send_mode_t;
typedef enum { EP_RS_INACTIVE, EP_RS_PENDING, EP_RS_NET, EP_RS_DONE } ep_req_state_t;

#define EP_REQ_MAX_NET 2
#define EP_REQ_WIRE_INLINE 128

/* A large message between two threads of this process is one copy, cut in
 * chunks that two threads take in turn: the one that matched the message,
 * and the owner of the other request if it is waiting (p2p.c).  Two cores
 * copy at once.  The job lives in the waiting side's request, which stays
 * alive until that side sees it complete. */
#define EP_COPY_CHUNK_MIN (8 * 1024)
#define EP_COPY_CHUNKS 16 /* a larger copy is cut in this many chunks */
/* From this size on: below, the copy is over before the other core joins. */
#define EP_COPY_SHARED_MIN (4 * EP_COPY_CHUNK_MIN)

typedef struct ep_copy_job {
    const char *src;
    char *dst;
    size_t bytes;
    size_t chunk;
    unsigned nchunks;
    _Atomic unsigned next; /* the next chunk to take */
    _Atomic unsigned done; /* chunks copied */
} ep_copy_job_t;

typedef struct ep_request {
    /* The fields a sender of another thread reads and writes when it
     * completes a posted receive come first, in two cache lines. */
    _Alignas(64) ep_object_t obj; /* registry header: EP_OBJ_REQUEST */
    _Atomic int state;            /* ep_req_state_t */
    ep_match_item_t link;         /* posted-queue entry; source/tag pattern of a receive */
    void *buf;                    /* user buffer (const for sends) */
    int count;
    MPI_Datatype type;
    MPI_Status status;  /* valid in DONE */
    ep_dt_layout_t lay; /* of buf/count/type, computed once when started
                           (lay.bytes: the receive capacity) */
    int64_t sent_bytes; /* what the sender offered, for truncation messages */
    size_t bsend_bytes; /* attached-buffer space to give back */
    MPI_Request handle; /* MPI_REQUEST_NULL for internal requests */
    ep_req_kind_t kind;
    ep_send_mode_t mode;   /* sends only */
    int persistent;        /* made by *_init: survives completion */
    int direct;            /* on a direct communicator (direct.h): net[0] is all of it,
                              and a receive's status comes from MPICH */
    ep_endpoint_t *ep;     /* the endpoint it runs on */
    ep_dt_rec_t *type_rec; /* a derived type is held until the request goes (datatype.h) */
    int holds_ep;          /* a request with a handle holds ep, and so its communicator,
                              until it goes, even past MPI_Comm_free and
                              MPI_Request_free (comm.h) */
    int peer;              /* destination rank (sends) */
    int tag;               /* tag (sends) */
    ep_chan_t chan;        /* the channel a send goes on (match.h); a receive's source_pat says its own */
    int source_pat;        /* source pattern (receives; also in link) */
    int tag_pat;           /* tag pattern (receives; also in link) */
    int nnet;              /* PMPI requests in net[] */
    MPI_Request net[EP_REQ_MAX_NET];
    void *tmp;                        /* owned buffer, freed on completion */
    int64_t tmp_bytes;                /* size of tmp for truncated receives */
    struct ep_request *next_detached; /* in the progress engine's detached list */
    /* non-blocking collectives (coll_drive.c) */
    struct ep_coll_inst *coll_inst; /* the running instance, NULL once done */
    ep_status_t failure;            /* why it failed, for the error message (collectives, and sends
                                       and receives whose transport failed), or EP_OK */
    unsigned pool_slot;             /* the registry slot its handle had, once retired (0: none) */
    _Atomic int copy_open;          /* job holds a copy its owner may help with (ep_copy_job_t) */
    /* A request made of others (ep_request_set_parts): an MPI_Isendrecv's receive and send (EP_REQ_PAIR;
     * tmp may hold the send's data, a copy), or the calls of a sequence (EP_REQ_COLL: the pieces of a
     * reduction beyond INT_MAX, a persistent collective's start; coll_seq.c).  PENDING until every part is over;
     * ep_request_destroy destroys them with it. */
    int nparts;
    struct ep_request **part;
    struct ep_request *part_room[2];    /* part when there are two at most */
    void (*then)(struct ep_request *r); /* optional: runs once every part is over without error, before
                                           r completes; may set r->failure */
    /* What a layer above hangs on the request, freed with it by that
     * layer's own function: a collective's calls (ep_coll_seq_t,
     * coll_seq.c), a partitioned operation (partitioned.c). */
    void *ext;
    void (*ext_free)(void *ext);
    void *ucx_req;  /* NET over UCX: the UCX request on ep's worker (ucx.h) */
    int ucx_posted; /* a receive posted in UCX itself (ucx.c): ucx_req is its UCX request
                       until UCX completes it */
    /* Last, and not cleared by ep_request_init: room for the wire header
     * and payload of a small message to another process (net.c), which
     * saves an allocation per message; a request that takes part in a
     * copy between threads never sends to another process. */
    union {
        _Alignas(16) char wire_inline[EP_REQ_WIRE_INLINE];
        ep_copy_job_t job;
    };
} ep_request_t;

typedef enum { EP_MSG_EAGER, EP_MSG_LOCAL_RNDV, EP_MSG_NET_RNDV, EP_MSG_DIRECT, EP_MSG_UCX } ep_msg_kind_t;

typedef struct ep_msg {
    ep_object_t obj;      /* registry header: EP_OBJ_MESSAGE (once mprobed) */
    ep_match_item_t link; /* unexpected-queue entry: source and tag */
    ep_msg_kind_t kind;
    int64_t bytes;          /* payload size */
    union {                 /* where the payload is, by kind (the transport's part) */
        void *data;         /* EAGER: packed payload, owned */
        ep_request_t *sreq; /* LOCAL_RNDV: the waiting sender's request */
        struct {
            int src_world; /* NET_RNDV: world rank of the sending process */
            int dtag;      /* NET_RNDV: tag of the data message */
        };
        MPI_Message pmsg; /* DIRECT: MPICH's handle of the message (direct.h) */
        struct {
            void *umsg;                    /* UCX: UCX's handle of the message, its data still in UCX (ucx.h) */
            struct ep_ucx_worker *uworker; /* UCX: the worker it arrived at */
            uint64_t utag;                 /* UCX, from a node inbox: the UCX tag its data follow with (umsg NULL) */
        };
    };
    MPI_Message handle; /* mprobed: its handle */
    ep_endpoint_t *ep;  /* mprobed: the endpoint that probed it */
} ep_msg_t;

#define ep_container_of(p, type, member) ((type *)((char *)(p) - (offsetof(type, member))))

/* Prepares a request on the caller's storage (blocking calls keep theirs on
 * the stack). */
static inline void ep_request_init(ep_request_t *r, ep_req_kind_t kind, ep_endpoint_t *ep)
{
    ep_clear(r, offsetof(ep_request_t, wire_inline));
    r->obj.kind = EP_OBJ_REQUEST;
    r->kind = kind;
    r->ep = ep;
    r->handle = MPI_REQUEST_NULL;
    atomic_init(&r->state, EP_RS_INACTIVE);
}

/* ---- per-thread pool of request objects (request.c) ----------------------
 *
 * Message-rate loops make and free a request per message.  Going through
 * malloc and the registry mutex each time costs more than the message
 * itself when two threads do it at once, so each thread keeps the requests
 * it frees, and their retired registry slots (registry.h), and reuses them
 * without any lock.  Objects and slots are recycled in opposite orders:
 * an object comes back most recently freed first, its lines still in this
 * core's cache (handing them out oldest first cycled a window's requests
 * through a few hundred objects, out of the first-level cache); a slot
 * comes back oldest first, and only while more than EP_REQ_POOL_KEEP
 * wait, so a slot is reused at most once every EP_REQ_POOL_KEEP requests
 * of that thread and a stale handle is still recognised for that many
 * generations of the slot.  Pools are linked in a list so that
 * MPI_Finalize (and thread exit) can empty them.  The pool is here, not
 * in request.c, so that making a request from it is inline. */
#define EP_REQ_POOL 256
#define EP_REQ_POOL_KEEP 16

typedef struct ep_req_pool {
    ep_request_t *obj[EP_REQ_POOL]; /* stack of free objects */
    unsigned nobj;
    unsigned slot[EP_REQ_POOL]; /* ring of retired registry slots, oldest at shead */
    unsigned shead, nslot;
    ep_endpoint_t *credit_ep; /* holds of this endpoint taken in advance (ep_request_hold_ep) */
    int credit;               /* how many */
    struct ep_req_pool *prev, *next;
} ep_req_pool_t;

/* The calling thread's pool, NULL before its first request.  It lives on
 * the heap: thread-local storage holds only a pointer, small enough for
 * the initial-exec model (thread.h) even when the library is dlopen'ed. */
extern __thread ep_req_pool_t *ep_req_pool EP_TLS;

/* The oldest retired slot of p (which has one). */
static inline unsigned ep_req_pool_take_slot(ep_req_pool_t *p)
{
    unsigned idx = p->slot[p->shead];
    p->shead = (p->shead + 1) % EP_REQ_POOL;
    p->nslot--;
    return idx;
}

/* A request with a handle holds its endpoint (comm.h).  A thread takes
 * the holds of the endpoint it makes requests on EP_HOLD_BATCH at a time
 * (its pool's credit) and a request it destroys gives its hold back to
 * the credit: a message's request costs no atomic operation on the
 * endpoint (two, each draining the store buffer, were 10 to 15% of the
 * rate between two threads).  The credit goes back to the endpoint when
 * the thread turns to another one, frees the endpoint's handle
 * (ep_endpoint_free), ends, or at MPI_Finalize. */
#define EP_HOLD_BATCH 64
void ep_request_hold_slow(ep_req_pool_t *p, ep_endpoint_t *ep);
static inline void ep_request_hold_ep(ep_request_t *r)
{
    ep_req_pool_t *p = ep_req_pool;
    if (!r->ep)
        return;
    if (p && p->credit_ep == r->ep && p->credit > 0)
        p->credit--;
    else
        ep_request_hold_slow(p, r->ep);
    r->holds_ep = 1;
}
/* The calling thread's credit of ep's holds given back (ep_endpoint_free). */
void ep_request_credit_drop(ep_endpoint_t *ep);
/* Every thread's credit given back (MPI_Finalize, before the endpoints go). */
void ep_request_credits_drop_all(void);

/* ep_request_new's ways that call out (request.c). */
ep_request_t *ep_request_new_slow(ep_req_kind_t kind, ep_endpoint_t *ep, int with_handle);

/* A request on ep, from the calling thread's pool, with a handle if
 * asked; NULL when out of memory or handles. */
static inline ep_request_t *ep_request_new(ep_req_kind_t kind, ep_endpoint_t *ep, int with_handle)
{
    ep_req_pool_t *p = ep_req_pool;
    if (!p || !p->nobj || (with_handle && p->nslot <= EP_REQ_POOL_KEEP))
        return ep_request_new_slow(kind, ep, with_handle);
    ep_request_t *r = p->obj[--p->nobj];
    ep_request_init(r, kind, ep);
    if (with_handle) {
        r->handle = EP_HANDLE(MPI_Request, ep_registry_reissue(ep_req_pool_take_slot(p), EP_HTYPE_REQUEST, &r->obj));
        ep_request_hold_ep(r);
    }
    return r;
}

/* A request on ep complete already, with status st (non-blocking calls
 * that finish before they return: the file calls), or NULL. */
ep_request_t *ep_request_completed(ep_endpoint_t *ep, const MPI_Status *st);
/* Gives r room for n parts (r->part[0 .. n-1], NULL until set); EP_ERR_NO_MEM. */
ep_status_t ep_request_set_parts(ep_request_t *r, int n);
/* Releases the object (and its handle, if any). */
void ep_request_destroy(ep_request_t *r);
/* Invalidates r's handle now (MPI_Request_free while the operation goes on). */
void ep_request_drop_handle(ep_request_t *r);
/* Frees the objects every thread keeps for reuse (MPI_Finalize). */
void ep_request_pools_free(void);
/* A request that outlives its call keeps its datatype alive (a predefined
 * one needs nothing). */
void ep_request_hold_derived_type(ep_request_t *r);
static inline void ep_request_hold_type(ep_request_t *r)
{
    if (ep_datatype_builtin_size(r->type) < 0)
        ep_request_hold_derived_type(r);
}
/* The request of every send that was over before its call returned
 * (ep_send_now): already complete, with the empty status of a send.  All
 * such sends share this one object and its one handle, which names no
 * registry slot (index 0 is never used there), so making and completing
 * them costs no allocation and no registry work.  MPICH does the same with
 * a built-in completed request.  It is never destroyed; completing it only
 * sets the user's handle to MPI_REQUEST_NULL. */
#define EP_REQUEST_SENT \
    EP_HANDLE(MPI_Request, (int)((EP_HTYPE_REQUEST << EP_HANDLE_TYPE_SHIFT) | (1u << EP_HANDLE_GEN_SHIFT)))
extern ep_request_t ep_request_sent;

static inline ep_request_t *ep_request_get(MPI_Request h)
{
    if (h == EP_REQUEST_SENT)
        return &ep_request_sent;
    return (ep_request_t *)ep_registry_get(EP_HID(h), EP_OBJ_REQUEST);
}

static inline int ep_request_partitioned(const ep_request_t *r) { return r->kind >= EP_REQ_PART_SEND; }

/* Marks r complete with its status already stored (release order). */
static inline void ep_request_set_done(ep_request_t *r)
{
    atomic_store_explicit(&r->state, EP_RS_DONE, memory_order_release);
}
static inline int ep_request_state(ep_request_t *r) { return atomic_load_explicit(&r->state, memory_order_acquire); }

/* A send complete before anyone waits for it (its data was copied or has
 * left): a buffered send's space is free again, and s gets a send's empty
 * status.  The last touch of s. */
static inline void ep_request_send_over(ep_request_t *s)
{
    ep_bsend_release(s->bsend_bytes);
    s->bsend_bytes = 0;
    ep_mpi_status_set(&s->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    ep_request_set_done(s);
}
/* r is made by an *_init call: it survives its completion. */
static inline void ep_request_set_persistent(ep_request_t *r, int persistent) { r->persistent = persistent; }
/* A persistent request at rest: not started, completed, or failed to start. */
static inline void ep_request_set_inactive(ep_request_t *r) { atomic_store(&r->state, EP_RS_INACTIVE); }
static inline int ep_request_inactive(ep_request_t *r) { return ep_request_state(r) == EP_RS_INACTIVE; }

/* What a send request sends, and what a receive request takes (set
 * before ep_send_start, ep_recv_start and the like, p2p.h). */
static inline void ep_request_describe_send(ep_request_t *r, const void *buf, int count, MPI_Datatype type, int dest,
                                            int tag, ep_send_mode_t mode)
{
    r->buf = (void *)buf;
    r->count = count;
    r->type = type;
    r->peer = dest;
    r->tag = tag;
    r->mode = mode;
}
static inline void ep_request_describe_recv(ep_request_t *r, void *buf, int count, MPI_Datatype type, int source,
                                            int tag)
{
    r->buf = buf;
    r->count = count;
    r->type = type;
    r->source_pat = source;
    r->tag_pat = tag;
}

/* r's transfer (PMPI or UCX part) is over, its failure if any recorded:
 * a receive's data that landed in tmp goes where it belongs (what fits),
 * tmp and attached-buffer space go, and r is DONE. */
void ep_request_finish_transfer(ep_request_t *r);

/* Progress of one request, defined at the top of the engine
 * (src/progress.c), which knows every kind of request and every
 * transport. */
/* Tests r, driving its transport part if any; 1 when complete (INACTIVE
 * counts). */
int ep_request_poll(ep_request_t *r);
/* Blocks until r completes, driving progress. */
void ep_request_wait(ep_request_t *r);
/* MPI_Finalize's look at a freed request r, which cancels its receive (a
 * pair's too) if nothing matched it: 1 when r is over, 0 while a part of
 * it is inside MPICH or UCX, -1 when it waits for a partner that will not
 * come (it is then dropped). */
int ep_request_abandon(ep_request_t *r);

ep_msg_t *ep_msg_new(void);
void ep_msg_destroy(ep_msg_t *m);
static inline ep_msg_t *ep_msg_get(MPI_Message h) { return (ep_msg_t *)ep_registry_get(EP_HID(h), EP_OBJ_MESSAGE); }

#endif
