/* Communicator constructors on top of ep_comm_build. */
#ifndef EP_COMM_CREATE_H
#define EP_COMM_CREATE_H

#include "comm.h"

/* MPI_Comm_create_endpoints over a classic (PMPI) parent: one call per process. */
ep_status_t ep_comm_create_endpoints_classic(MPI_Comm parent, int n, MPI_Comm out[]);
/* MPI_Comm_create_endpoints over an endpoint parent: one call per parent endpoint. */
ep_status_t ep_comm_create_endpoints_ep(ep_endpoint_t *parent, int n, MPI_Comm out[]);
/* MPI_Comm_dup of an endpoint: same group, new context, same error handler. */
ep_status_t ep_comm_dup(ep_endpoint_t *ep, MPI_Comm *out);

/* MPI_Comm_split of an endpoint communicator (color MPI_UNDEFINED: *out is
 * MPI_COMM_NULL).  Several colours may live in one process. */
ep_status_t ep_comm_split(ep_endpoint_t *parent, int color, int key, MPI_Comm *out);

#endif
