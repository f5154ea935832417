/* Non-blocking reductions and scans (coll_nb.h), each completed in one of
 * six ways in turn: Ireduce (every root), Iallreduce, Ireduce_scatter,
 * Ireduce_scatter_block, Iscan, Iexscan, with MPI_IN_PLACE, zero counts,
 * MPI_DOUBLE_INT with MAXLOC and MINLOC, and a non-commutative user
 * operation (2x2 matrix products, which must combine in rank order).
 * Built again as coll_nb_reduce_gathered: the gathered path. */
#include "coll_nb.h"

/* ---- reductions and scans ---------------------------------------------- */

static void t_reduce(MPI_Comm c, int r, int s)
{
    MPI_Request rq;
    for (int root = 0; root < s; root++) {
        PHASE("MPI_Ireduce");
        int at_root = r == root, inplace = at_root && root % 2;
        int in[3] = {r + 1, 2 * r - 3, r % 3}, out[4] = {-1, -1, -1, -6};
        if (inplace)
            memcpy(out, in, sizeof in);
        EPT_OK(MPI_Ireduce(inplace ? MPI_IN_PLACE : in, at_root ? out : NULL, 3, MPI_INT, MPI_SUM, root, c, &rq));
        complete(&rq, r, "MPI_Ireduce");
        if (at_root) {
            int w[3] = {0, 0, 0};
            for (int q = 0; q < s; q++) {
                w[0] += q + 1;
                w[1] += 2 * q - 3;
                w[2] += q % 3;
            }
            EPT_CHECK(out[0] == w[0] && out[1] == w[1] && out[2] == w[2] && out[3] == -6,
                      "Ireduce%s to %d: %d %d %d (%d), expected %d %d %d", inplace ? " in place" : "", root, out[0],
                      out[1], out[2], out[3], w[0], w[1], w[2]);
        }
        ept_mat_t m[2] = {gen_mat(r, 0), gen_mat(r, 1)}, res[2] = {{{0}}, {{0}}};
        EPT_OK(MPI_Ireduce(m, at_root ? res : NULL, 2, mat_type, mat_mpi_op, root, c, &rq));
        complete(&rq, r, "MPI_Ireduce (matrices)");
        if (at_root)
            for (int i = 0; i < 2; i++)
                check_mat(res[i], mat_range(0, s, i), mat_range_rev(0, s, i), "non-commutative Ireduce", r, i);
        out[0] = 31;
        EPT_OK(MPI_Ireduce(in, at_root ? out : NULL, 0, MPI_INT, MPI_SUM, root, c, &rq));
        complete(&rq, r, "MPI_Ireduce of 0 ints");
        EPT_CHECK(out[0] == 31, "Ireduce of 0 ints wrote %d", out[0]);
    }

    PHASE("MPI_Iallreduce");
    for (int inplace = 0; inplace < 2; inplace++) {
        int in[3] = {r + 1, 2 * r - 3, r % 3}, out[4] = {-1, -1, -1, -6};
        if (inplace)
            memcpy(out, in, sizeof in);
        EPT_OK(MPI_Iallreduce(inplace ? MPI_IN_PLACE : in, out, 3, MPI_INT, MPI_SUM, c, &rq));
        complete(&rq, r, "MPI_Iallreduce");
        int w[3] = {0, 0, 0};
        for (int q = 0; q < s; q++) {
            w[0] += q + 1;
            w[1] += 2 * q - 3;
            w[2] += q % 3;
        }
        EPT_CHECK(out[0] == w[0] && out[1] == w[1] && out[2] == w[2] && out[3] == -6,
                  "Iallreduce%s: %d %d %d (%d), expected %d %d %d", inplace ? " in place" : "", out[0], out[1], out[2],
                  out[3], w[0], w[1], w[2]);
        out[0] = 32;
        EPT_OK(MPI_Iallreduce(inplace ? MPI_IN_PLACE : in, out, 0, MPI_INT, MPI_SUM, c, &rq));
        complete(&rq, r, "MPI_Iallreduce of 0 ints");
        EPT_CHECK(out[0] == 32, "Iallreduce of 0 ints wrote %d", out[0]);

        ept_mat_t m[3], res[3];
        for (int i = 0; i < 3; i++) {
            m[i] = gen_mat(r, i);
            res[i] = inplace ? m[i] : (ept_mat_t){{0}};
        }
        EPT_OK(MPI_Iallreduce(inplace ? MPI_IN_PLACE : m, res, 3, mat_type, mat_mpi_op, c, &rq));
        complete(&rq, r, "MPI_Iallreduce (matrices)");
        for (int i = 0; i < 3; i++) {
            ept_mat_t w = mat_range(0, s, i), rev = mat_range_rev(0, s, i);
            EPT_CHECK(s < 2 || memcmp(&w, &rev, sizeof w), "test setup: the product does not depend on the order");
            check_mat(res[i], w, rev, inplace ? "non-commutative Iallreduce in place" : "non-commutative Iallreduce", r,
                      i);
        }
    }

    PHASE("MPI_Iallreduce MAXLOC / MINLOC on MPI_DOUBLE_INT");
    {
        struct {
            double v;
            int loc;
        } in[4], out[4];
        for (int pass = 0; pass < 2; pass++) {
            MPI_Op op = pass ? MPI_MINLOC : MPI_MAXLOC;
            for (int i = 0; i < 4; i++) {
                in[i].v = (double)((r * 5 + i) % 3) + 0.25; /* ties are frequent: the lowest rank wins them */
                in[i].loc = r;
                out[i].v = -1;
                out[i].loc = -1;
            }
            EPT_OK(MPI_Iallreduce(in, out, 4, MPI_DOUBLE_INT, op, c, &rq));
            complete(&rq, r, "MPI_Iallreduce MAXLOC / MINLOC");
            for (int i = 0; i < 4; i++) {
                double wv = (double)(i % 3) + 0.25;
                int wl = 0;
                for (int q = 1; q < s; q++) {
                    double v = (double)((q * 5 + i) % 3) + 0.25;
                    if (pass ? v < wv : v > wv) {
                        wv = v;
                        wl = q;
                    }
                }
                EPT_CHECK(out[i].v == wv && out[i].loc == wl, "Iallreduce %s element %d: (%g, %d), expected (%g, %d)",
                          pass ? "MPI_MINLOC" : "MPI_MAXLOC", i, out[i].v, out[i].loc, wv, wl);
            }
        }
    }

    PHASE("MPI_Ireduce_scatter");
    {
        int *cnt = malloc(sizeof(int) * (size_t)s), total = 0, first = 0;
        EPT_CHECK(cnt != NULL, "out of memory");
        for (int q = 0; q < s; q++) {
            cnt[q] = q % 3; /* some ranks get nothing */
            if (q < r)
                first += cnt[q];
            total += cnt[q];
        }
        int *in = malloc(sizeof(int) * (size_t)(total + 1)), *io = malloc(sizeof(int) * (size_t)(total + 1));
        ept_mat_t *min = malloc(sizeof(ept_mat_t) * (size_t)(total + 1)), mout[3];
        EPT_CHECK(in && io && min, "out of memory");
        for (int k = 0; k < total; k++) {
            in[k] = io[k] = r * k + 1;
            min[k] = gen_mat(r, k);
        }
        int out[3] = {-1, -1, -1};
        EPT_OK(MPI_Ireduce_scatter(in, out, cnt, MPI_INT, MPI_SUM, c, &rq));
        complete(&rq, r, "MPI_Ireduce_scatter");
        EPT_OK(MPI_Ireduce_scatter(MPI_IN_PLACE, io, cnt, MPI_INT, MPI_SUM, c, &rq));
        complete(&rq, r, "MPI_Ireduce_scatter in place");
        for (int j = 0; j < cnt[r]; j++) {
            int w = (first + j) * (s * (s - 1) / 2) + s;
            EPT_CHECK(out[j] == w, "Ireduce_scatter item %d is %d, expected %d", j, out[j], w);
            EPT_CHECK(io[j] == w, "in-place Ireduce_scatter item %d is %d, expected %d", j, io[j], w);
        }
        EPT_CHECK(out[cnt[r]] == -1, "Ireduce_scatter wrote past %d items", cnt[r]);
        EPT_OK(MPI_Ireduce_scatter(min, mout, cnt, mat_type, mat_mpi_op, c, &rq));
        complete(&rq, r, "MPI_Ireduce_scatter (matrices)");
        for (int j = 0; j < cnt[r]; j++)
            check_mat(mout[j], mat_range(0, s, first + j), mat_range_rev(0, s, first + j),
                      "non-commutative Ireduce_scatter", r, j);
        free(in);
        free(io);
        free(min);
        free(cnt);
    }

    PHASE("MPI_Ireduce_scatter_block");
    {
        int *in = malloc(sizeof(int) * 2 * (size_t)s), *io = malloc(sizeof(int) * 2 * (size_t)s), out[3] = {-1, -1, -1};
        ept_mat_t *min = malloc(sizeof(ept_mat_t) * (size_t)s), mout;
        EPT_CHECK(in && io && min, "out of memory");
        for (int k = 0; k < 2 * s; k++)
            in[k] = io[k] = r + k;
        for (int k = 0; k < s; k++)
            min[k] = gen_mat(r, k);
        EPT_OK(MPI_Ireduce_scatter_block(in, out, 2, MPI_INT, MPI_SUM, c, &rq));
        complete(&rq, r, "MPI_Ireduce_scatter_block");
        EPT_OK(MPI_Ireduce_scatter_block(MPI_IN_PLACE, io, 2, MPI_INT, MPI_SUM, c, &rq));
        complete(&rq, r, "MPI_Ireduce_scatter_block in place");
        for (int j = 0; j < 2; j++) {
            int w = s * (s - 1) / 2 + s * (2 * r + j);
            EPT_CHECK(out[j] == w, "Ireduce_scatter_block item %d is %d, expected %d", j, out[j], w);
            EPT_CHECK(io[j] == w, "in-place Ireduce_scatter_block item %d is %d, expected %d", j, io[j], w);
        }
        EPT_CHECK(out[2] == -1, "Ireduce_scatter_block wrote past 2 items");
        EPT_OK(MPI_Ireduce_scatter_block(min, &mout, 1, mat_type, mat_mpi_op, c, &rq));
        complete(&rq, r, "MPI_Ireduce_scatter_block (matrices)");
        check_mat(mout, mat_range(0, s, r), mat_range_rev(0, s, r), "non-commutative Ireduce_scatter_block", r, 0);
        free(in);
        free(io);
        free(min);
    }

    PHASE("MPI_Iscan / MPI_Iexscan");
    {
        int v[2] = {r + 1, 2 * r}, sres[3] = {-1, -1, -9}, eres[3] = {-1, -1, -9}, io[2];
        EPT_OK(MPI_Iscan(v, sres, 2, MPI_INT, MPI_SUM, c, &rq));
        complete(&rq, r, "MPI_Iscan");
        EPT_CHECK(sres[0] == (r + 1) * (r + 2) / 2 && sres[1] == r * (r + 1) && sres[2] == -9, "Iscan: %d %d %d",
                  sres[0], sres[1], sres[2]);
        EPT_OK(MPI_Iexscan(v, eres, 2, MPI_INT, MPI_SUM, c, &rq));
        complete(&rq, r, "MPI_Iexscan");
        if (r > 0)
            EPT_CHECK(eres[0] == r * (r + 1) / 2 && eres[1] == r * (r - 1), "Iexscan: %d %d", eres[0], eres[1]);
        EPT_CHECK(eres[2] == -9, "Iexscan wrote past 2 items");
        /* In place: MAX for the scan, SUM for the exscan. */
        io[0] = (r * 7) % 5;
        io[1] = -r;
        EPT_OK(MPI_Iscan(MPI_IN_PLACE, io, 2, MPI_INT, MPI_MAX, c, &rq));
        complete(&rq, r, "MPI_Iscan in place");
        int wmax = 0;
        for (int q = 0; q <= r; q++)
            wmax = (q * 7) % 5 > wmax ? (q * 7) % 5 : wmax;
        EPT_CHECK(io[0] == wmax && io[1] == 0, "in-place Iscan MAX: %d %d, expected %d 0", io[0], io[1], wmax);
        io[0] = r + 1;
        io[1] = 3;
        EPT_OK(MPI_Iexscan(MPI_IN_PLACE, io, 2, MPI_INT, MPI_SUM, c, &rq));
        complete(&rq, r, "MPI_Iexscan in place");
        if (r > 0)
            EPT_CHECK(io[0] == r * (r + 1) / 2 && io[1] == 3 * r, "in-place Iexscan: %d %d", io[0], io[1]);
        /* Zero counts. */
        sres[0] = eres[0] = 55;
        EPT_OK(MPI_Iscan(v, sres, 0, MPI_INT, MPI_SUM, c, &rq));
        complete(&rq, r, "MPI_Iscan of 0 ints");
        EPT_OK(MPI_Iexscan(v, eres, 0, MPI_INT, MPI_SUM, c, &rq));
        complete(&rq, r, "MPI_Iexscan of 0 ints");
        EPT_CHECK(sres[0] == 55 && eres[0] == 55, "Iscan / Iexscan of 0 ints wrote %d / %d", sres[0], eres[0]);
        /* The non-commutative op. */
        ept_mat_t m[2] = {gen_mat(r, 0), gen_mat(r, 1)}, ms[2], me[2], mi[2] = {gen_mat(r, 0), gen_mat(r, 1)};
        EPT_OK(MPI_Iscan(m, ms, 2, mat_type, mat_mpi_op, c, &rq));
        complete(&rq, r, "MPI_Iscan (matrices)");
        EPT_OK(MPI_Iexscan(m, me, 2, mat_type, mat_mpi_op, c, &rq));
        complete(&rq, r, "MPI_Iexscan (matrices)");
        EPT_OK(MPI_Iscan(MPI_IN_PLACE, mi, 2, mat_type, mat_mpi_op, c, &rq));
        complete(&rq, r, "MPI_Iscan in place (matrices)");
        for (int i = 0; i < 2; i++) {
            check_mat(ms[i], mat_range(0, r + 1, i), mat_range_rev(0, r + 1, i), "non-commutative Iscan", r, i);
            check_mat(mi[i], mat_range(0, r + 1, i), mat_range_rev(0, r + 1, i), "non-commutative in-place Iscan", r,
                      i);
            if (r > 0)
                check_mat(me[i], mat_range(0, r, i), mat_range_rev(0, r, i), "non-commutative Iexscan", r, i);
        }
    }
}

static void tests(MPI_Comm c, int r, int s) { t_reduce(c, r, s); }

int main(int argc, char **argv) { return coll_nb_main(argc, argv, tests); }
