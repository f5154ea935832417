/* One-sided communication (RMA) on endpoint communicators.
 *
 * A window is one ep_win_t per process (what its endpoints share) and one
 * ep_win_ep_t per local rank (what a window handle owns: its rank, its
 * error handler, name and epoch state).
 *
 * A window whose ranks all live in this process (a local window) has no
 * PMPI window: every target is addressable here, so every operation is a
 * copy, accumulates under the window's own lock, the lock words plain
 * atomics, and fence and flush memory fences.  It costs the MPI nothing
 * (no context id, no registration) and works where the MPI makes no
 * windows (Open MPI 4.1 in a job of one process).
 *
 * Otherwise each process holds a PMPI window over the processes of a
 * private duplicate of the communicator, and one lock word per rank:
 *
 *   pwin    the data: dynamic, with every local rank's memory attached (so
 *           a target is (process, absolute address)), or for
 *           MPI_Win_allocate_shared one shared segment per process holding
 *           its ranks' slices (a target is (process, offset));
 *   lwords  one 64-bit lock word per rank, changed only by PMPI atomics,
 *           in the lock window that every endpoint window over all
 *           processes shares, or in one of the window's own (win.c).
 *
 * The windows stay in a PMPI_Win_lock_all epoch for their whole life, so
 * every endpoint-level synchronisation is built from PMPI flushes, PMPI
 * atomics and epmpi's own messages, and no PMPI call waits for a peer
 * without yielding:
 *
 *   fence      local rendezvous, PMPI flush, barrier over the processes;
 *   lock       the target's lock word, taken and released with fetch-and-add
 *              (so an exclusive lock also keeps out the target's own
 *              process); unlock flushes first;
 *   PSCW       zero-byte messages on the private communicator: post ->
 *              start, complete -> wait.
 *
 * Put and Get to a rank whose memory this process can address (its own
 * ranks; every rank of the node for shared windows) are done here with a
 * typed copy; every other Put and Get, and every accumulate (including to
 * local ranks, so that accumulates stay atomic with those of other
 * processes), goes through pwin.
 */
#ifndef EP_WIN_H
#define EP_WIN_H

#include "core/attr.h"
#include "core/comm.h"

/* The window hints epmpi reports (win.c, hint_keys). */
#define EP_WIN_NHINTS 6

typedef enum { EP_WIN_CREATE, EP_WIN_ALLOCATE, EP_WIN_SHARED, EP_WIN_DYNAMIC } ep_win_flavor_t;

/* Where rank r's window memory is, as every process knows it. */
typedef struct ep_win_rank {
    MPI_Aint tbase; /* target displacement in pwin of the window's start */
    MPI_Aint size;
    MPI_Aint lword; /* its lock word's displacement (address) in the lock window */
    int disp_unit;
    int pad;
} ep_win_rank_t;

typedef struct ep_win_region {
    char *base;
    MPI_Aint size;
} ep_win_region_t;

typedef struct ep_win {
    ep_comm_t *comm; /* the private duplicate (fence, PSCW messages) */
    ep_win_flavor_t flavor;
    int local;          /* every rank in this process: no PMPI windows (above) */
    ep_lock_t acc_lock; /* local windows: accumulates are atomic under it */
    void *segment;      /* local windows: the memory allocated for their ranks */
    /* What this process's ranks attached to pwin (created windows: their
     * memory; dynamic windows: the regions accesses must fall in), guarded
     * by regions_lock (win.c). */
    ep_lock_t regions_lock;
    struct ep_win_region *regions;
    int nregions;
    size_t capregions;
    MPI_Comm pc; /* the processes' PMPI communicator (comm's, or MPI_COMM_SELF) */
    MPI_Win pwin;
    int pwin_epoch;      /* pwin is in its PMPI_Win_lock_all epoch */
    int64_t **lwords;    /* [nlocal] this process's ranks' lock words, in local
                            order, from the pool of win.c, or one block in a
                            lock window of w's own (NULL: not yet) */
    MPI_Win lockwin;     /* the PMPI window of the lock words (win.c) */
    int lockwin_own;     /* lockwin is w's own, over w->pc: targets by their rank there */
    ep_win_rank_t *rank; /* [size] */
    char **segbase;      /* [nprocs] shared windows: each process's segment, here;
                            allocated windows: this process's segment */
    _Atomic int refs;    /* local handles */
} ep_win_t;

typedef struct ep_win_ep {
    ep_object_t obj; /* registry header: EP_OBJ_WIN */
    MPI_Win handle;
    ep_win_t *w;
    ep_endpoint_t *ep; /* this rank's endpoint of w->comm */
    int rank;
    void *base;    /* as given or allocated (MPI_WIN_BASE) */
    MPI_Aint size; /* MPI_WIN_SIZE */
    int disp_unit; /* MPI_WIN_DISP_UNIT */
    int flavor_attr, model_attr;
    _Atomic MPI_Errhandler errhandler; /* held (ep_errhandler_assign) */
    char name[MPI_MAX_OBJECT_NAME];
    char *hints[EP_WIN_NHINTS]; /* values set of the window hints (ep_win_hints_set), NULL: the default */
    /* epochs */
    int fence_open;                /* inside a fence epoch (after a fence without NOSUCCEED) */
    int lock_all;                  /* MPI_Win_lock_all: how every target is locked (state bits) */
    unsigned char *state;          /* [size] per target: locked (how), in the start group (win.c) */
    _Atomic unsigned char *dirty;  /* [size] per target: an operation since its last completion that
                                      only a PMPI flush completes (all but tracked Gets, win.c) */
    _Atomic int ndirty;            /* targets marked in dirty */
    int *start, nstart;            /* access group of MPI_Win_start */
    int npost;                     /* MPI_Win_post: the exposure group's size, and */
    struct ep_request **post_reqs; /* [npost] its members' "complete" notices, awaited */
    /* MPI_Get through MPICH, as PMPI_Rget requests that the next
     * completing call waits for (win.c says why); gets_lock guards them. */
    ep_lock_t gets_lock;
    MPI_Request *gets;
    int ngets;
    size_t capgets;
} ep_win_ep_t;

static inline ep_win_ep_t *ep_win_get(MPI_Win h) { return (ep_win_ep_t *)ep_registry_get(EP_HID(h), EP_OBJ_WIN); }

/* A window rank's attributes live on its endpoint of the private
 * communicator, which nothing else gives attributes (and which discards
 * them when the window goes); the callbacks get the window's handle. */
static inline ep_attr_host_t ep_win_attrs(ep_win_ep_t *we)
{
    return (ep_attr_host_t){&we->ep->attrs, &we->ep->attr_lock, (intptr_t)we->handle};
}

/* Frees the lock window over all processes (made by the first endpoint
 * window over all of them) at MPI_Finalize, after the last endpoint window. */
void ep_win_finalize(void);

/* Creation, collective over ep's communicator (an intracommunicator).
 * base/size/disp_unit as MPI gives them (ALLOCATE and SHARED: base is
 * ignored, the memory comes back in *baseptr); *out gets the handle. */
ep_status_t ep_win_create(ep_endpoint_t *ep, ep_win_flavor_t flavor, void *base, MPI_Aint size, int disp_unit,
                          void *baseptr, MPI_Win *out);
/* Collective: waits for every rank, then frees.  Not while ep_win_busy:
 * an epoch of we is still open. */
int ep_win_busy(const ep_win_ep_t *we);
ep_status_t ep_win_free(ep_win_ep_t *we);
/* The window hints (MPI-4.0 12.2.7): set takes the keys of info that MPI
 * and MPICH define for windows (the others are ignored, as MPICH does)
 * over the values we has, MPICH's defaults at first; get gives a new info
 * with all of them.  The engine runs the same whatever they say.
 * EP_ERR_INFO for an invalid info, EP_ERR_NO_MEM. */
ep_status_t ep_win_hints_set(ep_win_ep_t *we, MPI_Info info);
ep_status_t ep_win_hints_get(ep_win_ep_t *we, MPI_Info *out);

/* Operations.  kind: what the call does; result buffers as MPI's. */
typedef enum { EP_RMA_PUT, EP_RMA_GET, EP_RMA_ACC, EP_RMA_GET_ACC, EP_RMA_CAS } ep_rma_kind_t;
typedef struct ep_rma {
    ep_rma_kind_t kind;
    const void *obuf;
    int ocount;
    MPI_Datatype otype;
    void *rbuf; /* GET (the origin buffer), GET_ACC and CAS results */
    int rcount;
    MPI_Datatype rtype;
    const void *cbuf; /* CAS: the compare value */
    int target;
    MPI_Aint disp;
    int tcount;
    MPI_Datatype ttype;
    MPI_Op op;
} ep_rma_t;

/* Issues op; with req non-NULL, the request-based form: *req completes
 * when the operation has completed at the origin. */
ep_status_t ep_win_rma(ep_win_ep_t *we, const ep_rma_t *op, MPI_Request *req);

/* Synchronisation. */
ep_status_t ep_win_fence(ep_win_ep_t *we, int assert);
ep_status_t ep_win_lock(ep_win_ep_t *we, int type, int target, int assert);
ep_status_t ep_win_unlock(ep_win_ep_t *we, int target);
ep_status_t ep_win_lock_all(ep_win_ep_t *we, int assert);
ep_status_t ep_win_unlock_all(ep_win_ep_t *we);
/* target -1: every target; local: completion at the origin only. */
ep_status_t ep_win_flush(ep_win_ep_t *we, int target, int local);
ep_status_t ep_win_sync(ep_win_ep_t *we);
ep_status_t ep_win_post(ep_win_ep_t *we, const int *ranks, int n);
ep_status_t ep_win_start(ep_win_ep_t *we, const int *ranks, int n);
ep_status_t ep_win_complete(ep_win_ep_t *we);
/* block 0: MPI_Win_test (*done tells). */
ep_status_t ep_win_wait(ep_win_ep_t *we, int block, int *done);

/* Dynamic windows. */
ep_status_t ep_win_attach(ep_win_ep_t *we, void *base, MPI_Aint size);
ep_status_t ep_win_detach(ep_win_ep_t *we, const void *base);

/* Target displacement pd in process proc's part of pwin, as an address in
 * this process (its own memory; every process's segment for shared
 * windows), or NULL when this process cannot address it. */
char *ep_win_local_addr(const ep_win_t *w, int proc, MPI_Aint pd);

/* 1 when the calling endpoint may access target now (some epoch covers it). */
int ep_win_in_epoch(const ep_win_ep_t *we, int target);

#endif
