/* The plan of a stress round, computed alike by every rank from (seed,
 * round), the layout of the communicators, and the payloads. */
#include "stress.h"

static size_t draw_size(rng_t *g)
{
    static const size_t edge[] = {1, 8, 4095, 4096, 16383, 16384, 16385, 65535, 65536, 65537};
    int r = rbelow(g, 1000);
    if (r < 30) /* around powers of two and the default eager limit */
        return edge[rbelow(g, (int)(sizeof edge / sizeof edge[0]))];
    if (r < 300)
        return (size_t)rbelow(g, 17);
    if (r < 600)
        return 17 + (size_t)rbelow(g, 240);
    if (r < 800)
        return 257 + (size_t)rbelow(g, 3840);
    if (r < 920)
        return 4097 + (size_t)rbelow(g, 61440); /* across the eager limit */
    if (r < 985)
        return 65537 + (size_t)rbelow(g, 458752);
    if (r < 997)
        return 524289 + (size_t)rbelow(g, (int)(MAX_MSG - 524289));
    return MAX_MSG;
}

static int draw_tag(rng_t *g, int tag_ub)
{
    int r = rbelow(g, 10);
    if (r < 6)
        return rbelow(g, 4); /* few tags: many messages share one, so order matters */
    if (r < 9)
        return rbelow(g, 1000);
    return rbelow(g, tag_ub); /* tag_ub itself is never sent: the cancelled receives use it */
}

/* Whether the receive class (pattern at receiver d) is posted early. */
static int class_early(const plan_t *P, int d, int kind, int psrc, int ptag)
{
    return hk(hk(hk(hk(P->key, (uint64_t)d), (uint64_t)kind), (uint64_t)(psrc + 8)), (uint64_t)(ptag + 8)) % 5 < 3;
}

static int draw_smode(rng_t *g, const plan_t *P, const msg_t *m, int *nbsend)
{
    for (;;) {
        int s = rbelow(g, NSMODE);
        if ((s == S_IBSEND || s == S_BSEND) && (m->size > BSEND_MAX || *nbsend >= BSEND_PER_ROUND))
            continue;
        if ((s == S_IRSEND || s == S_RSEND) && !(P->ready && m->early))
            continue;
        if ((s == S_SEND || s == S_SSEND) && !m->early)
            continue; /* a blocking send waits for a receive only early classes promise */
        *nbsend += s == S_IBSEND || s == S_BSEND;
        return s;
    }
}

static void plan_colls(plan_t *P, const layout_t *L, rng_t *g)
{
    P->ncoll = rbelow(g, MAX_COLL + 1);
    for (int i = 0; i < P->ncoll; i++) {
        coll_t *c = &P->coll[i];
        do {
            c->op = rbelow(g, NCOLL);
            c->kind = rbelow(g, NKIND);
        } while ((c->kind == K_INTER && (!L->have_inter || c->op == C_ALLTOALLV || c->op >= C_IBARRIER)));
        c->group = rbelow(g, 2);
        c->root = rbelow(g, L->nmem[c->group] > 0 ? L->nmem[c->group] : 1);
        if (c->kind <= K_DUP)
            c->root = rbelow(g, L->n); /* on split, root is a rank of each half */
        c->count = rbelow(g, 10) ? rbelow(g, 4097) : rbelow(g, 262145);
        c->at = rbelow(g, 101);
        c->key = hk(P->key, 1000 + (uint64_t)i);
    }
    /* Non-blocking collectives start in plan order on every rank. */
    for (int i = 0, last = 0; i < P->ncoll; i++)
        if (P->coll[i].op >= C_IBARRIER) {
            if (P->coll[i].at < last)
                P->coll[i].at = last;
            last = P->coll[i].at;
        }
}

void plan_round(plan_t *P, const layout_t *L, long round)
{
    int n = L->n;
    rng_t g = {hk(opt_seed, (uint64_t)round)};
    P->round = round;
    P->key = rnext(&g);
    for (int k = 0; k < NKIND; k++)
        P->active[k] = (k != K_INTER || L->have_inter) && rbelow(&g, 4) != 0;
    P->ready = rbelow(&g, 4) == 0;
    P->redup = rbelow(&g, 8) == 0;
    P->procnull = rbelow(&g, 10) == 0;
    for (int i = 0; i < NKIND * n; i++)
        P->wild[i] = rbelow(&g, 4);
    /* A receiver's buffers: with wildcards any receive of a (receiver,
     * communicator) may get its largest message, so count * largest. */
    size_t *rmem = calloc((size_t)n, sizeof *rmem), *rmax = calloc((size_t)(NKIND * n), sizeof *rmax);
    int *seq = calloc((size_t)(NKIND * n), sizeof *seq), *rcnt = calloc((size_t)(NKIND * n), sizeof *rcnt);
    EPT_CHECK(rmem && rmax && seq && rcnt, "out of memory");
    P->nmsg = 0;
    for (int s = 0; s < n; s++) {
        P->first[s] = P->nmsg;
        size_t sbudget = 0;
        int nbsend = 0;
        for (int k = 0; k < NKIND; k++)
            for (int d = 0; d < n; d++) {
                if (!P->active[k] || !partners(L, k, s, d) || rbelow(&g, 10) < 4)
                    continue;
                for (int j = 1 + rbelow(&g, 4); j > 0; j--) {
                    int tag = draw_tag(&g, L->tag_ub), dk = k * n + d;
                    size_t size = draw_size(&g), big = size > rmax[dk] ? size : rmax[dk];
                    if (sbudget + size > SBUDGET ||
                        rmem[d] + (size_t)(rcnt[dk] + 1) * big - (size_t)rcnt[dk] * rmax[dk] > RBUDGET) {
                        size = (size_t)rbelow(&g, 64);
                        big = size > rmax[dk] ? size : rmax[dk];
                        if (rmem[d] + big > RBUDGET)
                            continue;
                    }
                    rmem[d] += (size_t)(rcnt[dk] + 1) * big - (size_t)rcnt[dk] * rmax[dk];
                    rcnt[dk]++;
                    rmax[dk] = big;
                    sbudget += size;
                    msg_t *m = &P->msg[P->nmsg++];
                    *m = (msg_t){.s = s, .d = d, .kind = k, .tag = tag, .size = size};
                }
            }
        /* The order s issues them in, then sequence numbers in that order. */
        msg_t *mine = P->msg + P->first[s];
        int cnt = P->nmsg - P->first[s];
        for (int i = cnt - 1; i > 0; i--) {
            int j = rbelow(&g, i + 1);
            msg_t t = mine[i];
            mine[i] = mine[j];
            mine[j] = t;
        }
        for (int i = 0; i < cnt; i++) {
            msg_t *m = &mine[i];
            int mode = P->wild[m->kind * n + m->d];
            m->seq = seq[m->kind * n + m->d]++;
            m->psrc = mode & 1 ? MPI_ANY_SOURCE : kind_rank(L, m->kind, s);
            m->ptag = mode & 2 ? MPI_ANY_TAG : m->tag;
            m->early = class_early(P, m->d, m->kind, m->psrc, m->ptag);
            m->smode = draw_smode(&g, P, m, &nbsend);
        }
        memset(seq, 0, sizeof *seq * (size_t)(NKIND * n));
    }
    P->first[n] = P->nmsg;
    plan_colls(P, L, &g);
    free(rmem);
    free(rmax);
    free(rcnt);
    free(seq);
}

/* ---- payloads ------------------------------------------------------------ */

static hdr_t msg_hdr(const plan_t *P, const msg_t *m, uint64_t key)
{
    return (hdr_t){(uint32_t)key,  HDR_MAGIC, (uint32_t)P->round, (uint16_t)m->kind, (uint16_t)m->s,
                   (uint16_t)m->d, 0,         (uint32_t)m->seq};
}

static uint64_t msg_key(const plan_t *P, const msg_t *m)
{
    return hk(hk(hk(P->key, (uint64_t)m->kind << 48 | (uint64_t)m->s << 24 | (uint64_t)m->d), (uint64_t)m->seq), 7);
}

/* Byte i of a payload with key, as 8-byte words. */
void gen(unsigned char *buf, size_t n, uint64_t key, size_t from)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = mix64(key + (from + i) / 8);
        memcpy(buf + i, &w, n - i < 8 ? n - i : 8);
    }
}

void msg_fill(unsigned char *buf, const plan_t *P, const msg_t *m)
{
    hdr_t h = msg_hdr(P, m, msg_key(P, m));
    gen(buf, m->size, msg_key(P, m), 0);
    memcpy(buf, &h, m->size < sizeof h ? m->size : sizeof h);
}

/* Offset of the first byte of buf that is not the payload of m, or m->size. */
size_t msg_first_bad(const unsigned char *buf, const plan_t *P, const msg_t *m)
{
    unsigned char want[4096];
    for (size_t off = 0; off < m->size; off += sizeof want) {
        size_t len = m->size - off < sizeof want ? m->size - off : sizeof want;
        gen(want, len, msg_key(P, m), off);
        if (off == 0) {
            hdr_t h = msg_hdr(P, m, msg_key(P, m));
            memcpy(want, &h, len < sizeof h ? len : sizeof h);
        }
        if (memcmp(want, buf + off, len) != 0)
            for (size_t i = 0; i < len; i++)
                if (want[i] != buf[off + i])
                    return off + i;
    }
    return m->size;
}

/* ---- the communicators ---------------------------------------------------- */

void make_layout(layout_t *L, MPI_Comm base)
{
    int n, me, flag = 0, *ub = NULL;
    EPT_OK(MPI_Comm_rank(base, &me));
    EPT_OK(MPI_Comm_size(base, &n));
    EPT_OK(MPI_Comm_get_attr(base, MPI_TAG_UB, &ub, &flag));
    EPT_CHECK(flag && *ub >= 32767, "MPI_TAG_UB");
    L->n = n;
    L->me = me;
    L->tag_ub = *ub;
    L->have_inter = n >= 2;
    L->color = malloc(sizeof(int) * (size_t)n);
    L->c2rank = malloc(sizeof(int) * (size_t)n);
    L->mem[0] = malloc(sizeof(int) * (size_t)n);
    L->mem[1] = malloc(sizeof(int) * (size_t)n);
    int *key = malloc(sizeof(int) * (size_t)n), *perm = malloc(sizeof(int) * (size_t)n);
    EPT_CHECK(L->color && L->c2rank && L->mem[0] && L->mem[1] && key && perm, "out of memory");
    /* Halves from a seeded permutation, random split keys (ties: base rank). */
    rng_t g = {hk(opt_seed, 0xc0ffee)};
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = rbelow(&g, i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < n; i++) {
        L->color[perm[i]] = n >= 2 && i < n / 2 ? 0 : 1;
        key[i] = rbelow(&g, 3);
    }
    L->nmem[0] = L->nmem[1] = 0;
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 3; k++)
            for (int b = 0; b < n; b++)
                if (L->color[b] == c && key[b] == k) {
                    L->c2rank[b] = L->nmem[c];
                    L->mem[c][L->nmem[c]++] = b;
                }
    L->comm[K_BASE] = base;
    EPT_OK(MPI_Comm_dup(base, &L->comm[K_DUP]));
    EPT_OK(MPI_Comm_split(base, L->color[me], key[me], &L->comm[K_SPLIT]));
    int r = -1, s = -1;
    EPT_OK(MPI_Comm_rank(L->comm[K_SPLIT], &r));
    EPT_OK(MPI_Comm_size(L->comm[K_SPLIT], &s));
    EPT_CHECK(r == L->c2rank[me] && s == L->nmem[L->color[me]], "split: rank %d of %d, expected %d of %d", r, s,
              L->c2rank[me], L->nmem[L->color[me]]);
    L->comm[K_INTER] = MPI_COMM_NULL;
    if (L->have_inter) {
        EPT_OK(
            MPI_Intercomm_create(L->comm[K_SPLIT], 0, base, L->mem[1 - L->color[me]][0], TAG_INTER, &L->comm[K_INTER]));
        EPT_OK(MPI_Comm_remote_size(L->comm[K_INTER], &s));
        EPT_CHECK(s == L->nmem[1 - L->color[me]], "intercomm: remote size %d", s);
    }
    free(key);
    free(perm);
}

void free_layout(layout_t *L)
{
    for (int k = K_DUP; k < NKIND; k++)
        if (L->comm[k] != MPI_COMM_NULL)
            EPT_OK(MPI_Comm_free(&L->comm[k]));
    free(L->color);
    free(L->c2rank);
    free(L->mem[0]);
    free(L->mem[1]);
}
