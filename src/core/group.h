/* Groups of endpoint communicators.
 *
 * A group is an ordered list of member identities (ep_gid_t, see comm.h):
 * the same identities MPI_Comm_compare uses, so groups of endpoint and of
 * classic communicators can be mixed (a classic process is {0, world
 * rank}).  An endpoint group also remembers which member made it (the
 * endpoint whose MPI_Comm_group call it came from): that member is "the
 * calling process" for MPI_Group_rank. */
#ifndef EP_GROUP_H
#define EP_GROUP_H

#include "core/comm.h"

typedef struct ep_group {
    ep_object_t obj; /* registry header: EP_OBJ_GROUP */
    MPI_Group handle;
    int size;
    ep_gid_t *members; /* [size] in group rank order */
    ep_gid_t me;       /* the member that made the group */
} ep_group_t;

static inline ep_group_t *ep_group_get(MPI_Group h) { return (ep_group_t *)ep_registry_get(EP_HID(h), EP_OBJ_GROUP); }

/* A group with n members (copied) and a handle; NULL when out of memory. */
ep_group_t *ep_group_new(const ep_gid_t *members, int n, ep_gid_t me);
void ep_group_free(ep_group_t *g);

/* The members of any group handle, endpoint or classic, as identities
 * (*owned: the caller frees *members).  EP_ERR_GROUP for a bad handle. */
ep_status_t ep_group_members(MPI_Group h, const ep_gid_t **members, int *n, int *owned);

/* Rank of identity x in (members, n), or MPI_UNDEFINED. */
int ep_gid_rank(const ep_gid_t *members, int n, ep_gid_t x);

typedef enum { EP_GROUP_UNION, EP_GROUP_INTERSECTION, EP_GROUP_DIFFERENCE } ep_group_setop_t;
/* Members of a op b, in MPI's order, into *out (malloc'd), *nout. */
ep_status_t ep_group_setop(const ep_gid_t *a, int na, const ep_gid_t *b, int nb, ep_group_setop_t op, ep_gid_t **out,
                           int *nout);

/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL. */
int ep_group_compare(const ep_gid_t *a, int na, const ep_gid_t *b, int nb);

#endif
