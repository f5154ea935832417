#include "p2p/partitioned.h"

#include "config.h" /* HAVE_DECL_PMPI_PSEND_INIT */
#include "abi/handle.h"
#include "abi/large.h"
#include "p2p/direct.h"
#include "base/wait.h"
#include "p2p/p2p.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

/* Pair numbers are data tags: they stay within MPICH's tag range, which
 * the transports carry (net.c, ucx.c). */
#define PAIR_MASK 0x0fffffff

struct ep_part {
    pthread_mutex_t lock; /* one thread moves the operation on at a time */
    int partitions;
    _Atomic int data_on;          /* this round's data transfer has started */
    ep_status_t failed;           /* a send's data could not start this round */
    _Atomic int nready;           /* send: partitions marked ready this round */
    _Atomic unsigned char *ready; /* send: [partitions] marked this round */
    int64_t hello_msg[2];         /* {pair, bytes of the whole message} */
    ep_request_t *hello;          /* the hello's send or receive, until over (a receive
                                     knows its pair, the data tag, once it is) */
    ep_request_t *data;           /* the data's send or receive, started each round */
    MPI_Datatype whole;           /* a partition as one element, when the message has more than INT_MAX elements */
    MPI_Request pmpi;             /* direct communicators: the MPI's partitioned request */
};

static _Atomic int next_pair;

/* An internal request on ep that holds it, so that a hello still on its
 * way when the operation goes cannot outlive its endpoint. */
static ep_request_t *internal(ep_req_kind_t kind, ep_endpoint_t *ep)
{
    ep_request_t *x = ep_request_new(kind, ep, 0);
    if (x)
        ep_request_hold_ep(x);
    return x;
}

/* An internal request the operation no longer needs: an unmatched receive
 * is cancelled, one still moving goes to the progress engine. */
static void drop_internal(ep_request_t *x)
{
    if (x->kind == EP_REQ_RECV && ep_request_state(x) == EP_RS_PENDING)
        ep_recv_cancel(x);
    if (ep_request_poll(x))
        ep_request_destroy(x);
    else
        ep_progress_detach(x);
}

/* The operation of partitioned request r. */
static inline struct ep_part *part_of(const ep_request_t *r) { return r->ext; }
/* r is a partitioned send (else a receive). */
static inline int part_sends(const ep_request_t *r) { return r->kind == EP_REQ_PART_SEND; }

/* Frees the operation with its request (ep_request_destroy, ext_free). */
static void part_free(void *ext)
{
    struct ep_part *p = ext;
    if (p->hello)
        drop_internal(p->hello);
    if (p->data)
        drop_internal(p->data);
    if (p->pmpi != MPI_REQUEST_NULL)
        PMPI_Request_free(&p->pmpi);
    if (p->whole != MPI_DATATYPE_NULL)
        PMPI_Type_free(&p->whole);
    pthread_mutex_destroy(&p->lock);
    free((void *)p->ready);
    free(p);
}

/* The data request's buffer description: partitions x count elements, as
 * one count when it fits in an int, else as partitions elements of a
 * contiguous type of count. */
static ep_status_t data_shape(struct ep_part *p, MPI_Count count, MPI_Datatype type, int *n, MPI_Datatype *t)
{
    if (count <= INT_MAX / (p->partitions ? p->partitions : 1)) {
        *n = (int)count * p->partitions;
        *t = type;
        return EP_OK;
    }
    if (ep_pmpi_type_contiguous_c(count, type, &p->whole) != MPI_SUCCESS || PMPI_Type_commit(&p->whole) != MPI_SUCCESS)
        return EP_ERR_TYPE;
    *n = p->partitions;
    *t = p->whole;
    return EP_OK;
}

/* The MPI's failing partitioned call, for the error message. */
static ep_status_t mpi_failed(const char *what)
{
    ep_status_explain(EP_ERR_TRANSPORT, "%s's %s failed on the process-level communicator", EP_MPI_NAME, what);
    return EP_ERR_TRANSPORT;
}

/* Direct communicators use the MPI's own partitioned communication, with
 * one partition on each side: epmpi counts the sender's MPI_Pready calls
 * and marks the MPI's partition ready with the last, and a receive's
 * partitions arrive together.  Open MPI 5.0 never completes a message
 * whose two sides partition it differently (a plain program hangs), which
 * MPI allows and programs do.  An MPI without partitioned communication
 * (Open MPI 4.1) has no MPI_Psend_init for a program to call, and epmpi
 * then has no entry point that gets here: its own path alone is compiled. */
#define MPI_PARTITIONED HAVE_DECL_PMPI_PSEND_INIT

#if MPI_PARTITIONED
static ep_status_t init_direct(const ep_request_t *r, struct ep_part *p, MPI_Count count, MPI_Info info)
{
    MPI_Comm pc = r->ep->comm->pcomm;
    MPI_Count all = count * p->partitions;
    int rc = part_sends(r) ? PMPI_Psend_init(r->buf, 1, all, r->type, r->peer, r->tag, pc, info, &p->pmpi)
                           : PMPI_Precv_init(r->buf, 1, all, r->type, r->peer, r->tag, pc, info, &p->pmpi);
    return rc == MPI_SUCCESS ? EP_OK : mpi_failed(part_sends(r) ? "MPI_Psend_init" : "MPI_Precv_init");
}
#endif

/* Sends the hello, or posts its receive (see partitioned.h). */
static ep_status_t init_hello(const ep_request_t *r, struct ep_part *p)
{
    if (!(p->hello = internal(part_sends(r) ? EP_REQ_SEND : EP_REQ_RECV, r->ep)))
        return EP_ERR_NO_MEM;
    if (!part_sends(r)) {
        ep_request_describe_recv(p->hello, p->hello_msg, 2, MPI_INT64_T, ep_chan_source(r->peer, EP_CHAN_PART_HELLO),
                                 r->tag);
        return ep_recv_start(p->hello);
    }
    int pair = atomic_fetch_add_explicit(&next_pair, 1, memory_order_relaxed) & PAIR_MASK;
    p->data->tag = pair;
    p->hello_msg[0] = pair;
    p->hello_msg[1] = r->lay.bytes;
    ep_request_describe_send(p->hello, p->hello_msg, 2, MPI_INT64_T, r->peer, r->tag, EP_SEND_STANDARD);
    p->hello->chan = EP_CHAN_PART_HELLO;
    return ep_send_start(p->hello);
}

ep_status_t ep_part_init(ep_endpoint_t *ep, int send, void *buf, int partitions, MPI_Count count, MPI_Datatype type,
                         int peer, int tag, MPI_Info info, ep_request_t **out)
{
    struct ep_part *p = calloc(1, sizeof *p);
    ep_request_t *r = p ? ep_request_new(send ? EP_REQ_PART_SEND : EP_REQ_PART_RECV, ep, 1) : NULL;
    if (!r) {
        free(p);
        return EP_ERR_NO_MEM;
    }
    pthread_mutex_init(&p->lock, NULL);
    p->partitions = partitions;
    p->whole = MPI_DATATYPE_NULL;
    p->pmpi = MPI_REQUEST_NULL;
    r->ext = p;
    r->ext_free = part_free;
    r->persistent = 1;
    r->buf = buf;
    r->type = type;
    r->count = count > INT_MAX ? INT_MAX : (int)count; /* for error messages only */
    r->peer = peer;                                    /* as the user gave them */
    r->tag = tag;
    ep_request_hold_type(r);

#if !MPI_PARTITIONED
    (void)info; /* for the MPI's partitioned call (direct communicators) */
#endif
    ep_status_t st = EP_OK;
    int n;
    MPI_Datatype t;
    if (send && !(p->ready = calloc((size_t)(partitions ? partitions : 1), 1)))
        st = EP_ERR_NO_MEM;
    else if (peer == MPI_PROC_NULL)
        ; /* done at each start, here also on direct communicators: MPICH 4.0.2 crashes on it */
#if MPI_PARTITIONED
    else if (ep->comm->direct)
        st = init_direct(r, p, count, info);
#endif
    else if (!(st = data_shape(p, count, type, &n, &t)) && !(st = ep_dt_layout(t, n, &r->lay))) {
        if (!(p->data = internal(send ? EP_REQ_SEND : EP_REQ_RECV, ep)))
            st = EP_ERR_NO_MEM;
        else if (send) {
            ep_request_describe_send(p->data, buf, n, t, peer, 0, EP_SEND_STANDARD);
            p->data->chan = EP_CHAN_PART_DATA;
        } else
            ep_request_describe_recv(p->data, buf, n, t, ep_chan_source(peer, EP_CHAN_PART_DATA), 0);
        if (!st)
            st = init_hello(r, p);
    }
    if (st) {
        ep_request_destroy(r);
        return st;
    }
    *out = r;
    return EP_OK;
}

int ep_part_partitions(const ep_request_t *r) { return part_of(r)->partitions; }

/* Starts this round's data transfer (the operation's lock held, or the
 * last MPI_Pready's thread, which alone starts a send). */
static void data_start(struct ep_part *p)
{
    ep_request_set_inactive(p->data);
    ep_status_t st = p->data->kind == EP_REQ_SEND ? ep_send_start(p->data) : ep_recv_start(p->data);
    p->failed = st;
    atomic_store_explicit(&p->data_on, 1, memory_order_release);
}

ep_status_t ep_part_start(ep_request_t *r)
{
    struct ep_part *p = part_of(r);
    ep_status_t st = EP_OK;
    pthread_mutex_lock(&p->lock);
    if (part_sends(r)) {
        for (int i = 0; i < p->partitions; i++)
            atomic_store_explicit(&p->ready[i], 0, memory_order_relaxed);
        atomic_store_explicit(&p->nready, 0, memory_order_relaxed);
    }
    if (p->pmpi != MPI_REQUEST_NULL) {
        if (PMPI_Start(&p->pmpi) != MPI_SUCCESS)
            st = mpi_failed("MPI_Start");
#if MPI_PARTITIONED
        else if (part_sends(r) && p->partitions == 0 && PMPI_Pready(0, p->pmpi) != MPI_SUCCESS)
            st = mpi_failed("MPI_Pready"); /* no partition to wait for */
#endif
        else
            atomic_store_explicit(&r->state, EP_RS_PENDING, memory_order_release);
    } else if (r->peer == MPI_PROC_NULL) {
        ep_mpi_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        ep_request_set_done(r);
    } else {
        r->failure = EP_OK;
        atomic_store_explicit(&p->data_on, 0, memory_order_relaxed);
        atomic_store_explicit(&r->state, EP_RS_PENDING, memory_order_release);
        /* A send of no partitions is ready at once; a receive whose pair
         * is known posts its data receive now. */
        if ((part_sends(r) && p->partitions == 0) || (!part_sends(r) && !p->hello))
            data_start(p);
    }
    pthread_mutex_unlock(&p->lock);
    return st;
}

ep_status_t ep_part_ready(ep_request_t *r, int i)
{
    struct ep_part *p = part_of(r);
    if (atomic_exchange_explicit(&p->ready[i], 1, memory_order_relaxed))
        return EP_ERR_PART_TWICE;
    if (r->peer == MPI_PROC_NULL)
        return EP_OK;
    /* acq_rel: the last one to mark sends what every thread wrote before
     * its own MPI_Pready. */
    if (atomic_fetch_add_explicit(&p->nready, 1, memory_order_acq_rel) + 1 == p->partitions) {
#if MPI_PARTITIONED
        if (p->pmpi != MPI_REQUEST_NULL)
            return PMPI_Pready(0, p->pmpi) == MPI_SUCCESS ? EP_OK : mpi_failed("MPI_Pready");
#endif
        data_start(p);
        return p->failed;
    }
    return EP_OK;
}

/* The hello is over: a receive learns its pair and, active, posts its data
 * receive. */
static void hello_over(ep_request_t *r, struct ep_part *p)
{
    if (!part_sends(r)) {
        p->data->tag_pat = (int)p->hello_msg[0];
        if (ep_request_state(r) == EP_RS_PENDING && !atomic_load_explicit(&p->data_on, memory_order_relaxed))
            data_start(p);
    }
    ep_request_destroy(p->hello);
    p->hello = NULL;
}

/* The round is over, with d's outcome: a receive names the sender and tag
 * as the user gave them. */
static void round_over(ep_request_t *r, const ep_request_t *d)
{
    r->status = d->status;
    if (!part_sends(r)) {
        r->status.MPI_SOURCE = r->peer;
        r->status.MPI_TAG = r->tag;
    }
    r->failure = d->failure;
    r->lay = d->lay;
    r->sent_bytes = d->sent_bytes;
    ep_request_set_done(r);
}

static int advance_direct(ep_request_t *r, struct ep_part *p)
{
    int flag = 0;
    MPI_Status st = {.MPI_ERROR = MPI_SUCCESS};
    ep_pmpi_quiet = 1; /* errors come back here, raised on the endpoint (direct.h) */
    int rc = PMPI_Test(&p->pmpi, &flag, &st);
    ep_pmpi_quiet = 0;
    if (rc == MPI_SUCCESS && !flag)
        return 0;
    r->status = st;
    if (rc != MPI_SUCCESS) {
        r->failure = EP_ERR_TRANSPORT;
        r->status.MPI_ERROR = ep_status_class(r->failure);
    }
    ep_request_set_done(r);
    return 1;
}

static int advance(ep_request_t *r, struct ep_part *p)
{
    if (p->pmpi != MPI_REQUEST_NULL)
        return advance_direct(r, p);
    if (p->hello && ep_request_poll(p->hello))
        hello_over(r, p);
    if (!atomic_load_explicit(&p->data_on, memory_order_acquire))
        return 0;
    if (p->failed) {
        r->failure = p->failed;
        ep_mpi_status_set(&r->status, part_sends(r) ? MPI_ANY_SOURCE : r->peer, part_sends(r) ? MPI_ANY_TAG : r->tag,
                          ep_status_class(p->failed), 0, 0);
        ep_request_set_done(r);
        return 1;
    }
    if (!ep_request_poll(p->data))
        return 0;
    round_over(r, p->data);
    return 1;
}

int ep_part_poll(ep_request_t *r)
{
    struct ep_part *p = part_of(r);
    if (pthread_mutex_trylock(&p->lock))
        return 0; /* another thread is moving it on */
    int done = ep_request_state(r) == EP_RS_DONE || advance(r, p);
    pthread_mutex_unlock(&p->lock);
    return done;
}

int ep_part_arrived(ep_request_t *r, int i)
{
    if (ep_request_inactive(r))
        return 1;
#if MPI_PARTITIONED
    struct ep_part *p = part_of(r);
    if (p->pmpi != MPI_REQUEST_NULL) {
        int flag = 0; /* the MPI's one partition holds them all */
        return PMPI_Parrived(p->pmpi, 0, &flag) == MPI_SUCCESS && flag;
    }
#endif
    (void)i; /* partitions arrive together */
    return ep_request_poll(r);
}
