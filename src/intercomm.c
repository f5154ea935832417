#include "intercomm.h"

#include "comm_create.h"
#include "meet.h"
#include "net.h"

#include <stdlib.h>
#include <string.h>

void ep_intercomm_describe(const ep_endpoint_t *ep, ep_member_t *m)
{
    const ep_comm_t *c = ep->comm;
    for (int r = 0; r < c->size; r++)
        m[r] = (ep_member_t){c->proc_world[c->ranks[r].proc], c->gids[r]};
}

static int gid_less(ep_gid_t a, ep_gid_t b)
{
    return a.origin != b.origin ? a.origin < b.origin : a.index < b.index;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* What one participating endpoint brings to the meeting. */
typedef struct ic_record {
    int side, lrank;
    ep_gid_t gid;
    MPI_Errhandler eh;
    MPI_Comm out;
} ic_record_t;

/* The union, as every participant sees it. */
typedef struct ic_union {
    const ep_member_t *group[2];
    int size[2];
    int tag;
    uint64_t name;
} ic_union_t;

static int cmp_record(const void *a, const void *b)
{
    const ic_record_t *x = *(ic_record_t *const *)a, *y = *(ic_record_t *const *)b;
    if (x->side != y->side)
        return x->side - y->side;
    return x->lrank - y->lrank;
}

/* Run by one endpoint per process for all participants of the process. */
static ep_status_t ic_drive(void *const *records, int n, void *arg)
{
    const ic_union_t *u = arg;
    int total = u->size[0] + u->size[1], np = 0;
    int64_t *procs = malloc(sizeof *procs * (size_t)total);
    ic_record_t **rec = malloc(sizeof *rec * (size_t)n);
    ep_new_ep_t *ne = malloc(sizeof *ne * (size_t)n);
    MPI_Comm pc = MPI_COMM_NULL;
    ep_comm_t *c = NULL;
    ep_status_t rc = EP_OK;

    if (!procs || !rec || !ne) {
        rc = EP_ERR_NO_MEM;
        goto out;
    }
    /* The union's processes, in world order. */
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < u->size[s]; r++)
            procs[np++] = u->group[s][r].world;
    qsort(procs, (size_t)np, sizeof *procs, cmp_i64);
    int k = 0;
    for (int i = 0; i < np; i++)
        if (k == 0 || procs[k - 1] != procs[i])
            procs[k++] = procs[i];
    np = k;
    if (np > 1) {
        MPI_Group wg, g;
        int *ranks = malloc(sizeof *ranks * (size_t)np);
        if (!ranks) {
            rc = EP_ERR_NO_MEM;
            goto out;
        }
        for (int i = 0; i < np; i++)
            ranks[i] = (int)procs[i];
        PMPI_Comm_group(ep_net_group_comm(), &wg);
        PMPI_Group_incl(wg, np, ranks, &g);
        if (PMPI_Comm_create_group(ep_net_group_comm(), g, (int)(u->name & 0x0fffffff), &pc) != MPI_SUCCESS)
            rc = EP_ERR_INTERN;
        PMPI_Group_free(&g);
        PMPI_Group_free(&wg);
        free(ranks);
        if (rc)
            goto out;
    }
    /* Ranks of the union: group 0, then group 1. */
    memcpy(rec, records, sizeof *rec * (size_t)n);
    qsort(rec, (size_t)n, sizeof *rec, cmp_record);
    for (int i = 0; i < n; i++)
        ne[i] = (ep_new_ep_t){((uint64_t)rec[i]->side << 32) | (uint32_t)rec[i]->lrank, rec[i]->gid};
    if ((rc = ep_comm_build_on(pc, n, ne, MPI_ERRORS_ARE_FATAL, &c)))
        goto out;
    c->inter = 1;
    c->group_off[0] = 0;
    c->group_off[1] = u->size[0];
    c->group_size[0] = u->size[0];
    c->group_size[1] = u->size[1];
    for (int i = 0; i < n; i++) { /* local endpoints follow key order */
        ep_endpoint_t *ep = &c->local[i];
        ep->side = ep->rank >= u->size[0];
        ep->errhandler = rec[i]->eh;
        rec[i]->out = ep->handle;
    }
out:
    free(procs);
    free(rec);
    free(ne);
    return rc;
}

ep_status_t ep_intercomm_build(ep_endpoint_t *ep, const ep_member_t *remote, int rsize, int tag, MPI_Comm *out)
{
    ep_comm_t *lc = ep->comm;
    ep_member_t *local = malloc(sizeof *local * (size_t)lc->size);
    if (!local)
        return EP_ERR_NO_MEM;
    ep_intercomm_describe(ep, local);
    int side = gid_less(local[0].gid, remote[0].gid) ? 0 : 1;
    ic_union_t u = {.tag = tag};
    u.group[side] = local;
    u.size[side] = lc->size;
    u.group[1 - side] = remote;
    u.size[1 - side] = rsize;
    /* The meeting's name: both groups' first members and the tag. */
    ep_gid_t a = u.group[0][0].gid, b = u.group[1][0].gid;
    uint64_t k0 = ep_mix64(a.origin) ^ a.index, k1 = ep_mix64(b.origin) ^ b.index, k2 = (uint64_t)(uint32_t)tag;
    u.name = ep_mix64(k0 ^ ep_mix64(k1 ^ ep_mix64(k2)));
    int here = 0, me = ep_net_world_rank();
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < u.size[s]; r++)
            here += u.group[s][r].world == me;
    ic_record_t rec = {side, ep->rank, lc->gids[ep->rank], ep->errhandler, MPI_COMM_NULL};
    ep_status_t rc = ep_meet(k0, k1, k2 | (1ULL << 40), here, &rec, ic_drive, &u);
    free(local);
    if (!rc)
        *out = rec.out;
    return rc;
}

ep_status_t ep_intercomm_merge(ep_endpoint_t *ep, int high, MPI_Comm *out)
{
    /* A split of the union with one colour: keys put the low group first,
     * and equal keys keep union order (group 0 first). */
    return ep_comm_split(ep, 0, high ? 1 : 0, out);
}
