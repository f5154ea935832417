#include "diag/diag.h"

#include "base/grow.h"
#include "core/proc.h"
#include "core/request.h"
#include "base/thread.h"
#include "base/wait.h"
#include "core/world.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- counters ------------------------------------------------------------ */

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static ep_stats_t *stats_head, **stats_tail = &stats_head; /* in creation order */

static int gid_eq(ep_gid_t a, ep_gid_t b) { return a.origin == b.origin && a.index == b.index; }

ep_stats_t *ep_stats_for(ep_gid_t gid)
{
    ep_stats_t *s;
    pthread_mutex_lock(&stats_lock);
    for (s = stats_head; s && !gid_eq(s->gid, gid); s = s->next)
        ;
    if (!s && (s = calloc(1, sizeof *s))) {
        s->gid = gid;
        *stats_tail = s;
        stats_tail = &s->next;
    }
    pthread_mutex_unlock(&stats_lock);
    return s;
}

void ep_stats_named(ep_endpoint_t *ep)
{
    ep_stats_t *s = ep->stats;
    if (!s || ep->comm->ctx != s->gid.origin) /* not the communicator that made the identity */
        return;
    pthread_mutex_lock(&stats_lock);
    snprintf(s->name, sizeof s->name, "%s", ep->name);
    pthread_mutex_unlock(&stats_lock);
}

/* ---- one thread blocking per endpoint (EPMPI_DEBUG) ---------------------- */

/* Its address tells the threads apart. */
static __thread char thread_token EP_TLS;
__thread const char *ep_diag_call EP_TLS;

/* How the application knows the communicator of ep. */
static void comm_label(const ep_endpoint_t *ep, char *buf, size_t size)
{
    if (ep->user_handle == MPI_COMM_WORLD)
        snprintf(buf, size, "MPI_COMM_WORLD");
    else if (ep->user_handle == MPI_COMM_SELF)
        snprintf(buf, size, "MPI_COMM_SELF");
    else if (ep->name[0])
        snprintf(buf, size, "communicator " EP_HFMT " '%s'", EP_HARG(ep->handle), ep->name);
    else
        snprintf(buf, size, "communicator " EP_HFMT, EP_HARG(ep->handle));
}

/* The calling thread, for a message: "the thread holding world endpoint
 * 3" (first-call), "OpenMP thread 2", or outside any parallel region. */
static void thread_label(char *buf, size_t size)
{
    int t = ep_thread_omp_num();
    if (ep_thread_by_call && ep_thread_held)
        snprintf(buf, size, "the thread holding world endpoint %d", ep_thread_held - 1);
    else if (t >= 0)
        snprintf(buf, size, "OpenMP thread %d", t);
    else
        snprintf(buf, size, "a thread outside any OpenMP parallel region");
}

void ep_diag_enter_slow(ep_endpoint_t *ep, const char *call)
{
    if (ep->stats)
        ep_stats_enter(ep->stats);
    if (!ep_config.debug)
        return;
    uintptr_t me = (uintptr_t)&thread_token, held = 0;
    if (atomic_compare_exchange_strong(&ep->busy, &held, me)) {
        atomic_store(&ep->busy_call, call);
        return;
    }
    if (held == me || atomic_exchange(&ep->busy_warned, 1))
        return;
    char comm[MPI_MAX_OBJECT_NAME + 32], who[64];
    const char *other = atomic_load(&ep->busy_call);
    comm_label(ep, comm, sizeof comm);
    thread_label(who, sizeof who);
    ep_say("epmpi: warning (EPMPI_DEBUG): %s: two threads block on one endpoint at the same time: rank %d of %s in "
           "process %d is already inside %s in another thread (this one is %s). Allowed, but in world mode "
           "usually a mistake: %s\n",
           call, ep_local_rank(ep), comm, ep_proc_world_rank(), other ? other : "a blocking call", who,
           ep_thread_by_call ? "with EPMPI_THREADS=first-call each thread holds its own world endpoint, so two "
                               "threads share an endpoint of a communicator made from one (or an explicit one)."
                             : "threads outside parallel regions and threads that are not OpenMP threads are "
                               "endpoint 0 (EPMPI_THREADS=first-call gives each thread its own), and the threads of "
                               "a nested region share the endpoint of their thread in the outermost region.");
    fflush(stderr);
}

void ep_diag_leave_slow(ep_endpoint_t *ep)
{
    uintptr_t me = (uintptr_t)&thread_token;
    atomic_compare_exchange_strong(&ep->busy, &me, 0);
}

/* ---- who the caller is, for fatal errors ---------------------------------- */

void ep_diag_whoami(MPI_Comm comm, char *buf, size_t size)
{
    int n = 0, t = ep_thread_index_peek();
    if (!ep_world_mode())
        n = snprintf(buf, size, "process %d", ep_proc_world_rank());
    else if (t < ep_world.nep)
        n = snprintf(buf, size, "world rank %d (process %d, endpoint %d)", ep_world.ep[t]->rank, ep_proc_world_rank(),
                     t);
    else if (ep_thread_by_call)
        n = snprintf(buf, size, "process %d, a thread without an endpoint", ep_proc_world_rank());
    else
        n = snprintf(buf, size, "process %d, OpenMP thread %d (no endpoint)", ep_proc_world_rank(), t);
    const ep_endpoint_t *ep = ep_comm_handle_is_ep(comm) ? ep_endpoint_get(comm) : NULL;
    if (ep && n > 0 && (size_t)n < size) {
        char label[MPI_MAX_OBJECT_NAME + 32];
        comm_label(ep, label, sizeof label);
        snprintf(buf + n, size - (size_t)n, ", rank %d of %s", ep_local_rank(ep), label);
    }
}

/* ---- a rendezvous that waits for ranks that do not come ------------------- */

/* "a, b-c, ..." of the n ascending values v[] into buf. */
static void ranges(const int *v, int n, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && len + 16 < size; i++) {
        int j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        len += (size_t)snprintf(buf + len, size - len, "%s%d", i ? ", " : "", v[i]);
        if (j > i)
            len += (size_t)snprintf(buf + len, size - len, "%s%d", j == i + 1 ? ", " : "-", v[j]);
        i = j;
    }
    if (len + 16 >= size)
        snprintf(buf + len, size - len, ", ...");
}

/* The local endpoints of c from index `from` on that have not arrived, as
 * text: their local indices (eps) and their ranks in c (ranks), each of
 * RANKS_TEXT bytes.  Returns how many; 0 also when out of memory. */
#define RANKS_TEXT 96
static int absent_text(const ep_comm_t *c, int from, ep_absent_fn *absent, const void *arg, char *eps, char *ranks)
{
    int *lidx = malloc(2 * sizeof(int) * (size_t)c->nlocal), *rank = lidx + c->nlocal, n = 0;
    for (int j = from; lidx && j < c->nlocal; j++)
        if (absent(arg, j)) {
            lidx[n] = j;
            rank[n++] = ep_local_rank(&c->local[j]);
        }
    ranges(lidx, n, eps, RANKS_TEXT);
    ranges(rank, n, ranks, RANKS_TEXT);
    free(lidx);
    return n;
}

/* Fails a wait on MPI_COMM_WORLD in world mode for endpoints that no
 * thread can be while the caller's region (of team threads) runs. */
static ep_status_t no_thread(ep_comm_t *c, int team, ep_absent_fn *absent, const void *arg)
{
    char eps[RANKS_TEXT], ranks[RANKS_TEXT], region[64] = ", and";
    int n = absent_text(c, team, absent, arg, eps, ranks), outside = !ep_thread_in_parallel();
    if (!n)
        return EP_OK;
    if (!outside)
        snprintf(region, sizeof region, ", but the caller's parallel region has %d thread%s:", team,
                 team == 1 ? "" : "s");
    ep_status_explain(EP_ERR_NO_THREAD,
                      "%swith EPMPI_ENDPOINTS=%d, MPI_COMM_WORLD has %d ranks in each process, each the OpenMP "
                      "thread of that number%s endpoint%s %s of this process (world rank%s %s) cannot join this "
                      "call; call it from every thread of a parallel region of %d threads (OMP_NUM_THREADS, "
                      "num_threads)%s",
                      outside ? "called outside any parallel region, where the caller is endpoint 0 of its process: "
                              : "",
                      c->nlocal, c->nlocal, region, n == 1 ? "" : "s", eps, n == 1 ? "" : "s", ranks, c->nlocal,
                      outside ? ", or, for a collective of the processes, use a communicator with one endpoint per "
                                "process (MPI_Comm_split of MPI_COMM_WORLD with colour 0 on thread 0 and "
                                "MPI_UNDEFINED on the others)"
                              : "");
    return EP_ERR_NO_THREAD;
}

static void report_stuck(ep_endpoint_t *ep, ep_absent_fn *absent, const void *arg)
{
    char eps[RANKS_TEXT], ranks[RANKS_TEXT], me[MPI_MAX_OBJECT_NAME + 160];
    int n = absent_text(ep->comm, 0, absent, arg, eps, ranks);
    if (!n)
        return;
    const char *call = atomic_load(&ep->busy_call);
    ep_diag_whoami(ep->handle, me, sizeof me);
    ep_say("epmpi: warning (EPMPI_DEBUG): %s: %s, has waited %d s for rank%s %s of that communicator in this "
           "process to enter the call\n",
           call ? call : "a collective call", me, EP_WATCH_REPORT_S, n == 1 ? "" : "s", ranks);
    fflush(stderr);
}

/* EPMPI_THREADS=first-call: the absent endpoints of MPI_COMM_WORLD that
 * no thread holds wait for a thread to take them; a warning says so
 * (whether one will come, epmpi cannot know). */
typedef struct {
    ep_absent_fn *absent;
    const void *arg;
} unheld_t;

static int absent_unheld(const void *arg, int j)
{
    const unheld_t *u = arg;
    return u->absent(u->arg, j) && !ep_thread_endpoint_held(j);
}

static void report_unheld(ep_endpoint_t *ep, ep_absent_fn *absent, const void *arg)
{
    char eps[RANKS_TEXT], ranks[RANKS_TEXT];
    unheld_t u = {absent, arg};
    int n = absent_text(ep->comm, 0, absent_unheld, &u, eps, ranks);
    if (!n)
        return;
    const char *call = ep_diag_call;
    ep_say("epmpi: warning: %s on MPI_COMM_WORLD (world rank %d) has waited %d s for endpoint%s %s of process %d "
           "(world rank%s %s), which no thread holds: with EPMPI_THREADS=first-call a thread takes an endpoint at "
           "its first call on MPI_COMM_WORLD or MPI_COMM_SELF and gives it back when it ends, so each of the "
           "process's %d endpoints needs a running thread to call it\n",
           call ? call : "a collective call", ep->rank, EP_WATCH_REPORT_S, n == 1 ? "" : "s", eps, ep_proc_world_rank(),
           n == 1 ? "" : "s", ranks, ep->comm->nlocal);
    fflush(stderr);
}

ep_status_t ep_diag_watch_slow(ep_watch_t *w, ep_endpoint_t *ep, ep_absent_fn *absent, const void *arg)
{
    uint64_t now = ep_now_ns();
    if (!w->since)
        w->since = now;
    uint64_t waited = now - w->since;
    if (waited < 500000000u)
        return EP_OK;
    ep_status_t rc = ep->comm->thread_bound ? no_thread(ep->comm, ep_thread_team_size(), absent, arg) : EP_OK;
    if (!rc && !w->reported && waited >= EP_WATCH_REPORT_S * 1000000000ull) {
        w->reported = 1;
        if (ep_thread_by_call && ep->user_handle == MPI_COMM_WORLD)
            report_unheld(ep, absent, arg);
        if (ep_config.debug)
            report_stuck(ep, absent, arg);
    }
    return rc;
}

/* ---- operations left pending at MPI_Finalize ----------------------------- */

#define EP_PENDING_SHOWN 20

typedef struct pending {
    FILE *out;
    int n;
    ep_endpoint_t **eps; /* live endpoints, collected under the registry lock */
    size_t neps, cap;
} pending_t;

static void rank_text(int r, char *buf, size_t size)
{
    if (r == MPI_ANY_SOURCE)
        snprintf(buf, size, "MPI_ANY_SOURCE");
    else
        snprintf(buf, size, "rank %d", r);
}

static void tag_text(int t, char *buf, size_t size)
{
    if (t == MPI_ANY_TAG)
        snprintf(buf, size, "MPI_ANY_TAG");
    else
        snprintf(buf, size, "tag %d", t);
}

/* One line: "  rank R of COMM: what" (the first EP_PENDING_SHOWN only). */
static void pending_line(pending_t *p, const ep_endpoint_t *ep, const char *what, int peer, int tag, int64_t bytes)
{
    char comm[MPI_MAX_OBJECT_NAME + 32], rk[32], tg[32];
    if (p->n++ >= EP_PENDING_SHOWN)
        return;
    comm_label(ep, comm, sizeof comm);
    rank_text(peer, rk, sizeof rk);
    tag_text(tag, tg, sizeof tg);
    fprintf(p->out, "  rank %d of %s: %s %s, %s", ep_local_rank(ep), comm, what, rk, tg);
    if (bytes >= 0)
        fprintf(p->out, ", %" PRId64 " bytes", bytes);
    fprintf(p->out, "\n");
}

static void pending_request(ep_object_t *o, void *arg)
{
    ep_request_t *r = (ep_request_t *)o;
    int st = ep_request_state(r);
    if (st != EP_RS_PENDING && st != EP_RS_NET)
        return;
    if (r->kind == EP_REQ_SEND)
        pending_line(arg, r->ep, "send (request not completed) to", r->peer, r->tag, r->lay.bytes);
    else if (r->kind == EP_REQ_RECV)
        pending_line(arg, r->ep, "receive (request not completed) from", r->source_pat, r->tag_pat, -1);
    else if (r->kind == EP_REQ_PAIR)
        pending_line(arg, r->ep, "send-receive (request not completed), receiving from", r->part[0]->source_pat,
                     r->part[0]->tag_pat, -1);
    else if (ep_request_partitioned(r))
        pending_line(arg, r->ep,
                     r->kind == EP_REQ_PART_SEND ? "partitioned send (request not completed) to"
                                                 : "partitioned receive (request not completed) from",
                     r->peer, r->tag, -1);
    else
        pending_line(arg, r->ep, "non-blocking collective (request not completed) on", MPI_ANY_SOURCE, MPI_ANY_TAG, -1);
}

static void pending_message(ep_object_t *o, void *arg)
{
    ep_msg_t *m = (ep_msg_t *)o;
    if (m->ep)
        pending_line(arg, m->ep, "message taken by MPI_Mprobe but never received, from", m->link.source, m->link.tag,
                     m->bytes);
}

static void collect_endpoint(ep_object_t *o, void *arg)
{
    pending_t *p = arg;
    if (!EP_GROW(p->eps, p->neps, p->cap, 64))
        return;
    p->eps[p->neps++] = (ep_endpoint_t *)o;
}

/* ---- communicators not freed at MPI_Finalize ----------------------------- */

static int by_comm(const void *a, const void *b)
{
    const ep_endpoint_t *x = *(ep_endpoint_t *const *)a, *y = *(ep_endpoint_t *const *)b;
    if (x->comm != y->comm)
        return (uintptr_t)x->comm < (uintptr_t)y->comm ? -1 : 1;
    return ep_local_rank(x) - ep_local_rank(y);
}

/* The communicators of eps[] (the live endpoints) whose handles the
 * application still holds: one line each, its ranks in this process.
 * World mode's MPI_COMM_WORLD and MPI_COMM_SELF, and thread communicators'
 * endpoints (handles of their own), are not the application's to free
 * this way. */
static void report_unfreed(ep_endpoint_t **eps, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (eps[i]->handle != MPI_COMM_NULL && eps[i]->user_handle == eps[i]->handle)
            eps[k++] = eps[i];
    if (!k)
        return;
    qsort(eps, k, sizeof *eps, by_comm);
    int ncomms = 0, *ranks = malloc(sizeof *ranks * k);
    char *text = NULL;
    size_t len = 0;
    FILE *out = ranks ? open_memstream(&text, &len) : NULL;
    if (!out) {
        free(ranks);
        return;
    }
    for (size_t i = 0, j; i < k; i = j) {
        int nr = 0;
        for (j = i; j < k && eps[j]->comm == eps[i]->comm; j++)
            ranks[nr++] = ep_local_rank(eps[j]);
        if (ncomms++ < EP_PENDING_SHOWN) {
            char comm[MPI_MAX_OBJECT_NAME + 32], list[RANKS_TEXT];
            comm_label(eps[i], comm, sizeof comm);
            ranges(ranks, nr, list, sizeof list);
            fprintf(out, "  %s%s (size %d): rank%s %s here\n", comm,
                    eps[i]->comm->inter ? ", an intercommunicator" : "", ep_local_size(eps[i]), nr == 1 ? "" : "s",
                    list);
        }
    }
    if (ncomms > EP_PENDING_SHOWN)
        fprintf(out, "  ... and %d more\n", ncomms - EP_PENDING_SHOWN);
    fclose(out);
    ep_say("epmpi: warning: MPI_Finalize: process %d has %d endpoint communicator%s not freed "
           "(MPI_Comm_free):\n%s",
           ep_proc_world_rank(), ncomms, ncomms == 1 ? "" : "s", text);
    fflush(stderr);
    free(text);
    free(ranks);
}

static void report_pending(void (*drain)(ep_endpoint_t *ep))
{
    char *text = NULL;
    size_t len = 0;
    pending_t p = {0};
    if (!(p.out = open_memstream(&text, &len)))
        return;
    /* Endpoint locks are taken outside the registry lock, which probes
     * take inside them.  Messages still in lanes are matched first, so that
     * the lists below see them. */
    ep_registry_each(EP_OBJ_ENDPOINT, collect_endpoint, &p);
    for (size_t i = 0; i < p.neps; i++)
        drain(p.eps[i]);
    ep_registry_each(EP_OBJ_REQUEST, pending_request, &p);
    ep_registry_each(EP_OBJ_MESSAGE, pending_message, &p);
    for (size_t i = 0; i < p.neps; i++) {
        ep_endpoint_t *ep = p.eps[i];
        ep_lock(&ep->lock);
        for (ep_match_item_t *it = ep->unexpected.head; it; it = it->next)
            pending_line(&p, ep, "message arrived but never received, from", it->source, it->tag,
                         ep_container_of(it, ep_msg_t, link)->bytes);
        ep_unlock(&ep->lock);
    }
    if (p.n > EP_PENDING_SHOWN)
        fprintf(p.out, "  ... and %d more\n", p.n - EP_PENDING_SHOWN);
    fclose(p.out);
    if (p.n) {
        ep_say("epmpi: warning: MPI_Finalize: process %d still has %d pending operation%s:\n%s", ep_proc_world_rank(),
               p.n, p.n == 1 ? "" : "s", text);
        fflush(stderr);
    }
    free(text);
    /* Legal, unlike the pending operations above: only asked for
     * (EPMPI_DEBUG), else a program that leaves them to MPI_Finalize, as
     * many tests do, would print for nothing. */
    if (ep_config.debug)
        report_unfreed(p.eps, p.neps);
    free(p.eps);
}

/* ---- statistics at MPI_Finalize ------------------------------------------ */

typedef struct stats_row {
    int32_t proc;
    uint64_t origin, index;               /* the identity */
    char label[MPI_MAX_OBJECT_NAME + 48]; /* its name; unnamed ones are numbered by process 0 (name_unnamed) */
    uint64_t n[EP_STAT_COUNT];
} stats_row_t;

/* A row's name: its world rank, its classic process, or its rank in the
 * communicator that created it, by that communicator's name (empty: still
 * to be numbered). */
static void stats_label(const ep_stats_t *s, char *buf, size_t size)
{
    buf[0] = 0;
    for (int t = 0; t < ep_world.nep; t++) {
        ep_endpoint_t *w = ep_endpoint_get(ep_world.comm[t]);
        if (w && gid_eq(w->comm->gids[w->rank], s->gid)) {
            snprintf(buf, size, "world rank %d", w->rank);
            return;
        }
    }
    if (s->gid.origin == 0)
        snprintf(buf, size, "process %" PRIu64, s->gid.index);
    else if (s->name[0])
        snprintf(buf, size, "rank %" PRIu64 " of '%s'", s->gid.index, s->name);
}

static const char *const csv_header = "process,endpoint,sent_intra_msgs,sent_intra_bytes,sent_inter_msgs,"
                                      "sent_inter_bytes,recv_intra_msgs,recv_intra_bytes,recv_inter_msgs,"
                                      "recv_inter_bytes,wait_seconds,coll_calls,coll_sent_bytes,coll_recv_bytes\n";

static void print_table(const stats_row_t *rows, int n, int unnamed)
{
    int w = 24; /* the endpoint column: as wide as its widest name */
    for (int i = 0; i < n; i++)
        if ((int)strlen(rows[i].label) > w)
            w = (int)strlen(rows[i].label);
    fprintf(stderr,
            "epmpi statistics (EPMPI_STATS): point-to-point messages and collective calls per endpoint\n"
            "%7s  %-*s %21s %21s %21s %21s %9s %34s\n"
            "%7s  %-*s %8s %12s %8s %12s %8s %12s %8s %12s %9s %8s %12s %12s\n",
            "", w, "", "sent in process", "sent to others", "received in process", "received from others", "waiting",
            "collectives", "process", w, "endpoint", "msgs", "bytes", "msgs", "bytes", "msgs", "bytes", "msgs", "bytes",
            "seconds", "calls", "bytes sent", "bytes recvd");
    for (int i = 0; i < n; i++) {
        const uint64_t *v = rows[i].n;
        fprintf(stderr, "%7d  %-*s", rows[i].proc, w, rows[i].label);
        for (int k = 0; k < EP_STAT_WAIT_NS; k += 2)
            fprintf(stderr, " %8" PRIu64 " %12" PRIu64, v[k], v[k + 1]);
        fprintf(stderr, " %9.3f %8" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", (double)v[EP_STAT_WAIT_NS] / 1e9,
                v[EP_STAT_COLL_CALLS], v[EP_STAT_COLL_SENT_BYTES], v[EP_STAT_COLL_RECV_BYTES]);
    }
    if (unnamed)
        fprintf(stderr, "(unnamed comm K: the K-th communicator of new endpoints, in the order they were made; "
                        "MPI_Comm_set_name gives them their names here)\n");
    fflush(stderr);
}

/* A field as CSV has it: quoted when it holds a comma or a quote (names). */
static void csv_field(FILE *f, const char *v)
{
    if (!strpbrk(v, ",\"\n")) {
        fputs(v, f);
        return;
    }
    fputc('"', f);
    for (; *v; v++) {
        if (*v == '"')
            fputc('"', f);
        fputc(*v, f);
    }
    fputc('"', f);
}

static void write_csv(const stats_row_t *rows, int n)
{
    FILE *f = fopen(ep_config.stats_file, "w");
    if (!f) {
        ep_say("epmpi: MPI_Finalize: cannot write EPMPI_STATS_FILE='%s': %s\n", ep_config.stats_file, strerror(errno));
        return;
    }
    fputs(csv_header, f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%d,", rows[i].proc);
        csv_field(f, rows[i].label);
        for (int k = 0; k < EP_STAT_WAIT_NS; k++)
            fprintf(f, ",%" PRIu64, rows[i].n[k]);
        fprintf(f, ",%.6f", (double)rows[i].n[EP_STAT_WAIT_NS] / 1e9);
        for (int k = EP_STAT_COLL_CALLS; k < EP_STAT_COUNT; k++)
            fprintf(f, ",%" PRIu64, rows[i].n[k]);
        fputc('\n', f);
    }
    if (fclose(f))
        ep_say("epmpi: MPI_Finalize: writing EPMPI_STATS_FILE='%s' failed: %s\n", ep_config.stats_file,
               strerror(errno));
}

/* Process 0 names the rows of unnamed communicators "unnamed comm K", K
 * counting their communicators in the order they were made (context ids
 * grow with it): the same K on every row of one communicator. */
static int origin_order(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int name_unnamed(stats_row_t *rows, int n)
{
    uint64_t *o = malloc(sizeof *o * (size_t)(n + 1));
    int k = 0;
    for (int i = 0; o && i < n; i++)
        if (!rows[i].label[0])
            o[k++] = rows[i].origin;
    if (o)
        qsort(o, (size_t)k, sizeof *o, origin_order);
    for (int i = 0; o && i < n; i++) {
        if (rows[i].label[0])
            continue;
        int id = 1;
        for (int j = 1; j < k && o[j] <= rows[i].origin; j++)
            id += o[j] != o[j - 1];
        snprintf(rows[i].label, sizeof rows[i].label, "rank %" PRIu64 " of unnamed comm %d", rows[i].index, id);
    }
    free(o);
    return k;
}

/* Every process sends its rows to process 0, which prints them. */
static void report_stats(void)
{
    int me = ep_proc_world_rank(), np = ep_proc_world_size(), n = 0, bytes;
    ep_stats_t *s;
    pthread_mutex_lock(&stats_lock); /* names may still change (ep_stats_named) */
    for (s = stats_head; s; s = s->next)
        n++;
    stats_row_t *mine = calloc((size_t)n + 1, sizeof *mine);
    n = 0;
    for (s = stats_head; mine && s; s = s->next, n++) {
        mine[n].proc = me;
        mine[n].origin = s->gid.origin;
        mine[n].index = s->gid.index;
        stats_label(s, mine[n].label, sizeof mine[n].label);
        for (int k = 0; k < EP_STAT_COUNT; k++)
            mine[n].n[k] = atomic_load(&s->n[k]);
    }
    pthread_mutex_unlock(&stats_lock);
    bytes = mine ? n * (int)sizeof *mine : 0;
    int *sizes = me == 0 ? calloc((size_t)np, sizeof *sizes) : NULL, *displs = NULL;
    PMPI_Gather(&bytes, 1, MPI_INT, sizes, 1, MPI_INT, 0, MPI_COMM_WORLD);
    stats_row_t *all = NULL;
    int total = 0;
    if (me == 0 && sizes && (displs = calloc((size_t)np, sizeof *displs))) {
        for (int p = 0; p < np; p++) {
            displs[p] = total;
            total += sizes[p];
        }
        all = malloc((size_t)total + 1);
    }
    if (me == 0 && !all) {
        ep_say("epmpi: MPI_Finalize: out of memory gathering the statistics (EPMPI_STATS)\n");
        ep_abort_job(1);
    }
    PMPI_Gatherv(mine, bytes, MPI_BYTE, all, sizes, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (me == 0) {
        int rows = all ? total / (int)sizeof *all : 0;
        int unnamed = name_unnamed(all, rows);
        if (ep_config.stats & EP_STATS_TABLE)
            print_table(all, rows, unnamed);
        if (ep_config.stats & EP_STATS_CSV)
            write_csv(all, rows);
    }
    free(all);
    free(displs);
    free(sizes);
    free(mine);
}

/* ---- world mode: a region of fewer threads than endpoints --------------- */

/* A wait (ep_wait_long_hook) that has lasted EP_WAIT_LONG_NS in an OpenMP
 * region of fewer threads than EPMPI_ENDPOINTS: whatever it waits for
 * may need a rank whose thread does not exist while the region runs (a
 * point-to-point partner; collectives on MPI_COMM_WORLD fail on their own,
 * no_thread).  Legal when it waits for another process, so a warning,
 * once per process. */
static _Atomic int region_warned;

static void region_wait_long(void)
{
    int nep = ep_world.nep;
    if (!nep || !ep_thread_in_parallel())
        return;
    int team = ep_thread_team_size(), t = ep_thread_index(); /* t < team < nep */
    if (team >= nep || atomic_exchange(&region_warned, 1))
        return;
    const char *omp = getenv("OMP_NUM_THREADS");
    char missing[48];
    if (team == nep - 1)
        snprintf(missing, sizeof missing, "the rank of thread %d", team);
    else
        snprintf(missing, sizeof missing, "the ranks of threads %d to %d", team, nep - 1);
    ep_say("epmpi: warning: world rank %d (process %d, OpenMP thread %d) has waited %u s in a parallel region of %d "
           "thread%s, but EPMPI_ENDPOINTS=%d: %s of each process cannot send, receive or join a collective while "
           "such a region runs, so a wait for one of them never ends; run the region with %d threads "
           "(OMP_NUM_THREADS=%d or num_threads(%d); OMP_NUM_THREADS is %s%s)\n",
           ep_world.ep[t]->rank, ep_proc_world_rank(), t, EP_WAIT_LONG_NS / 1000000000u, team, team == 1 ? "" : "s",
           nep, missing, nep, nep, nep, omp ? omp : "unset", omp ? "" : ", so the default is the CPU count");
    fflush(stderr);
}

int ep_diag_init(char *err, size_t errlen)
{
    ep_errhandler_set_whoami(ep_diag_whoami);
    if (ep_config.endpoints > 0 && !ep_config.threads_by_call)
        ep_wait_long_hook = region_wait_long;
    if (!(ep_config.stats & EP_STATS_CSV))
        return 0;
    /* Process 0 writes the file; every process stops when it cannot. */
    int bad = 0;
    if (ep_proc_world_rank() == 0) {
        FILE *f = fopen(ep_config.stats_file, "w");
        if (f)
            fclose(f);
        else
            bad = errno;
    }
    PMPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!bad)
        return 0;
    snprintf(err, errlen, "EPMPI_STATS_FILE='%s' cannot be written (%s): give a path for the CSV statistics",
             ep_config.stats_file, strerror(bad));
    return -1;
}

void ep_diag_finalize(void (*drain)(ep_endpoint_t *ep))
{
    ep_wait_long_hook = NULL;
    report_pending(drain);
    if (ep_config.stats)
        report_stats();
    pthread_mutex_lock(&stats_lock);
    while (stats_head) {
        ep_stats_t *s = stats_head;
        stats_head = s->next;
        free(s);
    }
    stats_tail = &stats_head;
    pthread_mutex_unlock(&stats_lock);
}
