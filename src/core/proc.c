/* This process's place in the job (proc.h). */
#define _GNU_SOURCE /* sched_getaffinity */
#include "core/proc.h"

#include "base/settings.h"
#include "base/wait.h"

#include <sched.h>

static int world_rank, world_size;
static int node_id; /* smallest world rank on this process's node */
static MPI_Comm group_comm = MPI_COMM_NULL;
int ep_proc_cores_enough_v;

int ep_proc_world_rank(void) { return world_rank; }
int ep_proc_world_size(void) { return world_size; }
int ep_proc_node_id(void) { return node_id; }
MPI_Comm ep_proc_group_comm(void) { return group_comm; }

ep_status_t ep_proc_init(void)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &group_comm) != MPI_SUCCESS)
        return EP_ERR_INTERN;
    PMPI_Comm_set_errhandler(group_comm, MPI_ERRORS_RETURN);
    MPI_Comm node;
    node_id = world_rank;
    int mine = ep_config.endpoints > 0 ? ep_config.endpoints : 1, threads = 0;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        PMPI_Allreduce(&world_rank, &node_id, 1, MPI_INT, MPI_MIN, node);
        PMPI_Allreduce(&mine, &threads, 1, MPI_INT, MPI_SUM, node);
        PMPI_Comm_free(&node);
    }
    cpu_set_t cpus;
    ep_proc_cores_enough_v = threads > 0 && !sched_getaffinity(0, sizeof cpus, &cpus) && threads <= CPU_COUNT(&cpus);
    ep_wait_crowded = threads > 0 && !ep_proc_cores_enough_v;
    return EP_OK;
}

void ep_proc_finalize(void)
{
    if (group_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&group_comm);
}
