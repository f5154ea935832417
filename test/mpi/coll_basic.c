/* The basic collectives on endpoint communicators: MPI_COMM_WORLD in world
 * mode (PxT), or the handles of MPI_Comm_create_endpoints(MPI_COMM_WORLD, n)
 * in explicit shapes (P:a,b,...: n per process, possibly 0).
 *  - MPI_Barrier: every rank bumps a counter shared by all processes (a
 *    shared-memory file) before each barrier; after barrier k the counter is
 *    at least size*(k+1) and at most size*(k+2), whatever the timing;
 *  - MPI_Bcast from every root (rank 0, other ranks of the root's process,
 *    ranks of other processes) of 8 B, 64 KiB and 8 MiB, of 0 elements, of
 *    an odd number of bytes; of derived datatypes (a strided vector received
 *    either as the vector or as contiguous ints, a padded struct), and one
 *    8 MiB strided vector;
 *  - MPI_Allreduce with MPI_SUM/MAX/MIN/PROD/LAND/BOR/BXOR on int and long
 *    long, SUM/MAX/MIN/PROD on double, with and without MPI_IN_PLACE, counts
 *    0, 1 and 5; MPI_MAXLOC/MINLOC on MPI_DOUBLE_INT (ties go to the lowest
 *    rank); user ops from MPI_Op_create: a commutative one, and a
 *    non-commutative one (2x2 matrix products, whose result is the product in
 *    rank order); 1M doubles (8 MiB) with MPI_SUM and in place with MPI_MAX;
 *  - MPI_Allgather with and without MPI_IN_PLACE, 0 counts, 20000 doubles,
 *    and different send and receive types of the same signature.
 * Every result is checked against values computed here, rank by rank. */
#include "eptest.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- counter shared by all processes ------------------------------------ */

#define NSLOTS 8
static _Atomic long *shared;

static void test_barrier(MPI_Comm c, int slot)
{
    int s;
    MPI_Comm_size(c, &s);
    for (long k = 0; k < 30; k++) {
        atomic_fetch_add(&shared[slot], 1);
        EPT_OK(MPI_Barrier(c));
        long v = atomic_load(&shared[slot]);
        EPT_CHECK(v >= s * (k + 1) && v <= s * (k + 2),
                  "barrier %ld: the counter is %ld, expected %ld to %ld (a rank left before all arrived)", k, v,
                  s * (k + 1), s * (k + 2));
    }
}

/* ---- Bcast -------------------------------------------------------------- */

static int bpat(int root, int n, int i) { return root * 1000003 + n * 7 + i; }

static void test_bcast(MPI_Comm c, int r, int s, MPI_Datatype vec, MPI_Datatype bigvec, MPI_Datatype st)
{
    static const int counts[] = {2, 16384, 2 * 1024 * 1024}; /* ints: 8 B, 64 KiB, 8 MiB */
    int *buf = malloc(sizeof(int) * 3 * 1024 * 1024);
    EPT_CHECK(buf != NULL, "out of memory");
    for (int root = 0; root < s; root++) {
        for (int k = 0; k < 3; k++) {
            int n = counts[k];
            for (int i = 0; i < n; i++)
                buf[i] = r == root ? bpat(root, n, i) : -1;
            EPT_OK(MPI_Bcast(buf, n, MPI_INT, root, c));
            for (int i = 0; i < n; i++)
                if (buf[i] != bpat(root, n, i))
                    EPT_CHECK(0, "bcast of %d ints from root %d: element %d is %d, expected %d", n, root, i, buf[i],
                              bpat(root, n, i));
        }
        /* 0 elements: nothing changes. */
        buf[0] = 4242;
        EPT_OK(MPI_Bcast(buf, 0, MPI_INT, root, c));
        EPT_CHECK(buf[0] == 4242, "bcast of 0 ints wrote %d", buf[0]);
        /* An odd number of bytes. */
        unsigned char *b = (unsigned char *)buf;
        for (int i = 0; i < 13; i++)
            b[i] = r == root ? (unsigned char)(root * 31 + i) : 0xee;
        b[13] = 0x77;
        EPT_OK(MPI_Bcast(b, 13, MPI_BYTE, root, c));
        for (int i = 0; i < 13; i++)
            EPT_CHECK(b[i] == (unsigned char)(root * 31 + i), "bcast of 13 bytes from %d: byte %d is %d", root, i,
                      b[i]);
        EPT_CHECK(b[13] == 0x77, "bcast of 13 bytes wrote past them");

        /* A vector (1000 blocks of 2 ints, stride 3) at the root; odd ranks
         * receive it as the vector, even ranks as 2000 contiguous ints. */
        int as_vec = r == root || r % 2 == 1;
        for (int i = 0; i < 3000; i++)
            buf[i] = -7;
        if (r == root)
            for (int j = 0; j < 1000; j++) {
                buf[3 * j] = bpat(root, 1, 2 * j);
                buf[3 * j + 1] = bpat(root, 1, 2 * j + 1);
            }
        if (as_vec)
            EPT_OK(MPI_Bcast(buf, 1, vec, root, c));
        else
            EPT_OK(MPI_Bcast(buf, 2000, MPI_INT, root, c));
        for (int j = 0; j < 2000; j++) {
            int at = as_vec ? 3 * (j / 2) + j % 2 : j, want = bpat(root, 1, j);
            EPT_CHECK(buf[at] == want, "vector bcast from %d (received as %s): element %d is %d, expected %d", root,
                      as_vec ? "vector" : "ints", j, buf[at], want);
        }
        if (as_vec)
            for (int j = 0; j < 1000; j++)
                EPT_CHECK(buf[3 * j + 2] == -7, "vector bcast from %d wrote into the gap after block %d", root, j);
        else
            EPT_CHECK(buf[2000] == -7, "vector bcast received as ints wrote past 2000 ints");

        /* A padded struct. */
        struct item {
            char c;
            double d;
            int i;
        } items[50];
        memset(items, 0x55, sizeof items);
        for (int j = 0; j < 50; j++)
            if (r == root)
                items[j] = (struct item){(char)('a' + j % 26), root + j * 0.5, root * 100 + j};
            else
                items[j].c = 0, items[j].d = -1, items[j].i = -1;
        EPT_OK(MPI_Bcast(items, 50, st, root, c));
        for (int j = 0; j < 50; j++)
            EPT_CHECK(items[j].c == (char)('a' + j % 26) && items[j].d == root + j * 0.5 &&
                          items[j].i == root * 100 + j,
                      "struct bcast from %d: item %d is {%c, %g, %d}", root, j, items[j].c, items[j].d, items[j].i);
    }
    /* An 8 MiB strided vector (1M blocks of 2 ints, stride 3) from the last rank. */
    int *big = malloc(sizeof(int) * 3 * 1024 * 1024);
    EPT_CHECK(big != NULL, "out of memory");
    int root = s - 1;
    for (int i = 0; i < 3 * 1024 * 1024; i++)
        big[i] = r == root && i % 3 != 2 ? bpat(root, 9, i) : -3;
    EPT_OK(MPI_Bcast(big, 1, bigvec, root, c));
    for (int i = 0; i < 3 * 1024 * 1024; i++) {
        int want = i % 3 != 2 ? bpat(root, 9, i) : -3;
        if (big[i] != want)
            EPT_CHECK(0, "8 MiB vector bcast from %d: int %d is %d, expected %d", root, i, big[i], want);
    }
    free(big);
    free(buf);
}

/* ---- Allreduce ---------------------------------------------------------- */

static const char *op_name(MPI_Op op)
{
    if (op == MPI_SUM)
        return "MPI_SUM";
    if (op == MPI_MAX)
        return "MPI_MAX";
    if (op == MPI_MIN)
        return "MPI_MIN";
    if (op == MPI_PROD)
        return "MPI_PROD";
    if (op == MPI_LAND)
        return "MPI_LAND";
    if (op == MPI_BOR)
        return "MPI_BOR";
    if (op == MPI_BXOR)
        return "MPI_BXOR";
    return "?";
}

/* Input of rank q, element i, for op on an integer type (wide: long long). */
static long long gen_ll(MPI_Op op, int q, int i, int wide)
{
    if (op == MPI_PROD)
        return (q + i) % 3 + 1;
    if (op == MPI_LAND)
        return i % 4 == 0 ? q + 1 : ((q + i) % 3 == 0 ? 0 : q + 1);
    if (op == MPI_BOR)
        return 1LL << ((q * 5 + i) % (wide ? 62 : 30));
    if (op == MPI_BXOR)
        return ((long long)(q + 1) * (wide ? 0x123456789LL : 0x1234567LL)) ^ i;
    long long base = wide ? (1LL << 33) * (q % 2 ? -1 : 1) : 0;
    return base + (q * 7 + i * 3) % 11 - 5;
}

static long long comb_ll(MPI_Op op, long long a, long long b)
{
    if (op == MPI_SUM)
        return a + b;
    if (op == MPI_MAX)
        return a > b ? a : b;
    if (op == MPI_MIN)
        return a < b ? a : b;
    if (op == MPI_PROD)
        return a * b;
    if (op == MPI_LAND)
        return a && b;
    if (op == MPI_BOR)
        return a | b;
    return a ^ b; /* MPI_BXOR */
}

static double gen_d(MPI_Op op, int q, int i)
{
    if (op == MPI_PROD)
        return 1 + ((q + i) % 3) * 0.5;
    return ((q * 7 + i * 3) % 11 - 5) * 0.25 + (q % 2 ? 1e6 : 0);
}

static double comb_d(MPI_Op op, double a, double b)
{
    if (op == MPI_SUM)
        return a + b;
    if (op == MPI_MAX)
        return a > b ? a : b;
    if (op == MPI_MIN)
        return a < b ? a : b;
    return a * b; /* MPI_PROD */
}

static void test_allreduce_builtin(MPI_Comm c, int r, int s)
{
    MPI_Op int_ops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD, MPI_LAND, MPI_BOR, MPI_BXOR};
    MPI_Op dbl_ops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD};
    int counts[] = {0, 1, 5};
    for (int oi = 0; oi < 7; oi++)
        for (int ci = 0; ci < 3; ci++)
            for (int inplace = 0; inplace < 2; inplace++) {
                MPI_Op op = int_ops[oi];
                int n = counts[ci];
                int si[6], ri[6];
                long long sl[6], rl[6];
                for (int i = 0; i < 6; i++) {
                    si[i] = (int)gen_ll(op, r, i, 0);
                    sl[i] = gen_ll(op, r, i, 1);
                    ri[i] = inplace ? si[i] : -99;
                    rl[i] = inplace ? sl[i] : -99;
                }
                EPT_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : si, ri, n, MPI_INT, op, c));
                EPT_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : sl, rl, n, MPI_LONG_LONG, op, c));
                for (int i = 0; i < n; i++) {
                    long long wi = gen_ll(op, 0, i, 0), wl = gen_ll(op, 0, i, 1);
                    for (int q = 1; q < s; q++) {
                        wi = comb_ll(op, wi, gen_ll(op, q, i, 0));
                        wl = comb_ll(op, wl, gen_ll(op, q, i, 1));
                    }
                    if (op == MPI_LAND)
                        wi = wi != 0, wl = wl != 0;
                    EPT_CHECK(ri[i] == (int)wi, "allreduce %s int count %d%s: element %d is %d, expected %lld",
                              op_name(op), n, inplace ? " in place" : "", i, ri[i], wi);
                    EPT_CHECK(rl[i] == wl, "allreduce %s long long count %d%s: element %d is %lld, expected %lld",
                              op_name(op), n, inplace ? " in place" : "", i, rl[i], wl);
                }
                for (int i = n; i < 6; i++)
                    EPT_CHECK(ri[i] == (inplace ? si[i] : -99) && rl[i] == (inplace ? sl[i] : -99),
                              "allreduce %s count %d wrote element %d", op_name(op), n, i);
            }
    for (int oi = 0; oi < 4; oi++)
        for (int ci = 0; ci < 3; ci++)
            for (int inplace = 0; inplace < 2; inplace++) {
                MPI_Op op = dbl_ops[oi];
                int n = counts[ci];
                double sd[6], rd[6];
                for (int i = 0; i < 6; i++) {
                    sd[i] = gen_d(op, r, i);
                    rd[i] = inplace ? sd[i] : -99;
                }
                EPT_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : sd, rd, n, MPI_DOUBLE, op, c));
                for (int i = 0; i < n; i++) {
                    double w = gen_d(op, 0, i);
                    for (int q = 1; q < s; q++)
                        w = comb_d(op, w, gen_d(op, q, i));
                    EPT_CHECK(rd[i] == w, "allreduce %s double count %d%s: element %d is %.17g, expected %.17g",
                              op_name(op), n, inplace ? " in place" : "", i, rd[i], w);
                }
            }
}

/* MAXLOC / MINLOC on MPI_DOUBLE_INT: ties are frequent and go to the lowest rank. */
static void test_loc(MPI_Comm c, int r, int s)
{
    struct {
        double v;
        int loc;
    } in[4], out[4];
    for (int pass = 0; pass < 2; pass++) {
        MPI_Op op = pass ? MPI_MINLOC : MPI_MAXLOC;
        for (int i = 0; i < 4; i++) {
            in[i].v = (double)((r * 5 + i) % 3);
            in[i].loc = r;
            out[i].v = -1;
            out[i].loc = -1;
        }
        EPT_OK(MPI_Allreduce(in, out, 4, MPI_DOUBLE_INT, op, c));
        for (int i = 0; i < 4; i++) {
            double wv = (double)(i % 3);
            int wl = 0;
            for (int q = 1; q < s; q++) {
                double v = (double)((q * 5 + i) % 3);
                if (pass ? v < wv : v > wv)
                    wv = v, wl = q;
            }
            EPT_CHECK(out[i].v == wv && out[i].loc == wl, "%s element %d: (%g, %d), expected (%g, %d)",
                      pass ? "MPI_MINLOC" : "MPI_MAXLOC", i, out[i].v, out[i].loc, wv, wl);
        }
    }
}

/* Commutative user op: sum modulo 65521. */
static void op_summod(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (a[i] + b[i]) % 65521;
}

/* Non-commutative user op: 2x2 matrix product, inout = in * inout. */
typedef struct {
    uint32_t m[4]; /* row major: a b / c d */
} mat_t;

static mat_t mat_mul(mat_t x, mat_t y)
{
    mat_t z;
    z.m[0] = x.m[0] * y.m[0] + x.m[1] * y.m[2];
    z.m[1] = x.m[0] * y.m[1] + x.m[1] * y.m[3];
    z.m[2] = x.m[2] * y.m[0] + x.m[3] * y.m[2];
    z.m[3] = x.m[2] * y.m[1] + x.m[3] * y.m[3];
    return z;
}

static void op_matmul(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    const mat_t *a = in;
    mat_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = mat_mul(a[i], b[i]);
}

static mat_t gen_mat(int q, int i)
{
    mat_t x = {{(uint32_t)(1 + q), (uint32_t)(i + 2), (uint32_t)(q * i + 3), (uint32_t)(5 + q * q)}};
    return x;
}

static void test_user_ops(MPI_Comm c, int r, int s, MPI_Op summod, MPI_Op matmul, MPI_Datatype mat)
{
    int si[7], ri[7];
    for (int i = 0; i < 7; i++) {
        si[i] = 40000 + r * 1000 + i;
        ri[i] = -1;
    }
    EPT_OK(MPI_Allreduce(si, ri, 7, MPI_INT, summod, c));
    for (int i = 0; i < 7; i++) {
        int w = 40000 + i;
        for (int q = 1; q < s; q++)
            w = (40000 + q * 1000 + i + w) % 65521;
        EPT_CHECK(ri[i] == w, "commutative user op: element %d is %d, expected %d", i, ri[i], w);
    }
    int ns[] = {1, 7};
    for (int k = 0; k < 2; k++)
        for (int inplace = 0; inplace < 2; inplace++) {
            int n = ns[k];
            mat_t sm[7], rm[7];
            for (int i = 0; i < n; i++) {
                sm[i] = gen_mat(r, i);
                rm[i] = inplace ? sm[i] : (mat_t){{0, 0, 0, 0}};
            }
            EPT_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : sm, rm, n, mat, matmul, c));
            for (int i = 0; i < n; i++) {
                mat_t w = gen_mat(0, i), rev = gen_mat(s - 1, i);
                for (int q = 1; q < s; q++) {
                    w = mat_mul(w, gen_mat(q, i));
                    rev = mat_mul(rev, gen_mat(s - 1 - q, i));
                }
                if (s > 1 && i == 0)
                    EPT_CHECK(memcmp(&w, &rev, sizeof w) != 0, "test setup: the product does not depend on order");
                EPT_CHECK(memcmp(&rm[i], &w, sizeof w) == 0,
                          "non-commutative user op (matrix product), count %d%s, element %d: [%u %u; %u %u], "
                          "expected the rank-order product [%u %u; %u %u]%s",
                          n, inplace ? " in place" : "", i, rm[i].m[0], rm[i].m[1], rm[i].m[2], rm[i].m[3], w.m[0],
                          w.m[1], w.m[2], w.m[3],
                          memcmp(&rm[i], &rev, sizeof w) == 0 ? " (got the reverse-order product)" : "");
            }
        }
}

static void test_allreduce_big(MPI_Comm c, int r, int s)
{
    const int n = 1024 * 1024;
    double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    EPT_CHECK(a && b, "out of memory");
    for (int i = 0; i < n; i++) {
        a[i] = r + (i % 13);
        b[i] = -1;
    }
    EPT_OK(MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, c));
    for (int i = 0; i < n; i++) {
        double w = s * (s - 1) / 2.0 + (double)s * (i % 13);
        if (b[i] != w)
            EPT_CHECK(0, "allreduce of 1M doubles: element %d is %g, expected %g", i, b[i], w);
    }
    for (int i = 0; i < n; i++)
        a[i] = (double)((r * 7 + i) % (s + 3));
    EPT_OK(MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_DOUBLE, MPI_MAX, c));
    for (int i = 0; i < n; i++) {
        double w = 0;
        for (int q = 0; q < s; q++)
            if ((double)((q * 7 + i) % (s + 3)) > w)
                w = (double)((q * 7 + i) % (s + 3));
        if (a[i] != w)
            EPT_CHECK(0, "in-place MPI_MAX of 1M doubles: element %d is %g, expected %g", i, a[i], w);
    }
    /* Count 1. */
    double one = r + 0.5, res = 0;
    EPT_OK(MPI_Allreduce(&one, &res, 1, MPI_DOUBLE, MPI_SUM, c));
    EPT_CHECK(res == s * (s - 1) / 2.0 + 0.5 * s, "allreduce of 1 double: %g", res);
    free(a);
    free(b);
}

/* ---- Allgather ---------------------------------------------------------- */

static void test_allgather(MPI_Comm c, int r, int s, MPI_Datatype pair)
{
    int *rb = malloc(sizeof(int) * (size_t)(3 * s + 1));
    int sb[3] = {r * 10, r * 10 + 1, r * 10 + 2};
    EPT_CHECK(rb != NULL, "out of memory");
    for (int inplace = 0; inplace < 2; inplace++) {
        for (int i = 0; i <= 3 * s; i++)
            rb[i] = -5;
        if (inplace)
            memcpy(&rb[3 * r], sb, sizeof sb);
        EPT_OK(MPI_Allgather(inplace ? MPI_IN_PLACE : sb, inplace ? 0 : 3, MPI_INT, rb, 3, MPI_INT, c));
        for (int q = 0; q < s; q++)
            for (int j = 0; j < 3; j++)
                EPT_CHECK(rb[3 * q + j] == q * 10 + j, "allgather%s: slot %d of rank %d is %d",
                          inplace ? " in place" : "", j, q, rb[3 * q + j]);
        EPT_CHECK(rb[3 * s] == -5, "allgather wrote past the receive buffer");
    }
    /* 0 counts: nothing is written. */
    rb[0] = 1234;
    EPT_OK(MPI_Allgather(sb, 0, MPI_INT, rb, 0, MPI_INT, c));
    EPT_CHECK(rb[0] == 1234, "allgather of 0 elements wrote %d", rb[0]);
    EPT_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, rb, 0, MPI_INT, c));
    EPT_CHECK(rb[0] == 1234, "in-place allgather of 0 elements wrote %d", rb[0]);
    /* Sent as 2 ints, received as one "pair" (2 contiguous ints). */
    int two[2] = {r, -r};
    for (int i = 0; i < 2 * s; i++)
        rb[i] = 99;
    EPT_OK(MPI_Allgather(two, 2, MPI_INT, rb, 1, pair, c));
    for (int q = 0; q < s; q++)
        EPT_CHECK(rb[2 * q] == q && rb[2 * q + 1] == -q, "allgather ints -> pair: rank %d gave %d %d", q, rb[2 * q],
                  rb[2 * q + 1]);
    free(rb);
    /* 20000 doubles each. */
    const int n = 20000;
    double *sd = malloc(sizeof(double) * (size_t)n), *rd = malloc(sizeof(double) * (size_t)n * (size_t)s);
    EPT_CHECK(sd && rd, "out of memory");
    for (int i = 0; i < n; i++)
        sd[i] = r * 1e5 + i;
    EPT_OK(MPI_Allgather(sd, n, MPI_DOUBLE, rd, n, MPI_DOUBLE, c));
    for (int q = 0; q < s; q++)
        for (int i = 0; i < n; i++)
            if (rd[(size_t)q * n + i] != q * 1e5 + i)
                EPT_CHECK(0, "allgather of %d doubles: rank %d element %d is %g", n, q, i, rd[(size_t)q * n + i]);
    free(sd);
    free(rd);
}

/* ---- driver ------------------------------------------------------------- */

static MPI_Datatype vec, bigvec, st, mat, pair;
static MPI_Op summod, matmul;

static void run_all(MPI_Comm c)
{
    int r, s;
    EPT_OK(MPI_Comm_rank(c, &r));
    EPT_OK(MPI_Comm_size(c, &s));
    test_barrier(c, 0);
    test_bcast(c, r, s, vec, bigvec, st);
    test_barrier(c, 1);
    test_allreduce_builtin(c, r, s);
    test_loc(c, r, s);
    test_user_ops(c, r, s, summod, matmul, mat);
    test_allreduce_big(c, r, s);
    test_allgather(c, r, s, pair);
    test_barrier(c, 2);
}

int main(int argc, char **argv)
{
    int provided, T = ept_world_endpoints();
    if (T <= 0 && argc < 2) {
        fprintf(stderr, "skip: needs world mode or an explicit shape\n");
        return 77;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    shared = ept_shared_page();

    struct item {
        char c;
        double d;
        int i;
    };
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {offsetof(struct item, c), offsetof(struct item, d), offsetof(struct item, i)};
    MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, tmp;
    EPT_OK(MPI_Type_create_struct(3, bl, disp, types, &tmp));
    EPT_OK(MPI_Type_create_resized(tmp, 0, sizeof(struct item), &st));
    EPT_OK(MPI_Type_free(&tmp));
    EPT_OK(MPI_Type_commit(&st));
    EPT_OK(MPI_Type_vector(1000, 2, 3, MPI_INT, &vec));
    EPT_OK(MPI_Type_commit(&vec));
    EPT_OK(MPI_Type_vector(1024 * 1024, 2, 3, MPI_INT, &bigvec));
    EPT_OK(MPI_Type_commit(&bigvec));
    EPT_OK(MPI_Type_contiguous(4, MPI_UINT32_T, &mat));
    EPT_OK(MPI_Type_commit(&mat));
    EPT_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    EPT_OK(MPI_Type_commit(&pair));
    EPT_OK(MPI_Op_create(op_summod, 1, &summod));
    EPT_OK(MPI_Op_create(op_matmul, 0, &matmul));

    if (T > 0) {
#pragma omp parallel num_threads(T)
        run_all(MPI_COMM_WORLD);
    } else {
        int me;
        EPT_CHECK(MPI_Comm_create_endpoints != NULL, "MPI_Comm_create_endpoints missing: is libepmpi.so preloaded?");
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        int n = ept_list_item(argv[1], me);
        MPI_Comm *h = n ? malloc(sizeof(MPI_Comm) * (size_t)n) : NULL;
        EPT_OK(MPI_Comm_create_endpoints(MPI_COMM_WORLD, n, MPI_INFO_NULL, h));
        if (n > 0) {
#pragma omp parallel num_threads(n)
            {
                int i = omp_get_thread_num();
                run_all(h[i]);
                EPT_OK(MPI_Comm_free(&h[i]));
            }
        }
        free(h);
    }

    MPI_Op_free(&summod);
    MPI_Op_free(&matmul);
    MPI_Type_free(&st);
    MPI_Type_free(&vec);
    MPI_Type_free(&bigvec);
    MPI_Type_free(&mat);
    MPI_Type_free(&pair);
    munmap((void *)shared, 4096);
    MPI_Finalize();
    return 0;
}
