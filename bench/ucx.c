/* epmpi-bench: the UCX floor.  The same ping-pong and rate structures as
 * p2p.c, written straight on UCX's tag API (the transport MPICH runs on
 * here), with no MPI on the way of a message: what any MPI library over
 * UCX can at best reach between two processes.  Each party makes its own
 * UCX context and worker and exchanges worker addresses with its pair
 * partner over MPI; tags carry nothing but a message kind.
 *
 * ucx latency / bandwidth   ping-pong, one-way time (half a round trip);
 * ucx msgrate               windows of non-blocking 8 B and 4 KiB sends
 *                           (the sizes of make bench's configuration 6),
 *                           the receiver's receives posted before the
 *                           window (but the first), one acknowledgement a
 *                           window.
 * ucx msgrate-probed        the same, but the receiver probes each message
 *                           out of UCX's unexpected queue and receives it
 *                           (ucp_tag_probe_nb, ucp_tag_msg_recv_nbx): the
 *                           way epmpi takes a message that no receive
 *                           posted in UCX waits for.
 * ucx msgrate-am            the same over active messages (ucp_am_send_nbx,
 *                           eager), a handler copying each into its slot:
 *                           what a transport doing all matching itself
 *                           would start from.
 * Built only when configure found UCX; the pair partners must be in
 * different processes. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef EP_HAVE_UCX
#include <ucp/api/ucp.h>

#define UTAG_DATA 1
#define UTAG_ACK 2
#define UTAG_ALL ((ucp_tag_t)-1)

static const long ucx_sizes[] = {8L, 1L << 10, 4L << 10, 64L << 10, 1L << 20, 4L << 20};

struct ucx {
    ucp_context_h ctx;
    ucp_worker_h worker;
    ucp_ep_h ep;
    char *buf; /* ping-pong */
    long bytes;
    void **req; /* rate: one request per message of a window */
    char *rbuf; /* rate: a slot per receive */
    int window;
    int mode;    /* rate: RATE_POSTED, RATE_PROBED or RATE_AM */
    int arrived; /* RATE_AM: messages of this window copied in */
    int am_lost; /* RATE_AM: messages that came without their data */
};

/* How the rate case's receiver takes its messages, and what each reports. */
enum { RATE_POSTED, RATE_PROBED, RATE_AM };
static const char *const rate_metric[] = {"msgrate", "msgrate-probed", "msgrate-am"};
#define UCX_AM_ID 3

/* Waits for a request from a _nbx call (NULL: done at once). */
static void ucx_wait(const struct party *p, struct ucx *u, void *req)
{
    if (req == NULL)
        return;
    if (UCS_PTR_IS_ERR(req))
        party_fail(p, "ucx: an operation failed: %s", ucs_status_string(UCS_PTR_STATUS(req)));
    ucs_status_t st;
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS)
        ucp_worker_progress(u->worker);
    ucp_request_free(req);
    if (st != UCS_OK)
        party_fail(p, "ucx: an operation failed: %s", ucs_status_string(st));
}

static void *ucx_send(struct ucx *u, const void *buf, size_t n, ucp_tag_t tag)
{
    ucp_request_param_t prm = {0};
    return ucp_tag_send_nbx(u->ep, buf, n, tag, &prm);
}

static void *ucx_recv(struct ucx *u, void *buf, size_t n, ucp_tag_t tag)
{
    ucp_request_param_t prm = {0};
    return ucp_tag_recv_nbx(u->worker, buf, n, tag, UTAG_ALL, &prm);
}

/* RATE_AM: an eager message's data, copied into the next slot.  Sends
 * are eager (UCP_AM_SEND_FLAG_EAGER); one that is not, or one too many,
 * is counted and fails the case (there is no party to fail here). */
static ucs_status_t ucx_am_arrive(void *arg, const void *header, size_t header_length, void *data, size_t length,
                                  const ucp_am_recv_param_t *param)
{
    struct ucx *u = arg;
    (void)header;
    (void)header_length;
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) || u->arrived >= u->window || length != (size_t)u->bytes)
        u->am_lost++;
    else
        memcpy(u->rbuf + (size_t)u->arrived * (size_t)u->bytes, data, length);
    u->arrived++;
    return UCS_OK;
}

static void ucx_setup(const struct party *p, struct ucx *u)
{
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_TAG | UCP_FEATURE_AM};
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE, .thread_mode = UCS_THREAD_MODE_SINGLE};
    ucp_address_t *addr;
    size_t len;
    ucs_status_t st;
    if ((st = ucp_init(&params, NULL, &u->ctx)) != UCS_OK ||
        (st = ucp_worker_create(u->ctx, &wp, &u->worker)) != UCS_OK ||
        (st = ucp_worker_get_address(u->worker, &addr, &len)) != UCS_OK)
        party_fail(p, "ucx: cannot set up UCX: %s", ucs_status_string(st));
    /* Addresses: lengths first, then the bytes, with the pair partner. */
    long mine = (long)len, theirs = 0;
    int peer = party_peer(p);
    MPI_Sendrecv(&mine, 1, MPI_LONG, peer, 7, &theirs, 1, MPI_LONG, peer, 7, p->comm, MPI_STATUS_IGNORE);
    char *remote = party_alloc(p, (size_t)theirs);
    MPI_Sendrecv(addr, (int)len, MPI_BYTE, peer, 8, remote, (int)theirs, MPI_BYTE, peer, 8, p->comm, MPI_STATUS_IGNORE);
    ucp_worker_release_address(u->worker, addr);
    ucp_am_handler_param_t am = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                                               UCP_AM_HANDLER_PARAM_FIELD_ARG,
                                 .id = UCX_AM_ID,
                                 .cb = ucx_am_arrive,
                                 .arg = u};
    if ((st = ucp_worker_set_am_recv_handler(u->worker, &am)) != UCS_OK)
        party_fail(p, "ucx: cannot set the active-message handler: %s", ucs_status_string(st));
    ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS, .address = (ucp_address_t *)remote};
    if ((st = ucp_ep_create(u->worker, &ep, &u->ep)) != UCS_OK)
        party_fail(p, "ucx: cannot connect to the partner: %s", ucs_status_string(st));
    free(remote);
}

static void ucx_teardown(const struct party *p, struct ucx *u)
{
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE};
    party_barrier(p); /* nobody sends any more */
    void *req = ucp_ep_close_nbx(u->ep, &prm);
    if (req && !UCS_PTR_IS_ERR(req)) {
        while (ucp_request_check_status(req) == UCS_INPROGRESS)
            ucp_worker_progress(u->worker);
        ucp_request_free(req);
    }
    ucp_worker_destroy(u->worker);
    ucp_cleanup(u->ctx);
}

static int first_half(const struct party *p) { return p->rank < p->size / 2; }

static void ucx_pingpong_run(const struct party *p, void *ctx, long n)
{
    struct ucx *u = ctx;
    for (long i = 0; i < n; i++) {
        if (first_half(p)) {
            ucx_wait(p, u, ucx_send(u, u->buf, (size_t)u->bytes, UTAG_DATA));
            ucx_wait(p, u, ucx_recv(u, u->buf, (size_t)u->bytes, UTAG_DATA));
        } else {
            ucx_wait(p, u, ucx_recv(u, u->buf, (size_t)u->bytes, UTAG_DATA));
            ucx_wait(p, u, ucx_send(u, u->buf, (size_t)u->bytes, UTAG_DATA));
        }
    }
}

/* One round trip of known bytes, checked, before the timing. */
static void ucx_pingpong_check(const struct party *p, struct ucx *u)
{
    for (int leg = 0; leg < 2; leg++) {
        if (first_half(p) == (leg == 0)) {
            for (long i = 0; i < u->bytes; i++)
                u->buf[i] = bench_pattern(i, leg);
            ucx_wait(p, u, ucx_send(u, u->buf, (size_t)u->bytes, UTAG_DATA));
            continue;
        }
        memset(u->buf, 0, (size_t)u->bytes);
        ucx_wait(p, u, ucx_recv(u, u->buf, (size_t)u->bytes, UTAG_DATA));
        for (long i = 0; i < u->bytes; i++)
            if (u->buf[i] != bench_pattern(i, leg))
                party_fail(p, "ucx ping-pong check: byte %ld of %ld is wrong", i, u->bytes);
    }
}

static const long ucx_rate_sizes[] = {8, 4096}; /* ascending: the last sizes rbuf's slots */
#define UCX_RATE_MAX (ucx_rate_sizes[sizeof ucx_rate_sizes / sizeof *ucx_rate_sizes - 1])

static void ucx_post(struct ucx *u)
{
    if (u->mode != RATE_POSTED)
        return;
    for (int i = 0; i < u->window; i++)
        u->req[i] = ucx_recv(u, u->rbuf + (size_t)i * (size_t)u->bytes, (size_t)u->bytes, UTAG_DATA);
}

static void *ucx_am_send(struct ucx *u, const void *buf, size_t n)
{
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_AM_SEND_FLAG_EAGER};
    return ucp_am_send_nbx(u->ep, UCX_AM_ID, NULL, 0, buf, n, &prm);
}

/* The receiver's window: its posted receives complete (RATE_POSTED); each
 * message is probed out of UCX's unexpected queue and received into its
 * slot (RATE_PROBED); or the handler has copied every message (RATE_AM). */
static void ucx_take_window(const struct party *p, struct ucx *u)
{
    if (u->mode == RATE_POSTED) {
        for (int i = 0; i < u->window; i++)
            ucx_wait(p, u, u->req[i]);
    } else if (u->mode == RATE_PROBED) {
        for (int i = 0; i < u->window;) {
            ucp_tag_recv_info_t info;
            ucp_tag_message_h m = ucp_tag_probe_nb(u->worker, UTAG_DATA, UTAG_ALL, 1, &info);
            if (!m) {
                ucp_worker_progress(u->worker);
                continue;
            }
            ucp_request_param_t prm = {0};
            ucx_wait(p, u,
                     ucp_tag_msg_recv_nbx(u->worker, u->rbuf + (size_t)i * (size_t)u->bytes, info.length, m, &prm));
            i++;
        }
    } else {
        while (u->arrived < u->window)
            ucp_worker_progress(u->worker);
        if (u->am_lost)
            party_fail(p, "ucx: %d active messages came without their data, or too many", u->am_lost);
        u->arrived = 0;
    }
}

/* The rate case's structure (p2p.c): the receiver posts window k+1 before
 * acknowledging window k. */
static void ucx_rate_run(const struct party *p, void *ctx, long n)
{
    struct ucx *u = ctx;
    char ack = 0;
    if (!first_half(p))
        ucx_post(u);
    for (long w = 0; w < n; w++) {
        if (first_half(p)) {
            for (int i = 0; i < u->window; i++)
                u->req[i] = u->mode == RATE_AM ? ucx_am_send(u, u->buf, (size_t)u->bytes)
                                               : ucx_send(u, u->buf, (size_t)u->bytes, UTAG_DATA);
            for (int i = 0; i < u->window; i++)
                ucx_wait(p, u, u->req[i]);
            ucx_wait(p, u, ucx_recv(u, &ack, 1, UTAG_ACK));
        } else {
            ucx_take_window(p, u);
            if (w + 1 < n)
                ucx_post(u);
            ucx_wait(p, u, ucx_send(u, &ack, 1, UTAG_ACK));
        }
    }
}

void case_ucx(const struct party *p, const struct bench_opts *o)
{
    const long *sizes;
    int nsizes = bench_sizes(o, ucx_sizes, sizeof ucx_sizes / sizeof *ucx_sizes, &sizes);
    struct ucx u = {0};
    party_need_pairs(p, "ucx");
    if (p->team->nthreads != 1)
        party_fail(p, "ucx: run one thread per process (the pair partners must be in different processes)");
    ucx_setup(p, &u);
    u.buf = party_alloc(p, (size_t)bench_max_size(sizes, nsizes));
    for (int s = 0; s < nsizes; s++) {
        u.bytes = sizes[s];
        ucx_pingpong_check(p, &u);
        double one_way = bench_measure(p, o, 0.03, ucx_pingpong_run, &u) / 2;
        party_report(p, "ucx", "latency", sizes[s], one_way * 1e6, "us");
        party_report(p, "ucx", "bandwidth", sizes[s], (double)sizes[s] / one_way / 1e9, "GB/s");
    }
    u.window = o->window;
    u.req = party_alloc(p, sizeof(void *) * (size_t)u.window);
    u.rbuf = party_alloc(p, (size_t)UCX_RATE_MAX * (size_t)u.window);
    for (size_t s = 0; s < sizeof ucx_rate_sizes / sizeof *ucx_rate_sizes; s++) {
        u.bytes = ucx_rate_sizes[s];
        if (u.bytes > bench_max_size(sizes, nsizes))
            continue; /* u.buf is smaller */
        for (u.mode = RATE_POSTED; u.mode <= RATE_AM; u.mode++) {
            double per_window = bench_measure(p, o, 0.1, ucx_rate_run, &u);
            party_report(p, "ucx", rate_metric[u.mode], u.bytes,
                         (double)(p->team->nparties / 2) * u.window / per_window / 1e6, "Mmsg/s");
        }
    }
    free(u.req);
    free(u.rbuf);
    free(u.buf);
    ucx_teardown(p, &u);
}

#else

void case_ucx(const struct party *p, const struct bench_opts *o)
{
    (void)o;
    party_fail(p, "ucx: epmpi-bench was built without UCX (configure did not find it: apt-get install libucx-dev)");
}

#endif
