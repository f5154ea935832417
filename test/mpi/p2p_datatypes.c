/* Derived datatypes in point-to-point on endpoint communicators: the sender
 * and the receiver use different datatypes with the same type signature
 * (MPI_Type_vector, MPI_Type_indexed, an indexed type whose blocks run
 * backwards, MPI_Type_contiguous of a vector, MPI_Type_create_resized,
 * MPI_Type_create_struct with two layouts of one record, MPI_DOUBLE_INT
 * pairs against a user struct of the same signature), at about 400 B, 24 KiB
 * (past the eager limit) and 1 MiB, to the right neighbour and to oneself.
 * Every basic element lands where the receive datatype's type map puts it,
 * and gaps are left alone; MPI_Get_count and MPI_Get_elements (also on a
 * probe status) are right, including a message that ends in the middle of a
 * receive element (MPI_Get_count gives MPI_UNDEFINED, MPI_Get_elements the
 * basic elements received, which are all stored); MPI_BOTTOM with
 * absolute-address struct types, on either side; types freed with
 * PMPI_Type_free, past epmpi, whose handles MPICH reuses.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#include <stddef.h>

/* A layout of MPI_INTs: `count` elements of datatype t; off[k] is where (in
 * ints from the buffer start) the k-th basic element of the type map goes;
 * span ints hold it all. */
typedef struct {
    const char *name;
    MPI_Datatype t; /* committed; freed by lay_free unless builtin */
    int count, n, span, builtin;
    int *off;
} lay_t;

static lay_t lay_new(const char *name, int count, int per)
{
    lay_t l = {.name = name, .count = count, .n = count * per};
    l.off = malloc(sizeof(int) * (size_t)(l.n ? l.n : 1));
    EPT_CHECK(l.off, "out of memory");
    return l;
}

static void lay_done(lay_t *l)
{
    l->span = 0;
    for (int k = 0; k < l->n; k++)
        if (l->off[k] + 1 > l->span)
            l->span = l->off[k] + 1;
    if (!l->builtin)
        EPT_OK(MPI_Type_commit(&l->t));
}

static void lay_free(lay_t *l)
{
    if (!l->builtin)
        MPI_Type_free(&l->t);
    free(l->off);
}

/* n contiguous MPI_INTs. */
static lay_t lay_contig(int n)
{
    lay_t l = lay_new("MPI_INT", n, 1);
    l.t = MPI_INT;
    l.builtin = 1;
    for (int k = 0; k < n; k++)
        l.off[k] = k;
    lay_done(&l);
    return l;
}

/* vector(4 blocks of 3, stride 5): 12 ints per element, extent 18 ints. */
static lay_t lay_vector(int n)
{
    lay_t l = lay_new("MPI_Type_vector(4, 3, 5)", n / 12, 12);
    EPT_OK(MPI_Type_vector(4, 3, 5, MPI_INT, &l.t));
    for (int e = 0, k = 0; e < l.count; e++)
        for (int b = 0; b < 4; b++)
            for (int j = 0; j < 3; j++)
                l.off[k++] = e * 18 + b * 5 + j;
    lay_done(&l);
    return l;
}

/* indexed {1,2,3,6} at {0,2,6,11}: 12 ints per element, extent 17. */
static lay_t lay_indexed(int n)
{
    static const int len[4] = {1, 2, 3, 6}, dis[4] = {0, 2, 6, 11};
    lay_t l = lay_new("MPI_Type_indexed({1,2,3,6}, {0,2,6,11})", n / 12, 12);
    EPT_OK(MPI_Type_indexed(4, len, dis, MPI_INT, &l.t));
    for (int e = 0, k = 0; e < l.count; e++)
        for (int b = 0; b < 4; b++)
            for (int j = 0; j < len[b]; j++)
                l.off[k++] = e * 17 + dis[b] + j;
    lay_done(&l);
    return l;
}

/* indexed {4,4,4} at {1,6,12}: starts one int in (lower bound 1 int),
 * 12 ints per element, extent 15 (from lb 1 to ub 16). */
static lay_t lay_indexed_lb(int n)
{
    static const int len[3] = {4, 4, 4}, dis[3] = {1, 6, 12};
    lay_t l = lay_new("MPI_Type_indexed({4,4,4}, {1,6,12})", n / 12, 12);
    EPT_OK(MPI_Type_indexed(3, len, dis, MPI_INT, &l.t));
    for (int e = 0, k = 0; e < l.count; e++)
        for (int b = 0; b < 3; b++)
            for (int j = 0; j < len[b]; j++)
                l.off[k++] = e * 15 + dis[b] + j;
    lay_done(&l);
    return l;
}

/* One element: n blocks of one int, at n-1, n-2, ..., 0 (a dense type whose
 * type map runs backwards). */
static lay_t lay_reverse(int n)
{
    lay_t l = lay_new("MPI_Type_indexed, blocks in reverse order", 1, n);
    int *len = malloc(sizeof(int) * (size_t)n), *dis = malloc(sizeof(int) * (size_t)n);
    EPT_CHECK(len && dis, "out of memory");
    for (int k = 0; k < n; k++) {
        len[k] = 1;
        dis[k] = n - 1 - k;
        l.off[k] = n - 1 - k;
    }
    EPT_OK(MPI_Type_indexed(n, len, dis, MPI_INT, &l.t));
    free(len);
    free(dis);
    lay_done(&l);
    return l;
}

/* contiguous(2, vector(3, 2, 3)): 12 ints per element; the vector's extent
 * is 8 ints, so the contiguous type's extent is 16. */
static lay_t lay_contig_vector(int n)
{
    MPI_Datatype v;
    lay_t l = lay_new("MPI_Type_contiguous(2, MPI_Type_vector(3, 2, 3))", n / 12, 12);
    EPT_OK(MPI_Type_vector(3, 2, 3, MPI_INT, &v));
    EPT_OK(MPI_Type_contiguous(2, v, &l.t));
    MPI_Type_free(&v);
    for (int e = 0, k = 0; e < l.count; e++)
        for (int c = 0; c < 2; c++)
            for (int b = 0; b < 3; b++)
                for (int j = 0; j < 2; j++)
                    l.off[k++] = e * 16 + c * 8 + b * 3 + j;
    lay_done(&l);
    return l;
}

/* MPI_INT resized to an extent of 2 ints: every other int. */
static lay_t lay_resized(int n)
{
    lay_t l = lay_new("MPI_Type_create_resized(MPI_INT, 0, 8)", n, 1);
    EPT_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &l.t));
    for (int k = 0; k < n; k++)
        l.off[k] = 2 * k;
    lay_done(&l);
    return l;
}

typedef lay_t (*lay_fn)(int n);
typedef struct {
    lay_fn send, recv;
} pair_t;

static const pair_t pairs[] = {
    {lay_vector, lay_contig},     {lay_contig, lay_vector},         {lay_indexed, lay_vector},
    {lay_vector, lay_indexed_lb}, {lay_indexed_lb, lay_indexed},    {lay_reverse, lay_contig},
    {lay_contig, lay_reverse},    {lay_contig_vector, lay_resized}, {lay_resized, lay_contig_vector},
    {lay_indexed, lay_indexed},
};
#define NPAIRS ((int)(sizeof pairs / sizeof *pairs))
static const int sizes_n[3] = {96, 6000, 262140}; /* ints: 384 B, 24 KB, ~1 MiB; multiples of 12 */

/* Unsigned arithmetic: the values wrap without undefined behaviour. */
static int sval(int src, int tag, int i)
{
    return (int)(((unsigned)src * 7919u + (unsigned)tag) * 1000003u + (unsigned)i);
}

typedef struct {
    MPI_Comm comm;
    int me, n, left, right;
    int fails; /* soft failures: reported, counted, fatal at the end */
} ctx_t;

/* A failed data check is reported once per case and counted, and the test
 * goes on (the communication pattern is unaffected), so one run shows every
 * broken case; the rank fails at the end. */
#define SOFT_CHECK(x, failed, cond, ...)                                                                      \
    do {                                                                                                      \
        if (!(cond) && !(failed)) {                                                                           \
            fprintf(stderr, "FAIL %s:%d (thread %d): %s: ", __FILE__, __LINE__, omp_get_thread_num(), #cond); \
            fprintf(stderr, __VA_ARGS__);                                                                     \
            fprintf(stderr, "\n");                                                                            \
            (failed) = 1;                                                                                     \
            (x)->fails++;                                                                                     \
        }                                                                                                     \
    } while (0)

/* Sends (send layout) to the right and to ourselves, receives (receive
 * layout) from the left and from ourselves, and checks. */
static void exchange(ctx_t *x, const lay_t *sl, const lay_t *rl, int tag, int probe)
{
    char what[200];
    snprintf(what, sizeof what, "%s -> %s, %d ints", sl->name, rl->name, sl->n);
    PHASE(what);
    EPT_CHECK(sl->n == rl->n, "bad test: %d vs %d ints", sl->n, rl->n);
    int *sb = malloc(sizeof(int) * (size_t)sl->span);
    int *rb[2] = {malloc(sizeof(int) * (size_t)rl->span), malloc(sizeof(int) * (size_t)rl->span)};
    EPT_CHECK(sb && rb[0] && rb[1], "out of memory");
    for (int i = 0; i < sl->span; i++)
        sb[i] = sval(x->me, tag, i); /* gaps too: they must not travel */
    for (int i = 0; i < rl->span; i++)
        rb[0][i] = rb[1][i] = -1;
    int src[2] = {x->left, x->me};
    MPI_Request rr[2];
    MPI_Status st[2];
    if (probe) {
        /* The messages first, then a probe, then the receives. */
        MPI_Request sr[2];
        EPT_OK(MPI_Isend(sb, sl->count, sl->t, x->right, tag, x->comm, &sr[0]));
        EPT_OK(MPI_Isend(sb, sl->count, sl->t, x->me, tag, x->comm, &sr[1]));
        for (int i = 0; i < 2; i++) {
            MPI_Status ps;
            int cnt = -2, el = -2;
            EPT_OK(MPI_Probe(src[i], tag, x->comm, &ps));
            MPI_Get_count(&ps, rl->t, &cnt);
            MPI_Get_elements(&ps, rl->t, &el);
            int pfailed = 0;
            SOFT_CHECK(x, pfailed, cnt == rl->count && el == rl->n,
                       "%s: rank %d: probe: count %d elements %d, expected %d %d", what, x->me, cnt, el, rl->count,
                       rl->n);
            EPT_OK(MPI_Recv(rb[i], rl->count, rl->t, src[i], tag, x->comm, &st[i]));
        }
        EPT_OK(MPI_Waitall(2, sr, statuses_ignore()));
    } else {
        for (int i = 0; i < 2; i++)
            EPT_OK(MPI_Irecv(rb[i], rl->count, rl->t, src[i], tag, x->comm, &rr[i]));
        EPT_OK(MPI_Send(sb, sl->count, sl->t, x->right, tag, x->comm));
        EPT_OK(MPI_Send(sb, sl->count, sl->t, x->me, tag, x->comm));
        EPT_OK(MPI_Waitall(2, rr, st));
    }
    char *hit = calloc((size_t)rl->span, 1);
    EPT_CHECK(hit, "out of memory");
    for (int k = 0; k < rl->n; k++)
        hit[rl->off[k]] = 1;
    for (int i = 0; i < 2; i++) {
        int cnt = -2, el = -2, ints = -2, failed = 0;
        MPI_Get_count(&st[i], rl->t, &cnt);
        MPI_Get_elements(&st[i], rl->t, &el);
        MPI_Get_count(&st[i], MPI_INT, &ints);
        SOFT_CHECK(x, failed,
                   st[i].MPI_SOURCE == src[i] && st[i].MPI_TAG == tag && cnt == rl->count && el == rl->n &&
                       ints == rl->n,
                   "%s: rank %d: from %d: status source %d tag %d, count %d, elements %d, MPI_INT count %d; expected "
                   "count %d, %d elements",
                   what, x->me, src[i], st[i].MPI_SOURCE, st[i].MPI_TAG, cnt, el, ints, rl->count, rl->n);
        for (int k = 0; k < rl->n; k++) {
            int want = sval(src[i], tag, sl->off[k]), got = rb[i][rl->off[k]];
            SOFT_CHECK(x, failed, got == want,
                       "%s: rank %d: from %d: basic element %d (at int %d of the receive buffer) should be int %d of "
                       "the sender's buffer, got %s %d",
                       what, x->me, src[i], k, rl->off[k], sl->off[k], got == -1 ? "nothing:" : "the sender's int",
                       got == -1 ? -1 : got - sval(src[i], tag, 0));
        }
        for (int j = 0; j < rl->span; j++)
            SOFT_CHECK(x, failed, hit[j] || rb[i][j] == -1, "%s: rank %d: from %d: gap int %d was written", what, x->me,
                       src[i], j);
    }
    free(hit);
    free(sb);
    free(rb[0]);
    free(rb[1]);
    EPT_OK(MPI_Barrier(x->comm));
}

/* Two layouts of the record {int; double; char[3]}: the C struct and a
 * packed one; signatures equal. */
struct rec {
    int a;
    double b;
    char c[3];
};

static MPI_Datatype rec_type(int packed)
{
    MPI_Datatype t, r;
    int len[3] = {1, 1, 3};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Aint dis[3];
    if (packed) {
        dis[0] = 0;
        dis[1] = 4;
        dis[2] = 12;
    } else {
        dis[0] = offsetof(struct rec, a);
        dis[1] = offsetof(struct rec, b);
        dis[2] = offsetof(struct rec, c);
    }
    EPT_OK(MPI_Type_create_struct(3, len, dis, types, &t));
    EPT_OK(MPI_Type_create_resized(t, 0, packed ? 15 : (MPI_Aint)sizeof(struct rec), &r));
    MPI_Type_free(&t);
    EPT_OK(MPI_Type_commit(&r));
    return r;
}

static void structs(ctx_t *x, int m, int tag)
{
    PHASE("MPI_Type_create_struct: C layout -> packed layout");
    MPI_Datatype st_c = rec_type(0), st_p = rec_type(1);
    struct rec *s = malloc(sizeof *s * (size_t)m);
    unsigned char *r = malloc(15 * (size_t)m);
    EPT_CHECK(s && r, "out of memory");
    memset(s, 0, sizeof *s * (size_t)m);
    for (int i = 0; i < m; i++) {
        s[i].a = sval(x->me, tag, i);
        s[i].b = 0.5 * i + x->me;
        s[i].c[0] = (char)i;
        s[i].c[1] = (char)(x->me + 1);
        s[i].c[2] = (char)tag;
    }
    memset(r, 0xff, 15 * (size_t)m);
    MPI_Request rq;
    MPI_Status status;
    EPT_OK(MPI_Irecv(r, m, st_p, x->left, tag, x->comm, &rq));
    EPT_OK(MPI_Send(s, m, st_c, x->right, tag, x->comm));
    EPT_OK(MPI_Wait(&rq, &status));
    int cnt = -2, el = -2;
    MPI_Get_count(&status, st_p, &cnt);
    MPI_Get_elements(&status, st_p, &el);
    EPT_CHECK(cnt == m && el == 5 * m, "struct: rank %d: count %d elements %d, expected %d %d", x->me, cnt, el, m,
              5 * m);
    for (int i = 0; i < m; i++) {
        int a;
        double b;
        unsigned char *p = r + 15 * (size_t)i;
        memcpy(&a, p, 4);
        memcpy(&b, p + 4, 8);
        EPT_CHECK(a == sval(x->left, tag, i) && b == 0.5 * i + x->left && p[12] == (unsigned char)(char)i &&
                      p[13] == (unsigned char)(x->left + 1) && p[14] == (unsigned char)(char)tag,
                  "struct: rank %d: record %d from %d: a %d b %g c %d %d %d", x->me, i, x->left, a, b, p[12], p[13],
                  p[14]);
    }
    free(s);
    free(r);
    MPI_Type_free(&st_c);
    MPI_Type_free(&st_p);
    EPT_OK(MPI_Barrier(x->comm));
}

/* MPI_DOUBLE_INT pairs, received as MPI_DOUBLE_INT and as a user struct of
 * the same signature. */
static void double_int(ctx_t *x, int m, int tag)
{
    struct di {
        double d;
        int i;
    };
    PHASE("MPI_DOUBLE_INT");
    struct di *s = malloc(sizeof *s * (size_t)m), *r = malloc(sizeof *r * (size_t)m);
    EPT_CHECK(s && r, "out of memory");
    MPI_Datatype user, tmp;
    int len[2] = {1, 1};
    MPI_Aint dis[2] = {offsetof(struct di, d), offsetof(struct di, i)};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
    EPT_OK(MPI_Type_create_struct(2, len, dis, types, &tmp));
    EPT_OK(MPI_Type_create_resized(tmp, 0, sizeof(struct di), &user));
    MPI_Type_free(&tmp);
    EPT_OK(MPI_Type_commit(&user));
    for (int i = 0; i < m; i++) {
        s[i].d = 1.25 * i - x->me;
        s[i].i = sval(x->me, tag, i);
    }
    for (int as_user = 0; as_user < 2; as_user++) {
        MPI_Datatype rt = as_user ? user : MPI_DOUBLE_INT;
        MPI_Request rq;
        MPI_Status st;
        for (int i = 0; i < m; i++) {
            r[i].d = -1;
            r[i].i = -1;
        }
        EPT_OK(MPI_Irecv(r, m, rt, x->left, tag + as_user, x->comm, &rq));
        EPT_OK(MPI_Send(s, m, MPI_DOUBLE_INT, x->right, tag + as_user, x->comm));
        EPT_OK(MPI_Wait(&rq, &st));
        int cnt = -2, el = -2;
        MPI_Get_count(&st, rt, &cnt);
        MPI_Get_elements(&st, rt, &el);
        int want_el = 2 * m; /* basic elements: a double and an int each */
#ifdef OPEN_MPI
        if (!as_user)
            want_el = m; /* Open MPI counts a predefined pair as one element, on any communicator */
#endif
        EPT_CHECK(cnt == m && el == want_el, "MPI_DOUBLE_INT%s: rank %d: count %d elements %d, expected %d %d",
                  as_user ? " as a user struct" : "", x->me, cnt, el, m, want_el);
        for (int i = 0; i < m; i++)
            EPT_CHECK(r[i].d == 1.25 * i - x->left && r[i].i == sval(x->left, tag, i),
                      "MPI_DOUBLE_INT: rank %d: pair %d from %d is (%g, %d)", x->me, i, x->left, r[i].d, r[i].i);
        EPT_OK(MPI_Barrier(x->comm));
    }
    MPI_Type_free(&user);
    free(s);
    free(r);
}

/* A message that ends inside a receive element: 2k+1 ints into elements of
 * vector(2, 1, 2) (two ints, one apart; extent 3 ints). */
static void partial(ctx_t *x, int k, int tag)
{
    PHASE("partial receive element: MPI_Get_count MPI_UNDEFINED, MPI_Get_elements");
    int nints = 2 * k + 1, span = 3 * (k + 1);
    MPI_Datatype pair;
    EPT_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &pair));
    EPT_OK(MPI_Type_commit(&pair));
    int *s = malloc(sizeof(int) * (size_t)nints),
        *r[2] = {malloc(sizeof(int) * (size_t)span), malloc(sizeof(int) * (size_t)span)};
    EPT_CHECK(s && r[0] && r[1], "out of memory");
    for (int i = 0; i < nints; i++)
        s[i] = sval(x->me, tag, i);
    for (int i = 0; i < span; i++)
        r[0][i] = r[1][i] = -1;
    int src[2] = {x->left, x->me};
    MPI_Request rq[2];
    MPI_Status st[2];
    for (int i = 0; i < 2; i++)
        EPT_OK(MPI_Irecv(r[i], k + 1, pair, src[i], tag, x->comm, &rq[i]));
    EPT_OK(MPI_Send(s, nints, MPI_INT, x->right, tag, x->comm));
    EPT_OK(MPI_Send(s, nints, MPI_INT, x->me, tag, x->comm));
    EPT_OK(MPI_Waitall(2, rq, st));
    for (int i = 0; i < 2; i++) {
        int cnt = -2, el = -2, failed = 0;
        MPI_Get_count(&st[i], pair, &cnt);
        MPI_Get_elements(&st[i], pair, &el);
        SOFT_CHECK(x, failed, cnt == MPI_UNDEFINED && el == nints,
                   "partial element, %d ints: rank %d: from %d: MPI_Get_count %d (want MPI_UNDEFINED), "
                   "MPI_Get_elements %d (want %d)",
                   nints, x->me, src[i], cnt, el, nints);
        for (int j = 0; j < nints; j++) {
            int at = 3 * (j / 2) + 2 * (j % 2);
            SOFT_CHECK(x, failed, r[i][at] == sval(src[i], tag, j),
                       "partial element, %d ints: rank %d: from %d: basic element %d (at int %d) is %d, want %d%s",
                       nints, x->me, src[i], j, at, r[i][at], sval(src[i], tag, j),
                       j == nints - 1 ? " (the last, lone element of the message was not stored)" : "");
        }
    }
    free(s);
    free(r[0]);
    free(r[1]);
    MPI_Type_free(&pair);
    EPT_OK(MPI_Barrier(x->comm));
}

/* Absolute addresses: struct types built from MPI_Get_address, used with
 * MPI_BOTTOM as the buffer, on the sending side and on the receiving side.
 * Errors are returned (MPI_ERRORS_RETURN) so that a rejected call is
 * reported here rather than aborting. */
static void bottom(ctx_t *x, int tag)
{
    PHASE("MPI_BOTTOM with absolute-address datatypes");
    int sa[3], ra[3];
    double sd[2], rd[2];
    MPI_Aint adr[2];
    int len[2] = {3, 2};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, sabs, rabs, rel;
    MPI_Get_address(sa, &adr[0]);
    MPI_Get_address(sd, &adr[1]);
    EPT_OK(MPI_Type_create_struct(2, len, adr, types, &sabs));
    MPI_Get_address(ra, &adr[0]);
    MPI_Get_address(rd, &adr[1]);
    EPT_OK(MPI_Type_create_struct(2, len, adr, types, &rabs));
    /* The same record relative to ra: ints at ra, doubles at rd. */
    adr[1] -= adr[0];
    adr[0] = 0;
    EPT_OK(MPI_Type_create_struct(2, len, adr, types, &rel));
    EPT_OK(MPI_Type_commit(&sabs));
    EPT_OK(MPI_Type_commit(&rabs));
    EPT_OK(MPI_Type_commit(&rel));
    MPI_Errhandler old;
    EPT_OK(MPI_Comm_get_errhandler(x->comm, &old));
    EPT_OK(MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN));
    for (int side = 0; side < 2; side++) {
        int failed = 0, flag = 0, rcr, rcs;
        MPI_Request q = MPI_REQUEST_NULL;
        MPI_Status st;
        for (int i = 0; i < 3; i++) {
            sa[i] = sval(x->me, tag + side, i);
            ra[i] = -1;
        }
        sd[0] = x->me + 0.25;
        sd[1] = tag + side + 0.5;
        rd[0] = rd[1] = -1;
        /* side 0: send from MPI_BOTTOM; side 1: receive into MPI_BOTTOM. */
        if (side == 0)
            rcr = MPI_Irecv(ra, 1, rel, x->left, tag + side, x->comm, &q);
        else
            rcr = MPI_Irecv(MPI_BOTTOM, 1, rabs, x->left, tag + side, x->comm, &q);
        if (side == 0) {
            rcs = MPI_Send(MPI_BOTTOM, 1, sabs, x->right, tag + side, x->comm);
        } else {
            /* sa and sd are not adjacent: send them as two messages' worth
             * through the relative layout of the sender's own arrays. */
            MPI_Aint a0, a1;
            MPI_Datatype srel;
            MPI_Get_address(sa, &a0);
            MPI_Get_address(sd, &a1);
            MPI_Aint d[2] = {0, a1 - a0};
            EPT_OK(MPI_Type_create_struct(2, len, d, types, &srel));
            EPT_OK(MPI_Type_commit(&srel));
            rcs = MPI_Send(sa, 1, srel, x->right, tag + side, x->comm);
            MPI_Type_free(&srel);
        }
        EPT_OK(MPI_Barrier(x->comm));
        if (rcr == MPI_SUCCESS) {
            EPT_OK(MPI_Test(&q, &flag, &st));
            if (!flag) { /* its message never came: take the receive back */
                EPT_OK(MPI_Cancel(&q));
                EPT_OK(MPI_Wait(&q, &st));
            }
        }
        char es[MPI_MAX_ERROR_STRING] = "";
        int el = 0;
        if (rcr != MPI_SUCCESS || rcs != MPI_SUCCESS)
            MPI_Error_string(rcr != MPI_SUCCESS ? rcr : rcs, es, &el);
        SOFT_CHECK(x, failed, rcr == MPI_SUCCESS && rcs == MPI_SUCCESS,
                   "rank %d: %s from/into MPI_BOTTOM with an absolute-address struct failed: %s", x->me,
                   rcr != MPI_SUCCESS ? "MPI_Irecv" : "MPI_Send", es);
        if (!failed && flag) {
            int ok = rd[0] == x->left + 0.25 && rd[1] == tag + side + 0.5;
            for (int i = 0; i < 3; i++)
                ok = ok && ra[i] == sval(x->left, tag + side, i);
            SOFT_CHECK(x, failed, ok, "rank %d: MPI_BOTTOM %s: received ints %d %d %d doubles %g %g", x->me,
                       side ? "receive" : "send", ra[0], ra[1], ra[2], rd[0], rd[1]);
        }
        EPT_OK(MPI_Barrier(x->comm));
    }
    EPT_OK(MPI_Comm_set_errhandler(x->comm, old));
    if (old != MPI_ERRORS_ARE_FATAL && old != MPI_ERRORS_RETURN)
        MPI_Errhandler_free(&old);
    MPI_Type_free(&sabs);
    MPI_Type_free(&rabs);
    MPI_Type_free(&rel);
}

/* Types freed with PMPI_Type_free, as MPICH's Fortran bindings free the
 * types they make for array sections: epmpi never sees the free, and MPICH
 * hands the handle out again, often to the next type made, here one of
 * another layout.  Nothing epmpi learnt about the old type may be applied
 * to the new one. */
static lay_t lay_contig12(int n)
{
    lay_t l = lay_new("MPI_Type_contiguous(12)", n / 12, 12);
    EPT_OK(MPI_Type_contiguous(12, MPI_INT, &l.t));
    for (int k = 0; k < l.n; k++)
        l.off[k] = k;
    lay_done(&l);
    return l;
}

static void freed_past_epmpi(ctx_t *x, int tag)
{
    static lay_t (*const make[3])(int) = {lay_contig12, lay_vector, lay_indexed_lb};
    for (int i = 0; i < 6; i++) {
        lay_t l = make[i % 3](96);
        exchange(x, &l, &l, tag + i, 0);
        EPT_OK(PMPI_Type_free(&l.t));
        free(l.off);
    }
}

/* MPICH destroys a type (a PMPI_Type_free past epmpi) while a receive on
 * it is pending: epmpi keeps what it knows of the type until the receive
 * is over (under AddressSanitizer this would catch a use after free). */
static void destroyed_while_pending(ctx_t *x, int tag)
{
    PHASE("type destroyed by MPICH while a receive on it is pending");
    MPI_Datatype t;
    int out[24], in[24];
    for (int i = 0; i < 24; i++)
        out[i] = sval(x->me, tag, i), in[i] = -1;
    EPT_OK(MPI_Type_contiguous(12, MPI_INT, &t));
    EPT_OK(MPI_Type_commit(&t));
    MPI_Request r;
    MPI_Status st;
    EPT_OK(MPI_Irecv(in, 2, t, x->left, tag, x->comm, &r));
    EPT_OK(PMPI_Type_free(&t));
    EPT_OK(MPI_Send(out, 24, MPI_INT, x->right, tag, x->comm));
    EPT_OK(MPI_Wait(&r, &st));
    int cnt = -1, bad = 0;
    MPI_Get_count(&st, MPI_INT, &cnt);
    for (int i = 0; i < 24; i++)
        bad += in[i] != sval(x->left, tag, i);
    SOFT_CHECK(x, bad, cnt == 24 && bad == 0, "rank %d: destroyed while pending: count %d, %d ints wrong", x->me, cnt,
               bad);
}

static void datatypes(MPI_Comm comm, void *arg)
{
    (void)arg;
    ctx_t x = {.comm = comm};
    ept_ring_place(comm, &x.me, &x.n, &x.left, &x.right);
    int tag = 0;
    for (int si = 0; si < 3; si++) {
        for (int p = 0; p < NPAIRS; p++) {
            lay_t sl = pairs[p].send(sizes_n[si]), rl = pairs[p].recv(sizes_n[si]);
            exchange(&x, &sl, &rl, tag++, p == 0);
            lay_free(&sl);
            lay_free(&rl);
        }
    }
    static const int recs[3] = {20, 2000, 70000};
    for (int si = 0; si < 3; si++) {
        structs(&x, recs[si], tag++);
        double_int(&x, recs[si], tag);
        tag += 2;
    }
    static const int halves[3] = {3, 3000, 131071};
    for (int si = 0; si < 3; si++)
        partial(&x, halves[si], tag++);
    bottom(&x, tag);
    tag += 2;
    freed_past_epmpi(&x, tag);
    tag += 6;
    destroyed_while_pending(&x, tag++);
    EPT_CHECK(x.fails == 0, "rank %d: %d checks failed (see above)", x.me, x.fails);
}

int main(int argc, char **argv) { return ept_main(argc, argv, 30, datatypes, NULL); }
