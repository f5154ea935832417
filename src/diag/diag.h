/* Diagnostics: traffic counters (EPMPI_STATS), the check that one thread at
 * a time blocks on an endpoint (EPMPI_DEBUG), and the reports MPI_Finalize
 * prints (statistics, operations still pending).
 *
 * Counters belong to an endpoint's identity (ep_gid_t), not to one
 * communicator handle: a rank's traffic on MPI_COMM_WORLD and on its
 * duplicates and splits adds up in one row, and survives MPI_Comm_free.
 * Everything here costs one predictable branch when its setting is off. */
#ifndef EP_DIAG_H
#define EP_DIAG_H

#include "core/comm.h"
#include "base/error.h"
#include "base/settings.h"
#include "base/thread.h"
#include "base/wait.h"

#include <stdint.h>

typedef enum {
    EP_STAT_SENT_INTRA, /* messages sent to endpoints of this process */
    EP_STAT_SENT_INTRA_BYTES,
    EP_STAT_SENT_INTER, /* ... to endpoints of other processes */
    EP_STAT_SENT_INTER_BYTES,
    EP_STAT_RECV_INTRA, /* messages that arrived from this process */
    EP_STAT_RECV_INTRA_BYTES,
    EP_STAT_RECV_INTER, /* ... from other processes */
    EP_STAT_RECV_INTER_BYTES,
    EP_STAT_WAIT_NS,         /* time its calls spent in wait loops */
    EP_STAT_COLL_CALLS,      /* collective calls (blocking, non-blocking, persistent starts) */
    EP_STAT_COLL_SENT_BYTES, /* what they read from its send buffers */
    EP_STAT_COLL_RECV_BYTES, /* what they wrote to its receive buffers */
    EP_STAT_COUNT
} ep_stat_t;

typedef struct ep_stats {
    ep_gid_t gid;
    _Atomic uint64_t n[EP_STAT_COUNT];
    char name[MPI_MAX_OBJECT_NAME]; /* the name of the communicator that made the identity (ep_stats_named),
                                       guarded by the list's lock */
    struct ep_stats *next;
} ep_stats_t;

/* The record of identity gid, made on first use; NULL when out of memory. */
ep_stats_t *ep_stats_for(ep_gid_t gid);

/* MPI_Comm_set_name on ep: when ep's communicator made ep's identity, its
 * statistics row takes the name. */
void ep_stats_named(ep_endpoint_t *ep);

/* The calling thread entered a call on ep, whose statistics s is: its
 * waiting time goes there from now on (the wait loop's sink, wait.h). */
static inline void ep_stats_enter(ep_stats_t *s) { ep_wait_time_sink = &s->n[EP_STAT_WAIT_NS]; }

/* One message of `bytes` sent by, or arrived at, ep; inter: to or from
 * another process. */
static inline void ep_stats_msg(ep_endpoint_t *ep, int recv, int inter, int64_t bytes)
{
    if (__builtin_expect(ep->stats != NULL, 0)) {
        int k = (recv ? EP_STAT_RECV_INTRA : EP_STAT_SENT_INTRA) + (inter ? 2 : 0);
        atomic_fetch_add_explicit(&ep->stats->n[k], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&ep->stats->n[k + 1], (uint64_t)bytes, memory_order_relaxed);
    }
}

/* A collective call on ep (calls: 1, or 0 for a later piece of one call)
 * that reads sent bytes from ep's send buffers and writes received bytes
 * to its receive buffers. */
static inline void ep_stats_coll(ep_endpoint_t *ep, int calls, int64_t sent, int64_t received)
{
    atomic_fetch_add_explicit(&ep->stats->n[EP_STAT_COLL_CALLS], (uint64_t)calls, memory_order_relaxed);
    atomic_fetch_add_explicit(&ep->stats->n[EP_STAT_COLL_SENT_BYTES], (uint64_t)sent, memory_order_relaxed);
    atomic_fetch_add_explicit(&ep->stats->n[EP_STAT_COLL_RECV_BYTES], (uint64_t)received, memory_order_relaxed);
}

/* The blocking collective call the calling thread is in, for the warnings
 * of its waits (the entry points set it around the call; NULL outside). */
extern __thread const char *ep_diag_call EP_TLS;

/* Around the waiting part of a blocking call on ep: charges the waiting to
 * ep and, under EPMPI_DEBUG, reports a second thread blocking on ep while
 * one is inside (see README: legal, but in world mode a sign that threads
 * share an endpoint by accident). */
void ep_diag_enter_slow(ep_endpoint_t *ep, const char *call);
void ep_diag_leave_slow(ep_endpoint_t *ep);
static inline void ep_diag_enter(ep_endpoint_t *ep, const char *call)
{
    if (__builtin_expect(ep_config.debug || ep_config.stats, 0))
        ep_diag_enter_slow(ep, call);
}
static inline void ep_diag_leave(ep_endpoint_t *ep)
{
    if (__builtin_expect(ep_config.debug, 0))
        ep_diag_leave_slow(ep);
}

/* Watching a rendezvous of the local endpoints at the start of a
 * collective call, where a missing thread shows: called in each round of
 * the wait of endpoint ep, absent(arg, j) telling whether local endpoint
 * j has not arrived.  After half a second it checks whether the absent
 * ones can arrive at all: on MPI_COMM_WORLD in world mode (thread_bound,
 * EPMPI_THREADS=openmp),
 * endpoint j is OpenMP thread j's, so none beyond the caller's region (or
 * beyond endpoint 0 outside any region) can join while the caller waits.
 * Then it explains (ep_status_explain) and returns EP_ERR_NO_THREAD.
 * Under EPMPI_THREADS=first-call it warns, once, after EP_WATCH_REPORT_S
 * seconds on MPI_COMM_WORLD, of absent endpoints that no thread holds.
 * Under EPMPI_DEBUG it also reports, once, a wait of EP_WATCH_REPORT_S
 * seconds, naming the ranks waited for.  The first round costs nothing
 * but a counter. */
#define EP_WATCH_REPORT_S 5
typedef struct ep_watch {
    unsigned rounds;
    int reported;
    uint64_t since; /* ns, at the first look at the clock */
} ep_watch_t;
/* (clang-format 14 would spread the braces over lines.) */
/* clang-format off */
#define EP_WATCH_INIT {0, 0, 0}
/* clang-format on */
typedef int ep_absent_fn(const void *arg, int j);
ep_status_t ep_diag_watch_slow(ep_watch_t *w, ep_endpoint_t *ep, ep_absent_fn *absent, const void *arg);
static inline ep_status_t ep_diag_watch(ep_watch_t *w, ep_endpoint_t *ep, ep_absent_fn *absent, const void *arg)
{
    if (__builtin_expect(++w->rounds & 255, 1))
        return EP_OK;
    return ep_diag_watch_slow(w, ep, absent, arg);
}

/* Where the calling thread is, for a fatal error: "world rank R (process
 * P, endpoint T)", and "rank r of <communicator>" when comm is another
 * endpoint communicator. */
void ep_diag_whoami(MPI_Comm comm, char *buf, size_t size);

/* At MPI_Init, after the transport is up, collective over MPI_COMM_WORLD:
 * process 0 creates EPMPI_STATS_FILE; returns -1 with a message in err
 * in every process when it cannot. */
int ep_diag_init(char *err, size_t errlen);

/* At MPI_Finalize, every process, while the endpoints still exist: warns
 * about the operations still pending, and prints and writes the
 * statistics (collective over MPI_COMM_WORLD when EPMPI_STATS is on).
 * drain(ep) matches what is still on its way to ep inside this process
 * (the lanes, p2p.h), so that the warning lists those messages too. */
void ep_diag_finalize(void (*drain)(ep_endpoint_t *ep));

#endif
