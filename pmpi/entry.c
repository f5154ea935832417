#include "entry.h"

#include "core/datatype.h"
#include "diag/diag.h"
#include "core/op.h"
#include "base/thread.h"
#include "comm/comm_create.h"
#include "comm/threadcomm.h"
#include "coll/topo.h"
#include "rma/win.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The handler of classic communicator c (MPI_COMM_WORLD's when c is null). */
static int invoke_classic(MPI_Comm c, int code)
{
    MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
    if (c == MPI_COMM_NULL || PMPI_Comm_get_errhandler(c, &eh) != MPI_SUCCESS) {
        c = MPI_COMM_WORLD;
        PMPI_Comm_get_errhandler(c, &eh);
    }
    return ep_errhandler_invoke(eh, c, code);
}

/* The code of class cls with the message "<call>: <formatted text>". */
static int code_v(const char *call, int cls, const char *fmt, va_list ap)
{
    char msg[480];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return ep_error_code_make(cls, "%s: %s", call, msg);
}

int entry_raise_on(MPI_Errhandler eh, intptr_t handle, const char *call, int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = code_v(call, cls, fmt, ap);
    va_end(ap);
    return ep_errhandler_invoke(eh, (MPI_Comm)handle, code);
}

static int raise_v(ep_endpoint_t *ep, MPI_Comm classic, const char *call, int cls, const char *fmt, va_list ap)
{
    int code = code_v(call, cls, fmt, ap);
    if (ep)
        return ep_errhandler_invoke(ep->errhandler, ep->user_handle, code);
    if (classic == MPI_COMM_NULL && ep_world_mode())
        return entry_raise_world(code);
    return invoke_classic(classic, code);
}

int entry_raise_world(int code)
{
    if (!ep_world_mode()) /* torn down by MPI_Finalize */
        return ep_errhandler_invoke(MPI_ERRORS_ARE_FATAL, MPI_COMM_WORLD, code);
    int t = ep_thread_index_peek();
    ep_endpoint_t *w = ep_world.ep[t < ep_world.nep ? t : 0];
    return ep_errhandler_invoke(w->errhandler, w->user_handle, code);
}

int entry_raise_classic(MPI_Comm classic, const char *call, int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = raise_v(NULL, classic, call, cls, fmt, ap);
    va_end(ap);
    return code;
}

int entry_raise(ep_endpoint_t *ep, const char *call, int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = raise_v(ep, MPI_COMM_NULL, call, cls, fmt, ap);
    va_end(ap);
    return code;
}

int entry_raise_status(ep_endpoint_t *ep, const char *call, ep_status_t st, const char *fmt, ...)
{
    char detail[200] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
    }
    return entry_raise(ep, call, ep_status_class(st), "%s%s%s", ep_status_take_text(st), *detail ? ": " : "", detail);
}

int entry_raise_start(ep_endpoint_t *ep, const char *call, ep_status_t st, int count)
{
    if (st == EP_ERR_BSEND_SPACE)
        return entry_raise_status(ep, call, st, "a buffered send of %d elements", count);
    return entry_raise_status(ep, call, st, NULL);
}

int entry_unsupported(const char *call, const char *what, int cls)
{
    return entry_raise(NULL, call, cls, "not supported on endpoint %s", what);
}

int entry_peers(ep_endpoint_t *ep, entry_peers_t kind, int root, const void *sendbuf)
{
    const ep_topo_t *t = ep->topo;
    switch (kind) {
    case ENTRY_PEERS:
        return ep_remote_size(ep);
    case ENTRY_PEERS_SEND:
        return sendbuf == MPI_IN_PLACE ? 0 : ep_remote_size(ep);
    case ENTRY_PEERS_AT_ROOT:
        return (ep->comm->inter ? root == MPI_ROOT : root == ep_local_rank(ep)) ? ep_remote_size(ep) : 0;
    case ENTRY_GROUP:
        return ep_local_size(ep);
    case ENTRY_OUT_NEIGHBORS:
        return t ? t->outdegree : 0;
    case ENTRY_IN_NEIGHBORS:
        return t ? t->indegree : 0;
    }
    return 0;
}

static long long count_at(const void *v, int i) { return ((const MPI_Count *)v)[i]; }
static long long aint_at(const void *v, int i) { return ((const MPI_Aint *)v)[i]; }

/* n values (at(v, i)) as ints, or *large set when one does not fit (the
 * caller then takes its form for such values). */
static int to_ints(ep_endpoint_t *ep, const char *call, const void *v, int n, long long (*at)(const void *, int),
                   const char *what, int **out, int *large)
{
    *out = NULL;
    if (!v)
        return MPI_SUCCESS;
    if (!(*out = malloc(sizeof **out * (size_t)(n > 0 ? n : 1))))
        return entry_raise(ep, call, MPI_ERR_NO_MEM, "out of memory converting %d %ss", n, what);
    for (int i = 0; i < n; i++) {
        long long x = at(v, i);
        if (x > INT_MAX || x < INT_MIN) {
            *large = 1;
            return MPI_SUCCESS;
        }
        (*out)[i] = (int)x;
    }
    return MPI_SUCCESS;
}

int entry_counts_to_int(ep_endpoint_t *ep, const char *call, const MPI_Count *v, int n, int **out, int *large)
{
    return to_ints(ep, call, v, n, count_at, "count", out, large);
}

int entry_displs_to_int(ep_endpoint_t *ep, const char *call, const MPI_Aint *v, int n, int **out, int *large)
{
    return to_ints(ep, call, v, n, aint_at, "displacement", out, large);
}

/* A committed type for count elements of t at byte displacement disp. */
const char *entry_large_type_new(MPI_Count count, MPI_Count disp, MPI_Datatype t, MPI_Datatype *out)
{
    if (ep_pmpi_type_create_hindexed_c(1, &count, &disp, t, out) != MPI_SUCCESS)
        return "make";
    if (PMPI_Type_commit(out) != MPI_SUCCESS) {
        PMPI_Type_free(out);
        return "commit";
    }
    return NULL;
}

static int large_block(ep_endpoint_t *ep, const char *call, MPI_Count count, MPI_Count disp, MPI_Datatype t,
                       MPI_Datatype *out)
{
    int rc;
    const char *failed;
    if ((rc = entry_check_type(ep, call, t)))
        return rc;
    if (count < 0)
        return entry_raise(ep, call, MPI_ERR_COUNT, "count %lld is negative", (long long)count);
    if ((failed = entry_large_type_new(count, disp, t, out)))
        return entry_raise(ep, call, MPI_ERR_INTERN, "cannot %s a datatype of %lld elements", failed, (long long)count);
    return MPI_SUCCESS;
}

int entry_large_type(const char *call, MPI_Comm comm, const void *buf, MPI_Count count, MPI_Datatype t,
                     MPI_Datatype *large)
{
    ep_endpoint_t *ep = NULL; /* no communicator (MPI_Mrecv_c): the default handler */
    int rc;
    *large = MPI_DATATYPE_NULL;
    if ((count <= INT_MAX && count >= INT_MIN) || buf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    if (comm != MPI_COMM_NULL && (rc = entry_endpoint(call, comm, &ep)))
        return rc;
    return large_block(ep, call, count, 0, t, large);
}

/* MPI_Type_free (the entry point): a non-blocking call may still hold the
 * type, which then goes when the call is over. */
void entry_large_type_free(MPI_Datatype *large)
{
    if (*large != MPI_DATATYPE_NULL && *large != MPI_BYTE)
        MPI_Type_free(large);
    *large = MPI_DATATYPE_NULL;
}

int entry_large_blocks(ep_endpoint_t *ep, const char *call, const char *what, int n, const MPI_Count *counts,
                       const MPI_Aint *displs, MPI_Aint unit, MPI_Datatype type, const MPI_Datatype *types,
                       entry_large_blocks_t *w)
{
    size_t room = n > 0 ? (size_t)n : 1;
    memset(w, 0, sizeof *w);
    if (n > 0 && (!counts || !displs))
        return entry_raise(ep, call, MPI_ERR_ARG, "%s counts or displacements are NULL", what);
    w->counts = calloc(room, sizeof *w->counts);
    w->displs = calloc(room, sizeof *w->displs);
    w->bdispls = calloc(room, sizeof *w->bdispls);
    w->types = malloc(sizeof *w->types * room);
    if (!w->counts || !w->displs || !w->bdispls || !w->types) {
        entry_large_blocks_free(w);
        return entry_raise(ep, call, MPI_ERR_NO_MEM, "out of memory describing %d blocks", n);
    }
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        w->types[i] = MPI_BYTE; /* an empty block, and what entry_large_blocks_free leaves alone */
        w->n = i + 1;
        if (counts[i] < 0)
            rc = entry_raise(ep, call, MPI_ERR_COUNT, "%s count %lld (entry %d) is negative", what,
                             (long long)counts[i], i);
        else if (counts[i] > 0 && !(rc = large_block(ep, call, counts[i], (MPI_Count)displs[i] * unit,
                                                     types ? types[i] : type, &w->types[i])))
            w->counts[i] = 1;
        if (rc) {
            entry_large_blocks_free(w);
            return rc;
        }
    }
    return MPI_SUCCESS;
}

void entry_large_blocks_free(entry_large_blocks_t *w)
{
    for (int i = 0; i < w->n; i++)
        entry_large_type_free(&w->types[i]);
    free(w->counts);
    free(w->displs);
    free(w->bdispls);
    free(w->types);
    memset(w, 0, sizeof *w);
}

int entry_unsupported_comm(const char *call, MPI_Comm comm)
{
    ep_endpoint_t *ep;
    int rc = entry_endpoint(call, comm, &ep);
    if (rc)
        return rc;
    return entry_raise(ep, call, MPI_ERR_COMM, "not supported on endpoint communicators");
}

int entry_endpoint_any(const char *call, MPI_Comm c, ep_endpoint_t **out)
{
    ep_endpoint_t *ep;
    if (c == MPI_COMM_WORLD || c == MPI_COMM_SELF) {
        int t = ep_thread_index();
        if (t >= ep_world.nep) {
            *out = NULL;
            if (ep_thread_by_call)
                return entry_raise(NULL, call, MPI_ERR_COMM,
                                   "this thread has no endpoint: the %d of its process (EPMPI_ENDPOINTS=%d) are held "
                                   "by other threads (EPMPI_THREADS=first-call: a thread takes one at its first call "
                                   "on MPI_COMM_WORLD or MPI_COMM_SELF and gives it back when it ends)",
                                   ep_world.nep, ep_world.nep);
            return entry_raise(NULL, call, MPI_ERR_COMM,
                               "OpenMP thread %d has no endpoint: EPMPI_ENDPOINTS=%d gives each process endpoints "
                               "for threads 0 to %d only",
                               t, ep_world.nep, ep_world.nep - 1);
        }
        ep = ep_world.ep[c == MPI_COMM_WORLD ? t : ep_world.nep + t];
    } else {
        ep = ep_endpoint_get(c);
    }
    if (!ep) {
        /* A thread communicator: the calling thread's endpoint of it. */
        ep_threadcomm_t *tc = ep_threadcomm_get(c);
        if (tc && !(ep = ep_threadcomm_mine(tc))) {
            *out = NULL;
            return entry_raise(NULL, call, MPI_ERR_COMM,
                               "this thread is not inside thread communicator " EP_HFMT ": call MPIX_Threadcomm_start "
                               "first (and MPIX_Threadcomm_finish last)",
                               EP_HARG(c));
        }
    }
    *out = ep;
    if (ep && ep->stats)
        ep_stats_enter(ep->stats);
    if (!ep)
        return entry_raise(NULL, call, MPI_ERR_COMM, "invalid communicator " EP_HFMT " (freed or never created)",
                           EP_HARG(c));
    return MPI_SUCCESS;
}

int entry_win(const char *call, MPI_Win win, ep_win_ep_t **out)
{
    if ((*out = ep_win_get(win)))
        return MPI_SUCCESS;
    return entry_raise(NULL, call, MPI_ERR_WIN, "invalid window " EP_HFMT " (freed already?)", EP_HARG(win));
}

int entry_check_count(ep_endpoint_t *ep, const char *call, MPI_Count count)
{
    return count < 0
               ? entry_raise(ep, call, MPI_ERR_COUNT, "invalid count %lld (must be non-negative)", (long long)count)
               : MPI_SUCCESS;
}

int entry_check_type(ep_endpoint_t *ep, const char *call, MPI_Datatype t)
{
    if (t == MPI_DATATYPE_NULL)
        return entry_raise(ep, call, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
    ep_status_t st = ep_dt_check(t);
    if (st == EP_ERR_NO_MEM)
        return entry_raise(ep, call, MPI_ERR_NO_MEM, "out of memory while learning datatype " EP_HFMT, EP_HARG(t));
    if (st)
        return entry_raise(ep, call, MPI_ERR_TYPE, "invalid datatype " EP_HFMT, EP_HARG(t));
    return MPI_SUCCESS;
}

int entry_check_buf(ep_endpoint_t *ep, const char *call, const void *buf, MPI_Count count, MPI_Datatype t)
{
    /* NULL is MPI_BOTTOM, legal with a derived type of absolute addresses. */
    if (buf == NULL && count > 0 && ep_datatype_builtin_size(t) >= 0)
        return entry_raise(ep, call, MPI_ERR_BUFFER, "buffer is NULL but count is %lld", (long long)count);
    return MPI_SUCCESS;
}

int entry_check_dest(ep_endpoint_t *ep, const char *call, int dest)
{
    int n = ep_remote_size(ep);
    if (dest == MPI_PROC_NULL || (dest >= 0 && dest < n))
        return MPI_SUCCESS;
    return entry_raise(ep, call, MPI_ERR_RANK, "invalid rank %d (the %s has ranks 0 to %d)", dest,
                       ep->comm->inter ? "remote group" : "communicator", n - 1);
}

int entry_check_source(ep_endpoint_t *ep, const char *call, int source)
{
    if (source == MPI_ANY_SOURCE)
        return MPI_SUCCESS;
    return entry_check_dest(ep, call, source);
}

int entry_check_send_tag(ep_endpoint_t *ep, const char *call, int tag)
{
    return tag < 0 || tag > ep_tag_ub
               ? entry_raise(ep, call, MPI_ERR_TAG, "invalid tag %d (tags go from 0 to MPI_TAG_UB = %d)", tag,
                             ep_tag_ub)
               : MPI_SUCCESS;
}

int entry_check_recv_tag(ep_endpoint_t *ep, const char *call, int tag)
{
    return tag == MPI_ANY_TAG ? MPI_SUCCESS : entry_check_send_tag(ep, call, tag);
}

int entry_check_root(ep_endpoint_t *ep, const char *call, int root)
{
    if (ep->comm->inter) {
        int n = ep_remote_size(ep);
        if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < n))
            return MPI_SUCCESS;
        return entry_raise(ep, call, MPI_ERR_ROOT,
                           "invalid root %d (MPI_ROOT, MPI_PROC_NULL or a rank of the remote group, 0 to %d)", root,
                           n - 1);
    }
    if (root >= 0 && root < ep->comm->size)
        return MPI_SUCCESS;
    return entry_raise(ep, call, MPI_ERR_ROOT, "invalid root %d (the communicator has ranks 0 to %d)", root,
                       ep->comm->size - 1);
}

int entry_check_intra(ep_endpoint_t *ep, const char *call)
{
    return ep->comm->inter ? entry_raise(ep, call, MPI_ERR_COMM, "not supported on endpoint intercommunicators")
                           : MPI_SUCCESS;
}

int entry_check_op(ep_endpoint_t *ep, const char *call, MPI_Op op)
{
    int commute;
    if (op == MPI_OP_NULL || ep_op_handle_is_ep(op) || ep_op_commutative(op, &commute) != MPI_SUCCESS)
        return entry_raise(ep, call, MPI_ERR_OP, "invalid reduction operation " EP_HFMT, EP_HARG(op));
    return MPI_SUCCESS;
}

/* A message's datatype: MPICH takes MPI_DATATYPE_NULL for one of no
 * elements (its own test suite sends such messages), and so does epmpi. */
static int check_msg_type(ep_endpoint_t *ep, const char *call, int count, MPI_Datatype t)
{
    return count == 0 && t == MPI_DATATYPE_NULL ? MPI_SUCCESS : entry_check_type(ep, call, t);
}

int entry_check_send_all(ep_endpoint_t *ep, const char *call, const void *buf, int count, MPI_Datatype t, int dest,
                         int tag)
{
    int rc;
    if ((rc = entry_check_count(ep, call, count)) || (rc = check_msg_type(ep, call, count, t)) ||
        (rc = entry_check_buf(ep, call, buf, count, t)) || (rc = entry_check_dest(ep, call, dest)) ||
        (rc = entry_check_send_tag(ep, call, tag)))
        return rc;
    return MPI_SUCCESS;
}

int entry_check_recv_all(ep_endpoint_t *ep, const char *call, const void *buf, int count, MPI_Datatype t, int source,
                         int tag)
{
    int rc;
    if ((rc = entry_check_count(ep, call, count)) || (rc = check_msg_type(ep, call, count, t)) ||
        (rc = entry_check_buf(ep, call, buf, count, t)) || (rc = entry_check_source(ep, call, source)) ||
        (rc = entry_check_recv_tag(ep, call, tag)))
        return rc;
    return MPI_SUCCESS;
}

int entry_request_error_code(const ep_request_t *r, const char *call)
{
    int err = r->status.MPI_ERROR;
    if (err == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (r->kind == EP_REQ_COLL && r->failure)
        return ep_error_code_make(ep_status_class(r->failure), "%s: the collective failed: %s", call,
                                  ep_status_text(r->failure));
    if (r->failure)
        return ep_error_code_make(ep_status_class(r->failure), "%s: %s", call, ep_status_text(r->failure));
    /* MPICH on the direct path, or UCX for a receive it matched, did not say
     * how much arrived (src/p2p/direct.h, src/transport/ucx.c). */
    if (err == MPI_ERR_TRUNCATE && (r->direct || r->sent_bytes <= r->lay.bytes))
        return ep_error_code_make(MPI_ERR_TRUNCATE,
                                  "%s: message truncated: more than %lld bytes arrived from rank %d (tag %d)", call,
                                  (long long)r->lay.bytes, r->status.MPI_SOURCE, r->status.MPI_TAG);
    if (err == MPI_ERR_TRUNCATE)
        return ep_error_code_make(MPI_ERR_TRUNCATE,
                                  "%s: message truncated: %lld bytes arrived from rank %d (tag %d) for a receive "
                                  "buffer of %lld bytes",
                                  call, (long long)r->sent_bytes, r->status.MPI_SOURCE, r->status.MPI_TAG,
                                  (long long)r->lay.bytes);
    return ep_error_code_make(err, "%s: the operation failed inside the transport", call);
}

int entry_request_error(ep_request_t *r, const char *call)
{
    int code = entry_request_error_code(r, call);
    if (code == MPI_SUCCESS)
        return MPI_SUCCESS;
    code = ep_errhandler_invoke(r->ep->errhandler, r->ep->user_handle, code);
    r->status.MPI_ERROR = code;
    return code;
}

MPI_Request entry_blocking_slot;

/* A persistent call's request slot (entry_persistent): the body that
 * receives it runs on this thread before it returns. */
static __thread struct {
    MPI_Request slot;
    MPI_Request *out;
} persistent EP_TLS;

MPI_Request *entry_persistent(MPI_Request *request, MPI_Info info)
{
    (void)info;
    if (!request)
        return NULL;
    persistent.out = request;
    return &persistent.slot;
}

/* Around a blocking collective: its waits are charged to ep and their
 * warnings name the call (ep_diag_call). */
static inline void coll_blocking_begin(ep_endpoint_t *ep, const char *call)
{
    ep_diag_enter(ep, call);
    ep_diag_call = call;
}
static inline void coll_blocking_end(ep_endpoint_t *ep)
{
    ep_diag_call = NULL;
    ep_diag_leave(ep);
}

int entry_coll_go(ep_endpoint_t *ep, const char *call, ep_coll_args_t *a, MPI_Request *req)
{
    ep_status_t st;
    if (req == &persistent.slot)
        return entry_coll_seq_go(ep, call, ep_coll_seq_one(a), req);
    if (!req)
        return entry_raise(ep, call, MPI_ERR_REQUEST, "the request argument is NULL");
    ep_coll_count(ep, a);
    if (req == ENTRY_BLOCKING) {
        coll_blocking_begin(ep, call);
        st = ep_coll_run(ep, a);
        coll_blocking_end(ep);
    } else {
        ep_request_t *r;
        if (!(st = ep_coll_start(ep, a, &r)))
            *req = r->handle;
    }
    return st ? entry_raise_status(ep, call, st, NULL) : MPI_SUCCESS;
}

int entry_coll_seq_go(ep_endpoint_t *ep, const char *call, ep_coll_seq_t *s, MPI_Request *req)
{
    ep_status_t st;
    ep_request_t *r;
    if (req == &persistent.slot) { /* collective even when s is NULL */
        if (!(st = ep_persistent_init(ep, s, &r)))
            *persistent.out = r->handle;
        s = NULL;
    } else if (!req) {
        ep_coll_seq_free(s);
        return entry_raise(ep, call, MPI_ERR_REQUEST, "the request argument is NULL");
    } else if (!s) {
        st = EP_ERR_NO_MEM;
    } else {
        ep_coll_seq_count(ep, s);
        if (req == ENTRY_BLOCKING) {
            coll_blocking_begin(ep, call);
            st = ep_coll_seq_run(ep, s);
            coll_blocking_end(ep);
        } else if (!(st = ep_coll_seq_start(ep, s, &r))) {
            *req = r->handle;
            s = NULL;
        }
    }
    ep_coll_seq_free(s);
    return st ? entry_raise_status(ep, call, st, NULL) : MPI_SUCCESS;
}

/* The communicator assertions MPI-4.0 7.4.4 defines: kept whatever the MPI
 * reports (Open MPI 4.1 reports none of them), so that a program sees the
 * same hints on every MPI. */
static int standard_comm_hint(const char *key)
{
    static const char *const keys[] = {"mpi_assert_no_any_tag", "mpi_assert_no_any_source", "mpi_assert_exact_length",
                                       "mpi_assert_allow_overtaking"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (!strcmp(key, keys[i]))
            return 1;
    return 0;
}

int entry_comm_hints(MPI_Info in, MPI_Info *out)
{
    MPI_Info known = MPI_INFO_NULL;
    int n = 0, rc = PMPI_Info_create(out);
    if (rc != MPI_SUCCESS || in == MPI_INFO_NULL)
        return rc;
    /* The keys the MPI's MPI_Comm_get_info reports are the hints it knows. */
    if ((rc = PMPI_Comm_get_info(MPI_COMM_SELF, &known)) == MPI_SUCCESS)
        rc = PMPI_Info_get_nkeys(in, &n);
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        int len, flag = 0;
        if ((rc = PMPI_Info_get_nthkey(in, k, key)) != MPI_SUCCESS)
            break;
        if (!standard_comm_hint(key) &&
            ((rc = PMPI_Info_get_valuelen(known, key, &len, &flag)) != MPI_SUCCESS || !flag))
            continue; /* the loop ends on an error */
        if ((rc = PMPI_Info_get(in, key, MPI_MAX_INFO_VAL, val, &flag)) == MPI_SUCCESS && flag)
            rc = PMPI_Info_set(*out, key, val);
    }
    if (known != MPI_INFO_NULL)
        PMPI_Info_free(&known);
    if (rc != MPI_SUCCESS)
        PMPI_Info_free(out);
    return rc;
}
