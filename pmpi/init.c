/* MPI_Init / MPI_Init_thread / MPI_Finalize / MPI_Abort: the engine comes
 * up and goes down in src/engine.c; here are only the errors it raises
 * through the program's handlers. */
#include "engine.h"
#include "entry.h"

/* In world mode, the errors MPICH raises on classic MPI_COMM_WORLD go to
 * the calling thread's MPI_COMM_WORLD handler, as the application set it,
 * like epmpi's own errors tied to no communicator (src/engine.h). */

ENTRY_API int MPI_Init(int *argc, char ***argv) { return ep_engine_init("MPI_Init", argc, argv, entry_raise_world); }

ENTRY_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)required;
    int rc = ep_engine_init("MPI_Init_thread", argc, argv, entry_raise_world);
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
 * communicator; its caller does not go on, although MPICH 4.2 may return
 * from PMPI_Abort (seen with 4.2.1, plain as well, with more than one
 * process): see ep_abort_job. */
ENTRY_API int MPI_Abort(MPI_Comm comm, int errorcode)
{
    if (!entry_comm_is_ep(comm))
        return PMPI_Abort(comm, errorcode);
    ep_abort_job(errorcode);
}
