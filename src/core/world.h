/* World mode (EPMPI_ENDPOINTS=T): MPI_COMM_WORLD and MPI_COMM_SELF stand for
 * the calling thread's endpoint.  Set up by MPI_Init, torn down by
 * MPI_Finalize, read-only in between. */
#ifndef EP_WORLD_H
#define EP_WORLD_H

#include "core/comm.h"

typedef struct ep_world {
    int nep;            /* endpoints per process; 0 when world mode is off */
    MPI_Comm *comm;     /* [nep] handles of the world endpoint communicator */
    MPI_Comm *self;     /* [nep] handles of the one-rank self communicators */
    ep_endpoint_t **ep; /* [2 nep]: the endpoints of comm, then of self, which
                           every call on MPI_COMM_WORLD or MPI_COMM_SELF finds
                           here without a handle lookup */
} ep_world_t;

extern ep_world_t ep_world;

static inline int ep_world_mode(void) { return ep_world.nep != 0; }

/* ep_world is filled by ep_world_init (comm/world_create.h). */
void ep_world_finalize(void);
/* MPI_Finalize's first step: the attributes of every endpoint's
 * MPI_COMM_SELF, then of its MPI_COMM_WORLD, deleted through their delete
 * callbacks, last set first.  Returns the first callback's error, and in
 * *failed the index in ep_world.ep of the endpoint it came from. */
int ep_world_delete_attrs(int *failed);

#endif
