/* Concurrency drivers shared by the unit tests: plain pthreads (no OpenMP,
 * whose runtime ThreadSanitizer does not see), each thread driving its own
 * endpoint of a communicator whose ranks all live in this process, as an
 * endpoint program's threads do.  Workers never call Check's assertions
 * (they are not thread-safe): they leave a message in err, or abort when
 * other threads could not go on. */
#ifndef EP_UNIT_THREADS_H
#define EP_UNIT_THREADS_H

#include "core/comm.h"
#include "p2p/p2p.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define EP_UNIT_NT 4       /* threads, one endpoint each */
#define EP_UNIT_ROUNDS 400 /* rounds of the exchange */
#define EP_UNIT_BIG 6000   /* ints in a large message: above the eager limit */

/* A communicator of n endpoints, all in this process (MPICH initialised). */
static inline ep_comm_t *ep_unit_local_comm(int n)
{
    ep_new_ep_t ne[EP_UNIT_NT];
    ep_comm_t *c = NULL;
    ck_assert_int_le(n, EP_UNIT_NT);
    for (int i = 0; i < n; i++)
        ne[i] = (ep_new_ep_t){(uint64_t)i, {0, (uint64_t)i}};
    ck_assert_int_eq(ep_comm_build(MPI_COMM_NULL, 1, n, ne, MPI_ERRORS_RETURN, &c), EP_OK);
    return c;
}

static inline void ep_unit_comm_free(ep_comm_t *c)
{
    int n = c->nlocal;
    for (int i = 0; i < n; i++)
        ep_endpoint_free(&c->local[i]);
}

/* Starts send s (buf/count/type/peer/tag/mode set): the path under test. */
typedef ep_status_t (*ep_unit_send_fn)(ep_request_t *s);

typedef struct ep_unit_worker {
    ep_comm_t *c;
    int me;
    ep_unit_send_fn send;
    char err[160];
} ep_unit_worker_t;

/* One round of the exchange: two messages to every other endpoint, the
 * first large every fourth round (a rendezvous), synchronous or buffered in
 * some rounds, the second small with the same tag so that it must not
 * overtake the first.  The receives use a different matching pattern each
 * round: (any source, round tag), (source, round tag), (source, any tag). */
static inline const char *ep_unit_round(ep_unit_worker_t *w, int k, int (*sbuf)[2][EP_UNIT_BIG],
                                        int (*rbuf)[2][EP_UNIT_BIG])
{
    enum { NP = EP_UNIT_NT - 1 };
    ep_request_t rr[NP][2], sr[NP][2];
    int n = w->c->nlocal, seen[EP_UNIT_NT][2] = {{0}};
    ep_send_mode_t mode = k % 5 == 0 ? EP_SEND_SYNC : k % 7 == 3 ? EP_SEND_BUFFERED : EP_SEND_STANDARD;

    for (int i = 0; i < n - 1; i++) {
        int p = (w->me + 1 + i) % n;
        for (int j = 0; j < 2; j++) {
            ep_request_init(&rr[i][j], EP_REQ_RECV, &w->c->local[w->me]);
            ep_request_describe_recv(&rr[i][j], rbuf[i][j], EP_UNIT_BIG, MPI_INT, k % 3 == 0 ? MPI_ANY_SOURCE : p,
                                     k % 3 == 2 ? MPI_ANY_TAG : k);
            if (ep_recv_start(&rr[i][j]) != EP_OK)
                return "ep_recv_start failed";
        }
    }
    for (int i = 0; i < n - 1; i++) {
        int p = (w->me + 1 + i) % n;
        for (int j = 0; j < 2; j++) {
            int count = j == 0 && k % 4 == 1 ? EP_UNIT_BIG : 4;
            sbuf[i][j][0] = w->me;
            sbuf[i][j][1] = k;
            sbuf[i][j][2] = j;
            sbuf[i][j][count - 1] = w->me * 1000 + p;
            ep_request_init(&sr[i][j], EP_REQ_SEND, &w->c->local[w->me]);
            ep_request_describe_send(&sr[i][j], sbuf[i][j], count, MPI_INT, p, k, mode);
            if (w->send(&sr[i][j]) != EP_OK)
                return "sending failed";
        }
    }
    /* Receives complete in posting order: from each source, message 0 of
     * this round comes before message 1. */
    for (int i = 0; i < n - 1; i++)
        for (int j = 0; j < 2; j++) {
            ep_request_wait(&rr[i][j]);
            int *b = rbuf[i][j], src = rr[i][j].status.MPI_SOURCE;
            int count = (int)(ep_mpi_status_bytes(&rr[i][j].status) / (int64_t)sizeof(int));
            if (rr[i][j].status.MPI_ERROR != MPI_SUCCESS || src < 0 || src >= n || src == w->me || b[0] != src ||
                b[1] != k || rr[i][j].status.MPI_TAG != k || b[2] != seen[src][0] + seen[src][1] ||
                b[count - 1] != src * 1000 + w->me)
                return "a message arrived out of order, damaged or at the wrong receive";
            seen[src][b[2]]++;
        }
    for (int i = 0; i < n - 1; i++)
        for (int j = 0; j < 2; j++)
            ep_request_wait(&sr[i][j]);
    return NULL;
}

static inline void *ep_unit_exchange(void *arg)
{
    ep_unit_worker_t *w = arg;
    int(*sbuf)[2][EP_UNIT_BIG] = calloc(EP_UNIT_NT, sizeof *sbuf);
    int(*rbuf)[2][EP_UNIT_BIG] = calloc(EP_UNIT_NT, sizeof *rbuf);
    const char *e = sbuf && rbuf ? NULL : "out of memory";
    int k = 0;
    while (!e && k < EP_UNIT_ROUNDS)
        e = ep_unit_round(w, k++, sbuf, rbuf);
    if (e) {
        /* The other threads' requests still point into this one's frames:
         * stop here, with the reason. */
        fprintf(stderr, "FAIL: endpoint %d, round %d: %s\n", w->me, k - 1, e);
        abort();
    }
    free(sbuf);
    free(rbuf);
    return NULL;
}

/* Runs fn on EP_UNIT_NT threads, thread i driving endpoint i of c, and
 * fails the test with the first worker's message. */
static inline void ep_unit_run_threads(ep_comm_t *c, ep_unit_send_fn send, void *(*fn)(void *))
{
    pthread_t t[EP_UNIT_NT];
    ep_unit_worker_t w[EP_UNIT_NT];
    for (int i = 0; i < EP_UNIT_NT; i++) {
        w[i] = (ep_unit_worker_t){.c = c, .me = i, .send = send};
        ck_assert_int_eq(pthread_create(&t[i], NULL, fn, &w[i]), 0);
    }
    for (int i = 0; i < EP_UNIT_NT; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < EP_UNIT_NT; i++)
        ck_assert_msg(w[i].err[0] == '\0', "%s", w[i].err);
}

#endif
