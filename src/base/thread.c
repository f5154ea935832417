#include "base/thread.h"

#include "base/settings.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

extern int omp_get_level(void) __attribute__((weak));
extern int omp_get_team_size(int level) __attribute__((weak));
extern int omp_get_max_threads(void) __attribute__((weak));

int ep_thread_in_parallel(void) { return omp_get_level != NULL && omp_get_level() > 0; }

int ep_thread_team_size(void)
{
    if (!ep_thread_in_parallel() || omp_get_team_size == NULL)
        return 1;
    int n = omp_get_team_size(1);
    return n < 1 ? 1 : n;
}

int ep_thread_omp_max(void) { return omp_get_max_threads ? omp_get_max_threads() : 0; }

/* ---- EPMPI_THREADS=first-call --------------------------------------------- */

int ep_thread_by_call;
int (*ep_thread_omp_fn)(int level);
__thread int ep_thread_held EP_TLS;

/* Which endpoints threads hold.  Static, at its largest size: a thread
 * that ends after MPI_Finalize still finds it. */
static _Atomic unsigned char held[EP_MAX_ENDPOINTS_PER_PROCESS];
static _Atomic int world_nep;
static pthread_key_t release_key;
static pthread_once_t release_once = PTHREAD_ONCE_INIT;

/* At the end of a thread that took an endpoint: the endpoint is free for
 * the next thread (its queue and communicators stay, as a rank's do). */
static void release(void *arg)
{
    int t = (int)(intptr_t)arg - 1;
    if (t < atomic_load(&world_nep))
        atomic_store(&held[t], 0);
}

static void release_key_make(void) { pthread_key_create(&release_key, release); }

int ep_thread_take(void)
{
    int n = atomic_load(&world_nep);
    for (int t = 0; t < n; t++) {
        unsigned char free_ = 0;
        if (atomic_load_explicit(&held[t], memory_order_relaxed) ||
            !atomic_compare_exchange_strong(&held[t], &free_, 1))
            continue;
        pthread_once(&release_once, release_key_make);
        pthread_setspecific(release_key, (void *)(intptr_t)(t + 1));
        ep_thread_held = t + 1;
        return t;
    }
    return EP_THREAD_NONE;
}

void ep_thread_world(int nep, int by_call)
{
    for (int t = 0; t < nep; t++)
        atomic_store(&held[t], 0);
    ep_thread_held = 0;
    ep_thread_by_call = nep && by_call;
    ep_thread_omp_fn = nep && !by_call ? omp_get_ancestor_thread_num : NULL;
    atomic_store(&world_nep, nep);
    if (ep_thread_by_call) /* MPI_Init's thread: endpoint 0, for its life */
        ep_thread_take();
}

int ep_thread_endpoint_held(int t) { return t < atomic_load(&world_nep) && atomic_load(&held[t]); }

int ep_thread_speaks_for(int t)
{
    if (!ep_thread_by_call)
        return !ep_thread_in_parallel();
    return ep_thread_held == 1 && (t == 0 || !ep_thread_endpoint_held(t));
}
