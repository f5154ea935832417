/* One-sided communication: window entry points.  Windows made on classic
 * communicators, and calls on their handles, go straight to PMPI; windows
 * on endpoint communicators are epmpi's (src/rma/win.h).  Errors on a window
 * go to the window's error handler (MPI_ERRORS_ARE_FATAL unless set). */
#include "entry.h"

#include "core/datatype.h"
#include "core/group.h"
#include "rma/win.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Errors on a window go to its own handler. */
#define raise_win(we, call, cls, ...) entry_raise_on((we)->errhandler, (intptr_t)(we)->handle, call, cls, __VA_ARGS__)

static int raise_win_status(ep_win_ep_t *we, const char *call, ep_status_t st)
{
    return st ? raise_win(we, call, ep_status_class(st), "%s", ep_status_take_text(st)) : MPI_SUCCESS;
}

/* Classic windows go to the PMPI_ expression `pass`; endpoint ones resolve
 * to we, or the entry point returns the raised error. */
#define WIN_ENTRY(call, win, we, pass) \
    do {                               \
        if (!ep_win_handle_is_ep(win)) \
            return (pass);             \
        WIN_RESOLVE(call, win, we);    \
    } while (0)
/* The same once win is known to be an endpoint window. */
#define WIN_RESOLVE(call, win, we)               \
    do {                                         \
        int rc_;                                 \
        if ((rc_ = entry_win(call, win, &(we)))) \
            return rc_;                          \
    } while (0)

/* ---- creation and free ---------------------------------------------------------- */

static int create(const char *call, ep_win_flavor_t flavor, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                  MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    ep_endpoint_t *ep;
    int rc;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = entry_check_intra(ep, call)))
        return rc;
    if (!win)
        return entry_raise(ep, call, MPI_ERR_ARG, "win pointer is NULL");
    if (size < 0)
        return entry_raise(ep, call, MPI_ERR_SIZE, "size %ld is negative", (long)size);
    if (disp_unit <= 0)
        return entry_raise(ep, call, MPI_ERR_DISP, "disp_unit %d is not positive", disp_unit);
    if (flavor != EP_WIN_CREATE && flavor != EP_WIN_DYNAMIC && !baseptr)
        return entry_raise(ep, call, MPI_ERR_ARG, "baseptr is NULL");
    int nkeys;
    if (info != MPI_INFO_NULL && PMPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
        return entry_raise(ep, call, MPI_ERR_INFO, "info " EP_HFMT " is not a valid info object", EP_HARG(info));
    ep_status_t st = ep_win_create(ep, flavor, base, size, disp_unit, baseptr, win);
    ep_win_ep_t *we;
    if (!st && !entry_win(call, *win, &we))
        st = ep_win_hints_set(we, info);
    return st ? entry_raise_status(ep, call, st, NULL) : MPI_SUCCESS;
}

ENTRY_API int MPI_Win_free(MPI_Win *win)
{
    static const char call[] = "MPI_Win_free";
    ep_win_ep_t *we;
    if (!win)
        return entry_raise(NULL, call, MPI_ERR_ARG, "win pointer is NULL");
    WIN_ENTRY(call, *win, we, PMPI_Win_free(win));
    if (ep_win_busy(we))
        return raise_win(we, call, MPI_ERR_RMA_SYNC,
                         "an access or exposure epoch is still open (unlock, complete or wait first)");
    int rc = ep_attr_delete_all(ep_win_attrs(we));
    if (rc != MPI_SUCCESS)
        return raise_win(we, call, MPI_ERR_OTHER, "an attribute delete callback failed with error %d", rc);
    ep_status_t st = ep_win_free(we);
    *win = MPI_WIN_NULL;
    return st ? entry_raise_status(NULL, call, st, NULL) : MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int win_attach_ep(MPI_Win win, void *base, MPI_Aint size)
{
    static const char call[] = "MPI_Win_attach";
    ep_win_ep_t *we;
    WIN_RESOLVE(call, win, we);
    if (we->flavor_attr != MPI_WIN_FLAVOR_DYNAMIC)
        return raise_win(we, call, MPI_ERR_RMA_FLAVOR, "the window was not made by MPI_Win_create_dynamic");
    if (size < 0)
        return raise_win(we, call, MPI_ERR_SIZE, "size %ld is negative", (long)size);
    return raise_win_status(we, call, ep_win_attach(we, base, size));
}

ENTRY_ENDPOINT_PATH int win_detach_ep(MPI_Win win, const void *base)
{
    static const char call[] = "MPI_Win_detach";
    ep_win_ep_t *we;
    WIN_RESOLVE(call, win, we);
    if (we->flavor_attr != MPI_WIN_FLAVOR_DYNAMIC)
        return raise_win(we, call, MPI_ERR_RMA_FLAVOR, "the window was not made by MPI_Win_create_dynamic");
    return raise_win_status(we, call, ep_win_detach(we, base));
}

/* ---- queries ----------------------------------------------------------------------- */

ENTRY_ENDPOINT_PATH int win_shared_query_ep(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    static const char call[] = "MPI_Win_shared_query";
    ep_win_ep_t *we;
    WIN_RESOLVE(call, win, we);
    ep_win_t *w = we->w;
    if (we->flavor_attr != MPI_WIN_FLAVOR_SHARED)
        return raise_win(we, call, MPI_ERR_RMA_FLAVOR, "the window was not made by MPI_Win_allocate_shared");
    if (rank == MPI_PROC_NULL) /* the first rank with memory */
        for (rank = 0; rank < w->comm->size - 1 && w->rank[rank].size == 0; rank++)
            ;
    if (rank < 0 || rank >= w->comm->size)
        return raise_win(we, call, MPI_ERR_RANK, "rank %d is not in the window (size %d)", rank, w->comm->size);
    *size = w->rank[rank].size;
    *disp_unit = w->rank[rank].disp_unit;
    *(void **)baseptr = ep_win_local_addr(w, w->comm->ranks[rank].proc, w->rank[rank].tbase);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int win_get_group_ep(MPI_Win win, MPI_Group *group)
{
    static const char call[] = "MPI_Win_get_group";
    ep_win_ep_t *we;
    WIN_RESOLVE(call, win, we);
    return MPI_Comm_group(we->ep->handle, group);
}

ENTRY_API int MPI_Win_set_name(MPI_Win win, const char *name)
{
    ep_win_ep_t *we;
    WIN_ENTRY("MPI_Win_set_name", win, we, PMPI_Win_set_name(win, name));
    snprintf(we->name, sizeof we->name, "%s", name ? name : "");
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Win_get_name(MPI_Win win, char *name, int *resultlen)
{
    ep_win_ep_t *we;
    WIN_ENTRY("MPI_Win_get_name", win, we, PMPI_Win_get_name(win, name, resultlen));
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", we->name);
    *resultlen = (int)strlen(we->name);
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Win_get_info(MPI_Win win, MPI_Info *info)
{
    ep_win_ep_t *we;
    WIN_ENTRY("MPI_Win_get_info", win, we, PMPI_Win_get_info(win, info));
    if (!info)
        return raise_win(we, "MPI_Win_get_info", MPI_ERR_ARG, "info pointer is NULL");
    return raise_win_status(we, "MPI_Win_get_info", ep_win_hints_get(we, info));
}

ENTRY_ENDPOINT_PATH int win_set_info_ep(MPI_Win win, MPI_Info info)
{
    ep_win_ep_t *we;
    WIN_RESOLVE("MPI_Win_set_info", win, we);
    return raise_win_status(we, "MPI_Win_set_info", ep_win_hints_set(we, info));
}

/* ---- error handlers ----------------------------------------------------------------- */

ENTRY_API int MPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    int rc = PMPI_Win_create_errhandler(fn, errhandler);
    /* The same call shape: (handle *, int *, ...). */
    if (rc == MPI_SUCCESS &&
        ep_errhandler_record(*errhandler, (MPI_Comm_errhandler_function *)(void (*)(void))fn, NULL)) {
        PMPI_Errhandler_free(errhandler);
        return entry_raise(NULL, "MPI_Win_create_errhandler", MPI_ERR_NO_MEM, "out of memory recording the handler");
    }
    return rc;
}

ENTRY_ENDPOINT_PATH int win_set_errhandler_ep(MPI_Win win, MPI_Errhandler errhandler)
{
    static const char call[] = "MPI_Win_set_errhandler";
    ep_win_ep_t *we;
    WIN_RESOLVE(call, win, we);
    if (errhandler == MPI_ERRHANDLER_NULL)
        return raise_win(we, call, MPI_ERR_ARG, "errhandler is MPI_ERRHANDLER_NULL");
    ep_errhandler_assign(&we->errhandler, errhandler);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int win_get_errhandler_ep(MPI_Win win, MPI_Errhandler *errhandler)
{
    ep_win_ep_t *we;
    WIN_RESOLVE("MPI_Win_get_errhandler", win, we);
    *errhandler = we->errhandler;
    ep_errhandler_give(*errhandler); /* the caller's reference, for its MPI_Errhandler_free */
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int win_call_errhandler_ep(MPI_Win win, int errorcode)
{
    ep_win_ep_t *we;
    WIN_RESOLVE("MPI_Win_call_errhandler", win, we);
    ep_errhandler_invoke(we->errhandler, (MPI_Comm)we->handle, errorcode);
    return MPI_SUCCESS;
}

/* ---- operations ----------------------------------------------------------------------- */

static int check_side(ep_win_ep_t *we, const char *call, const char *side, int count, MPI_Datatype type)
{
    if (count < 0)
        return raise_win(we, call, MPI_ERR_COUNT, "%s count %d is negative", side, count);
    ep_status_t st = type == MPI_DATATYPE_NULL ? EP_ERR_TYPE : ep_dt_check(type);
    if (st == EP_ERR_NO_MEM)
        return raise_win(we, call, MPI_ERR_NO_MEM, "out of memory while learning the %s datatype", side);
    if (st)
        return raise_win(we, call, MPI_ERR_TYPE, "invalid or uncommitted %s datatype", side);
    return MPI_SUCCESS;
}

/* Every operation's entry on an endpoint window: request-based forms pass
 * req, the others NULL. */
static int rma(const char *call, MPI_Win win, ep_rma_t *op, MPI_Request *req, int request_based)
{
    ep_win_ep_t *we;
    int rc;
    if ((rc = entry_win(call, win, &we)))
        return rc;
    int n = we->w->comm->size;
    if (request_based && !req)
        return raise_win(we, call, MPI_ERR_ARG, "request pointer is NULL");
    if (op->kind == EP_RMA_GET_ACC && op->op == MPI_NO_OP) {
        /* MPI ignores the origin buffer, count and type of MPI_NO_OP (a
         * null type included): no origin data */
        op->obuf = NULL;
        op->ocount = 0;
        op->otype = op->rtype;
    }
    if (op->target != MPI_PROC_NULL && (op->target < 0 || op->target >= n))
        return raise_win(we, call, MPI_ERR_RANK, "target rank %d is not in the window (size %d)", op->target, n);
    if ((rc = check_side(we, call, "origin", op->ocount, op->otype)) ||
        (rc = check_side(we, call, "target", op->tcount, op->ttype)))
        return rc;
    if ((op->kind == EP_RMA_GET_ACC || op->kind == EP_RMA_CAS) && op->rcount > 0 &&
        (rc = check_side(we, call, "result", op->rcount, op->rtype)))
        return rc;
    if ((op->kind == EP_RMA_ACC || op->kind == EP_RMA_GET_ACC) && !ep_op_is_predefined(op->op))
        return raise_win(we, call, MPI_ERR_OP, "one-sided accumulates take predefined operations only");
    if (op->kind == EP_RMA_ACC && op->op == MPI_NO_OP)
        return raise_win(we, call, MPI_ERR_OP, "MPI_NO_OP is for MPI_Get_accumulate and MPI_Fetch_and_op");
    return raise_win_status(we, call, ep_win_rma(we, op, req));
}

/* Put, Get and Accumulate, blocking or request-based: the origin buffer
 * is obuf (Put, Accumulate) or rbuf (Get). */
static int transfer(const char *call, MPI_Win win, ep_rma_kind_t kind, const void *obuf, void *rbuf, int ocount,
                    MPI_Datatype otype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                    MPI_Request *req, int request_based)
{
    ep_rma_t o = {.kind = kind,
                  .obuf = obuf,
                  .rbuf = rbuf,
                  .ocount = ocount,
                  .otype = otype,
                  .target = target,
                  .disp = disp,
                  .tcount = tcount,
                  .ttype = ttype,
                  .op = op};
    return rma(call, win, &o, req, request_based);
}

/* Get_accumulate, blocking or request-based. */
static int get_accumulate(const char *call, MPI_Win win, const void *obuf, int ocount, MPI_Datatype otype, void *rbuf,
                          int rcount, MPI_Datatype rtype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
                          MPI_Op op, MPI_Request *req, int request_based)
{
    ep_rma_t o = {.kind = EP_RMA_GET_ACC,
                  .obuf = obuf,
                  .ocount = ocount,
                  .otype = otype,
                  .rbuf = rbuf,
                  .rcount = rcount,
                  .rtype = rtype,
                  .target = target,
                  .disp = disp,
                  .tcount = tcount,
                  .ttype = ttype,
                  .op = op};
    return rma(call, win, &o, req, request_based);
}

ENTRY_ENDPOINT_PATH int compare_and_swap_ep(const void *origin_addr, const void *compare_addr, void *result_addr,
                                            MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    ep_rma_t o = {.kind = EP_RMA_CAS,
                  .obuf = origin_addr,
                  .cbuf = compare_addr,
                  .ocount = 1,
                  .otype = datatype,
                  .rbuf = result_addr,
                  .rcount = 1,
                  .rtype = datatype,
                  .target = target_rank,
                  .disp = target_disp,
                  .tcount = 1,
                  .ttype = datatype};
    return rma("MPI_Compare_and_swap", win, &o, NULL, 0);
}

/* ---- synchronisation ----------------------------------------------------------------- */

ENTRY_ENDPOINT_PATH int win_fence_ep(int assert, MPI_Win win)
{
    ep_win_ep_t *we;
    WIN_RESOLVE("MPI_Win_fence", win, we);
    return raise_win_status(we, "MPI_Win_fence", ep_win_fence(we, assert));
}

static int check_target(ep_win_ep_t *we, const char *call, int rank)
{
    int n = we->w->comm->size;
    if (rank < 0 || rank >= n)
        return raise_win(we, call, MPI_ERR_RANK, "rank %d is not in the window (size %d)", rank, n);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int win_lock_ep(int lock_type, int rank, int assert, MPI_Win win)
{
    static const char call[] = "MPI_Win_lock";
    ep_win_ep_t *we;
    int rc;
    WIN_RESOLVE(call, win, we);
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return raise_win(we, call, MPI_ERR_LOCKTYPE, "lock type %d is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE",
                         lock_type);
    if (rank == MPI_PROC_NULL) /* an epoch with nobody, as MPICH takes it */
        return MPI_SUCCESS;
    if ((rc = check_target(we, call, rank)))
        return rc;
    return raise_win_status(we, call, ep_win_lock(we, lock_type, rank, assert));
}

ENTRY_ENDPOINT_PATH int win_unlock_ep(int rank, MPI_Win win)
{
    static const char call[] = "MPI_Win_unlock";
    ep_win_ep_t *we;
    int rc;
    WIN_RESOLVE(call, win, we);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((rc = check_target(we, call, rank)))
        return rc;
    return raise_win_status(we, call, ep_win_unlock(we, rank));
}

ENTRY_ENDPOINT_PATH int win_lock_all_ep(int assert, MPI_Win win)
{
    ep_win_ep_t *we;
    WIN_RESOLVE("MPI_Win_lock_all", win, we);
    return raise_win_status(we, "MPI_Win_lock_all", ep_win_lock_all(we, assert));
}

ENTRY_ENDPOINT_PATH int win_unlock_all_ep(MPI_Win win)
{
    ep_win_ep_t *we;
    WIN_RESOLVE("MPI_Win_unlock_all", win, we);
    return raise_win_status(we, "MPI_Win_unlock_all", ep_win_unlock_all(we));
}

/* all: every target (rank is ignored). */
static int flush(const char *call, MPI_Win win, int rank, int all, int local)
{
    ep_win_ep_t *we;
    int rc;
    if ((rc = entry_win(call, win, &we)))
        return rc;
    if (!all && rank == MPI_PROC_NULL) /* nothing to complete, as MPICH takes it */
        return MPI_SUCCESS;
    if (!all && (rc = check_target(we, call, rank)))
        return rc;
    return raise_win_status(we, call, ep_win_flush(we, all ? -1 : rank, local));
}

ENTRY_ENDPOINT_PATH int win_sync_ep(MPI_Win win)
{
    ep_win_ep_t *we;
    WIN_RESOLVE("MPI_Win_sync", win, we);
    return raise_win_status(we, "MPI_Win_sync", ep_win_sync(we));
}

/* The window ranks of group's members (in group order); *ranks is malloc'd. */
static int group_ranks(ep_win_ep_t *we, const char *call, MPI_Group group, int **ranks, int *n)
{
    const ep_gid_t *m;
    int owned, rc = MPI_SUCCESS;
    ep_comm_t *c = we->w->comm;
    if (ep_group_members(group, &m, n, &owned))
        return raise_win(we, call, MPI_ERR_GROUP, "invalid group " EP_HFMT, EP_HARG(group));
    *ranks = malloc(sizeof **ranks * (size_t)(*n + 1));
    for (int i = 0; *ranks && i < *n && !rc; i++) {
        int r = 0;
        while (r < c->size && memcmp(&c->gids[r], &m[i], sizeof m[i]))
            r++;
        if (r == c->size)
            rc = raise_win(we, call, MPI_ERR_GROUP, "member %d of the group is not in the window", i);
        (*ranks)[i] = r;
    }
    if (owned)
        free((void *)m);
    if (!*ranks)
        rc = raise_win(we, call, MPI_ERR_NO_MEM, "out of memory");
    if (rc) {
        free(*ranks);
        *ranks = NULL;
    }
    return rc;
}

static int pscw_group(const char *call, MPI_Group group, MPI_Win win, int post)
{
    ep_win_ep_t *we;
    int *ranks = NULL, n = 0, rc;
    if ((rc = entry_win(call, win, &we)) || (rc = group_ranks(we, call, group, &ranks, &n)))
        return rc;
    ep_status_t st = post ? ep_win_post(we, ranks, n) : ep_win_start(we, ranks, n);
    free(ranks);
    return raise_win_status(we, call, st);
}

/* A classic window given an endpoint group (MPI_Win_post, MPI_Win_start):
 * the group must not reach MPICH. */
static __attribute__((noinline)) int classic_win_endpoint_group(const char *call, MPI_Win win)
{
    MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
    PMPI_Win_get_errhandler(win, &eh);
    return entry_raise_on(eh, (intptr_t)win, call, MPI_ERR_GROUP,
                          "the group is a group of endpoints, the window a classic one (made on a classic "
                          "communicator): a window takes groups of its own kind");
}

ENTRY_API int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    if (!ep_win_handle_is_ep(win))
        return ep_group_handle_is_ep(group) ? classic_win_endpoint_group("MPI_Win_post", win)
                                            : PMPI_Win_post(group, assert, win);
    return pscw_group("MPI_Win_post", group, win, 1);
}

ENTRY_API int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    if (!ep_win_handle_is_ep(win))
        return ep_group_handle_is_ep(group) ? classic_win_endpoint_group("MPI_Win_start", win)
                                            : PMPI_Win_start(group, assert, win);
    return pscw_group("MPI_Win_start", group, win, 0);
}

ENTRY_ENDPOINT_PATH int win_complete_ep(MPI_Win win)
{
    ep_win_ep_t *we;
    WIN_RESOLVE("MPI_Win_complete", win, we);
    return raise_win_status(we, "MPI_Win_complete", ep_win_complete(we));
}

ENTRY_ENDPOINT_PATH int win_wait_ep(MPI_Win win)
{
    ep_win_ep_t *we;
    int done;
    WIN_RESOLVE("MPI_Win_wait", win, we);
    return raise_win_status(we, "MPI_Win_wait", ep_win_wait(we, 1, &done));
}

ENTRY_ENDPOINT_PATH int win_test_ep(MPI_Win win, int *flag)
{
    ep_win_ep_t *we;
    WIN_RESOLVE("MPI_Win_test", win, we);
    return raise_win_status(we, "MPI_Win_test", ep_win_wait(we, 0, flag));
}

/* The entry points whose dispatch is data (maint/dispatch.txt). */
#include "win.entry.gen.inc"
