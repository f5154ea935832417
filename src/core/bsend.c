/* Buffered-send accounting (bsend.h): two atomic words, no lock. */
#include "core/bsend.h"

#include "base/wait.h"

#include <stdatomic.h>

static _Atomic size_t bsend_size; /* bytes attached by MPI_Buffer_attach */
static _Atomic size_t bsend_used; /* bytes held by buffered messages in flight */

void ep_bsend_attach(size_t size) { atomic_store(&bsend_size, size); }

void ep_bsend_flush(void) { EP_WAIT_UNTIL(atomic_load(&bsend_used) == 0); }

size_t ep_bsend_in_flight(void) { return atomic_load(&bsend_used); }

size_t ep_bsend_detach(void)
{
    ep_bsend_flush();
    return atomic_exchange(&bsend_size, 0);
}

static int bsend_try_reserve(size_t n)
{
    size_t used = atomic_load(&bsend_used);
    do {
        if (used + n > atomic_load(&bsend_size))
            return 0;
    } while (!atomic_compare_exchange_weak(&bsend_used, &used, used + n));
    return 1;
}

/* How long a buffered send that finds no room waits for the space of
 * messages in flight: their receivers may have taken them already while
 * the transport has yet to say so (a rendezvous over UCX completes at the
 * sender when the receiver's acknowledgement arrives, and the receiver's
 * next message may come first another way, through a node inbox or
 * MPICH).  Bounded: a send whose space never comes fails, as MPI says. */
static _Atomic uint64_t reclaim_wait_ns = 20000000;

void ep_bsend_set_reclaim_wait(uint64_t ns) { atomic_store(&reclaim_wait_ns, ns); }

int ep_bsend_reserve(size_t n)
{
    if (bsend_try_reserve(n))
        return 1;
    uint64_t until = ep_now_ns() + atomic_load(&reclaim_wait_ns);
    ep_backoff_t b = EP_BACKOFF_INIT;
    for (;;) {
        ep_progress_reclaim();
        if (bsend_try_reserve(n))
            return 1;
        if (!atomic_load(&bsend_used) || ep_now_ns() > until)
            return 0;
        ep_backoff(&b);
    }
}

void ep_bsend_release(size_t n)
{
    if (n)
        atomic_fetch_sub(&bsend_used, n);
}
