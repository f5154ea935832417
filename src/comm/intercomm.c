#include "comm/intercomm.h"

#include "comm/comm_create.h"
#include "comm/meet.h"
#include "base/wait.h"
#include "core/proc.h"

#include <stdlib.h>
#include <string.h>

void ep_intercomm_describe(const ep_endpoint_t *ep, ep_member_t *m)
{
    const ep_comm_t *c = ep->comm;
    for (int r = 0; r < c->size; r++)
        m[r] = (ep_member_t){c->proc_world[c->ranks[r].proc], c->gids[r]};
}

static int gid_less(ep_gid_t a, ep_gid_t b) { return a.origin != b.origin ? a.origin < b.origin : a.index < b.index; }

/* The union, as every participant sees it. */
typedef struct ic_union {
    const ep_member_t *group[2];
    int size[2];
    int tag;
    uint64_t name;
} ic_union_t;

/* Run by one endpoint per process for all participants of the process. */
static ep_status_t ic_drive(void *const *records, int n, void *arg)
{
    const ic_union_t *u = arg;
    int total = u->size[0] + u->size[1], np = 0;
    int *procs = malloc(sizeof *procs * (size_t)total);
    ep_comm_t *c = NULL;
    ep_status_t rc;

    if (!procs)
        return EP_ERR_NO_MEM;
    /* The union's processes, in world order. */
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < u->size[s]; r++)
            procs[np++] = (int)u->group[s][r].world;
    int k = ep_sort_unique(procs, np);
    /* Ranks of the union: group 0, then group 1 (the records' keys). */
    rc = ep_comm_build_members(ep_proc_group_comm(), procs, k, (int)(u->name & 0x0fffffff), records, n, &c);
    if (!rc && (rc = ep_comm_make_inter(c, u->size[0]))) {
        for (int i = 0; i < c->nlocal; i++)
            ep_endpoint_free(&c->local[i]);
    }
    free(procs);
    return rc;
}

ep_status_t ep_intercomm_build(ep_endpoint_t *ep, const ep_member_t *remote, int rsize, int tag,
                               const uint64_t *remote_ctx, MPI_Comm *out)
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
    /* The meeting's name: both groups' first members and local
     * communicators (side 0's first), and the tag. */
    ep_gid_t a = u.group[0][0].gid, b = u.group[1][0].gid;
    uint64_t ctx[2] = {0, 0}; /* (a context may be 0: no sentinel value) */
    if (remote_ctx) {
        ctx[side] = lc->ctx;
        ctx[1 - side] = *remote_ctx;
    }
    uint64_t k0 = ep_mix64(a.origin ^ ep_mix64(ctx[0])) ^ a.index, k1 = ep_mix64(b.origin ^ ep_mix64(ctx[1])) ^ b.index,
             k2 = (uint64_t)(uint32_t)tag;
    u.name = ep_mix64(k0 ^ ep_mix64(k1 ^ ep_mix64(k2)));
    int here = 0, me = ep_proc_world_rank();
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < u.size[s]; r++)
            here += u.group[s][r].world == me;
    ep_member_record_t rec = {((uint64_t)side << 32) | (uint32_t)ep->rank, lc->gids[ep->rank], ep->errhandler,
                              MPI_COMM_NULL};
    ep_status_t rc = ep_meet(k0, k1, k2 | (1ULL << 40), here, &rec, ic_drive, &u);
    free(local);
    if (!rc)
        *out = rec.out;
    return rc;
}

/* The local group becomes a communicator of its own first (which the
 * union's construction needs for the local side), and each member knows
 * the remote group already: no leader has to tell it. */
ep_status_t ep_intercomm_from_groups(const ep_gid_t *lg, int ln, int lpos, const ep_gid_t *rg, int rn,
                                     const char *stringtag, MPI_Errhandler eh, MPI_Comm *out, int *bad, int *bad_remote)
{
    ep_member_t *remote = malloc(sizeof *remote * (size_t)rn);
    int *world = malloc(sizeof *world * (size_t)rn);
    MPI_Comm lh = MPI_COMM_NULL;
    ep_status_t rc = EP_ERR_NO_MEM;

    *bad_remote = 0;
    if (!remote || !world)
        goto out;
    if ((rc = ep_gid_worlds(rg, rn, world, bad))) {
        *bad_remote = 1;
        goto out;
    }
    for (int i = 0; i < rn; i++)
        remote[i] = (ep_member_t){world[i], rg[i]};
    if ((rc = ep_comm_create_from_group(lg, ln, lpos, stringtag, eh, &lh, bad)))
        goto out;
    ep_endpoint_t *lep = ep_endpoint_get(lh);
    rc = ep_intercomm_build(lep, remote, rn, (int)(ep_stringtag_hash(stringtag) & 0x0fffffff), NULL, out);
    ep_endpoint_free(lep);
out:
    free(remote);
    free(world);
    return rc;
}

ep_status_t ep_intercomm_merge(ep_endpoint_t *ep, int high, MPI_Comm *out)
{
    /* A split of the union with one colour: keys put the low group first,
     * and equal keys keep union order (group 0 first). */
    return ep_comm_split_merged(ep, 0, high ? 1 : 0, out);
}
