/* Point-to-point entry points.  Blocking calls run an engine request that
 * lives on the caller's stack; non-blocking and persistent ones get a
 * request handle from the registry. */
#include "core/bsend.h"
#include "core/datatype.h"
#include "p2p/direct.h"
#include "diag/diag.h"
#include "entry.h"
#include "p2p/p2p.h"
#include "p2p/partitioned.h"
#include "base/wait.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- sends -------------------------------------------------------------- */

/* A send that is over at once needs no request (p2p.h); buffered sends
 * take the request path, which accounts for the attached buffer.  Inlined
 * (with lane_put in src/p2p/p2p.c): that saves the register saves of two
 * calls per message between threads.  send_nonblocking stays a call of
 * its own: inlined too, it made the entry points save registers before
 * their pass-through test, which every call on a classic communicator
 * pays. */
static inline __attribute__((always_inline)) int send_now(ep_endpoint_t *ep, const void *buf, int count,
                                                          MPI_Datatype type, int dest, int tag, ep_send_mode_t mode)
{
    return (mode == EP_SEND_STANDARD || mode == EP_SEND_READY) && ep_send_now(ep, buf, count, type, dest, tag);
}

/* A blocking send that was not over at once: an engine request on the
 * stack, waited for.  Apart, so that the calls that are over at once do not
 * set up its frame (the request is aligned to a cache line). */
static __attribute__((noinline)) int send_wait(const char *call, ep_endpoint_t *ep, const void *buf, int count,
                                               MPI_Datatype type, int dest, int tag, ep_send_mode_t mode)
{
    ep_request_t r;
    ep_request_init(&r, EP_REQ_SEND, ep);
    ep_request_describe_send(&r, buf, count, type, dest, tag, mode);
    ep_status_t st = ep_send_start(&r);
    if (st) {
        free(r.tmp);
        return entry_raise_start(ep, call, st, count);
    }
    ep_diag_enter(ep, call);
    ep_request_wait(&r);
    ep_diag_leave(ep);
    return entry_request_error(&r, call);
}

static int send_blocking(const char *call, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm, ep_send_mode_t mode)
{
    ep_endpoint_t *ep;
    int rc;
    if ((rc = entry_endpoint(call, comm, &ep)) || (rc = entry_check_send(ep, call, buf, count, type, dest, tag)))
        return rc;
    if (send_now(ep, buf, count, type, dest, tag, mode))
        return MPI_SUCCESS;
    return send_wait(call, ep, buf, count, type, dest, tag, mode);
}

static int send_nonblocking(const char *call, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                            MPI_Comm comm, ep_send_mode_t mode, MPI_Request *request, int persistent)
{
    ep_endpoint_t *ep;
    int rc;
    if ((rc = entry_endpoint(call, comm, &ep)) || (rc = entry_check_send(ep, call, buf, count, type, dest, tag)))
        return rc;
    if (!request)
        return entry_raise(ep, call, MPI_ERR_ARG, "request pointer is NULL");
    if (!persistent && send_now(ep, buf, count, type, dest, tag, mode)) {
        *request = EP_REQUEST_SENT;
        return MPI_SUCCESS;
    }
    ep_request_t *r = ep_request_new(EP_REQ_SEND, ep, 1);
    if (!r)
        return entry_raise(ep, call, MPI_ERR_NO_MEM, "out of request handles");
    ep_request_describe_send(r, buf, count, type, dest, tag, mode);
    ep_request_hold_type(r);
    ep_request_set_persistent(r, persistent);
    if (!persistent) {
        ep_status_t st = ep_send_start(r);
        if (st) {
            ep_request_destroy(r);
            return entry_raise_start(ep, call, st, count);
        }
    }
    *request = r->handle;
    return MPI_SUCCESS;
}

/* ---- receives ------------------------------------------------------------ */

/* recv_direct's error: PMPI_Recv returned rc with status *st. */
static __attribute__((noinline)) int recv_direct_failed(const char *call, ep_endpoint_t *ep, void *buf, int count,
                                                        MPI_Datatype type, int source, int tag, const MPI_Status *st,
                                                        int rc, MPI_Status *status)
{
    ep_request_t r;
    ep_direct_recv_failed(&r, ep, buf, count, type, source, tag, st, rc);
    rc = entry_request_error(&r, call);
    entry_status_give(status, &r.status);
    return rc;
}

/* MPI_Recv on a direct communicator when it may wait inside MPICH
 * (src/p2p/direct.h): no engine request to clear, fill and copy the status out
 * of.  An error is raised on the endpoint, with the engine's message
 * (entry_request_error). */
static int recv_direct(const char *call, ep_endpoint_t *ep, void *buf, int count, MPI_Datatype type, int source,
                       int tag, MPI_Status *status)
{
    MPI_Status local = {.MPI_ERROR = MPI_SUCCESS}; /* keep below reads it */
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int keep = st->MPI_ERROR; /* single-completion calls leave MPI_ERROR alone */
    ep_diag_enter(ep, call);
    int rc = ep_direct_recv_now(ep, buf, count, type, source, tag, st);
    ep_diag_leave(ep);
    st->MPI_ERROR = keep;
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : recv_direct_failed(call, ep, buf, count, type, source, tag, st, rc, status);
}

/* MPI_Recv through the engine: a request on the stack.  Apart, so that
 * recv_endpoints does not set up its frame on the direct path (the request
 * is aligned to a cache line). */
static __attribute__((noinline)) int recv_engine(const char *call, ep_endpoint_t *ep, void *buf, int count,
                                                 MPI_Datatype datatype, int source, int tag, MPI_Status *status)
{
    ep_request_t r;
    ep_request_init(&r, EP_REQ_RECV, ep);
    ep_request_describe_recv(&r, buf, count, datatype, source, tag);
    ep_diag_enter(ep, call);
    ep_status_t st = ep_recv_wait(&r);
    ep_diag_leave(ep);
    if (st)
        return entry_raise_status(ep, call, st, NULL);
    entry_status_give(status, &r.status);
    return entry_request_error(&r, call);
}

ENTRY_ENDPOINT_PATH int recv_endpoints(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                       MPI_Status *status)
{
    static const char call[] = "MPI_Recv";
    ep_endpoint_t *ep;
    int rc;
    if ((rc = entry_endpoint(call, comm, &ep)) || (rc = entry_check_recv(ep, call, buf, count, datatype, source, tag)))
        return rc;
    if (ep_direct_recv_straight(ep, source))
        return recv_direct(call, ep, buf, count, datatype, source, tag, status);
    return recv_engine(call, ep, buf, count, datatype, source, tag, status);
}

static int irecv_common(const char *call, void *buf, int count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm, MPI_Request *request, int persistent)
{
    ep_endpoint_t *ep;
    int rc;
    if ((rc = entry_endpoint(call, comm, &ep)) || (rc = entry_check_recv(ep, call, buf, count, datatype, source, tag)))
        return rc;
    if (!request)
        return entry_raise(ep, call, MPI_ERR_ARG, "request pointer is NULL");
    ep_request_t *r = ep_request_new(EP_REQ_RECV, ep, 1);
    if (!r)
        return entry_raise(ep, call, MPI_ERR_NO_MEM, "out of request handles");
    ep_request_describe_recv(r, buf, count, datatype, source, tag);
    ep_request_hold_type(r);
    ep_request_set_persistent(r, persistent);
    if (!persistent) {
        ep_status_t st = ep_recv_start(r);
        if (st) {
            ep_request_destroy(r);
            return entry_raise_status(ep, call, st, NULL);
        }
    }
    *request = r->handle;
    return MPI_SUCCESS;
}

/* ---- partitioned communication (src/p2p/partitioned.h) ------------------------ */

#if EP_HAVE_MPI_Psend_init /* MPI 4.0 (Open MPI 5.0 on) */
ENTRY_ENDPOINT_PATH int part_init_ep(const char *call, int send, const void *buf, int partitions, MPI_Count count,
                                     MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request)
{
    ep_endpoint_t *ep;
    int rc;
    if ((rc = entry_endpoint(call, comm, &ep)))
        return rc;
    if (!request)
        return entry_raise(ep, call, MPI_ERR_ARG, "request pointer is NULL");
    if (partitions < 1) /* MPI-4.0 allows none; MPICH refuses them, and so does epmpi, alike on every path */
        return entry_raise(ep, call, MPI_ERR_ARG, "invalid number of partitions %d (must be positive)", partitions);
    if (count < 0)
        return entry_raise(ep, call, MPI_ERR_COUNT, "invalid count %lld per partition (must not be negative)",
                           (long long)count);
    int some = partitions > 0 && count > 0; /* the buffer's checks need only know whether it holds data */
    if (send)
        rc = entry_check_send(ep, call, buf, some, datatype, peer, tag);
    else if (peer == MPI_ANY_SOURCE)
        rc = entry_raise(ep, call, MPI_ERR_RANK, "MPI_ANY_SOURCE cannot be the source of a partitioned receive");
    else if (tag == MPI_ANY_TAG)
        rc = entry_raise(ep, call, MPI_ERR_TAG, "MPI_ANY_TAG cannot be the tag of a partitioned receive");
    else
        rc = entry_check_recv(ep, call, buf, some, datatype, peer, tag);
    if (rc)
        return rc;
    if (ep_remote_size(ep) > EP_CHAN_STRIDE)
        return entry_raise(ep, call, MPI_ERR_COMM,
                           "partitioned communication on endpoints needs a communicator of at most %d ranks",
                           EP_CHAN_STRIDE);
    ep_request_t *r;
    ep_status_t st = ep_part_init(ep, send, (void *)buf, partitions, count, datatype, peer, tag, info, &r);
    if (st)
        return entry_raise_status(ep, call, st, NULL);
    *request = r->handle;
    return MPI_SUCCESS;
}
#endif

/* ---- send-receive ---------------------------------------------------------- */

static void set_sendrecv(ep_request_t *r, ep_request_t *s, const void *sbuf, int scount, MPI_Datatype stype, int dest,
                         int stag, void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag)
{
    ep_request_describe_recv(r, rbuf, rcount, rtype, source, rtag);
    ep_request_describe_send(s, sbuf, scount, stype, dest, stag, EP_SEND_STANDARD);
}

/* MPI_Sendrecv: the two requests on the stack, waited for together; the
 * receive's status, the send's error first.  (No pair request: setting
 * one up was a measurable part of a small exchange.) */
static int sendrecv_run(const char *call, ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype, int dest,
                        int stag, void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Status *status)
{
    ep_request_t s, r;
    ep_request_init(&r, EP_REQ_RECV, ep);
    ep_request_init(&s, EP_REQ_SEND, ep);
    set_sendrecv(&r, &s, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag);
    ep_status_t st = ep_sendrecv_start(&r, &s, 1);
    if (st) {
        free(s.tmp);
        return entry_raise_status(ep, call, st, NULL);
    }
    ep_diag_enter(ep, call);
    EP_WAIT_UNTIL(ep_request_poll(&s) & ep_request_poll(&r));
    ep_diag_leave(ep);
    entry_status_give(status, &r.status);
    int rc = entry_request_error(&s, call);
    return rc ? rc : entry_request_error(&r, call);
}

/* MPI_Isendrecv and MPI_Isendrecv_replace: a pair request with a handle
 * (request.h), which owns its parts and copy (the data a replace sends;
 * NULL otherwise), freed with it whatever happens here. */
static int isendrecv_start(const char *call, ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype,
                           int dest, int stag, void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                           void *copy, MPI_Request *request)
{
    ep_request_t *pair;
    if (ep_pair_new(ep, copy, &pair))
        return entry_raise(ep, call, MPI_ERR_NO_MEM, "out of memory or request handles for a send-receive");
    ep_request_t *r = pair->part[0], *s = pair->part[1];
    set_sendrecv(r, s, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag);
    ep_request_hold_type(r);
    ep_request_hold_type(s);
    ep_status_t st = ep_pair_start(pair);
    if (st) {
        ep_request_destroy(pair);
        return entry_raise_start(ep, call, st, scount);
    }
    *request = pair->handle;
    return MPI_SUCCESS;
}

/* The data a send-receive in place sends: a packed copy of count elements
 * of type at buf, so that the buffer can receive meanwhile.  Sent as its
 * bytes or, past INT_MAX bytes, as count elements of a contiguous type of
 * the type's size (*ctype, to free with MPI_Type_free, which waits for the
 * send that holds it). */
static int replace_copy(const char *call, ep_endpoint_t *ep, const void *buf, int count, MPI_Datatype type, void **copy,
                        int *ccount, MPI_Datatype *ctype)
{
    ep_dt_layout_t lay;
    if (ep_dt_layout(type, count, &lay))
        return entry_raise(ep, call, MPI_ERR_TYPE, "invalid datatype " EP_HFMT, EP_HARG(type));
    *ctype = MPI_BYTE;
    *ccount = lay.bytes > INT_MAX ? count : (int)lay.bytes;
    if (!(*copy = malloc(lay.bytes ? (size_t)lay.bytes : 1)))
        return entry_raise(ep, call, MPI_ERR_NO_MEM, "no memory for a %lld-byte copy", (long long)lay.bytes);
    int size = 0;
    ep_status_t st = ep_dt_pack(buf, count, type, &lay, *copy);
    if (!st && lay.bytes > INT_MAX &&
        (PMPI_Type_size(type, &size) != MPI_SUCCESS || PMPI_Type_contiguous(size, MPI_BYTE, ctype) != MPI_SUCCESS ||
         PMPI_Type_commit(ctype) != MPI_SUCCESS))
        st = EP_ERR_COUNT;
    if (!st)
        return MPI_SUCCESS;
    if (*ctype != MPI_BYTE)
        PMPI_Type_free(ctype);
    free(*copy);
    return entry_raise_status(ep, call, st, "%lld bytes could not be copied aside", (long long)lay.bytes);
}

/* MPI_Sendrecv (request NULL) and MPI_Isendrecv. */
ENTRY_ENDPOINT_PATH int sendrecv_endpoints(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                           int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                           int source, int recvtag, MPI_Comm comm, MPI_Status *status,
                                           MPI_Request *request, int nonblocking)
{
    ep_endpoint_t *ep;
    int rc;
    if ((rc = entry_endpoint(call, comm, &ep)) ||
        (rc = entry_check_send(ep, call, sendbuf, sendcount, sendtype, dest, sendtag)) ||
        (rc = entry_check_recv(ep, call, recvbuf, recvcount, recvtype, source, recvtag)))
        return rc;
    if (nonblocking && !request)
        return entry_raise(ep, call, MPI_ERR_ARG, "request pointer is NULL");
    if (nonblocking)
        return isendrecv_start(call, ep, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                               source, recvtag, NULL, request);
    return sendrecv_run(call, ep, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                        recvtag, status);
}

/* MPI_Sendrecv_replace and MPI_Isendrecv_replace: the send goes from a
 * copy (replace_copy), which the pair request of the non-blocking call
 * owns. */
ENTRY_ENDPOINT_PATH int sendrecv_replace_endpoints(const char *call, void *buf, int count, MPI_Datatype datatype,
                                                   int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                                                   MPI_Status *status, MPI_Request *request, int nonblocking)
{
    ep_endpoint_t *ep;
    void *copy = NULL;
    int ccount = 0, rc;
    MPI_Datatype ctype = MPI_BYTE;
    if ((rc = entry_endpoint(call, comm, &ep)) ||
        (rc = entry_check_send(ep, call, buf, count, datatype, dest, sendtag)) ||
        (rc = entry_check_recv(ep, call, buf, count, datatype, source, recvtag)))
        return rc;
    if (nonblocking && !request)
        return entry_raise(ep, call, MPI_ERR_ARG, "request pointer is NULL");
    if ((rc = replace_copy(call, ep, buf, count, datatype, &copy, &ccount, &ctype)))
        return rc;
    if (nonblocking) {
        rc = isendrecv_start(call, ep, copy, ccount, ctype, dest, sendtag, buf, count, datatype, source, recvtag, copy,
                             request);
    } else {
        rc = sendrecv_run(call, ep, copy, ccount, ctype, dest, sendtag, buf, count, datatype, source, recvtag, status);
        free(copy);
    }
    /* A send still on holds the type (ep_request_hold_type): it goes then. */
    if (ctype != MPI_BYTE)
        MPI_Type_free(&ctype);
    return rc;
}

/* ---- probes ------------------------------------------------------------------ */

ENTRY_ENDPOINT_PATH int iprobe_endpoints(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    static const char call[] = "MPI_Iprobe";
    ep_endpoint_t *ep;
    int rc;
    if ((rc = entry_endpoint(call, comm, &ep)) || (rc = entry_check_source(ep, call, source)) ||
        (rc = entry_check_recv_tag(ep, call, tag)))
        return rc;
    MPI_Status st;
    ep_iprobe(ep, source, tag, flag, &st);
    if (*flag)
        entry_status_give(status, &st);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int probe_endpoints(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    static const char call[] = "MPI_Probe";
    ep_endpoint_t *ep;
    int rc, flag = 0;
    if ((rc = entry_endpoint(call, comm, &ep)) || (rc = entry_check_source(ep, call, source)) ||
        (rc = entry_check_recv_tag(ep, call, tag)))
        return rc;
    MPI_Status st;
    ep_diag_enter(ep, call);
    EP_BACKOFF_UNTIL((ep_iprobe(ep, source, tag, &flag, &st), flag)); /* a probe drives progress */
    ep_diag_leave(ep);
    entry_status_give(status, &st);
    return MPI_SUCCESS;
}

static int improbe_common(const char *call, int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                          MPI_Status *status, int blocking)
{
    ep_endpoint_t *ep;
    ep_msg_t *m;
    int rc, f = 0;
    if ((rc = entry_endpoint(call, comm, &ep)) || (rc = entry_check_source(ep, call, source)) ||
        (rc = entry_check_recv_tag(ep, call, tag)))
        return rc;
    if (!message)
        return entry_raise(ep, call, MPI_ERR_ARG, "message pointer is NULL");
    ep_status_t st;
    MPI_Status found;
    if (blocking)
        ep_diag_enter(ep, call);
    EP_BACKOFF_UNTIL((st = ep_improbe(ep, source, tag, &f, &m, &found)) || f || !blocking);
    if (blocking)
        ep_diag_leave(ep);
    if (st)
        return entry_raise_status(ep, call, st, NULL);
    if (flag)
        *flag = f;
    if (f) {
        *message = source == MPI_PROC_NULL ? MPI_MESSAGE_NO_PROC : m->handle;
        entry_status_give(status, &found);
    }
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    if (!entry_comm_is_ep(comm))
        return PMPI_Improbe(source, tag, comm, flag, message, status);
    return improbe_common("MPI_Improbe", source, tag, comm, flag, message, status, 0);
}

ENTRY_API int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    if (!entry_comm_is_ep(comm))
        return PMPI_Mprobe(source, tag, comm, message, status);
    return improbe_common("MPI_Mprobe", source, tag, comm, NULL, message, status, 1);
}

/* Resolves an endpoint message handle into a receive request r. */
static int mrecv_start(const char *call, void *buf, int count, MPI_Datatype type, MPI_Message *message, ep_request_t *r,
                       int with_handle, ep_request_t **out)
{
    ep_msg_t *m = ep_msg_get(*message);
    int rc;
    if (!m)
        return entry_raise(NULL, call, MPI_ERR_REQUEST, "invalid message handle " EP_HFMT " (already received?)",
                           EP_HARG(*message));
    if ((rc = entry_check_count(m->ep, call, count)) || (rc = entry_check_type(m->ep, call, type)) ||
        (rc = entry_check_buf(m->ep, call, buf, count, type)))
        return rc;
    if (with_handle && !(r = ep_request_new(EP_REQ_RECV, m->ep, 1)))
        return entry_raise(m->ep, call, MPI_ERR_NO_MEM, "out of request handles");
    if (!with_handle)
        ep_request_init(r, EP_REQ_RECV, m->ep);
    ep_request_describe_recv(r, buf, count, type, m->link.source, m->link.tag);
    if (with_handle)
        ep_request_hold_type(r);
    ep_endpoint_t *ep = m->ep;
    ep_status_t st = ep_mrecv_start(r, m); /* consumes m and its handle */
    *message = MPI_MESSAGE_NULL;
    if (st) {
        if (with_handle)
            ep_request_destroy(r);
        return entry_raise_status(ep, call, st, NULL);
    }
    *out = r;
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int mrecv_endpoints(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                                        MPI_Status *status)
{
    static const char call[] = "MPI_Mrecv";
    ep_request_t r, *rp;
    int rc;
    if ((rc = mrecv_start(call, buf, count, datatype, message, &r, 0, &rp)))
        return rc;
    ep_request_wait(&r);
    entry_status_give(status, &r.status);
    return entry_request_error(&r, call);
}

ENTRY_API int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
    if (!message || !ep_message_handle_is_ep(*message))
        return PMPI_Mrecv(buf, count, datatype, message, status);
    return mrecv_endpoints(buf, count, datatype, message, status);
}

ENTRY_API int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request)
{
    static const char call[] = "MPI_Imrecv";
    ep_request_t *rp;
    int rc;
    if (!message || !ep_message_handle_is_ep(*message))
        return PMPI_Imrecv(buf, count, datatype, message, request);
    if (!request)
        return entry_raise(NULL, call, MPI_ERR_ARG, "request pointer is NULL");
    if ((rc = mrecv_start(call, buf, count, datatype, message, NULL, 1, &rp)))
        return rc;
    *request = rp->handle;
    return MPI_SUCCESS;
}

/* ---- buffered-send space ------------------------------------------------- */

ENTRY_API int MPI_Buffer_attach(void *buffer, int size)
{
    int rc = PMPI_Buffer_attach(buffer, size);
    if (rc == MPI_SUCCESS)
        ep_bsend_attach((size_t)size);
    return rc;
}

ENTRY_API int MPI_Buffer_detach(void *buffer_addr, int *size)
{
    ep_bsend_detach();
    return PMPI_Buffer_detach(buffer_addr, size);
}

/* The large-count forms: one buffer, whichever form attached it. */
#if EP_HAVE_MPI_Buffer_attach_c /* MPI 4.0's large counts (not in Open MPI) */
ENTRY_API int MPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    int rc = PMPI_Buffer_attach_c(buffer, size);
    if (rc == MPI_SUCCESS)
        ep_bsend_attach((size_t)size);
    return rc;
}
#endif

#if EP_HAVE_MPI_Buffer_detach_c
ENTRY_API int MPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    ep_bsend_detach();
    return PMPI_Buffer_detach_c(buffer_addr, size);
}
#endif

#if HAVE_DECL_MPI_BUFFER_FLUSH
/* MPI 4.1: the endpoints' buffered messages too. */
ENTRY_API int MPI_Buffer_flush(void)
{
    ep_bsend_flush();
    return PMPI_Buffer_flush();
}

/* Its request is MPICH's, which knows nothing of the endpoints' messages:
 * refused while any of them is in the buffer, rather than completing early. */
ENTRY_API int MPI_Buffer_iflush(MPI_Request *request)
{
    size_t n = ep_bsend_in_flight();
    if (n)
        return entry_raise(NULL, "MPI_Buffer_iflush", MPI_ERR_UNSUPPORTED_OPERATION,
                           "%zu bytes of endpoints' buffered sends are still in the buffer; MPI_Buffer_flush waits "
                           "for them",
                           n);
    return PMPI_Buffer_iflush(request);
}
#endif

/* The entry points whose dispatch is data (maint/dispatch.txt). */
#include "p2p.entry.gen.inc"
