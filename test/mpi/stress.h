/* The randomized stress test (stress.c): the plan of a round that every
 * rank computes alike (stress_plan.c), the collectives among the traffic
 * (stress_coll.c), and what a rank keeps during a round. */
#ifndef STRESS_H
#define STRESS_H

#include "eptest.h"

enum { K_BASE, K_DUP, K_SPLIT, K_INTER, NKIND };
extern const char *const kind_name[NKIND];

enum { S_ISEND, S_ISSEND, S_IBSEND, S_IRSEND, S_SEND, S_SSEND, S_BSEND, S_RSEND, NSMODE };
extern const char *const smode_name[NSMODE];

#define MAX_MSG ((size_t)4 << 20)
#define SBUDGET ((size_t)12 << 20) /* bytes a rank sends per round at most */
#define RBUDGET ((size_t)24 << 20) /* receive buffers of a rank per round at most (see plan_round) */
#define BSEND_MAX 4096             /* largest buffered send */
#define BSEND_PER_ROUND 4          /* buffered sends per rank and round at most */
#define HDR_MAGIC 0x53545253u
#define GUARD 8 /* bytes after every receive buffer that must stay untouched */
#define GUARD_BYTE 0xa5
#define MAX_COLL 4
#define TAG_INTER 4242

/* ---- settings of the run (the same in every process) ----------------------- */

extern unsigned long long opt_seed;
extern int opt_corrupt; /* 0, 1 byte, 2 order */

/* ---- deterministic randomness ------------------------------------------- */

static inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
static inline uint64_t hk(uint64_t a, uint64_t b) { return mix64(a ^ mix64(b + 0x632be59bd9b4e019ULL)); }

typedef struct {
    uint64_t s;
} rng_t;
static inline uint64_t rnext(rng_t *r) { return mix64(r->s += 0x9e3779b97f4a7c15ULL); }
static inline int rbelow(rng_t *r, int n) { return n > 0 ? (int)(rnext(r) % (uint64_t)n) : 0; }

/* ---- the layout of the communicators (the same on every rank) ----------- */

typedef struct {
    int n, me, tag_ub, have_inter;
    int *color, *c2rank;  /* [n]: half and rank in it of every base rank */
    int *mem[2], nmem[2]; /* base ranks of each half by split rank */
    MPI_Comm comm[NKIND];
} layout_t;

static inline int kind_rank(const layout_t *L, int kind, int b) { return kind <= K_DUP ? b : L->c2rank[b]; }
static inline int kind_size(const layout_t *L, int kind, int remote)
{
    if (kind <= K_DUP)
        return L->n;
    int c = L->color[L->me];
    return L->nmem[kind == K_INTER && remote ? 1 - c : c];
}
/* Base rank of the rank r of communicator kind, as this rank sees it
 * (the remote group for the intercommunicator). */
static inline int kind_base(const layout_t *L, int kind, int r)
{
    if (kind <= K_DUP)
        return r;
    int c = L->color[L->me];
    return L->mem[kind == K_INTER ? 1 - c : c][r];
}
static inline int partners(const layout_t *L, int kind, int s, int d)
{
    if (kind <= K_DUP)
        return 1;
    if (kind == K_SPLIT)
        return L->color[s] == L->color[d];
    return L->have_inter && L->color[s] != L->color[d];
}

/* ---- the plan of a round ------------------------------------------------ */

typedef struct {
    int s, d, kind, tag, seq, smode, early;
    int psrc, ptag; /* the receive pattern at d */
    size_t size;
} msg_t;

enum { C_BARRIER, C_BCAST, C_ALLREDUCE, C_ALLTOALLV, C_IBARRIER, C_IBCAST, C_IALLREDUCE, NCOLL };
extern const char *const coll_name[NCOLL];

/* What a run did, for EPMPI_STRESS_VERBOSE=1: calls by kind. */
enum {
    ST_SEND = 0,
    ST_LATE = ST_SEND + NSMODE,
    ST_EARLY = ST_LATE + 6,
    ST_CANCEL_WON,
    ST_CANCEL_LOST,
    ST_NEVER,
    ST_CALL,
    ST_COLL = ST_CALL + 8,
    ST_WILD = ST_COLL + NCOLL,
    NSTAT = ST_WILD + 4
};

typedef struct {
    int op, kind, root, group, count, at;
    uint64_t key;
} coll_t;

typedef struct {
    long round;
    uint64_t key;
    int active[NKIND], ready, redup, procnull;
    int *wild; /* [NKIND * n]: wildcard mode of each receiver: bit 0 any source, bit 1 any tag */
    msg_t *msg;
    int nmsg, *first; /* sender s's messages, in the order it issues them: first[s] .. first[s+1]-1 */
    coll_t coll[MAX_COLL];
    int ncoll;
} plan_t;

/* The first bytes of a payload: its key first, so that even a 1-byte
 * message depends on its identity, then the identity spelled out. */
typedef struct {
    uint32_t key, magic, round;
    uint16_t kind, src, dst, pad;
    uint32_t seq;
} hdr_t;

/* ---- a rank's round ---------------------------------------------------------- */

enum { R_SEND, R_RECV, R_NEVER, R_COLL };

typedef struct {
    MPI_Request req;
    int what, idx, cancelled;
} pending_t;

typedef struct {
    int kind, psrc, ptag, done, cancelled;
    long post; /* place in this rank's posting order */
    unsigned char *buf;
    size_t cap;
    MPI_Status st;
    const char *how;
} rrec_t;

typedef struct {
    layout_t *L;
    plan_t *P;
    rng_t g; /* this rank's own choices */
    pending_t *pend;
    int npend, cappend;
    rrec_t *rr;
    int nrr, caprr;
    long post;
    unsigned char **sbuf; /* one per message this rank sends */
    unsigned char *cbuf[MAX_COLL], *cout[MAX_COLL];
    int *cnt, *displ;        /* alltoallv scratch */
    long long *sent, *recvd; /* [NKIND * n] by base rank */
    long long msgs, bytes;
    long mismatches;
    int corrupted;
    long long stat[NSTAT];
} rank_t;

/* stress_plan.c */
void plan_round(plan_t *P, const layout_t *L, long round);
void make_layout(layout_t *L, MPI_Comm base);
void free_layout(layout_t *L);
void gen(unsigned char *buf, size_t n, uint64_t key, size_t from);
void msg_fill(unsigned char *buf, const plan_t *P, const msg_t *m);
size_t msg_first_bad(const unsigned char *buf, const plan_t *P, const msg_t *m);

/* stress_coll.c */
void coll_start(rank_t *R, int i);
void coll_check(rank_t *R, int i);

/* stress.c */
void mismatch(rank_t *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void add_pending(rank_t *R, MPI_Request req, int what, int idx);

#endif
