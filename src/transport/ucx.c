/* Endpoint messages between processes over UCX (see ucx.h); ucx_none.c
 * stands in when epmpi is built without UCX. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "transport/ucx.h"

#ifdef EP_HAVE_UCX

#include "core/bsend.h"
#include "base/copy.h"
#include "base/grow.h"
#include "abi/handle.h"
#include "transport/inbox.h"
#include "base/invariant.h"
#include "transport/net.h"
#include "transport/transport.h"
#include "core/proc.h"
#include "base/settings.h"
#include "base/thread.h"
#include "base/wait.h"

#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>

#define TAG_BITS 28
#define SRC_BITS 20 /* three channels of EP_CHAN_STRIDE ranks (match.h) */
#define SLOT_BITS 15
#define SRC_SHIFT TAG_BITS
#define SLOT_SHIFT (TAG_BITS + SRC_BITS)
#define TAG_MASK ((1ull << TAG_BITS) - 1)
#define SRC_MASK ((1ull << SRC_BITS) - 1)
#define MAX_SLOTS (1u << SLOT_BITS)
_Static_assert(3 * EP_CHAN_STRIDE <= (1 << SRC_BITS), "every channel's sources fit in a UCX tag");
#define NO_ADDR 0xffffffffu /* a rank without a slot: the communicator keeps the MPI path */
#define SWEEP_EVERY 32      /* ep_ucx_progress polls every worker once in this many calls */
#define MAX_DEFAULT_WORKERS 16
#define HELPER_SLEEP_MIN_NS 1000000L  /* the progress helper's sleep after a sweep that moved something */
#define HELPER_SLEEP_MAX_NS 32000000L /* and its longest, after sweeps that moved nothing */
_Static_assert(HELPER_SLEEP_MAX_NS < 1000000000L, "a helper's sleep is under a second (tv_nsec)");
/* The top bit of a UCX tag marks the data of a message whose envelope
 * went through a node inbox (see "node inboxes" below): then
 *   1 | sending world process (23 bits) | its worker (8) | a number (32). */
#define DATA_BIT (1ull << 63)
#define INBOX_BYTES (1u << 18) /* the ring of each worker's inbox */
#define INBOX_INLINE_MAX 4096  /* the largest payload that goes in an inbox record */
#define UCX_EVERY 16           /* a worker busy with its inbox still progresses UCX once in this many polls */
/* A record that could not fit an inbox would wait for room for ever. */
_Static_assert(EP_INBOX_HEADER + INBOX_INLINE_MAX <= INBOX_BYTES / 4 &&
                   EP_INBOX_HEADER + EP_INBOX_FOLLOWS_BYTES <= INBOX_BYTES / 4,
               "inbox records must stay within ep_inbox_max_payload");

int ep_ucx_on;

/* A connection a worker made: key is the peer worker's index p * wmax + w,
 * plus 1 (0: an empty slot). */
typedef struct conn_slot {
    uint32_t key;
    ucp_ep_h ep;
} conn_slot_t;

/* A worker and what belongs to it.  lock serialises every use of w (UCX
 * runs it in UCS_THREAD_MODE_SERIALIZED) and guards the fields after it. */
typedef struct ep_ucx_worker {
    _Alignas(64) ep_lock_t lock;
    ucp_worker_h w;
    int index;
    ep_endpoint_t **slots; /* [nslots] the receiving endpoint of each slot, NULL when free */
    unsigned nslots;
    unsigned *free_slots; /* [nfree] slots given back */
    size_t cap, cap_free; /* of slots and free_slots (room for nslots) */
    unsigned nfree;
    conn_slot_t *conns; /* [capconns] connections from w, made on first use (conn) */
    uint32_t nconns, capconns;
    ep_inbox_t *inbox;       /* in shared memory when the node has other processes, else NULL */
    uint32_t dseq;           /* numbers the data messages behind its inbox records */
    unsigned polls;          /* drains since UCX last progressed */
    _Atomic unsigned drains; /* every drain counts: the helper leaves alone a worker someone polls */
    unsigned helper_seen;    /* drains when the helper last looked (the helper's own) */
    int last_cpu;            /* the CPU + 1 of the sender of its inbox's last record, 0 unknown (wait.h) */
} ep_ucx_worker_t;

static ucp_context_h ctx;
static ep_ucx_worker_t *workers;
static int nworkers;
static int wmax;        /* the most workers any process has */
static char *addr_blob; /* every process's workers' addresses */
static pthread_t helper;
static int helper_on;
static _Atomic int helper_stop;
static size_t *addr_off; /* [world size * wmax] where each address starts in addr_blob */

/* The worker this thread polls at every progress (the one it last used),
 * the one whose lock it holds (while delivering, for instance), and its
 * count of progress calls. */
static __thread ep_ucx_worker_t *home EP_TLS;
static __thread ep_ucx_worker_t *held EP_TLS;
static __thread unsigned sweep EP_TLS;

static void lock_worker(ep_ucx_worker_t *u)
{
    ep_lock(&u->lock);
    held = u;
}

static void unlock_worker(ep_ucx_worker_t *u)
{
    held = NULL;
    ep_unlock(&u->lock);
}

/* Takes u's lock unless this thread holds it already: 1 when it took it
 * (to release), 0 when held already, -1 when another thread has it. */
static int try_hold(ep_ucx_worker_t *u)
{
    if (held == u)
        return 0;
    if (!ep_lock_try(&u->lock))
        return -1;
    held = u;
    return 1;
}

/* Like try_hold, but waits for the lock. */
static int hold(ep_ucx_worker_t *u)
{
    if (held == u)
        return 0;
    lock_worker(u);
    return 1;
}

static int poll_worker(ep_ucx_worker_t *u);

/* ---- the progress helper ----------------------------------------------------
 * Over MPICH, a message's PMPI parts move whenever any thread is inside
 * MPICH, so a buffered send completes while its sender blocks in, say, a
 * PMPI_Recv on a classic communicator.  A UCX worker moves only when it
 * is polled, and a rendezvous needs its sender's worker.  So a helper
 * thread sweeps the requests handed to the progress engine and every
 * worker that nobody polled since its last sweep (never waiting for a
 * lock another thread holds).  It sleeps the longest at first, then as
 * ep_fallback_sleep (wait.h) says: on a machine with few cores, a wake
 * every millisecond with nothing to do costs large messages bandwidth
 * (the time of the thread it preempted). */
static void *helper_main(void *arg)
{
    (void)arg;
    long sleep_ns = HELPER_SLEEP_MAX_NS;
    while (!atomic_load_explicit(&helper_stop, memory_order_relaxed)) {
        struct timespec t = {0, sleep_ns};
        nanosleep(&t, NULL);
        int moved = 0;
        for (int i = 0; i < nworkers; i++) {
            ep_ucx_worker_t *u = &workers[i];
            unsigned d = atomic_load_explicit(&u->drains, memory_order_relaxed);
            if (d == u->helper_seen) { /* nobody else polls it */
                moved |= poll_worker(u);
                d = atomic_load_explicit(&u->drains, memory_order_relaxed);
            }
            u->helper_seen = d;
        }
        if (ep_progress_detached()) {
            ep_progress();
            moved = 1;
        }
        sleep_ns = ep_fallback_sleep(sleep_ns, moved, HELPER_SLEEP_MIN_NS, HELPER_SLEEP_MAX_NS);
    }
    return NULL;
}

/* ---- node inboxes -------------------------------------------------------------
 * Between two processes of one node, UCX's shared-memory transports cost
 * more than the copies themselves (tag matching, an unexpected queue and
 * a probe in UCX, then epmpi's own matching).  So each worker has an
 * inbox (inbox.h) in memory the processes of the node share, and every
 * message from another process of the node to an endpoint of that worker
 * goes through it: up to INBOX_INLINE_MAX bytes in the record (a
 * standard, ready or buffered send is then complete), else the record
 * names a UCX message (DATA_BIT) that carries the data, which the
 * receiver takes once the record is matched: UCX's rendezvous moves a
 * large payload with one copy, and a synchronous send completes on that
 * match.  One pair of endpoints thus always uses one way, and its
 * messages keep their order.
 *
 * Each process offers its inboxes as POSIX shared memory of its own
 * (shm_open, named by proc.h), made and emptied before the start-up
 * exchange; after it, each maps the others' of its node, and once every
 * process has, each removes its name (the memory stays until the last
 * process unmaps it).  No MPI communicator or window is made for it. */
static char *node_mine;                     /* this process's inboxes */
static size_t node_mine_len;                /* their bytes */
static char **node_base;                    /* [node size] each node process's inboxes, NULL for this process */
static size_t *node_len;                    /* [node size] the bytes mapped there */
static _Atomic uint64_t *node_seen;         /* [node size * wmax] this process's looks at each inbox's head */
static size_t inbox_stride;                 /* bytes between two workers' inboxes */
static int node_procs;                      /* processes of this node, 0 without inboxes */
static int node_named;                      /* this process's name is still in /dev/shm */
static const char *node_off = "UCX is off"; /* why there are none, for EPMPI_VERBOSE */

static void node_unname(void)
{
    if (!node_named)
        return;
    char name[64];
    ep_proc_node_shm_name(ep_proc_node_self(), name, sizeof name);
    shm_unlink(name);
    node_named = 0;
}

static void node_stop(void)
{
    node_unname();
    for (int i = 0; node_base && i < ep_proc_node_size(); i++)
        if (node_base[i])
            munmap(node_base[i], node_len[i]);
    if (node_mine)
        munmap(node_mine, node_mine_len);
    node_mine = NULL;
    for (int i = 0; workers && i < nworkers; i++)
        workers[i].inbox = NULL;
    free(node_base);
    free(node_len);
    free(node_seen);
    node_base = NULL;
    node_len = NULL;
    node_seen = NULL;
    node_procs = 0;
    ep_wait_cpu_hints = 0;
}

/* Maps size bytes of the shared memory called name, made here when
 * create; NULL when it cannot. */
static char *shm_map(const char *name, size_t size, int create)
{
    int fd = create ? shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600) : shm_open(name, O_RDWR, 0);
    if (fd < 0 && create && errno == EEXIST) { /* left behind by a dead process that had this pid */
        shm_unlink(name);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0)
        return NULL;
    void *m = MAP_FAILED;
    struct stat st;
    if (create ? !ftruncate(fd, (off_t)size) : !fstat(fd, &st) && (size_t)st.st_size >= size)
        m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED && create)
        shm_unlink(name);
    return m == MAP_FAILED ? NULL : m;
}

/* Makes this process's inboxes, empty, for the other processes of its
 * node; 1 when they are there to map. */
static int node_offer(void)
{
    inbox_stride = (ep_inbox_size(INBOX_BYTES) + EP_INBOX_LINE - 1) & ~(size_t)(EP_INBOX_LINE - 1);
    if (!ep_config.shm) {
        node_off = "EPMPI_SHM=0";
        return 0;
    }
    if (ep_proc_node_size() < 2) {
        node_off = "no other process on this node";
        return 0;
    }
    char name[64];
    ep_proc_node_shm_name(ep_proc_node_self(), name, sizeof name);
    if (ep_proc_node_self() == 0)
        ep_proc_node_shm_sweep();
    node_mine_len = inbox_stride * (size_t)nworkers;
    if (!(node_mine = shm_map(name, node_mine_len, 1))) {
        node_off = "this process could not make shared memory for them";
        return 0;
    }
    node_named = 1;
    for (int i = 0; i < nworkers; i++)
        ep_inbox_init((ep_inbox_t *)(node_mine + (size_t)i * inbox_stride), INBOX_BYTES);
    return 1;
}

/* After the start-up exchange, in which the processes of the node said
 * whether they offer inboxes (node_workers[i]: the workers of node process
 * i, 0 when it offers none): maps them when all do, which every process of
 * the node sees alike.  Collective over MPI_COMM_WORLD: a process that
 * could not map a peer's inboxes goes without, and so must everyone (a
 * rank sends to a process through an inbox exactly when that process sends
 * to it through one). */
static void node_start(const int *node_workers)
{
    int n = ep_proc_node_size(), me = ep_proc_node_self(), usable = node_mine != NULL, mapped = 1, all_mapped = 0;
    MPI_Request req;
    for (int i = 0; usable && i < n; i++)
        if (!node_workers[i]) {
            node_off = "another process of this node has none";
            usable = 0;
        }
    if (usable) {
        node_base = calloc((size_t)n, sizeof *node_base);
        node_len = calloc((size_t)n, sizeof *node_len);
        node_seen = calloc((size_t)n * (size_t)wmax, sizeof *node_seen);
        if (!node_base || !node_len || !node_seen)
            mapped = 0;
        for (int i = 0; mapped && i < n; i++) {
            char name[64];
            if (i == me)
                continue;
            ep_proc_node_shm_name(i, name, sizeof name);
            node_len[i] = inbox_stride * (size_t)node_workers[i];
            if (!(node_base[i] = shm_map(name, node_len[i], 0)))
                mapped = 0;
        }
        if (!mapped)
            node_off = "this process could not map another's";
    }
    if (ep_wait_pmpi_started(PMPI_Iallreduce(&mapped, &all_mapped, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req), &req))
        all_mapped = 0;
    node_unname(); /* everyone who maps it has */
    if (!usable || !all_mapped) {
        if (usable && mapped)
            node_off = "a process of the job could not map its node's";
        node_stop();
        return;
    }
    for (int i = 0; i < nworkers; i++)
        workers[i].inbox = (ep_inbox_t *)(node_mine + (size_t)i * inbox_stride);
    node_procs = n;
    ep_wait_cpu_hints = 1; /* inbox records carry their senders' CPUs */
}

/* ---- start-up and shutdown ------------------------------------------------- */

static int default_workers(void)
{
    if (ep_config.ucx_workers)
        return ep_config.ucx_workers;
    cpu_set_t cpus;
    int n = sched_getaffinity(0, sizeof cpus, &cpus) ? 1 : CPU_COUNT(&cpus);
    if (ep_config.endpoints > 0 && ep_config.endpoints < n)
        n = ep_config.endpoints;
    return n < 1 ? 1 : n > MAX_DEFAULT_WORKERS ? MAX_DEFAULT_WORKERS : n;
}

/* What each process says of its start, gathered once: whether UCX started,
 * its workers, whether it offers inboxes to its node, and the bytes of its
 * addresses (each process's part of the address exchange starts with the
 * length of each worker's address). */
typedef struct ucx_record {
    int32_t ok, nworkers, offered, bytes;
} ucx_record_t;

/* Exchanges every worker's address over MPI_COMM_WORLD (collective): 1 in
 * *all_ok when every process started, and in node_workers[i] the workers
 * that node process i offers inboxes for (0: none).  A failure of UCX
 * itself leaves its status in *st. */
static ep_status_t exchange_addresses(int ok, int offered, int *node_workers, int *all_ok, ucs_status_t *st)
{
    int np = ep_proc_world_size();
    ucp_address_t **a = calloc((size_t)nworkers, sizeof *a);
    size_t *len = calloc((size_t)nworkers, sizeof *len), total = sizeof(uint32_t) * (size_t)nworkers;
    ucx_record_t *rec = malloc(sizeof *rec * (size_t)np);
    int *cnt = malloc(sizeof *cnt * (size_t)np), *dsp = malloc(sizeof *dsp * (size_t)np);
    char *mine = NULL;
    ep_status_t rc = EP_ERR_NO_MEM;
    MPI_Request req;

    *all_ok = 0;
    if (!rec || !cnt || !dsp) /* without them this process cannot take part, and the others would wait */
        ep_fatal(MPI_ERR_NO_MEM, "out of memory starting UCX in a job of %d processes", np);
    if (!a || !len)
        ok = 0;
    for (int i = 0; ok && i < nworkers; i++) {
        if ((*st = ucp_worker_get_address(workers[i].w, &a[i], &len[i])) != UCS_OK) {
            a[i] = NULL;
            ok = 0, rc = EP_ERR_OTHER; /* the start-up message gives *st */
            break;
        }
        total += len[i];
    }
    if (ok && (total > INT32_MAX || !(mine = malloc(total))))
        ok = 0;
    for (size_t i = 0, o = sizeof(uint32_t) * (size_t)nworkers; mine && i < (size_t)nworkers; o += len[i], i++) {
        uint32_t l = (uint32_t)len[i];
        memcpy(mine + sizeof l * i, &l, sizeof l);
        memcpy(mine + o, a[i], len[i]);
    }
    ucx_record_t me = {ok, nworkers, offered, ok ? (int32_t)total : 0};
    rc = EP_ERR_INTERN;
    if (ep_wait_pmpi_started(
            PMPI_Iallgather(&me, (int)sizeof me, MPI_BYTE, rec, (int)sizeof me, MPI_BYTE, MPI_COMM_WORLD, &req), &req))
        goto out;
    long all = 0;
    int everyone = 1;
    for (int p = 0; p < np; p++) {
        everyone &= rec[p].ok;
        wmax = rec[p].nworkers > wmax ? rec[p].nworkers : wmax;
        dsp[p] = (int)all;
        cnt[p] = rec[p].bytes;
        all += rec[p].bytes;
        int i = ep_proc_node_index(p);
        if (i >= 0 && node_workers)
            node_workers[i] = rec[p].offered ? rec[p].nworkers : 0;
    }
    rc = EP_OK;
    if (!everyone)
        goto out; /* every process saw the same records */
    rc = EP_ERR_NO_MEM;
    if (all > INT_MAX || !(addr_blob = malloc(all ? (size_t)all : 1)) ||
        !(addr_off = malloc(sizeof *addr_off * (size_t)np * (size_t)wmax)))
        goto out; /* MPICH's own gather could not count so far either */
    rc = EP_ERR_INTERN;
    if (ep_wait_pmpi_started(
            PMPI_Iallgatherv(mine, (int)total, MPI_BYTE, addr_blob, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD, &req), &req))
        goto out;
    for (int p = 0; p < np; p++) {
        size_t o = (size_t)dsp[p] + sizeof(uint32_t) * (size_t)rec[p].nworkers;
        for (int w = 0; w < wmax; w++) {
            uint32_t l = 0;
            if (w < rec[p].nworkers)
                memcpy(&l, addr_blob + dsp[p] + sizeof l * (size_t)w, sizeof l);
            addr_off[(size_t)p * wmax + w] = o;
            o += l;
        }
    }
    *all_ok = 1;
    rc = EP_OK;
out:
    for (int i = 0; a && i < nworkers; i++)
        if (a[i])
            ucp_worker_release_address(workers[i].w, a[i]);
    free(a);
    free(len);
    free(rec);
    free(cnt);
    free(dsp);
    free(mine);
    return rc;
}

/* ---- start-up ------------------------------------------------------------------
 * UCX leaves a transport that can wake its worker (an event on a file
 * descriptor) unpolled until its first wake-up: its adaptive progress.
 * Its shared-memory transports wake the receiving worker through a Unix
 * socket in the abstract namespace, which belongs to a network namespace.
 * UCX takes processes with one boot id for one machine and connects them
 * through shared memory even when they live in different network
 * namespaces (containers on one machine, make check-multinode's simulated
 * hosts): the wake-up then never arrives, and a message waits in the
 * receiver's shared memory for ever, unless the receiver happened to have
 * connected to some process that way itself.  So where this machine's
 * processes span network namespaces, epmpi's UCX polls every transport. */
static int polls_all; /* adaptive progress turned off for that reason, for EPMPI_VERBOSE */

static ucp_ep_h conn(ep_ucx_worker_t *u, int p, int w);

ep_status_t ep_ucx_init(char *err, size_t errlen)
{
    /* Each worker is serialised by its own lock, but different threads
     * drive different workers at once, and the workers share the
     * context's resources (from UCX 1.14 the registration cache of every
     * zero-copy rendezvous): the context must guard them itself. */
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
                           .features = UCP_FEATURE_TAG,
                           .mt_workers_shared = 1};
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SERIALIZED};
    ucs_status_t st = UCS_OK;
    ep_status_t rc = EP_OK;
    int ok = 1, all_ok = 0, *node_workers = NULL;

    if (ep_config.transport == EP_TRANSPORT_MPI || ep_proc_world_size() < 2)
        return EP_OK;
    nworkers = default_workers();
    /* UCX's settings for epmpi alone: EPMPI_UCX_X overrides UCX_X (which
     * MPICH's own UCX context reads too), e.g. EPMPI_UCX_TLS. */
    ucp_config_t *cfg = NULL;
    if ((st = ucp_config_read("EPMPI", NULL, &cfg)) == UCS_OK && ep_proc_spans_namespaces() &&
        !getenv("EPMPI_UCX_ADAPTIVE_PROGRESS") && !getenv("UCX_ADAPTIVE_PROGRESS"))
        polls_all = ucp_config_modify(cfg, "ADAPTIVE_PROGRESS", "n") == UCS_OK;
    if (st != UCS_OK || (st = ucp_init(&params, cfg, &ctx)) != UCS_OK) {
        ctx = NULL;
        ok = 0;
    }
    if (cfg)
        ucp_config_release(cfg);
    /* Aligned as the type says: each worker's lock has a cache line. */
    if (ok && !(workers = aligned_alloc(_Alignof(ep_ucx_worker_t), sizeof *workers * (size_t)nworkers)))
        ok = 0;
    if (workers)
        memset(workers, 0, sizeof *workers * (size_t)nworkers);
    for (int i = 0; ok && i < nworkers; i++) {
        workers[i].index = i;
        if ((st = ucp_worker_create(ctx, &wp, &workers[i].w)) != UCS_OK) {
            workers[i].w = NULL;
            ok = 0;
        }
    }
    /* A job runs one transport: every process must have started. */
    if (!(node_workers = calloc((size_t)ep_proc_node_size(), sizeof *node_workers)))
        ok = 0;
    rc = exchange_addresses(ok, ok && node_offer(), node_workers, &all_ok, &st);
    if (!all_ok) {
        free(node_workers);
        ep_ucx_finalize();
        if (ep_config.transport != EP_TRANSPORT_UCX)
            return EP_OK; /* auto: the MPI path */
        snprintf(err, errlen, "EPMPI_TRANSPORT=ucx, but UCX did not start in every process (%s)",
                 st != UCS_OK ? ucs_status_string(st)
                 : rc         ? ep_status_text(rc)
                              : "in another process");
        return EP_ERR_OTHER;
    }
    node_start(node_workers);
    free(node_workers);
    ep_ucx_on = 1;
    atomic_store(&helper_stop, 0);
    helper_on = !pthread_create(&helper, NULL, helper_main, NULL);
    return EP_OK;
}

void ep_ucx_stop_helper(void)
{
    if (helper_on) {
        atomic_store(&helper_stop, 1);
        pthread_join(helper, NULL);
        helper_on = 0;
    }
}

/* Drives worker u until q, what a _nbx call returned, is over, then
 * frees it (NULL: over at once; an error: nothing started).  Only where
 * waiting is rare: shutdown, a dropped message. */
static void finish_nbx(ep_ucx_worker_t *u, void *q)
{
    if (!q || UCS_PTR_IS_ERR(q))
        return;
    EP_BACKOFF_UNTIL((ucp_worker_progress(u->w), ucp_request_check_status(q) != UCS_INPROGRESS));
    ucp_request_free(q);
}

void ep_ucx_finalize(void)
{
    ep_ucx_stop_helper();
    node_stop();
    for (int i = 0; workers && i < nworkers; i++) {
        ep_ucx_worker_t *u = &workers[i];
        for (uint32_t k = 0; k < u->capconns; k++) {
            if (!u->conns[k].key)
                continue;
            ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE};
            finish_nbx(u, ucp_ep_close_nbx(u->conns[k].ep, &prm));
        }
        free(u->conns);
        free(u->slots);
        free(u->free_slots);
        if (u->w)
            ucp_worker_destroy(u->w);
    }
    free(workers);
    workers = NULL;
    nworkers = 0;
    if (ctx)
        ucp_cleanup(ctx);
    ctx = NULL;
    free(addr_blob);
    free(addr_off);
    addr_blob = NULL;
    addr_off = NULL;
    wmax = 0;
    ep_ucx_on = 0;
}

/* ---- connections ---------------------------------------------------------------
 * Each worker keeps the connections it made in an open-addressing table
 * of the peers it used (conn_slot_t; a table by every worker of the job
 * would cost 8 P W bytes per worker, 20 MB per process at 10^4 processes
 * of 16 workers). */

static inline uint32_t conn_hash(uint32_t key) { return key * 2654435761u; }

/* Puts e under key into u's table, which has room (u's lock held). */
static void conn_put(ep_ucx_worker_t *u, uint32_t key, ucp_ep_h e)
{
    uint32_t mask = u->capconns - 1, i = conn_hash(key) & mask;
    while (u->conns[i].key)
        i = (i + 1) & mask;
    u->conns[i] = (conn_slot_t){key, e};
    u->nconns++;
}

/* Room for one more connection in u's table, kept at most half full; 0
 * when out of memory (u's lock held). */
static int conn_room(ep_ucx_worker_t *u)
{
    if (2 * (u->nconns + 1) <= u->capconns)
        return 1;
    uint32_t oldcap = u->capconns, cap = oldcap ? 2 * oldcap : 4; /* small: tests of a few processes grow it */
    conn_slot_t *old = u->conns;
    if (!(u->conns = calloc(cap, sizeof *u->conns))) {
        u->conns = old;
        return 0;
    }
    u->capconns = cap;
    u->nconns = 0;
    for (uint32_t k = 0; k < oldcap; k++)
        if (old[k].key)
            conn_put(u, old[k].key, old[k].ep);
    free(old);
    return 1;
}

/* The connection from u to worker w of world process p, made on first
 * use, or NULL; u's lock held. */
static ucp_ep_h conn(ep_ucx_worker_t *u, int p, int w)
{
    EP_ASSERT(ep_lock_held(&u->lock));
    uint32_t key = (uint32_t)((size_t)p * (size_t)wmax + (size_t)w) + 1;
    for (uint32_t mask = u->capconns - 1, i = conn_hash(key) & mask; u->capconns && u->conns[i].key; i = (i + 1) & mask)
        if (u->conns[i].key == key)
            return u->conns[i].ep;
    ucp_ep_h e;
    ucp_ep_params_t prm = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                           .address = (ucp_address_t *)(addr_blob + addr_off[(size_t)p * wmax + w])};
    if (!conn_room(u) || ucp_ep_create(u->w, &prm, &e) != UCS_OK)
        return NULL;
    conn_put(u, key, e);
    return e;
}

/* A message's UCX tag (ucx.h): the receiver's slot, the sender's rank and
 * the user's tag; and the two last read back. */
static inline ucp_tag_t msg_tag(uint32_t slot, int src, int tag)
{
    return (ucp_tag_t)(slot & (MAX_SLOTS - 1)) << SLOT_SHIFT | (ucp_tag_t)(uint32_t)src << SRC_SHIFT |
           (ucp_tag_t)(uint32_t)tag;
}
/* The tag of the data behind u's next inbox envelope (DATA_BIT above);
 * u's lock held. */
static inline ucp_tag_t data_tag(ep_ucx_worker_t *u)
{
    EP_ASSERT(ep_lock_held(&u->lock));
    return DATA_BIT | (ucp_tag_t)ep_proc_world_rank() << 40 | (ucp_tag_t)u->index << 32 | u->dseq++;
}
static inline int tag_source(ucp_tag_t t) { return (int)((t >> SRC_SHIFT) & SRC_MASK); }
static inline int tag_user(ucp_tag_t t) { return (int)(t & TAG_MASK); }

/* The (worker, slot) of rank position idx of c: a duplicate's slots are
 * its parent's plus its delta (below). */
static inline uint32_t rank_addr(const ep_comm_t *c, int idx) { return c->ucx_addr[idx] + c->ucx_delta; }

/* The connection from u to the worker of rank position idx of c, or NULL;
 * u's lock held. */
static ucp_ep_h peer_conn(ep_ucx_worker_t *u, const ep_comm_t *c, int idx)
{
    EP_ASSERT(ep_lock_held(&u->lock));
    return conn(u, c->proc_world[c->ranks[idx].proc], (int)(rank_addr(c, idx) >> SLOT_BITS));
}

void ep_ucx_describe(char *buf, size_t len)
{
    if (!ep_ucx_on) {
        snprintf(buf, len, "transport mpi");
        return;
    }
    /* The UCX transports of a connection from worker 0 to the next
     * process, from ucp_ep_print_info's lanes ("lane[0]:  3:sysv/memory.0
     * md[2] ..."): sysv/memory, cma/memory, tcp/lo, ..., each once. */
    char tls[256] = "", *text = NULL;
    size_t tlen = 0;
    int peer = (ep_proc_world_rank() + 1) % ep_proc_world_size();
    lock_worker(&workers[0]);
    ucp_ep_h e = conn(&workers[0], peer, 0);
    FILE *f = e ? open_memstream(&text, &tlen) : NULL;
    if (f) {
        ucp_ep_print_info(e, f);
        fclose(f);
        for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            char *tl = strstr(line, "lane[") ? strstr(line, "]:") : NULL;
            if (!tl)
                continue;
            tl += 2 + strspn(tl + 2, " ");
            tl += strspn(tl, "0123456789:");
            size_t n = strcspn(tl, " .");
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)n, tl);
            if (*name && !strstr(tls, name) && strlen(tls) + n + 2 < sizeof tls)
                snprintf(tls + strlen(tls), sizeof tls - strlen(tls), "%s%s", *tls ? " " : "", name);
        }
        free(text);
    }
    unlock_worker(&workers[0]);
    /* As UCX reports it: whether the workers' shared context is guarded
     * for threads (ep_ucx_init asks for it). */
    ucp_context_attr_t ca = {.field_mask = UCP_ATTR_FIELD_THREAD_MODE};
    const char *shared =
        ucp_context_query(ctx, &ca) == UCS_OK && ca.thread_mode == UCS_THREAD_MODE_MULTI ? "thread-safe" : "unguarded";
    const char *polled = polls_all ? ", all polled (processes of this machine in other network namespaces)" : "";
    if (node_procs)
        snprintf(buf, len,
                 "transport ucx (%d workers, %s context; UCX transports to process %d: %s%s; node inboxes in shared "
                 "memory to the other processes of this node)",
                 nworkers, shared, peer, *tls ? tls : "unknown", polled);
    else
        snprintf(buf, len,
                 "transport ucx (%d workers, %s context; UCX transports to process %d: %s%s; no node inboxes: %s)",
                 nworkers, shared, peer, *tls ? tls : "unknown", polled, node_off);
}

/* ---- communicators ---------------------------------------------------------- */

/* The worker of a local endpoint: endpoints of one identity (a rank and
 * its duplicates) share one, neighbouring identities (the threads of a
 * process) get different ones. */
static ep_ucx_worker_t *worker_for(const ep_comm_t *c, const ep_endpoint_t *ep)
{
    const ep_gid_t *g = &c->gids[ep->rank];
    return &workers[(g->index + g->origin % 7919u) % (uint64_t)nworkers];
}

/* A free slot of u for ep, or -1; u's lock held. */
static int slot_take(ep_ucx_worker_t *u, ep_endpoint_t *ep)
{
    EP_ASSERT(ep_lock_held(&u->lock));
    unsigned s;
    if (u->nfree) {
        s = u->free_slots[--u->nfree];
    } else {
        if (u->nslots == MAX_SLOTS)
            return -1;
        if (!EP_GROW(u->slots, u->nslots, u->cap, 64) || !EP_GROW(u->free_slots, u->nslots, u->cap_free, 64))
            return -1;
        s = u->nslots++;
    }
    u->slots[s] = ep;
    return (int)s;
}

static void slot_give(ep_ucx_worker_t *u, int s)
{
    int took = hold(u);
    u->slots[s] = NULL;
    u->free_slots[u->nfree++] = (unsigned)s;
    if (took)
        unlock_worker(u);
}

/* Takes slot s of u for ep, if free; u's lock held.  0, or -1. */
static int slot_take_at(ep_ucx_worker_t *u, unsigned s, ep_endpoint_t *ep)
{
    EP_ASSERT(ep_lock_held(&u->lock));
    if (s >= MAX_SLOTS)
        return -1;
    if (s < u->nslots) {
        if (u->slots[s])
            return -1;
        for (unsigned k = 0; k < u->nfree; k++) /* it is on the free list: off it */
            if (u->free_slots[k] == s) {
                u->free_slots[k] = u->free_slots[--u->nfree];
                break;
            }
    } else {
        while (u->cap <= s) /* (each call doubles once) */
            if (!ep_grow_room(&u->slots, sizeof *u->slots, u->cap, &u->cap, 64))
                return -1;
        while (u->cap_free <= s)
            if (!ep_grow_room(&u->free_slots, sizeof *u->free_slots, u->cap_free, &u->cap_free, 64))
                return -1;
        for (unsigned k = u->nslots; k < s; k++) { /* the ones skipped are free */
            u->slots[k] = NULL;
            u->free_slots[u->nfree++] = k;
        }
        u->nslots = s + 1;
    }
    u->slots[s] = ep;
    return 0;
}

/* ---- a communicator's addresses ------------------------------------------------
 * A communicator learns the (worker, slot) of each of its ranks in an
 * allgather over its processes: 4 bytes a rank.  A duplicate (and a
 * window's communicator) has its parent's ranks on the same workers
 * (worker_for), so it takes instead, on each rank's worker, the slot of
 * the parent's rank plus one delta that every process agreed on: an
 * allreduce of the deltas no process can use (a bitmap of MAX_SLOTS
 * bits), then one of whether every process could take the slots (another
 * communicator's construction may have taken one meanwhile); where one
 * could not, all give theirs back and do the allgather.  Its addresses
 * are then its parent's table and the delta: nothing per rank. */
#define DELTA_WORDS (MAX_SLOTS / 64)

/* The exchange while it runs (ep_ucx_comm_start to ep_ucx_comm_finish). */
typedef struct ep_ucx_setup {
    int stage;                 /* STAGE_* */
    uint32_t *mine;            /* [nlocal] this process's ranks', NO_ADDR without a slot */
    uint32_t *all;             /* [size] everyone's, in process order */
    int *dsp;                  /* [nprocs] where each process's start in all */
    const uint32_t *base;      /* the parent's addresses (a duplicate's way) */
    uint64_t bad[DELTA_WORDS]; /* deltas that some process cannot use */
    int delta;                 /* the one taken */
    int failed;                /* some process could not take its slots */
} ep_ucx_setup_t;
enum { STAGE_GATHER, STAGE_DELTAS, STAGE_TAKEN };

static void setup_free(ep_comm_t *c)
{
    ep_ucx_setup_t *x = c->ucx_setup;
    if (x) {
        free(x->mine);
        free(x->all);
        free(x->dsp);
        free(x);
    }
    c->ucx_setup = NULL;
}

/* Gives back the slots of c's local endpoints. */
static void slots_give(ep_comm_t *c)
{
    for (int i = 0; c->local && i < c->nlocal; i++)
        if (c->local[i].ucx_w) {
            slot_give(c->local[i].ucx_w, c->local[i].ucx_slot);
            c->local[i].ucx_w = NULL;
        }
}

/* The (worker, slot) local endpoint i of c has in base. */
static uint32_t base_addr(const ep_comm_t *c, const uint32_t *base, int i)
{
    return base[c->proc_ranks[c->proc_first[c->myproc] + i]];
}

/* The deltas this process cannot use (x->bad): those that put a local
 * endpoint's slot on a used one of its worker, or past the last, and all
 * of them where an endpoint is not on its parent rank's worker.  0, or -1
 * when out of memory. */
static int deltas_bad(ep_comm_t *c, ep_ucx_setup_t *x)
{
    /* each worker's slots in use: [w][DELTA_WORDS + 1], the last word 0 */
    uint64_t(*used)[DELTA_WORDS + 1] = calloc((size_t)nworkers, sizeof *used);
    if (!used)
        return -1;
    for (int w = 0; w < nworkers; w++) {
        ep_ucx_worker_t *u = &workers[w];
        int took = hold(u);
        for (unsigned k = 0; k < u->nslots; k++)
            if (u->slots[k])
                used[w][k / 64] |= 1ull << (k % 64);
        if (took)
            unlock_worker(u);
    }
    memset(x->bad, 0, sizeof x->bad);
    for (int i = 0; i < c->nlocal; i++) {
        int w = worker_for(c, &c->local[i])->index;
        uint32_t a = base_addr(c, x->base, i);
        if (a >> SLOT_BITS != (uint32_t)w) { /* the delta means nothing on another worker */
            memset(x->bad, 0xff, sizeof x->bad);
            break;
        }
        /* bad |= used >> b; slots from MAX_SLOTS on do not exist */
        unsigned b = a & (MAX_SLOTS - 1), q = b / 64, r = b % 64;
        for (unsigned j = 0; j < DELTA_WORDS; j++) {
            uint64_t v = j + q < DELTA_WORDS ? used[w][j + q] >> r : ~0ull;
            if (r && j + q + 1 < DELTA_WORDS)
                v |= used[w][j + q + 1] << (64 - r);
            else if (r)
                v |= ~0ull << (64 - r);
            x->bad[j] |= v;
        }
    }
    free(used);
    return 0;
}

/* The first delta no process ruled out, or -1. */
static int delta_pick(const ep_ucx_setup_t *x)
{
    for (unsigned j = 0; j < DELTA_WORDS; j++)
        if (~x->bad[j])
            return (int)(j * 64) + __builtin_ctzll(~x->bad[j]);
    return -1;
}

/* Local endpoint i of c gets slot s of its worker (s < 0: any free one);
 * 0, or -1 when there is none (ep->ucx_w NULL). */
static int slot_set(ep_comm_t *c, int i, int s)
{
    ep_endpoint_t *ep = &c->local[i];
    ep_ucx_worker_t *u = worker_for(c, ep);
    int took = hold(u);
    if (s < 0)
        s = slot_take(u, ep);
    else if (slot_take_at(u, (unsigned)s, ep))
        s = -1;
    if (took)
        unlock_worker(u);
    ep->ucx_w = s >= 0 ? u : NULL;
    ep->ucx_slot = s;
    return s >= 0 ? 0 : -1;
}

/* The allgather's way: a free slot for each local endpoint, then the
 * exchange of everyone's. */
static ep_status_t gather_start(ep_comm_t *c, int ok, MPI_Request *req)
{
    ep_ucx_setup_t *x = c->ucx_setup;
    int n = c->nlocal;
    x->stage = STAGE_GATHER;
    if (!(x->mine = malloc(sizeof *x->mine * (size_t)(n ? n : 1))) ||
        !(x->all = malloc(sizeof *x->all * (size_t)c->size)) || !(x->dsp = malloc(sizeof *x->dsp * (size_t)c->nprocs)))
        /* Every process must take part in the exchange, or the others
         * would wait for it. */
        ep_fatal(MPI_ERR_NO_MEM, "out of memory setting up a communicator of %d ranks for UCX", c->size);
    for (int i = 0; i < n; i++) {
        ep_endpoint_t *ep = &c->local[i];
        if (ok)
            slot_set(c, i, -1);
        else
            ep->ucx_w = NULL, ep->ucx_slot = -1;
        x->mine[i] = ep->ucx_w ? (uint32_t)ep->ucx_w->index << SLOT_BITS | (uint32_t)ep->ucx_slot : NO_ADDR;
    }
    for (int p = 0; p < c->nprocs; p++)
        x->dsp[p] = c->proc_first[p];
    if (PMPI_Iallgatherv(x->mine, n, MPI_UINT32_T, x->all, c->proc_nlocal, x->dsp, MPI_UINT32_T, c->pcomm, req) !=
        MPI_SUCCESS) {
        *req = MPI_REQUEST_NULL;
        slots_give(c);
        setup_free(c);
        return EP_ERR_INTERN;
    }
    return EP_OK;
}

ep_status_t ep_ucx_comm_start(ep_comm_t *c, MPI_Request *req)
{
    int ok = c->size <= EP_CHAN_STRIDE; /* its channels fit in SRC_BITS (match.h) */
    ep_ucx_setup_t *x;

    *req = MPI_REQUEST_NULL;
    c->ucx = 0;
    if (!ep_ucx_on)
        return EP_OK;
    if (!(c->ucx_setup = x = calloc(1, sizeof *x)))
        ep_fatal(MPI_ERR_NO_MEM, "out of memory setting up a communicator of %d ranks for UCX", c->size);
    /* Every process sees the same shared tables (they are the parent's), so
     * all take the same way. */
    if (!ok || !(x->base = ep_comm_shared(c, EP_SHARED_UCX_ADDRS)))
        return gather_start(c, ok, req);
    x->stage = STAGE_DELTAS;
    if (deltas_bad(c, x)) /* (every delta is ruled out: the allgather's way, for all) */
        memset(x->bad, 0xff, sizeof x->bad);
    if (PMPI_Iallreduce(MPI_IN_PLACE, x->bad, DELTA_WORDS, MPI_UINT64_T, MPI_BOR, c->pcomm, req) != MPI_SUCCESS) {
        *req = MPI_REQUEST_NULL;
        setup_free(c);
        return EP_ERR_INTERN;
    }
    return EP_OK;
}

/* Where a message to each rank of c goes: the inbox of its worker when
 * it is in another process of this node (with this process's look at
 * that inbox's head), else NULL.  Worked out once here, not per message
 * (6 dependent loads and two multiplications a send). */
typedef struct ep_ucx_peer {
    ep_inbox_t *inbox;
    _Atomic uint64_t *seen;
} ep_ucx_peer_t;

/* The table follows from the ranks' processes and workers, and a rank's
 * worker from its identity (worker_for), so duplicates share their
 * parent's (ep_comm_shared): 16 bytes a rank less per duplicate. */
static void peers_find(ep_comm_t *c)
{
    if (!node_base || (c->ucx_peer = ep_comm_shared(c, EP_SHARED_UCX_PEERS)))
        return;
    ep_ucx_peer_t *t = calloc((size_t)c->size, sizeof *t), *held;
    if (!t)
        ep_fatal(MPI_ERR_NO_MEM, "out of memory setting up a communicator of %d ranks for UCX", c->size);
    for (int idx = 0; idx < c->size; idx++) {
        int p = ep_proc_node_index(c->proc_world[c->ranks[idx].proc]);
        unsigned w = c->ucx_addr[idx] >> SLOT_BITS;
        if (p >= 0 && node_base[p]) {
            t[idx].inbox = (ep_inbox_t *)(node_base[p] + (size_t)w * inbox_stride);
            t[idx].seen = &node_seen[(size_t)p * (size_t)wmax + w];
        }
    }
    if ((held = ep_comm_share(c, EP_SHARED_UCX_PEERS, t)) && held != t)
        free(t); /* another duplicate's, the same */
    c->ucx_peer = held ? held : t;
}

/* A duplicate's way, after the allreduce of the deltas: each process
 * takes its slots at the first delta, then all learn whether everyone
 * could. */
static ep_status_t deltas_taken(ep_comm_t *c, MPI_Request *req)
{
    ep_ucx_setup_t *x = c->ucx_setup;
    int d = x->delta = delta_pick(x);
    x->failed = d < 0;
    for (int i = 0; i < c->nlocal; i++) {
        c->local[i].ucx_w = NULL;
        if (!x->failed && slot_set(c, i, (int)(base_addr(c, x->base, i) & (MAX_SLOTS - 1)) + d))
            x->failed = 1; /* the others are given back if anyone failed */
    }
    x->stage = STAGE_TAKEN;
    if (PMPI_Iallreduce(MPI_IN_PLACE, &x->failed, 1, MPI_INT, MPI_MAX, c->pcomm, req) != MPI_SUCCESS) {
        *req = MPI_REQUEST_NULL;
        slots_give(c);
        setup_free(c);
        return EP_ERR_INTERN;
    }
    return EP_OK;
}

ep_status_t ep_ucx_comm_finish(ep_comm_t *c, MPI_Request *req)
{
    ep_ucx_setup_t *x = c->ucx_setup;
    *req = MPI_REQUEST_NULL;
    if (!x)
        return EP_OK; /* UCX is off: nothing was started */
    if (x->stage == STAGE_DELTAS)
        return deltas_taken(c, req);
    if (x->stage == STAGE_TAKEN) {
        if (x->failed) { /* some process could not: the allgather's way, for all */
            slots_give(c);
            return gather_start(c, 1, req);
        }
        c->ucx_addr = (uint32_t *)x->base;
        c->ucx_delta = (uint32_t)x->delta;
        c->ucx = 1;
        peers_find(c);
        setup_free(c);
        return EP_OK;
    }
    /* Everyone learned every rank's address; a rank without one keeps the
     * whole communicator on the MPI path (each process sees the same
     * table, so they agree). */
    int everyone = 1;
    for (int k = 0; everyone && k < c->size; k++)
        everyone = x->all[k] != NO_ADDR;
    if (everyone && !(c->ucx_addr = malloc(sizeof *c->ucx_addr * (size_t)c->size)))
        ep_fatal(MPI_ERR_NO_MEM, "out of memory setting up a communicator of %d ranks for UCX", c->size);
    if (everyone) {
        /* all[] is in process order (proc_ranks); ucx_addr is by rank. */
        for (int k = 0; k < c->size; k++)
            c->ucx_addr[c->proc_ranks[k]] = x->all[k];
        c->ucx_delta = 0;
        /* The base of the duplicates to come, when c's tables are shared
         * already and have none (a parent without UCX). */
        ep_comm_share(c, EP_SHARED_UCX_ADDRS, c->ucx_addr);
        c->ucx = 1;
        peers_find(c);
    } else {
        slots_give(c);
    }
    setup_free(c);
    return EP_OK;
}

void ep_ucx_comm_gone(ep_comm_t *c)
{
    slots_give(c);
    setup_free(c);
    /* c's own tables; the shared ones go with the rank tables */
    if (c->ucx_addr != ep_comm_shared(c, EP_SHARED_UCX_ADDRS))
        free(c->ucx_addr);
    if (c->ucx_peer != ep_comm_shared(c, EP_SHARED_UCX_PEERS))
        free(c->ucx_peer);
    c->ucx_addr = NULL;
    c->ucx_peer = NULL;
    c->ucx = 0;
}

/* ---- sending ------------------------------------------------------------------ */

/* The inbox of the worker of rank position idx of c when that rank is in
 * another process of this node, with this process's look at its head;
 * else NULL. */
static inline ep_inbox_t *peer_inbox(const ep_comm_t *c, int idx, _Atomic uint64_t **seen)
{
    if (!c->ucx_peer)
        return NULL;
    *seen = c->ucx_peer[idx].seen;
    return c->ucx_peer[idx].inbox;
}

/* The processes of a node map each other's inboxes, or none of them do
 * (node_start): a rank sends to this process through an inbox exactly
 * when this process sends to it through one. */
int ep_ucx_via_inbox(const ep_comm_t *c, int idx) { return c->ucx_peer && c->ucx_peer[idx].inbox; }

int ep_ucx_node_holds(const ep_comm_t *c)
{
    if (!node_base || c->nprocs < 2)
        return 0;
    for (int p = 0; p < c->nprocs; p++)
        if (p != c->myproc && ep_proc_node_index(c->proc_world[p]) < 0)
            return 0;
    return 1;
}

/* Copies a payload of n bytes into an inbox record: a few words inline,
 * as the lanes do; nothing when empty (buf may then be NULL). */
static inline void rec_payload(ep_inbox_rec_t *rec, const void *buf, size_t n)
{
    if (n <= EP_COPY_SMALL_MAX)
        ep_copy_small(rec->data, buf, n);
    else
        memcpy(rec->data, buf, n);
}

/* Fills the envelope of an inbox record for rank position idx of c, from
 * ep's rank. */
static inline void rec_envelope(ep_inbox_rec_t *rec, ep_inbox_kind_t kind, const ep_endpoint_t *ep, ep_chan_t chan,
                                int idx, int tag, int64_t bytes)
{
    rec->kind = (uint16_t)kind;
    rec->cpu = ep_thread_cpu;
    rec->slot = (uint16_t)(rank_addr(ep->comm, idx) & (MAX_SLOTS - 1));
    rec->source = ep_chan_source(ep_local_rank(ep), chan);
    rec->tag = tag;
    rec->bytes = bytes;
}

/* A record in b for a payload of n bytes; while b is full, this thread
 * progresses (its own worker's inbox among the rest, so two processes
 * sending to each other both move on) and backs off.  No worker lock may
 * be held. */
static ep_inbox_rec_t *reserve_waiting(ep_inbox_t *b, _Atomic uint64_t *seen, uint64_t n, uint64_t *pos)
{
    ep_inbox_rec_t *rec;
    EP_ASSERT(!held);
    EP_WAIT_UNTIL((rec = ep_inbox_reserve(b, n, seen, pos)));
    return rec;
}

/* Sends s through inbox b with its payload in the record; s is then
 * complete (its data are copied out). */
static ep_status_t inbox_send(ep_request_t *s, int idx, const ep_dt_layout_t *lay, ep_inbox_t *b,
                              _Atomic uint64_t *seen)
{
    uint64_t pos;
    ep_status_t rc = EP_OK;
    home = s->ep->ucx_w;
    ep_inbox_rec_t *rec = reserve_waiting(b, seen, (uint64_t)lay->bytes, &pos);
    rec_envelope(rec, EP_INBOX_DATA, s->ep, s->chan, idx, s->tag, lay->bytes);
    if (lay->contig) {
        rec_payload(rec, (const char *)s->buf + lay->offset, (size_t)lay->bytes);
    } else if (lay->bytes && (rc = ep_dt_pack(s->buf, s->count, s->type, lay, rec->data))) {
        /* Nothing to send after all: the record becomes padding, which
         * the receiver skips. */
        rec->kind = EP_INBOX_PAD;
        rec->bytes = (int64_t)ep_inbox_span((uint64_t)lay->bytes);
    }
    ep_inbox_publish(rec, pos);
    if (rc)
        return rc;
    ep_request_send_over(s);
    return EP_OK;
}

ep_status_t ep_ucx_send(ep_request_t *s, int idx, const ep_dt_layout_t *lay)
{
    ep_endpoint_t *ep = s->ep;
    ep_comm_t *c = ep->comm;
    ep_ucx_worker_t *u = ep->ucx_w;
    const void *buf = (const char *)s->buf + lay->offset;
    ucp_tag_t tag = msg_tag(rank_addr(c, idx), ep_chan_source(ep_local_rank(ep), s->chan), s->tag);
    ep_status_t rc = EP_OK;
    void *q = NULL;
    _Atomic uint64_t *seen = NULL;
    ep_inbox_t *b = peer_inbox(c, idx, &seen);

    if (b && s->mode != EP_SEND_SYNC && lay->bytes <= INBOX_INLINE_MAX)
        return inbox_send(s, idx, lay, b, seen);

    s->nnet = 0;
    s->tmp = NULL;
    s->ucx_req = NULL;
    /* A derived layout, or a buffered send (the user's buffer is free when
     * the call returns), goes from a packed copy, freed with s. */
    if (!lay->contig || s->mode == EP_SEND_BUFFERED) {
        if (!(s->tmp = malloc(lay->bytes ? (size_t)lay->bytes : 1)))
            return EP_ERR_NO_MEM;
        if ((rc = ep_dt_pack(s->buf, s->count, s->type, lay, s->tmp))) {
            free(s->tmp);
            s->tmp = NULL;
            return rc;
        }
        buf = s->tmp;
    }
    home = u;
    int took = hold(u);
    ucp_ep_h e = peer_conn(u, c, idx);
    if (b) /* the envelope goes through the inbox, the data under a tag of their own */
        tag = data_tag(u);
    if (!e) {
        rc = EP_ERR_UCX_START;
    } else {
        ucp_request_param_t prm = {0};
        q = s->mode == EP_SEND_SYNC ? ucp_tag_send_sync_nbx(e, buf, (size_t)lay->bytes, tag, &prm)
                                    : ucp_tag_send_nbx(e, buf, (size_t)lay->bytes, tag, &prm);
        if (UCS_PTR_IS_ERR(q)) {
            rc = EP_ERR_UCX_START;
            q = NULL;
        }
    }
    if (took)
        unlock_worker(u);
    if (b && !rc) {
        uint64_t pos;
        ep_inbox_rec_t *rec = reserve_waiting(b, seen, EP_INBOX_FOLLOWS_BYTES, &pos);
        rec_envelope(rec, EP_INBOX_FOLLOWS, ep, s->chan, idx, s->tag, lay->bytes);
        memcpy(rec->data, &tag, sizeof tag);
        ep_inbox_publish(rec, pos);
    }
    if (rc || !q) { /* failed, or over at once */
        free(s->tmp);
        s->tmp = NULL;
        if (rc)
            return rc;
        ep_request_send_over(s);
        return EP_OK;
    }
    s->ucx_req = q;
    ep_net_sent(s); /* NET, or handed to the progress engine when buffered */
    return EP_OK;
}

/* ep_ucx_send_now to a rank without an inbox, apart: its UCX call's
 * frame would cost every send through an inbox its register saves. */
static __attribute__((noinline)) int send_now_ucx(ep_endpoint_t *ep, int idx, const void *buf, size_t bytes, int tag)
{
    ep_comm_t *c = ep->comm;
    ep_ucx_worker_t *u = ep->ucx_w;
    ucp_tag_t utag = msg_tag(rank_addr(c, idx), ep_local_rank(ep), tag);
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL};
    home = u;
    int took = hold(u);
    ucp_ep_h e = peer_conn(u, c, idx);
    /* NULL: sent and complete; anything else (no room now, a UCX request
     * or an error) sent nothing, and the request path takes over. */
    void *q = e ? ucp_tag_send_nbx(e, buf, bytes, utag, &prm) : (void *)1;
    if (took)
        unlock_worker(u);
    return q == NULL;
}

/* Fills reserved record rec (at pos) with a message of ep's of n bytes
 * at buf for rank position idx, and hands it to the receiver. */
static inline void rec_send(ep_inbox_rec_t *rec, uint64_t pos, const ep_endpoint_t *ep, int idx, int tag,
                            const void *buf, size_t n)
{
    rec_envelope(rec, EP_INBOX_DATA, ep, EP_CHAN_USER, idx, tag, (int64_t)n);
    rec_payload(rec, buf, n);
    ep_inbox_publish(rec, pos);
}

/* ep_ucx_send_now through inbox b, every way: a payload for memcpy, a
 * padding record, a look at the inbox's head. */
static __attribute__((noinline)) int send_now_inbox(ep_endpoint_t *ep, int idx, const void *buf, size_t bytes, int tag,
                                                    ep_inbox_t *b, _Atomic uint64_t *seen)
{
    uint64_t pos;
    ep_inbox_rec_t *rec = ep_inbox_reserve(b, bytes, seen, &pos);
    if (!rec)
        return 0; /* full: the request path waits for room */
    rec_send(rec, pos, ep, idx, tag, buf, bytes);
    return 1;
}

int ep_ucx_send_now(ep_endpoint_t *ep, int idx, const void *buf, size_t bytes, int tag)
{
    _Atomic uint64_t *seen;
    ep_inbox_t *b = peer_inbox(ep->comm, idx, &seen);
    if (!b)
        return send_now_ucx(ep, idx, buf, bytes, tag);
    if (bytes > INBOX_INLINE_MAX)
        return 0;
    /* The usual way inline, with the fewest values live: a small
     * payload, room, no padding. */
    uint64_t pos;
    ep_inbox_rec_t *rec = bytes <= EP_COPY_SMALL_MAX ? ep_inbox_reserve_usual(b, bytes, seen, &pos) : NULL;
    if (!rec)
        return send_now_inbox(ep, idx, buf, bytes, tag, b, seen);
    rec_send(rec, pos, ep, idx, tag, buf, bytes);
    return 1;
}

/* ---- receiving -------------------------------------------------------------- */

/* Starts receiving m's data into buf on u (u's lock held): the message UCX
 * holds (umsg), or the data behind an inbox envelope (utag).  m keeps its
 * handle: the caller forgets it (data_taken) once the receive started. */
static void *data_recv_nbx(ep_ucx_worker_t *u, void *buf, const ep_msg_t *m, const ucp_request_param_t *prm)
{
    EP_ASSERT(ep_lock_held(&u->lock));
    return m->umsg ? ucp_tag_msg_recv_nbx(u->w, buf, (size_t)m->bytes, (ucp_tag_message_h)m->umsg, prm)
                   : ucp_tag_recv_nbx(u->w, buf, (size_t)m->bytes, m->utag, ~(ucp_tag_t)0, prm);
}

static void data_taken(ep_msg_t *m)
{
    m->umsg = NULL;
    m->utag = 0;
}

void ep_ucx_recv(ep_request_t *r, ep_msg_t *m)
{
    ep_ucx_worker_t *u = m->uworker;
    int64_t bytes = m->bytes, cap = r->lay.bytes;
    void *into;

    r->nnet = 0;
    r->ucx_req = NULL;
    r->tmp = NULL;
    r->sent_bytes = bytes;
    /* Straight into the user's buffer when it is contiguous and large
     * enough; else into a copy that finishing unpacks (what fits). */
    if (r->lay.contig && bytes <= cap)
        into = (char *)r->buf + r->lay.offset;
    else if (!(into = r->tmp = malloc(bytes ? (size_t)bytes : 1)))
        ep_fatal(MPI_ERR_NO_MEM, "out of memory receiving a %lld-byte message", (long long)bytes);
    ep_mpi_status_set(&r->status, m->link.source, m->link.tag, bytes > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS,
                      bytes < cap ? bytes : cap, 0);
    ucp_request_param_t prm = {0};
    int took = hold(u);
    void *q = data_recv_nbx(u, into, m, &prm);
    if (UCS_PTR_IS_ERR(q)) {
        /* The receive fails.  UCX fails this call at once only before it
         * touches the message (no request to be had), so the message is
         * still there: it goes into a sink, so that its sender (waiting
         * for a rendezvous, say) completes. */
        ep_ucx_msg_discard(m);
        r->failure = EP_ERR_UCX_RECV;
        r->sent_bytes = 0;
        ep_mpi_status_set(&r->status, m->link.source, m->link.tag, ep_status_class(r->failure), 0, 0);
        q = NULL;
    }
    if (took)
        unlock_worker(u);
    data_taken(m);
    if (q) {
        r->ucx_req = q;
        atomic_store_explicit(&r->state, EP_RS_NET, memory_order_release);
        return;
    }
    ep_request_finish_transfer(r); /* over at once */
}

/* ---- receives posted in UCX ---------------------------------------------------
 * A receive that names one rank of another process can only be matched by
 * that rank's messages, which all come through ep's worker (through UCX's
 * matching when the rank is on another node, or with the inboxes off: p2p.c
 * posts no others, see ep_ucx_via_inbox).  When nothing
 * waits in ep's posted queue, no receive posted earlier can want them, so
 * UCX itself may match it: the message lands in the user's buffer as it
 * arrives, with no probe, unexpected record or second call.  Posting, and
 * the check of ep's unexpected queue before it, happen under the worker's
 * lock, which every move of a message from UCX to that queue holds, so no
 * message slips between the two.
 *
 * The receive stays PENDING, like one in ep's posted queue: whoever
 * progresses the worker runs posted_done, which completes it. */

int ep_ucx_recv_post_hold(ep_endpoint_t *ep) { return hold(ep->ucx_w); }

void ep_ucx_recv_post_give(ep_endpoint_t *ep, int took)
{
    if (took)
        unlock_worker(ep->ucx_w);
}

/* Set while this thread is inside ucp_tag_recv_nbx, which may complete the
 * receive before it returns the UCX request (posted_done must then leave
 * that request to the poster to free). */
static __thread int posting EP_TLS, posted_at_once EP_TLS;

/* UCX finished a receive posted in it, the worker's lock held.  The
 * message's length is valid only with UCS_OK: a truncated one reports the
 * receive's capacity, and sent_bytes says no more.  Its tag is the
 * message's in both cases (UCX fills it when the message matches, before
 * it finds the message too long, as MPICH's own UCX device relies on):
 * a wildcard receive's status needs the real source and tag. */
static void posted_done(void *q, ucs_status_t st, const ucp_tag_recv_info_t *info, void *arg)
{
    ep_request_t *r = arg;
    int64_t cap = r->lay.bytes;
    r->ucx_req = NULL;
    if (st == UCS_OK) {
        int64_t bytes = (int64_t)info->length;
        r->sent_bytes = bytes;
        ep_mpi_status_set(&r->status, tag_source(info->sender_tag), tag_user(info->sender_tag), MPI_SUCCESS,
                          bytes < cap ? bytes : cap, 0);
    } else if (st == UCS_ERR_CANCELED) {
        ep_mpi_status_set(&r->status, r->source_pat, r->tag_pat, MPI_SUCCESS, 0, 1);
    } else if (st == UCS_ERR_MESSAGE_TRUNCATED) {
        r->sent_bytes = cap;
        ep_mpi_status_set(&r->status, tag_source(info->sender_tag), tag_user(info->sender_tag), MPI_ERR_TRUNCATE, cap,
                          0);
    } else {
        r->failure = EP_ERR_UCX_FAILED;
        ep_mpi_status_set(&r->status, r->source_pat, r->tag_pat, ep_status_class(r->failure), 0, 0);
    }
    if (posting)
        posted_at_once = 1;
    else
        ucp_request_free(q);
    ep_request_set_done(r); /* last touch of r: its owner may free it now */
}

int ep_ucx_recv_post(ep_request_t *r)
{
    ep_endpoint_t *ep = r->ep;
    ep_ucx_worker_t *u = ep->ucx_w;
    int any_tag = r->tag_pat == MPI_ANY_TAG;
    ucp_tag_t want = msg_tag((uint32_t)ep->ucx_slot, r->source_pat, any_tag ? 0 : r->tag_pat);
    ucp_tag_t mask =
        DATA_BIT | (ucp_tag_t)(MAX_SLOTS - 1) << SLOT_SHIFT | SRC_MASK << SRC_SHIFT | (any_tag ? 0 : TAG_MASK);
    /* Always through posted_done: UCX 1.13 does not fill recv_info
     * reliably when a receive completes at once. */
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                                               UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
                               .cb.recv = posted_done,
                               .user_data = r};

    EP_ASSERT(held == u);
    home = u;
    r->ucx_posted = 1;
    posting = 1;
    posted_at_once = 0;
    void *q = ucp_tag_recv_nbx(u->w, (char *)r->buf + r->lay.offset, (size_t)r->lay.bytes, want, mask, &prm);
    posting = 0;
    if (!q || UCS_PTR_IS_ERR(q)) {
        r->ucx_posted = 0;
        return 0; /* not posted: epmpi's matching takes it */
    }
    if (posted_at_once)
        ucp_request_free(q); /* r is DONE */
    else
        r->ucx_req = q;
    return 1;
}

int ep_ucx_recv_cancel(ep_request_t *r)
{
    ep_ucx_worker_t *u = r->ep->ucx_w;
    int took = hold(u);
    /* A receive UCX matched already is not cancelled: it completes. */
    int gone = 0;
    if (r->ucx_req) {
        ucp_request_cancel(u->w, r->ucx_req); /* posted_done runs now, with UCS_ERR_CANCELED */
        gone = ep_request_state(r) == EP_RS_DONE;
    }
    if (took)
        unlock_worker(u);
    return gone;
}

int ep_ucx_test(ep_request_t *r)
{
    ep_ucx_worker_t *u = r->ep->ucx_w;
    int took = try_hold(u);
    if (took < 0)
        return -1; /* its holder is driving the worker */
    home = u;
    /* Looked at before the worker moves: in a Waitall most requests are
     * over already, and a progress call costs more than a look. */
    ucs_status_t st = ucp_request_check_status(r->ucx_req);
    if (st == UCS_INPROGRESS) {
        ucp_worker_progress(u->w);
        st = ucp_request_check_status(r->ucx_req);
    }
    if (st != UCS_INPROGRESS) {
        ucp_request_free(r->ucx_req);
        r->ucx_req = NULL;
    }
    if (took)
        unlock_worker(u);
    if (st == UCS_INPROGRESS)
        return -1;
    return st == UCS_OK ? EP_OK : EP_ERR_UCX_FAILED;
}

/* A record of u's inbox that no producer wrote (ep_inbox_rec_fault): the
 * records after it cannot be found, and their messages would be lost
 * silently, so nothing can go on. */
static void inbox_corrupt(const ep_ucx_worker_t *u, const ep_inbox_rec_t *rec, const char *what)
{
    ep_fatal(MPI_ERR_INTERN,
             "process %d found a corrupt record in the node inbox of its UCX worker %d (%s: kind %u, slot %u, "
             "source %d, tag %d, %lld bytes)",
             ep_proc_world_rank(), u->index, what, (unsigned)rec->kind, (unsigned)rec->slot, rec->source, rec->tag,
             (long long)rec->bytes);
}

/* Delivers the records of u's inbox, oldest first; u's lock held.  A run
 * of small messages to one endpoint takes its lock once. */
static void drain_inbox(ep_ucx_worker_t *u)
{
    EP_ASSERT(ep_lock_held(&u->lock));
    ep_inbox_rec_t *rec;
    ep_endpoint_t *locked = NULL;
    int cpu = u->last_cpu;
    while ((rec = ep_inbox_peek(u->inbox))) {
        const char *fault = ep_inbox_rec_fault(rec, INBOX_INLINE_MAX);
        cpu = rec->cpu;
        ep_endpoint_t *dst = rec->slot < u->nslots ? u->slots[rec->slot] : NULL;
        int small = rec->kind == EP_INBOX_DATA;
        if (!fault && dst && !ep_chan_source_valid(rec->source, dst->comm->size))
            fault = "a source outside its communicator";
        if (fault)
            inbox_corrupt(u, rec, fault);
        if (locked && (locked != dst || !small)) {
            ep_unlock(&locked->lock);
            locked = NULL;
        }
        if (small && dst) {
            if (!locked)
                ep_lock(&(locked = dst)->lock);
            ep_p2p_arrive_eager_locked(dst, rec->source, rec->tag, rec->data, rec->bytes);
        } else if (!small) {
            ep_msg_t m = {.kind = EP_MSG_UCX, .bytes = rec->bytes, .uworker = u, .handle = MPI_MESSAGE_NULL};
            m.link.source = rec->source;
            m.link.tag = rec->tag;
            memcpy(&m.utag, rec->data, sizeof m.utag);
            if (dst)
                ep_p2p_arrive(dst, &m);
            else /* for a communicator freed here (never received: an erroneous program) */
                ep_ucx_msg_discard(&m);
        } /* a small one without dst: dropped, as that */
        ep_inbox_release(u->inbox, rec);
    }
    if (locked)
        ep_unlock(&locked->lock);
    u->last_cpu = cpu;
}

/* Delivers what arrived at u, oldest first; u's lock held.  While its
 * inbox is busy, UCX progresses once in UCX_EVERY drains: a progress call
 * costs more than a small message through the inbox.  Nonzero when
 * anything moved. */
static int drain_worker(ep_ucx_worker_t *u)
{
    EP_ASSERT(ep_lock_held(&u->lock));
    ucp_tag_recv_info_t info;
    ucp_tag_message_h msg;
    atomic_store_explicit(&u->drains, atomic_load_explicit(&u->drains, memory_order_relaxed) + 1,
                          memory_order_relaxed); /* the lock held: no other writer */
    if (u == home) /* who this thread waits for, if it waits (not the sweep's other workers) */
        ep_wait_partner_cpu = u->last_cpu;
    int moved = u->inbox && ep_inbox_peek(u->inbox);
    if (moved) {
        drain_inbox(u);
        if (++u->polls < UCX_EVERY)
            return 1;
    }
    u->polls = 0;
    moved |= ucp_worker_progress(u->w) != 0;
    while ((msg = ucp_tag_probe_nb(u->w, 0, DATA_BIT, 1, &info))) {
        moved = 1;
        unsigned slot = (unsigned)(info.sender_tag >> SLOT_SHIFT);
        ep_endpoint_t *dst = slot < u->nslots ? u->slots[slot] : NULL;
        ep_msg_t m = {
            .kind = EP_MSG_UCX, .bytes = (int64_t)info.length, .umsg = msg, .uworker = u, .handle = MPI_MESSAGE_NULL};
        m.link.source = tag_source(info.sender_tag);
        m.link.tag = tag_user(info.sender_tag);
        if (!dst || !ep_chan_source_valid(m.link.source, dst->comm->size)) {
            /* For a communicator freed here (a message never received: an
             * erroneous program), or a corrupt tag: dropped. */
            ep_ucx_msg_discard(&m);
            continue;
        }
        ep_p2p_arrive(dst, &m);
    }
    return moved;
}

/* Drains u unless another thread is at it; nonzero when anything moved. */
static int poll_worker(ep_ucx_worker_t *u)
{
    int took = try_hold(u);
    if (took < 0)
        return 0; /* another thread is draining it */
    int moved = drain_worker(u);
    if (took)
        unlock_worker(u);
    return moved;
}

void ep_ucx_poll_ep(ep_endpoint_t *ep)
{
    if (ep->ucx_w) {
        home = ep->ucx_w;
        poll_worker(ep->ucx_w);
    }
}

void ep_ucx_progress(void)
{
    if (home)
        poll_worker(home);
    /* Now and then every worker: sends of endpoints whose threads are busy
     * elsewhere. */
    if (++sweep % SWEEP_EVERY == 0)
        for (int i = 0; i < nworkers; i++)
            poll_worker(&workers[i]);
}

void ep_ucx_msg_discard(ep_msg_t *m)
{
    ep_ucx_worker_t *u = m->uworker;
    if (!m->umsg && !m->utag)
        return;
    void *sink = malloc(m->bytes ? (size_t)m->bytes : 1);
    if (!sink)
        ep_fatal(MPI_ERR_NO_MEM, "out of memory dropping a %lld-byte message", (long long)m->bytes);
    ucp_request_param_t prm = {0};
    int took = hold(u);
    void *q = data_recv_nbx(u, sink, m, &prm);
    data_taken(m);
    finish_nbx(u, q); /* a rendezvous message's data come from another process */
    if (took)
        unlock_worker(u);
    free(sink);
}

#endif
