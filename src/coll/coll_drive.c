/* The two drivers of collective kinds: blocking and non-blocking (see coll.h). */
#include "coll/coll.h"

#include "base/clear.h"
#include "core/datatype.h"
#include "base/wait.h"
#include "core/op.h"
#include "diag/diag.h"

#include <stdlib.h>
#include <string.h>

/* ---- the local rendezvous (coll.h) -------------------------------------- */

typedef struct sync_wait {
    ep_sync_t *s;
    unsigned mark; /* what entered[j] holds once endpoint j is in */
} sync_wait_t;

static int sync_absent(const void *arg, int j)
{
    const sync_wait_t *w = arg;
    return atomic_load_explicit(&w->s->entered[j], memory_order_relaxed) != w->mark;
}

/* The sense-counting barrier of c's local endpoints.  Local endpoint
 * lidx, or -1 for an unwatched wait: a watched one marks its arrival and
 * gives up (marking the rendezvous dead) when ep_diag_watch says so. */
static ep_status_t barrier(ep_comm_t *c, int lidx)
{
    ep_sync_t *s = &c->sync;
    if (c->nlocal == 1)
        return EP_OK;
    unsigned ph = atomic_load_explicit(&s->phase, memory_order_acquire);
    sync_wait_t w = {s, ph + 1};
    if (lidx >= 0)
        atomic_store_explicit(&s->entered[lidx], w.mark, memory_order_relaxed);
    if (atomic_fetch_add_explicit(&s->arrived, 1, memory_order_acq_rel) == (unsigned)c->nlocal - 1) {
        atomic_store_explicit(&s->arrived, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->phase, 1, memory_order_release);
        return EP_OK;
    }
    ep_watch_t watch = EP_WATCH_INIT;
    EP_WAIT_UNTIL(atomic_load_explicit(&s->phase, memory_order_acquire) != ph)
    {
        ep_status_t rc = lidx >= 0 ? ep_diag_watch(&watch, &c->local[lidx], sync_absent, &w) : EP_OK;
        if (rc) {
            atomic_store(&s->dead, 1);
            return rc;
        }
    }
    return EP_OK;
}

void ep_sync_barrier(ep_comm_t *c) { (void)barrier(c, -1); }

ep_status_t ep_sync_enter(ep_comm_t *c, int lidx)
{
    return atomic_load_explicit(&c->sync.dead, memory_order_relaxed) ? EP_ERR_SYNC_DEAD : barrier(c, lidx);
}

static void inst_init(ep_coll_inst_t *in, ep_comm_t *c, ep_coll_args_t **args)
{
    ep_clear(in, sizeof *in);
    in->c = c;
    in->args = args;
    in->preq = MPI_REQUEST_NULL;
}

static void inst_release(ep_coll_inst_t *in)
{
    for (size_t i = 0; i < sizeof in->scratch / sizeof in->scratch[0]; i++)
        free(in->scratch[i]);
}

/* The PMPI operation behind in is over (or there is none): completes the
 * step.  0 while complete has started another operation. */
static int inst_step(ep_coll_inst_t *in)
{
    const ep_coll_kind_t *k = in->args[0]->kind;
    if (!in->status && k->complete) {
        in->status = k->complete(in);
        in->stage++;
        if (in->preq != MPI_REQUEST_NULL) {
            if (!in->status)
                return 0;
            ep_wait_pmpi(&in->preq, MPI_STATUS_IGNORE);
        }
    }
    /* fail undoes what start did on every rank's arguments, which belong
     * to other calls when the ranks are in different ones. */
    if (in->status && k->fail && in->status != EP_ERR_CALL_MISMATCH)
        k->fail(in);
    return 1;
}

/* A collective that failed here before starting its PMPI step, on a
 * communicator over several processes: the other processes ran (or will
 * run) that step, so every later collective here would meet an earlier
 * one there and deliver the wrong data.  Later collectives fail instead
 * (ep_coll_broken); the first failure is kept. */
static void note_failure(ep_coll_inst_t *in, ep_status_t rc)
{
    int ok = EP_OK;
    if (rc && in->c->nprocs > 1 && in->stage == 0 && in->preq == MPI_REQUEST_NULL)
        atomic_compare_exchange_strong(&in->c->coll_broken, &ok, (int)rc);
}

static ep_status_t coll_broken(const ep_comm_t *c)
{
    return (ep_status_t)atomic_load(&c->coll_broken) ? EP_ERR_COLL_BROKEN : EP_OK;
}

/* start, then wait for each PMPI part and complete it: what one thread does. */
static ep_status_t lead(ep_coll_inst_t *in)
{
    in->status = in->args[0]->kind->start(in);
    note_failure(in, in->status);
    do {
        if (in->preq != MPI_REQUEST_NULL && ep_wait_pmpi(&in->preq, MPI_STATUS_IGNORE) != MPI_SUCCESS && !in->status)
            in->status = EP_ERR_INTERN;
    } while (!inst_step(in));
    return in->status;
}

void ep_coll_count_slow(ep_endpoint_t *ep, const ep_coll_args_t *a)
{
    int64_t sent, received;
    a->traffic(a, &sent, &received);
    ep_stats_coll(ep, !a->piece, sent, received);
}

/* Whether the actor copies a blocking call's results into every local
 * endpoint's buffers itself (the others wait for it anyway), after which
 * nobody waits for anybody: when they are small.  Larger ones each
 * endpoint copies in parallel, then a barrier lets the scratch go: from
 * 16 KiB on, where a copy (about 1 us at this machine's memcpy bandwidth)
 * outweighs a barrier of two threads (0.3 us). */
#define EP_ACTOR_FINISH_BYTES (16 << 10)

/* What the local endpoints of in receive in all (their traffic). */
static int64_t local_received(const ep_coll_inst_t *in)
{
    int64_t bytes = 0, sent, received;
    for (int j = 0; j < in->c->nlocal; j++)
        if (in->args[j]->traffic) {
            in->args[j]->traffic(in->args[j], &sent, &received);
            bytes += received;
        }
    return bytes;
}

/* The actor's last step of a blocking call whose step ended with rc:
 * 1 when it has finished the call for every local endpoint (each one's
 * status in sync.val), 0 when each is to run its own finish. */
static int finish_all(ep_coll_inst_t *in, ep_status_t rc)
{
    const ep_coll_kind_t *k = in->args[0]->kind;
    int finish = !rc && k->finish;
    if (finish && (!k->copy_finish || local_received(in) > EP_ACTOR_FINISH_BYTES))
        return 0;
    for (int j = 0; j < in->c->nlocal; j++)
        atomic_store(&in->c->sync.val[j], finish ? k->finish(in, j) : rc);
    return 1;
}

ep_status_t ep_coll_run(ep_endpoint_t *ep, ep_coll_args_t *a)
{
    ep_comm_t *c = ep->comm;
    const ep_coll_kind_t *k = a->kind;
    ep_coll_inst_t mine, *in;
    ep_status_t rc;

    if (c->nprocs == 1 && ep_coll_local_run(ep, a, &rc))
        return rc;
    /* One local endpoint: nothing to publish or wait for, and the
     * rendezvous would be a measurable part of a small collective. */
    if (c->nlocal == 1) {
        inst_init(&mine, c, &a);
        if ((rc = coll_broken(c)))
            return rc;
        rc = lead(&mine);
        if (!rc && k->finish)
            rc = k->finish(&mine, 0);
        inst_release(&mine);
        return rc;
    }
    /* How many local barriers each endpoint passes must not depend on its
     * own arguments, which differ in an erroneous program: every decision
     * below that adds one is read from what local index 0 (the actor)
     * published (shared, finished), so a mismatch is reported on every
     * endpoint and the next call starts in step.
     *
     * The actor does not wait for the others once it has entered: when it
     * finishes for everyone it may be publishing the next call while
     * another endpoint still reads this one's shared.  So shared is
     * tagged with the phase the entry starts, and read as NULL when the
     * tag is another call's; the others read nothing else the actor
     * writes before the next entry until it says it is done. */
    atomic_store(&c->sync.ptr[ep->lidx], a);
    void *scratch = NULL; /* the actor's: the shares' scratch vector */
    if (ep->lidx == 0) {
        int64_t bytes;
        void *fold = NULL; /* NULL: the actor folds alone */
        if (ep_coll_share_size(a, c->nlocal, &bytes) && !(fold = ep_coll_share_target(a)))
            fold = scratch = malloc((size_t)bytes);
        atomic_store(&c->sync.shared_phase, atomic_load(&c->sync.phase) + 1);
        atomic_store(&c->sync.shared, fold);
        atomic_store(&c->sync.shared_status, EP_OK);
    }
    if ((rc = ep_sync_enter(c, ep->lidx))) {
        if (ep->lidx == 0)
            free(scratch);
        return rc;
    }
    void *shared = atomic_load(&c->sync.shared);
    if (atomic_load(&c->sync.shared_phase) != atomic_load(&c->sync.phase))
        shared = NULL;
    if (shared) { /* every endpoint folds its chunk of the local inputs */
        const ep_coll_args_t *a0 = atomic_load(&c->sync.ptr[0]);
        int ok = EP_OK;
        if ((rc = ep_coll_fold_share(c, ep->lidx, shared, shared == a0->rbuf && a0->sbuf == MPI_IN_PLACE)))
            atomic_compare_exchange_strong(&c->sync.shared_status, &ok, (int)rc);
        ep_sync_barrier(c);
    }
    /* Nobody passes a barrier from here until the actor is done: the
     * phase names this call. */
    unsigned call = atomic_load_explicit(&c->sync.phase, memory_order_acquire);
    if (ep->lidx == 0) {
        rc = shared ? (ep_status_t)atomic_load(&c->sync.shared_status) : EP_OK;
        for (int i = 0; i < c->nlocal; i++) {
            c->sync.args[i] = atomic_load(&c->sync.ptr[i]);
            if (!rc)
                rc = ep_coll_agree(c, c->sync.args[0], c->sync.args[i]);
        }
        inst_init(&mine, c, c->sync.args);
        mine.res = shared;
        mine.scratch[0] = scratch; /* freed with the instance */
        if (!rc)
            rc = coll_broken(c);
        else
            note_failure(&mine, rc);
        if (!rc)
            rc = lead(&mine);
        int all = finish_all(&mine, rc);
        atomic_store(&c->sync.result, &mine);
        atomic_store(&c->sync.finished, all);
        atomic_store_explicit(&c->sync.done, call, memory_order_release);
        if (all) {
            inst_release(&mine);
            return (ep_status_t)atomic_load(&c->sync.val[0]);
        }
    } else {
        EP_WAIT_UNTIL(atomic_load_explicit(&c->sync.done, memory_order_acquire) == call);
        if (atomic_load(&c->sync.finished))
            return (ep_status_t)atomic_load(&c->sync.val[ep->lidx]);
    }
    /* The step succeeded, so every kind is the actor's. */
    in = atomic_load(&c->sync.result);
    rc = k->finish(in, ep->lidx);
    ep_sync_barrier(c); /* every endpoint has its result: scratch may go */
    if (ep->lidx == 0)
        inst_release(&mine);
    return rc;
}

/* ---- non-blocking ------------------------------------------------------ */

/* A non-blocking call's datatypes and operation stay alive until it is
 * over (datatype.h).  The copy keeps the records of its types in the room
 * ep_coll_start makes after it.  EP_ERR_NO_MEM when the operation's hold
 * cannot be recorded: the call fails then, since MPI_Op_free could free
 * the operation while it runs. */
static ep_status_t args_hold(ep_coll_args_t *a)
{
    int n = 0;
    if (a->sbuf != MPI_IN_PLACE) {
        a->held[n++] = ep_dt_hold_rec(a->stype);
        for (int i = 0; a->stypes && i < a->ns; i++)
            a->held[n++] = ep_dt_hold_rec(a->stypes[i]);
    }
    a->held[n++] = ep_dt_hold_rec(a->rtype);
    for (int i = 0; a->rtypes && i < a->nr; i++)
        a->held[n++] = ep_dt_hold_rec(a->rtypes[i]);
    a->nheld = n;
    ep_status_t rc = ep_op_hold(a->op);
    a->op_held = !rc;
    return rc;
}

static void args_release(ep_coll_args_t *a)
{
    for (int i = 0; i < a->nheld; i++)
        ep_dt_release_rec(a->held[i]);
    if (a->op_held)
        ep_op_release(a->op);
}

static void inst_free(ep_coll_inst_t *in)
{
    for (int i = 0; i < in->c->nlocal; i++)
        if (in->args && in->args[i]) {
            args_release(in->args[i]);
            free(in->args[i]);
        }
    free(in->args);
    free(in->reqs);
    free(in);
}

/* ---- the running instances ------------------------------------------------
 * An instance whose every local rank arrived runs its PMPI steps; each
 * step's end is seen, and the next step started, by whoever polls one of
 * its requests, or by ep_coll_progress, which any waiting thread calls:
 * otherwise a process waiting on another request would leave this one's
 * next step unstarted while the other processes wait for it (MPICH's
 * comm/comm_idup_overlap: two idups completed in opposite orders).  The
 * list is guarded by running_lock, taken after a communicator's
 * coll_lock; the driver only tries coll_lock, so the order never inverts
 * into a deadlock. */
static pthread_mutex_t running_lock = PTHREAD_MUTEX_INITIALIZER;
static ep_coll_inst_t *running;
static _Atomic int n_running;
static __thread int driving EP_TLS; /* this thread holds running_lock in ep_coll_progress */

/* in's comm's coll_lock held. */
static void running_add(ep_coll_inst_t *in)
{
    pthread_mutex_lock(&running_lock);
    in->run_next = running;
    in->run_prev = &running;
    if (running)
        running->run_prev = &in->run_next;
    running = in;
    atomic_fetch_add_explicit(&n_running, 1, memory_order_relaxed);
    pthread_mutex_unlock(&running_lock);
}

/* in's comm's coll_lock held; nothing when in is not in the list.  This
 * thread may hold running_lock already (driving): the driver's steps can
 * wait (ep_wait_pmpi), and a wait's progress polls detached requests,
 * whose collective then finishes here. */
static void running_remove(ep_coll_inst_t *in)
{
    if (!in->run_prev)
        return;
    if (!driving)
        pthread_mutex_lock(&running_lock);
    *in->run_prev = in->run_next;
    if (in->run_next)
        in->run_next->run_prev = in->run_prev;
    in->run_prev = NULL;
    atomic_fetch_sub_explicit(&n_running, 1, memory_order_relaxed);
    if (!driving)
        pthread_mutex_unlock(&running_lock);
}

/* Under coll_lock, with the last step completed: finishes every local
 * endpoint, marks their requests done and frees the instance.
 * Every finish runs before any request is marked done: a finish may read
 * another endpoint's buffers (bcast copies from the source endpoint's),
 * which are that endpoint's again as soon as its request is done. */
static void inst_finish(ep_coll_inst_t *in)
{
    const ep_coll_kind_t *k = in->args[0]->kind;
    ep_status_t rc = in->status;
    int n = in->c->nlocal;
    for (int i = 0; i < n; i++) {
        ep_status_t st = rc;
        if (!st && k->finish)
            st = k->finish(in, i);
        ep_request_t *r = in->reqs[i];
        ep_mpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, st ? ep_status_class(st) : MPI_SUCCESS, 0, 0);
        r->failure = st;
        r->coll_inst = NULL;
    }
    running_remove(in);
    for (int i = 0; i < n; i++)
        ep_request_set_done(in->reqs[i]);
    inst_release(in);
    inst_free(in);
}

static ep_coll_inst_t *inst_find(ep_comm_t *c, uint64_t seq)
{
    ep_coll_inst_t *in;
    for (in = c->coll_insts; in; in = in->next)
        if (in->seq == seq)
            return in;
    if (!(in = calloc(1, sizeof *in)))
        return NULL;
    inst_init(in, c, calloc((size_t)c->nlocal, sizeof *in->args));
    in->reqs = calloc((size_t)c->nlocal, sizeof *in->reqs);
    if (!in->args || !in->reqs) {
        inst_free(in);
        return NULL;
    }
    in->seq = seq;
    in->next = c->coll_insts;
    c->coll_insts = in;
    return in;
}

static void inst_unlink(ep_comm_t *c, ep_coll_inst_t *in)
{
    for (ep_coll_inst_t **p = &c->coll_insts; *p; p = &(*p)->next)
        if (*p == in) {
            *p = in->next;
            return;
        }
}

/* n entries of v (each sz bytes) copied to *pos, which moves past them; v
 * itself when there is nothing to copy. */
static const void *keep(const void *v, int n, size_t sz, char **pos)
{
    if (!v || n <= 0)
        return v;
    void *p = memcpy(*pos, v, sz * (size_t)n);
    *pos += sz * (size_t)n;
    return p;
}

/* A copy of a in one block (free() releases it) that keeps its own
 * per-peer arrays (counts, displacements, the w forms' types): the entry
 * points may pass arrays of their own that go when the call returns (the
 * large-count forms), and the types are released when the instance goes,
 * after the caller may have freed its arrays.  NULL when out of memory. */
static ep_coll_args_t *args_copy(const ep_coll_args_t *a)
{
    int ns = a->sbuf != MPI_IN_PLACE ? a->ns : 0, nr = a->nr;
    size_t nrec = 2 + (size_t)(ns + nr); /* at most: stype, rtype and the type arrays */
    size_t room = sizeof(ep_dt_rec_t *) * nrec + (sizeof(MPI_Aint) + 3 * sizeof(int)) * (size_t)(ns + nr);
    ep_coll_args_t *copy = malloc(sizeof *copy + room);
    if (!copy)
        return NULL;
    *copy = *a;
    copy->held = (ep_dt_rec_t **)(void *)(copy + 1);
    copy->nheld = 0;
    copy->op_held = 0;
    char *pos = (char *)(copy->held + nrec); /* the MPI_Aint arrays first, then the ints */
    copy->sbdispls = keep(a->sbdispls, ns, sizeof(MPI_Aint), &pos);
    copy->rbdispls = keep(a->rbdispls, nr, sizeof(MPI_Aint), &pos);
    copy->stypes = keep(a->stypes, ns, sizeof(MPI_Datatype), &pos);
    copy->scounts = keep(a->scounts, ns, sizeof(int), &pos);
    copy->sdispls = keep(a->sdispls, ns, sizeof(int), &pos);
    copy->rtypes = keep(a->rtypes, nr, sizeof(MPI_Datatype), &pos);
    copy->rcounts = keep(a->rcounts, nr, sizeof(int), &pos);
    copy->rdispls = keep(a->rdispls, nr, sizeof(int), &pos);
    return copy;
}

ep_status_t ep_coll_start(ep_endpoint_t *ep, const ep_coll_args_t *a, ep_request_t **out)
{
    ep_comm_t *c = ep->comm;
    ep_request_t *r = ep_request_new(EP_REQ_COLL, ep, 1);
    ep_coll_args_t *copy = args_copy(a);

    *out = NULL;
    if (!r || !copy) {
        if (r)
            ep_request_destroy(r);
        free(copy);
        return EP_ERR_NO_MEM;
    }
    atomic_store(&r->state, EP_RS_PENDING);
    /* Every endpoint numbers its calls alike: the n-th call of each local
     * endpoint meets the others' n-th call. */
    uint64_t seq = ep->coll_seq++;
    pthread_mutex_lock(&c->coll_lock);
    ep_coll_inst_t *in = inst_find(c, seq);
    if (!in) {
        pthread_mutex_unlock(&c->coll_lock);
        ep_request_destroy(r);
        free(copy);
        return EP_ERR_NO_MEM;
    }
    in->args[ep->lidx] = copy;
    /* A failed hold fails the call on every local endpoint: they all
     * arrive as usual and see the instance's status. */
    ep_status_t held = args_hold(copy);
    if (held && !in->status)
        in->status = held;
    in->reqs[ep->lidx] = r;
    r->coll_inst = in;
    if (++in->arrived == c->nlocal) {
        inst_unlink(c, in);
        for (int i = 1; i < c->nlocal && !in->status; i++)
            in->status = ep_coll_agree(c, in->args[0], in->args[i]);
        if (!in->status)
            in->status = coll_broken(c);
        else
            note_failure(in, in->status);
        if (!in->status) {
            in->status = in->args[0]->kind->start(in);
            note_failure(in, in->status);
        }
        if (in->status && in->preq != MPI_REQUEST_NULL)
            ep_wait_pmpi(&in->preq, MPI_STATUS_IGNORE);
        if (in->preq == MPI_REQUEST_NULL && inst_step(in))
            inst_finish(in);
        else
            running_add(in);
    }
    pthread_mutex_unlock(&c->coll_lock);
    *out = r;
    return EP_OK;
}

ep_coll_args_t *ep_coll_args_keep(const ep_coll_args_t *a)
{
    ep_coll_args_t *copy = args_copy(a);
    if (copy && args_hold(copy)) {
        ep_coll_args_drop(copy);
        copy = NULL;
    }
    return copy;
}

void ep_coll_args_drop(ep_coll_args_t *kept)
{
    if (kept) {
        args_release(kept);
        free(kept);
    }
}

/* One look at running instance in, its comm's coll_lock held: its next
 * step if its PMPI operation is over; then, once every step is over, its
 * finish when `finish` (a poll of one of its own requests), else that is
 * left to such a poll: finishing runs the program's callbacks (an idup's
 * attribute copies), which belong to the threads of the instance's ranks,
 * not to whichever thread happened to drive progress. */
static void inst_drive(ep_coll_inst_t *in, int finish)
{
    int flag = 0;
    if (!in->steps_done) {
        if (PMPI_Test(&in->preq, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS && !in->status)
            in->status = EP_ERR_INTERN;
        in->steps_done = (flag || in->status) && inst_step(in);
    }
    if (in->steps_done && finish)
        inst_finish(in);
}

void ep_coll_progress(void)
{
    if (!atomic_load_explicit(&n_running, memory_order_relaxed) || driving || pthread_mutex_trylock(&running_lock) != 0)
        return;
    driving = 1;
    for (ep_coll_inst_t *in = running, *next; in; in = next) {
        next = in->run_next;
        pthread_mutex_t *lock = &in->c->coll_lock;
        if (pthread_mutex_trylock(lock) == 0) {
            inst_drive(in, 0);
            pthread_mutex_unlock(lock);
        }
    }
    driving = 0;
    pthread_mutex_unlock(&running_lock);
}

int ep_coll_poll(ep_request_t *r)
{
    if (ep_request_state(r) == EP_RS_DONE)
        return 1;
    ep_comm_t *c = r->ep->comm;
    /* Another thread holding the lock is driving it already. */
    if (pthread_mutex_trylock(&c->coll_lock) != 0)
        return 0;
    ep_coll_inst_t *in = r->coll_inst;
    if (ep_request_state(r) != EP_RS_DONE && in && in->arrived == c->nlocal)
        inst_drive(in, 1);
    pthread_mutex_unlock(&c->coll_lock);
    return ep_request_state(r) == EP_RS_DONE;
}
