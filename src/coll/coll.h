/* Collectives on endpoint communicators.
 *
 * Every collective is a "kind" (what to compute) run by one of two drivers
 * (when to run it):
 *
 *   args     each endpoint describes its part of the call in an
 *            ep_coll_args_t (buffers, counts, root, op ...);
 *   start    once every local endpoint has arrived, one thread combines the
 *            local contributions through shared memory and starts at most
 *            one PMPI collective on the process-level communicator;
 *   complete once, after that PMPI operation finished (again after each
 *            further operation it starts: multi-step constructions);
 *   finish   once per local endpoint: its share of the result is copied
 *            into its buffers.
 *
 * The blocking driver (ep_coll_run) lets local index 0 (the actor) start
 * and complete while the others wait for it; it then finishes every
 * endpoint itself when the results are small copies, and nobody waits for
 * anybody after that; otherwise every endpoint runs its own finish (the
 * copying is spread over the threads; so is the local fold of a large
 * reduction).  The
 * non-blocking driver (ep_coll_start) keeps one instance per call number:
 * the last local endpoint to arrive starts it, whoever tests a request of
 * it completes it and finishes every local endpoint.
 *
 * PMPI collectives on the process-level communicator are started in call
 * order in every process: an instance is started by the last local arrival
 * (non-blocking) or after the rendezvous (blocking), that is after every
 * local endpoint has made all its earlier calls, each of which started its
 * own instance before returning.  Arguments are checked by the entry points.
 */
#ifndef EP_COLL_H
#define EP_COLL_H

#include "core/comm.h"
#include "core/request.h"

typedef struct ep_coll_args ep_coll_args_t;
typedef struct ep_coll_inst ep_coll_inst_t;

/* The local rendezvous of c's endpoints in this process (ep_sync_t in
 * comm.h), which collectives and windows run their phases with: a
 * barrier. */
void ep_sync_barrier(ep_comm_t *c);
/* The first rendezvous of a collective call by local endpoint lidx: the
 * barrier, watched (ep_diag_watch).  EP_ERR_NO_THREAD when endpoints it
 * waits for cannot arrive; the rendezvous of c is then dead and every
 * later call fails at once (EP_ERR_SYNC_DEAD). */
ep_status_t ep_sync_enter(ep_comm_t *c, int lidx);

/* The calls the one-process path (coll_local.c) knows. */
typedef enum { EP_LOCAL_NONE, EP_LOCAL_BARRIER, EP_LOCAL_BCAST, EP_LOCAL_REDUCE } ep_coll_local_t;

typedef struct ep_block {
    const void *buf;
    int count; /* 0: nothing */
    MPI_Datatype type;
} ep_block_t;

typedef struct ep_coll_kind {
    ep_status_t (*start)(ep_coll_inst_t *in);
    /* optional; may start a further PMPI operation (in->preq), after which
     * it is called again (in->stage counts the calls) */
    ep_status_t (*complete)(ep_coll_inst_t *in);
    ep_status_t (*finish)(ep_coll_inst_t *in, int lidx); /* optional */
    void (*fail)(ep_coll_inst_t *in);                    /* optional: undoes start after an error */
    /* a reduction whose local fold the blocking driver may share out among
     * the local endpoints when it is large (start then finds in->res set) */
    int fold_shared;
    /* finish only copies data, so any thread may run it for an endpoint:
     * the blocking driver's actor does for small results.  Not where it
     * calls the program's code (attribute copy callbacks), which runs on
     * the endpoint's own thread. */
    int copy_finish;
} ep_coll_kind_t;

/* What one call moves at one rank, for EPMPI_STATS: the bytes it reads
 * from the rank's send buffer(s) and writes to its receive buffer(s), as
 * the call's arguments say (MPI_IN_PLACE: the blocks in the receive
 * buffer that stand for the send buffer). */
typedef void ep_coll_traffic_fn(const ep_coll_args_t *a, int64_t *sent, int64_t *received);

/* One endpoint's part of a collective call.  The exchange kinds
 * (coll_xchg.c) describe it through send_block / recv_block: block k
 * (0, 1, ...) of those this rank sends to / receives from peer rank; they
 * return 1 when a block k + 1 follows.  Most kinds move one block per peer;
 * a neighbourhood collective moves one per edge, and a pair of ranks can
 * share several edges. */
struct ep_coll_args {
    const ep_coll_kind_t *kind;
    ep_coll_traffic_fn *traffic; /* set by the builders of the MPI collectives: NULL for the engine's own
                                    collective steps (constructions, windows), which are not counted */
    int piece;                   /* a later piece of a call made of several (coll_seq.c): not a call of its own */
    int (*send_block)(const ep_coll_args_t *a, int peer, int k, ep_block_t *b);
    int (*recv_block)(const ep_coll_args_t *a, int peer, int k, ep_block_t *b);
    int me;          /* position in the rank map (ep->rank) */
    int roff, rsize; /* the ranks this one addresses: ranks[roff .. roff+rsize-1] (the remote
                        group of an intercommunicator, everyone in an intracommunicator) */
    int root;        /* the root's position in the rank map; -1 when there is none, or when it is
                        this rank's own group of an intercommunicator (MPI_ROOT, MPI_PROC_NULL) */
    int at_root;     /* this rank holds the root's arguments (the root; MPI_ROOT) */
    int all;         /* reductions: every rank receives the result (Allreduce) */
    const void *sbuf;
    int scount;
    const int *scounts, *sdispls;
    MPI_Datatype stype;
    const MPI_Datatype *stypes;
    MPI_Aint sext;
    void *rbuf;
    int rcount;
    const int *rcounts, *rdispls;
    MPI_Datatype rtype;
    const MPI_Datatype *rtypes;
    int ns, nr;                          /* entries of the per-peer arrays the call reads: scounts, sdispls (or
                                            sbdispls) and stypes; rcounts, rdispls (or rbdispls) and rtypes */
    const MPI_Aint *sbdispls, *rbdispls; /* Neighbor_alltoallw's byte displacements */
    MPI_Aint rext;
    MPI_Op op;
    int part_off;               /* reductions: first element of the result this rank keeps */
    int scan;                   /* scans: 1 inclusive, 2 exclusive */
    MPI_Info info;              /* constructions: hints for the new communicator */
    ep_coll_local_t local;      /* the one-process path this call may take, if any */
    int64_t agree;              /* what every rank passes alike, checked between the local ranks: the
                                   bytes of Bcast, the element count of reductions; -1: nothing */
    void *tmp;                  /* scratch of this rank's finish */
    void *extra;                /* a kind's own arguments (window creation) */
    const struct ep_topo *topo; /* neighbourhood collectives: this rank's topology (topo.h) */
    ep_dt_rec_t **held;         /* non-blocking: the records of the derived types it holds */
    int nheld;
    int op_held; /* non-blocking: op is held (ep_op_hold) */
};

/* A running collective, as the kinds see it. */
struct ep_coll_inst {
    ep_comm_t *c;
    ep_coll_args_t **args; /* [nlocal] the local endpoints' arguments */
    MPI_Request preq;      /* the PMPI operation start began, or MPI_REQUEST_NULL */
    int stage;             /* complete calls made */
    ep_status_t status;
    int src;          /* bcast: the local index whose buffer holds the data */
    void *scratch[4]; /* the kind's buffers, freed with the instance */
    void *res;        /* the kind's result (in a scratch buffer, or a receive buffer) */
    /* non-blocking driver */
    uint64_t seq;
    int arrived;
    ep_request_t **reqs; /* [nlocal] */
    ep_coll_inst_t *next;
    /* in the process's list of running instances (coll_drive.c) */
    ep_coll_inst_t *run_next, **run_prev;
    int steps_done; /* every step is over: the finish is left (ep_coll_progress) */
};

/* The one-process path: a blocking Barrier, Bcast, Reduce or Allreduce on
 * an intracommunicator whose ranks all live in this process, with a small
 * payload and not too many ranks, or a larger reduction of a dense type.
 * Returns 0 when it does not apply (the same for every rank of a call),
 * else runs the call (*rc).  init gives c the path's records when it is of
 * that kind. */
ep_status_t ep_local_coll_init(ep_comm_t *c);
void ep_local_coll_free(ep_local_coll_t *l);
int ep_coll_local_run(ep_endpoint_t *ep, const ep_coll_args_t *a, ep_status_t *rc);

/* EPMPI_STATS: the program made call a on ep (the entry points count
 * their calls and each start of a persistent one; the engine's own steps
 * that run as collectives are not counted).  A sequence counts as one
 * call. */
void ep_coll_count_slow(ep_endpoint_t *ep, const ep_coll_args_t *a);
static inline void ep_coll_count(ep_endpoint_t *ep, const ep_coll_args_t *a)
{
    if (__builtin_expect(ep->stats != NULL, 0) && a->traffic)
        ep_coll_count_slow(ep, a);
}
/* Runs a collective to completion (blocking call). */
ep_status_t ep_coll_run(ep_endpoint_t *ep, ep_coll_args_t *a);
/* Starts a non-blocking collective; *out gets its request. */
ep_status_t ep_coll_start(ep_endpoint_t *ep, const ep_coll_args_t *a, ep_request_t **out);
/* A copy of a that lives on its own, for a call made later (a persistent
 * one): its per-peer arrays copied, its datatypes and operation held;
 * NULL when out of memory.  Drop releases it (NULL: nothing). */
ep_coll_args_t *ep_coll_args_keep(const ep_coll_args_t *a);
void ep_coll_args_drop(ep_coll_args_t *kept);

/* Calls made of a sequence of engine calls (coll_seq.c): the reductions
 * beyond INT_MAX elements, one call per piece, and every persistent
 * collective.  A sequence of one copied call; of the pieces of a reduction
 * of count elements (kind, the builders' arguments); of a reduce-scatter
 * of total elements whose block here is mine elements from mine_off.  NULL
 * when out of memory. */
typedef struct ep_coll_seq ep_coll_seq_t;
typedef enum { EP_COLL_REDUCE, EP_COLL_ALLREDUCE, EP_COLL_SCAN, EP_COLL_EXSCAN } ep_coll_reduction_t;
ep_coll_seq_t *ep_coll_seq_one(const ep_coll_args_t *a);
ep_coll_seq_t *ep_coll_seq_reduction(ep_endpoint_t *ep, ep_coll_reduction_t kind, const void *sbuf, void *rbuf,
                                     int64_t count, MPI_Datatype t, MPI_Op op, int root);
ep_coll_seq_t *ep_coll_seq_reduce_scatter(ep_endpoint_t *ep, const void *sbuf, void *rbuf, int64_t total,
                                          int64_t mine_off, int64_t mine, MPI_Datatype t, MPI_Op op);
void ep_coll_seq_free(ep_coll_seq_t *s);
void ep_coll_seq_count(ep_endpoint_t *ep, const ep_coll_seq_t *s); /* ep_coll_count of its calls */
/* Runs s to completion (s stays the caller's); or starts it, *out getting
 * the request, which then owns s. */
ep_status_t ep_coll_seq_run(ep_endpoint_t *ep, ep_coll_seq_t *s);
ep_status_t ep_coll_seq_start(ep_endpoint_t *ep, ep_coll_seq_t *s, ep_request_t **out);
/* Persistent collectives: an inactive persistent request (*out) on ep that
 * owns s (NULL: out of memory) and dup, the private duplicate of ep's
 * communicator its starts run on (ep_persistent_init, comm_create.h,
 * makes it); both are freed on failure.  Each start runs s's calls as
 * non-blocking ones. */
ep_status_t ep_coll_persistent_make(ep_endpoint_t *ep, ep_coll_seq_t *s, ep_endpoint_t *dup, ep_request_t **out);
ep_status_t ep_coll_persistent_start(ep_request_t *r);
/* Drives the collective behind r; 1 when r is complete. */
int ep_coll_poll(ep_request_t *r);
/* Drives every non-blocking collective of this process whose PMPI steps
 * are under way, whoever waits for it: a wait on one request must not
 * leave another one's next step unstarted, which the other processes may
 * wait for (ep_progress calls it).  Cheap when there are none. */
void ep_coll_progress(void);

/* Shared helpers of the kinds and builders. */
/* A reduction's input: the send buffer, or the receive buffer under MPI_IN_PLACE. */
static inline const void *ep_coll_input(const ep_coll_args_t *a) { return a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf; }
/* x0 op (x1 op (... op xn-1)) into acc: the n inputs in rank order. */
ep_status_t ep_coll_fold(void *acc, const void *const *xs, int n, int count, MPI_Datatype type, MPI_Op op);

/* Large dense reductions folded in shares (coll.c): local endpoint j folds
 * chunk j (ep_coll_chunk) of every local input.  ep_coll_dense: count
 * elements of t lie contiguously from the buffer's start (*bytes of them).
 * ep_coll_share_size: whether a call of a fold_shared kind is big enough to
 * share, the same answer on every endpoint.  ep_coll_fold_share: endpoint
 * me's chunk, reading the arguments published in c->sync.ptr, into the
 * same chunk of out (aliased: out is also an input). */
/* Below this the extra rendezvous costs about what the shares save
 * (measured on Allreduce; the performance log has the figures). */
#define EP_COLL_SHARE_MIN (512 * 1024)
int ep_coll_dense(MPI_Datatype t, int count, int64_t *bytes);
void ep_coll_chunk(int j, int n, int count, int *lo, int *hi);
int ep_coll_share_size(const ep_coll_args_t *a, int nlocal, int64_t *bytes);
/* Where the shares of a's call go when local index 0 passes a: its own
 * receive buffer for an Allreduce (the others copy the result from it),
 * NULL for a scratch vector. */
void *ep_coll_share_target(const ep_coll_args_t *a);
ep_status_t ep_coll_fold_share(ep_comm_t *c, int me, void *out, int aliased);
void *ep_coll_typed_alloc(int64_t count, MPI_Datatype t, void **block);
MPI_Aint ep_coll_extent(MPI_Datatype t);
/* Bytes of count elements of t (0 when t has no layout); of n blocks, one
 * count per block (counts, else count each) and one type per block
 * (types, else t). */
int64_t ep_coll_bytes(MPI_Datatype t, int count);
int64_t ep_coll_blocks_bytes(int n, int count, const int *counts, MPI_Datatype t, const MPI_Datatype *types);
/* Misuse caught where the local ranks of a call meet: EP_OK when a and b
 * (two ranks of one call on intracommunicator c) agree on the collective,
 * its root and its agree value, else the status naming what differs. */
ep_status_t ep_coll_agree(const ep_comm_t *c, const ep_coll_args_t *a, const ep_coll_args_t *b);
/* Empty arguments of kind k for ep (no root). */
void ep_coll_args_init(ep_coll_args_t *a, const ep_coll_kind_t *k, const ep_endpoint_t *ep);
/* The send side / receive side of a's call: buffer, count, type. */
static inline void ep_coll_send_side(ep_coll_args_t *a, const void *buf, int count, MPI_Datatype type)
{
    a->sbuf = buf;
    a->scount = count;
    a->stype = type;
}
static inline void ep_coll_recv_side(ep_coll_args_t *a, void *buf, int count, MPI_Datatype type)
{
    a->rbuf = buf;
    a->rcount = count;
    a->rtype = type;
}
/* Sets root and at_root from the root argument as the caller passed it. */
void ep_coll_set_root(ep_coll_args_t *a, const ep_endpoint_t *ep, int root);
/* peer's place in per-rank buffers (its rank in the group a addresses),
 * or -1 when a does not address it. */
static inline int ep_coll_slot(const ep_coll_args_t *a, int peer)
{
    return peer >= a->roff && peer < a->roff + a->rsize ? peer - a->roff : -1;
}
/* The exchange kind's phases (coll_xchg.c), which the gathered reductions
 * reuse: pack and start; unpack one endpoint's blocks. */
ep_status_t ep_coll_xchg_start(ep_coll_inst_t *in);
ep_status_t ep_coll_xchg_finish(ep_coll_inst_t *in, int lidx);

/* Argument builders, one per collective (MPI_IN_PLACE as in MPI).  A
 * communicator with one process needs no PMPI call at all.  On
 * intercommunicators Barrier, Bcast, the gathers, scatters and all-to-alls,
 * Reduce and Allreduce take MPI's intercommunicator meaning (the exchange
 * runs between the groups); the others are refused by the entry points. */
void ep_coll_barrier(ep_coll_args_t *a, ep_endpoint_t *ep);
void ep_coll_bcast(ep_coll_args_t *a, ep_endpoint_t *ep, void *buf, int count, MPI_Datatype type, int root);
/* Reduce, or Allreduce (all: root unused). */
void ep_coll_reduce(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                    MPI_Op op, int all, int root);
/* counts NULL: MPI_Reduce_scatter_block with `count` per rank. */
void ep_coll_reduce_scatter(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count,
                            const int *counts, MPI_Datatype type, MPI_Op op);
void ep_coll_scan(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                  MPI_Op op, int exclusive);
void ep_coll_allgather(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype,
                       void *rbuf, int rcount, MPI_Datatype rtype);
void ep_coll_gatherv(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                     int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype, int root);
void ep_coll_scatterv(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, const int *scounts,
                      const int *displs, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root);
/* rcounts NULL: rcount from every rank (Allgather on an intercommunicator). */
void ep_coll_allgatherv(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, MPI_Datatype stype,
                        void *rbuf, int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype);
/* All-to-all: counts/displs/types NULL mean the uniform form; displs in
 * elements unless byte_displs (MPI_Alltoallw). */
void ep_coll_alltoallw(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, int scount, const int *scounts,
                       const int *sdispls, MPI_Datatype stype, const MPI_Datatype *stypes, void *rbuf, int rcount,
                       const int *rcounts, const int *rdispls, MPI_Datatype rtype, const MPI_Datatype *rtypes,
                       int byte_displs);

/* Neighbourhood collectives on ep's topology (ep->topo, set): one block
 * to each out-neighbour and from each in-neighbour, in MPI's buffer order.
 * allgather: the same send block to every out-neighbour (Neighbor_allgather
 * and _allgatherv); otherwise block j of the send side to out-neighbour j.
 * counts NULL: the uniform form.  The _w form has a count, a byte
 * displacement and a type per neighbour. */
void ep_coll_neighbor(ep_coll_args_t *a, ep_endpoint_t *ep, int allgather, const void *sbuf, int scount,
                      const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf, int rcount,
                      const int *rcounts, const int *rdispls, MPI_Datatype rtype);
void ep_coll_neighbor_w(ep_coll_args_t *a, ep_endpoint_t *ep, const void *sbuf, const int *scounts,
                        const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf, const int *rcounts,
                        const MPI_Aint *rdispls, const MPI_Datatype *rtypes);

/* The traffic of Bcast and Allgather(v), which have two kinds each. */
ep_coll_traffic_fn ep_coll_bcast_traffic, ep_coll_allgather_traffic;
/* Bcast as an exchange: the root's block to every rank it addresses (the
 * form intercommunicators use). */
void ep_coll_xchg_bcast(ep_coll_args_t *a, ep_endpoint_t *ep, void *buf, int count, MPI_Datatype type, int root);

#endif
