#define _GNU_SOURCE /* sched_getcpu */
#include "base/wait.h"

#include "base/settings.h"

#include <sched.h>
#include <time.h>

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

__thread _Atomic uint64_t *ep_wait_time_sink EP_TLS;

/* EPMPI_STATS: the time between two rounds of one wait loop is waiting,
 * charged to the endpoint the thread last entered a call on. */
static void count_wait(ep_backoff_t *b)
{
    uint64_t now = ep_now_ns();
    if (b->last && ep_wait_time_sink)
        atomic_fetch_add_explicit(ep_wait_time_sink, now - b->last, memory_order_relaxed);
    b->last = now;
}

__thread int ep_thread_cpu EP_TLS;
__thread int ep_wait_partner_cpu EP_TLS;
int ep_wait_cpu_hints;
int ep_wait_crowded;

/* A wait's first round: the thread notes its CPU; 1 when the partner it
 * waits for was last seen there. */
static int partner_here(void)
{
    int cpu = sched_getcpu();
    ep_thread_cpu = cpu >= 0 ? cpu + 1 : 0;
    return ep_thread_cpu && ep_thread_cpu == ep_wait_partner_cpu;
}

void (*ep_wait_long_hook)(void);

/* Every 256 rounds, a look at the clock (cheap beside 256 yields; on a
 * loaded machine a round can take a millisecond, so every 4096 rounds
 * came seconds late): a wait that has lasted EP_WAIT_LONG_NS calls the
 * hook, once. */
static void watch_long(ep_backoff_t *b)
{
    uint64_t now = ep_now_ns();
    if (!b->since) {
        b->since = now;
    } else if (b->since != UINT64_MAX && now - b->since >= EP_WAIT_LONG_NS) {
        b->since = UINT64_MAX;
        ep_wait_long_hook();
    }
}

void ep_backoff(ep_backoff_t *b)
{
    if (__builtin_expect(ep_config.stats, 0))
        count_wait(b);
    /* Spinning only delays a partner queued on this CPU: skip to yielding
     * when it was seen here, or anywhere on a crowded node. */
    if (b->rounds == 0) {
        int here = ep_wait_cpu_hints && partner_here();
        if ((here || ep_wait_crowded) && ep_config.wait != EP_WAIT_SPIN)
            b->rounds = EP_SPIN_ROUNDS;
    }
    unsigned r = b->rounds++;
    if (r < EP_POLL_ROUNDS)
        return;
    if (__builtin_expect((r & 255) == 255, 0) && ep_wait_long_hook)
        watch_long(b);
    if (ep_config.wait == EP_WAIT_SPIN || r < EP_SPIN_ROUNDS) {
        cpu_relax();
        return;
    }
    if (ep_config.wait == EP_WAIT_SLEEP && r > EP_SPIN_ROUNDS + 256) {
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
        return;
    }
    sched_yield();
}

void ep_lock_wait(ep_lock_t *l)
{
    for (unsigned r = 0; !ep_lock_try(l); r++) {
        if (r < EP_SPIN_ROUNDS)
            cpu_relax();
        else
            sched_yield();
    }
}

int ep_wait_pmpi(MPI_Request *req, MPI_Status *st)
{
    int flag = 0, rc;
    EP_WAIT_UNTIL((rc = PMPI_Test(req, &flag, st)) != MPI_SUCCESS || flag);
    return rc;
}
