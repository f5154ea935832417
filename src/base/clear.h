/* Clearing the small structures made once per operation (requests,
 * collective arguments and instances).
 *
 * For blocks of a few hundred bytes GCC turns memset into `rep stos`,
 * whose start-up costs tens of cycles on most x86 cores, more than the
 * stores themselves; ep_clear writes 16-byte stores instead, unrolled
 * (n is a constant at every call). */
#ifndef EP_CLEAR_H
#define EP_CLEAR_H

#include <stddef.h>

typedef long long ep_clear_v __attribute__((vector_size(16), aligned(1), may_alias));

static inline void ep_clear(void *p, size_t n)
{
    char *c = p;
    size_t i = 0;
#pragma GCC unroll 32
    for (; i + sizeof(ep_clear_v) <= n; i += sizeof(ep_clear_v))
        *(ep_clear_v *)(void *)(c + i) = (ep_clear_v){0, 0};
#pragma GCC unroll 16
    for (; i < n; i++)
        c[i] = 0;
}

#endif
