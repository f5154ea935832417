/* Waiting: how a thread that cannot proceed gives the CPU away.
 *
 * Every wait loop in the engine is "check, drive progress, back off".  The
 * back-off spins for a few rounds (cheap when the partner is running on the
 * other core), then yields, and under EPMPI_WAIT=sleep sleeps briefly, so a
 * run with more endpoints than cores still finishes promptly. */
#ifndef EP_WAIT_H
#define EP_WAIT_H

#include <stdint.h>

typedef struct ep_backoff {
    unsigned rounds;
    uint64_t last; /* EPMPI_STATS: when the previous round ended (ns), 0 before the first */
} ep_backoff_t;

#define EP_BACKOFF_INIT {0}

void ep_backoff(ep_backoff_t *b);

#endif
