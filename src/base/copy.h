/* Copying a small payload (a lane's, a node inbox's) of a size known only
 * at run time: in 8-byte words, the last one overlapping, inline.  A call
 * into libc's memcpy costs as much again for so few bytes, twice per
 * message. */
#ifndef EP_COPY_H
#define EP_COPY_H

#include <stddef.h>
#include <string.h>

/* The sizes it is meant for: a lane's inline payload (p2p/lane.h). */
#define EP_COPY_SMALL_MAX 48

static inline void ep_copy_small(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (n < 8) {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
        return;
    }
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        memcpy(d + i, s + i, 8);
    if (i < n)
        memcpy(d + n - 8, s + n - 8, 8);
}

#endif
