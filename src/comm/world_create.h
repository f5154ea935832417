/* World mode's communicators (core/world.h): MPI_COMM_WORLD of nep
 * endpoints per process and an MPI_COMM_SELF for each endpoint. */
#ifndef EP_WORLD_CREATE_H
#define EP_WORLD_CREATE_H

#include "base/error.h"

/* Builds them and fills ep_world; called after PMPI_Init_thread
 * (collective over MPI_COMM_WORLD). */
ep_status_t ep_world_init(int nep);

#endif
