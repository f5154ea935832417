/* Helpers shared by the MPI entry points: handle classification, argument
 * checks, and raising errors through the right error handler.
 *
 * Every entry point first asks whether any handle argument is an endpoint
 * handle (or, in world mode, MPI_COMM_WORLD / MPI_COMM_SELF, which stand for
 * the calling thread's endpoint).  If none is, it calls PMPI_ directly: that
 * is the pass-through path and costs a few compares.  Otherwise it checks the
 * arguments once, here, and calls the engine. */
#ifndef ENTRY_H
#define ENTRY_H

#include "config.h"   /* HAVE_DECL_: the functions of this MPI release */
#include "have.gen.h" /* EP_HAVE_: the functions of this MPI that epmpi intercepts by hand */

#include "coll/coll.h"
#include "core/comm.h"
#include "engine.h"
#include "epmpi.h"
#include "base/error.h"
#include "abi/handle.h"
#include "abi/large.h"
#include "core/request.h"
#include "base/thread.h"
#include "core/world.h"

#include <limits.h>
#include <mpi.h>

#define ENTRY_API __attribute__((visibility("default")))

/* The endpoint part of an entry point that passes classic handles
 * straight to PMPI_: kept out of line, the entry point tests its handles
 * and jumps to PMPI_ before saving any register.  Inlined, a large
 * endpoint part made GCC save registers first, on the classic path too
 * (test/passthrough_entry.sh guards it). */
#define ENTRY_ENDPOINT_PATH static __attribute__((noinline))

/* 1 when comm must be handled by the engine. */
static inline int entry_comm_is_ep(MPI_Comm c)
{
    return ep_comm_handle_is_ep(c) || (ep_world.nep && (c == MPI_COMM_WORLD || c == MPI_COMM_SELF));
}

/* Resolves an engine communicator argument to its endpoint.  Returns
 * MPI_SUCCESS, or the error code after raising it (dead handle, or a thread
 * without a world endpoint). */
int entry_endpoint_any(const char *call, MPI_Comm c, ep_endpoint_t **out);

/* The same, with the usual cases inline (every message goes through it):
 * MPI_COMM_WORLD in world mode on a thread that has an endpoint, or an
 * endpoint communicator handle, with EPMPI_STATS off. */
static inline __attribute__((always_inline)) int entry_endpoint(const char *call, MPI_Comm c, ep_endpoint_t **out)
{
    ep_endpoint_t *ep = NULL;
    if (c == MPI_COMM_WORLD) {
        int t = ep_thread_index();
        if (t < ep_world.nep)
            ep = ep_world.ep[t];
    } else if (ep_comm_handle_is_ep(c)) {
        ep = ep_endpoint_get(c);
    }
    if (!ep || ep->stats)
        return entry_endpoint_any(call, c, out);
    *out = ep;
    return MPI_SUCCESS;
}

/* The same for an endpoint window handle (MPI_ERR_WIN, raised on the
 * caller's MPI_COMM_WORLD: a dead window has no handler). */
struct ep_win_ep;
int entry_win(const char *call, MPI_Win win, struct ep_win_ep **out);

/* In an entry point: classic communicators go straight to the PMPI_
 * expression `pass`; endpoint ones resolve to ep, or the entry point
 * returns the raised error. */
#define ENTRY_RESOLVE(call, comm, ep, pass) \
    do {                                    \
        if (!entry_comm_is_ep(comm))        \
            return (pass);                  \
        ENTRY_RESOLVE_EP(call, comm, ep);   \
    } while (0)

/* The same once comm is known to be an endpoint communicator. */
#define ENTRY_RESOLVE_EP(call, comm, ep)             \
    do {                                             \
        int rc_ = entry_endpoint(call, comm, &(ep)); \
        if (rc_)                                     \
            return rc_;                              \
    } while (0)

/* Raises an error of class cls on endpoint ep (NULL: no object: the default
 * handler), with the message "<call>: <formatted text>"; returns the code
 * the handler leaves (when it returns). */
int entry_raise(ep_endpoint_t *ep, const char *call, int cls, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same, on handler eh of an object of epmpi's other than an endpoint
 * (a window), which the handler is given as `handle`. */
int entry_raise_on(MPI_Errhandler eh, intptr_t handle, const char *call, int cls, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Same, on the handler of a classic communicator. */
int entry_raise_classic(MPI_Comm classic, const char *call, int cls, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* In world mode: raises code, tied to no communicator, on the calling
 * thread's MPI_COMM_WORLD (endpoint 0's for a thread without one). */
int entry_raise_world(int code);
/* Same, for an engine status, with its default text when fmt is NULL. */
int entry_raise_status(ep_endpoint_t *ep, const char *call, ep_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Gives the program status *from in *st (unless MPI_STATUS_IGNORE) for a
 * call that completes or probes one operation: MPI_ERROR stays as the
 * program left it (MPI-4.0 3.2.5: only the calls completing several
 * requests set it, and they do so themselves). */
static inline void entry_status_give(MPI_Status *st, const MPI_Status *from)
{
    if (st != MPI_STATUS_IGNORE) {
        int keep = st->MPI_ERROR;
        *st = *from;
        st->MPI_ERROR = keep;
    }
}

/* A send of count elements could not start (status st): for want of
 * attached buffer space, the message says how many elements. */
int entry_raise_start(ep_endpoint_t *ep, const char *call, ep_status_t st, int count);
/* "not supported on endpoint <what>" for a handle of a function that does
 * not take endpoints (yet). */
int entry_unsupported(const char *call, const char *what, int cls);
/* The same for an endpoint communicator argument, raised on its handler. */
int entry_unsupported_comm(const char *call, MPI_Comm comm);

/* The large-count (_c) forms with count arrays run their int form on
 * endpoints (generated in entries.gen.c): the arrays are copied to ints.
 * How many entries an array has, by what it describes: */
typedef enum {
    ENTRY_PEERS,         /* every rank addressed (the remote group of an intercommunicator) */
    ENTRY_PEERS_SEND,    /* the same, none when sendbuf is MPI_IN_PLACE (all-to-alls) */
    ENTRY_PEERS_AT_ROOT, /* the same at the root, none elsewhere (Gatherv, Scatterv) */
    ENTRY_GROUP,         /* the caller's own group (Reduce_scatter) */
    ENTRY_OUT_NEIGHBORS, /* the topology's out- and in-neighbours */
    ENTRY_IN_NEIGHBORS,
} entry_peers_t;
int entry_peers(ep_endpoint_t *ep, entry_peers_t kind, int root, const void *sendbuf);
/* *out: an int copy of n counts / displacements (NULL for NULL; the
 * caller frees it), or *large set to 1 when one does not fit: the call then
 * takes its body for such counts (entry_large_<call>, below). */
int entry_counts_to_int(ep_endpoint_t *ep, const char *call, const MPI_Count *v, int n, int **out, int *large);
int entry_displs_to_int(ep_endpoint_t *ep, const char *call, const MPI_Aint *v, int n, int **out, int *large);

/* Counts beyond INT_MAX (the _c forms), as MPI's large-count technique
 * does it: a block of count elements becomes one element of a derived
 * type made for it, which the int form and the engine then move like any
 * other (64-bit sizes throughout; more than 2 GiB between processes goes
 * through MPICH's _c all-to-all).
 *
 * entry_large_type: *large gets a contiguous type of count elements of t, or
 * MPI_DATATYPE_NULL when count fits in an int or buf is MPI_IN_PLACE (t
 * and count are then used as they are).  Errors are raised on comm's
 * handler.  Free *large with entry_large_type_free. */
int entry_large_type(const char *call, MPI_Comm comm, const void *buf, MPI_Count count, MPI_Datatype t,
                     MPI_Datatype *large);
void entry_large_type_free(MPI_Datatype *large);
/* The same for a file call (file.c), errors on the file's handler. */
int entry_file_large_type(const char *call, MPI_File fh, MPI_Count count, MPI_Datatype t, MPI_Datatype *large);
/* What both make: *out, a committed type of one block of count elements of
 * t at disp bytes; NULL, or the step that failed ("make", "commit"). */
const char *entry_large_type_new(MPI_Count count, MPI_Count disp, MPI_Datatype t, MPI_Datatype *out);
/* In the generated _c forms: the int count to pass, and its type. */
#define ENTRY_LARGE_COUNT(count, large) ((large) != MPI_DATATYPE_NULL ? 1 : (int)(count))
#define ENTRY_LARGE_TYPE(type, large) ((large) != MPI_DATATYPE_NULL ? (large) : (type))

/* The same for a count array: n blocks, block i counts[i] elements of
 * types[i] (or of type when types is NULL) at displs[i] * unit bytes from
 * the buffer, become one element each of a type of its own (MPI_BYTE for
 * an empty block), with counts 1 or 0 and displacements 0. */
typedef struct entry_large_blocks {
    int n;
    int *counts;       /* 1 or 0 */
    int *displs;       /* zeros */
    MPI_Aint *bdispls; /* zeros, for the byte-displacement forms */
    MPI_Datatype *types;
} entry_large_blocks_t;
int entry_large_blocks(ep_endpoint_t *ep, const char *call, const char *what, int n, const MPI_Count *counts,
                       const MPI_Aint *displs, MPI_Aint unit, MPI_Datatype type, const MPI_Datatype *types,
                       entry_large_blocks_t *w);
void entry_large_blocks_free(entry_large_blocks_t *w);

/* The array _c forms' bodies for counts beyond INT_MAX (pmpi/coll.c); the
 * blocking form passes ENTRY_BLOCKING as the request. */
int entry_large_Gatherv(const char *call, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                        int root, MPI_Comm comm, MPI_Request *request);
int entry_large_Scatterv(const char *call, const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm, MPI_Request *request);
int entry_large_Allgatherv(const char *call, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Request *request);
int entry_large_Alltoallv(const char *call, const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                          MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int entry_large_Alltoallw(const char *call, const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                          const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                          MPI_Request *request);
int entry_large_Neighbor_allgatherv(const char *call, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int entry_large_Neighbor_alltoallv(const char *call, const void *sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Request *request);
int entry_large_Neighbor_alltoallw(const char *call, const void *sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request);

/* The reductions' bodies for counts beyond INT_MAX, scalar (pmpi/coll.c
 * checks the arguments, the engine runs pieces of int counts:
 * src/coll/coll_seq.c); the blocking form passes ENTRY_BLOCKING, an init
 * form entry_persistent's request. */
int entry_large_Reduce(const char *call, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm, MPI_Request *request);
int entry_large_Allreduce(const char *call, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, MPI_Request *request);
int entry_large_Scan(const char *call, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Request *request);
int entry_large_Exscan(const char *call, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Request *request);
int entry_large_Reduce_scatter_block(const char *call, const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request);
int entry_large_Reduce_scatter(const char *call, const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request);

/* Argument checks; each returns MPI_SUCCESS or the raised code. */
int entry_check_count(ep_endpoint_t *ep, const char *call, MPI_Count count);
int entry_check_type(ep_endpoint_t *ep, const char *call, MPI_Datatype t);
int entry_check_buf(ep_endpoint_t *ep, const char *call, const void *buf, MPI_Count count, MPI_Datatype t);
int entry_check_dest(ep_endpoint_t *ep, const char *call, int dest);
int entry_check_source(ep_endpoint_t *ep, const char *call, int source);
int entry_check_send_tag(ep_endpoint_t *ep, const char *call, int tag);
int entry_check_recv_tag(ep_endpoint_t *ep, const char *call, int tag);
int entry_check_root(ep_endpoint_t *ep, const char *call, int root);
int entry_check_op(ep_endpoint_t *ep, const char *call, MPI_Op op);
/* Calls that take intracommunicators only (or not yet intercommunicators). */
int entry_check_intra(ep_endpoint_t *ep, const char *call);

/* The send-side checks together: buffer, count, type, dest, tag. */
int entry_check_send_all(ep_endpoint_t *ep, const char *call, const void *buf, int count, MPI_Datatype t, int dest,
                         int tag);
int entry_check_recv_all(ep_endpoint_t *ep, const char *call, const void *buf, int count, MPI_Datatype t, int source,
                         int tag);

/* The same, inline for the usual case (a builtin type, a buffer, ranks and
 * tag in range), which needs no call; anything else takes the full checks,
 * which also name the problem. */
static inline int entry_args_usual(const ep_endpoint_t *ep, const void *buf, int count, MPI_Datatype t, int peer)
{
    return count >= 0 && ep_datatype_builtin_size(t) >= 0 && (buf || !count) &&
           (peer == MPI_PROC_NULL || ((unsigned)peer < (unsigned)ep_remote_size(ep)));
}

static inline int entry_check_send(ep_endpoint_t *ep, const char *call, const void *buf, int count, MPI_Datatype t,
                                   int dest, int tag)
{
    if ((unsigned)tag <= (unsigned)ep_tag_ub && entry_args_usual(ep, buf, count, t, dest))
        return MPI_SUCCESS;
    return entry_check_send_all(ep, call, buf, count, t, dest, tag);
}

static inline int entry_check_recv(ep_endpoint_t *ep, const char *call, const void *buf, int count, MPI_Datatype t,
                                   int source, int tag)
{
    if (((unsigned)tag <= (unsigned)ep_tag_ub || tag == MPI_ANY_TAG) &&
        entry_args_usual(ep, buf, count, t, source == MPI_ANY_SOURCE ? MPI_PROC_NULL : source))
        return MPI_SUCCESS;
    return entry_check_recv_all(ep, call, buf, count, t, source, tag);
}

/* Error of a completed endpoint request (truncation...), raised on its
 * endpoint with a message naming call; MPI_SUCCESS when there is none. */
int entry_request_error(ep_request_t *r, const char *call);
/* The same code, minted without calling the handler (the multiple-completion
 * calls report through MPI_ERR_IN_STATUS). */
int entry_request_error_code(const ep_request_t *r, const char *call);

/* Runs the collective a describes: to completion when req is ENTRY_BLOCKING
 * (the blocking form); as a persistent request, inactive, when req came
 * from entry_persistent (the init form); else as a non-blocking operation
 * whose request goes to *req.  Errors are raised on ep for call. */
extern MPI_Request entry_blocking_slot;
#define ENTRY_BLOCKING (&entry_blocking_slot)
int entry_coll_go(ep_endpoint_t *ep, const char *call, ep_coll_args_t *a, MPI_Request *req);
/* The same for a call made of several (src/coll/coll.h; NULL: out of memory),
 * which goes with the request, or here. */
int entry_coll_seq_go(ep_endpoint_t *ep, const char *call, ep_coll_seq_t *s, MPI_Request *req);

/* The request argument an init form (MPI_Bcast_init, ...) passes to the
 * body it shares with the non-blocking form: a slot of this thread that
 * entry_coll_go recognises, and that remembers where the persistent
 * request's handle goes (request, the user's; NULL stays NULL, which the
 * body reports).  The hints in info are accepted and not used. */
MPI_Request *entry_persistent(MPI_Request *request, MPI_Info info);

/* The hints of a communicator's info in (MPI_INFO_NULL: none) that it
 * keeps, in a new info *out: those MPICH knows for communicators, as MPICH
 * ignores the others (MPI-4.0 7.4.4 lets an implementation ignore what it
 * does not use).  An MPI error code when an info call fails. */
int entry_comm_hints(MPI_Info in, MPI_Info *out);

#endif
