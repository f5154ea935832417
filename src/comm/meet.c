#include "comm/meet.h"

#include "base/wait.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct meeting {
    uint64_t key[3];
    int expected, arrived, left;
    void **records;
    _Atomic int done;
    ep_status_t status;
    struct meeting *next;
} meeting_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static meeting_t *open_meetings;

/* Under lock: the open meeting with this key, created if absent. */
static meeting_t *find(const uint64_t key[3], int expected)
{
    meeting_t *m;
    for (m = open_meetings; m; m = m->next)
        if (m->key[0] == key[0] && m->key[1] == key[1] && m->key[2] == key[2])
            return m;
    if (!(m = calloc(1, sizeof *m)) || !(m->records = calloc((size_t)expected, sizeof *m->records))) {
        free(m);
        return NULL;
    }
    for (int i = 0; i < 3; i++)
        m->key[i] = key[i];
    m->expected = expected;
    m->next = open_meetings;
    open_meetings = m;
    return m;
}

static void unlink_meeting(meeting_t *m)
{
    for (meeting_t **p = &open_meetings; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            return;
        }
}

ep_status_t ep_meet(uint64_t k0, uint64_t k1, uint64_t k2, int expected, void *record, ep_meet_drive_fn drive,
                    void *arg)
{
    const uint64_t key[3] = {k0, k1, k2};
    if (expected == 1)
        return drive(&record, 1, arg);
    pthread_mutex_lock(&lock);
    meeting_t *m = find(key, expected);
    if (!m) {
        pthread_mutex_unlock(&lock);
        return EP_ERR_NO_MEM;
    }
    m->records[m->arrived++] = record;
    int last = m->arrived == m->expected;
    if (last)
        unlink_meeting(m); /* complete: the same key may open a new meeting */
    pthread_mutex_unlock(&lock);

    if (last) {
        m->status = drive(m->records, m->expected, arg);
        atomic_store_explicit(&m->done, 1, memory_order_release);
    } else {
        EP_WAIT_UNTIL(atomic_load_explicit(&m->done, memory_order_acquire));
    }
    ep_status_t st = m->status;
    pthread_mutex_lock(&lock);
    int gone = ++m->left == m->expected;
    pthread_mutex_unlock(&lock);
    if (gone) {
        free(m->records);
        free(m);
    }
    return st;
}
