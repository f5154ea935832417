/* Non-blocking collectives on communicators whose ranks do not follow the
 * processes (coll_nb.h): from MPI_Comm_split with reversed keys and with
 * keys that interleave the processes, Iallreduce with the non-commutative
 * op, Iscan, Iexscan, Iallgather, Ireduce, Ireduce_scatter_block,
 * Ialltoall, all pending at once.  Built again as coll_nb_split_gathered:
 * the gathered path. */
#include "coll_nb.h"

/* ---- communicators whose ranks do not follow the processes --------------- */

static int k_reverse(int q, int n) { return n - q; }
/* Even ranks first: in 2x2 the new ranks alternate between the processes. */
static int k_interleave(int q, int n) { return (q % 2) * n + q / 2; }

static void t_split(MPI_Comm c, int r, int s)
{
    int (*keys[2])(int, int) = {k_reverse, k_interleave};
    const char *names[2] = {"reversed", "interleaved"};
    int *old_of = malloc(sizeof(int) * (size_t)s), *ag = malloc(sizeof(int) * (size_t)(2 * s + 1));
    int *a2s = malloc(sizeof(int) * (size_t)s), *a2r = malloc(sizeof(int) * (size_t)s);
    ept_mat_t *rsin = malloc(sizeof(ept_mat_t) * (size_t)s);
    EPT_CHECK(old_of && ag && a2s && a2r && rsin, "out of memory");
    for (int v = 0; v < 2; v++) {
        const char *what = names[v];
        MPI_Comm nc;
        int nr = -1, ns = -1, want = 0;
        PHASE(v ? "MPI_Comm_split, interleaved processes" : "MPI_Comm_split, reversed keys");
        EPT_OK(MPI_Comm_split(c, 0, keys[v](r, s), &nc));
        EPT_OK(MPI_Comm_rank(nc, &nr));
        EPT_OK(MPI_Comm_size(nc, &ns));
        for (int q = 0; q < s; q++) {
            int k = 0;
            for (int p = 0; p < s; p++)
                k += keys[v](p, s) < keys[v](q, s);
            old_of[k] = q;
            if (q == r)
                want = k;
        }
        EPT_CHECK(ns == s && nr == want, "%s split: rank %d of %d, expected %d of %d", what, nr, ns, want, s);

        PHASE(v ? "interleaved processes: collectives pending at once" : "reversed keys: collectives pending at once");
        MPI_Request rq[8];
        int n = 0, root = ns - 1, sum = -1;
        char label[96];
        int mine[2] = {nr, r};
        ept_mat_t m[2] = {gen_mat(nr, 0), gen_mat(nr, 1)}, prod[2], pre, ex, red[2] = {{{0}}, {{0}}}, rs;
        for (int i = 0; i <= 2 * ns; i++)
            ag[i] = -3;
        for (int q = 0; q < ns; q++) {
            a2s[q] = nr * 100 + q;
            a2r[q] = -1;
            rsin[q] = gen_mat(nr, q);
        }
        int one = nr + 1;
        EPT_OK(MPI_Iallreduce(m, prod, 2, mat_type, mat_mpi_op, nc, &rq[n++]));
        EPT_OK(MPI_Iscan(&m[0], &pre, 1, mat_type, mat_mpi_op, nc, &rq[n++]));
        EPT_OK(MPI_Iscan(&one, &sum, 1, MPI_INT, MPI_SUM, nc, &rq[n++]));
        EPT_OK(MPI_Iexscan(&m[1], &ex, 1, mat_type, mat_mpi_op, nc, &rq[n++]));
        EPT_OK(MPI_Iallgather(mine, 2, MPI_INT, ag, 2, MPI_INT, nc, &rq[n++]));
        EPT_OK(MPI_Ireduce(m, nr == root ? red : NULL, 2, mat_type, mat_mpi_op, root, nc, &rq[n++]));
        EPT_OK(MPI_Ireduce_scatter_block(rsin, &rs, 1, mat_type, mat_mpi_op, nc, &rq[n++]));
        EPT_OK(MPI_Ialltoall(a2s, 1, MPI_INT, a2r, 1, MPI_INT, nc, &rq[n++]));
        EPT_OK(MPI_Waitall(n, rq, statuses_ignore()));
        snprintf(label, sizeof label, "non-commutative Iallreduce on the %s split (new rank)", what);
        for (int i = 0; i < 2; i++)
            check_mat(prod[i], mat_range(0, ns, i), mat_range_rev(0, ns, i), label, nr, i);
        snprintf(label, sizeof label, "non-commutative Iscan on the %s split (new rank)", what);
        check_mat(pre, mat_range(0, nr + 1, 0), mat_range_rev(0, nr + 1, 0), label, nr, 0);
        EPT_CHECK(sum == (nr + 1) * (nr + 2) / 2, "%s: Iscan SUM at new rank %d is %d", what, nr, sum);
        snprintf(label, sizeof label, "non-commutative Iexscan on the %s split (new rank)", what);
        if (nr > 0)
            check_mat(ex, mat_range(0, nr, 1), mat_range_rev(0, nr, 1), label, nr, 1);
        for (int q = 0; q < ns; q++)
            EPT_CHECK(ag[2 * q] == q && ag[2 * q + 1] == old_of[q],
                      "%s: Iallgather slot %d holds new rank %d / old rank %d, expected old rank %d", what, q,
                      ag[2 * q], ag[2 * q + 1], old_of[q]);
        EPT_CHECK(ag[2 * ns] == -3, "%s: Iallgather wrote past the receive buffer", what);
        if (nr == root)
            for (int i = 0; i < 2; i++)
                check_mat(red[i], mat_range(0, ns, i), mat_range_rev(0, ns, i), "Ireduce on a split communicator", nr,
                          i);
        check_mat(rs, mat_range(0, ns, nr), mat_range_rev(0, ns, nr), "Ireduce_scatter_block on a split communicator",
                  nr, 0);
        for (int q = 0; q < ns; q++)
            EPT_CHECK(a2r[q] == q * 100 + nr, "%s: Ialltoall from %d is %d", what, q, a2r[q]);
        EPT_OK(MPI_Comm_free(&nc));
    }
    free(old_of);
    free(ag);
    free(a2s);
    free(a2r);
    free(rsin);
}

static void tests(MPI_Comm c, int r, int s) { t_split(c, r, s); }

int main(int argc, char **argv) { return coll_nb_main(argc, argv, tests); }
