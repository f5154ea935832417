/* The point-to-point engine inside one process, driven directly (no entry
 * points): a local communicator of a few endpoints, eager and rendezvous
 * messages, matching order, wildcards, probes, cancel, and truncation; and
 * the matching queues under threads that each drive an endpoint.
 * MPICH runs as a singleton; Check runs the tests in this process
 * (CK_NOFORK), since MPI cannot be initialised again in a child. */
#include "core/bsend.h"
#include "core/comm.h"
#include "p2p/lane.h"
#include "transport/net.h"
#include "core/proc.h"
#include "p2p/p2p.h"
#include "threads.h"
#include "unit.h"

#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static ep_comm_t *c; /* 3 endpoints, ranks 0..2, all in this process */

static void send_prepare(ep_request_t *r, int from, int to, int tag, void *buf, int count, ep_send_mode_t mode)
{
    ep_request_init(r, EP_REQ_SEND, &c->local[from]);
    ep_request_describe_send(r, buf, count, MPI_INT, to, tag, mode);
}

static void isend(ep_request_t *r, int from, int to, int tag, void *buf, int count, ep_send_mode_t mode)
{
    send_prepare(r, from, to, tag, buf, count, mode);
    ck_assert_int_eq(ep_send_start(r), EP_OK);
}

static void irecv(ep_request_t *r, int at, int source, int tag, void *buf, int count)
{
    ep_request_init(r, EP_REQ_RECV, &c->local[at]);
    ep_request_describe_recv(r, buf, count, MPI_INT, source, tag);
    ck_assert_int_eq(ep_recv_start(r), EP_OK);
}

START_TEST(eager_send_completes_without_receiver)
{
    ep_request_t s, r;
    int out = 42, in = 0;
    isend(&s, 0, 1, 7, &out, 1, EP_SEND_STANDARD);
    ck_assert(ep_request_poll(&s)); /* buffered in the destination queue */
    out = -1;                       /* the send buffer is free again */
    irecv(&r, 1, 0, 7, &in, 1);
    ck_assert(ep_request_poll(&r));
    ck_assert_int_eq(in, 42);
    ck_assert_int_eq(r.status.MPI_SOURCE, 0);
    ck_assert_int_eq(r.status.MPI_TAG, 7);
}
END_TEST

START_TEST(sync_send_waits_for_match)
{
    ep_request_t s, r;
    int out = 5, in = 0;
    isend(&s, 2, 0, 1, &out, 1, EP_SEND_SYNC);
    ck_assert(!ep_request_poll(&s));
    irecv(&r, 0, MPI_ANY_SOURCE, MPI_ANY_TAG, &in, 1);
    ck_assert(ep_request_poll(&r));
    ck_assert(ep_request_poll(&s));
    ck_assert_int_eq(in, 5);
    ck_assert_int_eq(r.status.MPI_SOURCE, 2);
}
END_TEST

START_TEST(large_message_copied_by_receiver_in_order)
{
    enum { N = 100000 }; /* 400 KB: above the eager limit */
    static int a[N], b[N], ra[N], rb[N];
    ep_request_t s1, s2, r1, r2;
    for (int i = 0; i < N; i++) {
        a[i] = i;
        b[i] = -i;
    }
    isend(&s1, 1, 2, 3, a, N, EP_SEND_STANDARD);
    isend(&s2, 1, 2, 3, b, 10, EP_SEND_STANDARD); /* small, same envelope: must not overtake */
    ck_assert(!ep_request_poll(&s1));
    irecv(&r1, 2, 1, MPI_ANY_TAG, ra, N);
    irecv(&r2, 2, MPI_ANY_SOURCE, 3, rb, N);
    ck_assert(ep_request_poll(&r1) && ep_request_poll(&r2) && ep_request_poll(&s1));
    ck_assert_int_eq(ra[N - 1], N - 1);
    ck_assert_int_eq(rb[9], -9);
    ck_assert_int_eq(ep_mpi_status_bytes(&r1.status), (int64_t)N * 4);
    ck_assert_int_eq(ep_mpi_status_bytes(&r2.status), 40);
}
END_TEST

START_TEST(posted_receives_match_in_order)
{
    ep_request_t r1, r2, s;
    int in1 = 0, in2 = 0, v = 9;
    irecv(&r1, 0, MPI_ANY_SOURCE, MPI_ANY_TAG, &in1, 1);
    irecv(&r2, 0, 1, 4, &in2, 1);
    isend(&s, 1, 0, 4, &v, 1, EP_SEND_STANDARD);
    ck_assert(ep_request_poll(&r1)); /* the older receive wins */
    ck_assert(!ep_request_poll(&r2));
    ck_assert_int_eq(ep_recv_cancel(&r2), 1);
    ck_assert(ep_request_poll(&r2));
    ck_assert_int_eq(ep_mpi_status_cancelled(&r2.status), 1);
}
END_TEST

START_TEST(probe_and_matched_probe)
{
    ep_request_t s, r;
    int v = 77, in = 0, flag = 0;
    MPI_Status st;
    ep_msg_t *m;
    ck_assert_int_eq(ep_iprobe(&c->local[1], MPI_ANY_SOURCE, 11, &flag, &st), EP_OK);
    ck_assert(!flag);
    isend(&s, 0, 1, 11, &v, 1, EP_SEND_STANDARD);
    ck_assert_int_eq(ep_iprobe(&c->local[1], MPI_ANY_SOURCE, 11, &flag, &st), EP_OK);
    ck_assert(flag);
    ck_assert_int_eq(ep_mpi_status_bytes(&st), 4);
    ck_assert_int_eq(ep_improbe(&c->local[1], 0, MPI_ANY_TAG, &flag, &m, &st), EP_OK);
    ck_assert(flag && m);
    /* Taken by the probe: a plain probe no longer sees it. */
    ck_assert_int_eq(ep_iprobe(&c->local[1], MPI_ANY_SOURCE, 11, &flag, &st), EP_OK);
    ck_assert(!flag);
    ep_request_init(&r, EP_REQ_RECV, &c->local[1]);
    r.buf = &in;
    r.count = 1;
    r.type = MPI_INT;
    ck_assert_int_eq(ep_mrecv_start(&r, m), EP_OK);
    ck_assert(ep_request_poll(&r));
    ck_assert_int_eq(in, 77);
}
END_TEST

START_TEST(truncation_reported)
{
    ep_request_t s, r;
    int out[4] = {1, 2, 3, 4}, in[2] = {0, 0};
    isend(&s, 2, 1, 8, out, 4, EP_SEND_STANDARD);
    irecv(&r, 1, 2, 8, in, 2);
    ck_assert(ep_request_poll(&r));
    ck_assert_int_eq(r.status.MPI_ERROR, MPI_ERR_TRUNCATE);
    ck_assert_int_eq(in[1], 2);
    ck_assert_int_eq(r.sent_bytes, 16);
}
END_TEST

/* The waiting side's part of a large copy between threads (request.h):
 * nothing while no copy is open; else every chunk left, the last one
 * short. */
START_TEST(copy_help_takes_every_chunk)
{
    size_t k = EP_COPY_CHUNK_MIN, n = 5 * k + 123;
    unsigned char *src = malloc(n), *dst = calloc(n, 1);
    ck_assert(src && dst);
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    ep_request_t r;
    ep_request_init(&r, EP_REQ_RECV, &c->local[0]);
    ep_copy_help(&r);
    ck_assert_int_eq(dst[0], 0);
    r.job.src = (const char *)src;
    r.job.dst = (char *)dst;
    r.job.bytes = n;
    r.job.chunk = k;
    r.job.nchunks = 6;
    atomic_store(&r.job.next, 1); /* the copier has taken chunk 0 */
    atomic_store(&r.job.done, 0);
    atomic_store(&r.copy_open, 1);
    ep_copy_help(&r);
    ck_assert_int_eq(atomic_load(&r.job.done), 5);
    ck_assert_int_eq(dst[k - 1], 0);
    ck_assert(!memcmp(src + k, dst + k, n - k));
    free(src);
    free(dst);
}
END_TEST

/* A large message between two threads, each side in turn waiting while
 * the other copies (and so helping): every byte, the status, truncation
 * at a size that is no multiple of a chunk. */
typedef struct {
    ep_request_t *req;
} waiter_t;

static void *wait_request(void *arg)
{
    ep_request_wait(((waiter_t *)arg)->req);
    return NULL;
}

START_TEST(large_copy_shared_between_threads)
{
    enum { N = (3 * EP_COPY_SHARED_MIN + 4 * 1000) / 4, CAP = N - 4001 }; /* ints */
    int *out = malloc(sizeof(int) * N), *in = malloc(sizeof(int) * N);
    ck_assert(out && in);
    for (int round = 0; round < 6; round++) {
        int recv_first = round % 2, truncate = round >= 4;
        for (int i = 0; i < N; i++) {
            out[i] = i * 3 + round;
            in[i] = -1;
        }
        ep_request_t s, r;
        memset(&s, 0, sizeof s); /* the job, which ep_request_init leaves, starts empty */
        memset(&r, 0, sizeof r);
        waiter_t w;
        pthread_t t;
        if (recv_first) {
            irecv(&r, 1, 0, 20 + round, in, truncate ? CAP : N);
            w.req = &r; /* the receiver waits in another thread while this one sends and copies */
            ck_assert_int_eq(pthread_create(&t, NULL, wait_request, &w), 0);
            isend(&s, 0, 1, 20 + round, out, N, EP_SEND_STANDARD);
            ep_request_wait(&s);
        } else {
            isend(&s, 0, 1, 20 + round, out, N, EP_SEND_SYNC);
            w.req = &s; /* the sender waits in another thread while this one receives and copies */
            ck_assert_int_eq(pthread_create(&t, NULL, wait_request, &w), 0);
            irecv(&r, 1, 0, 20 + round, in, truncate ? CAP : N);
            ep_request_wait(&r);
        }
        pthread_join(t, NULL);
        int got = truncate ? CAP : N;
        ck_assert_int_eq(r.status.MPI_ERROR, truncate ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
        ck_assert_int_eq(ep_mpi_status_bytes(&r.status), (int64_t)got * 4);
        ck_assert_int_eq(r.status.MPI_SOURCE, 0);
        for (int i = 0; i < got; i++)
            if (in[i] != i * 3 + round)
                ck_abort_msg("round %d: int %d is %d, not %d", round, i, in[i], i * 3 + round);
        if (truncate)
            ck_assert_int_eq(in[CAP], -1);
        ck_assert_int_eq(atomic_load(&r.copy_open) | atomic_load(&s.copy_open), 0);
        /* The copy was shared through the waiting side's request, in chunks. */
        ck_assert_uint_gt(w.req->job.nchunks, 1);
        ck_assert_uint_eq(atomic_load(&w.req->job.done), w.req->job.nchunks);
        ck_assert_uint_eq(w.req->job.bytes, (size_t)got * 4);
    }
    free(out);
    free(in);
}
END_TEST

START_TEST(proc_null)
{
    ep_request_t s, r;
    int v = 1;
    isend(&s, 0, MPI_PROC_NULL, 0, &v, 1, EP_SEND_STANDARD);
    irecv(&r, 0, MPI_PROC_NULL, 0, &v, 1);
    ck_assert(ep_request_poll(&s) && ep_request_poll(&r));
    ck_assert_int_eq(r.status.MPI_SOURCE, MPI_PROC_NULL);
    ck_assert_int_eq(r.status.MPI_TAG, MPI_ANY_TAG);
}
END_TEST

/* More messages than a lane holds, with no receive posted: the sends past
 * the lane's room are delivered directly, after the lane is drained, so
 * the order per sender still holds; small ones complete at once. */
START_TEST(full_lane_keeps_order)
{
    enum { M = 3 * EP_LANE_SLOTS };
    static ep_request_t s[M];
    static int out[M];
    for (int i = 0; i < M; i++) {
        out[i] = i;
        isend(&s[i], 2, 0, 5, &out[i], 1, EP_SEND_STANDARD);
        ck_assert(ep_request_poll(&s[i]));
    }
    for (int i = 0; i < M; i++) {
        ep_request_t r;
        int in = -1;
        irecv(&r, 0, i % 2 ? MPI_ANY_SOURCE : 2, MPI_ANY_TAG, &in, 1);
        ck_assert(ep_request_poll(&r));
        ck_assert_int_eq(in, i);
    }
}
END_TEST

/* A small standard send to an endpoint of this process is over before it
 * returns, with no request (the MPI layer hands out a shared completed
 * handle); one that does not fit a slot, or finds the lane full, is left
 * to the request path untouched. */
START_TEST(send_now_needs_no_request)
{
    enum { BIG = EP_LANE_INLINE / sizeof(int) + 1 };
    ep_endpoint_t *ep = &c->local[0];
    int out[EP_LANE_SLOTS + 1] = {0}, big[BIG] = {0}, in = -1, sent = 0;
    ck_assert(ep_send_now(ep, &out[0], 1, MPI_INT, MPI_PROC_NULL, 3));
    ck_assert(!ep_send_now(ep, big, BIG, MPI_INT, 2, 3));
    for (int i = 0; i <= EP_LANE_SLOTS; i++) {
        out[i] = 100 + i;
        sent += ep_send_now(ep, &out[i], 1, MPI_INT, 2, 3);
    }
    ck_assert_int_eq(sent, EP_LANE_SLOTS); /* the last one found the lane full */
    for (int i = 0; i < sent; i++) {
        ep_request_t r;
        irecv(&r, 2, MPI_ANY_SOURCE, 3, &in, 1);
        ck_assert(ep_request_poll(&r));
        ck_assert_int_eq(in, 100 + i);
        ck_assert_int_eq(r.status.MPI_SOURCE, 0);
    }
    ep_request_t none;
    irecv(&none, 2, MPI_ANY_SOURCE, MPI_ANY_TAG, &in, 1);
    ck_assert(!ep_request_poll(&none)); /* the refused sends left nothing behind */
    ck_assert(ep_recv_cancel(&none));
}
END_TEST

/* A lane belongs to the thread that made it: another thread sending on the
 * same endpoint goes the direct way (the lane takes nothing), behind what
 * the lane holds.  The other thread leaves its result for the main thread
 * to check: Check's assertions are not thread-safe. */
static ep_request_t other_send;
static int other_value = 2;
static ep_status_t other_rc;
static void *send_from_other_thread(void *arg)
{
    (void)arg;
    send_prepare(&other_send, 1, 2, 6, &other_value, 1, EP_SEND_STANDARD);
    other_rc = ep_send_start(&other_send);
    return NULL;
}

START_TEST(lane_owned_by_one_thread)
{
    ep_request_t s, r1, r2;
    int v = 1, in1 = 0, in2 = 0;
    pthread_t t;
    isend(&s, 1, 2, 6, &v, 1, EP_SEND_STANDARD); /* this thread's lane (made here if new) */
    ep_lane_t *l = c->local[1].lanes_out[2];
    ck_assert_ptr_nonnull(l);
    uint32_t tail = l->tail;
    ck_assert_int_eq(pthread_create(&t, NULL, send_from_other_thread, NULL), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(other_rc, EP_OK);
    ck_assert(ep_request_poll(&other_send));
    ck_assert_uint_eq(l->tail, tail);
    irecv(&r1, 2, 1, 6, &in1, 1);
    irecv(&r2, 2, 1, 6, &in2, 1);
    ck_assert(ep_request_poll(&r1) && ep_request_poll(&r2));
    ck_assert_int_eq(in1, 1);
    ck_assert_int_eq(in2, 2);
}
END_TEST

/* Every endpoint's thread sends to and receives from all the others at
 * once: the queues and the in-process rendezvous under contention. */
START_TEST(threads_exchange_in_process)
{
    ep_comm_t *tc = ep_unit_local_comm(EP_UNIT_NT);
    ep_unit_run_threads(tc, ep_send_start, ep_unit_exchange);
    ep_unit_comm_free(tc);
}
END_TEST

int main(int argc, char **argv)
{
    int provided;
    PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    ep_proc_init();
    ep_net_init();
    ep_new_ep_t ne[3];
    for (int i = 0; i < 3; i++)
        ne[i] = (ep_new_ep_t){(uint64_t)i, {0, (uint64_t)i}};
    if (ep_comm_build(MPI_COMM_NULL, 1, 3, ne, MPI_ERRORS_RETURN, &c) != EP_OK)
        return EXIT_FAILURE;
    Suite *s = suite_create("p2p");
    TCase *tc = tcase_create("one process");
    tcase_add_test(tc, eager_send_completes_without_receiver);
    tcase_add_test(tc, sync_send_waits_for_match);
    tcase_add_test(tc, large_message_copied_by_receiver_in_order);
    tcase_add_test(tc, posted_receives_match_in_order);
    tcase_add_test(tc, probe_and_matched_probe);
    tcase_add_test(tc, truncation_reported);
    tcase_add_test(tc, copy_help_takes_every_chunk);
    tcase_add_test(tc, large_copy_shared_between_threads);
    tcase_add_test(tc, proc_null);
    tcase_add_test(tc, full_lane_keeps_order);
    tcase_add_test(tc, lane_owned_by_one_thread);
    tcase_add_test(tc, send_now_needs_no_request);
    suite_add_tcase(s, tc);
    TCase *tt = tcase_create("threads");
    tcase_set_timeout(tt, 120);
    tcase_add_test(tt, threads_exchange_in_process);
    suite_add_tcase(s, tt);
    ep_bsend_attach(1 << 20);
    int rc = ep_unit_run_nofork(s);
    for (int i = 0; i < 3; i++)
        ep_endpoint_free(&c->local[i]);
    ep_net_finalize();
    ep_proc_finalize();
    PMPI_Finalize();
    return rc;
}
