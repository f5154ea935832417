#include "core/world.h"

#include "core/attr.h"
#include "base/wait.h"
#include "base/thread.h"

#include <stdlib.h>

ep_world_t ep_world;

/* Exchanges which endpoints threads as and t speak for (as < 0: none). */
static void swap_endpoints(int as, int t)
{
    for (int self = 0; as >= 0 && self < 2; self++) {
        ep_endpoint_t **e = ep_world.ep + self * ep_world.nep;
        ep_endpoint_t *x = e[as];
        e[as] = e[t];
        e[t] = x;
    }
}

/* MPI has MPI_Finalize free MPI_COMM_SELF first, so that libraries can
 * hang clean-up on it ("Allowing User Functions at MPI Finalization");
 * MPICH then frees MPI_COMM_WORLD's attributes too.  Each endpoint is an
 * MPI process: while its callbacks run, the calling thread speaks for it
 * (the world table's entries swapped, so that no MPI call pays for this),
 * and MPI_COMM_SELF and MPI_COMM_WORLD in a callback are the endpoint's
 * own.  No other thread may call MPI meanwhile: MPI_Finalize is the last
 * call.  A failed callback leaves its object's other attributes to be
 * discarded silently by ep_world_finalize. */
int ep_world_delete_attrs(int *failed)
{
    int first = MPI_SUCCESS, me = ep_thread_index_peek(), as = me < ep_world.nep ? me : -1;
    for (int self = 1; self >= 0; self--)
        for (int t = 0; t < ep_world.nep; t++) {
            int i = self * ep_world.nep + t;
            ep_endpoint_t *e = ep_world.ep[i];
            swap_endpoints(as, t);
            int rc = ep_attr_delete_all(ep_attr_of(e));
            swap_endpoints(as, t);
            if (first == MPI_SUCCESS && rc != MPI_SUCCESS) {
                first = rc;
                *failed = i;
            }
        }
    return first;
}

void ep_world_finalize(void)
{
    ep_thread_world(0, 0);
    for (int t = 0; t < ep_world.nep; t++) {
        ep_endpoint_t *ep;
        if ((ep = ep_endpoint_get(ep_world.comm[t])))
            ep_endpoint_free(ep);
        if ((ep = ep_endpoint_get(ep_world.self[t])))
            ep_endpoint_free(ep);
    }
    free(ep_world.comm);
    free(ep_world.self);
    free(ep_world.ep);
    ep_world = (ep_world_t){0, NULL, NULL, NULL};
}
