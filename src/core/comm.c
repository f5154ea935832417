#include "core/comm.h"

#include "abi/handle.h"
#include "base/wait.h"
#include "core/attr.h"
#include "core/proc.h"
#include "core/request.h"

#include <stdlib.h>
#include <string.h>

/* ---- context table ---------------------------------------------------- */

/* Chained hash table, guarded by ep_ctx_table_lock (see comm.h). */
#define EP_CTX_BUCKETS 1024

static ep_comm_t *ctx_table[EP_CTX_BUCKETS];
static _Atomic uint32_t ctx_serial = 1;

static unsigned ctx_bucket(uint64_t ctx) { return (unsigned)((ctx ^ (ctx >> 29)) * 2654435761u) % EP_CTX_BUCKETS; }

ep_comm_t *ep_ctx_lookup(uint64_t ctx)
{
    for (ep_comm_t *c = ctx_table[ctx_bucket(ctx)]; c; c = c->ctx_next)
        if (c->ctx == ctx)
            return c;
    return NULL;
}

void ep_ctx_register(ep_comm_t *c)
{
    unsigned b = ctx_bucket(c->ctx);
    c->ctx_next = ctx_table[b];
    ctx_table[b] = c;
}

void ep_ctx_unregister(ep_comm_t *c)
{
    for (ep_comm_t **pp = &ctx_table[ctx_bucket(c->ctx)]; *pp; pp = &(*pp)->ctx_next)
        if (*pp == c) {
            *pp = c->ctx_next;
            return;
        }
}

/* Rank of identity x in c's rank map, or -1. */
static int gid_position(const ep_comm_t *c, ep_gid_t x)
{
    if (x.origin == c->ctx && x.index < (uint64_t)c->size && c->gids[x.index].origin == x.origin &&
        c->gids[x.index].index == x.index)
        return (int)x.index; /* c minted it */
    for (int r = 0; r < c->size; r++)
        if (c->gids[r].origin == x.origin && c->gids[r].index == x.index)
            return r;
    return -1;
}

/* A communicator of this process that has identity x, and x's rank in it
 * (*r), or NULL: the one that minted x, hint, or any other.  The table's
 * lock held. */
static ep_comm_t *holder_of(ep_gid_t x, ep_comm_t *hint, int *r)
{
    ep_comm_t *c = ep_ctx_lookup(x.origin);
    if (c && (*r = gid_position(c, x)) >= 0)
        return c;
    if (hint && (*r = gid_position(hint, x)) >= 0)
        return hint;
    for (int b = 0; b < EP_CTX_BUCKETS; b++)
        for (c = ctx_table[b]; c; c = c->ctx_next)
            if ((*r = gid_position(c, x)) >= 0)
                return c;
    return NULL;
}

ep_status_t ep_gid_worlds(const ep_gid_t *m, int n, int *world, int *bad)
{
    ep_status_t rc = EP_OK;
    ep_comm_t *c = NULL; /* members usually share their communicators */
    int r;
    ep_ctx_table_lock();
    for (int i = 0; i < n && !rc; i++) {
        if (m[i].origin == 0) /* a classic process: {0, world rank} */
            world[i] = (int)m[i].index;
        else if ((c = holder_of(m[i], c, &r)))
            world[i] = c->proc_world[c->ranks[r].proc];
        else
            *bad = i, rc = EP_ERR_GROUP;
    }
    ep_ctx_table_unlock();
    return rc;
}

/* ---- building --------------------------------------------------------- */

typedef struct entry {
    uint64_t key;
    ep_gid_t pgid;
    int proc;
    int order; /* position among its process's proposals */
} entry_t;

static int cmp_entry(const void *a, const void *b)
{
    const entry_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->proc != y->proc)
        return x->proc < y->proc ? -1 : 1;
    return x->order - y->order;
}

static int cmp_gid(const void *a, const void *b)
{
    const ep_gid_t *x = a, *y = b;
    if (x->origin != y->origin)
        return x->origin < y->origin ? -1 : 1;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return 0;
}

static int cmp_new_ep(const void *a, const void *b)
{
    const ep_new_ep_t *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static ep_comm_t *comm_alloc(void)
{
    ep_comm_t *c = calloc(1, sizeof *c);
    if (c) {
        c->pcomm = MPI_COMM_NULL;
        pthread_mutex_init(&c->coll_lock, NULL);
    }
    return c;
}

/* ---- rank tables shared by duplicates ------------------------------------
 * A duplicate has its parent's ranks, identities and processes: the first
 * duplicate of a communicator moves the parent's tables (ranks, gids and
 * the proc_ arrays, read-only once built) into a block that counts the
 * communicators using it, and every duplicate uses the same block.  Per
 * duplicate this saves 28 bytes a rank of the job (18 MB for a world of
 * 640,000 ranks). */
typedef struct ep_rank_tables {
    _Atomic int refs;
    ep_rank_loc_t *ranks;
    ep_gid_t *gids;
    int *proc_world, *proc_nlocal, *proc_first, *proc_ranks;
    void *_Atomic shared[EP_SHARED_N]; /* the transport's tables (ep_shared_t), or NULL; freed with the block */
} ep_rank_tables_t;

static void tables_free_arrays(ep_rank_loc_t *ranks, ep_gid_t *gids, int *pw, int *pn, int *pf, int *pr)
{
    free(ranks);
    free(gids);
    free(pw);
    free(pn);
    free(pf);
    free(pr);
}

/* c's tables, from now on counted (c's the first use); NULL when out of
 * memory (the caller copies them instead). */
static ep_rank_tables_t *tables_share(ep_comm_t *c)
{
    ep_rank_tables_t *t = atomic_load_explicit(&c->tables, memory_order_acquire);
    if (!t) {
        ep_rank_tables_t *fresh = malloc(sizeof *fresh);
        if (!fresh)
            return NULL;
        /* (and c's transport tables, its own until now: the block owns them) */
        *fresh = (ep_rank_tables_t){1,
                                    c->ranks,
                                    c->gids,
                                    c->proc_world,
                                    c->proc_nlocal,
                                    c->proc_first,
                                    c->proc_ranks,
                                    {[EP_SHARED_UCX_PEERS] = c->ucx_peer, [EP_SHARED_UCX_ADDRS] = c->ucx_addr}};
        if (atomic_compare_exchange_strong(&c->tables, &t, fresh))
            t = fresh;
        else
            free(fresh); /* another clone of c installed one first */
    }
    atomic_fetch_add(&t->refs, 1);
    return t;
}

/* c lets go of its tables: the last user frees them. */
static void tables_release(ep_comm_t *c)
{
    ep_rank_tables_t *t = atomic_load(&c->tables);
    if (!t) {
        tables_free_arrays(c->ranks, c->gids, c->proc_world, c->proc_nlocal, c->proc_first, c->proc_ranks);
    } else if (atomic_fetch_sub(&t->refs, 1) == 1) {
        tables_free_arrays(t->ranks, t->gids, t->proc_world, t->proc_nlocal, t->proc_first, t->proc_ranks);
        for (int k = 0; k < EP_SHARED_N; k++)
            free(atomic_load(&t->shared[k]));
        free(t);
    }
    atomic_store(&c->tables, NULL);
    c->ranks = NULL, c->gids = NULL;
    c->proc_world = c->proc_nlocal = c->proc_first = c->proc_ranks = NULL;
}

void *ep_comm_shared(ep_comm_t *c, ep_shared_t which)
{
    ep_rank_tables_t *t = atomic_load_explicit(&c->tables, memory_order_acquire);
    return t ? atomic_load(&t->shared[which]) : NULL;
}

void *ep_comm_share(ep_comm_t *c, ep_shared_t which, void *p)
{
    ep_rank_tables_t *t = atomic_load_explicit(&c->tables, memory_order_acquire);
    void *cur = NULL;
    if (!t)
        return NULL;
    return atomic_compare_exchange_strong(&t->shared[which], &cur, p) ? p : cur;
}

static void comm_destroy(ep_comm_t *c)
{
    if (!c)
        return;
    ep_comm_parts_free(c);
    for (int i = 0; c->local && i < c->nlocal; i++) {
        ep_endpoint_t *ep = &c->local[i];
        ep_match_item_t *it;
        ep_attr_discard(ep_attr_of(ep));
        ep_errhandler_assign(&ep->errhandler, MPI_ERRORS_ARE_FATAL); /* releases it */
        ep_endpoint_set_info(ep, MPI_INFO_NULL);
        while ((it = ep_mq_pop(&ep->unexpected)))
            ep_msg_destroy(ep_container_of(it, ep_msg_t, link));
        pthread_mutex_destroy(&ep->attr_lock);
    }
    if (c->pcomm != MPI_COMM_NULL)
        PMPI_Comm_free(&c->pcomm);
    tables_release(c);
    free(c->local);
    free((void *)c->sync.ptr);
    free((void *)c->sync.val);
    free(c->sync.args);
    free((void *)c->sync.entered);
    pthread_mutex_destroy(&c->coll_lock);
    free(c);
}

/* Gathers every process's proposals over pc.  Fills c's per-process arrays
 * and returns all entries (unsorted) and the agreed context id. */
static ep_status_t exchange(MPI_Comm pc, ep_comm_t *c, int nnew, const ep_new_ep_t *neweps, entry_t **out_entries,
                            int *out_total)
{
    int np = c->nprocs, me = c->myproc;
    ep_status_t rc = EP_OK;
    int64_t mine[3] = {nnew, ep_proc_world_rank(), (int64_t)c->ctx};
    int64_t *info = malloc(sizeof(int64_t) * 3 * (size_t)np);
    int *cnts = malloc(sizeof(int) * (size_t)np), *displs = malloc(sizeof(int) * (size_t)np);
    uint64_t *sendv = malloc(sizeof(uint64_t) * 3 * (size_t)(nnew ? nnew : 1));
    uint64_t *allv = NULL;
    entry_t *e = NULL;
    MPI_Request req;
    int total = 0;

    if (!info || !cnts || !displs || !sendv) {
        rc = EP_ERR_NO_MEM;
        goto out;
    }
    if (np == 1) {
        memcpy(info, mine, sizeof mine);
    } else if (ep_wait_pmpi_started(PMPI_Iallgather(mine, 3, MPI_INT64_T, info, 3, MPI_INT64_T, pc, &req), &req) !=
               MPI_SUCCESS) {
        rc = EP_ERR_INTERN;
        goto out;
    }
    c->ctx = (uint64_t)info[2]; /* the first process's proposal */
    for (int p = 0; p < np; p++) {
        c->proc_nlocal[p] = (int)info[3 * p];
        c->proc_world[p] = (int)info[3 * p + 1];
        c->proc_first[p] = total;
        cnts[p] = 3 * c->proc_nlocal[p];
        displs[p] = 3 * total;
        total += c->proc_nlocal[p];
    }
    for (int i = 0; i < nnew; i++) {
        sendv[3 * i] = neweps[i].key;
        sendv[3 * i + 1] = neweps[i].parent_gid.origin;
        sendv[3 * i + 2] = neweps[i].parent_gid.index;
    }
    if (!(allv = malloc(sizeof(uint64_t) * 3 * (size_t)total)) || !(e = malloc(sizeof *e * (size_t)total))) {
        rc = EP_ERR_NO_MEM;
        goto out;
    }
    if (np == 1) {
        memcpy(allv, sendv, sizeof(uint64_t) * 3 * (size_t)nnew);
    } else if (ep_wait_pmpi_started(
                   PMPI_Iallgatherv(sendv, 3 * nnew, MPI_UINT64_T, allv, cnts, displs, MPI_UINT64_T, pc, &req), &req) !=
               MPI_SUCCESS) {
        rc = EP_ERR_INTERN;
        goto out;
    }
    for (int p = 0, k = 0; p < np; p++)
        for (int i = 0; i < c->proc_nlocal[p]; i++, k++) {
            e[k].key = allv[3 * k];
            e[k].pgid.origin = allv[3 * k + 1];
            e[k].pgid.index = allv[3 * k + 2];
            e[k].proc = p;
            e[k].order = i;
        }
    (void)me;
    *out_entries = e;
    e = NULL;
    *out_total = total;
out:
    free(info);
    free(cnts);
    free(displs);
    free(sendv);
    free(allv);
    free(e);
    return rc;
}

/* Connects c's processes in the transports (collective over them),
 * waiting for each step. */
static ep_status_t connect_now(ep_comm_t *c)
{
    MPI_Request req;
    ep_status_t rc;
    while (!(rc = ep_comm_parts_connect(c, &req)) && req != MPI_REQUEST_NULL)
        if (ep_wait_pmpi(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return EP_ERR_INTERN;
    return rc;
}

static ep_status_t endpoints_init(ep_comm_t *c, MPI_Errhandler eh)
{
    c->local = aligned_alloc(_Alignof(ep_endpoint_t), (size_t)c->nlocal * sizeof *c->local);
    if (c->local) {
        memset(c->local, 0, (size_t)c->nlocal * sizeof *c->local);
        for (int i = 0; i < c->nlocal; i++) /* comm_destroy frees the others, even after a failure here */
            c->local[i].info = MPI_INFO_NULL;
    }
    c->sync.ptr = calloc((size_t)c->nlocal, sizeof(void *));
    c->sync.val = calloc((size_t)c->nlocal, sizeof(int64_t));
    c->sync.args = calloc((size_t)c->nlocal, sizeof *c->sync.args);
    c->sync.entered = calloc((size_t)c->nlocal, sizeof *c->sync.entered);
    if (!c->local || !c->sync.ptr || !c->sync.val || !c->sync.args || !c->sync.entered)
        return EP_ERR_NO_MEM;
    for (int i = 0; i < c->nlocal; i++) {
        ep_endpoint_t *ep = &c->local[i];
        ep->obj.kind = EP_OBJ_ENDPOINT;
        ep->comm = c;
        ep->lidx = i;
        ep->rank = c->proc_ranks[c->proc_first[c->myproc] + i];
        ep->side = c->inter && ep->rank >= c->group_off[1];
        ep_errhandler_assign(&ep->errhandler, eh);
        atomic_init(&ep->holds, 1); /* its handle */
        /* The queue lock (ep_lock_t) is ready as zero bytes. */
        pthread_mutex_init(&ep->attr_lock, NULL);
        ep_mq_init(&ep->posted);
        ep_mq_init(&ep->unexpected);
    }
    ep_status_t rc = ep_comm_parts_init(c);
    if (rc)
        return rc;
    for (int i = 0; i < c->nlocal; i++) {
        c->local[i].handle = c->local[i].user_handle =
            EP_HANDLE_NEW(MPI_Comm, ep_registry_add(EP_HTYPE_COMM, &c->local[i].obj), MPI_COMM_NULL);
        if (c->local[i].handle == MPI_COMM_NULL) {
            for (int j = 0; j < i; j++)
                ep_registry_remove(EP_HID(c->local[j].handle));
            return EP_ERR_ENDPOINTS;
        }
    }
    atomic_init(&c->refs, c->nlocal);
    return EP_OK;
}

ep_status_t ep_comm_build(MPI_Comm ppcomm, int plain, int nnew, const ep_new_ep_t *neweps, MPI_Errhandler eh,
                          ep_comm_t **out)
{
    MPI_Comm pc = MPI_COMM_NULL;
    MPI_Request req;
    *out = NULL;
    if (ppcomm != MPI_COMM_NULL) {
        /* Usually every process proposes endpoints (world mode always):
         * then a duplicate, started and awaited without MPICH's blocking
         * poll, which costs tenths of a second when processes outnumber
         * cores; otherwise a split. */
        int mine = nnew > 0, all = 0;
        if (plain &&
            ep_wait_pmpi_started(PMPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_MIN, ppcomm, &req), &req) != MPI_SUCCESS)
            return EP_ERR_ENDPOINTS;
        if (all ? ep_wait_pmpi_started(PMPI_Comm_idup(ppcomm, &pc, &req), &req) != MPI_SUCCESS
                : PMPI_Comm_split(ppcomm, nnew > 0 ? 0 : MPI_UNDEFINED, 0, &pc) != MPI_SUCCESS)
            return EP_ERR_ENDPOINTS;
    }
    if (nnew == 0)
        return EP_OK;
    return ep_comm_build_on(pc, nnew, neweps, eh, out);
}

ep_status_t ep_comm_build_on(MPI_Comm pc, int nnew, const ep_new_ep_t *neweps, MPI_Errhandler eh, ep_comm_t **out)
{
    ep_comm_t *c = NULL;
    entry_t *e = NULL;
    ep_new_ep_t *sorted = NULL;
    ep_gid_t *pg = NULL;
    ep_status_t rc = EP_OK;
    int total = 0;

    *out = NULL;
    if (!(c = comm_alloc()) || !(sorted = malloc(sizeof *sorted * (size_t)nnew))) {
        rc = EP_ERR_NO_MEM;
        goto fail;
    }
    memcpy(sorted, neweps, sizeof *sorted * (size_t)nnew);
    qsort(sorted, (size_t)nnew, sizeof *sorted, cmp_new_ep);
    c->pcomm = MPI_COMM_NULL;
    c->nprocs = 1;
    if (pc != MPI_COMM_NULL) {
        PMPI_Comm_size(pc, &c->nprocs);
        PMPI_Comm_rank(pc, &c->myproc);
        if (c->nprocs == 1)
            PMPI_Comm_free(&pc);
    }
    c->pcomm = pc;
    pc = MPI_COMM_NULL;
    c->ctx = ((uint64_t)(uint32_t)ep_proc_world_rank() << 32) | atomic_fetch_add(&ctx_serial, 1);
    c->proc_world = malloc(sizeof(int) * (size_t)c->nprocs);
    c->proc_nlocal = malloc(sizeof(int) * (size_t)c->nprocs);
    c->proc_first = malloc(sizeof(int) * (size_t)c->nprocs);
    if (!c->proc_world || !c->proc_nlocal || !c->proc_first) {
        rc = EP_ERR_NO_MEM;
        goto fail;
    }
    if ((rc = exchange(c->pcomm, c, nnew, sorted, &e, &total)))
        goto fail;
    qsort(e, (size_t)total, sizeof *e, cmp_entry);

    c->size = total;
    c->group_size[0] = c->group_size[1] = total;
    c->nlocal = nnew;
    c->ranks = malloc(sizeof *c->ranks * (size_t)total);
    c->gids = malloc(sizeof *c->gids * (size_t)total);
    c->proc_ranks = malloc(sizeof(int) * (size_t)total);
    pg = malloc(sizeof *pg * (size_t)total);
    if (!c->ranks || !c->gids || !c->proc_ranks || !pg) {
        rc = EP_ERR_NO_MEM;
        goto fail;
    }
    /* Within a process, endpoints are numbered in key order, i.e. in rank order. */
    int *next = calloc((size_t)c->nprocs, sizeof(int));
    if (!next) {
        rc = EP_ERR_NO_MEM;
        goto fail;
    }
    c->ranks_by_process = 1;
    for (int r = 0; r < total; r++) {
        int p = e[r].proc;
        c->ranks[r].proc = p;
        c->ranks[r].lidx = next[p]++;
        c->proc_ranks[c->proc_first[p] + c->ranks[r].lidx] = r;
        if (r > 0 && p < c->ranks[r - 1].proc)
            c->ranks_by_process = 0;
        pg[r] = e[r].pgid;
    }
    free(next);
    /* Identities: inherited when each parent rank asked for at most one. */
    qsort(pg, (size_t)total, sizeof *pg, cmp_gid);
    int distinct = 1;
    for (int r = 1; r < total && distinct; r++)
        distinct = cmp_gid(&pg[r - 1], &pg[r]) != 0;
    for (int r = 0; r < total; r++) {
        if (distinct)
            c->gids[r] = e[r].pgid;
        else
            c->gids[r] = (ep_gid_t){c->ctx, (uint64_t)r};
    }
    ep_comm_parts_choose(c);
    if ((rc = endpoints_init(c, eh)) || (rc = connect_now(c)))
        goto fail;
    ep_comm_parts_open(c);
    *out = c;
    free(e);
    free(sorted);
    free(pg);
    return EP_OK;
fail:
    if (pc != MPI_COMM_NULL)
        PMPI_Comm_free(&pc);
    if (c)
        ep_comm_parts_close(c);
    comm_destroy(c);
    free(e);
    free(sorted);
    free(pg);
    return rc == EP_ERR_NO_MEM ? EP_ERR_ENDPOINTS_NO_MEM : rc;
}

/* Copies n elements of size sz, or NULL (and *ok = 0). */
static void *dup_array(const void *src, size_t n, size_t sz, int *ok)
{
    void *d = malloc(n * sz > 0 ? n * sz : 1);
    if (d)
        memcpy(d, src, n * sz);
    else
        *ok = 0;
    return d;
}

ep_status_t ep_comm_clone_begin(ep_comm_t *pc, ep_comm_t **out, MPI_Request *req)
{
    ep_comm_t *c = comm_alloc();
    int ok = 1;

    *out = NULL;
    *req = MPI_REQUEST_NULL;
    if (!c)
        return EP_ERR_ENDPOINTS;
    c->size = pc->size;
    c->inter = pc->inter;
    memcpy(c->group_off, pc->group_off, sizeof c->group_off);
    memcpy(c->group_size, pc->group_size, sizeof c->group_size);
    c->nprocs = pc->nprocs;
    c->myproc = pc->myproc;
    c->nlocal = pc->nlocal;
    c->ranks_by_process = pc->ranks_by_process;
    ep_rank_tables_t *t = tables_share(pc);
    atomic_store(&c->tables, t);
    if (t) {
        c->ranks = t->ranks, c->gids = t->gids;
        c->proc_world = t->proc_world, c->proc_nlocal = t->proc_nlocal;
        c->proc_first = t->proc_first, c->proc_ranks = t->proc_ranks;
    } else {
        c->ranks = dup_array(pc->ranks, (size_t)pc->size, sizeof *pc->ranks, &ok);
        c->gids = dup_array(pc->gids, (size_t)pc->size, sizeof *pc->gids, &ok);
        c->proc_world = dup_array(pc->proc_world, (size_t)pc->nprocs, sizeof(int), &ok);
        c->proc_nlocal = dup_array(pc->proc_nlocal, (size_t)pc->nprocs, sizeof(int), &ok);
        c->proc_first = dup_array(pc->proc_first, (size_t)pc->nprocs, sizeof(int), &ok);
        c->proc_ranks = dup_array(pc->proc_ranks, (size_t)pc->size, sizeof(int), &ok);
    }
    c->ctx = ((uint64_t)(uint32_t)ep_proc_world_rank() << 32) | atomic_fetch_add(&ctx_serial, 1);
    if (!ok || (pc->pcomm != MPI_COMM_NULL && PMPI_Comm_idup(pc->pcomm, &c->pcomm, req) != MPI_SUCCESS)) {
        comm_destroy(c);
        return EP_ERR_ENDPOINTS;
    }
    *out = c;
    return EP_OK;
}

ep_status_t ep_comm_clone_step(ep_comm_t *pc, ep_comm_t *c, int stage, MPI_Request *req)
{
    ep_status_t rc;
    /* Stage 0, the new process-level communicator exists: its first
     * process's context id becomes everyone's. */
    if (stage == 0 && c->pcomm != MPI_COMM_NULL)
        return PMPI_Ibcast(&c->ctx, 1, MPI_UINT64_T, 0, c->pcomm, req) == MPI_SUCCESS ? EP_OK : EP_ERR_ENDPOINTS;
    if (!c->local) {
        /* Then the endpoints, and connecting the processes in further
         * PMPI steps: a blocking exchange here could wait for a process
         * that drives another construction first. */
        ep_comm_parts_choose(c);
        if ((rc = endpoints_init(c, MPI_ERRORS_ARE_FATAL)))
            return rc;
        for (int i = 0; i < c->nlocal; i++)
            ep_errhandler_assign(&c->local[i].errhandler, pc->local[i].errhandler);
    }
    if ((rc = ep_comm_parts_connect(c, req)) || *req != MPI_REQUEST_NULL)
        return rc;
    ep_comm_parts_open(c);
    return EP_OK;
}

void ep_comm_clone_abort(ep_comm_t *c, MPI_Request *req)
{
    if (*req != MPI_REQUEST_NULL)
        ep_wait_pmpi(req, MPI_STATUS_IGNORE);
    ep_comm_parts_close(c);
    comm_destroy(c);
}

ep_status_t ep_comm_make_inter(ep_comm_t *c, int size0)
{
    ep_status_t rc;
    /* An intercommunicator is never direct: between processes its
     * messages need a transport. */
    c->direct = 0;
    if ((rc = connect_now(c)))
        return rc;
    c->inter = 1;
    c->group_off[0] = 0;
    c->group_off[1] = c->group_size[0] = size0;
    c->group_size[1] = c->size - size0;
    for (int i = 0; i < c->nlocal; i++)
        c->local[i].side = c->local[i].rank >= size0;
    return EP_OK;
}

void ep_endpoint_set_info(ep_endpoint_t *ep, MPI_Info info)
{
    if (ep->info != MPI_INFO_NULL)
        PMPI_Info_free(&ep->info);
    ep->info = info;
}

void ep_endpoint_free(ep_endpoint_t *ep)
{
    ep_registry_remove(EP_HID(ep->handle));
    ep->handle = MPI_COMM_NULL;
    ep_request_credit_drop(ep);
    ep_endpoint_release(ep);
}

void ep_endpoint_gone(ep_endpoint_t *ep)
{
    ep_comm_t *c = ep->comm;
    if (atomic_fetch_sub(&c->refs, 1) == 1) {
        ep_comm_parts_close(c);
        comm_destroy(c);
    }
}

/* ---- comparison -------------------------------------------------------- */

static int compare_gids(const ep_gid_t *a, int na, const ep_gid_t *b, int nb)
{
    if (na != nb)
        return MPI_UNEQUAL;
    if (!memcmp(a, b, sizeof *a * (size_t)na))
        return MPI_CONGRUENT;
    ep_gid_t *x = malloc(sizeof *x * (size_t)na), *y = malloc(sizeof *y * (size_t)na);
    int res = MPI_UNEQUAL;
    if (x && y) {
        memcpy(x, a, sizeof *x * (size_t)na);
        memcpy(y, b, sizeof *y * (size_t)na);
        qsort(x, (size_t)na, sizeof *x, cmp_gid);
        qsort(y, (size_t)na, sizeof *y, cmp_gid);
        res = memcmp(x, y, sizeof *x * (size_t)na) ? MPI_UNEQUAL : MPI_SIMILAR;
    }
    free(x);
    free(y);
    return res;
}

int ep_comm_compare_ep(const ep_endpoint_t *a, const ep_endpoint_t *b)
{
    if (a->comm == b->comm)
        return a == b ? MPI_IDENT : MPI_ALIASED;
    return compare_gids(a->comm->gids, a->comm->size, b->comm->gids, b->comm->size);
}

ep_status_t ep_comm_compare_classic(const ep_endpoint_t *a, MPI_Comm classic, int *result)
{
    int inter = 0, n;
    MPI_Group g, wg;
    if (PMPI_Comm_test_inter(classic, &inter) != MPI_SUCCESS)
        return EP_ERR_COMM;
    if (inter) {
        *result = MPI_UNEQUAL;
        return EP_OK;
    }
    PMPI_Comm_size(classic, &n);
    int *ranks = malloc(sizeof(int) * (size_t)n), *wranks = malloc(sizeof(int) * (size_t)n);
    ep_gid_t *gids = malloc(sizeof *gids * (size_t)n);
    ep_status_t rc = EP_OK;
    if (!ranks || !wranks || !gids) {
        rc = EP_ERR_NO_MEM;
        goto out;
    }
    for (int i = 0; i < n; i++)
        ranks[i] = i;
    PMPI_Comm_group(classic, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, n, ranks, wg, wranks);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    for (int i = 0; i < n; i++)
        gids[i] = (ep_gid_t){0, (uint64_t)(uint32_t)wranks[i]};
    *result = compare_gids(a->comm->gids, a->comm->size, gids, n);
out:
    free(ranks);
    free(wranks);
    free(gids);
    return rc;
}

const char *ep_comm_p2p_path(const ep_comm_t *c) { return c->direct ? "mpich" : "engine"; }

const char *ep_comm_transport(const ep_comm_t *c) { return c->direct || c->nprocs < 2 ? NULL : c->ucx ? "ucx" : "mpi"; }
