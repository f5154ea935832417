/* Collective calls made of a sequence of engine calls, and the persistent
 * collectives (MPI_Bcast_init, ...; MPI-4.0 6.13), which keep a sequence to
 * start again and again.
 *
 * Sequences.  An engine call counts elements in an int.  The large-count
 * (_c) forms of most collectives make a datatype of a count's elements
 * (pmpi/entry.c), but MPICH's predefined operations refuse derived types,
 * so a reduction of more than INT_MAX elements becomes one call per piece
 * of at most INT_MAX elements instead: every rank passes the same count (a
 * reduce-scatter the same total), so all make the same pieces in the same
 * order, and operations combine element by element, so the pieces give the
 * result of the whole.  A reduce-scatter beyond INT_MAX reduces the whole
 * vector into scratch, after which each rank keeps its block.  A blocking
 * call runs the pieces one after the other; a non-blocking one starts them
 * all as the parts of one request (progress.c completes a request of parts).
 *
 * Persistent collectives.  The init calls are made in the same order
 * everywhere, but the starts of different requests may come in any order
 * (MPICH's coll/p_order does that), while the non-blocking collectives
 * meet in call order (the n-th call of each endpoint meets the n-th of the
 * others, and MPICH's own operations on the process-level communicator
 * match in the order the processes start them).  So each init makes a
 * private duplicate of the communicator (collectively: the inits keep one
 * order), whose calls are this request's starts alone, which are in order
 * since a request is started again only once complete.  The request keeps
 * the duplicate and copies of its calls' arguments, holding their
 * datatypes and operation for as long as it lives, as MPICH does; each
 * start runs the calls as non-blocking ones on the duplicate.  Its errors
 * go to the program's communicator: the request is on its endpoint. */
#include "coll/coll.h"

#include "core/datatype.h"
#include "base/error.h"
#include "core/request.h"

#include <limits.h>
#include <stdlib.h>

struct ep_coll_seq {
    ep_endpoint_t *dup; /* persistent: this rank's endpoint of the private duplicate */
    int n;
    ep_coll_args_t **call; /* n copies (ep_coll_args_keep) */
    /* A reduce-scatter beyond INT_MAX: the block of the reduced vector
     * (in scratch) this rank keeps, and where it goes.  The calls hold the
     * datatype. */
    void *scratch;
    const char *keep_src;
    void *keep_dst;
    int64_t keep_count;
    MPI_Datatype keep_type;
};

static ep_coll_seq_t *seq_new(int n)
{
    ep_coll_seq_t *s = calloc(1, sizeof *s + (size_t)n * sizeof *s->call);
    if (s)
        s->call = (ep_coll_args_t **)(void *)(s + 1);
    return s;
}

void ep_coll_seq_free(ep_coll_seq_t *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++)
        ep_coll_args_drop(s->call[i]);
    if (s->dup)
        ep_endpoint_free(s->dup);
    free(s->scratch);
    free(s);
}

void ep_coll_seq_count(ep_endpoint_t *ep, const ep_coll_seq_t *s)
{
    for (int i = 0; i < s->n; i++)
        ep_coll_count(ep, s->call[i]);
}

/* Appends a copy of a; 0 when out of memory. */
static int seq_add(ep_coll_seq_t *s, const ep_coll_args_t *a)
{
    return (s->call[s->n] = ep_coll_args_keep(a)) ? (s->n++, 1) : 0;
}

ep_coll_seq_t *ep_coll_seq_one(const ep_coll_args_t *a)
{
    ep_coll_seq_t *s = seq_new(1);
    if (s && !seq_add(s, a)) {
        ep_coll_seq_free(s);
        s = NULL;
    }
    return s;
}

/* buf moved on by off elements of extent ext, unless it is no buffer (NULL,
 * MPI_IN_PLACE).  A non-root's receive buffer may be anything: it is moved,
 * never read. */
static void *moved(const void *buf, int64_t off, MPI_Aint ext)
{
    if (!buf || buf == MPI_IN_PLACE)
        return (void *)buf;
    return (void *)((uintptr_t)buf + (uintptr_t)(off * ext));
}

ep_coll_seq_t *ep_coll_seq_reduction(ep_endpoint_t *ep, ep_coll_reduction_t kind, const void *sbuf, void *rbuf,
                                     int64_t count, MPI_Datatype t, MPI_Op op, int root)
{
    int n = count > 0 ? (int)((count + INT_MAX - 1) / INT_MAX) : 1;
    MPI_Aint ext = ep_coll_extent(t);
    ep_coll_seq_t *s = seq_new(n);
    for (int64_t off = 0; s && s->n < n; off += INT_MAX) {
        int m = (int)(count - off < INT_MAX ? count - off : INT_MAX);
        const void *sb = moved(sbuf, off, ext);
        void *rb = moved(rbuf, off, ext);
        ep_coll_args_t a;
        if (kind == EP_COLL_REDUCE || kind == EP_COLL_ALLREDUCE)
            ep_coll_reduce(&a, ep, sb, rb, m, t, op, kind == EP_COLL_ALLREDUCE, root);
        else
            ep_coll_scan(&a, ep, sb, rb, m, t, op, kind == EP_COLL_EXSCAN);
        a.piece = off > 0;
        if (!seq_add(s, &a)) {
            ep_coll_seq_free(s);
            s = NULL;
        }
    }
    return s;
}

ep_coll_seq_t *ep_coll_seq_reduce_scatter(ep_endpoint_t *ep, const void *sbuf, void *rbuf, int64_t total,
                                          int64_t mine_off, int64_t mine, MPI_Datatype t, MPI_Op op)
{
    void *block;
    char *res = ep_coll_typed_alloc(total, t, &block);
    ep_coll_seq_t *s =
        res ? ep_coll_seq_reduction(ep, EP_COLL_ALLREDUCE, sbuf == MPI_IN_PLACE ? rbuf : sbuf, res, total, t, op, 0)
            : NULL;
    if (!s) {
        free(block);
        return NULL;
    }
    s->scratch = block;
    s->keep_src = res + mine_off * ep_coll_extent(t);
    s->keep_dst = rbuf;
    s->keep_count = mine;
    s->keep_type = t;
    return s;
}

/* The reduce-scatter's block to its place, in int-count pieces. */
static ep_status_t seq_keep(const ep_coll_seq_t *s)
{
    MPI_Aint ext = ep_coll_extent(s->keep_type);
    ep_status_t st = EP_OK;
    int64_t bytes;
    for (int64_t off = 0; off < s->keep_count && !st; off += INT_MAX) {
        int m = (int)(s->keep_count - off < INT_MAX ? s->keep_count - off : INT_MAX);
        st = ep_dt_copy(s->keep_src + off * ext, m, s->keep_type, (char *)s->keep_dst + off * ext, m, s->keep_type,
                        &bytes);
    }
    return st;
}

static void seq_then(ep_request_t *r) { r->failure = seq_keep(r->ext); }

static void seq_free_ext(void *s) { ep_coll_seq_free(s); }

/* r, a collective request, owns s from here: they go together. */
static void seq_own(ep_request_t *r, ep_coll_seq_t *s)
{
    r->ext = s;
    r->ext_free = seq_free_ext;
}

ep_status_t ep_coll_seq_run(ep_endpoint_t *ep, ep_coll_seq_t *s)
{
    ep_status_t st = EP_OK;
    for (int i = 0; i < s->n && !st; i++)
        st = ep_coll_run(ep, s->call[i]);
    if (!st && s->keep_dst)
        st = seq_keep(s);
    return st;
}

/* Starts s's calls on ep as r's parts (r has room for s->n).  When a call
 * fails to start after others did, the started ones run on and its part
 * is a request complete with its error, which completion reports (made
 * beforehand: no memory may be left then); the later calls are not
 * started.  An error here means nothing started. */
static ep_status_t seq_start(ep_request_t *r, ep_endpoint_t *ep, const ep_coll_seq_t *s)
{
    MPI_Status none = {.MPI_ERROR = MPI_SUCCESS};
    ep_request_t *spare = s->n > 1 ? ep_request_completed(ep, &none) : NULL;
    if (s->n > 1 && !spare)
        return EP_ERR_NO_MEM;
    for (int i = 0; i < s->n; i++) {
        ep_request_t *run;
        ep_status_t st = ep_coll_start(ep, s->call[i], &run);
        if (st && i == 0) {
            if (spare)
                ep_request_destroy(spare);
            return st;
        }
        if (st) {
            run = spare;
            spare = NULL;
            run->status.MPI_ERROR = ep_status_class(st);
            run->failure = st;
            r->nparts = i + 1;
        }
        ep_request_drop_handle(run);
        r->part[i] = run;
        if (st)
            break;
    }
    if (spare)
        ep_request_destroy(spare);
    r->then = s->keep_dst ? seq_then : NULL;
    atomic_store_explicit(&r->state, EP_RS_PENDING, memory_order_release);
    return EP_OK;
}

ep_status_t ep_coll_seq_start(ep_endpoint_t *ep, ep_coll_seq_t *s, ep_request_t **out)
{
    ep_request_t *r = ep_request_new(EP_REQ_COLL, ep, 1);
    ep_status_t st = r ? ep_request_set_parts(r, s->n) : EP_ERR_NO_MEM;
    if (!st && !(st = seq_start(r, ep, s))) {
        seq_own(r, s);
        *out = r;
        return EP_OK;
    }
    if (r)
        ep_request_destroy(r);
    return st;
}

ep_status_t ep_coll_persistent_make(ep_endpoint_t *ep, ep_coll_seq_t *s, ep_endpoint_t *dup, ep_request_t **out)
{
    ep_request_t *r = NULL;
    ep_status_t st = s && (r = ep_request_new(EP_REQ_COLL, ep, 1)) ? ep_request_set_parts(r, s->n) : EP_ERR_NO_MEM;
    *out = NULL;
    if (!st) {
        s->dup = dup;
        r->persistent = 1;
        seq_own(r, s);
        *out = r;
        return EP_OK;
    }
    if (r)
        ep_request_destroy(r);
    ep_coll_seq_free(s);
    ep_endpoint_free(dup);
    return st;
}

ep_status_t ep_coll_persistent_start(ep_request_t *r)
{
    ep_coll_seq_t *s = r->ext;
    for (int i = 0; i < s->n; i++) { /* the last start's, over */
        if (r->part[i])
            ep_request_destroy(r->part[i]);
        r->part[i] = NULL;
    }
    r->nparts = s->n;
    ep_coll_seq_count(r->ep, s);
    return seq_start(r, s->dup, s);
}
