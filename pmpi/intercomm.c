/* MPI_Intercomm_create and MPI_Intercomm_merge on endpoint communicators
 * (src/core/intercomm.h).  The leaders swap their groups' member lists over the
 * peer communicator, then broadcast them in their own group. */
#include "coll/coll.h"
#include "entry.h"
#include "comm/intercomm.h"
#include "comm/meet.h"

#include <stdlib.h>

/* Both leaders in this process on a classic peer communicator: PMPI
 * cannot tell their messages apart, so they swap in memory. */
typedef struct leader_swap {
    const ep_member_t *mine;
    int64_t n[2]; /* its group's size and its local communicator's context */
    ep_member_t *theirs;
    int64_t tn[2];
} leader_swap_t;

static ep_status_t swap_drive(void *const *records, int n, void *arg)
{
    (void)arg;
    if (n != 2)
        return EP_ERR_INTERN;
    for (int i = 0; i < 2; i++) {
        leader_swap_t *me = records[i], *other = records[1 - i];
        me->tn[0] = other->n[0];
        me->tn[1] = other->n[1];
        if (!(me->theirs = malloc(sizeof *me->theirs * (size_t)(other->n[0] ? other->n[0] : 1))))
            return EP_ERR_NO_MEM;
        for (int64_t k = 0; k < other->n[0]; k++)
            me->theirs[k] = other->mine[k];
    }
    return EP_OK;
}

/* The leader's half: the remote group's members into *remote, its size and
 * the remote local communicator's context into head[0], head[1].  Errors
 * are raised here (on the peer communicator's handler for its own calls). */
static int leader_exchange(const char *call, ep_endpoint_t *ep, MPI_Comm peer, int remote_leader, int tag,
                           ep_member_t **remote, int64_t head[2])
{
    int64_t n = ep->comm->size, mine[2] = {n, (int64_t)ep->comm->ctx};
    ep_member_t *local = malloc(sizeof *local * (size_t)n);
    int rc = MPI_SUCCESS, prank = -1;
    if (!local)
        return entry_raise(ep, call, MPI_ERR_NO_MEM, "no memory for a group of %lld", (long long)n);
    ep_intercomm_describe(ep, local);
    if (!entry_comm_is_ep(peer) && PMPI_Comm_rank(peer, &prank) == MPI_SUCCESS && prank == remote_leader) {
        leader_swap_t sw = {local, {n, mine[1]}, NULL, {0, 0}};
        ep_status_t st =
            ep_meet((uint64_t)(uintptr_t)peer, (uint64_t)(uint32_t)tag, 0x4c454144ULL, 2, &sw, swap_drive, NULL);
        if (st)
            rc = entry_raise_status(ep, call, st, "the leaders could not swap their groups");
        *remote = sw.theirs;
        head[0] = sw.tn[0];
        head[1] = sw.tn[1];
    } else {
        rc = MPI_Sendrecv(mine, 2, MPI_INT64_T, remote_leader, tag, head, 2, MPI_INT64_T, remote_leader, tag, peer,
                          MPI_STATUS_IGNORE);
        if (!rc && (head[0] <= 0 || !(*remote = malloc(sizeof **remote * (size_t)head[0]))))
            rc = entry_raise(ep, call, MPI_ERR_INTERN, "bad remote group size %lld", (long long)head[0]);
        if (!rc)
            rc = MPI_Sendrecv(local, (int)(3 * n), MPI_INT64_T, remote_leader, tag, *remote, (int)(3 * head[0]),
                              MPI_INT64_T, remote_leader, tag, peer, MPI_STATUS_IGNORE);
    }
    free(local);
    return rc;
}

static ep_status_t group_bcast(ep_endpoint_t *ep, void *buf, int count, int root)
{
    ep_coll_args_t a;
    ep_coll_bcast(&a, ep, buf, count, MPI_INT64_T, root);
    return ep_coll_run(ep, &a);
}

ENTRY_API int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader,
                                   int tag, MPI_Comm *newintercomm)
{
    static const char call[] = "MPI_Intercomm_create";
    ep_endpoint_t *ep;
    int rc = MPI_SUCCESS;
    if (!entry_comm_is_ep(local_comm)) {
        if (entry_comm_is_ep(peer_comm))
            return entry_raise_classic(local_comm, call, MPI_ERR_COMM,
                                       "a classic local communicator needs a classic peer communicator");
        return PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm);
    }
    ENTRY_RESOLVE_EP(call, local_comm, ep);
    if (!newintercomm)
        return entry_raise(ep, call, MPI_ERR_ARG, "newintercomm pointer is NULL");
    if (ep->comm->inter)
        return entry_raise(ep, call, MPI_ERR_COMM, "the local communicator is an intercommunicator");
    if (local_leader < 0 || local_leader >= ep->comm->size)
        return entry_raise(ep, call, MPI_ERR_RANK, "invalid local leader %d (the communicator has ranks 0 to %d)",
                           local_leader, ep->comm->size - 1);
    if (tag < 0)
        return entry_raise(ep, call, MPI_ERR_TAG, "invalid tag %d", tag);
    ep_member_t *remote = NULL;
    int64_t head[2] = {0, 0}, rsize; /* the remote group's size, its local communicator's context */
    if (ep->rank == local_leader) {
        if (peer_comm == MPI_COMM_NULL)
            rc = entry_raise(ep, call, MPI_ERR_COMM, "the peer communicator is MPI_COMM_NULL");
        else
            rc = leader_exchange(call, ep, peer_comm, remote_leader, tag, &remote, head);
        if (rc)
            head[0] = -1; /* tells the group to give up */
    }
    ep_status_t st = group_bcast(ep, head, 2, local_leader);
    rsize = head[0];
    if (!st && rsize > 0) {
        if (ep->rank != local_leader && !(remote = malloc(sizeof *remote * (size_t)rsize)))
            return entry_raise(ep, call, MPI_ERR_NO_MEM, "no memory for a group of %lld", (long long)rsize);
        st = group_bcast(ep, remote, (int)(3 * rsize), local_leader);
    }
    uint64_t rctx = (uint64_t)head[1];
    if (!st && rsize > 0)
        st = ep_intercomm_build(ep, remote, (int)rsize, tag, &rctx, newintercomm);
    free(remote);
    if (rc)
        return rc;
    if (rsize <= 0)
        return entry_raise(ep, call, MPI_ERR_COMM, "the group leader could not reach the remote leader");
    return st ? entry_raise_status(ep, call, st, NULL) : MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int intercomm_merge_ep(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char call[] = "MPI_Intercomm_merge";
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP(call, intercomm, ep);
    if (!ep->comm->inter)
        return entry_raise(ep, call, MPI_ERR_COMM, "the communicator is not an intercommunicator");
    if (!newintracomm)
        return entry_raise(ep, call, MPI_ERR_ARG, "newintracomm pointer is NULL");
    ep_status_t st = ep_intercomm_merge(ep, high, newintracomm);
    return st ? entry_raise_status(ep, call, st, NULL) : MPI_SUCCESS;
}

/* The entry points whose dispatch is data (maint/dispatch.txt). */
#include "intercomm.entry.gen.inc"
