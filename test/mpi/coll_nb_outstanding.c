/* Several non-blocking collectives outstanding at once (coll_nb.h): ten
 * requests (eight collectives, among them two Iallreduce, plus an Isend /
 * Irecv pair), completed in an order other than the one they started in:
 * Wait on the last first, Waitall over the reversed array, Testany and
 * Waitsome loops, each rank starting from a different request, Testall;
 * once with a blocking MPI_Allreduce issued while they are all pending. */
#include "coll_nb.h"

/* ---- several outstanding at once, completed out of order ---------------- */

#define NOUT 10

static void t_outstanding(MPI_Comm c, int r, int s)
{
    int left = (r + s - 1) % s, right = (r + 1) % s;
    int *a2s = malloc(sizeof(int) * (size_t)s), *a2r = malloc(sizeof(int) * (size_t)s);
    int *gat = malloc(sizeof(int) * 2 * (size_t)s);
    EPT_CHECK(a2s && a2r && gat, "out of memory");
    for (int round = 0; round < 6; round++) {
        PHASE("several outstanding collectives");
        MPI_Request rq[NOUT], rev[NOUT];
        MPI_Status sts[NOUT];
        int n = 0, broot = s - 1 - round % s, groot = (round + 1) % s;
        int ar[4], ar_out[4] = {-1, -1, -1, -1}, mx = r * 3 + round, bc[8], p_in = -1, p_out = r * 7 + round;
        int gin[2] = {r, round};
        ept_mat_t mi[2] = {gen_mat(r, round), gen_mat(r, round + 1)}, mo[2], si = gen_mat(r, round), so;
        for (int i = 0; i < 4; i++)
            ar[i] = r + i * round;
        for (int i = 0; i < 8; i++)
            bc[i] = r == broot ? broot * 100 + i + round : -1;
        for (int d = 0; d < s; d++) {
            a2s[d] = r * 1000 + d * 10 + round;
            a2r[d] = -1;
        }
        for (int i = 0; i < 2 * s; i++)
            gat[i] = -1;
        EPT_OK(MPI_Iallreduce(ar, ar_out, 4, MPI_INT, MPI_SUM, c, &rq[n++]));
        EPT_OK(MPI_Irecv(&p_in, 1, MPI_INT, left, 100 + round, c, &rq[n++]));
        EPT_OK(MPI_Ibcast(bc, 8, MPI_INT, broot, c, &rq[n++]));
        EPT_OK(MPI_Iallreduce(mi, mo, 2, mat_type, mat_mpi_op, c, &rq[n++]));
        EPT_OK(MPI_Isend(&p_out, 1, MPI_INT, right, 100 + round, c, &rq[n++]));
        EPT_OK(MPI_Ialltoall(a2s, 1, MPI_INT, a2r, 1, MPI_INT, c, &rq[n++]));
        EPT_OK(MPI_Iscan(&si, &so, 1, mat_type, mat_mpi_op, c, &rq[n++]));
        EPT_OK(MPI_Igather(gin, 2, MPI_INT, r == groot ? gat : NULL, 2, MPI_INT, groot, c, &rq[n++]));
        EPT_OK(MPI_Ibarrier(c, &rq[n++]));
        EPT_OK(MPI_Iallreduce(MPI_IN_PLACE, &mx, 1, MPI_INT, MPI_MAX, c, &rq[n++]));
        EPT_CHECK(n == NOUT, "test setup: %d requests", n);
        if (round == 2) {
            /* A blocking collective on the same communicator while they are all pending. */
            int x = r, y = -1;
            PHASE("blocking MPI_Allreduce with non-blocking collectives pending");
            EPT_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c));
            EPT_CHECK(y == s * (s - 1) / 2, "blocking Allreduce among pending ones: %d", y);
        }
        PHASE("several outstanding collectives: completing");
        switch (round) {
        case 0: /* the last one first, then backwards */
            for (int i = n - 1; i >= 0; i--)
                EPT_OK(MPI_Wait(&rq[i], &sts[i]));
            break;
        case 1: /* Waitall over the reversed array */
            for (int i = 0; i < n; i++)
                rev[i] = rq[n - 1 - i];
            EPT_OK(MPI_Waitall(n, rev, sts));
            for (int i = 0; i < n; i++) {
                EPT_CHECK(rev[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);
                rq[n - 1 - i] = MPI_REQUEST_NULL;
            }
            break;
        case 2: /* Testany until none is left */
        case 5:
            for (int left_n = n;;) {
                int idx = -7, flag = 0;
                EPT_OK(MPI_Testany(n, rq, &idx, &flag, &sts[0]));
                if (flag && idx == MPI_UNDEFINED)
                    break;
                if (flag) {
                    EPT_CHECK(idx >= 0 && idx < n && rq[idx] == MPI_REQUEST_NULL, "Testany index %d", idx);
                    left_n--;
                } else {
                    EPT_CHECK(idx == MPI_UNDEFINED, "Testany without completion set index %d", idx);
                    sched_yield();
                }
                EPT_CHECK(left_n >= 0, "Testany completed more requests than there were");
            }
            break;
        case 3: /* Waitsome until none is left */
            for (int total = 0;;) {
                int outc = -1, ind[NOUT];
                EPT_OK(MPI_Waitsome(n, rq, &outc, ind, sts));
                if (outc == MPI_UNDEFINED)
                    break;
                EPT_CHECK(outc >= 1 && outc <= n, "Waitsome outcount %d", outc);
                for (int k = 0; k < outc; k++)
                    EPT_CHECK(rq[ind[k]] == MPI_REQUEST_NULL, "Waitsome index %d still active", ind[k]);
                total += outc;
                EPT_CHECK(total <= n, "Waitsome completed %d of %d requests", total, n);
            }
            break;
        case 4: /* each rank from a different one */
            for (int k = 0; k < n; k++) {
                int i = (r + k * 3) % n;
                if (rq[i] != MPI_REQUEST_NULL)
                    EPT_OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
            }
            for (int i = 0; i < n; i++)
                if (rq[i] != MPI_REQUEST_NULL)
                    EPT_OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
            break;
        }
        if (round == 5) {
            /* round 5 went through Testany; a Testall over the null array still answers. */
            int flag = 0;
            EPT_OK(MPI_Testall(n, rq, &flag, statuses_ignore()));
            EPT_CHECK(flag, "Testall over completed requests");
        }
        for (int i = 0; i < n; i++)
            EPT_CHECK(rq[i] == MPI_REQUEST_NULL, "round %d: request %d was not freed", round, i);
        /* The results. */
        for (int i = 0; i < 4; i++) {
            int w = s * (s - 1) / 2 + s * i * round;
            EPT_CHECK(ar_out[i] == w, "round %d: Iallreduce item %d is %d, expected %d", round, i, ar_out[i], w);
        }
        EPT_CHECK(p_in == left * 7 + round, "round %d: Irecv got %d from %d", round, p_in, left);
        for (int i = 0; i < 8; i++)
            EPT_CHECK(bc[i] == broot * 100 + i + round, "round %d: Ibcast from %d item %d is %d", round, broot, i,
                      bc[i]);
        for (int i = 0; i < 2; i++)
            check_mat(mo[i], mat_range(0, s, round + i), mat_range_rev(0, s, round + i),
                      "non-commutative Iallreduce among pending ones", r, i);
        for (int q = 0; q < s; q++)
            EPT_CHECK(a2r[q] == q * 1000 + r * 10 + round, "round %d: Ialltoall from %d is %d", round, q, a2r[q]);
        check_mat(so, mat_range(0, r + 1, round), mat_range_rev(0, r + 1, round),
                  "non-commutative Iscan among pending ones", r, 0);
        if (r == groot)
            for (int q = 0; q < s; q++)
                EPT_CHECK(gat[2 * q] == q && gat[2 * q + 1] == round, "round %d: Igather to %d: block of %d is %d %d",
                          round, groot, q, gat[2 * q], gat[2 * q + 1]);
        EPT_CHECK(mx == (s - 1) * 3 + round, "round %d: in-place Iallreduce MAX is %d", round, mx);
    }
    free(a2s);
    free(a2r);
    free(gat);
}

static void tests(MPI_Comm c, int r, int s) { t_outstanding(c, r, s); }

int main(int argc, char **argv) { return coll_nb_main(argc, argv, tests); }
