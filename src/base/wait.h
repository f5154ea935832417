/* Waiting: how a thread that cannot proceed gives the CPU away.
 *
 * Every wait loop, in the engine and in the entry points, is "check,
 * drive progress, back off": EP_WAIT_UNTIL below.  The
 * back-off spins for a few rounds (cheap when the partner is running on the
 * other core), then yields, and under EPMPI_WAIT=sleep sleeps briefly, so a
 * run with more endpoints than cores still finishes promptly. */
#ifndef EP_WAIT_H
#define EP_WAIT_H

#include "base/thread.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds: how long a wait has lasted. */
static inline uint64_t ep_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A wait's rounds: the first EP_POLL_ROUNDS re-check at once (a wait
 * loop's own check and progress take time enough), those up to
 * EP_SPIN_ROUNDS pause, later ones yield (or sleep, EPMPI_WAIT=sleep);
 * on a crowded node (ep_wait_crowded) every round yields. */
#define EP_POLL_ROUNDS 16
#define EP_SPIN_ROUNDS 64

typedef struct ep_backoff {
    unsigned rounds;
    uint64_t last;  /* EPMPI_STATS: when the previous round ended (ns), 0 before the first */
    uint64_t since; /* a long wait: when it was first seen long (ns), for ep_wait_long_hook */
} ep_backoff_t;

/* Called once by a wait that has gone on for EP_WAIT_LONG_NS (a higher
 * layer sets it: diag.c explains world-mode waits that cannot end);
 * NULL: nothing to do. */
#define EP_WAIT_LONG_NS 1000000000u
extern void (*ep_wait_long_hook)(void);

/* Which CPU a waiting thread's partner is on.  With more threads than
 * cores, the thread a waiter needs may be queued on the waiter's own CPU,
 * where spinning only delays it.  A thread notes its CPU (+1; 0 unknown)
 * when it starts to wait (ep_thread_cpu), a sender writes that into what
 * it sends (node inboxes, ucx.c), and a receiver that polls and finds
 * nothing notes the last sender's (ep_wait_partner_cpu): a wait whose
 * partner is on its CPU yields at once. */
extern __thread int ep_thread_cpu EP_TLS;
extern __thread int ep_wait_partner_cpu EP_TLS;
/* Whether anything sends CPUs (node inboxes are in use): else a wait does
 * not look at its own. */
extern int ep_wait_cpu_hints;
/* The node has more endpoints than CPUs (ep_proc_init): the thread a
 * wait needs is likely queued behind the waiter, so waits yield from
 * their first round on instead of spinning (Open MPI does the same in an
 * oversubscribed job).  Measured on 2 cores, 2 processes x 2 endpoints
 * over Open MPI 4.1: an 8 B Allreduce 15 us -> 7-8 us, a barrier 10 ->
 * 4-6 us. */
extern int ep_wait_crowded;

/* The next sleep of a fallback that wakes now and then to do what
 * nobody else did (the UCX progress helper): min after a round that found
 * work, else twice the last, up to max.  An idle one costs a wake per
 * max; a busy one answers within min. */
static inline long ep_fallback_sleep(long last, int found_work, long min, long max)
{
    if (found_work)
        return min;
    return last > max / 2 ? max : last * 2;
}

/* (clang-format 14 would spread the braces over lines.) */
/* clang-format off */
#define EP_BACKOFF_INIT {0}
/* clang-format on */

void ep_backoff(ep_backoff_t *b);
/* EPMPI_STATS: the counter the calling thread's waiting time goes to (the
 * statistics of the endpoint it last entered a call on, diag.h), or NULL. */
extern __thread _Atomic uint64_t *ep_wait_time_sink EP_TLS;

/* Progress: what a waiting thread drives.  Defined at the top of the
 * engine (src/progress.c), which knows every kind of request and every
 * transport; declared here for the wait loops of every layer. */
struct ep_request;
/* Drives the collectives' steps, the transports and the requests freed
 * while they ran (what another thread does already is skipped). */
void ep_progress(void);
/* Finishes the detached requests that are complete, waiting for the
 * detached list if another thread holds it. */
void ep_progress_reclaim(void);
/* Hands a request freed by the user while pending to the progress engine,
 * which destroys it once complete. */
void ep_progress_detach(struct ep_request *r);
/* Number of such requests not destroyed yet. */
int ep_progress_detached(void);
/* MPI_Finalize: waits until no detached request is inside a transport any
 * more (buffered sends, rendezvous data), dropping those that wait for a
 * partner that will not come; before the transports go. */
void ep_progress_finalize(void);

/* The wait loop of every blocking operation: until COND holds, drive
 * progress (ep_progress) and back off.  Each round checks COND
 * right after progress, which may just have made it true (no back-off
 * then), and again after backing off, when another thread may have (no
 * progress then), as ep_request_wait always did.  So a check should be
 * cheap next to progress.  COND is evaluated until it is true,
 * never after: it may complete what it finds complete.  A statement
 * after the macro is the loop's body, run when the check before progress
 * fails (a watch on the partner awaited, say); a `;` gives none. */
typedef struct ep_wait {
    ep_backoff_t b;
    int done;
} ep_wait_t;

#define EP_WAIT_UNTIL(cond)                                                                        \
    for (ep_wait_t ep_wait_ = {EP_BACKOFF_INIT, 0}; !ep_wait_.done && !(ep_wait_.done = !!(cond)); \
         ep_progress(), (ep_wait_.done = !!(cond)) || (ep_backoff(&ep_wait_.b), 0))

/* The same without ep_progress, where COND drives what it waits for
 * itself (a probe, a UCX worker polled) or a partner thread is finishing
 * a step that needs no progress. */
#define EP_BACKOFF_UNTIL(cond) for (ep_backoff_t ep_wait_ = EP_BACKOFF_INIT; !(cond); ep_backoff(&ep_wait_))

/* Waits for a PMPI request, driving progress and yielding meanwhile. */
int ep_wait_pmpi(MPI_Request *req, MPI_Status *st);

/* ep_wait_pmpi for *req if rc, the code of the call that started it, is
 * MPI_SUCCESS; else rc.  For a non-blocking PMPI call used in place of a
 * blocking one: MPICH's blocking calls poll without giving the CPU away,
 * which with more processes than cores stalls for milliseconds at every
 * call, where the non-blocking call waited for this way yields. */
static inline int ep_wait_pmpi_started(int rc, MPI_Request *req)
{
    return rc == MPI_SUCCESS ? ep_wait_pmpi(req, MPI_STATUS_IGNORE) : rc;
}

/* A lock for short critical sections (an endpoint's matching queues):
 * taking and giving back a free one is one atomic exchange and one store,
 * where a pthread mutex costs several calls.  A thread that
 * finds it taken spins briefly, then yields, so that a holder that lost its
 * core gets it back.  Zero bytes are an unlocked lock. */
typedef struct ep_lock {
    _Atomic int held;
} ep_lock_t;

void ep_lock_wait(ep_lock_t *l);

static inline int ep_lock_try(ep_lock_t *l)
{
    return !atomic_load_explicit(&l->held, memory_order_relaxed) &&
           !atomic_exchange_explicit(&l->held, 1, memory_order_acquire);
}

static inline void ep_lock(ep_lock_t *l)
{
    if (!atomic_exchange_explicit(&l->held, 1, memory_order_acquire))
        return;
    ep_lock_wait(l);
}

static inline void ep_unlock(ep_lock_t *l) { atomic_store_explicit(&l->held, 0, memory_order_release); }

/* For assertions: the lock is held (by some thread: it has no owner). */
static inline int ep_lock_held(ep_lock_t *l) { return atomic_load_explicit(&l->held, memory_order_relaxed) != 0; }

#endif
