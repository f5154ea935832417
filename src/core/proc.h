/* This process's place in the job: its rank in MPI_COMM_WORLD and their
 * number, its node (the processes that can share memory with it), whether
 * the node has a core for every endpoint, and the PMPI communicator from
 * which communicators over subsets of the processes are made.  What it
 * keeps grows with the node, not with the job.  Set by ep_proc_init (collective over
 * MPI_COMM_WORLD) before any endpoint exists, read-only afterwards, so
 * every layer may read them without a lock. */
#ifndef EP_PROC_H
#define EP_PROC_H

#include "base/error.h"

#include <mpi.h>
#include <stddef.h>

ep_status_t ep_proc_init(void);
void ep_proc_finalize(void);

int ep_proc_world_rank(void);
int ep_proc_world_size(void);
/* Names this process's node: the smallest world rank on it. */
int ep_proc_node_id(void);
/* The node's processes, numbered 0 .. size - 1 in world order: this
 * process's number, and the number of world rank p (-1 when p is on
 * another node). */
int ep_proc_node_size(void);
int ep_proc_node_self(void);
int ep_proc_node_index(int p);
/* The name of the POSIX shared memory that node process i offers the
 * others (shm_open), unique on the machine while it runs. */
void ep_proc_node_shm_name(int i, char *buf, size_t len);
/* Removes such names left by processes of this pid namespace that are
 * gone (a job killed before its processes removed them). */
void ep_proc_node_shm_sweep(void);
/* 1 when a process of this job runs on this machine in another network
 * namespace (containers, simulated hosts). */
int ep_proc_spans_namespaces(void);

/* 1 when the endpoints of all processes on this node (world mode; else
 * one per process) are no more than the CPUs this process may run on.
 * Read inline on every direct receive (direct.h). */
extern int ep_proc_cores_enough_v;
static inline int ep_proc_cores_enough(void) { return ep_proc_cores_enough_v; }

/* A duplicate of MPI_COMM_WORLD for PMPI_Comm_create_group and the lock
 * window.  The MPI transport sends its messages on it too (net.c): only
 * its point-to-point context carries traffic, so its collective context
 * is free for those. */
MPI_Comm ep_proc_group_comm(void);

#endif
