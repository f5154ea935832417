/* Groups of endpoint communicators, and MPI_Comm_create from a group.
 * Calls whose group arguments are all classic go straight to PMPI; as soon
 * as one is an endpoint group, the engine (src/core/group.c) works on member
 * identities, which classic groups have too. */
#include "comm/comm_create.h"
#include "entry.h"
#include "core/group.h"
#include "comm/intercomm.h"

#include <stdlib.h>
#include <string.h>

/* The members of h, or a raised MPI_ERR_GROUP. */
static int members_of(const char *call, MPI_Group h, const ep_gid_t **m, int *n, int *owned)
{
    ep_status_t st = ep_group_members(h, m, n, owned);
    if (st == EP_ERR_NO_MEM)
        return entry_raise(NULL, call, MPI_ERR_NO_MEM, "no memory for the members of group " EP_HFMT, EP_HARG(h));
    if (st)
        return entry_raise(NULL, call, MPI_ERR_GROUP, "invalid group " EP_HFMT, EP_HARG(h));
    return MPI_SUCCESS;
}

static void release(const ep_gid_t *m, int owned)
{
    if (owned)
        free((void *)m);
}

/* Makes the handle of a new endpoint group (MPI_GROUP_EMPTY when empty). */
static int new_group(const char *call, const ep_gid_t *m, int n, ep_gid_t me, MPI_Group *out)
{
    if (n == 0) {
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    ep_group_t *g = ep_group_new(m, n, me);
    if (!g)
        return entry_raise(NULL, call, MPI_ERR_NO_MEM, "no memory for a group of %d", n);
    *out = g->handle;
    return MPI_SUCCESS;
}

static ep_gid_t me_of(MPI_Group a, MPI_Group b)
{
    ep_group_t *g = ep_group_handle_is_ep(a) ? ep_group_get(a) : ep_group_get(b);
    return g ? g->me : (ep_gid_t){0, 0};
}

ENTRY_ENDPOINT_PATH int comm_group_ep(MPI_Comm comm, MPI_Group *group)
{
    static const char call[] = "MPI_Comm_group";
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if (!group)
        return entry_raise(ep, call, MPI_ERR_ARG, "group pointer is NULL");
    ep_comm_t *c = ep->comm;
    return new_group(call, c->gids + c->group_off[ep->side], ep_local_size(ep), c->gids[ep->rank], group);
}

ENTRY_ENDPOINT_PATH int comm_remote_group_ep(MPI_Comm comm, MPI_Group *group)
{
    static const char call[] = "MPI_Comm_remote_group";
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if (!ep->comm->inter)
        return entry_raise(ep, call, MPI_ERR_COMM, "the communicator is not an intercommunicator");
    if (!group)
        return entry_raise(ep, call, MPI_ERR_ARG, "group pointer is NULL");
    ep_comm_t *c = ep->comm;
    return new_group(call, c->gids + c->group_off[ep_remote_side(ep)], ep_remote_size(ep), c->gids[ep->rank], group);
}

ENTRY_ENDPOINT_PATH int group_size_ep(MPI_Group group, int *size)
{
    ep_group_t *g = ep_group_get(group);
    if (!g)
        return entry_raise(NULL, "MPI_Group_size", MPI_ERR_GROUP, "invalid group " EP_HFMT, EP_HARG(group));
    *size = g->size;
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int group_rank_ep(MPI_Group group, int *rank)
{
    ep_group_t *g = ep_group_get(group);
    if (!g)
        return entry_raise(NULL, "MPI_Group_rank", MPI_ERR_GROUP, "invalid group " EP_HFMT, EP_HARG(group));
    *rank = ep_gid_rank(g->members, g->size, g->me);
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Group_free(MPI_Group *group)
{
    if (!group || !ep_group_handle_is_ep(*group))
        return PMPI_Group_free(group);
    ep_group_t *g = ep_group_get(*group);
    if (!g)
        return entry_raise(NULL, "MPI_Group_free", MPI_ERR_GROUP, "invalid group " EP_HFMT, EP_HARG(*group));
    ep_group_free(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
    static const char call[] = "MPI_Group_translate_ranks";
    const ep_gid_t *a, *b;
    int na, nb, oa, ob, rc;
    if (!ep_group_handle_is_ep(group1) && !ep_group_handle_is_ep(group2))
        return PMPI_Group_translate_ranks(group1, n, ranks1, group2, ranks2);
    if ((rc = members_of(call, group1, &a, &na, &oa)))
        return rc;
    if ((rc = members_of(call, group2, &b, &nb, &ob))) {
        release(a, oa);
        return rc;
    }
    for (int i = 0; i < n && !rc; i++) {
        if (ranks1[i] == MPI_PROC_NULL)
            ranks2[i] = MPI_PROC_NULL;
        else if (ranks1[i] < 0 || ranks1[i] >= na)
            rc = entry_raise(NULL, call, MPI_ERR_RANK, "rank %d is not in the first group (size %d)", ranks1[i], na);
        else
            ranks2[i] = ep_gid_rank(b, nb, a[ranks1[i]]);
    }
    release(a, oa);
    release(b, ob);
    return rc;
}

ENTRY_API int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    static const char call[] = "MPI_Group_compare";
    const ep_gid_t *a, *b;
    int na, nb, oa, ob, rc;
    if (!ep_group_handle_is_ep(group1) && !ep_group_handle_is_ep(group2))
        return PMPI_Group_compare(group1, group2, result);
    if ((rc = members_of(call, group1, &a, &na, &oa)))
        return rc;
    if ((rc = members_of(call, group2, &b, &nb, &ob))) {
        release(a, oa);
        return rc;
    }
    *result = ep_group_compare(a, na, b, nb);
    release(a, oa);
    release(b, ob);
    return MPI_SUCCESS;
}

static int setop(const char *call, MPI_Group group1, MPI_Group group2, ep_group_setop_t op, MPI_Group *newgroup)
{
    const ep_gid_t *a, *b;
    ep_gid_t *m = NULL;
    int na, nb, nm, oa, ob, rc;
    if ((rc = members_of(call, group1, &a, &na, &oa)))
        return rc;
    if ((rc = members_of(call, group2, &b, &nb, &ob))) {
        release(a, oa);
        return rc;
    }
    if (ep_group_setop(a, na, b, nb, op, &m, &nm))
        rc = entry_raise(NULL, call, MPI_ERR_NO_MEM, "no memory for groups of %d and %d", na, nb);
    else
        rc = new_group(call, m, nm, me_of(group1, group2), newgroup);
    free(m);
    release(a, oa);
    release(b, ob);
    return rc;
}

#define GROUP_SETOP(NAME, OP)                                                               \
    ENTRY_API int MPI_Group_##NAME(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) \
    {                                                                                       \
        if (!ep_group_handle_is_ep(group1) && !ep_group_handle_is_ep(group2))               \
            return PMPI_Group_##NAME(group1, group2, newgroup);                             \
        return setop("MPI_Group_" #NAME, group1, group2, OP, newgroup);                     \
    }

GROUP_SETOP(union, EP_GROUP_UNION)
GROUP_SETOP(intersection, EP_GROUP_INTERSECTION)
GROUP_SETOP(difference, EP_GROUP_DIFFERENCE)

/* Builds a subgroup from a rank list: include them in order (incl), or all
 * but them (excl).  Ranks must exist and be distinct. */
static int subgroup(const char *call, MPI_Group group, int n, const int ranks[], int excl, MPI_Group *newgroup)
{
    ep_group_t *g = ep_group_get(group);
    if (!g)
        return entry_raise(NULL, call, MPI_ERR_GROUP, "invalid group " EP_HFMT, EP_HARG(group));
    if (n < 0 || n > g->size)
        return entry_raise(NULL, call, MPI_ERR_ARG, "%d ranks for a group of %d", n, g->size);
    char *seen = calloc((size_t)g->size + 1, 1);
    ep_gid_t *m = malloc(sizeof *m * (size_t)(g->size + 1));
    int k = 0, rc = MPI_SUCCESS;
    if (!seen || !m)
        rc = entry_raise(NULL, call, MPI_ERR_NO_MEM, "no memory for a group of %d", g->size);
    for (int i = 0; !rc && i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            rc = entry_raise(NULL, call, MPI_ERR_RANK, "rank %d is not in the group (size %d)", ranks[i], g->size);
        else if (seen[ranks[i]]++)
            rc = entry_raise(NULL, call, MPI_ERR_RANK, "rank %d is listed twice", ranks[i]);
        else if (!excl)
            m[k++] = g->members[ranks[i]];
    }
    for (int r = 0; !rc && excl && r < g->size; r++)
        if (!seen[r])
            m[k++] = g->members[r];
    if (!rc)
        rc = new_group(call, m, k, g->me, newgroup);
    free(seen);
    free(m);
    return rc;
}

/* Expands (first, last, stride) triples into a rank list. */
static int expand_ranges(const char *call, int n, int ranges[][3], int **out, int *nout)
{
    long total = 0;
    for (int i = 0; i < n; i++) {
        int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];
        if (s == 0 || (s > 0 && f > l) || (s < 0 && f < l))
            return entry_raise(NULL, call, MPI_ERR_ARG, "invalid range (%d, %d, %d)", f, l, s);
        total += (l - f) / s + 1;
    }
    int *r = malloc(sizeof(int) * (size_t)(total ? total : 1)), k = 0;
    if (!r)
        return entry_raise(NULL, call, MPI_ERR_NO_MEM, "no memory for %ld ranks", total);
    for (int i = 0; i < n; i++)
        for (int v = ranges[i][0]; ranges[i][2] > 0 ? v <= ranges[i][1] : v >= ranges[i][1]; v += ranges[i][2])
            r[k++] = v;
    *out = r;
    *nout = k;
    return MPI_SUCCESS;
}

static int range_common(const char *call, MPI_Group group, int n, int ranges[][3], int excl, MPI_Group *newgroup)
{
    int *ranks = NULL, k = 0, rc;
    if ((rc = expand_ranges(call, n, ranges, &ranks, &k)))
        return rc;
    rc = subgroup(call, group, k, ranks, excl, newgroup);
    free(ranks);
    return rc;
}

/* The start of MPI_Comm_create and MPI_Comm_create_group on an endpoint
 * communicator: resolves comm to ep (an intracommunicator if intra_only)
 * and group to the ranks its members have in ep's own group (*ranks, n of
 * them, to free), and *pos to ep's place in the group (MPI_UNDEFINED when
 * it is not a member).  A member outside ep's group is MPI_ERR_GROUP. */
static int group_ranks(const char *call, MPI_Comm comm, int intra_only, MPI_Group group, MPI_Comm *newcomm,
                       ep_endpoint_t **ep, int **ranks, int *n, int *pos)
{
    const ep_gid_t *m;
    int owned, rc;
    *ranks = NULL;
    if (!entry_comm_is_ep(comm))
        return entry_raise_classic(comm, call, MPI_ERR_GROUP,
                                   "an endpoint group cannot make a communicator from a classic one");
    if ((rc = entry_endpoint(call, comm, ep)) || (intra_only && (rc = entry_check_intra(*ep, call))))
        return rc;
    if (!newcomm)
        return entry_raise(*ep, call, MPI_ERR_ARG, "newcomm pointer is NULL");
    if ((rc = members_of(call, group, &m, n, &owned)))
        return rc;
    const ep_gid_t *local = (*ep)->comm->gids + (*ep)->comm->group_off[(*ep)->side];
    int size = ep_local_size(*ep), me = ep_local_rank(*ep);
    if (!(*ranks = malloc(sizeof(int) * (size_t)(*n ? *n : 1))))
        rc = entry_raise(*ep, call, MPI_ERR_NO_MEM, "no memory for a group of %d", *n);
    *pos = MPI_UNDEFINED;
    for (int i = 0; i < *n && !rc; i++) {
        if (((*ranks)[i] = ep_gid_rank(local, size, m[i])) == MPI_UNDEFINED)
            rc = entry_raise(*ep, call, MPI_ERR_GROUP, "group member %d is not in the %s", i,
                             (*ep)->comm->inter ? "local group of the intercommunicator" : "communicator");
        if ((*ranks)[i] == me)
            *pos = i;
    }
    release(m, owned);
    return rc;
}

/* MPI_Comm_create: collective over comm; the members of group get a new
 * communicator with ranks in group order.  That is a split keyed by the
 * group rank, coloured by the group's first member: on an
 * intracommunicator the ranks may pass different, disjoint groups
 * (MPI-4.0 7.4.2), each of which becomes a communicator.  On an
 * intercommunicator each side passes a subgroup of its own group, and the
 * result joins the two (one colour). */
ENTRY_API int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_create";
    ep_endpoint_t *ep;
    int *ranks, n, pos, rc;
    if (!entry_comm_is_ep(comm) && !ep_group_handle_is_ep(group))
        return PMPI_Comm_create(comm, group, newcomm);
    if (!(rc = group_ranks(call, comm, 0, group, newcomm, &ep, &ranks, &n, &pos))) {
        int color = pos == MPI_UNDEFINED ? MPI_UNDEFINED : ep->comm->inter ? 0 : ranks[0];
        ep_status_t st = ep_comm_split(ep, color, pos, newcomm);
        if (st)
            rc = entry_raise_status(ep, call, st, NULL);
    }
    free(ranks);
    return rc;
}

/* MPI_Comm_create_group: collective over the members of group only; the
 * new ranks follow the group's order.  An empty group gives MPI_COMM_NULL. */
ENTRY_API int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_create_group";
    ep_endpoint_t *ep;
    int *ranks, n, pos, rc;
    if (!entry_comm_is_ep(comm) && !ep_group_handle_is_ep(group))
        return PMPI_Comm_create_group(comm, group, tag, newcomm);
    rc = group_ranks(call, comm, 1, group, newcomm, &ep, &ranks, &n, &pos);
    if (!rc && (tag < 0 || tag > ep_tag_ub))
        rc = entry_raise(ep, call, MPI_ERR_TAG, "invalid tag %d (must be between 0 and MPI_TAG_UB)", tag);
    else if (!rc && n == 0)
        *newcomm = MPI_COMM_NULL;
    else if (!rc && pos == MPI_UNDEFINED)
        rc = entry_raise(ep, call, MPI_ERR_GROUP, "the calling rank %d is not in the group", ep->rank);
    else if (!rc) {
        ep_status_t st = ep_comm_create_group(ep, ranks, n, tag, newcomm);
        if (st)
            rc = entry_raise_status(ep, call, st, NULL);
    }
    free(ranks);
    return rc;
}

#if EP_HAVE_MPI_Comm_create_from_group /* MPI 4.0 (not in Open MPI 4.1) */
/* ---- MPI-4's constructors from groups alone ----------------------------------
 * Their errors go to the error handler the call passes (MPI-4.0 7.4.2),
 * having no communicator; the caller is the member that made the group
 * (ep_group_t.me), as for MPI_Group_rank. */

/* An error of call on the handler it was given (no communicator yet). */
#define raise_no_comm(eh, call, cls, ...) entry_raise_on(eh, (intptr_t)MPI_COMM_NULL, call, cls, __VA_ARGS__)

/* The arguments both calls share, checked before anything collective;
 * raises on errhandler. */
static int from_group_args(const char *call, const char *stringtag, MPI_Errhandler errhandler, const MPI_Comm *newcomm)
{
    if (errhandler == MPI_ERRHANDLER_NULL)
        return entry_raise(NULL, call, MPI_ERR_ARG, "errhandler is MPI_ERRHANDLER_NULL");
    if (!newcomm)
        return raise_no_comm(errhandler, call, MPI_ERR_ARG, "the new communicator's pointer is NULL");
    if (!stringtag)
        return raise_no_comm(errhandler, call, MPI_ERR_ARG, "stringtag is NULL");
    if (strnlen(stringtag, MPI_MAX_STRINGTAG_LEN + 1) > MPI_MAX_STRINGTAG_LEN)
        return raise_no_comm(errhandler, call, MPI_ERR_ARG,
                             "stringtag is longer than MPI_MAX_STRINGTAG_LEN (%d) characters", MPI_MAX_STRINGTAG_LEN);
    return MPI_SUCCESS;
}

/* The new communicator's hints: a copy of info (MPI_INFO_NULL for none),
 * made last before the engine runs, which from_group_done takes. */
static int hints_of(const char *call, MPI_Info info, MPI_Errhandler errhandler, MPI_Info *hints)
{
    *hints = MPI_INFO_NULL;
    if (info != MPI_INFO_NULL && entry_comm_hints(info, hints) != MPI_SUCCESS) {
        *hints = MPI_INFO_NULL;
        return raise_no_comm(errhandler, call, MPI_ERR_INFO, "invalid info " EP_HFMT, EP_HARG(info));
    }
    return MPI_SUCCESS;
}

/* The end of both calls: the new communicator gets the hints, or the
 * error is raised (what: the group *bad belongs to). */
static int from_group_done(const char *call, ep_status_t st, const char *what, int bad, MPI_Info hints,
                           MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    if (!st) {
        ep_endpoint_set_info(ep_endpoint_get(*newcomm), hints);
        return MPI_SUCCESS;
    }
    if (hints != MPI_INFO_NULL)
        PMPI_Info_free(&hints);
    if (st == EP_ERR_GROUP && bad >= 0)
        return raise_no_comm(errhandler, call, MPI_ERR_GROUP,
                             "member %d of the %s is an endpoint of no communicator of this process (its "
                             "communicators were freed?)",
                             bad, what);
    return raise_no_comm(errhandler, call, ep_status_class(st), "%s", ep_status_take_text(st));
}

/* Endpoint group h (*g) and the caller's rank in it, or a raised error. */
static int caller_in(const char *call, MPI_Group h, const char *what, MPI_Errhandler errhandler, ep_group_t **g,
                     int *pos)
{
    if (!(*g = ep_group_get(h)))
        return raise_no_comm(errhandler, call, MPI_ERR_GROUP, "invalid %s " EP_HFMT, what, EP_HARG(h));
    if ((*pos = ep_gid_rank((*g)->members, (*g)->size, (*g)->me)) == MPI_UNDEFINED)
        return raise_no_comm(errhandler, call, MPI_ERR_GROUP,
                             "the calling endpoint is not in the %s (a group names its caller by the "
                             "communicator it came from)",
                             what);
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                         MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_create_from_group";
    if (!ep_group_handle_is_ep(group))
        return PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm);
    ep_group_t *g;
    MPI_Info hints;
    int rc, pos, bad;
    if ((rc = from_group_args(call, stringtag, errhandler, newcomm)) ||
        (rc = caller_in(call, group, "group", errhandler, &g, &pos)) || (rc = hints_of(call, info, errhandler, &hints)))
        return rc;
    ep_status_t st = ep_comm_create_from_group(g->members, g->size, pos, stringtag, errhandler, newcomm, &bad);
    return from_group_done(call, st, "group", bad, hints, errhandler, newcomm);
}

ENTRY_API int MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                               int remote_leader, const char *stringtag, MPI_Info info,
                                               MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    static const char call[] = "MPI_Intercomm_create_from_groups";
    if (!ep_group_handle_is_ep(local_group) && !ep_group_handle_is_ep(remote_group))
        return PMPI_Intercomm_create_from_groups(local_group, local_leader, remote_group, remote_leader, stringtag,
                                                 info, errhandler, newintercomm);
    ep_group_t *lg;
    MPI_Info hints;
    int rc, pos, bad, bad_remote, nr, owned;
    const ep_gid_t *rm;
    if ((rc = from_group_args(call, stringtag, errhandler, newintercomm)))
        return rc;
    if (!ep_group_handle_is_ep(local_group))
        return raise_no_comm(errhandler, call, MPI_ERR_GROUP,
                             "the local group is classic but the remote group has endpoints: make the local group "
                             "from an endpoint communicator too");
    if ((rc = caller_in(call, local_group, "local group", errhandler, &lg, &pos)))
        return rc;
    if (ep_group_members(remote_group, &rm, &nr, &owned))
        return raise_no_comm(errhandler, call, MPI_ERR_GROUP, "invalid remote group " EP_HFMT, EP_HARG(remote_group));
    if (local_leader < 0 || local_leader >= lg->size)
        rc = raise_no_comm(errhandler, call, MPI_ERR_RANK,
                           "invalid local leader %d (the local group has ranks 0 to %d)", local_leader, lg->size - 1);
    else if (nr == 0 || remote_leader < 0 || remote_leader >= nr)
        rc = raise_no_comm(errhandler, call, MPI_ERR_RANK, "invalid remote leader %d (the remote group has %d members)",
                           remote_leader, nr);
    for (int i = 0; !rc && i < nr; i++)
        if (ep_gid_rank(lg->members, lg->size, rm[i]) != MPI_UNDEFINED)
            rc = raise_no_comm(errhandler, call, MPI_ERR_GROUP,
                               "member %d of the remote group is in the local group too (they must be disjoint)", i);
    if (!rc && !(rc = hints_of(call, info, errhandler, &hints))) {
        ep_status_t st = ep_intercomm_from_groups(lg->members, lg->size, pos, rm, nr, stringtag, errhandler,
                                                  newintercomm, &bad, &bad_remote);
        rc = from_group_done(call, st, bad_remote ? "remote group" : "local group", bad, hints, errhandler,
                             newintercomm);
    }
    release(rm, owned);
    return rc;
}

#endif

/* The entry points whose dispatch is data (maint/dispatch.txt). */
#include "group.entry.gen.inc"
