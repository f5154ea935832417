/* The engine's start-up and shutdown: everything MPI_Init and MPI_Finalize
 * do besides raising errors, in one place and in order. */
#ifndef EP_ENGINE_H
#define EP_ENGINE_H

#include <mpi.h>

/* Largest tag, on endpoint communicators as on classic ones: MPICH's
 * MPI_TAG_UB, read at start-up (32767, the least MPI allows, before).
 * Communicators with one endpoint per process hand the user's tag to
 * MPICH (direct.h), and MPI_TAG_UB is a property of the job, the same on
 * every communicator. */
extern int ep_tag_ub;

/* Starts MPICH (always MPI_THREAD_MULTIPLE: endpoints are driven by
 * threads whatever the program asked for), then the transports, the
 * diagnostics and, with EPMPI_ENDPOINTS, world mode.  There the
 * application never sees classic MPI_COMM_WORLD, yet MPICH raises on it
 * the errors that belong to no object and those of completed requests:
 * they go to raise_world(code) (the entry layer's, which knows the
 * calling thread's handler), except those of direct requests, which the
 * engine raises on their endpoint itself (direct.h).  Returns
 * PMPI_Init_thread's code; a failure after it stops the job with a
 * message naming call. */
int ep_engine_init(const char *call, int *argc, char ***argv, int (*raise_world)(int code));

/* Ends the engine, then MPICH.  World mode's attribute delete callbacks
 * run first; if one fails, delete_failed(index of its endpoint in
 * ep_world.ep, its code) is called while the endpoints still exist, and
 * its result is returned.  Otherwise returns PMPI_Finalize's code. */
int ep_engine_finalize(int (*delete_failed)(int failed, int code));

#endif
