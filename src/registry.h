/* The registry: the table behind every handle epmpi mints.
 *
 * Layout: a fixed directory of EP_REG_CHUNKS pointers to chunks of
 * EP_REG_CHUNK slots, allocated on demand and never moved, so a lookup reads
 * two pointers and needs no lock.  A slot holds the object pointer and the
 * full handle currently minted for it; freeing a slot bumps its generation
 * (handle bits 25-20), so a stale handle no longer equals the slot's handle
 * and fails validation.  Free slots form a FIFO list threaded through
 * next_free, so a slot is reused only after every other free slot: a stale
 * handle could alias a live one only after 64 generations of that slot.
 * Allocation and freeing take the registry mutex; recycling a reserved
 * slot (below) does not.  Index 0 is
 * never used, so no minted handle equals an MPI_*_NULL constant.
 */
#ifndef EP_REGISTRY_H
#define EP_REGISTRY_H

#include "handle.h"

/* Every registered object starts with this header, so a handle of the right
 * type bits but the wrong object (a request passed as a message) is caught. */
typedef enum { EP_OBJ_ENDPOINT = 1, EP_OBJ_REQUEST, EP_OBJ_MESSAGE, EP_OBJ_GROUP, EP_OBJ_THREADCOMM, EP_OBJ_WIN } ep_obj_kind_t;

typedef struct ep_object {
    ep_obj_kind_t kind;
} ep_object_t;

/* Mints a handle of MPICH type htype for obj; returns 0 when the table is full. */
int ep_registry_add(unsigned htype, ep_object_t *obj);

/* The object behind h if h is live and of kind `kind`, else NULL. */
ep_object_t *ep_registry_get(int h, ep_obj_kind_t kind);

/* Invalidates h (later lookups fail) and recycles its slot. */
void ep_registry_remove(int h);

/* Recycling without the registry lock, for objects made and freed at a high
 * rate (requests): ep_registry_retire invalidates h like ep_registry_remove
 * but keeps its slot reserved for the caller and returns the slot's index;
 * ep_registry_reissue mints a fresh handle (next generation) on a reserved
 * slot; ep_registry_release gives a reserved slot back to the free list.
 * A reserved slot belongs to one thread, so none of these need the lock. */
unsigned ep_registry_retire(int h);
int ep_registry_reissue(unsigned idx, unsigned htype, ep_object_t *obj);
void ep_registry_release(unsigned idx);

/* Calls fn on every live object of kind `kind`, under the registry lock
 * (fn must not add or remove handles).  For reports at MPI_Finalize. */
void ep_registry_each(ep_obj_kind_t kind, void (*fn)(ep_object_t *obj, void *arg), void *arg);

/* Number of live handles (for leak checks). */
int ep_registry_live(void);

#endif
