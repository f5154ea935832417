/* One-sided communication on endpoint communicators (see win.h). */
#include "rma/win.h"

#include "coll/coll.h"
#include "core/datatype.h"
#include "core/op.h"
#include "core/typemap.h"
#include "base/grow.h"
#include "p2p/p2p.h"
#include "core/proc.h"
#include "core/request.h"
#include "base/wait.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lock words: shared holders count up from 0; an exclusive holder adds
 * EXCL.  A claim that finds the word incompatible takes itself back. */
#define EXCL ((int64_t)1 << 40)

/* Per-target state bits of an endpoint's epochs (ep_win_ep_t.state). */
enum { ST_SHARED = 1, ST_EXCL = 2, ST_NOCHECK = 4, ST_STARTED = 8 };

/* Tags of the PSCW notices on the private communicator. */
enum { TAG_POST = 1, TAG_COMPLETE = 2 };

/* The MPI's text for its error code rc. */
static const char *mpi_text(int rc, char text[MPI_MAX_ERROR_STRING])
{
    int len = 0;
    if (PMPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, MPI_MAX_ERROR_STRING, "error %d", rc);
    return text;
}

static ep_status_t from_pmpi(int rc)
{
    int cls;
    if (rc == MPI_SUCCESS)
        return EP_OK;
    PMPI_Error_class(rc, &cls);
    switch (cls) {
    case MPI_ERR_RMA_RANGE:
        return EP_ERR_RMA_RANGE;
    case MPI_ERR_RMA_SYNC:
        return EP_ERR_RMA_SYNC;
    case MPI_ERR_TYPE:
        return EP_ERR_TYPE;
    case MPI_ERR_OP:
        return EP_ERR_OP;
    case MPI_ERR_COUNT:
        return EP_ERR_COUNT;
    case MPI_ERR_NO_MEM:
        return EP_ERR_NO_MEM;
    default: {
        char text[MPI_MAX_ERROR_STRING];
        ep_status_explain(EP_ERR_INTERN, "%s failed under the window: %s", EP_MPI_NAME, mpi_text(rc, text));
        return EP_ERR_INTERN;
    }
    }
}

/* ---- creation: a collective kind (coll.h) --------------------------------
 * start clones the communicator (the window's private one), complete takes
 * the clone through its steps and then builds the PMPI windows, finish
 * gives each endpoint its handle. */

typedef struct win_arg {
    ep_win_flavor_t flavor;
    void *base;
    MPI_Aint size;
    int disp_unit;
    void *baseptr;
    MPI_Win *out;
} win_arg_t;

/* ---- the lock windows -----------------------------------------------------
 * The lock words of every endpoint window over all processes of the job
 * are in one dynamic PMPI window over all processes (in the chunks of
 * lword_take), made by the first such window: a window of its own per
 * endpoint window would cost it a third MPICH context id (beside its
 * private communicator's and its data window's), and MPICH 4.0.2 has 2048
 * (MPICH's test rma/window_creation keeps 1000 windows alive).  Not made
 * at MPI_Init: a program without windows would pay for it there (MPICH's
 * blocking construction, 0.35 s of 0.9 s at 16 processes on 2 cores).  A
 * window over some of the processes has a lock window of its own over
 * them (in w->lockwin).  Not in the data windows: there the lock words'
 * atomics (active messages in MPICH) would make later flushes of the data
 * wait for more. */

static pthread_mutex_t lock_win_making = PTHREAD_MUTEX_INITIALIZER;
static MPI_Win lock_win = MPI_WIN_NULL; /* set once, under lw_lock (below) */
static int lock_win_rc;                 /* why there is none, once it was tried */

/* The MPI refused a window an endpoint window needs (rc its error). */
static ep_status_t window_refused(int rc)
{
    char text[MPI_MAX_ERROR_STRING];
    ep_status_explain(EP_ERR_WIN, "%s could not create the process-level window this window needs (%s)%s", EP_MPI_NAME,
                      mpi_text(rc, text), EP_MPI_WINDOW_HINT);
    return EP_ERR_WIN;
}

/* The MPI's window under an endpoint window made, or why not: the classes
 * from_pmpi knows, else the MPI's own text. */
static ep_status_t window_made(int rc)
{
    ep_status_t st = from_pmpi(rc);
    return st == EP_ERR_INTERN ? window_refused(rc) : st;
}

/* The lock words of the process, in chunks attached to the lock window
 * once each (when there is one: local windows need none): Open MPI's
 * default one-sided component takes 32 attachments per window, and
 * windows come and go by the thousand.  A word goes back to the free list
 * with its window, zero again once every lock on it was given back. */
#define LW_CHUNK 512
static ep_lock_t lw_lock;
static int64_t **lw_free, **lw_chunk;
static size_t lw_nfree, lw_capfree, lw_nchunk, lw_capchunk;

/* One more chunk's words on the free list (lw_lock held): MPI_SUCCESS,
 * the MPI's error, or MPI_ERR_NO_MEM. */
static int lword_chunk(void)
{
    int64_t *chunk;
    if (!EP_GROW(lw_chunk, lw_nchunk, lw_capchunk, 8) ||
        !ep_grow_room(&lw_free, sizeof *lw_free, (lw_nchunk + 1) * LW_CHUNK - 1, &lw_capfree, LW_CHUNK) ||
        !(chunk = calloc(LW_CHUNK, sizeof *chunk)))
        return MPI_ERR_NO_MEM;
    int rc = lock_win == MPI_WIN_NULL ? MPI_SUCCESS : PMPI_Win_attach(lock_win, chunk, LW_CHUNK * sizeof *chunk);
    if (rc != MPI_SUCCESS) {
        free(chunk);
        return rc;
    }
    lw_chunk[lw_nchunk++] = chunk;
    for (int i = LW_CHUNK - 1; i >= 0; i--)
        lw_free[lw_nfree++] = &chunk[i];
    return MPI_SUCCESS;
}

/* A dynamic PMPI window over pc, its errors returned, in a lock_all epoch
 * for its whole life; MPI_SUCCESS or the MPI's error. */
static int lockwin_make(MPI_Comm pc, MPI_Win *lw)
{
    int rc = PMPI_Win_create_dynamic(MPI_INFO_NULL, pc, lw);
    if (rc != MPI_SUCCESS) {
        *lw = MPI_WIN_NULL;
        return rc;
    }
    PMPI_Win_set_errhandler(*lw, MPI_ERRORS_RETURN);
    if ((rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, *lw)) != MPI_SUCCESS)
        PMPI_Win_free(lw);
    return rc;
}

/* Ends lockwin_make's epoch and frees the window (collective over its
 * processes); the MPI's first error. */
static int lockwin_free(MPI_Win *lw)
{
    int r = PMPI_Win_unlock_all(*lw), rc = PMPI_Win_free(lw);
    return r ? r : rc;
}

/* The lock window over all processes, made at the first call (collective
 * over them: every call is within the creation of an endpoint window over
 * all of them); MPI_SUCCESS, or why the MPI made none.  Made on a
 * communicator whose errors return: an MPI that makes no windows (Open MPI
 * 4.1 with one process, by default) fails the windows a program makes, as
 * it would without epmpi. */
static int world_lock_win(void)
{
    pthread_mutex_lock(&lock_win_making);
    if (lock_win == MPI_WIN_NULL && lock_win_rc == MPI_SUCCESS) {
        MPI_Win lw;
        int rc = lockwin_make(ep_proc_group_comm(), &lw);
        /* The chunks taken so far, by local windows, were attached to none. */
        ep_lock(&lw_lock);
        for (size_t i = 0; rc == MPI_SUCCESS && i < lw_nchunk; i++)
            rc = PMPI_Win_attach(lw, lw_chunk[i], LW_CHUNK * sizeof *lw_chunk[i]);
        if (rc == MPI_SUCCESS)
            lock_win = lw;
        ep_unlock(&lw_lock);
        if (rc != MPI_SUCCESS && lw != MPI_WIN_NULL)
            lockwin_free(&lw);
        lock_win_rc = rc;
    }
    int rc = lock_win == MPI_WIN_NULL ? lock_win_rc : MPI_SUCCESS;
    pthread_mutex_unlock(&lock_win_making);
    return rc;
}

/* A word set to zero, or NULL with *rc why (lword_chunk). */
static int64_t *lword_take(int *rc)
{
    int64_t *word = NULL;
    ep_lock(&lw_lock);
    if ((*rc = lw_nfree ? MPI_SUCCESS : lword_chunk()) == MPI_SUCCESS) {
        word = lw_free[--lw_nfree];
        *word = 0;
    }
    ep_unlock(&lw_lock);
    return word;
}

static void lword_give(int64_t *word)
{
    ep_lock(&lw_lock);
    lw_free[lw_nfree++] = word; /* room: it holds every word of every chunk */
    ep_unlock(&lw_lock);
}

void ep_win_finalize(void)
{
    lock_win_rc = MPI_SUCCESS;
    for (size_t i = 0; i < lw_nchunk; i++) {
        if (lock_win != MPI_WIN_NULL)
            PMPI_Win_detach(lock_win, lw_chunk[i]);
        free(lw_chunk[i]);
    }
    free(lw_chunk), free(lw_free);
    lw_chunk = lw_free = NULL;
    lw_nchunk = lw_capchunk = lw_nfree = lw_capfree = 0;
    if (lock_win != MPI_WIN_NULL)
        lockwin_free(&lock_win);
}

/* Gives back w's lock words, and frees its own lock window (collective
 * over its processes); the MPI's first error. */
static int lwords_drop(ep_win_t *w)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; !w->lockwin_own && w->lwords && i < w->comm->nlocal; i++)
        if (w->lwords[i])
            lword_give(w->lwords[i]);
    if (w->lockwin_own && w->lockwin != MPI_WIN_NULL) {
        int r = w->lwords && w->lwords[0] ? PMPI_Win_detach(w->lockwin, w->lwords[0]) : MPI_SUCCESS;
        rc = lockwin_free(&w->lockwin);
        rc = r ? r : rc;
    }
    if (w->lockwin_own && w->lwords)
        free(w->lwords[0]); /* one block for all */
    free(w->lwords);
    w->lwords = NULL;
    w->lockwin = MPI_WIN_NULL;
    w->lockwin_own = 0;
    return rc;
}

/* The lock words of w's local ranks, zero, and their displacements in
 * w's lock window in mine[].lword (collective over w's processes). */
static ep_status_t lwords_take(ep_win_t *w, ep_win_rank_t *mine)
{
    int nl = w->comm->nlocal, rc = MPI_SUCCESS;
    if (!(w->lwords = calloc((size_t)nl, sizeof *w->lwords)))
        return EP_ERR_NO_MEM;
    if (!w->local && w->comm->nprocs < ep_proc_world_size()) {
        /* Over part of the processes: a lock window of their own, one block
         * of words attached. */
        int64_t *block = calloc((size_t)nl, sizeof *block);
        if (!block)
            return EP_ERR_NO_MEM;
        w->lwords[0] = block;
        w->lockwin_own = 1;
        if ((rc = lockwin_make(w->pc, &w->lockwin)) == MPI_SUCCESS &&
            (rc = PMPI_Win_attach(w->lockwin, block, (MPI_Aint)(sizeof *block * (size_t)nl))) != MPI_SUCCESS)
            lockwin_free(&w->lockwin);
        for (int i = 0; i < nl && rc == MPI_SUCCESS; i++) {
            w->lwords[i] = &block[i];
            PMPI_Get_address(w->lwords[i], &mine[i].lword);
        }
        return rc == MPI_SUCCESS ? EP_OK : window_made(rc);
    }
    if (!w->local && (rc = world_lock_win()) != MPI_SUCCESS)
        return window_refused(rc);
    w->lockwin = lock_win;
    for (int i = 0; i < nl; i++)
        if ((w->lwords[i] = lword_take(&rc)))
            PMPI_Get_address(w->lwords[i], &mine[i].lword);
        else
            return window_made(rc);
    return EP_OK;
}

/* ---- regions attached to pwin ----------------------------------------------
 * What this process's ranks attached to pwin (a created window's memory,
 * a dynamic window's regions), so that accesses to them can be checked and
 * everything is detached before pwin is freed; a local window keeps the
 * list alone.  regions_lock guards it. */

/* Takes the region at base off w's list: 1 when it was there. */
static int region_forget(ep_win_t *w, const void *base)
{
    int found = 0;
    ep_lock(&w->regions_lock);
    for (int i = 0; i < w->nregions && !found; i++)
        if ((found = w->regions[i].base == base))
            w->regions[i] = w->regions[--w->nregions];
    ep_unlock(&w->regions_lock);
    return found;
}

static ep_status_t region_attach(ep_win_t *w, void *base, MPI_Aint size)
{
    ep_lock(&w->regions_lock);
    int room = EP_GROW(w->regions, w->nregions, w->capregions, 8);
    if (room)
        w->regions[w->nregions++] = (ep_win_region_t){base, size};
    ep_unlock(&w->regions_lock);
    if (!room)
        return EP_ERR_NO_MEM;
    int rc = w->local ? MPI_SUCCESS : PMPI_Win_attach(w->pwin, base, size);
    if (rc != MPI_SUCCESS)
        region_forget(w, base);
    return from_pmpi(rc);
}

/* Ends the epoch of pwin and frees it; the first error. */
static int pwin_free(ep_win_t *w)
{
    int rc = w->pwin_epoch ? PMPI_Win_unlock_all(w->pwin) : MPI_SUCCESS;
    w->pwin_epoch = 0;
    /* Every region detached first (a created window's ranks' memory, what
     * the program left attached to a dynamic one): Open MPI 4.1's UCX
     * windows crash when freed with more than one region attached (a plain
     * program shows it). */
    for (; w->nregions > 0; w->nregions--) {
        int r = PMPI_Win_detach(w->pwin, w->regions[w->nregions - 1].base);
        rc = rc ? rc : r;
    }
    int r = PMPI_Win_free(&w->pwin);
    return rc ? rc : r;
}

static void win_destroy(ep_win_t *w)
{
    if (w->pwin != MPI_WIN_NULL)
        pwin_free(w);
    lwords_drop(w);
    free(w->segment);
    free(w->regions);
    free(w->rank);
    free(w->segbase);
    free(w);
}

static ep_status_t create_start(ep_coll_inst_t *in)
{
    ep_win_t *w = calloc(1, sizeof *w);
    if (!w)
        return EP_ERR_NO_MEM;
    w->pwin = w->lockwin = MPI_WIN_NULL;
    w->flavor = ((const win_arg_t *)in->args[0]->extra)->flavor;
    in->res = w;
    return ep_comm_clone_begin(in->c, &w->comm, &in->preq);
}

/* The processes' records of every local rank, gathered into w->rank. */
static ep_status_t exchange_ranks(ep_win_t *w, const ep_win_rank_t *mine)
{
    ep_comm_t *c = w->comm;
    size_t rs = sizeof(ep_win_rank_t);
    ep_win_rank_t *all = malloc(rs * (size_t)c->size);
    int *cnt = malloc(2 * sizeof(int) * (size_t)c->nprocs), *dsp = cnt ? cnt + c->nprocs : NULL;
    ep_status_t rc = all && cnt ? EP_OK : EP_ERR_NO_MEM;
    if (!rc && c->pcomm == MPI_COMM_NULL)
        memcpy(all, mine, rs * (size_t)c->nlocal);
    else if (!rc) {
        for (int p = 0; p < c->nprocs; p++) {
            cnt[p] = (int)(c->proc_nlocal[p] * rs);
            dsp[p] = (int)(c->proc_first[p] * rs);
        }
        MPI_Request req;
        rc = from_pmpi(ep_wait_pmpi_started(
            PMPI_Iallgatherv(mine, (int)(c->nlocal * rs), MPI_BYTE, all, cnt, dsp, MPI_BYTE, w->pc, &req), &req));
    }
    for (int r = 0; !rc && r < c->size; r++)
        w->rank[r] = all[c->proc_first[c->ranks[r].proc] + c->ranks[r].lidx];
    free(all);
    free(cnt);
    return rc;
}

/* All processes on one node (shared windows need that). */
static ep_status_t one_node(MPI_Comm pc)
{
    int id[2] = {ep_proc_node_id(), -ep_proc_node_id()}, lo[2]; /* the smallest and the largest */
    MPI_Request req;
    ep_status_t rc = from_pmpi(ep_wait_pmpi_started(PMPI_Iallreduce(id, lo, 2, MPI_INT, MPI_MIN, pc, &req), &req));
    if (rc)
        return rc;
    return lo[0] == -lo[1] ? EP_OK : EP_ERR_RMA_SHARED;
}

/* The PMPI windows and the rank table, once the private clone exists. */
static ep_status_t setup(ep_coll_inst_t *in, ep_win_t *w)
{
    ep_comm_t *c = w->comm;
    int nl = c->nlocal;
    ep_win_rank_t *mine = calloc((size_t)nl, sizeof *mine);
    MPI_Aint *off = calloc((size_t)nl, sizeof *off);
    w->rank = calloc((size_t)c->size, sizeof *w->rank);
    w->segbase = calloc((size_t)c->nprocs, sizeof *w->segbase);
    w->pc = c->pcomm != MPI_COMM_NULL ? c->pcomm : MPI_COMM_SELF;
    w->local = c->pcomm == MPI_COMM_NULL;
    ep_status_t rc = mine && off && w->rank && w->segbase ? EP_OK : EP_ERR_NO_MEM;

    for (int i = 0; i < nl && !rc; i++) {
        const win_arg_t *a = in->args[i]->extra;
        mine[i] = (ep_win_rank_t){.tbase = (MPI_Aint)a->base, .size = a->size, .disp_unit = a->disp_unit};
        if (w->flavor == EP_WIN_DYNAMIC)
            mine[i] = (ep_win_rank_t){.disp_unit = 1};
    }
    if (!rc && (w->flavor == EP_WIN_SHARED || w->flavor == EP_WIN_ALLOCATE)) {
        void *segment;
        /* One segment per process, its ranks' slices in local order, each
         * starting on a cache line.  Allocated by MPICH, which can then
         * serve other processes through shared memory (it cannot for the
         * attached memory of a dynamic window). */
        MPI_Aint total = 0;
        for (int i = 0; i < nl; i++) {
            off[i] = total;
            total += (mine[i].size + 63) & ~(MPI_Aint)63;
        }
        if (w->local) /* at least a line, so that it exists */
            rc = (segment = w->segment = aligned_alloc(64, (size_t)total + 64)) ? EP_OK : EP_ERR_NO_MEM;
        else if (w->flavor == EP_WIN_ALLOCATE)
            rc = window_made(PMPI_Win_allocate(total, 1, MPI_INFO_NULL, w->pc, &segment, &w->pwin));
        else if (!(rc = one_node(w->pc)))
            rc = window_made(PMPI_Win_allocate_shared(total, 1, MPI_INFO_NULL, w->pc, &segment, &w->pwin));
        if (!rc)
            w->segbase[c->myproc] = segment;
        for (int i = 0; i < nl && !rc; i++)
            mine[i].tbase = off[i];
    } else if (!rc && !w->local) {
        rc = window_made(PMPI_Win_create_dynamic(MPI_INFO_NULL, w->pc, &w->pwin));
        for (int i = 0; i < nl && !rc && w->flavor != EP_WIN_DYNAMIC; i++)
            if (mine[i].size > 0)
                rc = region_attach(w, (void *)mine[i].tbase, mine[i].size);
    }
    if (w->pwin != MPI_WIN_NULL) /* its errors come back here, also those of a cleanup after a failure */
        PMPI_Win_set_errhandler(w->pwin, MPI_ERRORS_RETURN);
    /* The lock words, zero before anyone can take a lock (the barrier
     * below), in the lock window where each rank's is known by address. */
    if (!rc)
        rc = lwords_take(w, mine);
    if (!rc)
        rc = exchange_ranks(w, mine);
    /* Shared windows: every process's segment, to address it here. */
    for (int p = 0; p < c->nprocs && !rc && !w->local && w->flavor == EP_WIN_SHARED; p++) {
        MPI_Aint sz;
        int du;
        rc = from_pmpi(PMPI_Win_shared_query(w->pwin, p, &sz, &du, &w->segbase[p]));
    }
    if (!rc && !w->local && !(rc = from_pmpi(PMPI_Win_lock_all(MPI_MODE_NOCHECK, w->pwin))))
        w->pwin_epoch = 1;
    /* Every lock word is zero before anyone takes a lock. */
    if (!rc && c->pcomm != MPI_COMM_NULL) {
        MPI_Request req;
        rc = from_pmpi(ep_wait_pmpi_started(PMPI_Ibarrier(w->pc, &req), &req));
    }
    free(mine);
    free(off);
    return rc;
}

static ep_status_t create_complete(ep_coll_inst_t *in)
{
    ep_win_t *w = in->res;
    ep_status_t rc = ep_comm_clone_step(in->c, w->comm, in->stage, &in->preq);
    if (rc || in->preq != MPI_REQUEST_NULL)
        return rc;
    return setup(in, w);
}

static ep_status_t create_finish(ep_coll_inst_t *in, int lidx)
{
    ep_win_t *w = in->res;
    const win_arg_t *a = in->args[lidx]->extra;
    ep_win_ep_t *we = calloc(1, sizeof *we);
    if (we) {
        we->state = calloc((size_t)w->comm->size, 1);
        we->dirty = calloc((size_t)w->comm->size, sizeof *we->dirty);
    }
    if (!we || !we->state || !we->dirty) {
        if (we) {
            free(we->state);
            free((void *)we->dirty);
            free(we);
        }
        return EP_ERR_NO_MEM;
    }
    we->obj.kind = EP_OBJ_WIN;
    we->w = w;
    we->ep = &w->comm->local[lidx];
    we->rank = we->ep->rank;
    we->base = w->flavor == EP_WIN_SHARED || w->flavor == EP_WIN_ALLOCATE
                   ? ep_win_local_addr(w, w->comm->myproc, w->rank[we->rank].tbase)
                   : a->base;
    we->size = a->size;
    we->disp_unit = a->disp_unit;
    we->flavor_attr = w->flavor == EP_WIN_CREATE     ? MPI_WIN_FLAVOR_CREATE
                      : w->flavor == EP_WIN_ALLOCATE ? MPI_WIN_FLAVOR_ALLOCATE
                      : w->flavor == EP_WIN_SHARED   ? MPI_WIN_FLAVOR_SHARED
                                                     : MPI_WIN_FLAVOR_DYNAMIC;
    we->model_attr = MPI_WIN_UNIFIED;
    we->errhandler = MPI_ERRORS_ARE_FATAL;
    if (w->flavor == EP_WIN_DYNAMIC) {
        we->base = MPI_BOTTOM;
        we->size = 0;
        we->disp_unit = 1;
    }
    we->handle = EP_HANDLE_NEW(MPI_Win, ep_registry_add(EP_HTYPE_WIN, &we->obj), MPI_WIN_NULL);
    if (we->handle == MPI_WIN_NULL) {
        free(we->state);
        free((void *)we->dirty);
        free(we);
        return EP_ERR_NO_MEM;
    }
    atomic_fetch_add(&w->refs, 1);
    *a->out = we->handle;
    if (a->baseptr)
        *(void **)a->baseptr = we->base;
    return EP_OK;
}

static void create_fail(ep_coll_inst_t *in)
{
    ep_win_t *w = in->res;
    if (!w)
        return;
    if (w->comm && w->comm->local) /* built: the clone goes like a communicator */
        for (int i = 0; i < w->comm->nlocal; i++)
            ep_endpoint_free(&w->comm->local[i]);
    else if (w->comm)
        ep_comm_clone_abort(w->comm, &in->preq);
    win_destroy(w);
    in->res = NULL;
}

static const ep_coll_kind_t create_kind = {
    .start = create_start, .complete = create_complete, .finish = create_finish, .fail = create_fail};

ep_status_t ep_win_create(ep_endpoint_t *ep, ep_win_flavor_t flavor, void *base, MPI_Aint size, int disp_unit,
                          void *baseptr, MPI_Win *out)
{
    win_arg_t wa = {flavor, base, size, disp_unit, baseptr, out};
    ep_coll_args_t a;
    ep_coll_args_init(&a, &create_kind, ep);
    a.extra = &wa;
    *out = MPI_WIN_NULL;
    return ep_coll_run(ep, &a);
}

/* ---- the ranks' lock words -------------------------------------------------- */

/* The process holding target's lock word, by its rank in w's lock window. */
static int lock_proc(const ep_win_t *w, int target)
{
    int proc = w->comm->ranks[target].proc;                   /* its rank in w->pc */
    return w->lockwin_own ? proc : w->comm->proc_world[proc]; /* else the world's lock window */
}

/* Adds v to target's lock word; *old gets its value before. */
static ep_status_t lock_add(ep_win_t *w, int target, int64_t v, int64_t *old)
{
    if (w->local) {
        *old = __atomic_fetch_add((int64_t *)w->rank[target].lword, v, __ATOMIC_SEQ_CST);
        return EP_OK;
    }
    int proc = lock_proc(w, target);
    MPI_Request r;
    return from_pmpi(
        ep_wait_pmpi_started(PMPI_Rget_accumulate(&v, 1, MPI_INT64_T, old, 1, MPI_INT64_T, proc, w->rank[target].lword,
                                                  1, MPI_INT64_T, MPI_SUM, w->lockwin, &r),
                             &r));
}

/* One try at target's lock: 1 when it is taken, or when *rc says why
 * not; 0 when it was not free (the addition taken back). */
static int lock_try(ep_win_t *w, int target, int excl, ep_status_t *rc)
{
    int64_t inc = excl ? EXCL : 1, old = 0;
    if ((*rc = lock_add(w, target, inc, &old)) || (excl ? old == 0 : old < EXCL))
        return 1;
    return (*rc = lock_add(w, target, -inc, &old)) != EP_OK;
}

static ep_status_t lock_take(ep_win_t *w, int target, int excl)
{
    ep_status_t rc;
    EP_WAIT_UNTIL(lock_try(w, target, excl, &rc));
    if (rc)
        return rc;
    atomic_thread_fence(memory_order_seq_cst); /* direct accesses come after */
    return EP_OK;
}

/* Gives target's lock back without waiting for the round trip: the
 * next try of this process on the word comes after it (MPI orders
 * accumulates from one origin to one location), others see it when it
 * lands, and the window's free completes it before the word is reused. */
static ep_status_t lock_give(ep_win_t *w, int target, int excl)
{
    static const int64_t give[2] = {-1, -EXCL}; /* origin buffers that outlive the operation */
    excl = excl != 0;
    atomic_thread_fence(memory_order_seq_cst); /* direct accesses came before */
    if (w->local) {
        int64_t old;
        return lock_add(w, target, give[excl], &old);
    }
    return from_pmpi(PMPI_Accumulate(&give[excl], 1, MPI_INT64_T, lock_proc(w, target), w->rank[target].lword, 1,
                                     MPI_INT64_T, MPI_SUM, w->lockwin));
}

/* ---- operations ------------------------------------------------------------- */

int ep_win_in_epoch(const ep_win_ep_t *we, int target) { return we->fence_open || we->lock_all || we->state[target]; }

char *ep_win_local_addr(const ep_win_t *w, int proc, MPI_Aint pd)
{
    if (w->flavor == EP_WIN_SHARED)
        return w->segbase[proc] + pd;
    if (proc != w->comm->myproc)
        return NULL;
    return w->flavor == EP_WIN_ALLOCATE ? w->segbase[proc] + pd : (char *)pd;
}

/* A request that is complete already (operations done here). */
static ep_status_t done_request(ep_win_ep_t *we, MPI_Request *req)
{
    ep_request_t *r = ep_request_new(EP_REQ_SEND, we->ep, 1);
    if (!r)
        return EP_ERR_NO_MEM;
    ep_mpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    ep_request_set_done(r);
    *req = r->handle;
    return EP_OK;
}

/* [first, end) lies in one region this process's ranks attached to the
 * dynamic window w. */
static int attached_covers(ep_win_t *w, MPI_Aint first, MPI_Aint end)
{
    int in = 0;
    ep_lock(&w->regions_lock);
    for (int i = 0; i < w->nregions && !in; i++)
        in = first >= (MPI_Aint)w->regions[i].base && end <= (MPI_Aint)w->regions[i].base + w->regions[i].size;
    ep_unlock(&w->regions_lock);
    return in;
}

/* The target's window covers tcount elements of ttype at disp.  In a
 * dynamic window, only a target in this process is checked here (the MPI
 * checks the others'). */
static ep_status_t in_range(ep_win_t *w, const ep_rma_t *op)
{
    const ep_win_rank_t *t = &w->rank[op->target];
    int dynamic = w->flavor == EP_WIN_DYNAMIC;
    MPI_Aint lb, ext, tlb = 0, text = ep_datatype_builtin_size(op->ttype);
    if (op->tcount == 0 || (dynamic && w->comm->ranks[op->target].proc != w->comm->myproc))
        return EP_OK;
    if (op->disp < 0 && !dynamic)
        return EP_ERR_DISP;
    if (text >= 0)
        ext = text;
    else if (PMPI_Type_get_extent(op->ttype, &lb, &ext) || PMPI_Type_get_true_extent(op->ttype, &tlb, &text))
        return EP_ERR_TYPE;
    MPI_Aint first = op->disp * t->disp_unit + tlb, end = first + (MPI_Aint)(op->tcount - 1) * ext + text;
    if (!dynamic)
        return first >= 0 && end <= t->size ? EP_OK : EP_ERR_RMA_RANGE;
    if (attached_covers(w, first, end))
        return EP_OK;
    ep_status_explain(EP_ERR_RMA_RANGE,
                      "the target data (address %#lx, %ld bytes) lie in no memory attached to the window",
                      (unsigned long)first, (long)(end - first));
    return EP_ERR_RMA_RANGE;
}

/* ---- accumulates in local windows --------------------------------------------
 * Every rank of a local window is in this process, so an accumulate is done
 * here: the target's elements packed, combined with the origin's, written
 * back, all under the window's accumulate lock, which makes them atomic with
 * each other as MPI requires (whole operations, which is more than it asks). */

static ep_status_t cas_here(ep_win_t *w, const ep_rma_t *op, char *addr)
{
    unsigned char old[32];
    int es = ep_datatype_builtin_size(op->otype);
    if (es <= 0 && PMPI_Type_size(op->otype, &es) != MPI_SUCCESS)
        return EP_ERR_TYPE;
    if (!ep_datatype_is_predefined(op->otype) || es <= 0 || es > (int)sizeof old) {
        ep_status_explain(EP_ERR_TYPE,
                          "compare-and-swap takes one element of a predefined integer, logical or byte type");
        return EP_ERR_TYPE;
    }
    ep_lock(&w->acc_lock);
    memcpy(old, addr, (size_t)es);
    if (!memcmp(old, op->cbuf, (size_t)es))
        memcpy(addr, op->obuf, (size_t)es);
    memcpy(op->rbuf, old, (size_t)es);
    ep_unlock(&w->acc_lock);
    return EP_OK;
}

/* The element type of an accumulate's side, which must be the target's
 * (*elem, MPI_DATATYPE_NULL for the first side asked). */
static ep_status_t acc_element(MPI_Datatype t, const char *side, MPI_Datatype *elem)
{
    MPI_Datatype e;
    if (ep_typemap_element(t, &e)) {
        ep_status_explain(EP_ERR_TYPE, "the %s datatype of an accumulate must be built of one predefined type", side);
        return EP_ERR_TYPE;
    }
    if (*elem != MPI_DATATYPE_NULL && e != *elem) {
        ep_status_explain(EP_ERR_TYPE,
                          "the %s datatype of the accumulate is built of another predefined type than the "
                          "target datatype",
                          side);
        return EP_ERR_TYPE;
    }
    *elem = e;
    return EP_OK;
}

static ep_status_t acc_here(ep_win_t *w, const ep_rma_t *op, char *addr)
{
    MPI_Datatype elem = MPI_DATATYPE_NULL;
    ep_dt_layout_t tl, ol, rl;
    int nop = op->op == MPI_NO_OP, replace = op->op == MPI_REPLACE, es = 0;
    ep_status_t st = acc_element(op->ttype, "target", &elem);
    if (!st)
        st = ep_dt_layout(op->ttype, op->tcount, &tl);
    if (!st && !nop && !(st = acc_element(op->otype, "origin", &elem)) &&
        !(st = ep_dt_layout(op->otype, op->ocount, &ol)) && ol.bytes != tl.bytes) {
        ep_status_explain(EP_ERR_COUNT, "the origin data (%ld bytes) and the target data (%ld bytes) differ in size",
                          (long)ol.bytes, (long)tl.bytes);
        st = EP_ERR_COUNT;
    }
    if (!st)
        st = ep_op_check(op->op, elem);
    if (!st && op->kind == EP_RMA_GET_ACC)
        st = ep_dt_layout(op->rtype, op->rcount, &rl);
    if (!st && (PMPI_Type_size(elem, &es) != MPI_SUCCESS || es <= 0 || tl.bytes / es > INT32_MAX))
        st = es <= 0 ? EP_ERR_TYPE : EP_ERR_COUNT;
    char *tbuf = st ? NULL : malloc(2 * (size_t)tl.bytes + 1), *obuf = tbuf ? tbuf + tl.bytes : NULL;
    if (!st && !tbuf)
        st = EP_ERR_NO_MEM;
    if (st)
        return st;
    ep_lock(&w->acc_lock);
    st = ep_dt_pack(addr, op->tcount, op->ttype, &tl, tbuf);
    if (!st && op->kind == EP_RMA_GET_ACC)
        st = ep_dt_unpack(tbuf, tl.bytes, op->rbuf, op->rcount, op->rtype, &rl);
    if (!st && !nop)
        st = ep_dt_pack(op->obuf, op->ocount, op->otype, &ol, replace ? tbuf : obuf);
    if (!st && !nop && !replace) {
        /* a type ep_op_check does not know: the MPI decides */
        if (ep_op_reduce_local(obuf, tbuf, (int)(tl.bytes / es), elem, op->op) != MPI_SUCCESS)
            st = EP_ERR_OP;
    }
    if (!st && !nop)
        st = ep_dt_unpack(tbuf, tl.bytes, addr, op->tcount, op->ttype, &tl);
    ep_unlock(&w->acc_lock);
    free(tbuf);
    return st;
}

/* ---- gets ------------------------------------------------------------------------
 * MPICH 4.0.2 can return from PMPI_Win_flush_all before the data of a
 * large PMPI_Get has landed (1 MiB, 4 ranks on 2 cores: 2 to 4 runs of
 * rma_fence's 2:2,1 shape in 150 over the UCX transport, whose waits call
 * into MPICH less often).  The request of a PMPI_Rget completes only with
 * its data, so a Get of an endpoint is an Rget whose request the next
 * completing call of that endpoint (fence, flush, unlock, complete, free)
 * waits for. */

/* Issues a Get as an Rget kept in we->gets; waits for it at once when
 * there is no room to keep it. */
static int get_tracked(ep_win_ep_t *we, const ep_rma_t *op, int proc, MPI_Aint pd)
{
    MPI_Win pwin = we->w->pwin;
    MPI_Request now;
    ep_lock(&we->gets_lock);
    int kept = EP_GROW(we->gets, we->ngets, we->capgets, 16);
    MPI_Request *q = kept ? &we->gets[we->ngets] : &now;
    int rc = PMPI_Rget(op->rbuf, op->ocount, op->otype, proc, pd, op->tcount, op->ttype, pwin, q);
    if (rc == MPI_SUCCESS && kept)
        we->ngets++;
    ep_unlock(&we->gets_lock);
    return rc == MPI_SUCCESS && !kept ? ep_wait_pmpi(q, MPI_STATUS_IGNORE) : rc;
}

/* Waits for every Get of we issued so far. */
static ep_status_t gets_wait(ep_win_ep_t *we)
{
    int rc = MPI_SUCCESS;
    ep_lock(&we->gets_lock);
    for (int i = 0; i < we->ngets; i++) {
        int r = ep_wait_pmpi(&we->gets[i], MPI_STATUS_IGNORE);
        rc = rc ? rc : r;
    }
    we->ngets = 0;
    ep_unlock(&we->gets_lock);
    return from_pmpi(rc);
}

ep_status_t ep_win_rma(ep_win_ep_t *we, const ep_rma_t *op, MPI_Request *req)
{
    ep_win_t *w = we->w;
    int t = op->target, rc;
    ep_status_t st;
    int64_t n;

    if (t == MPI_PROC_NULL) /* nothing to do, as in point-to-point */
        return req ? done_request(we, req) : EP_OK;
    if (!ep_win_in_epoch(we, t))
        return EP_ERR_RMA_SYNC;
    if ((st = in_range(w, op)))
        return st;
    /* The target's displacement in pwin; where this process can address it
     * too, Put and Get are copies; in a local window, everything is done
     * here. */
    int proc = w->comm->ranks[t].proc;
    MPI_Aint pd = w->rank[t].tbase + op->disp * w->rank[t].disp_unit;
    char *addr = op->kind == EP_RMA_PUT || op->kind == EP_RMA_GET || w->local ? ep_win_local_addr(w, proc, pd) : NULL;
    if (w->local && op->tcount == 0 && op->kind != EP_RMA_CAS) /* no target data: nothing happens */
        return req ? done_request(we, req) : EP_OK;
    if (addr) {
        if (op->kind == EP_RMA_PUT)
            st = ep_dt_copy(op->obuf, op->ocount, op->otype, addr, op->tcount, op->ttype, &n);
        else if (op->kind == EP_RMA_GET)
            st = ep_dt_copy(addr, op->tcount, op->ttype, op->rbuf, op->ocount, op->otype, &n);
        else
            st = op->kind == EP_RMA_CAS ? cas_here(w, op, addr) : acc_here(w, op, addr);
        return st ? st : req ? done_request(we, req) : EP_OK;
    }
    switch (op->kind) {
    case EP_RMA_PUT:
        rc = req ? PMPI_Rput(op->obuf, op->ocount, op->otype, proc, pd, op->tcount, op->ttype, w->pwin, req)
                 : PMPI_Put(op->obuf, op->ocount, op->otype, proc, pd, op->tcount, op->ttype, w->pwin);
        break;
    case EP_RMA_GET:
        rc = req ? PMPI_Rget(op->rbuf, op->ocount, op->otype, proc, pd, op->tcount, op->ttype, w->pwin, req)
                 : get_tracked(we, op, proc, pd);
        break;
    case EP_RMA_ACC:
        rc = req ? PMPI_Raccumulate(op->obuf, op->ocount, op->otype, proc, pd, op->tcount, op->ttype, op->op, w->pwin,
                                    req)
                 : PMPI_Accumulate(op->obuf, op->ocount, op->otype, proc, pd, op->tcount, op->ttype, op->op, w->pwin);
        break;
    case EP_RMA_GET_ACC:
        rc = req ? PMPI_Rget_accumulate(op->obuf, op->ocount, op->otype, op->rbuf, op->rcount, op->rtype, proc, pd,
                                        op->tcount, op->ttype, op->op, w->pwin, req)
                 : PMPI_Get_accumulate(op->obuf, op->ocount, op->otype, op->rbuf, op->rcount, op->rtype, proc, pd,
                                       op->tcount, op->ttype, op->op, w->pwin);
        break;
    default:
        rc = PMPI_Compare_and_swap(op->obuf, op->cbuf, op->rbuf, op->otype, proc, pd, w->pwin);
        break;
    }
    /* After the call: a completion that starts before it may pass over it
     * (the two race in the program too), one that starts after may not. */
    if (rc == MPI_SUCCESS && (op->kind != EP_RMA_GET || req) &&
        !atomic_load_explicit(&we->dirty[t], memory_order_relaxed) && !atomic_exchange(&we->dirty[t], 1))
        atomic_fetch_add(&we->ndirty, 1); /* (marked already: no locked instruction) */
    return from_pmpi(rc);
}

/* ---- synchronisation ---------------------------------------------------------- */

/* PMPI_Win_sync of pwin (local windows: the memory fence alone). */
static int pwin_sync(const ep_win_t *w)
{
    atomic_thread_fence(memory_order_seq_cst);
    return w->local ? MPI_SUCCESS : PMPI_Win_sync(w->pwin);
}

/* Local rendezvous; local index 0 runs fn between the two barriers. */
static ep_status_t together(ep_win_ep_t *we, ep_status_t (*fn)(ep_win_t *w, int arg), int arg)
{
    ep_comm_t *c = we->w->comm;
    ep_status_t rc = ep_sync_enter(c, we->ep->lidx);
    if (rc)
        return rc;
    if (we->ep->lidx == 0)
        atomic_store(&c->sync.status, fn(we->w, arg));
    ep_sync_barrier(c);
    rc = atomic_load(&c->sync.status);
    ep_sync_barrier(c); /* status may be reused after this */
    return rc;
}

/* Every operation of this process complete everywhere, then a barrier over
 * the processes. */
static ep_status_t fence_all(ep_win_t *w, int assert)
{
    MPI_Request r;
    if (w->local) /* every operation was done in its call */
        return from_pmpi(pwin_sync(w));
    int rc = assert &MPI_MODE_NOPRECEDE ? MPI_SUCCESS : PMPI_Win_flush_all(w->pwin);
    if (rc == MPI_SUCCESS)
        rc = pwin_sync(w);
    if (rc == MPI_SUCCESS && w->comm->pcomm != MPI_COMM_NULL)
        rc = ep_wait_pmpi_started(PMPI_Ibarrier(w->pc, &r), &r);
    if (rc == MPI_SUCCESS)
        rc = pwin_sync(w);
    return from_pmpi(rc);
}

ep_status_t ep_win_fence(ep_win_ep_t *we, int assert)
{
    for (int t = 0; t < we->w->comm->size; t++)
        if (we->state[t] || we->lock_all)
            return EP_ERR_RMA_SYNC; /* inside a passive or PSCW epoch */
    ep_status_t got = gets_wait(we), rc = together(we, fence_all, assert);
    rc = rc ? rc : got;
    we->fence_open = !(assert &MPI_MODE_NOSUCCEED);
    return rc;
}

ep_status_t ep_win_lock(ep_win_ep_t *we, int type, int target, int assert)
{
    if (we->state[target] || we->lock_all)
        return EP_ERR_RMA_SYNC;
    int excl = type == MPI_LOCK_EXCLUSIVE;
    ep_status_t rc = assert &MPI_MODE_NOCHECK ? EP_OK : lock_take(we->w, target, excl);
    if (!rc)
        we->state[target] = assert &MPI_MODE_NOCHECK ? ST_NOCHECK : excl ? ST_EXCL : ST_SHARED;
    return rc;
}

/* Whether this endpoint's operations to target (every target: -1) need
 * a PMPI flush to complete; the marks are taken off before it. */
static int dirty_take(ep_win_ep_t *we, int target)
{
    if (target >= 0) {
        if (!atomic_load_explicit(&we->dirty[target], memory_order_relaxed) || !atomic_exchange(&we->dirty[target], 0))
            return 0;
        atomic_fetch_sub(&we->ndirty, 1);
        return 1;
    }
    int any = 0;
    for (int t = 0, n = we->w->comm->size; t < n && atomic_load(&we->ndirty) > 0; t++)
        if (atomic_load_explicit(&we->dirty[t], memory_order_relaxed) && atomic_exchange(&we->dirty[t], 0)) {
            atomic_fetch_sub(&we->ndirty, 1);
            any = 1;
        }
    return any;
}

/* Completes this endpoint's operations to target (every target: -1).
 * Gets complete with their requests (gets_wait); a PMPI flush, which
 * costs a round trip between nodes even with nothing in flight, only
 * where anything else was issued. */
static ep_status_t complete_to(ep_win_ep_t *we, int target)
{
    ep_win_t *w = we->w;
    ep_status_t got = gets_wait(we);
    int rc = w->local || !dirty_take(we, target) ? MPI_SUCCESS
             : target < 0                        ? PMPI_Win_flush_all(w->pwin)
                                                 : PMPI_Win_flush(w->comm->ranks[target].proc, w->pwin);
    atomic_thread_fence(memory_order_seq_cst);
    return got ? got : from_pmpi(rc);
}

ep_status_t ep_win_unlock(ep_win_ep_t *we, int target)
{
    unsigned char s = we->state[target];
    if (!(s & (ST_SHARED | ST_EXCL | ST_NOCHECK)))
        return EP_ERR_RMA_SYNC;
    ep_status_t rc = complete_to(we, target);
    if (!rc && !(s & ST_NOCHECK))
        rc = lock_give(we->w, target, s & ST_EXCL);
    we->state[target] = 0;
    return rc;
}

ep_status_t ep_win_lock_all(ep_win_ep_t *we, int assert)
{
    int n = we->w->comm->size;
    ep_status_t rc = EP_OK;
    if (we->lock_all || we->fence_open)
        return EP_ERR_RMA_SYNC;
    for (int t = 0; t < n; t++)
        if (we->state[t])
            return EP_ERR_RMA_SYNC;
    if (assert & MPI_MODE_NOCHECK) {
        we->lock_all = ST_NOCHECK;
        return EP_OK;
    }
    int t = 0;
    while (t < n && !(rc = lock_take(we->w, t, 0)))
        t++;
    if (rc) /* give back the locks taken */
        while (t-- > 0)
            lock_give(we->w, t, 0);
    else
        we->lock_all = ST_SHARED;
    return rc;
}

ep_status_t ep_win_unlock_all(ep_win_ep_t *we)
{
    if (!we->lock_all)
        return EP_ERR_RMA_SYNC;
    ep_status_t rc = complete_to(we, -1);
    for (int t = 0; t < we->w->comm->size && we->lock_all == ST_SHARED; t++) {
        ep_status_t r2 = lock_give(we->w, t, 0);
        rc = rc ? rc : r2;
    }
    we->lock_all = 0;
    return rc;
}

ep_status_t ep_win_flush(ep_win_ep_t *we, int target, int local)
{
    ep_win_t *w = we->w;
    if (target >= 0 && !we->lock_all && !(we->state[target] & (ST_SHARED | ST_EXCL | ST_NOCHECK)))
        return EP_ERR_RMA_SYNC;
    if (!local)
        return complete_to(we, target);
    ep_status_t got = gets_wait(we);
    int proc = target >= 0 ? w->comm->ranks[target].proc : -1;
    int rc = w->local   ? MPI_SUCCESS
             : proc < 0 ? PMPI_Win_flush_local_all(w->pwin)
                        : PMPI_Win_flush_local(proc, w->pwin);
    return got ? got : from_pmpi(rc);
}

ep_status_t ep_win_sync(ep_win_ep_t *we) { return from_pmpi(pwin_sync(we->w)); }

/* ---- post / start / complete / wait ----------------------------------------- */

static ep_status_t notice_send(ep_win_ep_t *we, int peer, int tag)
{
    ep_request_t r;
    ep_request_init(&r, EP_REQ_SEND, we->ep);
    r.buf = NULL;
    r.count = 0;
    r.type = MPI_BYTE;
    r.peer = peer;
    r.tag = tag;
    r.mode = EP_SEND_STANDARD;
    ep_status_t rc = ep_send_start(&r);
    if (!rc)
        ep_request_wait(&r);
    return rc;
}

static ep_request_t *notice_recv(ep_win_ep_t *we, int peer, int tag)
{
    ep_request_t *r = ep_request_new(EP_REQ_RECV, we->ep, 0);
    if (!r)
        return NULL;
    r->buf = NULL;
    r->count = 0;
    r->type = MPI_BYTE;
    r->source_pat = peer;
    r->tag_pat = tag;
    if (ep_recv_start(r)) {
        ep_request_destroy(r);
        return NULL;
    }
    return r;
}

/* Forgets the exposure epoch's awaited notices (cancelling those still
 * pending after a failed post). */
static void post_end(ep_win_ep_t *we)
{
    for (int i = 0; i < we->npost && we->post_reqs[i]; i++) {
        ep_request_t *r = we->post_reqs[i];
        /* A direct receive's cancel completes inside MPICH, and one matched
         * meanwhile still lands: either way it ends before it goes. */
        if (ep_request_state(r) != EP_RS_DONE) {
            ep_recv_cancel(r);
            ep_request_wait(r);
        }
        ep_request_destroy(r);
    }
    free(we->post_reqs);
    we->post_reqs = NULL;
    we->npost = 0;
}

ep_status_t ep_win_post(ep_win_ep_t *we, const int *ranks, int n)
{
    ep_status_t rc = EP_OK;
    if (we->post_reqs)
        return EP_ERR_RMA_SYNC;
    if (!(we->post_reqs = calloc((size_t)n + 1, sizeof *we->post_reqs)))
        return EP_ERR_NO_MEM;
    we->npost = n;
    /* The complete notices are awaited before the origins may send them. */
    for (int i = 0; i < n && !rc; i++)
        if (!(we->post_reqs[i] = notice_recv(we, ranks[i], TAG_COMPLETE)))
            rc = EP_ERR_NO_MEM;
    if (rc) {
        post_end(we);
        return rc;
    }
    pwin_sync(we->w);
    for (int i = 0; i < n && !rc; i++)
        rc = notice_send(we, ranks[i], TAG_POST);
    return rc;
}

/* Ends the access epoch of MPI_Win_start. */
static void end_start(ep_win_ep_t *we)
{
    for (int i = 0; i < we->nstart; i++)
        we->state[we->start[i]] &= (unsigned char)~ST_STARTED;
    free(we->start);
    we->start = NULL;
    we->nstart = 0;
}

ep_status_t ep_win_start(ep_win_ep_t *we, const int *ranks, int n)
{
    if (we->start || we->fence_open)
        return EP_ERR_RMA_SYNC;
    if (!(we->start = malloc(sizeof *we->start * (size_t)(n + 1))))
        return EP_ERR_NO_MEM;
    memcpy(we->start, ranks, sizeof *ranks * (size_t)n);
    we->nstart = n;
    for (int i = 0; i < n; i++)
        we->state[ranks[i]] |= ST_STARTED;
    /* Each target's post notice, before any access to it. */
    for (int i = 0; i < n; i++) {
        ep_request_t *r = notice_recv(we, ranks[i], TAG_POST);
        if (!r) {
            end_start(we);
            return EP_ERR_NO_MEM;
        }
        ep_request_wait(r);
        ep_request_destroy(r);
    }
    atomic_thread_fence(memory_order_seq_cst);
    return EP_OK;
}

ep_status_t ep_win_complete(ep_win_ep_t *we)
{
    if (!we->start)
        return EP_ERR_RMA_SYNC;
    ep_status_t rc = complete_to(we, -1);
    for (int i = 0; i < we->nstart; i++) {
        ep_status_t r2 = notice_send(we, we->start[i], TAG_COMPLETE);
        rc = rc ? rc : r2;
    }
    end_start(we);
    return rc;
}

ep_status_t ep_win_wait(ep_win_ep_t *we, int block, int *done)
{
    if (!we->post_reqs)
        return EP_ERR_RMA_SYNC;
    *done = 1;
    for (int i = 0; i < we->npost; i++) {
        ep_request_t *r = we->post_reqs[i];
        if (block)
            ep_request_wait(r);
        else if (!ep_request_poll(r)) {
            ep_progress();
            *done = ep_request_poll(r);
        }
        if (!*done)
            return EP_OK;
    }
    post_end(we);
    return from_pmpi(pwin_sync(we->w));
}

/* ---- dynamic windows ---------------------------------------------------------- */

ep_status_t ep_win_attach(ep_win_ep_t *we, void *base, MPI_Aint size) { return region_attach(we->w, base, size); }

ep_status_t ep_win_detach(ep_win_ep_t *we, const void *base)
{
    ep_win_t *w = we->w;
    if (!region_forget(w, base)) {
        ep_status_explain(EP_ERR_RMA_RANGE, "no region attached to the window starts at %p", base);
        return EP_ERR_RMA_RANGE;
    }
    return w->local ? EP_OK : from_pmpi(PMPI_Win_detach(w->pwin, base));
}

/* ---- free ----------------------------------------------------------------------- */

static ep_status_t free_pmpi(ep_win_t *w, int unused)
{
    (void)unused;
    /* The lock releases still in flight (lock_give) land before the
     * fence's barrier, so that no word goes back to the free list with
     * one pending. */
    int rl = w->local || w->lockwin == MPI_WIN_NULL ? MPI_SUCCESS : PMPI_Win_flush_all(w->lockwin);
    ep_status_t rc = fence_all(w, 0);
    rc = rc ? rc : from_pmpi(rl);
    int r = w->local ? MPI_SUCCESS : pwin_free(w);
    int r2 = lwords_drop(w); /* after the fence: nobody takes or gives a lock any more */
    return rc ? rc : from_pmpi(r ? r : r2);
}

int ep_win_busy(const ep_win_ep_t *we)
{
    if (we->lock_all || we->start || we->post_reqs)
        return 1;
    for (int t = 0; t < we->w->comm->size; t++)
        if (we->state[t])
            return 1;
    return 0;
}

/* ---- hints ---------------------------------------------------------------- */

/* The window hints of MPI (12.2.7) and MPICH's alloc_shared_noncontig, with
 * the values MPICH reports when nobody set them.  Kept as strings, not as
 * an MPI_Info per endpoint window: Open MPI 5.0.7 corrupted its heap when
 * the endpoints of one window freed their infos at once (a double free in
 * one of every 5 to 25 runs of api_errhandlers in 1 x 4), and an info is
 * made only for MPI_Win_get_info, which few programs call. */
static const char *const hint_keys[EP_WIN_NHINTS][2] = {{"no_locks", "false"},
                                                        {"accumulate_ordering", "rar,raw,war,waw"},
                                                        {"accumulate_ops", "same_op_no_op"},
                                                        {"same_size", "false"},
                                                        {"same_disp_unit", "false"},
                                                        {"alloc_shared_noncontig", "false"}};

ep_status_t ep_win_hints_set(ep_win_ep_t *we, MPI_Info info)
{
    char val[MPI_MAX_INFO_VAL + 1];
    int nkeys, flag;
    if (info == MPI_INFO_NULL)
        return EP_OK;
    if (PMPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
        return EP_ERR_INFO;
    for (size_t k = 0; k < EP_WIN_NHINTS; k++) {
        if (PMPI_Info_get(info, hint_keys[k][0], MPI_MAX_INFO_VAL, val, &flag) != MPI_SUCCESS || !flag)
            continue;
        char *copy = strdup(val);
        if (!copy)
            return EP_ERR_NO_MEM;
        free(we->hints[k]);
        we->hints[k] = copy;
    }
    return EP_OK;
}

ep_status_t ep_win_hints_get(ep_win_ep_t *we, MPI_Info *out)
{
    if (PMPI_Info_create(out) != MPI_SUCCESS)
        return EP_ERR_NO_MEM;
    for (size_t k = 0; k < EP_WIN_NHINTS; k++)
        if (PMPI_Info_set(*out, hint_keys[k][0], we->hints[k] ? we->hints[k] : hint_keys[k][1]) != MPI_SUCCESS) {
            PMPI_Info_free(out);
            return EP_ERR_NO_MEM;
        }
    return EP_OK;
}

ep_status_t ep_win_free(ep_win_ep_t *we)
{
    ep_win_t *w = we->w;
    gets_wait(we); /* none in a correct program: every epoch ended */
    ep_status_t rc = together(we, free_pmpi, 0);
    ep_registry_remove(EP_HID(we->handle));
    ep_endpoint_t *ep = we->ep;
    ep_errhandler_assign(&we->errhandler, MPI_ERRORS_ARE_FATAL); /* releases it */
    for (size_t k = 0; k < EP_WIN_NHINTS; k++)
        free(we->hints[k]);
    free(we->state);
    free((void *)we->dirty);
    free(we->gets);
    free(we);
    if (atomic_fetch_sub(&w->refs, 1) == 1)
        win_destroy(w);
    ep_endpoint_free(ep);
    return rc;
}
