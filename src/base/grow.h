/* Growable arrays: the one way the engine makes room for one more element
 * of an array it keeps with a count in use and a capacity. */
#ifndef EP_GROW_H
#define EP_GROW_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* 1 when the array at *arrayp (elem bytes each, n in use, *cap allocated)
 * has room for element n, after doubling it (from first) if needed; 0
 * when memory ran out or the size would not fit in a size_t, the array
 * and *cap unchanged.  The pointer goes
 * through memcpy so that one function serves every element type. */
static inline int ep_grow_room(void *arrayp, size_t elem, size_t n, size_t *cap, size_t first)
{
    if (n < *cap)
        return 1;
    if (*cap > SIZE_MAX / 2)
        return 0;
    size_t c = *cap ? 2 * *cap : first;
    if (c > SIZE_MAX / elem)
        return 0;
    void *old, *p;
    memcpy(&old, arrayp, sizeof old);
    if (!(p = realloc(old, c * elem)))
        return 0;
    memcpy(arrayp, &p, sizeof p);
    *cap = c;
    return 1;
}

/* EP_GROW(a, n, cap, first): ep_grow_room for the array a (a pointer
 * variable or field) with its size_t capacity cap. */
#define EP_GROW(a, n, cap, first) ep_grow_room(&(a), sizeof *(a), (size_t)(n), &(cap), (first))

#endif
