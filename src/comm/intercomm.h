/* Intercommunicators between groups of endpoints.
 *
 * An endpoint intercommunicator is one endpoint communicator over the union
 * of the two groups (ep_comm_t with inter set): ranks[] lists group 0, then
 * group 1, and each endpoint knows its side.  Messages travel as on any
 * endpoint communicator; only rank translation differs (comm.h).  The two
 * groups may share processes, even both leaders: the endpoints of a process
 * that belong to either group meet (meet.h) and one of them builds the
 * union for all.  Group 0 is the group whose rank 0 has the smaller member
 * identity, which both groups can tell without talking. */
#ifndef EP_INTERCOMM_H
#define EP_INTERCOMM_H

#include "core/comm.h"

/* A member of a group as the leaders exchange it. */
typedef struct ep_member {
    int64_t world; /* world rank of its process */
    ep_gid_t gid;
} ep_member_t;

/* The members of ep's (intra)communicator, in rank order, into m[size]. */
void ep_intercomm_describe(const ep_endpoint_t *ep, ep_member_t *m);

/* MPI_Intercomm_create once every endpoint of the local group knows the
 * remote group (rsize members) and the context of the remote side's local
 * communicator (*remote_ctx; NULL when there is none:
 * MPI_Intercomm_create_from_groups); the two contexts and tag tell
 * concurrent creations apart, also those of groups with the same members
 * (on duplicates) and the same tag. */
ep_status_t ep_intercomm_build(ep_endpoint_t *ep, const ep_member_t *remote, int rsize, int tag,
                               const uint64_t *remote_ctx, MPI_Comm *out);

/* MPI_Intercomm_create_from_groups, called by each member of either
 * group: lg[ln] the caller's group (the caller lg[lpos]), rg[rn] the other;
 * eh the new handles' error handler.  *bad names a member no communicator
 * of this process knows (EP_ERR_GROUP): of lg when *bad_remote is 0. */
ep_status_t ep_intercomm_from_groups(const ep_gid_t *lg, int ln, int lpos, const ep_gid_t *rg, int rn,
                                     const char *stringtag, MPI_Errhandler eh, MPI_Comm *out, int *bad,
                                     int *bad_remote);

/* MPI_Intercomm_merge: the union as an intracommunicator, the group that
 * passed high = 0 first (group 0 first when both passed the same). */
ep_status_t ep_intercomm_merge(ep_endpoint_t *ep, int high, MPI_Comm *out);

#endif
