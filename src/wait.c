#include "wait.h"

#include "settings.h"

#include <sched.h>
#include <time.h>

#define EP_POLL_ROUNDS 16 /* re-check at once: a wait loop's own check and progress take time enough */
#define EP_SPIN_ROUNDS 64

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

void ep_backoff(ep_backoff_t *b)
{
    unsigned r = b->rounds++;
    if (r < EP_POLL_ROUNDS)
        return;
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
