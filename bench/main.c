/* epmpi-bench: an MPI+OpenMP benchmark of point-to-point, collective and
 * communicator-creation costs that runs the same way on plain MPICH and
 * under epmpi.  bench/run-bench.sh runs it in pairs of configurations and
 * compares them; see bench.h for how threads become ranks. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "bench.h"

#include <config.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPICH 4.2's thread communicators (or epmpi's): absent from older MPICH. */
int MPIX_Threadcomm_init(MPI_Comm comm, int num_threads, MPI_Comm *newcomm);
int MPIX_Threadcomm_start(MPI_Comm threadcomm);
int MPIX_Threadcomm_finish(MPI_Comm threadcomm);
int MPIX_Threadcomm_free(MPI_Comm *threadcomm);
#pragma weak MPIX_Threadcomm_init
#pragma weak MPIX_Threadcomm_start
#pragma weak MPIX_Threadcomm_finish
#pragma weak MPIX_Threadcomm_free

static const struct {
    const char *name;
    void (*run)(const struct party *p, const struct bench_opts *o);
    int dup_ok;        /* meaningful with --comm dup */
    int threadcomm_ok; /* with --comm threadcomm */
} cases[] = {
    {"pingpong", case_pingpong, 1, 1}, {"rate", case_rate, 1, 1},     {"rma", case_rma, 0, 0},
    {"coll", case_coll, 0, 1},         {"create", case_create, 0, 0}, {"memcpy", case_memcpy, 1, 0},
    {"handoff", case_handoff, 1, 0},   {"calls", case_calls, 1, 0},   {"ucx", case_ucx, 0, 0},
    {"shm", case_shm, 0, 0},           {"io", case_io, 0, 0},
};
#define NCASES (int)(sizeof cases / sizeof *cases)
#define MAX_CASE_RUNS 16

static void usage(FILE *f)
{
    fprintf(f, "usage: epmpi-bench [--case LIST] [--sizes LIST] [--iters N] [--time MS] [--batches B]\n"
               "                   [--window W] [--comm world|dup|threadcomm] | --help | --version\n"
               "\n"
               "Runs under mpiexec, as plain MPI or with epmpi preloaded (epmpiexec -t T).\n"
               "  --case LIST     comma-separated, in order (default pingpong):\n"
               "                  pingpong  latency and bandwidth between rank pairs, 8 B to 16 MiB\n"
               "                  rate      messages per second, windows of non-blocking sends (8 B),\n"
               "                            and a comment line with the time per message of\n"
               "                            the senders' sending and of the receivers' posting;\n"
               "                            msgrate with the receives posted before a window\n"
               "                            arrives, msgrate-posting while it arrives\n"
               "                  calls     MPI_Send + MPI_Recv with MPI_PROC_NULL (8 B): the time of\n"
               "                            the two calls alone, no message\n"
               "                  rma       one-sided, to the pair partner's MPI_Win_allocate window,\n"
               "                            8 B to 16 MiB: MPI_Put and MPI_Get each with MPI_Win_flush\n"
               "                            (in one MPI_Win_lock_all epoch), MPI_Put with MPI_Win_fence,\n"
               "                            MPI_Put in an exclusive MPI_Win_lock epoch of its own\n"
               "                  coll      Barrier, Bcast, Allreduce (8 B, 64 KiB, 8 MiB)\n"
               "                  create    MPI_Comm_dup, MPI_Comm_split, MPI_Comm_create_endpoints\n"
               "                            (MPI_Comm_dup where that is missing), each with MPI_Comm_free\n"
               "                  memcpy    memcpy bandwidth of each thread, 8 B to 16 MiB, and of\n"
               "                            two threads copying a half each, 64 KiB and up (the limit\n"
               "                            of a large message between threads, which both copy)\n"
               "                  handoff   one-way time for two threads of one process to pass a\n"
               "                            flag back and forth, and their rate streaming 8 B through\n"
               "                            a ring of 64-byte slots (no MPI): the floors of any\n"
               "                            message latency and rate between threads; and the rate\n"
               "                            case's windows through such a ring, with send and receive\n"
               "                            calls that cost nothing, 10, 15 or 20 ns: the rate left\n"
               "                            for calls of that cost; printed by the first process only\n"
               "                  ucx       the floor between processes: ping-pong (8 B to 4 MiB) and\n"
               "                            the rate case's windows (8 B, 4 KiB) straight on UCX's\n"
               "                            tag API, no MPI on a message's way; the rate three ways:\n"
               "                            receives posted (msgrate), each message probed out of\n"
               "                            UCX's unexpected queue and received (msgrate-probed, as\n"
               "                            epmpi takes most), active messages copied by a handler\n"
               "                            (msgrate-am) (one thread per process; only when built\n"
               "                            with UCX)\n"
               "                  shm       the floor of a transport of one's own between processes of\n"
               "                            a node: the same ping-pong (8 B to 4 KiB) and rate windows\n"
               "                            (8 B, 4 KiB) through rings of slots in shared memory, each\n"
               "                            message copied in and out, no MPI or matching on its way\n"
               "                            (one thread per process, the partners on one node)\n"
               "                  io        collective MPI-IO: each rank writes, then reads, its own\n"
               "                            block of one file with MPI_File_write_at_all and\n"
               "                            MPI_File_read_at_all (4 KiB to 16 MiB per rank;\n"
               "                            the file in $TMPDIR, else /tmp, deleted at the end)\n"
               "  --sizes LIST    message sizes in bytes, suffixes K and M allowed (8,64K,1M)\n"
               "  --iters N       iterations per batch (default: calibrated to the time budget)\n"
               "  --time MS       time budget per measurement (default 30 to 100 ms by case)\n"
               "  --batches B     timed batches per measurement, median reported (default 5)\n"
               "  --window W      rate: messages in flight per window (default 64)\n"
               "  --comm world    every OpenMP thread uses MPI_COMM_WORLD (default): a rank\n"
               "                  per thread under epmpi world mode, else run 1 thread per process\n"
               "  --comm dup      plain MPI_THREAD_MULTIPLE: thread t of each process uses its\n"
               "                  own MPI_Comm_dup t of MPI_COMM_WORLD (pingpong, rate, memcpy)\n"
               "  --comm threadcomm  every OpenMP thread is a rank of one thread communicator\n"
               "                  (MPIX_Threadcomm_init: MPICH 4.2's own, or epmpi's when preloaded;\n"
               "                  pingpong, rate, coll)\n"
               "Threads: OMP_NUM_THREADS.  Output: '# comment' lines and result lines\n"
               "\"case metric size value unit\", printed by rank 0.\n");
}

static void bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "epmpi-bench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (epmpi-bench --help lists the options)\n");
    exit(2);
}

static long parse_long(const char *s, const char *what, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        v *= 1L << 10, end++;
    else if (*end == 'M' || *end == 'm')
        v *= 1L << 20, end++;
    if (errno || end == s || *end || v < min || v > max) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s must be a number from %ld to %ld, not '%%s'", what, min, max);
        bad_usage(msg, s);
    }
    return v;
}

/* Splits a comma-separated list in place; returns the number of items. */
static int split_list(char *list, char **items, int max, const char *what)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max)
            bad_usage("too many items in %s", what);
        items[n++] = tok;
    }
    if (n == 0)
        bad_usage("%s is empty", what);
    return n;
}

static int parse_args(int argc, char **argv, struct bench_opts *o, int *run)
{
    static const struct option longopts[] = {
        {"case", required_argument, 0, 'c'},    {"sizes", required_argument, 0, 's'},
        {"iters", required_argument, 0, 'i'},   {"time", required_argument, 0, 't'},
        {"batches", required_argument, 0, 'b'}, {"window", required_argument, 0, 'w'},
        {"comm", required_argument, 0, 'm'},    {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},       {0, 0, 0, 0},
    };
    char *items[BENCH_MAX_SIZES];
    int nrun = 0, opt;
    *o = (struct bench_opts){.batches = 5, .window = 64};
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            nrun = split_list(optarg, items, MAX_CASE_RUNS, "--case");
            for (int i = 0; i < nrun; i++) {
                run[i] = -1;
                for (int c = 0; c < NCASES; c++)
                    if (strcmp(items[i], cases[c].name) == 0)
                        run[i] = c;
                if (run[i] < 0)
                    bad_usage("unknown case '%s'", items[i]);
            }
            break;
        case 's':
            o->nsizes = split_list(optarg, items, BENCH_MAX_SIZES, "--sizes");
            for (int i = 0; i < o->nsizes; i++)
                o->sizes[i] = parse_long(items[i], "a size", 0, 1L << 30);
            break;
        case 'i':
            o->iters = parse_long(optarg, "--iters", 1, 1L << 30);
            break;
        case 't':
            o->seconds = (double)parse_long(optarg, "--time", 1, 3600000) / 1e3;
            break;
        case 'b':
            o->batches = (int)parse_long(optarg, "--batches", 1, BENCH_MAX_BATCHES);
            break;
        case 'w':
            o->window = (int)parse_long(optarg, "--window", 1, 1 << 16);
            break;
        case 'm':
            if (strcmp(optarg, "world") && strcmp(optarg, "dup") && strcmp(optarg, "threadcomm"))
                bad_usage("--comm is world, dup or threadcomm, not '%s'", optarg);
            o->dup = strcmp(optarg, "dup") == 0;
            o->threadcomm = strcmp(optarg, "threadcomm") == 0;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case 'V':
            printf("epmpi-bench (epmpi) %s\n", PACKAGE_VERSION);
            exit(0);
        default:
            bad_usage("%s", "bad option");
        }
    }
    if (optind < argc)
        bad_usage("unexpected argument '%s'", argv[optind]);
    if (nrun == 0)
        run[nrun++] = 0; /* pingpong */
    for (int i = 0; i < nrun; i++)
        if ((o->dup && !cases[run[i]].dup_ok) || (o->threadcomm && !cases[run[i]].threadcomm_ok))
            bad_usage("case %s does not run with this --comm", cases[run[i]].name);
    return nrun;
}

/* ---- memcpy: the limit of a message copied once inside a process -------------- */

struct copy {
    char *src, *dst;
    size_t bytes;
    /* Two threads: a plain pthread copies the second half of round `go`. */
    _Alignas(64) _Atomic long go;
    _Alignas(64) _Atomic long done;
    long round;
};

/* Through a volatile pointer, so that the compiler can neither drop nor
 * shorten copies nobody reads. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

static void memcpy_run(const struct party *p, void *ctx, long n)
{
    struct copy *c = ctx;
    (void)p;
    for (long i = 0; i < n; i++)
        copy_fn(c->dst, c->src, c->bytes);
}

static void *copy_half_peer(void *arg)
{
    struct copy *c = arg;
    for (long i = 1;; i++) {
        bench_await(&c->go, i);
        if (!c->bytes)
            return NULL;
        size_t h = c->bytes / 2;
        copy_fn(c->dst + h, c->src + h, c->bytes - h);
        atomic_store_explicit(&c->done, i, memory_order_release);
    }
}

static void memcpy_halves_run(const struct party *p, void *ctx, long n)
{
    struct copy *c = ctx;
    (void)p;
    for (long i = 0; i < n; i++) {
        long r = ++c->round;
        atomic_store_explicit(&c->go, r, memory_order_release);
        copy_fn(c->dst, c->src, c->bytes / 2);
        bench_await(&c->done, r);
    }
}

void case_memcpy(const struct party *p, const struct bench_opts *o)
{
    static const long defaults[] = {8, 64, 1L << 10, 16L << 10, 64L << 10, 256L << 10, 1L << 20, 4L << 20, 16L << 20};
    const long *sizes;
    int nsizes = bench_sizes(o, defaults, sizeof defaults / sizeof *defaults, &sizes);
    long big = bench_max_size(sizes, nsizes);
    struct copy c = {.src = party_alloc(p, (size_t)big), .dst = party_alloc(p, (size_t)big)};
    for (int s = 0; s < nsizes; s++) {
        c.bytes = (size_t)sizes[s];
        double per_copy = bench_measure(p, o, 0.03, memcpy_run, &c);
        party_report(p, "memcpy", "bandwidth", sizes[s], (double)sizes[s] / per_copy / 1e9, "GB/s");
    }
    /* Two threads each copying a half, as a large message between threads
     * is copied (src/p2p/p2p.c). */
    pthread_t t;
    int err = pthread_create(&t, NULL, copy_half_peer, &c);
    if (err)
        party_fail(p, "memcpy: cannot start its second thread: %s", strerror(err));
    for (int s = 0; s < nsizes; s++) {
        if (sizes[s] < 64 * 1024)
            continue;
        c.bytes = (size_t)sizes[s];
        double per_copy = bench_measure(p, o, 0.03, memcpy_halves_run, &c);
        party_report(p, "memcpy", "halves", sizes[s], (double)sizes[s] / per_copy / 1e9, "GB/s");
    }
    c.bytes = 0; /* tells the helper to leave */
    atomic_store_explicit(&c.go, c.round + 1, memory_order_release);
    pthread_join(t, NULL);
    free(c.src);
    free(c.dst);
}

/* ---- handoff: the limit of any message between two threads of a process ---------- */

/* Two threads pass a counter back and forth through two flags, each in a
 * cache line of its own: every step moves one line from one core to the
 * other, the least any message between threads costs.  The helper thread is
 * a plain pthread of the first process, outside MPI. */
struct handoff {
    _Alignas(64) _Atomic long ping;
    _Alignas(64) _Atomic long pong;
    long rounds;
};

static void *handoff_peer(void *arg)
{
    struct handoff *h = arg;
    for (long i = 1; i <= h->rounds; i++) {
        bench_await(&h->ping, i);
        atomic_store_explicit(&h->pong, i, memory_order_release);
    }
    return NULL;
}

static double handoff_once(const struct party *p, long rounds)
{
    struct handoff h = {.rounds = rounds};
    pthread_t t;
    int err = pthread_create(&t, NULL, handoff_peer, &h);
    if (err)
        party_fail(p, "handoff: cannot start its second thread: %s", strerror(err));
    double t0 = MPI_Wtime();
    for (long i = 1; i <= rounds; i++) {
        atomic_store_explicit(&h.ping, i, memory_order_release);
        bench_await(&h.pong, i);
    }
    double t1 = MPI_Wtime();
    pthread_join(t, NULL);
    return (t1 - t0) / (double)rounds / 2;
}

/* The same two threads streaming 8 B messages through a ring of 64-byte
 * slots, each with its sequence number in the slot's line (what a lane
 * between two endpoints is): the sender waits only for a free slot, so
 * line transfers overlap.  The floor of any message rate between threads. */
#define RING_SLOTS 256
struct ring {
    struct {
        _Alignas(64) _Atomic long seq; /* i: message i is in it; 0: free */
        long payload;
    } slot[RING_SLOTS];
    long msgs, sum;
};

static void *ring_reader(void *arg)
{
    struct ring *r = arg;
    for (long i = 1; i <= r->msgs; i++) {
        bench_await(&r->slot[i % RING_SLOTS].seq, i);
        r->sum += r->slot[i % RING_SLOTS].payload;
        atomic_store_explicit(&r->slot[i % RING_SLOTS].seq, 0, memory_order_release);
    }
    return NULL;
}

/* With two CPUs or more, pins the calling thread to the first CPU it may
 * run on and sets attr to start a thread on the second, so that the ring
 * measures lines moving between cores, not time slices of one; *saved
 * gets the caller's CPUs to restore.  Returns 1 when it pinned. */
static int pin_apart(pthread_attr_t *attr, cpu_set_t *saved)
{
    cpu_set_t one;
    int first = -1, second = -1;
    if (pthread_getaffinity_np(pthread_self(), sizeof *saved, saved))
        return 0;
    for (int c = 0; c < CPU_SETSIZE && second < 0; c++)
        if (CPU_ISSET(c, saved))
            *(first < 0 ? &first : &second) = c;
    if (second < 0)
        return 0;
    CPU_ZERO(&one);
    CPU_SET(second, &one);
    pthread_attr_setaffinity_np(attr, sizeof one, &one);
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    return !pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

/* Starts fn(arg) on a second thread, pinned apart from the caller when
 * pin_apart can (then returns 1, and *saved has the caller's CPUs). */
static int start_apart(const struct party *p, pthread_t *t, void *(*fn)(void *), void *arg, cpu_set_t *saved)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    int pinned = pin_apart(&attr, saved);
    int err = pthread_create(t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    if (err)
        party_fail(p, "handoff: cannot start its second thread: %s", strerror(err));
    return pinned;
}

/* Seconds per message of one run of msgs messages. */
static double ring_once(const struct party *p, struct ring *r, long msgs)
{
    pthread_t t;
    cpu_set_t saved;
    memset(r, 0, sizeof *r);
    r->msgs = msgs;
    int pinned = start_apart(p, &t, ring_reader, r, &saved);
    double t0 = MPI_Wtime();
    for (long i = 1; i <= msgs; i++) {
        bench_await(&r->slot[i % RING_SLOTS].seq, 0);
        r->slot[i % RING_SLOTS].payload = i;
        atomic_store_explicit(&r->slot[i % RING_SLOTS].seq, i, memory_order_release);
    }
    pthread_join(t, NULL);
    double t1 = MPI_Wtime();
    if (pinned)
        pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    if (r->sum != msgs * (msgs + 1) / 2)
        party_fail(p, "handoff: the ring delivered a sum of %ld, expected %ld", r->sum, msgs * (msgs + 1) / 2);
    return (t1 - t0) / (double)msgs;
}

/* The rate case's structure without MPI: windows of WIN_MSGS 8 B messages
 * through a ring of 64-byte slots (a lane); the receiver matches each
 * message with the oldest of its posted receives, copies it in and marks it
 * done, waits for the whole window in order, posts the next window and then
 * acknowledges, as `rate` does.  The least any implementation spends per
 * message in that structure.  With a call cost, every send and every
 * receive call also spends that long (a calibrated spin, where an MPI
 * library checks arguments and makes requests): the rate left when the
 * calls cost that much and everything else is free. */
#define WIN_MSGS 64
struct window {
    struct {
        _Alignas(64) _Atomic long seq; /* i + 1: message i is in it */
        long tag, payload;
    } slot[WIN_MSGS];
    _Alignas(64) _Atomic long head; /* messages taken by the receiver */
    _Alignas(64) _Atomic long ack;  /* windows acknowledged */
    long windows, spins, sum;
};

/* About spins x 1 ns on this machine's cores; out of line, as a call is. */
static __attribute__((noinline)) void call_cost(long spins)
{
    for (long i = 0; i < spins; i++)
        __asm__ volatile("" ::: "memory");
}

/* Spins that make call_cost take ns nanoseconds (0: none). */
static long call_cost_spins(double ns)
{
    if (ns <= 0)
        return 0;
    enum { CALLS = 200000, PROBE = 100 };
    double t0 = MPI_Wtime();
    for (int i = 0; i < CALLS; i++)
        call_cost(0);
    double t1 = MPI_Wtime();
    for (int i = 0; i < CALLS; i++)
        call_cost(PROBE);
    double t2 = MPI_Wtime();
    double empty = (t1 - t0) / CALLS * 1e9, per_spin = ((t2 - t1) - (t1 - t0)) / CALLS / PROBE * 1e9;
    long spins = per_spin > 0 ? (long)((ns - empty) / per_spin + 0.5) : 0;
    return spins > 0 ? spins : 0;
}

/* A posted receive of the window structure. */
struct window_post {
    long *buf;
    long tag;
    int done;
};

/* Posts a window of receives into rbuf, each call costing `spins`. */
static void window_post(struct window_post *post, long *rbuf, long spins)
{
    for (int i = 0; i < WIN_MSGS; i++) {
        call_cost(spins);
        post[i] = (struct window_post){.buf = &rbuf[i], .tag = 1, .done = 0};
    }
}

static void *window_receiver(void *arg)
{
    struct window *w = arg;
    struct window_post post[WIN_MSGS];
    long rbuf[WIN_MSGS], pos = 0;
    window_post(post, rbuf, w->spins);
    for (long k = 1; k <= w->windows; k++) {
        int next = 0;
        for (int i = 0; i < WIN_MSGS; i++) {
            for (unsigned spins = 0; !post[i].done;) {
                long at;
                while (atomic_load_explicit(&w->slot[at = pos % WIN_MSGS].seq, memory_order_acquire) == pos + 1) {
                    if (post[next].tag == w->slot[at].tag) /* always: the check a match makes */
                        *post[next].buf = w->slot[at].payload;
                    post[next++].done = 1;
                    atomic_store_explicit(&w->head, ++pos, memory_order_release);
                }
                if (!post[i].done && ++spins > 4096)
                    sched_yield();
            }
            w->sum += rbuf[i];
        }
        window_post(post, rbuf, w->spins);
        atomic_store_explicit(&w->ack, k, memory_order_release);
    }
    return NULL;
}

/* Seconds per message of one run of `windows` windows. */
static double window_once(const struct party *p, struct window *w, long windows, long spins)
{
    pthread_t t;
    cpu_set_t saved;
    memset(w, 0, sizeof *w);
    w->windows = windows;
    w->spins = spins;
    int pinned = start_apart(p, &t, window_receiver, w, &saved);
    double t0 = MPI_Wtime();
    long tail = 0;
    for (long k = 1; k <= windows; k++) {
        for (int i = 0; i < WIN_MSGS; i++, tail++) {
            call_cost(spins);
            for (unsigned n = 0; tail - atomic_load_explicit(&w->head, memory_order_acquire) >= WIN_MSGS;)
                if (++n > 4096)
                    sched_yield();
            w->slot[tail % WIN_MSGS].tag = 1;
            w->slot[tail % WIN_MSGS].payload = tail;
            atomic_store_explicit(&w->slot[tail % WIN_MSGS].seq, tail + 1, memory_order_release);
        }
        bench_await(&w->ack, k);
    }
    pthread_join(t, NULL);
    double t1 = MPI_Wtime();
    if (pinned)
        pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    if (w->sum != tail * (tail - 1) / 2)
        party_fail(p, "handoff: the window structure delivered a sum of %ld, expected %ld", w->sum,
                   tail * (tail - 1) / 2);
    return (t1 - t0) / (double)tail;
}

void case_handoff(const struct party *p, const struct bench_opts *o)
{
    double t[BENCH_MAX_BATCHES];
    long rounds = o->iters > 0 ? o->iters : 200000;
    if (p->id != 0)
        return;
    handoff_once(p, rounds / 10 + 1); /* warm-up */
    for (int b = 0; b < o->batches; b++)
        t[b] = handoff_once(p, rounds);
    party_report(p, "handoff", "latency", 8, bench_median(t, o->batches) * 1e6, "us");
    struct ring *r = aligned_alloc(64, sizeof *r);
    if (!r)
        party_fail(p, "out of memory (%zu bytes)", sizeof *r);
    long msgs = rounds * 10;
    ring_once(p, r, msgs / 10 + 1);
    for (int b = 0; b < o->batches; b++)
        t[b] = ring_once(p, r, msgs);
    party_report(p, "handoff", "msgrate", 8, 1e-6 / bench_median(t, o->batches), "Mmsg/s");
    free(r);
    /* The window structure with calls that cost nothing, 10, 15 and 20 ns. */
    static const struct {
        const char *metric;
        double ns;
    } costs[] = {{"window", 0}, {"window+10ns", 10}, {"window+15ns", 15}, {"window+20ns", 20}};
    struct window *w = aligned_alloc(64, sizeof *w);
    if (!w)
        party_fail(p, "out of memory (%zu bytes)", sizeof *w);
    long windows = msgs / 10 / WIN_MSGS + 1;
    for (size_t c = 0; c < sizeof costs / sizeof *costs; c++) {
        long spins = call_cost_spins(costs[c].ns);
        window_once(p, w, windows / 10 + 1, spins);
        for (int b = 0; b < o->batches; b++)
            t[b] = window_once(p, w, windows, spins);
        party_report(p, "handoff", costs[c].metric, 8, 1e-6 / bench_median(t, o->batches), "Mmsg/s");
    }
    free(w);
}

/* ---- setup ------------------------------------------------------------------------ */

static void header(const struct team *t, const struct bench_opts *o)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = 0;
    for (char *c = lib; *c; c++)
        *c = *c == '\t' ? ' ' : *c; /* one line of words */
    const char *ep = getenv("EPMPI_ENDPOINTS");
    int epmpi = dlsym(RTLD_DEFAULT, "MPI_Comm_create_endpoints") != NULL;
    printf("# epmpi-bench %s on %s\n", PACKAGE_VERSION, lib);
    printf("# --comm %s, %d parties, threads per process: %d, %s%s%s\n",
           o->dup          ? "dup"
           : o->threadcomm ? "threadcomm"
                           : "world",
           t->nparties, t->nthreads, epmpi ? "epmpi preloaded" : "without epmpi",
           epmpi && ep ? ", EPMPI_ENDPOINTS=" : "", epmpi && ep ? ep : "");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int run[MAX_CASE_RUNS], provided, world_rank, world_size;
    int nrun = parse_args(argc, argv, &o, run);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    struct team team = {o.dup, omp_get_max_threads(), 0, NULL, 0};
    team.slot = calloc((size_t)team.nthreads, sizeof *team.slot);
    int *thread_rank = calloc((size_t)team.nthreads, sizeof *thread_rank);
    MPI_Comm *dups = calloc((size_t)team.nthreads, sizeof *dups);
    if (!team.slot || !thread_rank || !dups) {
        fprintf(stderr, "epmpi-bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (o.dup) {
        if (provided < MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "epmpi-bench: --comm dup needs MPI_THREAD_MULTIPLE\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int t = 0; t < team.nthreads; t++)
            MPI_Comm_dup(MPI_COMM_WORLD, &dups[t]);
    }
    MPI_Comm tc = MPI_COMM_NULL;
    if (o.threadcomm) {
        if (!MPIX_Threadcomm_init) {
            fprintf(stderr, "epmpi-bench: --comm threadcomm needs MPIX_Threadcomm_init (MPICH 4.2 or epmpi)\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPIX_Threadcomm_init(MPI_COMM_WORLD, team.nthreads, &tc);
    }
    /* Under world mode, outside the parallel region the main thread is
     * endpoint 0 of its process and world_size counts every endpoint. */
    team.nparties = o.dup || o.threadcomm ? world_size * team.nthreads : world_size;
    if (world_rank == 0)
        header(&team, &o);
#pragma omp parallel num_threads(team.nthreads)
    {
        struct party p = {&team, MPI_COMM_WORLD, 0, 0, omp_get_thread_num(), 0};
        if (o.dup)
            p.comm = dups[p.thread];
        if (o.threadcomm) {
            MPIX_Threadcomm_start(tc);
            p.comm = tc;
        }
        MPI_Comm_rank(p.comm, &p.rank);
        MPI_Comm_size(p.comm, &p.size);
        p.id = o.dup ? p.thread * p.size + p.rank : p.rank; /* a thread communicator's ranks are all parties */
        thread_rank[p.thread] = p.rank;
#pragma omp barrier
        /* Without endpoints, threads sharing MPI_COMM_WORLD share a rank. */
        if (!o.dup && !o.threadcomm && p.thread == 0)
            for (int t = 1; t < team.nthreads; t++)
                if (thread_rank[t] == p.rank)
                    party_fail(&p,
                               "threads 0 and %d are both rank %d of MPI_COMM_WORLD: run with "
                               "OMP_NUM_THREADS=1, under epmpi in world mode, or with --comm dup",
                               t, p.rank);
        for (int i = 0; i < nrun; i++)
            cases[run[i]].run(&p, &o);
        if (o.threadcomm)
            MPIX_Threadcomm_finish(tc);
    }
    if (o.threadcomm)
        MPIX_Threadcomm_free(&tc);
    for (int t = 0; o.dup && t < team.nthreads; t++)
        MPI_Comm_free(&dups[t]);
    free(dups);
    free(thread_rank);
    free(team.slot);
    MPI_Finalize();
    return 0;
}
