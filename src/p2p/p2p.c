#include "p2p/p2p.h"

#include "core/bsend.h"
#include "base/settings.h"
#include "core/datatype.h"
#include "diag/diag.h"
#include "p2p/direct.h"
#include "abi/handle.h"
#include "base/invariant.h"
#include "p2p/lane.h"
#include "transport/net.h"
#include "transport/ucx.h"
#include "base/wait.h"

#include <stdlib.h>
#include <string.h>

/* ---- completion -------------------------------------------------------- */

static void finish_recv(ep_request_t *r, int source, int tag, int64_t bytes)
{
    int err = MPI_SUCCESS;
    r->sent_bytes = bytes;
    if (bytes > r->lay.bytes) {
        err = MPI_ERR_TRUNCATE;
        bytes = r->lay.bytes;
    }
    ep_mpi_status_set(&r->status, source, tag, err, bytes, 0);
    ep_request_set_done(r);
}

/* complete_eager's way through ep_dt_unpack, apart: the call's register
 * saves would cost every small message. */
static __attribute__((noinline)) void complete_eager_unpack(ep_request_t *r, int source, int tag, const void *data,
                                                            int64_t bytes)
{
    if (bytes)
        ep_dt_unpack(data, bytes, r->buf, r->count, r->type, &r->lay);
    finish_recv(r, source, tag, bytes);
}

/* Completes receive r with a payload of `bytes` at data, from (source,
 * tag).  A small one into a contiguous buffer (every lane message, most
 * eager ones) is copied inline. */
static inline void complete_eager(ep_request_t *r, int source, int tag, const void *data, int64_t bytes)
{
    if (!r->lay.contig || bytes > EP_LANE_INLINE || bytes > r->lay.bytes) {
        complete_eager_unpack(r, source, tag, data, bytes);
        return;
    }
    ep_copy_small((char *)r->buf + r->lay.offset, data, (size_t)bytes);
    finish_recv(r, source, tag, bytes);
}

/* ---- copies shared between two threads ---------------------------------- */

static void copy_chunks(ep_copy_job_t *j)
{
    unsigned c;
    while ((c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed)) < j->nchunks) {
        size_t off = (size_t)c * j->chunk, n = j->bytes - off;
        memcpy(j->dst + off, j->src + off, n < j->chunk ? n : j->chunk);
        atomic_fetch_add_explicit(&j->done, 1, memory_order_release);
    }
}

void ep_copy_help(ep_request_t *r)
{
    if (atomic_load_explicit(&r->copy_open, memory_order_acquire))
        copy_chunks(&r->job);
}

/* Copies n bytes from src to dst, with the help of the owner of `waiting`
 * (the other request of the message) if it polls meanwhile.  Returns once
 * every chunk is copied; the caller completes `waiting` next, which is its
 * last touch of the job. */
static void copy_shared(ep_request_t *waiting, const void *src, void *dst, size_t n)
{
    ep_copy_job_t *j = &waiting->job;
    j->src = src;
    j->dst = dst;
    j->bytes = n;
    /* Chunks of 4 KiB pages, at least EP_COPY_CHUNK_MIN: few enough that
     * taking one costs nothing next to copying it. */
    j->chunk = (n / EP_COPY_CHUNKS + 4095) & ~(size_t)4095;
    if (j->chunk < EP_COPY_CHUNK_MIN)
        j->chunk = EP_COPY_CHUNK_MIN;
    j->nchunks = (unsigned)((n + j->chunk - 1) / j->chunk);
    atomic_store_explicit(&j->next, 0, memory_order_relaxed);
    atomic_store_explicit(&j->done, 0, memory_order_relaxed);
    atomic_store_explicit(&waiting->copy_open, 1, memory_order_release);
    copy_chunks(j);
    /* A helper is finishing its last chunk (or lost its core). */
    EP_BACKOFF_UNTIL(atomic_load_explicit(&j->done, memory_order_acquire) >= j->nchunks);
    atomic_store_explicit(&waiting->copy_open, 0, memory_order_relaxed);
}

/* The copy of a local rendezvous message from sender s into receive r.
 * `waiting` is the request of the two whose owner is not the caller. */
static void copy_rndv(ep_request_t *s, ep_request_t *r, ep_request_t *waiting)
{
    int64_t n = s->lay.bytes < r->lay.bytes ? s->lay.bytes : r->lay.bytes;
    if (s->lay.contig && r->lay.contig && n >= EP_COPY_SHARED_MIN)
        copy_shared(waiting, (const char *)s->buf + s->lay.offset, (char *)r->buf + r->lay.offset, (size_t)n);
    else
        ep_dt_copy_laid(s->buf, s->count, s->type, &s->lay, r->buf, r->count, r->type, &r->lay);
}

/* Completes receive r with message m (both already out of their queues).
 * by_sender: the caller is the sending side (r's owner may be waiting);
 * else the receiving side (the sender may be waiting). */
static void match_complete(ep_request_t *r, const ep_msg_t *m, int by_sender)
{
    switch (m->kind) {
    case EP_MSG_EAGER:
        complete_eager(r, m->link.source, m->link.tag, m->data, m->bytes);
        break;
    case EP_MSG_LOCAL_RNDV: {
        ep_request_t *s = m->sreq;
        copy_rndv(s, r, by_sender ? r : s);
        finish_recv(r, m->link.source, m->link.tag, m->bytes);
        ep_mpi_status_set(&s->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        ep_request_set_done(s); /* last touch of s: its owner may free it now */
        break;
    }
    case EP_MSG_NET_RNDV:
        r->sent_bytes = m->bytes;
        ep_net_recv_rndv(r, m);
        break;
    case EP_MSG_UCX: /* consumes m's UCX handle, so that dropping m later drops nothing */
        ep_ucx_recv(r, (ep_msg_t *)m);
        break;
    case EP_MSG_DIRECT: /* received by ep_direct_mrecv, never queued */
        break;
    }
}

void ep_msg_destroy(ep_msg_t *m)
{
    if (m->kind == EP_MSG_UCX)
        ep_ucx_msg_discard(m); /* nothing if it was received */
    if (m->handle != MPI_MESSAGE_NULL)
        ep_registry_remove(EP_HID(m->handle));
    if (m->kind == EP_MSG_EAGER)
        free(m->data);
    free(m);
}

ep_msg_t *ep_msg_new(void)
{
    ep_msg_t *m = calloc(1, sizeof *m);
    if (m) {
        m->obj.kind = EP_OBJ_MESSAGE;
        m->handle = MPI_MESSAGE_NULL;
    }
    return m;
}

/* Turns a message that found no receive into a queue entry.  Called with
 * dst->lock held.  Sends that can complete now (eager, buffered) copy their
 * data and complete; the rest stay referenced. */
static ep_msg_t *materialize(const ep_msg_t *m)
{
    ep_msg_t *q = ep_msg_new();
    if (!q)
        return NULL;
    *q = *m;
    q->handle = MPI_MESSAGE_NULL;
    q->obj.kind = EP_OBJ_MESSAGE;
    if (m->kind == EP_MSG_EAGER) {
        q->data = NULL; /* the caller's: copied here */
        if (m->bytes) {
            if (!(q->data = malloc((size_t)m->bytes))) {
                free(q);
                return NULL;
            }
            memcpy(q->data, m->data, (size_t)m->bytes);
        }
    } else if (m->kind == EP_MSG_LOCAL_RNDV) {
        ep_request_t *s = m->sreq;
        if (s->mode == EP_SEND_BUFFERED || (s->mode != EP_SEND_SYNC && (size_t)m->bytes <= ep_config.eager_limit)) {
            q->kind = EP_MSG_EAGER;
            q->data = NULL;
            if (m->bytes) {
                if (!(q->data = malloc((size_t)m->bytes))) {
                    free(q);
                    return NULL;
                }
                ep_dt_pack(s->buf, s->count, s->type, &s->lay, q->data);
            }
            ep_request_send_over(s);
        }
    }
    return q;
}

/* ---- delivery ---------------------------------------------------------- */

static void complete_matched(ep_request_t *r, const ep_msg_t *m)
{
    /* Read before match_complete: completing the sender lets it go. */
    size_t held = m->kind == EP_MSG_LOCAL_RNDV ? m->sreq->bsend_bytes : 0;
    match_complete(r, m, 1); /* deliver: the sender's thread, or progress for another process's message */
    ep_bsend_release(held);
}

/* A message for dst, with dst->lock held: takes the oldest matching posted
 * receive and returns it (the caller completes it with m), or queues m as
 * unexpected and returns NULL. */
static ep_request_t *take_locked(ep_endpoint_t *dst, const ep_msg_t *m)
{
    EP_ASSERT(ep_lock_held(&dst->lock));
    if (dst->stats)
        ep_stats_msg(dst, 1,
                     dst->comm->ranks[ep_peer_index(dst, ep_chan_rank(m->link.source))].proc != dst->comm->myproc,
                     m->bytes);
    ep_match_item_t *it = ep_mq_take_posted(&dst->posted, m->link.source, m->link.tag);
    if (it)
        return ep_container_of(it, ep_request_t, link);
    ep_msg_t *q = materialize(m);
    if (!q) /* a message in hand and nowhere to keep it: nothing sane is left */
        ep_fatal(MPI_ERR_NO_MEM, "out of memory queueing a %lld-byte message (tag %d) for rank %d", (long long)m->bytes,
                 m->link.tag, dst->rank);
    ep_mq_append(&dst->unexpected, &q->link);
    return NULL;
}

/* arrive_eager_locked's general path (take_locked, then match_complete),
 * apart for the register saves of its calls. */
static __attribute__((noinline)) void arrive_eager_any(ep_endpoint_t *dst, int source, int tag, const void *data,
                                                       int64_t bytes)
{
    ep_msg_t m = {.kind = EP_MSG_EAGER, .bytes = bytes, .data = (void *)data, .handle = MPI_MESSAGE_NULL};
    m.link.source = source;
    m.link.tag = tag;
    ep_request_t *r = take_locked(dst, &m);
    if (r)
        match_complete(r, &m, 0);
}

/* A message whose payload is at hand (a lane slot, a node inbox record),
 * dst->lock held.  Usually the oldest posted receive is the one it
 * matches: it completes that receive straight from the payload, without
 * a queue search or a message record.  Anything else takes the general
 * path. */
static inline void arrive_eager_locked(ep_endpoint_t *dst, int source, int tag, const void *data, int64_t bytes)
{
    EP_ASSERT(ep_lock_held(&dst->lock));
    ep_match_item_t *it = dst->posted.head;
    if (it && !dst->stats && ep_match_fits(it->source, it->tag, source, tag)) {
        ep_mq_pop(&dst->posted);
        complete_eager(ep_container_of(it, ep_request_t, link), source, tag, data, bytes);
        return;
    }
    arrive_eager_any(dst, source, tag, data, bytes);
}

/* Consumes every message the lanes into dst hold, oldest first in each
 * lane, completing matched receives at once (the payloads are small and
 * go with their slots).  dst->lock held. */
static void drain_locked(ep_endpoint_t *dst)
{
    EP_ASSERT(ep_lock_held(&dst->lock));
    for (ep_lane_t *l = atomic_load_explicit(&dst->lanes_in, memory_order_acquire); l; l = l->next_in) {
        ep_lane_slot_t *s;
        while ((s = ep_lane_peek(l))) {
            arrive_eager_locked(dst, l->source, s->tag, s->data, s->bytes);
            ep_lane_release(l);
        }
    }
}

static int lanes_ready(ep_endpoint_t *dst)
{
    for (ep_lane_t *l = atomic_load_explicit(&dst->lanes_in, memory_order_acquire); l; l = l->next_in)
        if (ep_lane_peek(l))
            return 1;
    return 0;
}

void ep_p2p_drain(ep_endpoint_t *dst, int block)
{
    if (!lanes_ready(dst))
        return;
    if (block)
        ep_lock(&dst->lock);
    else if (!ep_lock_try(&dst->lock))
        return; /* its holder is busy with dst; the caller polls again */
    drain_locked(dst);
    ep_unlock(&dst->lock);
}

/* Delivers m to dst; with drain, the lanes into dst are drained first.  A
 * matched receive is completed after the lock is released: that may copy
 * megabytes, and the progress engine may be waiting for the lock. */
static int deliver_msg(ep_endpoint_t *dst, const ep_msg_t *m, int drain)
{
    ep_lock(&dst->lock);
    if (drain)
        drain_locked(dst);
    ep_request_t *r = take_locked(dst, m);
    ep_unlock(&dst->lock);
    if (r)
        complete_matched(r, m);
    return r != NULL;
}

/* From another process: no lane carries that sender's messages. */
int ep_p2p_arrive(ep_endpoint_t *dst, const ep_msg_t *m) { return deliver_msg(dst, m, 0); }

void ep_p2p_arrive_eager_locked(ep_endpoint_t *dst, int source, int tag, const void *data, int64_t bytes)
{
    arrive_eager_locked(dst, source, tag, data, bytes);
}

/* ---- lanes from this thread --------------------------------------------- */

/* The lane from ep to its communicator's local endpoint lidx (dst) if it
 * has been made, whoever owns it.  It reads nothing of dst's (the
 * receiver's thread writes there all the time: each read would fetch the
 * line from the other core). */
static inline ep_lane_t *lane_of(ep_endpoint_t *ep, int lidx)
{
    ep_lane_t *_Atomic *out = atomic_load_explicit(&ep->lanes_out, memory_order_acquire);
    return out ? atomic_load_explicit(&out[lidx], memory_order_acquire) : NULL;
}

static ep_lane_t *lane_make(ep_endpoint_t *ep, int lidx)
{
    ep_comm_t *c = ep->comm;
    ep_endpoint_t *dst = &c->local[lidx];
    ep_lane_t *_Atomic *out = atomic_load_explicit(&ep->lanes_out, memory_order_acquire);
    if (!out) {
        ep_lane_t *_Atomic *fresh = calloc((size_t)c->nlocal, sizeof *fresh);
        if (!fresh)
            return NULL;
        if (atomic_compare_exchange_strong(&ep->lanes_out, &out, fresh))
            out = fresh;
        else
            free(fresh);
    }
    ep_lane_t *l = ep_lane_new(ep_local_rank(ep));
    if (!l)
        return NULL;
    /* Published under dst->lock, with which consumers walk the list. */
    ep_lock(&dst->lock);
    ep_lane_t *have = atomic_load_explicit(&out[lidx], memory_order_relaxed);
    if (!have) {
        l->next_in = atomic_load_explicit(&dst->lanes_in, memory_order_relaxed);
        atomic_store_explicit(&dst->lanes_in, l, memory_order_release);
        atomic_store_explicit(&out[lidx], l, memory_order_release);
    }
    ep_unlock(&dst->lock);
    if (!have)
        return l;
    free(l);
    return have;
}

/* The lane from ep to dst that the calling thread may fill, made on first
 * use, or NULL: another thread owns it, or memory ran out (the shared-copy
 * path serves then). */
static inline ep_lane_t *lane_to(ep_endpoint_t *ep, int lidx)
{
    ep_lane_t *l = lane_of(ep, lidx);
    if (!l && !(l = lane_make(ep, lidx)))
        return NULL;
    return l->owner == ep_lane_token() ? l : NULL;
}

/* Whether the lane from ep to dst may still hold messages: the shared-copy
 * path must then drain it first, or this message would overtake them.  Its
 * owner knows from its own counters, reading the consumer's only when they
 * leave a doubt; for any other thread the lane's counters are not safe to
 * read, so it drains. */
static int lane_pending(ep_endpoint_t *ep, int lidx)
{
    ep_lane_t *l = lane_of(ep, lidx);
    if (!l)
        return 0;
    if (l->owner != ep_lane_token())
        return 1;
    if (l->tail == l->head_seen)
        return 0;
    l->head_seen = atomic_load_explicit(&l->head, memory_order_acquire);
    return l->tail != l->head_seen;
}

/* Copies a message of lay->bytes (at most EP_LANE_INLINE) into the lane
 * from ep to dst; 0 when the calling thread cannot use that lane (another
 * thread owns it) or the lane is full.  Inlined into its callers: on the
 * way of every small message between threads, where a call's register
 * saves cost as much as filling the slot. */
static inline __attribute__((always_inline)) int lane_put(ep_endpoint_t *ep, int lidx, const void *buf, int count,
                                                          MPI_Datatype type, const ep_dt_layout_t *lay, int tag)
{
    ep_lane_t *l = lane_to(ep, lidx);
    ep_lane_slot_t *slot = l ? ep_lane_reserve(l) : NULL;
    if (!slot)
        return 0;
    slot->tag = tag;
    slot->bytes = lay->bytes;
    if (lay->contig)
        ep_copy_small(slot->data, (const char *)buf + lay->offset, (size_t)lay->bytes);
    else if (lay->bytes)
        ep_dt_pack(buf, count, type, lay, slot->data);
    ep_lane_publish(l, slot);
    return 1;
}

/* Sends s through its lane to dst if it fits in a slot; 0 when it does not,
 * or the lane cannot take it now.  Only small standard, ready or buffered
 * sends go this way, inline, and complete at once.  A larger message does
 * better on the shared-copy path: there the sender copies straight into a
 * posted receive, while through a lane the receiver would have to fetch
 * the sender's request and buffer and then hand the completion back. */
static int lane_send(ep_endpoint_t *ep, int lidx, ep_request_t *s)
{
    if (s->mode == EP_SEND_SYNC || s->lay.bytes > EP_LANE_INLINE ||
        !lane_put(ep, lidx, s->buf, s->count, s->type, &s->lay, s->tag))
        return 0;
    ep_request_send_over(s);
    return 1;
}

/* The largest message to another process that ep_send_now offers UCX to
 * finish at once: UCX copies messages up to a few KiB out at once over
 * shared memory; a larger one would fail the attempt and pay twice. */
#define EP_UCX_NOW_MAX 4096

/* ep_send_now's ways, each a function of its own that the dispatch jumps
 * to, so that each saves only the registers it needs: a send of a
 * predefined type to another process, without statistics, saves none
 * and ends in a tail call to ep_ucx_send_now. */
static __attribute__((noinline)) int send_now_process_any(ep_endpoint_t *ep, int idx, const void *buf, int count,
                                                          MPI_Datatype type, int tag)
{
    ep_dt_layout_t lay;
    if (ep_dt_layout(type, count, &lay) || !lay.contig || lay.bytes > EP_UCX_NOW_MAX ||
        !ep_ucx_send_now(ep, idx, (const char *)buf + lay.offset, (size_t)lay.bytes, tag))
        return 0;
    ep_stats_msg(ep, 0, 1, lay.bytes);
    return 1;
}

/* A small message to another process that UCX (or a node inbox) copies
 * out at once needs no request either. */
static __attribute__((noinline)) int send_now_process(ep_endpoint_t *ep, int idx, const void *buf, int count,
                                                      MPI_Datatype type, int tag)
{
    int bs = ep_datatype_builtin_size(type);
    if (bs <= 0 || __builtin_expect(ep->stats != NULL, 0))
        return send_now_process_any(ep, idx, buf, count, type, tag);
    int64_t bytes = (int64_t)bs * count;
    if (bytes > EP_UCX_NOW_MAX)
        return 0;
    return ep_ucx_send_now(ep, idx, buf, (size_t)bytes, tag);
}

static __attribute__((noinline)) int send_now_lane(ep_endpoint_t *ep, int lidx, const void *buf, int count,
                                                   MPI_Datatype type, int tag)
{
    ep_dt_layout_t lay;
    if (ep_dt_layout(type, count, &lay) || lay.bytes > EP_LANE_INLINE ||
        !lane_put(ep, lidx, buf, count, type, &lay, tag))
        return 0;
    ep_stats_msg(ep, 0, 0, lay.bytes);
    return 1;
}

int ep_send_now(ep_endpoint_t *ep, const void *buf, int count, MPI_Datatype type, int dest, int tag)
{
    if (dest == MPI_PROC_NULL)
        return 1;
    ep_comm_t *c = ep->comm;
    if (c->direct)
        return ep_direct_send_now(ep, buf, count, type, dest, tag);
    int idx = ep_peer_index(ep, dest);
    ep_rank_loc_t loc = c->ranks[idx];
    if (loc.proc == c->myproc)
        return send_now_lane(ep, loc.lidx, buf, count, type, tag);
    if (!c->ucx)
        return 0;
    return send_now_process(ep, idx, buf, count, type, tag);
}

/* ---- starting operations ---------------------------------------------- */

ep_status_t ep_send_start(ep_request_t *s)
{
    ep_endpoint_t *ep = s->ep;
    ep_comm_t *c = ep->comm;
    ep_status_t rc;

    s->nnet = 0;
    s->bsend_bytes = 0;
    s->failure = EP_OK;
    if (s->peer == MPI_PROC_NULL) {
        ep_mpi_status_set(&s->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        ep_request_set_done(s);
        return EP_OK;
    }
    if ((rc = ep_dt_layout(s->type, s->count, &s->lay)))
        return rc;
    if (s->mode == EP_SEND_BUFFERED) {
        size_t need = (size_t)s->lay.bytes + MPI_BSEND_OVERHEAD;
        if (!ep_bsend_reserve(need))
            return EP_ERR_BSEND_SPACE;
        s->bsend_bytes = need;
    }
    atomic_store_explicit(&s->state, EP_RS_PENDING, memory_order_relaxed);
    ep_rank_loc_t loc = c->ranks[ep_peer_index(ep, s->peer)];
    ep_stats_msg(ep, 0, loc.proc != c->myproc, s->lay.bytes);
    int source = ep_chan_source(ep_local_rank(ep), s->chan);
    if (loc.proc == c->myproc && !c->direct) {
        ep_endpoint_t *dst = &c->local[loc.lidx];
        /* A lane carries the user's channel only: its slots have no source. */
        if (s->chan == EP_CHAN_USER && lane_send(ep, loc.lidx, s))
            return EP_OK;
        ep_msg_t m = {.kind = EP_MSG_LOCAL_RNDV, .bytes = s->lay.bytes, .sreq = s};
        m.link.source = source;
        m.link.tag = s->tag;
        deliver_msg(dst, &m, lane_pending(ep, loc.lidx));
        return EP_OK;
    }
    rc = c->direct ? ep_direct_send(s)
         : c->ucx  ? ep_ucx_send(s, ep_peer_index(ep, s->peer), &s->lay)
                   : ep_net_send(s, c->proc_world[loc.proc], c->ctx, source, loc.lidx, &s->lay);
    if (rc) {
        /* Not sent: a buffered send gives its attached-buffer space back. */
        ep_bsend_release(s->bsend_bytes);
        s->bsend_bytes = 0;
    }
    return rc;
}

static inline ep_status_t recv_prepare(ep_request_t *r)
{
    ep_status_t rc = ep_dt_layout(r->type, r->count, &r->lay);
    if (rc)
        return rc;
    r->nnet = 0;
    r->tmp = NULL;
    r->failure = EP_OK;
    r->ucx_posted = 0;
    r->link.source = r->source_pat;
    r->link.tag = r->tag_pat;
    atomic_store_explicit(&r->state, EP_RS_PENDING, memory_order_relaxed);
    return EP_OK;
}

/* Whether r may be posted in UCX itself (ucx.c says when it is): a
 * receive from one rank of another process into a contiguous buffer,
 * unless that rank's messages come through a node inbox.
 * With statistics on, epmpi's matching counts what arrives.  Only
 * receives that their caller waits for at once are: their message has
 * most likely not arrived, and UCX lands it in the buffer as it comes
 * (ping-pong latency gains).  Non-blocking receives come in windows,
 * posted while senders wait, and a post into epmpi's queue costs less
 * than one into UCX (the message rate loses when they go to UCX too). */
static inline int ucx_may_post(const ep_request_t *r)
{
    const ep_endpoint_t *ep = r->ep;
    const ep_comm_t *c = ep->comm;
    if (!c->ucx || r->source_pat == MPI_ANY_SOURCE || !r->lay.contig || ep->stats || !ep->ucx_w)
        return 0;
    int idx = ep_peer_index(ep, r->source_pat);
    return c->ranks[idx].proc != c->myproc && !ep_ucx_via_inbox(c, idx);
}

static ep_status_t recv_post(ep_request_t *r, int in_ucx);

static ep_status_t recv_start(ep_request_t *r, int waited)
{
    ep_endpoint_t *ep = r->ep;
    ep_status_t rc;

    if (r->source_pat == MPI_PROC_NULL) {
        ep_mpi_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        ep_request_set_done(r);
        return EP_OK;
    }
    if ((rc = recv_prepare(r)))
        return rc;
    if (ep->comm->direct)
        return ep_direct_recv(r);
    if (waited && ucx_may_post(r))
        return recv_post(r, 1);
    ep_lock(&ep->lock);
    if (!ep_mq_empty(&ep->unexpected))
        return recv_post(r, 0);
    ep_mq_append(&ep->posted, &r->link); /* the usual way, which saves no registers */
    ep_unlock(&ep->lock);
    return EP_OK;
}

/* recv_start's ways that call out: a message may be waiting (ep->lock
 * held), or the receive may go to UCX (in_ucx; not held: UCX's worker
 * lock comes first). */
static __attribute__((noinline)) ep_status_t recv_post(ep_request_t *r, int in_ucx)
{
    ep_endpoint_t *ep = r->ep;
    int took = 0;
    if (in_ucx) {
        took = ep_ucx_recv_post_hold(ep);
        ep_lock(&ep->lock);
    }
    ep_match_item_t *it =
        ep_mq_empty(&ep->unexpected) ? NULL : ep_mq_find_unexpected(&ep->unexpected, r->source_pat, r->tag_pat, 1);
    if (!it && !(in_ucx && ep_mq_empty(&ep->posted) && ep_ucx_recv_post(r)))
        ep_mq_append(&ep->posted, &r->link);
    ep_unlock(&ep->lock);
    if (in_ucx)
        ep_ucx_recv_post_give(ep, took);
    if (!it)
        return EP_OK;
    ep_msg_t *m = ep_container_of(it, ep_msg_t, link);
    match_complete(r, m, 0);
    ep_msg_destroy(m);
    return EP_OK;
}

ep_status_t ep_recv_start(ep_request_t *r) { return recv_start(r, 0); }

ep_status_t ep_persistent_start(ep_request_t *r)
{
    ep_status_t st = r->kind == EP_REQ_SEND ? ep_send_start(r) : ep_recv_start(r);
    if (st)
        ep_request_set_inactive(r);
    return st;
}

ep_status_t ep_sendrecv_start(ep_request_t *recv, ep_request_t *send, int waited)
{
    ep_status_t st = recv_start(recv, waited);
    if (st)
        return st;
    if ((st = ep_send_start(send))) {
        if (!ep_recv_cancel(recv))
            ep_request_wait(recv); /* matched already: its data land before the call returns */
        return st;
    }
    return EP_OK;
}

ep_status_t ep_pair_new(ep_endpoint_t *ep, void *copy, ep_request_t **out)
{
    ep_request_t *pair = *out = ep_request_new(EP_REQ_PAIR, ep, 1);
    if (!pair) {
        free(copy);
        return EP_ERR_NO_MEM;
    }
    pair->tmp = copy; /* from here the pair owns all, destroyed with it */
    if (ep_request_set_parts(pair, 2) || !(pair->part[0] = ep_request_new(EP_REQ_RECV, ep, 0)) ||
        !(pair->part[1] = ep_request_new(EP_REQ_SEND, ep, 0))) {
        ep_request_destroy(pair);
        *out = NULL;
        return EP_ERR_NO_MEM;
    }
    return EP_OK;
}

ep_status_t ep_pair_start(ep_request_t *pair)
{
    ep_status_t st = ep_sendrecv_start(pair->part[0], pair->part[1], 0);
    if (!st)
        atomic_store_explicit(&pair->state, EP_RS_PENDING, memory_order_release);
    return st;
}

ep_status_t ep_recv_wait(ep_request_t *r)
{
    ep_status_t rc = recv_start(r, 1);
    if (!rc)
        ep_request_wait(r);
    return rc;
}

ep_status_t ep_mrecv_start(ep_request_t *r, ep_msg_t *m)
{
    ep_status_t rc = recv_prepare(r);
    if (rc)
        return rc;
    if (m->kind == EP_MSG_DIRECT)
        return ep_direct_mrecv(r, m);
    match_complete(r, m, 0);
    ep_msg_destroy(m);
    return EP_OK;
}

/* Looks for a message matching (source, tag) in ep's unexpected queue and
 * reports it in *flag / *st.  With take, a found message also gets a message
 * handle and leaves the queue (MPI_Improbe); the handle is minted before the
 * message is unlinked, so a failure leaves the queue as it was. */
static ep_status_t probe(ep_endpoint_t *ep, int source, int tag, int take, int *flag, ep_msg_t **msg, MPI_Status *st)
{
    ep_status_t rc = EP_OK;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        if (st != MPI_STATUS_IGNORE)
            ep_mpi_status_set(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        return EP_OK;
    }
    ep_progress();
    if (ep->comm->direct)
        return ep_direct_probe(ep, source, tag, take, flag, msg, st);
    if (ep->comm->ucx)
        ep_ucx_poll_ep(ep);
    ep_lock(&ep->lock);
    drain_locked(ep);
    ep_match_item_t *it = ep_mq_find_unexpected(&ep->unexpected, source, tag, 0);
    ep_msg_t *m = it ? ep_container_of(it, ep_msg_t, link) : NULL;
    if (m && take) {
        m->handle = EP_HANDLE_NEW(MPI_Message, ep_registry_add(EP_HTYPE_REQUEST, &m->obj), MPI_MESSAGE_NULL);
        if (m->handle == MPI_MESSAGE_NULL) {
            m = NULL;
            rc = EP_ERR_NO_MEM;
        } else {
            ep_mq_remove(&ep->unexpected, it);
            m->ep = ep;
            *msg = m;
        }
    }
    if (m && st != MPI_STATUS_IGNORE)
        ep_mpi_status_set(st, m->link.source, m->link.tag, MPI_SUCCESS, m->bytes, 0);
    ep_unlock(&ep->lock);
    *flag = m != NULL;
    return rc;
}

ep_status_t ep_iprobe(ep_endpoint_t *ep, int source, int tag, int *flag, MPI_Status *st)
{
    return probe(ep, source, tag, 0, flag, NULL, st);
}

ep_status_t ep_improbe(ep_endpoint_t *ep, int source, int tag, int *flag, ep_msg_t **msg, MPI_Status *st)
{
    *msg = NULL;
    return probe(ep, source, tag, 1, flag, msg, st);
}

int ep_recv_cancel(ep_request_t *r)
{
    ep_endpoint_t *ep = r->ep;
    if (r->direct)
        return ep_direct_cancel(r);
    if (r->ucx_posted)
        return ep_ucx_recv_cancel(r);
    if (ep_request_state(r) != EP_RS_PENDING)
        return 0; /* matched already */
    ep_lock(&ep->lock);
    int removed = ep_request_state(r) == EP_RS_PENDING && ep_mq_remove(&ep->posted, &r->link);
    ep_unlock(&ep->lock);
    if (removed) {
        ep_mpi_status_set(&r->status, r->source_pat, r->tag_pat, MPI_SUCCESS, 0, 1);
        ep_request_set_done(r);
    }
    return removed;
}
