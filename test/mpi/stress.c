/* Randomized stress: rounds of random point-to-point traffic and
 * collectives among all ranks, on four communicators at once (the test
 * communicator, a dup of it, a split of it into two halves and an
 * intercommunicator between the halves), every byte, status field and the
 * non-overtaking order checked exactly.
 *
 * Every rank computes the same plan for each round from (seed, round): who
 * sends how many messages to whom on which communicator, with which tag,
 * size (0 B to 4 MiB, mostly small) and send call, and for each receiver a
 * wildcard mode (specific, MPI_ANY_SOURCE, MPI_ANY_TAG or both).  The
 * receives of one receiver on one communicator in one round then fall into
 * classes of identical (source, tag) patterns; distinct classes never match
 * the same message, so every posted receive is matched whatever the arrival
 * order.  A class is "early" (its receives are Irecvs posted first thing in
 * the round, so blocking Send, Ssend and Rsend may go to it) or "late"
 * (received after the sends with Recv, Probe+Recv, Iprobe+Recv,
 * Mprobe+Mrecv, Improbe+Imrecv or Irecv; only non-blocking and buffered
 * sends go to it).  Requests complete through Wait, Test, Waitany, Testany,
 * Waitsome, Testsome, Waitall and Testall on random subsets; receives with a
 * tag nobody sends are cancelled (MPI_Test_cancelled must say so), and
 * early receives are cancelled at random right after posting (either the
 * cancel wins and the receive is posted again, or the message it got is
 * checked).  Collectives (blocking and not) run among the point-to-point
 * traffic with checked results.
 *
 * Checking: the payload of every message is a function of its identity
 * (round, communicator, sender, receiver, per-pair sequence number; the
 * first 24 bytes spell it out for diagnostics).  At the end of a round each
 * receiver replays its receives in posting order: each must have received
 * the earliest message of its source, not yet taken, that its (source, tag)
 * pattern matches (MPI's non-overtaking rule), with that message's tag, size
 * and bytes, and nothing past its end written.  At the end of the run the
 * counts of messages sent and received per pair and communicator are
 * compared.
 *
 * Options (also as environment variables): --seed N (EPMPI_STRESS_SEED;
 * default: drawn from the clock and printed), --seconds S
 * (EPMPI_STRESS_SECONDS, default 3), --rounds R (EPMPI_STRESS_ROUNDS, a
 * maximum), EPMPI_STRESS_CORRUPT=byte|order (a deliberate fault at rank 0's
 * sends, to see the checker fail).  Shapes: world mode, explicit endpoints
 * (argv[1]), or, when every entry of argv[1] is 0, plain MPICH on the classic
 * MPI_COMM_WORLD, which checks the checker.
 *
 * stress_plan.c makes the plans, the payloads and the communicators,
 * stress_coll.c runs and checks the collectives; here is what a rank does in
 * a round. */
#include "stress.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <time.h>

const char *const kind_name[NKIND] = {"base", "dup", "split", "intercomm"};
const char *const smode_name[NSMODE] = {"Isend", "Issend", "Ibsend", "Irsend", "Send", "Ssend", "Bsend", "Rsend"};
const char *const coll_name[NCOLL] = {"Barrier", "Bcast", "Allreduce", "Alltoallv", "Ibarrier", "Ibcast", "Iallreduce"};
static const char *late_name[6] = {"Recv", "Probe+Recv", "Iprobe+Recv", "Mprobe+Mrecv", "Improbe+Imrecv", "late Irecv"};
static const char *call_name[8] = {"Wait", "Waitany", "Waitsome", "Waitall", "Test", "Testany", "Testsome", "Testall"};
static const char *wild_name[4] = {"specific", "ANY_SOURCE", "ANY_TAG", "ANY_SOURCE+ANY_TAG"};

/* ---- settings of the run (the same in every process) ----------------------- */

unsigned long long opt_seed;
int opt_corrupt;
static int opt_seed_set;
static double opt_seconds = 3;
static long opt_rounds = -1;
static int opt_verbose;
static _Atomic long cur_round;

/* ---- mismatches, pending requests, receive records -------------------------- */

void mismatch(rank_t *R, const char *fmt, ...)
{
    if (R->mismatches++ < 10) {
        char line[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        fprintf(stderr, "MISMATCH seed=%llu round %ld rank %d: %s\n", opt_seed, R->P->round, R->L->me, line);
        fflush(stderr);
    }
}

void add_pending(rank_t *R, MPI_Request req, int what, int idx)
{
    if (R->npend == R->cappend) {
        R->cappend = R->cappend ? 2 * R->cappend : 64;
        R->pend = realloc(R->pend, sizeof *R->pend * (size_t)R->cappend);
        EPT_CHECK(R->pend, "out of memory");
    }
    R->pend[R->npend++] = (pending_t){req, what, idx, 0};
}

static int new_rrec(rank_t *R, int kind, int psrc, int ptag, size_t cap, const char *how)
{
    if (R->nrr == R->caprr) {
        R->caprr = R->caprr ? 2 * R->caprr : 64;
        R->rr = realloc(R->rr, sizeof *R->rr * (size_t)R->caprr);
        EPT_CHECK(R->rr, "out of memory");
    }
    rrec_t *r = &R->rr[R->nrr];
    *r = (rrec_t){.kind = kind, .psrc = psrc, .ptag = ptag, .post = R->post++, .cap = cap, .how = how};
    r->buf = malloc(cap + GUARD);
    EPT_CHECK(r->buf, "out of memory (%zu bytes)", cap + GUARD);
    memset(r->buf, GUARD_BYTE, cap + GUARD);
    return R->nrr++;
}

static void recv_done(rank_t *R, int i, const MPI_Status *st)
{
    rrec_t *r = &R->rr[i];
    int flag = -1;
    r->st = *st;
    r->done = 1;
    EPT_OK(MPI_Test_cancelled(st, &flag));
    if (flag)
        mismatch(R, "%s on %s: receive reported cancelled although nobody cancelled it", r->how, kind_name[r->kind]);
}

/* A receive class: the messages to this rank that share a pattern. */
typedef struct {
    int kind, psrc, ptag, early, count;
    size_t cap;
} class_t;

static int find_classes(rank_t *R, class_t *cl)
{
    const plan_t *P = R->P;
    int ncl = 0;
    for (int i = 0; i < P->nmsg; i++) {
        const msg_t *m = &P->msg[i];
        if (m->d != R->L->me)
            continue;
        int c = 0;
        while (c < ncl && !(cl[c].kind == m->kind && cl[c].psrc == m->psrc && cl[c].ptag == m->ptag))
            c++;
        if (c == ncl)
            cl[ncl++] = (class_t){m->kind, m->psrc, m->ptag, m->early, 0, 0};
        cl[c].count++;
        R->stat[ST_WILD + (m->psrc == MPI_ANY_SOURCE) + 2 * (m->ptag == MPI_ANY_TAG)]++;
        if (m->size > cl[c].cap)
            cl[c].cap = m->size;
    }
    return ncl;
}

/* Early receives: Irecvs for every message of the early classes, in random
 * order; a few are cancelled at once (posted again if the cancel won). */
static void post_early(rank_t *R, class_t *cl, int ncl)
{
    MPI_Comm *C = R->L->comm;
    int total = 0;
    for (int c = 0; c < ncl; c++)
        total += cl[c].early ? cl[c].count : 0;
    int *left = malloc(sizeof *left * (size_t)(ncl + 1));
    EPT_CHECK(left, "out of memory");
    for (int c = 0; c < ncl; c++)
        left[c] = cl[c].early ? cl[c].count : 0;
    while (total > 0) {
        int pick = rbelow(&R->g, total), c = 0;
        while (pick >= left[c])
            pick -= left[c++];
        left[c]--;
        total--;
        for (;;) {
            int i = new_rrec(R, cl[c].kind, cl[c].psrc, cl[c].ptag, cl[c].cap, "early Irecv");
            MPI_Request q;
            EPT_OK(MPI_Irecv(R->rr[i].buf, (int)cl[c].cap, MPI_BYTE, cl[c].psrc, cl[c].ptag, C[cl[c].kind], &q));
            R->stat[ST_EARLY]++;
            if (rbelow(&R->g, 8) != 0) {
                add_pending(R, q, R_RECV, i);
                break;
            }
            MPI_Status st;
            int flag = -1;
            EPT_OK(MPI_Cancel(&q));
            EPT_OK(MPI_Wait(&q, &st));
            EPT_OK(MPI_Test_cancelled(&st, &flag));
            R->stat[flag ? ST_CANCEL_WON : ST_CANCEL_LOST]++;
            if (!flag) {
                R->rr[i].how = "early Irecv whose cancel lost";
                recv_done(R, i, &st);
                break;
            }
            R->rr[i].cancelled = 1; /* never matched: post it again */
        }
    }
    free(left);
}

/* A receive that nobody sends to: to be cancelled during completion. */
static void post_never(rank_t *R)
{
    int k = rbelow(&R->g, NKIND);
    if (!R->P->active[k] || R->L->comm[k] == MPI_COMM_NULL)
        return;
    int src = rbelow(&R->g, 2) ? MPI_ANY_SOURCE : rbelow(&R->g, kind_size(R->L, k, 1));
    int i = new_rrec(R, k, src, R->L->tag_ub, 16, "receive to cancel");
    MPI_Request q;
    EPT_OK(MPI_Irecv(R->rr[i].buf, 16, MPI_BYTE, src, R->L->tag_ub, R->L->comm[k], &q));
    add_pending(R, q, R_NEVER, i);
}

/* ---- sends -------------------------------------------------------------------- */

static void send_one(rank_t *R, int j)
{
    const plan_t *P = R->P;
    const msg_t *m = &P->msg[j];
    unsigned char *b = R->sbuf[j - P->first[R->L->me]] = malloc(m->size ? m->size : 1);
    EPT_CHECK(b, "out of memory");
    msg_fill(b, P, m);
    if (opt_corrupt == 1 && R->L->me == 0 && !R->corrupted && m->size > 0) {
        b[m->size / 2] ^= 0x10; /* deliberate fault: one wrong byte */
        R->corrupted = 1;
    }
    MPI_Comm comm = R->L->comm[m->kind];
    int dest = kind_rank(R->L, m->kind, m->d), cnt = (int)m->size;
    MPI_Request q = MPI_REQUEST_NULL;
    switch (m->smode) {
    case S_ISEND:
        EPT_OK(MPI_Isend(b, cnt, MPI_BYTE, dest, m->tag, comm, &q));
        break;
    case S_ISSEND:
        EPT_OK(MPI_Issend(b, cnt, MPI_BYTE, dest, m->tag, comm, &q));
        break;
    case S_IBSEND:
        EPT_OK(MPI_Ibsend(b, cnt, MPI_BYTE, dest, m->tag, comm, &q));
        break;
    case S_IRSEND:
        EPT_OK(MPI_Irsend(b, cnt, MPI_BYTE, dest, m->tag, comm, &q));
        break;
    case S_SEND:
        EPT_OK(MPI_Send(b, cnt, MPI_BYTE, dest, m->tag, comm));
        break;
    case S_SSEND:
        EPT_OK(MPI_Ssend(b, cnt, MPI_BYTE, dest, m->tag, comm));
        break;
    case S_BSEND:
        EPT_OK(MPI_Bsend(b, cnt, MPI_BYTE, dest, m->tag, comm));
        break;
    case S_RSEND:
        EPT_OK(MPI_Rsend(b, cnt, MPI_BYTE, dest, m->tag, comm));
        break;
    }
    if (q != MPI_REQUEST_NULL)
        add_pending(R, q, R_SEND, j);
    R->stat[ST_SEND + m->smode]++;
    R->sent[m->kind * R->L->n + m->d]++;
    R->msgs++;
    R->bytes += (long long)m->size;
}

/* This rank's sends in plan order, non-blocking collectives started at
 * their places among them.  EPMPI_STRESS_CORRUPT=order swaps two messages
 * of rank 0 to one destination with one tag. */
static void send_all(rank_t *R)
{
    const plan_t *P = R->P;
    int me = R->L->me, lo = P->first[me], cnt = P->first[me + 1] - lo, nc = 0;
    int *order = malloc(sizeof *order * (size_t)(cnt + 1));
    EPT_CHECK(order, "out of memory");
    for (int i = 0; i < cnt; i++)
        order[i] = lo + i;
    if (opt_corrupt == 2 && me == 0 && !R->corrupted)
        for (int a = 0; a < cnt && !R->corrupted; a++)
            for (int b = a + 1; b < cnt; b++) {
                const msg_t *x = &P->msg[lo + a], *y = &P->msg[lo + b];
                if (x->d == y->d && x->kind == y->kind && x->tag == y->tag && x->size >= 4 && y->size >= 4 &&
                    x->smode < S_SEND && y->smode < S_SEND) {
                    order[a] = lo + b;
                    order[b] = lo + a;
                    R->corrupted = 1;
                    break;
                }
            }
    for (int i = 0; i <= cnt; i++) {
        for (; nc < P->ncoll; nc++) {
            const coll_t *c = &P->coll[nc];
            if (c->op < C_IBARRIER)
                continue;
            if (c->at * cnt > i * 100 && i < cnt)
                break;
            coll_start(R, nc);
        }
        if (i < cnt)
            send_one(R, order[i]);
    }
    free(order);
}

/* ---- late receives ------------------------------------------------------------ */

static void check_probe(rank_t *R, const MPI_Status *ps, const MPI_Status *rs, const char *how)
{
    int a = -1, b = -2;
    MPI_Get_count(ps, MPI_BYTE, &a);
    MPI_Get_count(rs, MPI_BYTE, &b);
    if (ps->MPI_SOURCE != rs->MPI_SOURCE || ps->MPI_TAG != rs->MPI_TAG || a != b)
        mismatch(R, "%s: probe saw (source %d, tag %d, %d bytes), the receive got (source %d, tag %d, %d bytes)", how,
                 ps->MPI_SOURCE, ps->MPI_TAG, a, rs->MPI_SOURCE, rs->MPI_TAG, b);
}

static void late_one(rank_t *R, const class_t *cl)
{
    MPI_Comm comm = R->L->comm[cl->kind];
    MPI_Status ps, st;
    MPI_Request q;
    MPI_Message msg;
    int flag = 0, i, cnt = -1;
    const char *const *how = late_name;
    int method = rbelow(&R->g, 6);
    R->stat[ST_LATE + method]++;
    switch (method) {
    case 0:
        i = new_rrec(R, cl->kind, cl->psrc, cl->ptag, cl->cap, how[method]);
        EPT_OK(MPI_Recv(R->rr[i].buf, (int)cl->cap, MPI_BYTE, cl->psrc, cl->ptag, comm, &st));
        recv_done(R, i, &st);
        break;
    case 1:
    case 2:
        if (method == 1)
            EPT_OK(MPI_Probe(cl->psrc, cl->ptag, comm, &ps));
        else
            for (;; sched_yield()) {
                EPT_OK(MPI_Iprobe(cl->psrc, cl->ptag, comm, &flag, &ps));
                if (flag)
                    break;
            }
        MPI_Get_count(&ps, MPI_BYTE, &cnt);
        EPT_CHECK(cnt >= 0 && (size_t)cnt <= cl->cap, "%s: probed count %d, at most %zu expected", how[method], cnt,
                  cl->cap);
        /* The receive names the probed source and tag: its own pattern. */
        i = new_rrec(R, cl->kind, ps.MPI_SOURCE, ps.MPI_TAG, (size_t)cnt, how[method]);
        EPT_OK(MPI_Recv(R->rr[i].buf, cnt, MPI_BYTE, ps.MPI_SOURCE, ps.MPI_TAG, comm, &st));
        check_probe(R, &ps, &st, how[method]);
        recv_done(R, i, &st);
        break;
    case 3:
    case 4:
        i = new_rrec(R, cl->kind, cl->psrc, cl->ptag, cl->cap, how[method]);
        if (method == 3)
            EPT_OK(MPI_Mprobe(cl->psrc, cl->ptag, comm, &msg, &ps));
        else
            for (;; sched_yield()) {
                EPT_OK(MPI_Improbe(cl->psrc, cl->ptag, comm, &flag, &msg, &ps));
                if (flag)
                    break;
            }
        MPI_Get_count(&ps, MPI_BYTE, &cnt);
        EPT_CHECK(cnt >= 0 && (size_t)cnt <= cl->cap, "%s: probed count %d, at most %zu expected", how[method], cnt,
                  cl->cap);
        if (method == 3) {
            EPT_OK(MPI_Mrecv(R->rr[i].buf, cnt, MPI_BYTE, &msg, &st));
            check_probe(R, &ps, &st, how[method]);
            recv_done(R, i, &st);
        } else {
            EPT_OK(MPI_Imrecv(R->rr[i].buf, cnt, MPI_BYTE, &msg, &q));
            add_pending(R, q, R_RECV, i);
        }
        break;
    default:
        i = new_rrec(R, cl->kind, cl->psrc, cl->ptag, cl->cap, how[method]);
        EPT_OK(MPI_Irecv(R->rr[i].buf, (int)cl->cap, MPI_BYTE, cl->psrc, cl->ptag, comm, &q));
        add_pending(R, q, R_RECV, i);
        break;
    }
}

static void recv_late(rank_t *R, class_t *cl, int ncl)
{
    int total = 0;
    for (int c = 0; c < ncl; c++)
        total += cl[c].early ? 0 : cl[c].count;
    while (total > 0) {
        int pick = rbelow(&R->g, total), c = 0;
        for (;; c++)
            if (!cl[c].early) {
                if (pick < cl[c].count)
                    break;
                pick -= cl[c].count;
            }
        cl[c].count--;
        total--;
        late_one(R, &cl[c]);
    }
    if (R->P->procnull) {
        MPI_Status st;
        int cnt = -1;
        EPT_OK(MPI_Recv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 5, R->L->comm[K_BASE], &st));
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        if (st.MPI_SOURCE != MPI_PROC_NULL || st.MPI_TAG != MPI_ANY_TAG || cnt != 0)
            mismatch(R, "Recv from MPI_PROC_NULL: status source %d, tag %d, count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
    }
}

/* ---- completion ----------------------------------------------------------------- */

static void completed(rank_t *R, int p, const MPI_Status *st)
{
    pending_t *e = &R->pend[p];
    int flag = -1;
    switch (e->what) {
    case R_RECV:
        recv_done(R, e->idx, st);
        break;
    case R_NEVER:
        EPT_OK(MPI_Test_cancelled(st, &flag));
        if (!flag)
            mismatch(R, "a cancelled receive (tag %d, nobody sends it) was not reported cancelled", R->L->tag_ub);
        R->rr[e->idx].cancelled = 1;
        R->stat[ST_NEVER]++;
        break;
    case R_COLL:
        coll_check(R, e->idx);
        break;
    }
    R->pend[p] = R->pend[--R->npend];
}

/* Completes every pending request with a random mix of the completion
 * calls on random subsets; cancels the never-matched receives on the way. */
static void complete_all(rank_t *R)
{
    MPI_Request *rq = malloc(sizeof *rq * (size_t)(R->npend + 1));
    MPI_Status *st = malloc(sizeof *st * (size_t)(R->npend + 1));
    /* map: array slot -> pending entry (-1 for MPI_REQUEST_NULL); idx: the
     * completed slots; at: where each one's status is in st. */
    int *map = malloc(sizeof *map * (size_t)(R->npend + 1)), *idx = malloc(sizeof *idx * (size_t)(R->npend + 1));
    int *at = malloc(sizeof *at * (size_t)(R->npend + 1));
    EPT_CHECK(rq && st && map && idx && at, "out of memory");
    while (R->npend > 0) {
        for (int p = 0; p < R->npend; p++)
            if (R->pend[p].what == R_NEVER && !R->pend[p].cancelled && rbelow(&R->g, 3) == 0) {
                EPT_OK(MPI_Cancel(&R->pend[p].req));
                R->pend[p].cancelled = 1;
            }
        /* A random subset, as an array with some MPI_REQUEST_NULL entries. */
        int m = 0, want = 1 + rbelow(&R->g, R->npend);
        for (int p = 0; p < R->npend && m < want; p++)
            if (rbelow(&R->g, R->npend) < want) {
                if (rbelow(&R->g, 8) == 0) {
                    map[m] = -1;
                    rq[m++] = MPI_REQUEST_NULL;
                }
                map[m] = p;
                rq[m++] = R->pend[p].req;
            }
        int real = 0;
        for (int k = 0; k < m; k++)
            real += map[k] >= 0;
        if (!real) {
            map[0] = 0;
            rq[0] = R->pend[0].req;
            m = 1;
        }
        /* Until an uncancelled never-receive is cancelled, waiting for it
         * would hang: only test it. */
        int waitable = 1;
        for (int k = 0; k < m; k++)
            if (map[k] >= 0 && R->pend[map[k]].what == R_NEVER && !R->pend[map[k]].cancelled)
                waitable = 0;
        int call = rbelow(&R->g, 8), flag = 0, out = 0;
        if (!waitable && call < 4)
            call += 4;
        for (int k = 0; k < m; k++)
            st[k].MPI_ERROR = MPI_SUCCESS;
        switch (call) {
        case 0: /* Wait */
            EPT_OK(MPI_Wait(&rq[0], &st[0]));
            idx[out++] = 0;
            break;
        case 1: { /* Waitany */
            int k;
            EPT_OK(MPI_Waitany(m, rq, &k, &st[0]));
            EPT_CHECK(k >= 0 && k < m && map[k] >= 0, "Waitany returned index %d", k);
            idx[out++] = k;
            break;
        }
        case 2: /* Waitsome */
            EPT_OK(MPI_Waitsome(m, rq, &out, idx, st));
            EPT_CHECK(out >= 1 && out <= m, "Waitsome: outcount %d of %d", out, m);
            break;
        case 3: /* Waitall */
            EPT_OK(MPI_Waitall(m, rq, st));
            for (int k = 0; k < m; k++)
                idx[out++] = k;
            break;
        case 4: /* Test */
            EPT_OK(MPI_Test(&rq[0], &flag, &st[0]));
            if (flag)
                idx[out++] = 0;
            break;
        case 5: { /* Testany */
            int k;
            EPT_OK(MPI_Testany(m, rq, &k, &flag, &st[0]));
            if (flag && k != MPI_UNDEFINED) {
                EPT_CHECK(k >= 0 && k < m && map[k] >= 0, "Testany returned index %d", k);
                idx[out++] = k;
            }
            break;
        }
        case 6: /* Testsome */
            EPT_OK(MPI_Testsome(m, rq, &out, idx, st));
            EPT_CHECK(out != MPI_UNDEFINED && out >= 0 && out <= m, "Testsome: outcount %d of %d", out, m);
            break;
        default: /* Testall */
            EPT_OK(MPI_Testall(m, rq, &flag, st));
            if (flag)
                for (int k = 0; k < m; k++)
                    idx[out++] = k;
            break;
        }
        if (!out) {
            sched_yield();
            continue;
        }
        R->stat[ST_CALL + call]++;
        /* Remove completed entries from the highest pending index down,
         * since completed() moves the last entry into the freed slot. */
        int nd = 0;
        for (int k = 0; k < out; k++) {
            EPT_CHECK(idx[k] >= 0 && idx[k] < m, "%s: index %d of %d", call_name[call], idx[k], m);
            if (map[idx[k]] >= 0) {
                EPT_CHECK(rq[idx[k]] == MPI_REQUEST_NULL, "%s: a completed request was not set to MPI_REQUEST_NULL",
                          call_name[call]);
                at[nd] = call == 2 || call == 6 ? k : call == 3 || call == 7 ? idx[k] : 0;
                idx[nd++] = idx[k];
            }
        }
        for (int a = 0; a < nd; a++)
            for (int b = a + 1; b < nd; b++)
                if (map[idx[b]] > map[idx[a]]) {
                    int t = idx[a], u = at[a];
                    idx[a] = idx[b], at[a] = at[b];
                    idx[b] = t, at[b] = u;
                }
        for (int k = 0; k < nd; k++) {
            EPT_CHECK(k == 0 || map[idx[k]] != map[idx[k - 1]], "%s: one request completed twice", call_name[call]);
            completed(R, map[idx[k]], &st[at[k]]);
        }
    }
    free(at);
    free(rq);
    free(st);
    free(map);
    free(idx);
}

/* ---- the replay check ------------------------------------------------------------ */

static int by_post(const void *a, const void *b)
{
    const rrec_t *x = *(rrec_t *const *)a, *y = *(rrec_t *const *)b;
    return (x->post > y->post) - (x->post < y->post);
}

/* Explains which message arrived instead, from its header. */
static void explain(char *out, size_t len, const unsigned char *buf, size_t n)
{
    hdr_t h;
    if (n < sizeof h) {
        snprintf(out, len, "(too short for a header)");
        return;
    }
    memcpy(&h, buf, sizeof h);
    if (h.magic != HDR_MAGIC)
        snprintf(out, len, "(no message header)");
    else
        snprintf(out, len, "(its header: round %u, %s, sender %u, receiver %u, sequence %u)", h.round,
                 h.kind < NKIND ? kind_name[h.kind] : "?", h.src, h.dst, h.seq);
}

static void replay(rank_t *R)
{
    const layout_t *L = R->L;
    const plan_t *P = R->P;
    char *taken = calloc((size_t)P->nmsg + 1, 1);
    rrec_t **order = malloc(sizeof *order * (size_t)(R->nrr + 1));
    EPT_CHECK(taken && order, "out of memory");
    int m = 0;
    for (int i = 0; i < R->nrr; i++)
        if (R->rr[i].cancelled) { /* a cancelled receive writes nothing */
            for (size_t b = 0; b < R->rr[i].cap + GUARD; b++)
                if (R->rr[i].buf[b] != GUARD_BYTE) {
                    mismatch(R, "cancelled %s on %s: byte %zu of its buffer was written", R->rr[i].how,
                             kind_name[R->rr[i].kind], b);
                    break;
                }
        } else if (!R->rr[i].done)
            mismatch(R, "%s on %s never completed", R->rr[i].how, kind_name[R->rr[i].kind]);
        else
            order[m++] = &R->rr[i];
    qsort(order, (size_t)m, sizeof *order, by_post);
    for (int i = 0; i < m; i++) {
        rrec_t *r = order[i];
        int src = r->st.MPI_SOURCE, tag = r->st.MPI_TAG, cnt = -1, el = -1;
        MPI_Get_count(&r->st, MPI_BYTE, &cnt);
        MPI_Get_elements(&r->st, MPI_BYTE, &el);
        const char *on = kind_name[r->kind];
        if (src < 0 || src >= kind_size(L, r->kind, 1) || (r->psrc != MPI_ANY_SOURCE && src != r->psrc) ||
            (r->ptag != MPI_ANY_TAG && tag != r->ptag) || cnt != el || cnt < 0 || (size_t)cnt > r->cap) {
            mismatch(R, "%s on %s (source %d, tag %d): status source %d, tag %d, count %d, elements %d", r->how, on,
                     r->psrc, r->ptag, src, tag, cnt, el);
            continue;
        }
        /* The earliest message from src not taken yet that the pattern matches. */
        int sb = kind_base(L, r->kind, src), j;
        const msg_t *want = NULL;
        for (j = P->first[sb]; j < P->first[sb + 1]; j++) {
            const msg_t *x = &P->msg[j];
            if (x->d == L->me && x->kind == r->kind && !taken[j] && (r->ptag == MPI_ANY_TAG || x->tag == r->ptag) &&
                (!want || x->seq < want->seq))
                want = x;
        }
        if (!want) {
            mismatch(R, "%s on %s: a message from %d (tag %d, %d bytes) that was never sent, or twice", r->how, on, src,
                     tag, cnt);
            continue;
        }
        taken[want - P->msg] = 1;
        char why[160];
        if (want->tag != tag || want->size != (size_t)cnt) {
            explain(why, sizeof why, r->buf, (size_t)cnt);
            mismatch(R,
                     "%s on %s (source %d, tag %d): got tag %d, %d bytes from %d; the next message from it in order "
                     "has sequence %d, tag %d, %zu bytes: overtaken %s",
                     r->how, on, r->psrc, r->ptag, tag, cnt, src, want->seq, want->tag, want->size, why);
            continue;
        }
        size_t bad = msg_first_bad(r->buf, P, want);
        if (bad < want->size) {
            explain(why, sizeof why, r->buf, want->size);
            mismatch(R, "%s on %s: message %d from %d (tag %d, %zu bytes, %s): byte %zu is 0x%02x, wrong %s", r->how,
                     on, want->seq, src, tag, want->size, smode_name[want->smode], bad, r->buf[bad], why);
            continue;
        }
        for (size_t b = want->size; b < r->cap + GUARD; b++)
            if (r->buf[b] != GUARD_BYTE) {
                mismatch(R, "%s on %s: message %d from %d of %zu bytes: byte %zu past its end was written", r->how, on,
                         want->seq, src, want->size, b);
                break;
            }
        R->recvd[r->kind * L->n + sb]++;
    }
    for (int j = 0; j < P->nmsg; j++)
        if (P->msg[j].d == L->me && !taken[j])
            mismatch(R, "message %d from %d on %s (tag %d, %zu bytes) was never received", P->msg[j].seq, P->msg[j].s,
                     kind_name[P->msg[j].kind], P->msg[j].tag, P->msg[j].size);
    free(taken);
    free(order);
}

/* Watchdog: names the seed, the round and the phase of a hang. */
static void stress_watchdog(void)
{
    char b[160];
    int n =
        snprintf(b, sizeof b,
                 "FAIL: watchdog: a round took too long; replay: EPMPI_STRESS_SEED=%llu, round %ld; phase: ", opt_seed,
                 atomic_load(&cur_round));
    const char *p = atomic_load(&phase);
    if (write(2, b, (size_t)n) < 0 || write(2, p, strlen(p)) < 0 || write(2, "\n", 1) < 0)
        _exit(3);
    _exit(3);
}

/* The watchdog counts the seconds it is awake while the round stays the
 * same, not seconds of the clock: a virtual machine that the host stops for
 * a minute or two (seen on the development machine under this load: every
 * process, a sleeping one too, missed 30 to 95 s at once) must not pass for
 * a hang. */
#define WATCHDOG_SECONDS 120
static void *watchdog_thread(void *arg)
{
    (void)arg;
    long seen = -1;
    for (int idle = 0;; idle++) {
        sleep(1);
        long r = atomic_load(&cur_round);
        if (r != seen) {
            seen = r;
            idle = 0;
        } else if (idle >= WATCHDOG_SECONDS) {
            stress_watchdog();
        }
    }
    return NULL;
}

static void print_stats(const long long *st)
{
    printf("sends:");
    for (int i = 0; i < NSMODE; i++)
        printf(" %s %lld", smode_name[i], st[ST_SEND + i]);
    printf("\nreceives: early Irecv %lld (cancelled at once: %lld won, %lld lost), never matched and cancelled %lld;",
           st[ST_EARLY], st[ST_CANCEL_WON], st[ST_CANCEL_LOST], st[ST_NEVER]);
    for (int i = 0; i < 6; i++)
        printf(" %s %lld", late_name[i], st[ST_LATE + i]);
    printf("\nmessages by receive pattern:");
    for (int i = 0; i < 4; i++)
        printf(" %s %lld", wild_name[i], st[ST_WILD + i]);
    printf("\ncompletion calls that completed something:");
    for (int i = 0; i < 8; i++)
        printf(" %s %lld", call_name[i], st[ST_CALL + i]);
    printf("\ncollectives:");
    for (int i = 0; i < NCOLL; i++)
        printf(" %s %lld", coll_name[i], st[ST_COLL + i]);
    printf("\n");
    fflush(stdout);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- one round ---------------------------------------------------------------------- */

static void round_run(rank_t *R)
{
    layout_t *L = R->L;
    plan_t *P = R->P;
    int me = L->me;
    if (P->redup) {
        PHASE("re-creating the dup");
        EPT_OK(MPI_Comm_free(&L->comm[K_DUP]));
        EPT_OK(MPI_Comm_dup(L->comm[K_BASE], &L->comm[K_DUP]));
    }
    R->g.s = hk(hk(opt_seed, (uint64_t)P->round), 0x5eed0000ULL + (uint64_t)me);
    R->npend = R->nrr = 0;
    R->post = 0;
    int mine = P->first[me + 1] - P->first[me];
    R->sbuf = calloc((size_t)mine + 1, sizeof *R->sbuf);
    class_t *cl = malloc(sizeof *cl * (size_t)(P->nmsg + 1));
    EPT_CHECK(R->sbuf && cl, "out of memory");
    int ncl = find_classes(R, cl);

    PHASE("posting early receives");
    post_early(R, cl, ncl);
    for (int i = rbelow(&R->g, 3); i > 0; i--)
        post_never(R);
    if (P->ready) {
        PHASE("barrier before ready sends");
        EPT_OK(MPI_Barrier(L->comm[K_BASE]));
    }
    PHASE("sending");
    send_all(R);
    PHASE("blocking collectives");
    for (int i = 0; i < P->ncoll; i++)
        if (P->coll[i].op < C_IBARRIER) {
            coll_start(R, i);
            coll_check(R, i);
        }
    PHASE("late receives");
    recv_late(R, cl, ncl);
    PHASE("completing requests");
    complete_all(R);
    PHASE("checking");
    replay(R);
    for (int i = 0; i < R->nrr; i++)
        free(R->rr[i].buf);
    for (int i = 0; i < mine; i++)
        free(R->sbuf[i]);
    free(R->sbuf);
    free(cl);
}

/* The sends counted by every sender against the receives counted here. */
static void final_counts(rank_t *R)
{
    int n = R->L->n;
    long long *out = malloc(sizeof *out * (size_t)(NKIND * n)), *in = malloc(sizeof *in * (size_t)(NKIND * n));
    EPT_CHECK(out && in, "out of memory");
    for (int d = 0; d < n; d++)
        for (int k = 0; k < NKIND; k++)
            out[d * NKIND + k] = R->sent[k * n + d];
    EPT_OK(MPI_Alltoall(out, NKIND, MPI_LONG_LONG, in, NKIND, MPI_LONG_LONG, R->L->comm[K_BASE]));
    for (int s = 0; s < n; s++)
        for (int k = 0; k < NKIND; k++)
            if (in[s * NKIND + k] != R->recvd[k * n + s])
                mismatch(R, "on %s, rank %d sent %lld messages here, %lld were received", kind_name[k], s,
                         in[s * NKIND + k], R->recvd[k * n + s]);
    free(out);
    free(in);
}

static void stress(MPI_Comm base, void *arg)
{
    (void)arg;
    layout_t L;
    plan_t P;
    rank_t R = {.L = &L, .P = &P};
    int nlocal = omp_get_num_threads();
    void *bbuf = NULL;
    if (omp_get_thread_num() == 0) {
        int bsize = nlocal * 4 * BSEND_PER_ROUND * (BSEND_MAX + MPI_BSEND_OVERHEAD);
        bbuf = malloc((size_t)bsize);
        EPT_CHECK(bbuf, "out of memory");
        EPT_OK(MPI_Buffer_attach(bbuf, bsize));
        pthread_t wd;
        EPT_CHECK(pthread_create(&wd, NULL, watchdog_thread, NULL) == 0, "cannot start the watchdog thread");
        pthread_detach(wd);
    }
#pragma omp barrier
    PHASE("setup");
    int me;
    EPT_OK(MPI_Comm_rank(base, &me));
    unsigned long long seed = opt_seed;
    if (!opt_seed_set)
        seed = (unsigned long long)time(NULL) * 1000003ULL ^ (unsigned long long)getpid();
    EPT_OK(MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, base));
    if (omp_get_thread_num() == 0)
        opt_seed = seed;
#pragma omp barrier
    make_layout(&L, base);
    int n = L.n;
    if (me == 0) {
        printf("seed=%llu\n", opt_seed);
        printf("stress: %d ranks, %s, %.0f s%s\n", n,
               ept_classic             ? "classic MPICH"
               : ept_world_endpoints() ? "world mode"
                                       : "explicit endpoints",
               opt_seconds, opt_corrupt ? ", with a deliberate fault" : "");
        fflush(stdout);
    }
    P.wild = malloc(sizeof(int) * (size_t)(NKIND * n));
    P.msg = malloc(sizeof(msg_t) * (size_t)(NKIND * n * n * 4 + 1));
    P.first = malloc(sizeof(int) * (size_t)(n + 1));
    R.sent = calloc((size_t)(NKIND * n), sizeof(long long));
    R.recvd = calloc((size_t)(NKIND * n), sizeof(long long));
    R.cnt = malloc(sizeof(int) * 2 * (size_t)n);
    R.displ = malloc(sizeof(int) * 2 * (size_t)n);
    EPT_CHECK(P.wild && P.msg && P.first && R.sent && R.recvd && R.cnt && R.displ, "out of memory");

    double t0 = now();
    long round = 0;
    for (int stop = 0; !stop; round++) {
        if (omp_get_thread_num() == 0) {
            atomic_store(&cur_round, round);
        }
        plan_round(&P, &L, round);
        round_run(&R);
        /* Strays: nothing may be left over once everyone is done. */
        PHASE("end of round");
        EPT_OK(MPI_Barrier(L.comm[K_BASE]));
        for (int k = 0; k < NKIND; k++) {
            int flag = 0;
            MPI_Status st;
            if (L.comm[k] != MPI_COMM_NULL)
                EPT_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, L.comm[k], &flag, &st));
            if (flag)
                mismatch(&R, "a message from %d (tag %d) on %s is left over after the round", st.MPI_SOURCE, st.MPI_TAG,
                         kind_name[k]);
        }
        long long v[2] = {R.mismatches, 0}, all[2];
        if (me == 0)
            v[1] = now() - t0 >= opt_seconds || (opt_rounds >= 0 && round + 1 >= opt_rounds);
        EPT_OK(MPI_Allreduce(v, all, 2, MPI_LONG_LONG, MPI_MAX, L.comm[K_BASE]));
        if (all[0] > 0) {
            if (me == 0) {
                printf("FAIL: mismatches in round %ld; replay: EPMPI_STRESS_SEED=%llu EPMPI_STRESS_ROUNDS=%ld\n", round,
                       opt_seed, round + 1);
                fflush(stdout);
                /* mpiexec forwards output asynchronously, and an abort can
                 * end the job before it has passed on the mismatch reports
                 * of all ranks and this line: give it a moment. */
                sleep(1);
                MPI_Abort(L.comm[K_BASE], 2);
            }
            MPI_Barrier(L.comm[K_BASE]); /* until the abort */
        }
        stop = (int)all[1];
    }
    PHASE("final counts");
    final_counts(&R);
    double secs = now() - t0;
    long long tot[3] = {R.msgs, R.bytes, R.mismatches}, sum[3];
    EPT_OK(MPI_Allreduce(tot, sum, 3, MPI_LONG_LONG, MPI_SUM, L.comm[K_BASE]));
    if (me == 0) {
        double min = secs / 60;
        printf("stress: seed=%llu rounds=%ld messages=%lld bytes=%lld seconds=%.1f msgs/min=%.0f bytes/min=%.0f "
               "mismatches=%lld\n",
               opt_seed, round, sum[0], sum[1], secs, sum[0] / min, sum[1] / min, sum[2]);
        fflush(stdout);
    }
    EPT_CHECK(sum[2] == 0, "%lld mismatches in the final counts", sum[2]);
    EPT_CHECK(!opt_corrupt || me != 0 || R.corrupted, "EPMPI_STRESS_CORRUPT: rank 0 sent no message to spoil");
    long long st[NSTAT];
    EPT_OK(MPI_Reduce(R.stat, st, NSTAT, MPI_LONG_LONG, MPI_SUM, 0, L.comm[K_BASE]));
    if (me == 0 && opt_verbose)
        print_stats(st);
    free_layout(&L);
    free(P.wild);
    free(P.msg);
    free(P.first);
    free(R.sent);
    free(R.recvd);
    free(R.cnt);
    free(R.displ);
    free(R.pend);
    free(R.rr);
    PHASE("detaching the buffer");
#pragma omp barrier
    if (omp_get_thread_num() == 0) {
        int size;
        void *p;
        EPT_OK(MPI_Buffer_detach(&p, &size));
        free(bbuf);
    }
#pragma omp barrier
}

/* Options: removes --seed/--seconds/--rounds from argv (argv[1] stays the
 * shape list of explicit shapes). */
static void options(int *argc, char **argv)
{
    const char *e;
    if ((e = getenv("EPMPI_STRESS_SEED")) && *e)
        opt_seed = strtoull(e, NULL, 10), opt_seed_set = 1;
    if ((e = getenv("EPMPI_STRESS_SECONDS")) && *e)
        opt_seconds = atof(e);
    if ((e = getenv("EPMPI_STRESS_ROUNDS")) && *e)
        opt_rounds = atol(e);
    if ((e = getenv("EPMPI_STRESS_VERBOSE")) && *e)
        opt_verbose = atoi(e);
    if ((e = getenv("EPMPI_STRESS_CORRUPT")) && *e) {
        opt_corrupt = !strcmp(e, "byte") ? 1 : !strcmp(e, "order") ? 2 : -1;
        if (opt_corrupt < 0) {
            fprintf(stderr, "stress: EPMPI_STRESS_CORRUPT must be byte or order, not '%s'\n", e);
            exit(2);
        }
    }
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        if (i + 1 < *argc && !strcmp(argv[i], "--seed"))
            opt_seed = strtoull(argv[++i], NULL, 10), opt_seed_set = 1;
        else if (i + 1 < *argc && !strcmp(argv[i], "--seconds"))
            opt_seconds = atof(argv[++i]);
        else if (i + 1 < *argc && !strcmp(argv[i], "--rounds"))
            opt_rounds = atol(argv[++i]);
        else
            argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = NULL;
}

int main(int argc, char **argv)
{
    options(&argc, argv);
    return ept_main_classic(argc, argv, (int)opt_seconds + 600, stress, NULL);
}
