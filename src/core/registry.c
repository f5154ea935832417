#include "core/registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

ep_reg_slot_t *_Atomic ep_reg_chunks[EP_REG_CHUNKS];
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER; /* guards free list, chunk creation */
static unsigned free_head, free_tail;                        /* FIFO of free slots, 0 = empty */
static unsigned next_unused = 1;                             /* first never-used index */

int ep_registry_add(unsigned htype, ep_object_t *obj)
{
    int h = 0;
    unsigned idx;
    ep_reg_slot_t *s;

    pthread_mutex_lock(&reg_lock);
    if (free_head) {
        idx = free_head;
        s = ep_reg_slot_of(idx);
        free_head = s->next_free;
        if (!free_head)
            free_tail = 0;
    } else {
        if (next_unused > EP_HANDLE_INDEX_MAX)
            goto out;
        idx = next_unused;
        if (!ep_reg_chunks[idx >> EP_REG_CHUNK_BITS]) {
            ep_reg_slot_t *c = aligned_alloc(_Alignof(ep_reg_slot_t), EP_REG_CHUNK * sizeof *c);
            if (!c)
                goto out;
            memset(c, 0, EP_REG_CHUNK * sizeof *c);
            atomic_store_explicit(&ep_reg_chunks[idx >> EP_REG_CHUNK_BITS], c, memory_order_release);
        }
        next_unused++;
        s = ep_reg_slot_of(idx);
    }
    h = ep_handle_make(htype, s->gen, idx);
    atomic_store_explicit(&s->obj, obj, memory_order_release);
    atomic_store_explicit(&s->handle, h, memory_order_release);
out:
    pthread_mutex_unlock(&reg_lock);
    return h;
}

/* Appends reserved slot idx to the free FIFO.  Called with reg_lock held. */
static void free_append(unsigned idx)
{
    ep_reg_slot_of(idx)->next_free = 0;
    if (free_tail)
        ep_reg_slot_of(free_tail)->next_free = idx;
    else
        free_head = idx;
    free_tail = idx;
}

void ep_registry_release(unsigned idx)
{
    pthread_mutex_lock(&reg_lock);
    free_append(idx);
    pthread_mutex_unlock(&reg_lock);
}

void ep_registry_remove(int h)
{
    /* The lock also orders two threads freeing one handle: one wins. */
    pthread_mutex_lock(&reg_lock);
    unsigned idx = ep_registry_retire(h);
    if (idx)
        free_append(idx);
    pthread_mutex_unlock(&reg_lock);
}

void ep_registry_each(ep_obj_kind_t kind, void (*fn)(ep_object_t *obj, void *arg), void *arg)
{
    pthread_mutex_lock(&reg_lock);
    for (unsigned idx = 1; idx < next_unused; idx++) {
        ep_reg_slot_t *s = ep_reg_slot_of(idx);
        ep_object_t *o = s ? atomic_load_explicit(&s->obj, memory_order_relaxed) : NULL;
        if (o && o->kind == kind)
            fn(o, arg);
    }
    pthread_mutex_unlock(&reg_lock);
}

/* Counted when asked rather than kept in a shared counter, which every
 * thread making requests would have to write. */
int ep_registry_live(void)
{
    int n = 0;
    pthread_mutex_lock(&reg_lock);
    for (unsigned i = 1; i < next_unused; i++)
        n += atomic_load_explicit(&ep_reg_slot_of(i)->handle, memory_order_relaxed) != 0;
    pthread_mutex_unlock(&reg_lock);
    return n;
}

void ep_registry_finalize(void)
{
    int live = ep_registry_live();
    pthread_mutex_lock(&reg_lock);
    if (live == 0) {
        for (unsigned i = 0; i < EP_REG_CHUNKS; i++) {
            free(atomic_load_explicit(&ep_reg_chunks[i], memory_order_relaxed));
            atomic_store_explicit(&ep_reg_chunks[i], NULL, memory_order_relaxed);
        }
        free_head = free_tail = 0;
        next_unused = 1;
    }
    pthread_mutex_unlock(&reg_lock);
}
