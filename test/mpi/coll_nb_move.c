/* Non-blocking collectives that move data (coll_nb.h), each completed in
 * turn with MPI_Wait, an MPI_Test loop, MPI_Request_get_status then
 * MPI_Wait, MPI_Waitall, MPI_Waitany or MPI_Testsome:
 *  - MPI_Ibarrier: a counter shared by all processes is complete whenever a
 *    barrier request is;
 *  - Ibcast, Igather, Igatherv, Iscatter, Iscatterv: every root,
 *    MPI_IN_PLACE at the root, arguments significant only at the root passed
 *    as NULL elsewhere, zero counts and gaps in the v forms; Ibcast of a
 *    strided vector, received as the vector or as plain ints;
 *  - Iallgather (a resized strided type), Iallgatherv, Ialltoall,
 *    Ialltoallv, Ialltoallw (MPI_IN_PLACE, zero counts, a datatype per pair,
 *    a vector against plain ints). */
#include "coll_nb.h"

/* ---- MPI_Ibarrier ------------------------------------------------------- */

static void t_barrier(MPI_Comm c, int r, int s)
{
    PHASE("MPI_Ibarrier");
    for (long k = 0; k < 8; k++) {
        MPI_Request rq;
        if (k == 1 && r == s - 1)
            usleep(20000); /* the others have to wait for the last rank */
        atomic_fetch_add(&shared[0], 1);
        EPT_OK(MPI_Ibarrier(c, &rq));
        if (k % 2) {
            complete(&rq, r, "MPI_Ibarrier");
        } else {
            int flag = 0;
            for (;;) {
                EPT_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
                if (flag)
                    break;
                sched_yield();
            }
        }
        long v = atomic_load(&shared[0]);
        EPT_CHECK(v >= s * (k + 1) && v <= s * (k + 2),
                  "Ibarrier %ld complete with the counter at %ld, expected %ld to %ld (it completed before every "
                  "rank had called it)",
                  k, v, s * (k + 1), s * (k + 2));
    }
}

/* ---- MPI_Ibcast --------------------------------------------------------- */

static void t_bcast(MPI_Comm c, int r, int s)
{
    int buf[3 * NV + 8];
    MPI_Request rq;
    for (int root = 0; root < s; root++) {
        PHASE("MPI_Ibcast");
        for (int i = 0; i < 6; i++)
            buf[i] = r == root && i < 5 ? bval(root, 5, i) : -2;
        EPT_OK(MPI_Ibcast(buf, 5, MPI_INT, root, c, &rq));
        complete(&rq, r, "MPI_Ibcast");
        for (int i = 0; i < 5; i++)
            EPT_CHECK(buf[i] == bval(root, 5, i), "Ibcast of 5 ints from %d: element %d is %d, expected %d", root, i,
                      buf[i], bval(root, 5, i));
        EPT_CHECK(buf[5] == -2, "Ibcast of 5 ints from %d wrote past them", root);

        buf[0] = 4242;
        EPT_OK(MPI_Ibcast(buf, 0, MPI_INT, root, c, &rq));
        complete(&rq, r, "MPI_Ibcast of 0 ints");
        EPT_CHECK(buf[0] == 4242, "Ibcast of 0 ints from %d wrote %d", root, buf[0]);

        /* The strided vector at the root and the odd ranks, 2 NV plain ints elsewhere. */
        PHASE("MPI_Ibcast of a strided vector");
        int as_vec = r == root || r % 2 == 1;
        for (int i = 0; i < 3 * NV + 1; i++)
            buf[i] = -7;
        if (r == root)
            for (int j = 0; j < NV; j++) {
                buf[3 * j] = bval(root, 1, 2 * j);
                buf[3 * j + 1] = bval(root, 1, 2 * j + 1);
            }
        EPT_OK(MPI_Ibcast(buf, as_vec ? 1 : 2 * NV, as_vec ? vec : MPI_INT, root, c, &rq));
        complete(&rq, r, "MPI_Ibcast of a vector");
        for (int j = 0; j < 2 * NV; j++) {
            int at = as_vec ? 3 * (j / 2) + j % 2 : j;
            EPT_CHECK(buf[at] == bval(root, 1, j),
                      "vector Ibcast from %d (received as %s): element %d is %d, expected %d", root,
                      as_vec ? "the vector" : "ints", j, buf[at], bval(root, 1, j));
        }
        if (as_vec)
            for (int j = 0; j < NV; j++)
                EPT_CHECK(buf[3 * j + 2] == -7, "vector Ibcast from %d wrote into the gap after block %d", root, j);
        else
            EPT_CHECK(buf[2 * NV] == -7, "vector Ibcast received as ints wrote past %d ints", 2 * NV);
    }
}

/* ---- rooted data movement ---------------------------------------------- */

static void t_rooted(MPI_Comm c, int r, int s)
{
    int *big = malloc(sizeof(int) * (size_t)(4 * s + 8));
    int *cnt = malloc(sizeof(int) * (size_t)s), *dsp = malloc(sizeof(int) * (size_t)s);
    MPI_Request rq;
    EPT_CHECK(big && cnt && dsp, "out of memory");
    for (int root = 0; root < s; root++) {
        int at_root = r == root;

        PHASE("MPI_Igather");
        {
            int mine[2] = {r * 10 + 1, -r}, inplace = at_root && root % 2;
            for (int i = 0; i < 2 * s + 1; i++)
                big[i] = -99;
            if (inplace) {
                big[2 * r] = mine[0];
                big[2 * r + 1] = mine[1];
            }
            /* Send arguments are ignored at an in-place root, receive
             * arguments everywhere but at the root. */
            EPT_OK(MPI_Igather(inplace ? MPI_IN_PLACE : mine, inplace ? 0 : 2, inplace ? MPI_DATATYPE_NULL : MPI_INT,
                               at_root ? big : NULL, at_root ? 2 : 0, at_root ? MPI_INT : MPI_DATATYPE_NULL, root, c,
                               &rq));
            complete(&rq, r, "MPI_Igather");
            if (at_root) {
                for (int q = 0; q < s; q++)
                    EPT_CHECK(big[2 * q] == q * 10 + 1 && big[2 * q + 1] == -q,
                              "Igather%s to %d: block of rank %d is %d %d", inplace ? " in place" : "", root, q,
                              big[2 * q], big[2 * q + 1]);
                EPT_CHECK(big[2 * s] == -99, "Igather to %d wrote past the receive buffer", root);
            }
        }

        PHASE("MPI_Igatherv");
        {
            int off = 0, vals[3], inplace = at_root && root % 2 == 0;
            for (int q = 0; q < s; q++) {
                cnt[q] = q % 3; /* rank 0, 3, ... send nothing */
                dsp[q] = off;
                off += cnt[q] + 1; /* a gap after each block */
            }
            for (int i = 0; i < cnt[r]; i++)
                vals[i] = r * 100 + i;
            for (int i = 0; i < off; i++)
                big[i] = -99;
            if (inplace)
                memcpy(big + dsp[r], vals, sizeof(int) * (size_t)cnt[r]);
            EPT_OK(MPI_Igatherv(inplace ? MPI_IN_PLACE : vals, inplace ? 0 : cnt[r],
                                inplace ? MPI_DATATYPE_NULL : MPI_INT, at_root ? big : NULL, at_root ? cnt : NULL,
                                at_root ? dsp : NULL, MPI_INT, root, c, &rq));
            complete(&rq, r, "MPI_Igatherv");
            if (at_root)
                for (int q = 0; q < s; q++) {
                    for (int i = 0; i < cnt[q]; i++)
                        EPT_CHECK(big[dsp[q] + i] == q * 100 + i, "Igatherv%s to %d: rank %d item %d is %d",
                                  inplace ? " in place" : "", root, q, i, big[dsp[q] + i]);
                    EPT_CHECK(big[dsp[q] + cnt[q]] == -99, "Igatherv to %d wrote into the gap after rank %d", root, q);
                }
        }

        PHASE("MPI_Iscatter");
        {
            int got[3] = {-1, -1, -5}, inplace = at_root && root % 2;
            if (at_root)
                for (int q = 0; q < s; q++) {
                    big[2 * q] = root * 1000 + q;
                    big[2 * q + 1] = -q;
                }
            EPT_OK(MPI_Iscatter(at_root ? big : NULL, at_root ? 2 : 0, at_root ? MPI_INT : MPI_DATATYPE_NULL,
                                inplace ? MPI_IN_PLACE : got, inplace ? 0 : 2, inplace ? MPI_DATATYPE_NULL : MPI_INT,
                                root, c, &rq));
            complete(&rq, r, "MPI_Iscatter");
            if (inplace) {
                for (int q = 0; q < s; q++)
                    EPT_CHECK(big[2 * q] == root * 1000 + q && big[2 * q + 1] == -q,
                              "in-place Iscatter changed the root's send buffer at rank %d's block", q);
                got[0] = big[2 * r];
                got[1] = big[2 * r + 1];
            }
            EPT_CHECK(got[0] == root * 1000 + r && got[1] == -r && got[2] == -5, "Iscatter%s from %d: got %d %d %d",
                      inplace ? " in place" : "", root, got[0], got[1], got[2]);
        }

        PHASE("MPI_Iscatterv");
        {
            int off = 0, got[4] = {-1, -1, -1, -1}, inplace = at_root && root % 2 == 0;
            for (int q = 0; q < s; q++) {
                cnt[q] = (q + 1) % 3; /* ranks 2, 5, ... get nothing */
                dsp[q] = off;
                off += cnt[q] + 2;
            }
            if (at_root)
                for (int i = 0; i < off; i++)
                    big[i] = -55;
            if (at_root)
                for (int q = 0; q < s; q++)
                    for (int i = 0; i < cnt[q]; i++)
                        big[dsp[q] + i] = root * 1000 + q * 10 + i;
            EPT_OK(MPI_Iscatterv(at_root ? big : NULL, at_root ? cnt : NULL, at_root ? dsp : NULL,
                                 at_root ? MPI_INT : MPI_DATATYPE_NULL, inplace ? MPI_IN_PLACE : got,
                                 inplace ? 0 : cnt[r], inplace ? MPI_DATATYPE_NULL : MPI_INT, root, c, &rq));
            complete(&rq, r, "MPI_Iscatterv");
            if (inplace)
                memcpy(got, big + dsp[r], sizeof(int) * (size_t)cnt[r]);
            for (int i = 0; i < cnt[r]; i++)
                EPT_CHECK(got[i] == root * 1000 + r * 10 + i, "Iscatterv%s from %d: item %d is %d",
                          inplace ? " in place" : "", root, i, got[i]);
            EPT_CHECK(got[cnt[r]] == -1, "Iscatterv from %d wrote past %d items", root, cnt[r]);
        }
    }
    free(big);
    free(cnt);
    free(dsp);
}

/* ---- all-to-all data movement ------------------------------------------- */

static void t_allgather(MPI_Comm c, int r, int s)
{
    int *rb = malloc(sizeof(int) * (size_t)(6 * s + 2));
    int *rc = malloc(sizeof(int) * (size_t)s), *rd = malloc(sizeof(int) * (size_t)s);
    int sb[3] = {r * 10, r * 10 + 1, r * 10 + 2};
    MPI_Request rq;
    EPT_CHECK(rb && rc && rd, "out of memory");

    PHASE("MPI_Iallgather");
    for (int inplace = 0; inplace < 2; inplace++) {
        for (int i = 0; i <= 3 * s; i++)
            rb[i] = -5;
        if (inplace)
            memcpy(&rb[3 * r], sb, sizeof sb);
        EPT_OK(MPI_Iallgather(inplace ? MPI_IN_PLACE : sb, inplace ? 0 : 3, inplace ? MPI_DATATYPE_NULL : MPI_INT, rb,
                              3, MPI_INT, c, &rq));
        complete(&rq, r, "MPI_Iallgather");
        for (int q = 0; q < s; q++)
            for (int j = 0; j < 3; j++)
                EPT_CHECK(rb[3 * q + j] == q * 10 + j, "Iallgather%s: item %d of rank %d is %d",
                          inplace ? " in place" : "", j, q, rb[3 * q + j]);
        EPT_CHECK(rb[3 * s] == -5, "Iallgather wrote past the receive buffer");
    }
    /* Received through a resized strided type: every other int. */
    for (int i = 0; i <= 6 * s; i++)
        rb[i] = -5;
    EPT_OK(MPI_Iallgather(sb, 3, MPI_INT, rb, 1, every_other, c, &rq));
    complete(&rq, r, "MPI_Iallgather into a strided type");
    for (int q = 0; q < s; q++)
        for (int j = 0; j < 3; j++) {
            EPT_CHECK(rb[6 * q + 2 * j] == q * 10 + j, "strided Iallgather: item %d of rank %d is %d", j, q,
                      rb[6 * q + 2 * j]);
            EPT_CHECK(rb[6 * q + 2 * j + 1] == -5, "strided Iallgather wrote into a gap (rank %d, item %d)", q, j);
        }
    /* Zero counts. */
    rb[0] = 1234;
    EPT_OK(MPI_Iallgather(sb, 0, MPI_INT, rb, 0, MPI_INT, c, &rq));
    complete(&rq, r, "MPI_Iallgather of 0 ints");
    EPT_CHECK(rb[0] == 1234, "Iallgather of 0 ints wrote %d", rb[0]);

    PHASE("MPI_Iallgatherv");
    for (int inplace = 0; inplace < 2; inplace++) {
        int off = 0;
        for (int q = 0; q < s; q++) {
            rc[q] = (q + inplace) % 3; /* zero for some ranks */
            rd[q] = off;
            off += rc[q] + 1;
        }
        for (int i = 0; i < off; i++)
            rb[i] = -99;
        if (inplace)
            memcpy(rb + rd[r], sb, sizeof(int) * (size_t)rc[r]);
        EPT_OK(MPI_Iallgatherv(inplace ? MPI_IN_PLACE : sb, inplace ? 0 : rc[r], inplace ? MPI_DATATYPE_NULL : MPI_INT,
                               rb, rc, rd, MPI_INT, c, &rq));
        complete(&rq, r, "MPI_Iallgatherv");
        for (int q = 0; q < s; q++) {
            for (int i = 0; i < rc[q]; i++)
                EPT_CHECK(rb[rd[q] + i] == q * 10 + i, "Iallgatherv%s: rank %d item %d is %d",
                          inplace ? " in place" : "", q, i, rb[rd[q] + i]);
            EPT_CHECK(rb[rd[q] + rc[q]] == -99, "Iallgatherv wrote into the gap after rank %d", q);
        }
    }
    free(rb);
    free(rc);
    free(rd);
}

static void t_alltoall(MPI_Comm c, int r, int s)
{
    int *sc = malloc(sizeof(int) * (size_t)s), *sd = malloc(sizeof(int) * (size_t)s);
    int *rc = malloc(sizeof(int) * (size_t)s), *rd = malloc(sizeof(int) * (size_t)s);
    int *sbuf = malloc(sizeof(int) * (size_t)(4 * s + 4)), *rbuf = malloc(sizeof(int) * (size_t)(4 * s + 4));
    MPI_Request rq;
    EPT_CHECK(sc && sd && rc && rd && sbuf && rbuf, "out of memory");

    PHASE("MPI_Ialltoall");
    for (int d = 0; d < s; d++) {
        sbuf[2 * d] = r * 100 + d;
        sbuf[2 * d + 1] = -(r * 100 + d);
    }
    for (int i = 0; i <= 2 * s; i++)
        rbuf[i] = -99;
    EPT_OK(MPI_Ialltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, c, &rq));
    complete(&rq, r, "MPI_Ialltoall");
    for (int q = 0; q < s; q++)
        EPT_CHECK(rbuf[2 * q] == q * 100 + r && rbuf[2 * q + 1] == -(q * 100 + r), "Ialltoall from %d: %d %d", q,
                  rbuf[2 * q], rbuf[2 * q + 1]);
    EPT_CHECK(rbuf[2 * s] == -99, "Ialltoall wrote past the receive buffer");
    memcpy(rbuf, sbuf, sizeof(int) * 2 * (size_t)s);
    EPT_OK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, 2, MPI_INT, c, &rq));
    complete(&rq, r, "MPI_Ialltoall in place");
    for (int q = 0; q < s; q++)
        EPT_CHECK(rbuf[2 * q] == q * 100 + r && rbuf[2 * q + 1] == -(q * 100 + r), "in-place Ialltoall from %d: %d %d",
                  q, rbuf[2 * q], rbuf[2 * q + 1]);
    rbuf[0] = 777;
    EPT_OK(MPI_Ialltoall(sbuf, 0, MPI_INT, rbuf, 0, MPI_INT, c, &rq));
    complete(&rq, r, "MPI_Ialltoall of 0 ints");
    EPT_CHECK(rbuf[0] == 777, "Ialltoall of 0 ints wrote %d", rbuf[0]);

    PHASE("MPI_Ialltoallv");
    /* r sends (r + 2 d) % 3 items to d: zero for some pairs, not symmetric. */
    for (int d = 0, o = 0; d < s; d++) {
        sc[d] = (r + 2 * d) % 3;
        sd[d] = o;
        for (int i = 0; i < sc[d]; i++)
            sbuf[o + i] = r * 1000 + d * 10 + i;
        o += sc[d] + 1;
    }
    int roff = 0;
    for (int q = 0; q < s; q++) {
        rc[q] = (q + 2 * r) % 3;
        rd[q] = roff;
        roff += rc[q] + 1;
    }
    for (int i = 0; i < roff; i++)
        rbuf[i] = -99;
    EPT_OK(MPI_Ialltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c, &rq));
    complete(&rq, r, "MPI_Ialltoallv");
    for (int q = 0; q < s; q++) {
        for (int i = 0; i < rc[q]; i++)
            EPT_CHECK(rbuf[rd[q] + i] == q * 1000 + r * 10 + i, "Ialltoallv from %d item %d: %d", q, i,
                      rbuf[rd[q] + i]);
        EPT_CHECK(rbuf[rd[q] + rc[q]] == -99, "Ialltoallv wrote into the gap after rank %d", q);
    }
    /* In place the counts must be symmetric: (q + r) % 3 either way. */
    roff = 0;
    for (int q = 0; q < s; q++) {
        rc[q] = (q + r) % 3;
        rd[q] = roff;
        for (int i = 0; i < rc[q]; i++)
            rbuf[roff + i] = r * 1000 + q * 10 + i;
        rbuf[roff + rc[q]] = -99;
        roff += rc[q] + 1;
    }
    EPT_OK(MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rbuf, rc, rd, MPI_INT, c, &rq));
    complete(&rq, r, "MPI_Ialltoallv in place");
    for (int q = 0; q < s; q++) {
        for (int i = 0; i < rc[q]; i++)
            EPT_CHECK(rbuf[rd[q] + i] == q * 1000 + r * 10 + i, "in-place Ialltoallv from %d item %d: %d", q, i,
                      rbuf[rd[q] + i]);
        EPT_CHECK(rbuf[rd[q] + rc[q]] == -99, "in-place Ialltoallv wrote into the gap after rank %d", q);
    }

    PHASE("MPI_Ialltoallw");
    {
        /* Pair (a, b) by (a + b) % 4: an int, a double, two ints (a strided
         * vector at the sender, plain ints at the receiver), nothing.  Each
         * pair has a 32-byte slot at both ends. */
        MPI_Datatype *st = malloc(sizeof *st * (size_t)s), *rt = malloc(sizeof *rt * (size_t)s);
        char *sb = malloc(32 * (size_t)s), *rb = malloc(32 * (size_t)s + 32);
        EPT_CHECK(st && rt && sb && rb, "out of memory");
        for (int pass = 0; pass < 2; pass++) { /* pass 1: MPI_IN_PLACE */
            memset(rb, 0x5a, 32 * (size_t)s + 32);
            memset(sb, 0x33, 32 * (size_t)s);
            for (int d = 0; d < s; d++) {
                int k = (r + d) % 4, v = r * 100 + d;
                char *slot = (pass ? rb : sb) + 32 * d;
                sd[d] = rd[d] = 32 * d;
                sc[d] = rc[d] = k == 3 ? 0 : 1;
                st[d] = rt[d] = k == 0 ? MPI_INT : k == 1 ? MPI_DOUBLE : k == 2 ? vec2 : MPI_INT;
                if (k == 2 && !pass) { /* plain ints at the receiver */
                    rt[d] = MPI_INT;
                    rc[d] = 2;
                }
                if (k == 0)
                    memcpy(slot, &v, sizeof v);
                else if (k == 1) {
                    double x = v + 0.5;
                    memcpy(slot, &x, sizeof x);
                } else if (k == 2) {
                    int w = -v;
                    memcpy(slot, &v, sizeof v);
                    memcpy(slot + 2 * sizeof(int), &w, sizeof w);
                }
            }
            if (pass)
                EPT_OK(MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rb, rc, rd, rt, c, &rq));
            else
                EPT_OK(MPI_Ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, c, &rq));
            complete(&rq, r, "MPI_Ialltoallw");
            for (int q = 0; q < s; q++) {
                int k = (q + r) % 4, v = q * 100 + r, x0, x1, x2;
                double dv;
                const char *slot = rb + 32 * q;
                const char *how = pass ? "in-place Ialltoallw" : "Ialltoallw";
                memcpy(&x0, slot, sizeof x0);
                memcpy(&x1, slot + sizeof(int), sizeof x1);
                memcpy(&x2, slot + 2 * sizeof(int), sizeof x2);
                if (k == 0) {
                    EPT_CHECK(x0 == v && x1 == 0x5a5a5a5a, "%s: int from %d is %d", how, q, x0);
                } else if (k == 1) {
                    memcpy(&dv, slot, sizeof dv);
                    EPT_CHECK(dv == v + 0.5 && x2 == 0x5a5a5a5a, "%s: double from %d is %g", how, q, dv);
                } else if (k == 2 && !pass) {
                    EPT_CHECK(x0 == v && x1 == -v && x2 == 0x5a5a5a5a, "%s: vector from %d as ints: %d %d %d", how, q,
                              x0, x1, x2);
                } else if (k == 2) {
                    EPT_CHECK(x0 == v && x1 == 0x5a5a5a5a && x2 == -v, "%s: vector from %d: %d %d %d", how, q, x0, x1,
                              x2);
                } else if (!pass) {
                    EPT_CHECK(x0 == 0x5a5a5a5a, "%s: a zero-count pair (from %d) wrote %d", how, q, x0);
                }
            }
            EPT_CHECK(rb[32 * s] == 0x5a, "Ialltoallw wrote past the receive buffer");
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

static void tests(MPI_Comm c, int r, int s)
{
    t_barrier(c, r, s);
    t_bcast(c, r, s);
    t_rooted(c, r, s);
    t_allgather(c, r, s);
    t_alltoall(c, r, s);
}

int main(int argc, char **argv) { return coll_nb_main(argc, argv, tests); }
