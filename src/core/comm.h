/* Endpoint communicators.
 *
 * An endpoint communicator is one ep_comm_t per process (what the process's
 * endpoints share: the rank map, the process-level PMPI communicator, the
 * collective rendezvous) plus one ep_endpoint_t per local rank (what one
 * handle owns: its rank, its matching queues, its error handler).
 *
 *   rank r  ->  ranks[r] = { proc, lidx }      proc: index into the process
 *                                              list; lidx: endpoint index
 *                                              inside that process
 *   proc p  ->  proc_world[p]                  that process's rank in
 *                                              MPI_COMM_WORLD (the transport)
 *
 * Processes are numbered as in pcomm, the PMPI communicator over exactly the
 * processes that hold ranks; a communicator whose ranks all live in this
 * process has no pcomm (MPI_COMM_NULL) and costs MPICH nothing.  Messages
 * between processes never use pcomm: they travel over the transport
 * communicators of net.c and carry the 64-bit context id `ctx`, unique
 * across the job (the creating leader's world rank in the high half).
 *
 * Lifetime: every field but the endpoints' queues is written once, by the
 * thread that builds the communicator, before any handle is published; the
 * structure is freed when the last local endpoint handle is freed.
 */
#ifndef EP_COMM_H
#define EP_COMM_H

#include "base/error.h"
#include "core/match.h"
#include "core/registry.h"
#include "base/wait.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct ep_comm ep_comm_t;
typedef struct ep_local_coll ep_local_coll_t;

/* Identity of a member (an MPI "process" of the group), for comparisons:
 * a classic process is {0, world rank}; an endpoint made with a fresh
 * identity is {ctx of the communicator that created it, its rank there}.
 * Dup and friends keep identities. */
typedef struct ep_gid {
    uint64_t origin;
    uint64_t index;
} ep_gid_t;

typedef struct ep_rank_loc {
    int32_t proc; /* process index (rank in pcomm) */
    int32_t lidx; /* endpoint index inside that process */
} ep_rank_loc_t;

typedef struct ep_endpoint {
    /* A cache line of its own: the threads of neighbouring endpoints in
     * comm->local must not invalidate each other's queues. */
    _Alignas(64) ep_object_t obj; /* registry header: EP_OBJ_ENDPOINT */
    MPI_Comm handle;              /* this endpoint's handle; MPI_COMM_NULL once freed */
    _Atomic int holds;            /* its handle until freed, plus each request with a handle
                                     made on it until destroyed: the last one to go gives
                                     back the endpoint's share of comm->refs, so a request
                                     outlives MPI_Comm_free (ep_endpoint_release) */
    MPI_Comm user_handle;         /* the handle the application knows it by, passed to its
                                     callbacks: MPI_COMM_WORLD / MPI_COMM_SELF in world mode */
    ep_comm_t *comm;              /* the communicator it belongs to */
    int rank;                     /* its position in comm's rank map: its rank in an
                                     intracommunicator (ep_local_rank for both kinds) */
    int side;                     /* intercommunicators: the group it belongs to (0 or 1) */
    int lidx;                     /* its index among comm's local endpoints */
    /* Read at every poll of a receive: kept off the line of the lock and
     * queues, which senders write. */
    struct ep_lane *_Atomic lanes_in;           /* lanes into it (lane.h), newest first; linked under lock */
    struct ep_lane *_Atomic *_Atomic lanes_out; /* [nlocal] lanes from it, made on first use, or NULL */
    struct ep_ucx_worker *ucx_w;                /* UCX transport: its worker, when comm->ucx (ucx.h) */
    int ucx_slot;                               /* and its receive slot on that worker */
    _Alignas(64) ep_lock_t lock;                /* guards posted and unexpected (wait.h) */
    ep_match_queue_t posted;                    /* receives waiting for a message (ep_request_t) */
    ep_match_queue_t unexpected;                /* messages waiting for a receive (ep_msg_t) */
    _Atomic MPI_Errhandler errhandler;          /* this rank's error handler, held (ep_errhandler_assign) */
    void *attrs;                                /* attribute list (attr.c), guarded by attr_lock */
    pthread_mutex_t attr_lock;                  /* guards attrs */
    MPI_Info info;                              /* hints from MPI_Comm_set_info, or MPI_INFO_NULL */
    struct ep_topo *topo;                       /* its virtual topology (topo.h), or NULL; set once, before its
                                                   owner returns the handle */
    char name[MPI_MAX_OBJECT_NAME];
    uint64_t coll_seq;             /* non-blocking collectives started (coll_drive.c) */
    uint64_t local_seq;            /* calls of the one-process path (coll_local.c) */
    struct ep_stats *stats;        /* its identity's traffic counters (EPMPI_STATS), or NULL */
    _Atomic uintptr_t busy;        /* EPMPI_DEBUG: the thread inside a blocking call on it, or 0 */
    const char *_Atomic busy_call; /* and that call */
    _Atomic int busy_warned;       /* two threads were seen inside at once (reported once) */
} ep_endpoint_t;

/* Rendezvous of the local endpoints for collective operations: a
 * sense-counting barrier and one pointer / integer slot per endpoint.  Only
 * the endpoints of this comm in this process touch it; each collective uses
 * it in phases separated by ep_sync_barrier (coll.h), or, after the actor's
 * step of a blocking one, by the actor's "done" (ep_coll_run). */
typedef struct ep_sync {
    _Atomic unsigned arrived;      /* endpoints arrived in the current phase */
    _Atomic unsigned phase;        /* bumped by the last arrival */
    _Atomic unsigned *entered;     /* [nlocal] the phase each endpoint last entered by ep_sync_enter, + 1:
                                      who is missing, for diagnostics */
    _Atomic int dead;              /* an ep_sync_enter gave up: the counts are out of step for good */
    void *_Atomic *ptr;            /* [nlocal] published pointers */
    _Atomic int64_t *val;          /* [nlocal] published integers */
    void *_Atomic result;          /* the actor's published result */
    _Atomic int status;            /* the actor's ep_status_t */
    _Atomic unsigned done;         /* the phase whose blocking collective the actor has run (ep_coll_run) */
    _Atomic int finished;          /* ... and finished for every local endpoint, statuses in val[] */
    void *_Atomic shared;          /* a large reduction's local fold, folded in shares */
    _Atomic unsigned shared_phase; /* the phase whose call shared belongs to */
    _Atomic int shared_status;     /* the first error of the shares, or EP_OK */
    struct ep_coll_args **args;    /* [nlocal] a blocking collective's arguments, for the actor */
} ep_sync_t;

struct ep_comm {
    uint64_t ctx;                          /* context id, unique in the job */
    int size;                              /* number of ranks */
    int nprocs;                            /* processes holding ranks */
    int myproc;                            /* this process's index */
    int nlocal;                            /* ranks in this process */
    int ranks_by_process;                  /* each process's ranks are contiguous, in process order */
    int inter;                             /* an intercommunicator: ranks[] holds group 0, then group 1 */
    int direct;                            /* one endpoint per process, rank r in process r: point-to-point
                                              goes straight to MPICH over pcomm (direct.h) */
    int ucx;                               /* messages between processes go over UCX (ucx.h), not net.c */
    uint32_t *ucx_addr;                    /* [size] when ucx: each rank's worker (high 16 bits) and slot,
                                              less ucx_delta (a duplicate's are its parent's, ucx.c); c's
                                              own unless they are its shared tables' (ep_comm_shared) */
    uint32_t ucx_delta;                    /* added to the slot of every rank in ucx_addr */
    struct ep_ucx_peer *ucx_peer;          /* [size] when ucx with node inboxes: where a message to each
                                              rank goes (ucx.c); owned as ucx_addr */
    struct ep_ucx_setup *ucx_setup;        /* while ucx.c exchanges the addresses of a non-blocking construction */
    int group_off[2];                      /* where each group starts in ranks[] ({0, 0} for intracomms) */
    int group_size[2];                     /* each group's size ({size, size} for intracomms) */
    struct ep_rank_tables *_Atomic tables; /* the six tables below once shared with duplicates (comm.c), or NULL */
    ep_rank_loc_t *ranks;                  /* [size] where each rank lives */
    ep_gid_t *gids;                        /* [size] member identity, for MPI_Comm_compare */
    int *proc_world;                       /* [nprocs] world rank of each process */
    int *proc_nlocal;                      /* [nprocs] ranks in each process */
    int *proc_first;                       /* [nprocs] prefix sums of proc_nlocal */
    int *proc_ranks;                       /* [size] ranks grouped by process, in lidx order */
    MPI_Comm pcomm;                        /* PMPI communicator over the processes, or MPI_COMM_NULL */
    ep_endpoint_t *local;                  /* [nlocal] the local endpoints */
    ep_sync_t sync;                        /* collective rendezvous of the local endpoints */
    pthread_mutex_t coll_lock;             /* guards coll_insts and their PMPI requests */
    struct ep_coll_inst *coll_insts;       /* non-blocking collectives still gathering arrivals */
    _Atomic int coll_broken;               /* ep_status_t of a collective that failed here before its PMPI
                                              step, leaving the processes out of step: later ones fail */
    ep_local_coll_t *local_coll;           /* the one-process path's records, or NULL (coll_local.c) */
    int thread_bound;                      /* world mode's MPI_COMM_WORLD: local endpoint j is OpenMP thread j's,
                                              and no other thread can call on it */
    _Atomic int refs;                      /* local endpoints still held (ep_endpoint_t.holds) */
    ep_comm_t *ctx_next;                   /* chaining in the context table */
};

/* One new endpoint, as proposed by this process to ep_comm_build. */
typedef struct ep_new_ep {
    uint64_t key;        /* global sort key: ranks follow ascending keys */
    ep_gid_t parent_gid; /* identity of the parent rank that asked for it */
} ep_new_ep_t;

/* Builds a communicator.  Called by one thread per participating process
 * (the leader), collectively over ppcomm (a PMPI communicator over the
 * candidate processes, or MPI_COMM_NULL when only this process takes part).
 * plain: ppcomm carries no attribute of the program's (epmpi's own, or
 * MPI_COMM_WORLD within MPI_Init), so that a duplicate copies none.
 * Processes proposing no endpoint take part and get *out = NULL.  Keys must
 * be unique.  The new endpoints inherit parent identities when no parent
 * identity is used twice, and get fresh ones otherwise.  Local endpoints are
 * numbered in key order.  Every handle gets errhandler eh. */
ep_status_t ep_comm_build(MPI_Comm ppcomm, int plain, int nnew, const ep_new_ep_t *neweps, MPI_Errhandler eh,
                          ep_comm_t **out);
/* The same once the process-level communicator is known: pc spans exactly
 * the processes proposing endpoints (nnew > 0 in each), or is MPI_COMM_NULL
 * for this process alone.  Takes ownership of pc, also on failure. */
ep_status_t ep_comm_build_on(MPI_Comm pc, int nnew, const ep_new_ep_t *neweps, MPI_Errhandler eh, ep_comm_t **out);

/* MPI_Comm_dup's communicator: pc's group and rank map, a new context and
 * process-level communicator, the same error handlers.  Called by one
 * thread per process (collective over pc's processes), in steps so that it
 * can run non-blocking: begin may start a PMPI operation (*req); each time
 * the last one started completes, step is called with stage 0, 1, ...; c
 * is ready when a step starts nothing.  abort undoes it after a failure. */
ep_status_t ep_comm_clone_begin(ep_comm_t *pc, ep_comm_t **c, MPI_Request *req);
ep_status_t ep_comm_clone_step(ep_comm_t *pc, ep_comm_t *c, int stage, MPI_Request *req);
void ep_comm_clone_abort(ep_comm_t *c, MPI_Request *req);
/* Tables a transport keeps per rank that follow from the ranks alone, held
 * by the rank tables that duplicates share (ucx.c): where a message to
 * each rank goes, and each rank's UCX address (a duplicate's base). */
typedef enum { EP_SHARED_UCX_PEERS, EP_SHARED_UCX_ADDRS, EP_SHARED_N } ep_shared_t;
/* The one c's shared rank tables hold, or NULL (none yet, or c's tables
 * are not shared). */
void *ep_comm_shared(ep_comm_t *c, ep_shared_t which);
/* Installs p there unless one is there already: the one held afterwards
 * (p, which the tables now own and free), or NULL when c's tables are not
 * shared (p stays the caller's). */
void *ep_comm_share(ep_comm_t *c, ep_shared_t which, void *p);

/* Makes c, just built over the union of two groups, an intercommunicator:
 * its first size0 ranks are group 0, the others group 1. */
ep_status_t ep_comm_make_inter(ep_comm_t *c, int size0);

/* How c's point-to-point messages go, as MPI_Comm_get_info reports it:
 * "mpich" (a direct communicator, direct.h) or "engine"; and between its
 * processes on the engine's path, "ucx" or "mpi" (NULL: no such path). */
const char *ep_comm_p2p_path(const ep_comm_t *c);
const char *ep_comm_transport(const ep_comm_t *c);

/* ep's hints (MPI_Comm_set_info): ep takes info, and frees the ones it had. */
void ep_endpoint_set_info(ep_endpoint_t *ep, MPI_Info info);

/* Frees one endpoint handle; the communicator goes with the last reference. */
void ep_endpoint_free(ep_endpoint_t *ep);
/* ep's last hold went: its share of its communicator goes. */
void ep_endpoint_gone(ep_endpoint_t *ep);

/* Gives back one hold on ep (its handle's or a request's): the last one
 * releases ep's share of its communicator.  Inline: every request with a
 * handle gives one back. */
static inline void ep_endpoint_release(ep_endpoint_t *ep)
{
    if (atomic_fetch_sub_explicit(&ep->holds, 1, memory_order_acq_rel) == 1)
        ep_endpoint_gone(ep);
}
/* n holds given back at once (a thread's credit, request.h). */
static inline void ep_endpoint_release_n(ep_endpoint_t *ep, int n)
{
    if (atomic_fetch_sub_explicit(&ep->holds, n, memory_order_acq_rel) == n)
        ep_endpoint_gone(ep);
}

/* Ranks as MPI shows them.  In an intercommunicator an endpoint's rank is
 * its position in its own group, and the ranks it addresses are positions
 * in the other group; in an intracommunicator both groups are the whole. */
static inline int ep_remote_side(const ep_endpoint_t *ep) { return ep->comm->inter ? 1 - ep->side : ep->side; }
static inline int ep_local_rank(const ep_endpoint_t *ep) { return ep->rank - ep->comm->group_off[ep->side]; }
static inline int ep_local_size(const ep_endpoint_t *ep) { return ep->comm->group_size[ep->side]; }
static inline int ep_remote_size(const ep_endpoint_t *ep) { return ep->comm->group_size[ep_remote_side(ep)]; }
/* Position in the rank map of rank r as ep addresses it. */
static inline int ep_peer_index(const ep_endpoint_t *ep, int r) { return ep->comm->group_off[ep_remote_side(ep)] + r; }

/* The endpoint behind a live handle, or NULL. */
static inline ep_endpoint_t *ep_endpoint_get(MPI_Comm h)
{
    return (ep_endpoint_t *)ep_registry_get(EP_HID(h), EP_OBJ_ENDPOINT);
}

/* Context table: the communicator with id ctx known to this process. */
ep_comm_t *ep_ctx_lookup(uint64_t ctx);

/* The world rank of the process of each of the n identities m[], as any
 * communicator of this process that has the identity tells (they agree):
 * what MPI_Comm_create_from_group needs, having no communicator.  A classic
 * identity is its own answer.  EP_ERR_GROUP when no communicator of this
 * process has m[*bad]. */
ep_status_t ep_gid_worlds(const ep_gid_t *m, int n, int *world, int *bad);

/* MPI_Comm_compare of two endpoints / an endpoint and a classic comm. */
int ep_comm_compare_ep(const ep_endpoint_t *a, const ep_endpoint_t *b);
ep_status_t ep_comm_compare_classic(const ep_endpoint_t *a, MPI_Comm classic, int *result);

/* The context table; only net.c calls these, under ep_ctx_table_lock. */
void ep_ctx_register(ep_comm_t *c);
void ep_ctx_unregister(ep_comm_t *c);

/* ---- the higher layers' parts of a communicator -----------------------
 *
 * The point-to-point path, the lanes, the transports, the collectives'
 * shared state, topologies and statistics keep state on a communicator and
 * its endpoints.  comm.c calls these at the steps of a communicator's
 * life; they are defined at the top of the engine (src/comm_parts.c), the
 * one place besides engine.c and progress.c that knows every layer. */

/* c's rank map and pcomm are final: its point-to-point path is chosen
 * (c->direct). */
void ep_comm_parts_choose(ep_comm_t *c);
/* c's endpoints exist: the layers' state for them. */
ep_status_t ep_comm_parts_init(ep_comm_t *c);
/* Connects c's processes in the transports, if c carries messages between
 * processes (collective over them), in steps so that a non-blocking
 * construction need not wait: when *req is not MPI_REQUEST_NULL, call
 * again once it is over; c is connected when a call leaves none. */
ep_status_t ep_comm_parts_connect(ep_comm_t *c, MPI_Request *req);
/* c, connected, takes messages from now on (and those that came early). */
void ep_comm_parts_open(ep_comm_t *c);
/* c takes no more messages and leaves the transports: it goes, or its
 * construction failed (at any step). */
void ep_comm_parts_close(ep_comm_t *c);
/* The layers' state of c and its endpoints goes (comm_destroy). */
void ep_comm_parts_free(ep_comm_t *c);
/* Hold the context table still: the MPI transport's lock (net.c), which
 * orders registration with the delivery of arriving headers; not while
 * holding it already. */
void ep_ctx_table_lock(void);
void ep_ctx_table_unlock(void);

#endif
