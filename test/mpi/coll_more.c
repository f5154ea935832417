/* The collectives beyond the basic four, on endpoint communicators, each
 * checked against values computed here: Reduce (every root, MPI_IN_PLACE,
 * a non-commutative user operation, 8 MiB), large non-commutative Allreduce
 * and in-place Reduce_scatter_block, small and large Allreduce in turn (in
 * place too), Gather / Gatherv / Scatter /
 * Scatterv (every root, MPI_IN_PLACE, gaps in the displacements),
 * Allgatherv, Alltoall (and MPI_IN_PLACE), Alltoallv with zero counts,
 * Alltoallw with a different datatype per pair, Reduce_scatter_block,
 * Reduce_scatter, Scan and Exscan (commutative and not).
 *
 * Built twice: coll_more, and coll_gathered with EPMPI_COLL_ALGORITHM=gathered,
 * which sends reductions and scans through the path taken when ranks are
 * not grouped by process. */
#include "eptest.h"

/* The non-commutative operation: ept_mat_t products (eptest.h). */
static ept_mat_t mat_of(int r) { return (ept_mat_t){{r + 2, 1, 1, 0}}; }

static ept_mat_t mat_prefix(int from, int upto) /* M_from * ... * M_upto-1 */
{
    ept_mat_t p = {{1, 0, 0, 1}};
    for (int r = from; r < upto; r++)
        p = ept_mat_mul(p, mat_of(r));
    return p;
}

static MPI_Datatype mat_type;
static MPI_Op mat_mpi_op;

static void check_mat(ept_mat_t got, ept_mat_t want, const char *what, int r)
{
    EPT_CHECK(!memcmp(&got, &want, sizeof got), "%s at rank %d: got %lld %lld %lld %lld, want %lld %lld %lld %lld",
              what, r, got.m[0], got.m[1], got.m[2], got.m[3], want.m[0], want.m[1], want.m[2], want.m[3]);
}

static void reductions(MPI_Comm comm, int r, int n)
{
    PHASE("MPI_Reduce");
    for (int root = 0; root < n; root++) {
        int in[3] = {r, 2 * r, 1}, out[3] = {-1, -1, -1};
        if (r == root && root % 2) {
            memcpy(out, in, sizeof in);
            EPT_OK(MPI_Reduce(MPI_IN_PLACE, out, 3, MPI_INT, MPI_SUM, root, comm));
        } else {
            EPT_OK(MPI_Reduce(in, out, 3, MPI_INT, MPI_SUM, root, comm));
        }
        if (r == root)
            EPT_CHECK(out[0] == n * (n - 1) / 2 && out[1] == n * (n - 1) && out[2] == n, "MPI_Reduce to %d: %d %d %d",
                      root, out[0], out[1], out[2]);
        else
            EPT_CHECK(out[0] == -1, "MPI_Reduce wrote a non-root receive buffer");
        ept_mat_t m = mat_of(r), res = {{0}};
        EPT_OK(MPI_Reduce(&m, &res, 1, mat_type, mat_mpi_op, root, comm));
        if (r == root)
            check_mat(res, mat_prefix(0, n), "non-commutative MPI_Reduce", r);
    }
    ept_mat_t m = mat_of(r), res;
    EPT_OK(MPI_Allreduce(&m, &res, 1, mat_type, mat_mpi_op, comm));
    check_mat(res, mat_prefix(0, n), "non-commutative MPI_Allreduce", r);

    PHASE("MPI_Reduce 8 MiB");
    {
        int N = 1 << 20;
        double *a = malloc(sizeof(double) * (size_t)N), *b = malloc(sizeof(double) * (size_t)N);
        for (int i = 0; i < N; i++)
            a[i] = r + i % 7;
        EPT_OK(MPI_Reduce(a, b, N, MPI_DOUBLE, MPI_SUM, n - 1, comm));
        if (r == n - 1)
            for (int i = 0; i < N; i += 4099)
                EPT_CHECK(b[i] == n * (n - 1) / 2.0 + n * (i % 7), "8 MiB MPI_Reduce element %d: %g", i, b[i]);
        free(a);
        free(b);
    }

    PHASE("large reductions (folded in shares inside each process)");
    {
        /* 32768 matrices (1 MiB), non-commutative: element k of rank r is
         * mat_of(r + k % 3), so the product is mat_prefix(k % 3, n + k % 3). */
        const int K = 32768, B = 131072;
        ept_mat_t *x = malloc(sizeof *x * (size_t)K), *y = malloc(sizeof *y * (size_t)K);
        double *v = malloc(sizeof(double) * (size_t)B * (size_t)n);
        EPT_CHECK(x && y && v, "out of memory");
        for (int k = 0; k < K; k++)
            x[k] = mat_of(r + k % 3);
        EPT_OK(MPI_Allreduce(x, y, K, mat_type, mat_mpi_op, comm));
        for (int k = 0; k < K; k++)
            check_mat(y[k], mat_prefix(k % 3, n + k % 3), "1 MiB non-commutative MPI_Allreduce", r);
        /* In place, 1 MiB per rank. */
        for (int i = 0; i < B * n; i++)
            v[i] = r + i % 5;
        EPT_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, v, B, MPI_DOUBLE, MPI_SUM, comm));
        for (int j = 0; j < B; j++)
            if (v[j] != n * (n - 1) / 2.0 + n * ((r * B + j) % 5))
                EPT_CHECK(0, "in-place MPI_Reduce_scatter_block element %d: %g", j, v[j]);
        free(x);
        free(y);
        free(v);
    }
    PHASE("small and large MPI_Allreduce in turn");
    {
        /* After a small call the process's first endpoint may run ahead
         * into the next one while the others still leave; the large one
         * is folded in shares straight into its receive buffer (in place
         * every other round). */
        const int B = 131072;
        double *x = malloc(sizeof(double) * (size_t)B), *y = malloc(sizeof(double) * (size_t)B);
        EPT_CHECK(x && y, "out of memory");
        for (int round = 0; round < 20; round++) {
            int one = r + round, sum = -1;
            EPT_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm));
            EPT_CHECK(sum == n * (n - 1) / 2 + n * round, "round %d: small MPI_Allreduce %d", round, sum);
            double *out = round % 2 ? x : y;
            for (int i = 0; i < B; i++)
                x[i] = r + (i + round) % 9;
            EPT_OK(MPI_Allreduce(round % 2 ? MPI_IN_PLACE : x, out, B, MPI_DOUBLE, MPI_SUM, comm));
            for (int i = 0; i < B; i += 97)
                if (out[i] != n * (n - 1) / 2.0 + n * ((i + round) % 9))
                    EPT_CHECK(0, "round %d: 1 MiB MPI_Allreduce element %d: %g", round, i, out[i]);
        }
        free(x);
        free(y);
    }
    PHASE("MPI_Reduce_scatter_block");
    {
        int *in = malloc(sizeof(int) * 2 * (size_t)n), out[2];
        for (int k = 0; k < 2 * n; k++)
            in[k] = r + k;
        EPT_OK(MPI_Reduce_scatter_block(in, out, 2, MPI_INT, MPI_SUM, comm));
        for (int j = 0; j < 2; j++)
            EPT_CHECK(out[j] == n * (n - 1) / 2 + n * (2 * r + j), "MPI_Reduce_scatter_block[%d] = %d", j, out[j]);
        free(in);
    }
    PHASE("MPI_Reduce_scatter");
    {
        int *counts = malloc(sizeof(int) * (size_t)n), total = 0, first = 0;
        for (int q = 0; q < n; q++) {
            counts[q] = q % 3; /* some ranks get nothing */
            if (q < r)
                first += counts[q];
            total += counts[q];
        }
        int *in = malloc(sizeof(int) * (size_t)(total + 1)), out[3] = {-1, -1, -1};
        for (int k = 0; k < total; k++)
            in[k] = r * k;
        EPT_OK(MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm));
        for (int j = 0; j < counts[r]; j++)
            EPT_CHECK(out[j] == (first + j) * (n * (n - 1) / 2), "MPI_Reduce_scatter[%d] = %d", j, out[j]);
        free(in);
        free(counts);
    }
    PHASE("MPI_Scan / MPI_Exscan");
    {
        int v = r + 1, s = -1, e = -7;
        EPT_OK(MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, comm));
        EPT_CHECK(s == (r + 1) * (r + 2) / 2, "MPI_Scan %d", s);
        EPT_OK(MPI_Exscan(&v, &e, 1, MPI_INT, MPI_SUM, comm));
        if (r > 0)
            EPT_CHECK(e == r * (r + 1) / 2, "MPI_Exscan %d", e);
        s = v;
        EPT_OK(MPI_Scan(MPI_IN_PLACE, &s, 1, MPI_INT, MPI_MAX, comm));
        EPT_CHECK(s == r + 1, "in-place MPI_Scan max %d", s);
        ept_mat_t mm = mat_of(r), ms, me;
        EPT_OK(MPI_Scan(&mm, &ms, 1, mat_type, mat_mpi_op, comm));
        check_mat(ms, mat_prefix(0, r + 1), "non-commutative MPI_Scan", r);
        EPT_OK(MPI_Exscan(&mm, &me, 1, mat_type, mat_mpi_op, comm));
        if (r > 0)
            check_mat(me, mat_prefix(0, r), "non-commutative MPI_Exscan", r);
    }
}

static void rooted(MPI_Comm comm, int r, int n)
{
    int *big = malloc(sizeof(int) * (size_t)(n * (n + 3) + 8));
    int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
    for (int root = 0; root < n; root++) {
        PHASE("MPI_Gather");
        int mine[2] = {r, -r};
        for (int i = 0; i < 2 * n; i++)
            big[i] = -99;
        if (r == root && root % 2) {
            big[2 * r] = r;
            big[2 * r + 1] = -r;
            EPT_OK(MPI_Gather(MPI_IN_PLACE, 2, MPI_INT, big, 2, MPI_INT, root, comm));
        } else {
            EPT_OK(MPI_Gather(mine, 2, MPI_INT, big, 2, MPI_INT, root, comm));
        }
        if (r == root)
            for (int s = 0; s < n; s++)
                EPT_CHECK(big[2 * s] == s && big[2 * s + 1] == -s, "MPI_Gather to %d: block %d is %d %d", root, s,
                          big[2 * s], big[2 * s + 1]);

        PHASE("MPI_Gatherv");
        int vals[16];
        for (int i = 0; i <= r && i < 16; i++)
            vals[i] = r * 100 + i;
        for (int s = 0; s < n; s++) {
            counts[s] = s + 1;
            displs[s] = s * (n + 2); /* gaps between the blocks */
        }
        for (int i = 0; i < n * (n + 2); i++)
            big[i] = -99;
        EPT_OK(MPI_Gatherv(vals, r + 1, MPI_INT, big, counts, displs, MPI_INT, root, comm));
        if (r == root)
            for (int s = 0; s < n; s++) {
                for (int i = 0; i <= s; i++)
                    EPT_CHECK(big[displs[s] + i] == s * 100 + i, "MPI_Gatherv to %d: rank %d item %d is %d", root, s, i,
                              big[displs[s] + i]);
                EPT_CHECK(big[displs[s] + s + 1] == -99, "MPI_Gatherv wrote into a gap");
            }

        PHASE("MPI_Scatter");
        for (int s = 0; s < n; s++) {
            big[2 * s] = root * 1000 + s;
            big[2 * s + 1] = s;
        }
        int got[2] = {-1, -1};
        if (r == root && root % 2) {
            EPT_OK(MPI_Scatter(big, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, root, comm));
            got[0] = big[2 * r];
            got[1] = big[2 * r + 1];
        } else {
            EPT_OK(MPI_Scatter(big, 2, MPI_INT, got, 2, MPI_INT, root, comm));
        }
        EPT_CHECK(got[0] == root * 1000 + r && got[1] == r, "MPI_Scatter from %d: %d %d", root, got[0], got[1]);

        PHASE("MPI_Scatterv");
        for (int s = 0; s < n; s++)
            for (int i = 0; i <= s; i++)
                big[displs[s] + i] = root * 1000 + s * 10 + i;
        for (int i = 0; i < 16; i++)
            vals[i] = -1;
        EPT_OK(MPI_Scatterv(big, counts, displs, MPI_INT, vals, r + 1, MPI_INT, root, comm));
        for (int i = 0; i <= r && i < 16; i++)
            EPT_CHECK(vals[i] == root * 1000 + r * 10 + i, "MPI_Scatterv from %d: item %d is %d", root, i, vals[i]);
    }
    free(big);
    free(counts);
    free(displs);
}

static void all_to_all(MPI_Comm comm, int r, int n)
{
    int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
    int *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n);
    int *sbuf = malloc(sizeof(int) * (size_t)(4 * n + 4)), *rbuf = malloc(sizeof(int) * (size_t)(4 * n + 4));

    PHASE("MPI_Allgatherv");
    for (int s = 0, d = 0; s < n; s++) {
        rc[s] = s % 3 + 1;
        rd[s] = d;
        d += rc[s] + 1;
    }
    int mine[3] = {r * 10, r * 10 + 1, r * 10 + 2};
    for (int i = 0; i < 4 * n; i++)
        rbuf[i] = -99;
    EPT_OK(MPI_Allgatherv(mine, rc[r], MPI_INT, rbuf, rc, rd, MPI_INT, comm));
    for (int s = 0; s < n; s++)
        for (int i = 0; i < rc[s]; i++)
            EPT_CHECK(rbuf[rd[s] + i] == s * 10 + i, "MPI_Allgatherv: rank %d item %d is %d", s, i, rbuf[rd[s] + i]);
    for (int i = 0; i < 4 * n; i++)
        rbuf[i] = -99;
    memcpy(rbuf + rd[r], mine, sizeof(int) * (size_t)rc[r]);
    EPT_OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, rc, rd, MPI_INT, comm));
    for (int s = 0; s < n; s++)
        EPT_CHECK(rbuf[rd[s]] == s * 10, "in-place MPI_Allgatherv: rank %d is %d", s, rbuf[rd[s]]);

    PHASE("MPI_Alltoall");
    for (int d = 0; d < n; d++)
        sbuf[d] = r * 100 + d;
    EPT_OK(MPI_Alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, comm));
    for (int s = 0; s < n; s++)
        EPT_CHECK(rbuf[s] == s * 100 + r, "MPI_Alltoall from %d: %d", s, rbuf[s]);
    for (int d = 0; d < n; d++)
        rbuf[d] = r * 100 + d;
    EPT_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, 1, MPI_INT, comm));
    for (int s = 0; s < n; s++)
        EPT_CHECK(rbuf[s] == s * 100 + r, "in-place MPI_Alltoall from %d: %d", s, rbuf[s]);

    PHASE("MPI_Alltoallv");
    for (int d = 0, o = 0; d < n; d++) {
        sc[d] = (r + d) % 3; /* zero for some pairs */
        sd[d] = o;
        for (int i = 0; i < sc[d]; i++)
            sbuf[o + i] = r * 1000 + d * 10 + i;
        o += sc[d] + 1;
    }
    for (int s = 0, o = 0; s < n; s++) {
        rc[s] = (s + r) % 3;
        rd[s] = o;
        o += rc[s] + 1;
    }
    EPT_OK(MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm));
    for (int s = 0; s < n; s++)
        for (int i = 0; i < rc[s]; i++)
            EPT_CHECK(rbuf[rd[s] + i] == s * 1000 + r * 10 + i, "MPI_Alltoallv from %d item %d: %d", s, i,
                      rbuf[rd[s] + i]);

    PHASE("MPI_Alltoallw");
    {
        /* Pair (s, d) uses ints when s + d is even, doubles when odd. */
        MPI_Datatype *st = malloc(sizeof *st * (size_t)n), *rt = malloc(sizeof *rt * (size_t)n);
        char *sb = malloc(16 * (size_t)n), *rb = malloc(16 * (size_t)n);
        for (int d = 0; d < n; d++) {
            sc[d] = 1;
            sd[d] = 16 * d; /* byte displacements */
            st[d] = (r + d) % 2 ? MPI_DOUBLE : MPI_INT;
            if (st[d] == MPI_INT)
                *(int *)(sb + sd[d]) = r * 100 + d;
            else
                *(double *)(sb + sd[d]) = r * 100 + d + 0.5;
            rc[d] = 1;
            rd[d] = 16 * d;
            rt[d] = (d + r) % 2 ? MPI_DOUBLE : MPI_INT;
        }
        EPT_OK(MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm));
        for (int s = 0; s < n; s++) {
            if (rt[s] == MPI_INT)
                EPT_CHECK(*(int *)(rb + rd[s]) == s * 100 + r, "MPI_Alltoallw int from %d", s);
            else
                EPT_CHECK(*(double *)(rb + rd[s]) == s * 100 + r + 0.5, "MPI_Alltoallw double from %d", s);
        }
        free(st);
        free(rt);
        free(sb);
        free(rb);
    }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sbuf);
    free(rbuf);
}

static void body(MPI_Comm comm, void *arg)
{
    int r, n;
    (void)arg;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    reductions(comm, r, n);
    rooted(comm, r, n);
    all_to_all(comm, r, n);
    PHASE("done");
}

int main(int argc, char **argv)
{
    int provided;
#ifdef EPT_COLL_GATHERED
    setenv("EPMPI_COLL_ALGORITHM", "gathered", 1);
#endif
    watchdog_arm(60);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    ept_mat_create(&mat_type, &mat_mpi_op);
    int nlocal = local_ranks(argc, argv);
    run_ranks(nlocal, body, NULL);
    MPI_Op_free(&mat_mpi_op);
    MPI_Type_free(&mat_type);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
