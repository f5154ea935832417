/* Communicator constructors on top of ep_comm_build. */
#ifndef EP_COMM_CREATE_H
#define EP_COMM_CREATE_H

#include "coll/coll.h"
#include "core/comm.h"

/* MPI_Comm_create_endpoints over a classic (PMPI) parent: one call per
 * process; plain as for ep_comm_build. */
ep_status_t ep_comm_create_endpoints_classic(MPI_Comm parent, int plain, int n, MPI_Comm out[]);
/* MPI_Comm_create_endpoints over an endpoint parent: one call per parent endpoint. */
ep_status_t ep_comm_create_endpoints_ep(ep_endpoint_t *parent, int n, MPI_Comm out[]);
/* MPI_Comm_dup / MPI_Comm_idup of an endpoint, as collective arguments
 * for ep_coll_run / ep_coll_start: same group, new context, the same error
 * handler, attributes through their copy callbacks; info (owned by the new
 * communicator: pass a copy) or MPI_INFO_NULL.  *out gets the new handle on
 * completion. */
void ep_comm_dup_args(ep_coll_args_t *a, ep_endpoint_t *ep, MPI_Info info, MPI_Comm *out);
/* The same for epmpi's own use: the duplicate keeps the topology but
 * takes none of the attributes, whose copy callbacks are the program's. */
void ep_comm_dup_private_args(ep_coll_args_t *a, ep_endpoint_t *ep, MPI_Comm *out);
/* A persistent collective (MPI_Bcast_init, ...): its private duplicate of
 * ep's communicator, made collectively whatever else fails, then the
 * request (ep_coll_persistent_make, coll.h), which owns s (NULL: out of
 * memory; s is freed on failure). */
ep_status_t ep_persistent_init(ep_endpoint_t *ep, ep_coll_seq_t *s, ep_request_t **out);

/* MPI_Comm_split of an endpoint communicator (color MPI_UNDEFINED: *out is
 * MPI_COMM_NULL).  Several colours may live in one process.  On an
 * intercommunicator each colour's members of the two groups form a new
 * intercommunicator (MPI_COMM_NULL when one group has none). */
ep_status_t ep_comm_split(ep_endpoint_t *parent, int color, int key, MPI_Comm *out);
/* MPI_Comm_split_type: as MPI_Comm_split, each endpoint going where MPICH
 * puts its process for that type and info (MPI_COMM_TYPE_SHARED, _HW_GUIDED,
 * _HW_UNGUIDED, MPICH's own types; MPI_UNDEFINED: *out is MPI_COMM_NULL). */
ep_status_t ep_comm_split_type(ep_endpoint_t *parent, int type, int key, MPI_Info info, MPI_Comm *out);
/* The same, but the groups of an intercommunicator merge into one
 * intracommunicator ordered by key, then rank in the union. */
ep_status_t ep_comm_split_merged(ep_endpoint_t *parent, int color, int key, MPI_Comm *out);

/* MPI_Comm_create_group, called by each member: prank[n] lists the
 * members' ranks in ep's (intra)communicator in group order, ep among
 * them; the new ranks follow that order.  Concurrent calls are told apart
 * by tag and member list. */
ep_status_t ep_comm_create_group(ep_endpoint_t *ep, const int *prank, int n, int tag, MPI_Comm *out);

/* MPI_Comm_create_from_group, called by each member: m[n] the members in
 * group order, the caller m[pos]; eh the new handles' error handler.
 * Concurrent calls are told apart by stringtag and member list.  *bad
 * names a member no communicator of this process knows (EP_ERR_GROUP). */
ep_status_t ep_comm_create_from_group(const ep_gid_t *m, int n, int pos, const char *stringtag, MPI_Errhandler eh,
                                      MPI_Comm *out, int *bad);
/* A name for a string tag that every process computes alike. */
uint64_t ep_stringtag_hash(const char *s);

/* What each endpoint brings to a meeting (meet.h) that builds a
 * communicator, and gets back. */
typedef struct ep_member_record {
    uint64_t key; /* ranks follow ascending keys */
    ep_gid_t gid;
    MPI_Errhandler eh;
    MPI_Comm out; /* the new handle */
} ep_member_record_t;

/* Run by the meeting's driver: builds the communicator of the n members of
 * this process (records: ep_member_record_t *) and those of the processes
 * procs[np] (ranks in base, ascending, this one included), over a
 * process-level communicator made by PMPI_Comm_create_group(base, tag). */
ep_status_t ep_comm_build_members(MPI_Comm base, const int *procs, int np, int tag, void *const *records, int n,
                                  ep_comm_t **out);

/* Sorts v[n] and removes duplicates; returns the new length. */
int ep_sort_unique(int *v, int n);

#endif
