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

#include "abi/handle.h"

#include <stdatomic.h>
#include <stddef.h>

/* Every registered object starts with this header, so a handle of the right
 * type bits but the wrong object (a request passed as a message) is caught. */
typedef enum {
    EP_OBJ_ENDPOINT = 1,
    EP_OBJ_REQUEST,
    EP_OBJ_MESSAGE,
    EP_OBJ_GROUP,
    EP_OBJ_THREADCOMM,
    EP_OBJ_WIN,
    EP_OBJ_FILE
} ep_obj_kind_t;

typedef struct ep_object {
    ep_obj_kind_t kind;
} ep_object_t;

/* The table, here so that the lookups below (at every message) are inline. */
#define EP_REG_CHUNK_BITS 12
#define EP_REG_CHUNK (1u << EP_REG_CHUNK_BITS)
#define EP_REG_CHUNKS ((EP_HANDLE_INDEX_MAX + 1) >> EP_REG_CHUNK_BITS)

/* One slot per cache line: neighbouring slots belong to requests of
 * different threads, which would otherwise invalidate each other's lines. */
typedef struct ep_reg_slot {
    _Alignas(64) _Atomic int handle; /* handle minted for obj, 0 while free */
    ep_object_t *_Atomic obj;        /* the object, NULL while free */
    unsigned gen;                    /* generation of the next handle (under lock, or
                                        by the owner of a reserved slot) */
    unsigned next_free;              /* free-list link (under lock) */
} ep_reg_slot_t;

extern ep_reg_slot_t *_Atomic ep_reg_chunks[EP_REG_CHUNKS];

static inline ep_reg_slot_t *ep_reg_slot_of(unsigned idx)
{
    ep_reg_slot_t *c = atomic_load_explicit(&ep_reg_chunks[idx >> EP_REG_CHUNK_BITS], memory_order_acquire);
    return c ? &c[idx & (EP_REG_CHUNK - 1)] : NULL;
}

/* Mints a handle of MPICH type htype for obj; returns 0 when the table is full. */
int ep_registry_add(unsigned htype, ep_object_t *obj);

/* The object behind h if h is live and of kind `kind`, else NULL. */
static inline ep_object_t *ep_registry_get(int h, ep_obj_kind_t kind)
{
    if (!ep_handle_is_ep(h))
        return NULL;
    ep_reg_slot_t *s = ep_reg_slot_of(ep_handle_index(h));
    if (!s || atomic_load_explicit(&s->handle, memory_order_acquire) != h)
        return NULL;
    ep_object_t *o = atomic_load_explicit(&s->obj, memory_order_acquire);
    /* Still h: the slot was not freed and minted again in between (the
     * generation in the handle tells the new occupant from the old; an
     * object is published with release order after its slot's handle was
     * cleared, so seeing the new object means seeing the handle change). */
    if (atomic_load_explicit(&s->handle, memory_order_relaxed) != h)
        return NULL;
    return (o && o->kind == kind) ? o : NULL;
}

/* Invalidates h (later lookups fail) and recycles its slot. */
void ep_registry_remove(int h);

/* Recycling without the registry lock, for objects made and freed at a high
 * rate (requests): ep_registry_retire invalidates h like ep_registry_remove
 * but keeps its slot reserved for the caller and returns the slot's index;
 * ep_registry_reissue mints a fresh handle (next generation) on a reserved
 * slot; ep_registry_release gives a reserved slot back to the free list.
 * A reserved slot belongs to one thread, so none of these need the lock. */
static inline unsigned ep_registry_retire(int h)
{
    ep_reg_slot_t *s = ep_handle_is_ep(h) ? ep_reg_slot_of(ep_handle_index(h)) : NULL;
    if (!s || atomic_load_explicit(&s->handle, memory_order_relaxed) != h)
        return 0;
    atomic_store_explicit(&s->handle, 0, memory_order_release);
    atomic_store_explicit(&s->obj, NULL, memory_order_relaxed);
    s->gen = (s->gen + 1) & EP_HANDLE_GEN_MASK;
    return ep_handle_index(h);
}

static inline int ep_registry_reissue(unsigned idx, unsigned htype, ep_object_t *obj)
{
    ep_reg_slot_t *s = ep_reg_slot_of(idx);
    int h = ep_handle_make(htype, s->gen, idx);
    atomic_store_explicit(&s->obj, obj, memory_order_release);
    atomic_store_explicit(&s->handle, h, memory_order_release);
    return h;
}

void ep_registry_release(unsigned idx);

/* Calls fn on every live object of kind `kind`, under the registry lock
 * (fn must not add or remove handles).  For reports at MPI_Finalize. */
void ep_registry_each(ep_obj_kind_t kind, void (*fn)(ep_object_t *obj, void *arg), void *arg);

/* Number of live handles (for leak checks). */
int ep_registry_live(void);

/* MPI_Finalize: frees the table if no handle is live (handles the program
 * never freed keep it, and their objects stay reachable). */
void ep_registry_finalize(void);

#endif
