/* Attributes on endpoint communicators.
 *
 * Keyvals are made by MPICH (MPI_Comm_create_keyval passes through, so the
 * same keyval works on classic communicators too); epmpi records each
 * keyval's copy and delete callbacks, and keeps the attribute values of an
 * endpoint in a small list on the endpoint, in the order they were set.
 * The callbacks receive the endpoint's own handle. */
#ifndef EP_ATTR_H
#define EP_ATTR_H

#include "comm.h"

void ep_keyval_record(int keyval, MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                      void *extra);
/* MPI_Finalize: forgets every keyval. */
void ep_keyval_finalize(void);
/* 1 when keyval was made through MPI_Comm_create_keyval (or MPI_Keyval_create). */
int ep_keyval_known(int keyval);

/* Sets (replacing, with the delete callback on the old value) or gets. */
int ep_attr_set(ep_endpoint_t *ep, int keyval, void *val);
int ep_attr_get(ep_endpoint_t *ep, int keyval, void **val, int *flag);
/* Deletes one attribute through its delete callback; MPI_SUCCESS or the
 * callback's error code (the attribute stays then). */
int ep_attr_delete(ep_endpoint_t *ep, int keyval);
/* MPI_Comm_dup: copies ep's attributes to dup through the copy callbacks. */
int ep_attr_copy(ep_endpoint_t *ep, ep_endpoint_t *dup);
/* MPI_Comm_free: deletes every attribute, last set first. */
int ep_attr_delete_all(ep_endpoint_t *ep);
/* Frees the list without callbacks (endpoints left at MPI_Finalize). */
void ep_attr_discard(ep_endpoint_t *ep);

#endif
