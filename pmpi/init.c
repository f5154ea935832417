/* MPI_Init / MPI_Init_thread / MPI_Finalize / MPI_Abort: the engine comes
 * up and goes down in src/engine.c; here are only the errors it raises
 * through the program's handlers. */
#include "direct.h"
#include "engine.h"
#include "entry.h"

/* In world mode the application never sees classic MPI_COMM_WORLD, yet
 * MPICH raises there the errors that belong to no object, and those of
 * completed requests.  They go to the calling thread's MPI_COMM_WORLD
 * handler, as the application set it, like epmpi's own errors tied to no
 * communicator; those of direct requests are raised by epmpi itself, on
 * their endpoint (src/direct.h). */
static void classic_world_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    if (!ep_direct_quiet)
        entry_raise_world(*code);
}

ENTRY_API int MPI_Init(int *argc, char ***argv) { return ep_engine_init("MPI_Init", argc, argv, classic_world_errors); }

ENTRY_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)required;
    int rc = ep_engine_init("MPI_Init_thread", argc, argv, classic_world_errors);
    if (rc == MPI_SUCCESS && provided)
        *provided = MPI_THREAD_MULTIPLE;
    return rc;
}

/* A world rank's attribute delete callback failed at MPI_Finalize: raised
 * on that endpoint's handler, as MPICH raises a process's; the other
 * endpoints' attributes were deleted all the same. */
static int delete_failed(int failed, int code)
{
    int t = failed % ep_world.nep;
    return entry_raise(ep_world.ep[failed], "MPI_Finalize", MPI_ERR_OTHER,
                       "a delete callback of an attribute of world rank %d's %s returned error %d (the other "
                       "attributes of that communicator are dropped without their callbacks)",
                       ep_world.ep[t]->rank, failed < ep_world.nep ? "MPI_COMM_WORLD" : "MPI_COMM_SELF", code);
}

ENTRY_API int MPI_Finalize(void) { return ep_engine_finalize(delete_failed); }

/* Aborting from an endpoint aborts the job, as MPICH does for any
 * communicator. */
ENTRY_API int MPI_Abort(MPI_Comm comm, int errorcode)
{
    if (entry_comm_is_ep(comm))
        comm = MPI_COMM_WORLD;
    return PMPI_Abort(comm, errorcode);
}
