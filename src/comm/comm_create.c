#include "comm/comm_create.h"

#include "core/attr.h"
#include "comm/meet.h"

#include "base/wait.h"
#include "core/proc.h"
#include "coll/topo.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

ep_status_t ep_comm_create_endpoints_classic(MPI_Comm parent, int plain, int n, MPI_Comm out[])
{
    int prank, wrank = ep_proc_world_rank();
    MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
    ep_new_ep_t *ne = malloc(sizeof *ne * (size_t)(n ? n : 1));
    ep_comm_t *c = NULL;
    ep_status_t rc;

    if (!ne)
        return EP_ERR_ENDPOINTS;
    PMPI_Comm_rank(parent, &prank);
    PMPI_Comm_get_errhandler(parent, &eh);
    for (int i = 0; i < n; i++) {
        ne[i].key = ((uint64_t)(uint32_t)prank << 32) | (uint32_t)i;
        ne[i].parent_gid = (ep_gid_t){0, (uint64_t)(uint32_t)wrank};
    }
    rc = ep_comm_build(parent, plain, n, ne, eh, &c);
    ep_errhandler_release(eh); /* PMPI_Comm_get_errhandler's reference; the endpoints hold their own */
    free(ne);
    for (int i = 0; !rc && i < n; i++)
        out[i] = c->local[i].handle;
    return rc;
}

ep_status_t ep_comm_create_endpoints_ep(ep_endpoint_t *parent, int n, MPI_Comm out[])
{
    ep_comm_t *pc = parent->comm;
    ep_sync_t *s = &pc->sync;
    ep_status_t rc = EP_OK;

    atomic_store(&s->val[parent->lidx], n);
    if ((rc = ep_sync_enter(pc, parent->lidx)))
        return rc;
    if (parent->lidx == 0) {
        int total = 0;
        for (int j = 0; j < pc->nlocal; j++)
            total += (int)atomic_load(&s->val[j]);
        ep_new_ep_t *ne = malloc(sizeof *ne * (size_t)(total ? total : 1));
        ep_comm_t *c = NULL;
        if (!ne)
            rc = EP_ERR_ENDPOINTS;
        else {
            /* Local parent endpoints are numbered in rank order. */
            for (int j = 0, k = 0; j < pc->nlocal; j++) {
                int prank = pc->local[j].rank;
                for (int i = 0; i < (int)atomic_load(&s->val[j]); i++, k++) {
                    ne[k].key = ((uint64_t)(uint32_t)prank << 32) | (uint32_t)i;
                    ne[k].parent_gid = pc->gids[prank];
                }
            }
            rc = ep_comm_build(pc->pcomm, 1, total, ne, MPI_ERRORS_ARE_FATAL, &c);
            free(ne);
        }
        if (c) /* each new rank inherits its parent endpoint's handler */
            for (int j = 0, k = 0; j < pc->nlocal; j++)
                for (int i = 0; i < (int)atomic_load(&s->val[j]); i++, k++)
                    ep_errhandler_assign(&c->local[k].errhandler, pc->local[j].errhandler);
        atomic_store(&s->status, rc);
        atomic_store(&s->result, c);
    }
    ep_sync_barrier(pc);
    rc = atomic_load(&s->status);
    ep_comm_t *c = atomic_load(&s->result);
    if (!rc && n > 0) {
        int first = 0;
        for (int j = 0; j < parent->lidx; j++)
            first += (int)atomic_load(&s->val[j]);
        for (int i = 0; i < n; i++)
            out[i] = c->local[first + i].handle;
    }
    ep_sync_barrier(pc); /* val[] and result may be reused after this */
    return rc;
}

/* ---- MPI_Comm_dup / MPI_Comm_idup ------------------------------------------
 * A collective kind, so that the non-blocking form runs in the collective
 * drivers like any other: start begins the clone, complete takes it through
 * its PMPI steps, finish hands each endpoint its new handle and copies its
 * attributes. */

static ep_status_t dup_start(ep_coll_inst_t *in)
{
    ep_comm_t *c = NULL;
    ep_status_t rc = ep_comm_clone_begin(in->c, &c, &in->preq);
    in->res = c;
    return rc;
}

static ep_status_t dup_complete(ep_coll_inst_t *in) { return ep_comm_clone_step(in->c, in->res, in->stage, &in->preq); }

/* A private duplicate (ep_comm_dup_private_args) takes no attributes. */
static ep_status_t dup_finish_as(ep_coll_inst_t *in, int lidx, int attrs)
{
    ep_comm_t *c = in->res;
    ep_coll_args_t *a = in->args[lidx];
    ep_endpoint_t *dup = &c->local[lidx];
    MPI_Comm *out = a->rbuf;
    ep_endpoint_set_info(dup, a->info); /* the hints of MPI_Comm_idup_with_info, already copied */
    a->info = MPI_INFO_NULL;
    ep_status_t st = ep_topo_copy(in->c->local[lidx].topo, &dup->topo);
    if (st || (attrs && ep_attr_copy(ep_attr_of(&in->c->local[lidx]), ep_attr_of(dup)) != MPI_SUCCESS)) {
        ep_attr_delete_all(ep_attr_of(dup));
        ep_endpoint_free(dup);
        *out = MPI_COMM_NULL;
        return st ? st : EP_ERR_ATTR_COPY;
    }
    *out = dup->handle;
    return EP_OK;
}

static void dup_fail(ep_coll_inst_t *in)
{
    if (in->res)
        ep_comm_clone_abort(in->res, &in->preq);
    in->res = NULL;
    for (int i = 0; i < in->c->nlocal; i++) {
        if (in->args[i]->info != MPI_INFO_NULL)
            PMPI_Info_free(&in->args[i]->info);
        *(MPI_Comm *)in->args[i]->rbuf = MPI_COMM_NULL;
    }
}

static ep_status_t dup_finish(ep_coll_inst_t *in, int lidx) { return dup_finish_as(in, lidx, 1); }
static ep_status_t dup_finish_private(ep_coll_inst_t *in, int lidx) { return dup_finish_as(in, lidx, 0); }

static const ep_coll_kind_t dup_kind = {
    .start = dup_start, .complete = dup_complete, .finish = dup_finish, .fail = dup_fail};
static const ep_coll_kind_t dup_private_kind = {
    .start = dup_start, .complete = dup_complete, .finish = dup_finish_private, .fail = dup_fail};

void ep_comm_dup_args(ep_coll_args_t *a, ep_endpoint_t *ep, MPI_Info info, MPI_Comm *out)
{
    ep_coll_args_init(a, &dup_kind, ep);
    a->rbuf = out;
    a->info = info;
}

void ep_comm_dup_private_args(ep_coll_args_t *a, ep_endpoint_t *ep, MPI_Comm *out)
{
    ep_coll_args_init(a, &dup_private_kind, ep);
    a->rbuf = out;
}

/* ---- MPI_Comm_split ------------------------------------------------------- */

/* What each local endpoint of the parent publishes. */
typedef struct split_arg {
    int color;
    uint64_t order; /* the new ranks follow ascending orders (split_order) */
    int sides;      /* the parent's two groups stay apart: the result is an
                       intercommunicator (the same in every endpoint) */
    int type;       /* MPI_Comm_split_type: the split type (the leader
                       sets color), else EP_SPLIT_BY_COLOR */
    MPI_Info info;  /* MPI_Comm_split_type: its info */
} split_arg_t;

#define EP_SPLIT_BY_COLOR INT_MIN

/* One new communicator of this process: its colour and the result. */
typedef struct split_out {
    int color;
    ep_comm_t *comm;
} split_out_t;

typedef struct split_result {
    int n;
    split_out_t *out;
} split_result_t;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int ep_sort_unique(int *v, int n)
{
    int k = 0;
    qsort(v, (size_t)n, sizeof *v, cmp_int);
    for (int i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    return k;
}

/* New ranks order by key, then parent rank (MPI's tie rule); when the
 * sides stay apart, group 0 first.  Side (1 bit), key (32) and parent rank
 * (31) fill the 64 bits. */
static uint64_t split_order(const ep_endpoint_t *ep, int key, int sides)
{
    return ((uint64_t)(sides ? ep->side : 0) << 63) | ((uint64_t)((uint32_t)key ^ 0x80000000u) << 31) |
           (uint32_t)ep->rank;
}

typedef struct split_member {
    uint64_t key;
    int lidx; /* parent local index */
} split_member_t;

static int cmp_member(const void *a, const void *b)
{
    const split_member_t *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_gid(const void *a, const void *b)
{
    const ep_gid_t *x = a, *y = b;
    if (x->origin != y->origin)
        return x->origin < y->origin ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* The split of an intercommunicator: c, a colour's members of both groups
 * (group 0 first, identities kept), becomes an intercommunicator.  *made
 * is 0 when one group has no member: MPI gives MPI_COMM_NULL then. */
static ep_status_t split_sides(const ep_gid_t *group0, int n0, ep_comm_t *c, int *made)
{
    int k = 0;
    while (k < c->size && bsearch(&c->gids[k], group0, (size_t)n0, sizeof *group0, cmp_gid))
        k++;
    *made = k > 0 && k < c->size;
    return *made ? ep_comm_make_inter(c, k) : EP_OK;
}

/* Local index 0 of the parent: agrees on who has which colour, then builds
 * one communicator per local colour, in increasing colour order everywhere
 * (so the PMPI_Comm_create_group calls of overlapping process sets cannot
 * wait on each other in a cycle). */
static ep_status_t split_leader(ep_comm_t *pc, split_result_t *res)
{
    int n = pc->nlocal, np = pc->nprocs;
    int *lc = malloc(sizeof(int) * (size_t)n), nlc = 0;
    int *cnt = malloc(sizeof(int) * (size_t)np), *dsp = malloc(sizeof(int) * (size_t)np);
    int *all = NULL, nall = 0, *uniq = NULL;
    split_member_t *mem = malloc(sizeof *mem * (size_t)n);
    ep_new_ep_t *ne = malloc(sizeof *ne * (size_t)n);
    const split_arg_t *mine = atomic_load(&pc->sync.ptr[0]);
    ep_gid_t *group0 = NULL; /* the parent's group 0, sorted, when the sides stay apart */
    MPI_Group pgroup = MPI_GROUP_NULL;
    ep_status_t rc = EP_OK;

    res->n = 0;
    res->out = NULL;
    if (!lc || !cnt || !dsp || !mem || !ne) {
        rc = EP_ERR_NO_MEM;
        goto out;
    }
    if (mine->sides) {
        if (!(group0 = malloc(sizeof *group0 * (size_t)pc->group_size[0]))) {
            rc = EP_ERR_NO_MEM;
            goto out;
        }
        memcpy(group0, pc->gids, sizeof *group0 * (size_t)pc->group_size[0]);
        qsort(group0, (size_t)pc->group_size[0], sizeof *group0, cmp_gid);
    }
    for (int j = 0; j < n; j++) {
        const split_arg_t *a = atomic_load(&pc->sync.ptr[j]);
        if (a->color != MPI_UNDEFINED)
            lc[nlc++] = a->color;
    }
    nlc = ep_sort_unique(lc, nlc);
    /* Every process's colours, in process order. */
    if (pc->pcomm != MPI_COMM_NULL) {
        MPI_Request req;
        if (ep_wait_pmpi_started(PMPI_Iallgather(&nlc, 1, MPI_INT, cnt, 1, MPI_INT, pc->pcomm, &req), &req) !=
            MPI_SUCCESS) {
            rc = EP_ERR_INTERN;
            goto out;
        }
        for (int p = 0; p < np; p++) {
            dsp[p] = nall;
            nall += cnt[p];
        }
        if (!(all = malloc(sizeof(int) * (size_t)(nall ? nall : 1))) ||
            !(uniq = malloc(sizeof(int) * (size_t)(nall ? nall : 1)))) {
            rc = EP_ERR_NO_MEM;
            goto out;
        }
        if (ep_wait_pmpi_started(PMPI_Iallgatherv(lc, nlc, MPI_INT, all, cnt, dsp, MPI_INT, pc->pcomm, &req), &req) !=
            MPI_SUCCESS) {
            rc = EP_ERR_INTERN;
            goto out;
        }
        memcpy(uniq, all, sizeof(int) * (size_t)nall);
        nall = ep_sort_unique(uniq, nall);
        PMPI_Comm_group(pc->pcomm, &pgroup);
    }
    if (!(res->out = calloc((size_t)(nlc ? nlc : 1), sizeof *res->out))) {
        rc = EP_ERR_NO_MEM;
        goto out;
    }
    for (int k = 0; k < nlc && !rc; k++) {
        int color = lc[k];
        MPI_Comm newpc = MPI_COMM_NULL;
        if (pc->pcomm != MPI_COMM_NULL) {
            /* The processes holding this colour, in process order. */
            int *procs = malloc(sizeof(int) * (size_t)np), nprocs = 0;
            if (!procs) {
                rc = EP_ERR_NO_MEM;
                break;
            }
            for (int p = 0; p < np; p++)
                if (bsearch(&color, all + dsp[p], (size_t)cnt[p], sizeof(int), cmp_int))
                    procs[nprocs++] = p;
            if (nprocs > 1) {
                MPI_Group g;
                int tag = (int)((int *)bsearch(&color, uniq, (size_t)nall, sizeof(int), cmp_int) - uniq);
                PMPI_Group_incl(pgroup, nprocs, procs, &g);
                if (PMPI_Comm_create_group(pc->pcomm, g, tag & 0x0fffffff, &newpc) != MPI_SUCCESS)
                    rc = EP_ERR_INTERN;
                PMPI_Group_free(&g);
            }
            free(procs);
            if (rc)
                break;
        }
        /* This process's members of the colour, in key order. */
        int m = 0;
        for (int j = 0; j < n; j++) {
            const split_arg_t *a = atomic_load(&pc->sync.ptr[j]);
            if (a->color == color)
                mem[m++] = (split_member_t){a->order, j};
        }
        qsort(mem, (size_t)m, sizeof *mem, cmp_member);
        for (int i = 0; i < m; i++)
            ne[i] = (ep_new_ep_t){mem[i].key, pc->gids[pc->local[mem[i].lidx].rank]};
        ep_comm_t *c = NULL;
        rc = ep_comm_build_on(newpc, m, ne, MPI_ERRORS_ARE_FATAL, &c);
        if (!rc) {
            for (int i = 0; i < m; i++) /* local endpoints follow key order */
                ep_errhandler_assign(&c->local[i].errhandler, pc->local[mem[i].lidx].errhandler);
            int made = 1;
            if (mine->sides && ((rc = split_sides(group0, pc->group_size[0], c, &made)) || !made)) {
                for (int i = 0; i < m; i++)
                    ep_endpoint_free(&c->local[i]);
                c = NULL;
                if (rc)
                    goto out;
            }
            res->out[res->n++] = (split_out_t){color, c};
        }
    }
out:
    if (pgroup != MPI_GROUP_NULL)
        PMPI_Group_free(&pgroup);
    free(lc);
    free(cnt);
    free(dsp);
    free(all);
    free(uniq);
    free(mem);
    free(ne);
    free(group0);
    return rc;
}

/* MPI_Comm_split_type: every endpoint is where its process is, so the
 * leader asks MPICH which part this process belongs to (PMPI_Comm_split_type
 * over the processes, or over MPI_COMM_SELF when every rank lives here),
 * names the part by its lowest process, and gives that colour to every
 * local endpoint that did not pass MPI_UNDEFINED.  Every process calls
 * MPICH, whatever its endpoints passed, so that the call stays collective
 * there; MPI has every process pass the same type or MPI_UNDEFINED. */
static ep_status_t split_type_colors(ep_comm_t *pc)
{
    int type = MPI_UNDEFINED, colour = MPI_UNDEFINED;
    MPI_Info info = MPI_INFO_NULL;
    for (int j = 0; j < pc->nlocal && type == MPI_UNDEFINED; j++) {
        const split_arg_t *a = atomic_load(&pc->sync.ptr[j]);
        type = a->type;
        info = a->info;
    }
    MPI_Comm base = pc->pcomm != MPI_COMM_NULL ? pc->pcomm : MPI_COMM_SELF, part = MPI_COMM_NULL;
    ep_status_t rc = EP_OK;
    if (PMPI_Comm_split_type(base, type, 0, info, &part) != MPI_SUCCESS) {
        rc = EP_ERR_SPLIT_TYPE;
    } else if (part != MPI_COMM_NULL) {
        MPI_Group pg, bg;
        int first = 0;
        PMPI_Comm_group(part, &pg);
        PMPI_Comm_group(base, &bg);
        PMPI_Group_translate_ranks(pg, 1, &first, bg, &colour);
        PMPI_Group_free(&pg);
        PMPI_Group_free(&bg);
        PMPI_Comm_free(&part);
    }
    for (int j = 0; j < pc->nlocal; j++) {
        split_arg_t *a = atomic_load(&pc->sync.ptr[j]);
        a->color = a->type == MPI_UNDEFINED || rc ? MPI_UNDEFINED : colour;
    }
    return rc;
}

static ep_status_t split(ep_endpoint_t *parent, int color, int key, int sides, int type, MPI_Info info, MPI_Comm *out)
{
    ep_comm_t *pc = parent->comm;
    split_arg_t mine = {color, split_order(parent, key, sides), sides, type, info};
    split_result_t res = {0, NULL};

    atomic_store(&pc->sync.ptr[parent->lidx], &mine);
    *out = MPI_COMM_NULL;
    ep_status_t rc = ep_sync_enter(pc, parent->lidx);
    if (rc)
        return rc;
    if (parent->lidx == 0) {
        /* A failed MPICH split still takes part in the split below (with
         * no colour), which the other processes run too. */
        ep_status_t by_type = type == EP_SPLIT_BY_COLOR ? EP_OK : split_type_colors(pc);
        ep_status_t st = split_leader(pc, &res);
        atomic_store(&pc->sync.status, by_type ? by_type : st);
        atomic_store(&pc->sync.result, &res);
    }
    ep_sync_barrier(pc);
    color = mine.color;
    rc = atomic_load(&pc->sync.status);
    const split_result_t *r = atomic_load(&pc->sync.result);
    if (!rc && color != MPI_UNDEFINED) {
        /* My place among this process's members of my colour. */
        int pos = 0;
        for (int j = 0; j < pc->nlocal; j++) {
            const split_arg_t *a = atomic_load(&pc->sync.ptr[j]);
            if (a->color == color && a->order < mine.order)
                pos++;
        }
        for (int i = 0; i < r->n; i++)
            if (r->out[i].color == color && r->out[i].comm)
                *out = r->out[i].comm->local[pos].handle;
    }
    ep_sync_barrier(pc); /* the published arguments and result may go */
    if (parent->lidx == 0)
        free(res.out);
    return rc;
}

ep_status_t ep_comm_split(ep_endpoint_t *parent, int color, int key, MPI_Comm *out)
{
    return split(parent, color, key, parent->comm->inter, EP_SPLIT_BY_COLOR, MPI_INFO_NULL, out);
}

ep_status_t ep_comm_split_type(ep_endpoint_t *parent, int type, int key, MPI_Info info, MPI_Comm *out)
{
    return split(parent, MPI_UNDEFINED, key, parent->comm->inter, type, info, out);
}

ep_status_t ep_comm_split_merged(ep_endpoint_t *parent, int color, int key, MPI_Comm *out)
{
    return split(parent, color, key, 0, EP_SPLIT_BY_COLOR, MPI_INFO_NULL, out);
}

/* ---- MPI_Comm_create_group ----------------------------------------------
 * Collective over the members only, so the parent's rendezvous cannot be
 * used: the members of this process meet instead (meet.h), under a name
 * made of the parent's context, the tag and the member list, and one of
 * them creates the process-level communicator and builds for all. */

static int cmp_member_record(const void *a, const void *b)
{
    const ep_member_record_t *x = *(ep_member_record_t *const *)a, *y = *(ep_member_record_t *const *)b;
    return x->key < y->key ? -1 : x->key > y->key;
}

ep_status_t ep_comm_build_members(MPI_Comm base, const int *procs, int np, int tag, void *const *records, int n,
                                  ep_comm_t **out)
{
    ep_member_record_t **rec = malloc(sizeof *rec * (size_t)n);
    ep_new_ep_t *ne = malloc(sizeof *ne * (size_t)n);
    MPI_Comm pc = MPI_COMM_NULL;
    ep_status_t rc = EP_OK;

    *out = NULL;
    if (!rec || !ne) {
        rc = EP_ERR_NO_MEM;
        goto out;
    }
    if (np > 1) {
        MPI_Group bg, g;
        PMPI_Comm_group(base, &bg);
        PMPI_Group_incl(bg, np, procs, &g);
        if (PMPI_Comm_create_group(base, g, tag, &pc) != MPI_SUCCESS)
            rc = EP_ERR_INTERN;
        PMPI_Group_free(&g);
        PMPI_Group_free(&bg);
        if (rc)
            goto out;
    }
    memcpy(rec, records, sizeof *rec * (size_t)n);
    qsort(rec, (size_t)n, sizeof *rec, cmp_member_record);
    for (int i = 0; i < n; i++)
        ne[i] = (ep_new_ep_t){rec[i]->key, rec[i]->gid};
    if ((rc = ep_comm_build_on(pc, n, ne, MPI_ERRORS_ARE_FATAL, out)))
        goto out;
    for (int i = 0; i < n; i++) { /* local endpoints follow key order */
        ep_errhandler_assign(&(*out)->local[i].errhandler, rec[i]->eh);
        rec[i]->out = (*out)->local[i].handle;
    }
out:
    free(rec);
    free(ne);
    return rc;
}

typedef struct cg_call {
    ep_comm_t *pc;
    const int *prank; /* [n] the members' parent ranks, in group order */
    int n;
    int ptag; /* tag of the PMPI call, told apart like the meeting */
} cg_call_t;

static ep_status_t cg_drive(void *const *records, int nrec, void *arg)
{
    const cg_call_t *cg = arg;
    ep_comm_t *pc = cg->pc, *c;
    char *used = calloc((size_t)pc->nprocs, 1);
    int *procs = malloc(sizeof(int) * (size_t)pc->nprocs), np = 0;
    ep_status_t rc = EP_ERR_NO_MEM;

    if (used && procs) {
        /* The members' processes, in pcomm order. */
        for (int i = 0; i < cg->n; i++)
            used[pc->ranks[cg->prank[i]].proc] = 1;
        for (int p = 0; p < pc->nprocs; p++)
            if (used[p])
                procs[np++] = p;
        rc = ep_comm_build_members(pc->pcomm, procs, np, cg->ptag, records, nrec, &c);
    }
    free(used);
    free(procs);
    return rc;
}

ep_status_t ep_comm_create_group(ep_endpoint_t *ep, const int *prank, int n, int tag, MPI_Comm *out)
{
    ep_comm_t *pc = ep->comm;
    int here = 0, me = -1;
    uint64_t members = 0;
    for (int i = 0; i < n; i++) {
        here += pc->ranks[prank[i]].proc == pc->myproc;
        members = ep_mix64(members ^ (uint64_t)(uint32_t)prank[i]);
        if (prank[i] == ep->rank)
            me = i;
    }
    cg_call_t cg = {pc, prank, n, (int)(ep_mix64(members ^ ep_mix64((uint64_t)(uint32_t)tag)) & 0x0fffffff)};
    ep_member_record_t rec = {(uint64_t)me, pc->gids[ep->rank], ep->errhandler, MPI_COMM_NULL};
    /* Bit 41 keeps these meetings apart from other kinds of meeting. */
    ep_status_t rc = ep_meet(pc->ctx, (uint64_t)(uint32_t)tag | (1ULL << 41), members, here, &rec, cg_drive, &cg);
    if (!rc)
        *out = rec.out;
    return rc;
}

/* ---- MPI_Comm_create_from_group --------------------------------------------
 * No communicator joins the members, so their processes are found through
 * any communicator of this process that knows them (ep_gid_worlds), and
 * the process-level communicator is made from the one over every process.
 * Otherwise as MPI_Comm_create_group: the members of this process meet
 * under a name made of the member list and the string tag. */

uint64_t ep_stringtag_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return ep_mix64(h);
}

typedef struct fg_call {
    const int *world; /* [n] each member's process */
    int n;
    int ptag; /* tag of the PMPI call */
} fg_call_t;

static ep_status_t fg_drive(void *const *records, int nrec, void *arg)
{
    const fg_call_t *fg = arg;
    int *procs = malloc(sizeof *procs * (size_t)fg->n);
    ep_comm_t *c;
    if (!procs)
        return EP_ERR_NO_MEM;
    memcpy(procs, fg->world, sizeof *procs * (size_t)fg->n);
    int np = ep_sort_unique(procs, fg->n);
    ep_status_t rc = ep_comm_build_members(ep_proc_group_comm(), procs, np, fg->ptag, records, nrec, &c);
    free(procs);
    return rc;
}

ep_status_t ep_comm_create_from_group(const ep_gid_t *m, int n, int pos, const char *stringtag, MPI_Errhandler eh,
                                      MPI_Comm *out, int *bad)
{
    int *world = malloc(sizeof *world * (size_t)n), here = 0, me = ep_proc_world_rank();
    ep_status_t rc;
    *bad = -1;
    if (!world)
        return EP_ERR_NO_MEM;
    if ((rc = ep_gid_worlds(m, n, world, bad)))
        goto out;
    uint64_t members = 0, tag = ep_stringtag_hash(stringtag);
    for (int i = 0; i < n; i++) {
        members = ep_mix64(members ^ ep_mix64(m[i].origin) ^ m[i].index);
        here += world[i] == me;
    }
    if (world[pos] != me) { /* the caller's identity lives elsewhere: not the caller's group */
        *bad = pos;
        rc = EP_ERR_GROUP;
        goto out;
    }
    fg_call_t fg = {world, n, (int)(ep_mix64(members ^ tag) & 0x0fffffff)};
    ep_member_record_t rec = {(uint64_t)pos, m[pos], eh, MPI_COMM_NULL};
    /* Bit 42 alone in the last name keeps these meetings apart from the
     * other kinds. */
    if (!(rc = ep_meet(members, tag, 1ULL << 42, here, &rec, fg_drive, &fg)))
        *out = rec.out;
out:
    free(world);
    return rc;
}

ep_status_t ep_persistent_init(ep_endpoint_t *ep, ep_coll_seq_t *s, ep_request_t **out)
{
    ep_coll_args_t dup_args;
    MPI_Comm dup = MPI_COMM_NULL;
    *out = NULL;
    ep_comm_dup_private_args(&dup_args, ep, &dup);
    ep_status_t st = ep_coll_run(ep, &dup_args);
    if (!st)
        return ep_coll_persistent_make(ep, s, ep_endpoint_get(dup), out);
    ep_coll_seq_free(s);
    if (dup != MPI_COMM_NULL)
        ep_endpoint_free(ep_endpoint_get(dup));
    return st;
}
