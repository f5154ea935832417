/* This process's place in the job: its rank in MPI_COMM_WORLD and their
 * number, its node, whether the node has a core for every endpoint, and
 * the PMPI communicator from which communicators over subsets of the
 * processes are made.  Set by ep_proc_init (collective over
 * MPI_COMM_WORLD) before any endpoint exists, read-only afterwards, so
 * every layer may read them without a lock. */
#ifndef EP_PROC_H
#define EP_PROC_H

#include "base/error.h"

#include <mpi.h>

ep_status_t ep_proc_init(void);
void ep_proc_finalize(void);

int ep_proc_world_rank(void);
int ep_proc_world_size(void);
/* Names this process's node: the smallest world rank on it. */
int ep_proc_node_id(void);

/* 1 when the endpoints of all processes on this node (world mode; else
 * one per process) are no more than the CPUs this process may run on.
 * Read inline on every direct receive (direct.h). */
extern int ep_proc_cores_enough_v;
static inline int ep_proc_cores_enough(void) { return ep_proc_cores_enough_v; }

/* A duplicate of MPI_COMM_WORLD for PMPI_Comm_create_group.  The MPI
 * transport sends its headers on it too (net.c): only its point-to-point
 * context carries traffic, so its collective context is free for that. */
MPI_Comm ep_proc_group_comm(void);

#endif
