#include "diag.h"

#include "net.h"
#include "p2p.h"
#include "request.h"
#include "thread.h"
#include "world.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- counters ------------------------------------------------------------ */

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static ep_stats_t *stats_head, **stats_tail = &stats_head; /* in creation order */
__thread ep_stats_t *ep_stats_cur EP_TLS;

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

/* ---- one thread blocking per endpoint (EPMPI_DEBUG) ---------------------- */

/* Its address tells the threads apart. */
static __thread char thread_token EP_TLS;

/* How the application knows the communicator of ep. */
static void comm_label(const ep_endpoint_t *ep, char *buf, size_t size)
{
    if (ep->user_handle == MPI_COMM_WORLD)
        snprintf(buf, size, "MPI_COMM_WORLD");
    else if (ep->user_handle == MPI_COMM_SELF)
        snprintf(buf, size, "MPI_COMM_SELF");
    else if (ep->name[0])
        snprintf(buf, size, "communicator 0x%x '%s'", (unsigned)ep->handle, ep->name);
    else
        snprintf(buf, size, "communicator 0x%x", (unsigned)ep->handle);
}

void ep_diag_enter_slow(ep_endpoint_t *ep, const char *call)
{
    if (ep->stats)
        ep_stats_cur = ep->stats;
    if (!ep_config.debug)
        return;
    uintptr_t me = (uintptr_t)&thread_token, held = 0;
    if (atomic_compare_exchange_strong(&ep->busy, &held, me)) {
        atomic_store(&ep->busy_call, call);
        return;
    }
    if (held == me || atomic_exchange(&ep->busy_warned, 1))
        return;
    char comm[MPI_MAX_OBJECT_NAME + 32];
    const char *other = atomic_load(&ep->busy_call);
    comm_label(ep, comm, sizeof comm);
    fprintf(stderr,
            "epmpi: warning (EPMPI_DEBUG): %s: two threads block on one endpoint at the same time: rank %d of %s in "
            "process %d is already inside %s in another thread (this one is %s thread %d). Allowed, but in world "
            "mode usually a mistake: threads outside parallel regions, plain pthreads and nested regions all act "
            "as endpoint 0.\n",
            call, ep_local_rank(ep), comm, ep_net_world_rank(), other ? other : "a blocking call",
            ep_thread_in_parallel() ? "OpenMP" : "non-OpenMP", ep_thread_index());
    fflush(stderr);
}

void ep_diag_leave_slow(ep_endpoint_t *ep)
{
    uintptr_t me = (uintptr_t)&thread_token;
    atomic_compare_exchange_strong(&ep->busy, &me, 0);
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
    else
        pending_line(arg, r->ep, "non-blocking collective (request not completed) on", MPI_ANY_SOURCE,
                     MPI_ANY_TAG, -1);
}

static void pending_message(ep_object_t *o, void *arg)
{
    ep_msg_t *m = (ep_msg_t *)o;
    if (m->ep)
        pending_line(arg, m->ep, "message taken by MPI_Mprobe but never received, from", m->link.source,
                     m->link.tag, m->bytes);
}

static void collect_endpoint(ep_object_t *o, void *arg)
{
    pending_t *p = arg;
    if (p->neps == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        ep_endpoint_t **e = realloc(p->eps, cap * sizeof *e);
        if (!e)
            return;
        p->eps = e;
        p->cap = cap;
    }
    p->eps[p->neps++] = (ep_endpoint_t *)o;
}

static void report_pending(void)
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
        ep_p2p_drain(p.eps[i], 1);
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
    free(p.eps);
    if (p.n > EP_PENDING_SHOWN)
        fprintf(p.out, "  ... and %d more\n", p.n - EP_PENDING_SHOWN);
    fclose(p.out);
    if (p.n) {
        fprintf(stderr, "epmpi: warning: MPI_Finalize: process %d still has %d pending operation%s:\n%s",
                ep_net_world_rank(), p.n, p.n == 1 ? "" : "s", text);
        fflush(stderr);
    }
    free(text);
}

/* ---- statistics at MPI_Finalize ------------------------------------------ */

typedef struct stats_row {
    int32_t proc;
    char label[44];
    uint64_t n[EP_STAT_COUNT];
} stats_row_t;

/* A row's name: its world rank, its classic process, or the communicator
 * that created it and its rank there. */
static void stats_label(const ep_stats_t *s, char *buf, size_t size)
{
    for (int t = 0; t < ep_world.nep; t++) {
        ep_endpoint_t *w = ep_endpoint_get(ep_world.comm[t]);
        if (w && gid_eq(w->comm->gids[w->rank], s->gid)) {
            snprintf(buf, size, "world rank %d", w->rank);
            return;
        }
    }
    if (s->gid.origin == 0)
        snprintf(buf, size, "process %" PRIu64, s->gid.index);
    else
        snprintf(buf, size, "rank %" PRIu64 " of ctx 0x%" PRIx64, s->gid.index, s->gid.origin);
}

static const char *const csv_header = "process,endpoint,sent_intra_msgs,sent_intra_bytes,sent_inter_msgs,"
                                      "sent_inter_bytes,recv_intra_msgs,recv_intra_bytes,recv_inter_msgs,"
                                      "recv_inter_bytes,wait_seconds\n";

static void print_table(const stats_row_t *rows, int n)
{
    fprintf(stderr, "epmpi statistics (EPMPI_STATS): point-to-point messages per endpoint\n"
                    "%7s  %-24s %21s %21s %21s %21s %9s\n"
                    "%7s  %-24s %8s %12s %8s %12s %8s %12s %8s %12s %9s\n",
            "", "", "sent in process", "sent to others", "received in process", "received from others", "waiting",
            "process", "endpoint", "msgs", "bytes", "msgs", "bytes", "msgs", "bytes", "msgs", "bytes", "seconds");
    for (int i = 0; i < n; i++) {
        const uint64_t *v = rows[i].n;
        fprintf(stderr, "%7d  %-24s", rows[i].proc, rows[i].label);
        for (int k = 0; k < EP_STAT_WAIT_NS; k += 2)
            fprintf(stderr, " %8" PRIu64 " %12" PRIu64, v[k], v[k + 1]);
        fprintf(stderr, " %9.3f\n", (double)v[EP_STAT_WAIT_NS] / 1e9);
    }
    fflush(stderr);
}

static void write_csv(const stats_row_t *rows, int n)
{
    FILE *f = fopen(ep_config.stats_file, "w");
    if (!f) {
        fprintf(stderr, "epmpi: MPI_Finalize: cannot write EPMPI_STATS_FILE='%s': %s\n", ep_config.stats_file,
                strerror(errno));
        return;
    }
    fputs(csv_header, f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%d,%s", rows[i].proc, rows[i].label);
        for (int k = 0; k < EP_STAT_WAIT_NS; k++)
            fprintf(f, ",%" PRIu64, rows[i].n[k]);
        fprintf(f, ",%.6f\n", (double)rows[i].n[EP_STAT_WAIT_NS] / 1e9);
    }
    if (fclose(f))
        fprintf(stderr, "epmpi: MPI_Finalize: writing EPMPI_STATS_FILE='%s' failed: %s\n", ep_config.stats_file,
                strerror(errno));
}

/* Every process sends its rows to process 0, which prints them. */
static void report_stats(void)
{
    int me = ep_net_world_rank(), np = ep_net_world_size(), n = 0, bytes;
    ep_stats_t *s;
    for (s = stats_head; s; s = s->next)
        n++;
    stats_row_t *mine = calloc((size_t)n + 1, sizeof *mine);
    n = 0;
    for (s = stats_head; mine && s; s = s->next, n++) {
        mine[n].proc = me;
        stats_label(s, mine[n].label, sizeof mine[n].label);
        for (int k = 0; k < EP_STAT_COUNT; k++)
            mine[n].n[k] = atomic_load(&s->n[k]);
    }
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
        fprintf(stderr, "epmpi: MPI_Finalize: out of memory gathering the statistics (EPMPI_STATS)\n");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    PMPI_Gatherv(mine, bytes, MPI_BYTE, all, sizes, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (me == 0) {
        int rows = all ? total / (int)sizeof *all : 0;
        if (ep_config.stats & EP_STATS_TABLE)
            print_table(all, rows);
        if (ep_config.stats & EP_STATS_CSV)
            write_csv(all, rows);
    }
    free(all);
    free(displs);
    free(sizes);
    free(mine);
}

int ep_diag_init(char *err, size_t errlen)
{
    if (!(ep_config.stats & EP_STATS_CSV))
        return 0;
    /* Process 0 writes the file; every process stops when it cannot. */
    int bad = 0;
    if (ep_net_world_rank() == 0) {
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

void ep_diag_finalize(void)
{
    report_pending();
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
