/* The non-blocking collectives on endpoint communicators: MPI_COMM_WORLD in
 * world mode (PxT), or the handles of MPI_Comm_create_endpoints(MPI_COMM_WORLD,
 * n) in explicit shapes (P:a,b,...: n per process, possibly 0).  Every result
 * is checked against values computed here, rank by rank.
 *  - each of the seventeen: MPI_Ibarrier (a counter shared by all processes
 *    is complete whenever a barrier request is), Ibcast, Igather, Igatherv,
 *    Iscatter, Iscatterv (every root; MPI_IN_PLACE at the root; arguments
 *    significant only at the root passed as NULL elsewhere; zero counts and
 *    gaps in the v forms), Iallgather, Iallgatherv, Ialltoall, Ialltoallv,
 *    Ialltoallw (MPI_IN_PLACE, zero counts, a datatype per pair), Ireduce
 *    (every root), Iallreduce, Ireduce_scatter, Ireduce_scatter_block, Iscan,
 *    Iexscan (MPI_IN_PLACE, zero counts, MPI_DOUBLE_INT with MAXLOC and
 *    MINLOC, a non-commutative user op: 2x2 matrix products, which must
 *    combine in rank order).  Derived datatypes: a strided vector (Ibcast,
 *    received as the vector or as plain ints), a resized strided type
 *    (Iallgather), a vector against plain ints (Ialltoallw).  Each request is
 *    completed in turn with MPI_Wait, a MPI_Test loop, MPI_Request_get_status
 *    then MPI_Wait, MPI_Waitall, MPI_Waitany or MPI_Testsome;
 *  - ten requests outstanding at once (eight collectives, among them two
 *    Iallreduce, plus an Isend / Irecv pair), completed in an order other
 *    than the one they started in: Wait on the last first, Waitall over the
 *    reversed array, Testany and Waitsome loops, each rank starting from a
 *    different request, Testall; once with a blocking MPI_Allreduce issued
 *    while they are all pending;
 *  - progress: rank A does Ibarrier then Wait while every other rank does
 *    Ibarrier, a blocking MPI_Recv of what A sends only after its Wait, then
 *    Wait; an Ibcast (64 KiB and 8 MiB) whose root waits and then tells the
 *    others, which only then wait;
 *  - buffers are their owner's again once the request completes: in an 8 MiB
 *    Ibcast the root (and the rank that receives for the others of its
 *    process) overwrites its buffer at once, while another rank completes
 *    the call for everyone in its process;
 *  - an 8 MiB Iallreduce (MPI_SUM on doubles);
 *  - communicators from MPI_Comm_split with reversed keys and with keys
 *    that interleave the processes: Iallreduce with the non-commutative op,
 *    Iscan, Iexscan, Iallgather, Ireduce, Ireduce_scatter_block, Ialltoall,
 *    all pending at once;
 *  - MPI_Request_get_status and MPI_Test polling: never complete before the
 *    last rank has called (it arrives late on purpose), the result is in
 *    place as soon as get_status reports completion, and the request stays
 *    valid until MPI_Wait frees it;
 *  - errors, on a duplicate with MPI_ERRORS_RETURN: each of the seventeen
 *    with a NULL request pointer gives MPI_ERR_REQUEST naming the call; then
 *    MPI_Cancel and MPI_Request_free of a collective request (erroneous in
 *    MPI) give MPI_ERR_REQUEST naming the call; the duplicate still works
 *    afterwards;
 *  - derived datatypes freed right after the Ibcast / Igather / Irecv that
 *    uses them, and a user operation right after its Iallreduce, while
 *    other ranks have not called yet (MPI: "any communication that is
 *    currently using this datatype will complete normally").
 * Built again with -DEPT_COLL_GATHERED (coll_nonblocking_gathered): every
 * reduction and scan then takes the gathered path.
 * The whole program runs in well under a second per shape. */
#include "eptest.h"

#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>

static _Atomic long *shared; /* ept_shared_page() */

/* ---- the non-commutative operation: ept_mat_t products (eptest.h) ------- */

static ept_mat_t gen_mat(int q, int i) { return (ept_mat_t){{q + 2 + i, 1 + i % 2, 1, (q * 3 + i) % 5}}; }

/* M(from, i) * ... * M(upto - 1, i); the identity when empty. */
static ept_mat_t mat_range(int from, int upto, int i)
{
    ept_mat_t p = {{1, 0, 0, 1}};
    for (int q = from; q < upto; q++)
        p = ept_mat_mul(p, gen_mat(q, i));
    return p;
}

/* The product in reverse rank order, to name that mistake when it happens. */
static ept_mat_t mat_range_rev(int from, int upto, int i)
{
    ept_mat_t p = {{1, 0, 0, 1}};
    for (int q = upto - 1; q >= from; q--)
        p = ept_mat_mul(p, gen_mat(q, i));
    return p;
}

static void check_mat(ept_mat_t got, ept_mat_t want, ept_mat_t rev, const char *what, int r, int i)
{
    EPT_CHECK(!memcmp(&got, &want, sizeof got),
              "%s at rank %d element %d: got [%lld %lld; %lld %lld], want the rank-order product "
              "[%lld %lld; %lld %lld]%s",
              what, r, i, got.m[0], got.m[1], got.m[2], got.m[3], want.m[0], want.m[1], want.m[2], want.m[3],
              !memcmp(&got, &rev, sizeof got) ? " (got the reverse-order product)" : "");
}

static MPI_Datatype mat_type, vec, every_other, vec2;
static MPI_Op mat_mpi_op;
#define NV 100 /* blocks of vec: NV x 2 ints, stride 3 */

/* ---- completing one request in turn in six ways ------------------------ */

static _Thread_local unsigned how_counter;

static void complete(MPI_Request *rq, int r, const char *what)
{
    int flag = 0, idx = -1, outc = 0, ind[1];
    MPI_Status st[1];
    unsigned how = (how_counter++ + (unsigned)r) % 6;
    EPT_CHECK(*rq != MPI_REQUEST_NULL, "%s returned MPI_REQUEST_NULL", what);
    switch (how) {
    case 0:
        EPT_OK(MPI_Wait(rq, st));
        break;
    case 1:
        for (;;) {
            EPT_OK(MPI_Test(rq, &flag, st));
            if (flag)
                break;
            sched_yield();
        }
        break;
    case 2:
        for (;;) {
            EPT_OK(MPI_Request_get_status(*rq, &flag, st));
            if (flag)
                break;
            sched_yield();
        }
        EPT_CHECK(*rq != MPI_REQUEST_NULL, "%s: MPI_Request_get_status freed the request", what);
        EPT_OK(MPI_Wait(rq, st));
        break;
    case 3:
        EPT_OK(MPI_Waitall(1, rq, st));
        break;
    case 4:
        EPT_OK(MPI_Waitany(1, rq, &idx, st));
        EPT_CHECK(idx == 0, "%s: MPI_Waitany index %d", what, idx);
        break;
    default:
        for (;;) {
            EPT_OK(MPI_Testsome(1, rq, &outc, ind, st));
            EPT_CHECK(outc == 0 || outc == 1, "%s: MPI_Testsome outcount %d", what, outc);
            if (outc == 1)
                break;
            sched_yield();
        }
        EPT_CHECK(ind[0] == 0, "%s: MPI_Testsome index %d", what, ind[0]);
        break;
    }
    EPT_CHECK(*rq == MPI_REQUEST_NULL, "%s: the request is not MPI_REQUEST_NULL after completion (way %u)", what, how);
}

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

static int bval(int root, int n, int i) { return root * 1000003 + n * 7 + i; }

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

/* ---- progress ----------------------------------------------------------- */

static void t_progress(MPI_Comm c, int r, int s)
{
    MPI_Request rq;
    for (int k = 0; k < 2; k++) {
        int A = k ? s - 1 : 0;
        PHASE("progress: Ibarrier, A waits while the others block in MPI_Recv");
        EPT_OK(MPI_Ibarrier(c, &rq));
        if (r == A) {
            EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            for (int q = 0; q < s; q++)
                if (q != A) {
                    int tok = 500 + q;
                    EPT_OK(MPI_Send(&tok, 1, MPI_INT, q, 77, c));
                }
        } else {
            int tok = -1;
            EPT_OK(MPI_Recv(&tok, 1, MPI_INT, A, 77, c, MPI_STATUS_IGNORE));
            EPT_CHECK(tok == 500 + r, "progress: token %d from %d", tok, A);
            EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
    }

    /* Ibcast of 64 KiB and 8 MiB: the root waits first, then tells the
     * others, which only then wait. */
    const int sizes[2] = {16384, 2 * 1024 * 1024};
    int *buf = malloc(sizeof(int) * (size_t)sizes[1]);
    EPT_CHECK(buf != NULL, "out of memory");
    for (int k = 0; k < 2; k++) {
        int n = sizes[k], root = k ? s - 1 : 1 % s;
        PHASE(k ? "progress: 8 MiB Ibcast, the root waits first" : "progress: 64 KiB Ibcast, the root waits first");
        for (int i = 0; i < n; i++)
            buf[i] = r == root ? bval(root, n, i) : -1;
        EPT_OK(MPI_Ibcast(buf, n, MPI_INT, root, c, &rq));
        if (r == root) {
            EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            for (int q = 0; q < s; q++)
                if (q != root)
                    EPT_OK(MPI_Send(&k, 1, MPI_INT, q, 78, c));
        } else {
            int tok = -1;
            EPT_OK(MPI_Recv(&tok, 1, MPI_INT, root, 78, c, MPI_STATUS_IGNORE));
            EPT_CHECK(tok == k, "progress: Ibcast token %d", tok);
            EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        for (int i = 0; i < n; i++)
            if (buf[i] != bval(root, n, i))
                EPT_CHECK(0, "Ibcast of %d ints from %d: element %d is %d, expected %d", n, root, i, buf[i],
                          bval(root, n, i));
    }
    free(buf);
}

/* A buffer is its owner's again as soon as its request is complete.  The
 * ranks whose buffers the others' results are copied from (the root, and in
 * other processes the first local rank, which receives the data) poll
 * slowly and overwrite their buffer the moment the request completes; the
 * others poll fast, so one of them usually completes the instance for all
 * local ranks and does the copying. */
static void t_reuse(MPI_Comm c, int r, int s)
{
    const int n = 2 * 1024 * 1024; /* 8 MiB of ints */
    int *buf = malloc(sizeof(int) * (size_t)n), *priv = malloc(sizeof(int) * (size_t)n);
    MPI_Request rq;
    EPT_CHECK(buf && priv, "out of memory");
    for (int it = 0; it < 4; it++) {
        int root = it < 2 ? 0 : s - 1, flag = 0, source = r == root || omp_get_thread_num() == 0;
        PHASE("Ibcast: the ranks reuse their buffer as soon as their request completes");
        for (int i = 0; i < n; i++)
            buf[i] = r == root ? bval(root, n + it, i) : -1;
        if (r != root) /* the root calls first */
            while (atomic_load(&shared[2]) < it + 1)
                sched_yield();
        EPT_OK(MPI_Ibcast(buf, n, MPI_INT, root, c, &rq));
        if (r == root)
            atomic_fetch_add(&shared[2], 1);
        for (;;) {
            EPT_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
            if (flag)
                break;
            if (source)
                usleep(100);
            else
                sched_yield();
        }
        if (r != root)
            memcpy(priv, buf, sizeof(int) * (size_t)n);
        memset(buf, 0xee, sizeof(int) * (size_t)n);
        if (r != root)
            for (int i = 0; i < n; i++)
                if (priv[i] != bval(root, n + it, i))
                    EPT_CHECK(0,
                              "Ibcast of %d ints from %d, round %d: element %d is %d, expected %d (copied from a "
                              "buffer its owner had already reused?)",
                              n, root, it, i, priv[i], bval(root, n + it, i));
    }
    free(buf);
    free(priv);
}

/* ---- 8 MiB Iallreduce --------------------------------------------------- */

static void t_big(MPI_Comm c, int r, int s)
{
    const int n = 1024 * 1024;
    double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    MPI_Request rq;
    EPT_CHECK(a && b, "out of memory");
    PHASE("8 MiB Iallreduce");
    for (int i = 0; i < n; i++) {
        a[i] = r + (i % 13);
        b[i] = -1;
    }
    EPT_OK(MPI_Iallreduce(a, b, n, MPI_DOUBLE, MPI_SUM, c, &rq));
    complete(&rq, r, "8 MiB MPI_Iallreduce");
    for (int i = 0; i < n; i++) {
        double w = s * (s - 1) / 2.0 + (double)s * (i % 13);
        if (b[i] != w)
            EPT_CHECK(0, "Iallreduce of 1M doubles: element %d is %g, expected %g", i, b[i], w);
    }
    for (int i = 0; i < n; i++)
        EPT_CHECK(a[i] == r + (i % 13), "Iallreduce changed its send buffer at %d", i);
    free(a);
    free(b);
}

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

/* ---- polling ------------------------------------------------------------ */

static void t_polling(MPI_Comm c, int r, int s)
{
    MPI_Request rq;
    MPI_Status st;
    PHASE("MPI_Request_get_status polling");
    for (int k = 0; k < 2; k++) {
        int late = k ? 0 : s - 1, in[2] = {r, 1}, out[2] = {-1, -1}, flag = 0;
        /* Only the late rank bumps the counter, once per round, just before its call. */
        if (r == late) {
            usleep(30000);
            atomic_fetch_add(&shared[1], 1);
        }
        EPT_OK(MPI_Iallreduce(in, out, 2, MPI_INT, MPI_SUM, c, &rq));
        for (;;) {
            if (k)
                EPT_OK(MPI_Test(&rq, &flag, &st));
            else
                EPT_OK(MPI_Request_get_status(rq, &flag, &st));
            if (flag) {
                long arrived = atomic_load(&shared[1]);
                EPT_CHECK(arrived >= k + 1,
                          "%s reported completion before the last rank called MPI_Iallreduce (counter %ld)",
                          k ? "MPI_Test" : "MPI_Request_get_status", arrived);
                break;
            }
            sched_yield();
        }
        /* Complete: the result is there, whichever call reported it. */
        EPT_CHECK(out[0] == s * (s - 1) / 2 && out[1] == s, "%s polling: Iallreduce gave %d %d",
                  k ? "MPI_Test" : "MPI_Request_get_status", out[0], out[1]);
        if (!k) {
            EPT_CHECK(rq != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
            EPT_OK(MPI_Request_get_status(rq, &flag, MPI_STATUS_IGNORE));
            EPT_CHECK(flag, "MPI_Request_get_status: a second look says incomplete");
            EPT_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
            EPT_CHECK(flag && rq == MPI_REQUEST_NULL, "MPI_Test after MPI_Request_get_status: flag %d", flag);
        } else {
            EPT_CHECK(rq == MPI_REQUEST_NULL, "MPI_Test left the request");
        }
        /* A null request: complete, empty status. */
        EPT_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
        EPT_CHECK(flag && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
                  "MPI_Request_get_status(MPI_REQUEST_NULL): flag %d source %d tag %d", flag, st.MPI_SOURCE,
                  st.MPI_TAG);
        int cancelled = 1;
        EPT_OK(MPI_Test_cancelled(&st, &cancelled));
        EPT_CHECK(!cancelled, "an empty status says cancelled");
    }
}

/* ---- a datatype freed while the collective is pending -------------------- */

static void int_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((const int *)in)[i];
}

static void t_type_lifetime(MPI_Comm c, int r, int s)
{
    int buf[3 * NV + 2];
    int *big = malloc(sizeof(int) * 3 * (size_t)NV * (size_t)s);
    MPI_Datatype t;
    MPI_Request rq;
    EPT_CHECK(big != NULL, "out of memory");
    PHASE("derived datatype freed while the collective is pending");
    for (int k = 0; k < 2; k++) {
        int root = k ? s - 1 : 0, late = k ? 0 : s - 1;
        EPT_OK(MPI_Type_vector(NV, 2, 3, MPI_INT, &t));
        EPT_OK(MPI_Type_commit(&t));
        for (int i = 0; i < 3 * NV + 2; i++)
            buf[i] = r == root && i < 3 * NV && i % 3 != 2 ? bval(root, 3, i) : -4;
        if (r == late)
            usleep(20000); /* the others free their type before the last rank arrives */
        EPT_OK(MPI_Ibcast(buf, 1, t, root, c, &rq));
        EPT_OK(MPI_Type_free(&t));
        EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int i = 0; i < 3 * NV + 2; i++) {
            int w = i % 3 != 2 && i < 3 * NV ? bval(root, 3, i) : -4;
            EPT_CHECK(buf[i] == w, "Ibcast from %d with a freed vector type: int %d is %d, expected %d", root, i,
                      buf[i], w);
        }
        /* Igather into a vector at the root, the type freed at once. */
        EPT_OK(MPI_Type_vector(NV, 2, 3, MPI_INT, &t));
        EPT_OK(MPI_Type_commit(&t));
        int mine[2 * NV];
        for (int i = 0; i < 2 * NV; i++)
            mine[i] = r * 10000 + i;
        for (int i = 0; i < 3 * NV * s; i++)
            big[i] = -4;
        if (r == late)
            usleep(20000);
        EPT_OK(MPI_Igather(mine, 2 * NV, MPI_INT, r == root ? big : NULL, 1, t, root, c, &rq));
        EPT_OK(MPI_Type_free(&t));
        EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (r == root)
            for (int q = 0; q < s; q++) /* the vector's extent is 3 NV - 1 ints */
                for (int j = 0; j < 2 * NV; j++) {
                    int at = q * (3 * NV - 1) + 3 * (j / 2) + j % 2;
                    EPT_CHECK(big[at] == q * 10000 + j, "Igather to %d into a freed vector type: rank %d item %d is %d",
                              root, q, j, big[at]);
                }
        /* Iallreduce with a user operation freed at once. */
        MPI_Op op;
        int one = r + 1, sum = -1;
        EPT_OK(MPI_Op_create(int_sum, 1, &op));
        if (r == late)
            usleep(20000);
        EPT_OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, op, c, &rq));
        EPT_OK(MPI_Op_free(&op));
        EPT_CHECK(op == MPI_OP_NULL, "MPI_Op_free left the handle set");
        EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        EPT_CHECK(sum == s * (s + 1) / 2, "Iallreduce with a freed user operation: %d, expected %d", sum,
                  s * (s + 1) / 2);
        /* Irecv into a vector type freed before the message is sent. */
        int from = (r + s - 1) % s, to = (r + 1) % s;
        EPT_OK(MPI_Type_vector(NV, 2, 3, MPI_INT, &t));
        EPT_OK(MPI_Type_commit(&t));
        for (int i = 0; i < 3 * NV + 2; i++)
            buf[i] = -4;
        EPT_OK(MPI_Irecv(buf, 1, t, from, 77, c, &rq));
        EPT_OK(MPI_Type_free(&t));
        EPT_CHECK(t == MPI_DATATYPE_NULL, "MPI_Type_free left the handle set");
        EPT_OK(MPI_Barrier(c)); /* every receiver's type is freed before any send */
        for (int i = 0; i < 2 * NV; i++)
            mine[i] = r * 10000 + i;
        EPT_OK(MPI_Send(mine, 2 * NV, MPI_INT, to, 77, c));
        EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int i = 0; i < 3 * NV + 2; i++) {
            int w = i % 3 != 2 && i < 3 * NV ? from * 10000 + 2 * (i / 3) + i % 3 : -4;
            EPT_CHECK(buf[i] == w, "Irecv into a freed vector type: int %d is %d, expected %d", i, buf[i], w);
        }
    }
    free(big);
}

/* ---- errors ------------------------------------------------------------- */

static void expect_error(int rc, int cls, const char *call, int r)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int got = -1, len = 0;
    EPT_CHECK(rc != MPI_SUCCESS, "%s returned MPI_SUCCESS, expected an error (rank %d)", call, r);
    EPT_OK(MPI_Error_class(rc, &got));
    EPT_OK(MPI_Error_string(rc, msg, &len));
    EPT_CHECK(got == cls, "%s: error class %d, expected %d (message '%s')", call, got, cls, msg);
    EPT_CHECK(strstr(msg, call) != NULL, "%s: the message '%s' does not name the call", call, msg);
}

static void t_errors(MPI_Comm c, int r, int s)
{
    MPI_Comm d;
    MPI_Request rq;
    int x = r, y[8] = {0}, *cnt = calloc((size_t)s, sizeof(int)), *dsp = calloc((size_t)s, sizeof(int));
    MPI_Datatype *ty = malloc(sizeof *ty * (size_t)s);
    EPT_CHECK(cnt && dsp && ty, "out of memory");
    for (int q = 0; q < s; q++)
        ty[q] = MPI_INT;
    PHASE("errors: NULL request pointers");
    EPT_OK(MPI_Comm_dup(c, &d));
    EPT_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    expect_error(MPI_Ibarrier(d, NULL), MPI_ERR_REQUEST, "MPI_Ibarrier", r);
    expect_error(MPI_Ibcast(&x, 1, MPI_INT, 0, d, NULL), MPI_ERR_REQUEST, "MPI_Ibcast", r);
    expect_error(MPI_Igather(&x, 1, MPI_INT, y, 1, MPI_INT, 0, d, NULL), MPI_ERR_REQUEST, "MPI_Igather", r);
    expect_error(MPI_Igatherv(&x, 0, MPI_INT, y, cnt, dsp, MPI_INT, 0, d, NULL), MPI_ERR_REQUEST, "MPI_Igatherv", r);
    expect_error(MPI_Iscatter(y, 1, MPI_INT, &x, 1, MPI_INT, 0, d, NULL), MPI_ERR_REQUEST, "MPI_Iscatter", r);
    expect_error(MPI_Iscatterv(y, cnt, dsp, MPI_INT, &x, 0, MPI_INT, 0, d, NULL), MPI_ERR_REQUEST, "MPI_Iscatterv", r);
    expect_error(MPI_Iallgather(&x, 0, MPI_INT, y, 0, MPI_INT, d, NULL), MPI_ERR_REQUEST, "MPI_Iallgather", r);
    expect_error(MPI_Iallgatherv(&x, 0, MPI_INT, y, cnt, dsp, MPI_INT, d, NULL), MPI_ERR_REQUEST, "MPI_Iallgatherv", r);
    expect_error(MPI_Ialltoall(y, 0, MPI_INT, y + 4, 0, MPI_INT, d, NULL), MPI_ERR_REQUEST, "MPI_Ialltoall", r);
    expect_error(MPI_Ialltoallv(y, cnt, dsp, MPI_INT, y + 4, cnt, dsp, MPI_INT, d, NULL), MPI_ERR_REQUEST,
                 "MPI_Ialltoallv", r);
    expect_error(MPI_Ialltoallw(y, cnt, dsp, ty, y + 4, cnt, dsp, ty, d, NULL), MPI_ERR_REQUEST, "MPI_Ialltoallw", r);
    expect_error(MPI_Ireduce(&x, y, 1, MPI_INT, MPI_SUM, 0, d, NULL), MPI_ERR_REQUEST, "MPI_Ireduce", r);
    expect_error(MPI_Iallreduce(&x, y, 1, MPI_INT, MPI_SUM, d, NULL), MPI_ERR_REQUEST, "MPI_Iallreduce", r);
    expect_error(MPI_Ireduce_scatter(y, &x, cnt, MPI_INT, MPI_SUM, d, NULL), MPI_ERR_REQUEST, "MPI_Ireduce_scatter", r);
    expect_error(MPI_Ireduce_scatter_block(y, &x, 0, MPI_INT, MPI_SUM, d, NULL), MPI_ERR_REQUEST,
                 "MPI_Ireduce_scatter_block", r);
    expect_error(MPI_Iscan(&x, y, 1, MPI_INT, MPI_SUM, d, NULL), MPI_ERR_REQUEST, "MPI_Iscan", r);
    expect_error(MPI_Iexscan(&x, y, 1, MPI_INT, MPI_SUM, d, NULL), MPI_ERR_REQUEST, "MPI_Iexscan", r);

    PHASE("errors: MPI_Cancel of a collective request");
    EPT_OK(MPI_Ibarrier(d, &rq));
    expect_error(MPI_Cancel(&rq), MPI_ERR_REQUEST, "MPI_Cancel", r);
    expect_error(MPI_Request_free(&rq), MPI_ERR_REQUEST, "MPI_Request_free", r);
    MPI_Status st;
    EPT_OK(MPI_Wait(&rq, &st));
    int cancelled = 1;
    EPT_OK(MPI_Test_cancelled(&st, &cancelled));
    EPT_CHECK(!cancelled, "a collective request says cancelled after MPI_Cancel");

    PHASE("errors: the communicator still works");
    int out = -1;
    EPT_OK(MPI_Iallreduce(&x, &out, 1, MPI_INT, MPI_SUM, d, &rq));
    EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    EPT_CHECK(out == s * (s - 1) / 2, "Iallreduce after the errors: %d", out);
    EPT_OK(MPI_Comm_free(&d));
    free(cnt);
    free(dsp);
    free(ty);
}

/* ---- driver ------------------------------------------------------------- */

static void body(MPI_Comm c, void *arg)
{
    int r, s;
    (void)arg;
    EPT_OK(MPI_Comm_rank(c, &r));
    EPT_OK(MPI_Comm_size(c, &s));
    /* Errors come back to EPT_OK, which names the call and the line. */
    EPT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    t_barrier(c, r, s);
    t_bcast(c, r, s);
    t_rooted(c, r, s);
    t_allgather(c, r, s);
    t_alltoall(c, r, s);
    t_reduce(c, r, s);
    t_outstanding(c, r, s);
    t_progress(c, r, s);
    t_reuse(c, r, s);
    t_big(c, r, s);
    t_split(c, r, s);
    t_polling(c, r, s);
    t_errors(c, r, s);
    t_type_lifetime(c, r, s);
    PHASE("done");
}

/* An abort inside MPI (an assertion) names the phase too. */
static void abort_fire(int sig)
{
    const char *p = atomic_load(&phase);
    static const char m[] = "FAIL: aborted (SIGABRT); last phase entered: ";
    if (write(2, m, sizeof m - 1) < 0 || write(2, p, strlen(p)) < 0 || write(2, "\n", 1) < 0)
        _exit(4);
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
    int provided;
    if (ept_world_endpoints() <= 0 && argc < 2) {
        fprintf(stderr, "skip: needs world mode or an explicit shape\n");
        return 77;
    }
#ifdef EPT_COLL_GATHERED /* the gathered reductions and scans, on any communicator */
    setenv("EPMPI_COLL_ALGORITHM", "gathered", 1);
#endif
    watchdog_arm(60);
    signal(SIGABRT, abort_fire);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    EPT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    shared = ept_shared_page();
    MPI_Datatype tmp;
    ept_mat_create(&mat_type, &mat_mpi_op);
    EPT_OK(MPI_Type_vector(NV, 2, 3, MPI_INT, &vec));
    EPT_OK(MPI_Type_commit(&vec));
    EPT_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &tmp));
    EPT_OK(MPI_Type_create_resized(tmp, 0, 6 * sizeof(int), &every_other));
    EPT_OK(MPI_Type_free(&tmp));
    EPT_OK(MPI_Type_commit(&every_other));
    EPT_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec2));
    EPT_OK(MPI_Type_commit(&vec2));

    run_ranks(local_ranks(argc, argv), body, NULL);

    MPI_Op_free(&mat_mpi_op);
    MPI_Type_free(&mat_type);
    MPI_Type_free(&vec);
    MPI_Type_free(&every_other);
    MPI_Type_free(&vec2);
    munmap((void *)shared, 4096);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
