/* Attributes on endpoint communicators and endpoint windows.
 *
 * Keyvals are made by MPICH (MPI_Comm_create_keyval and
 * MPI_Win_create_keyval pass through, so the same keyval works on classic
 * objects too); epmpi records each keyval's kind and its copy and delete
 * callbacks, and keeps an object's attribute values in a small list, in the
 * order they were set.  The callbacks receive the object's own handle.
 * (MPICH's handles are ints, so MPI_Win_delete_attr_function is
 * MPI_Comm_delete_attr_function.) */
#ifndef EP_ATTR_H
#define EP_ATTR_H

#include "core/comm.h"

typedef enum { EP_KEYVAL_COMM, EP_KEYVAL_WIN } ep_keyval_kind_t;

/* What attributes hang on: an endpoint communicator's rank (ep_attr_of), or
 * a window's rank (ep_win_attrs, win.h). */
typedef struct ep_attr_host {
    void **list;           /* the attribute list */
    pthread_mutex_t *lock; /* guards *list */
    intptr_t handle;       /* what the callbacks receive (MPI_Comm or MPI_Win) */
} ep_attr_host_t;

static inline ep_attr_host_t ep_attr_of(ep_endpoint_t *ep)
{
    return (ep_attr_host_t){&ep->attrs, &ep->attr_lock, (intptr_t)ep->user_handle};
}

/* copy is NULL for windows (never duplicated) and for MPI_COMM_NULL_COPY_FN.
 * With owns_extra, the table frees extra when the entry goes (MPI_Finalize,
 * or MPICH handing the keyval number out again). */
void ep_keyval_record(int keyval, ep_keyval_kind_t kind, MPI_Comm_copy_attr_function *copy,
                      MPI_Comm_delete_attr_function *del, void *extra, int owns_extra);
/* 1 when keyval was made through the create call of its kind
 * (MPI_Comm_create_keyval or MPI_Keyval_create; MPI_Win_create_keyval). */
int ep_keyval_known(int keyval, ep_keyval_kind_t kind);
/* MPI_Comm_free_keyval / MPI_Win_free_keyval (kind): MPICH's free at once
 * when no attribute of epmpi's holds *keyval, else when the last one goes
 * (a second free meanwhile does nothing, as in MPICH); *keyval becomes
 * MPI_KEYVAL_INVALID.  An MPI error code (MPICH's). */
int ep_keyval_free(int *keyval, ep_keyval_kind_t kind);
/* MPI_Finalize: forgets every keyval. */
void ep_keyval_finalize(void);

/* Sets (replacing, with the delete callback on the old value) or gets. */
int ep_attr_set(ep_attr_host_t h, int keyval, void *val);
int ep_attr_get(ep_attr_host_t h, int keyval, void **val, int *flag);
/* Deletes one attribute through its delete callback; MPI_SUCCESS,
 * MPI_ERR_KEYVAL when it is not set, or the callback's error code (the
 * attribute stays then). */
int ep_attr_delete(ep_attr_host_t h, int keyval);
/* MPI_Comm_dup: copies from's attributes to dup through the copy callbacks. */
int ep_attr_copy(ep_attr_host_t from, ep_attr_host_t dup);
/* MPI_Comm_free, MPI_Win_free: deletes every attribute, last set first. */
int ep_attr_delete_all(ep_attr_host_t h);
/* Frees the list without callbacks (objects left at MPI_Finalize). */
void ep_attr_discard(ep_attr_host_t h);

#endif
