/* What the coll_nb_* programs share.  Each tests one behaviour of the
 * non-blocking collectives on endpoint communicators (its own comment says
 * which): MPI_COMM_WORLD in world mode (PxT), or the handles of
 * MPI_Comm_create_endpoints(MPI_COMM_WORLD, n) in explicit shapes (P:a,b,...:
 * n per process, possibly 0).  Every result is checked against values
 * computed here, rank by rank.  Built with -DEPT_COLL_GATHERED (the
 * *_gathered programs), every reduction and scan takes the gathered path.
 * Here: completing a request in six ways in turn, a non-commutative
 * operation (2x2 matrix products, which must combine in rank order), the
 * derived datatypes, and main. */
#ifndef COLL_NB_H
#define COLL_NB_H

#include "eptest.h"

#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>

static _Atomic long *shared; /* ept_shared_page() */

/* ---- the non-commutative operation: ept_mat_t products (eptest.h) ------- */

static inline ept_mat_t gen_mat(int q, int i) { return (ept_mat_t){{q + 2 + i, 1 + i % 2, 1, (q * 3 + i) % 5}}; }

/* M(from, i) * ... * M(upto - 1, i); the identity when empty. */
static inline ept_mat_t mat_range(int from, int upto, int i)
{
    ept_mat_t p = {{1, 0, 0, 1}};
    for (int q = from; q < upto; q++)
        p = ept_mat_mul(p, gen_mat(q, i));
    return p;
}

/* The product in reverse rank order, to name that mistake when it happens. */
static inline ept_mat_t mat_range_rev(int from, int upto, int i)
{
    ept_mat_t p = {{1, 0, 0, 1}};
    for (int q = upto - 1; q >= from; q--)
        p = ept_mat_mul(p, gen_mat(q, i));
    return p;
}

static inline void check_mat(ept_mat_t got, ept_mat_t want, ept_mat_t rev, const char *what, int r, int i)
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

static inline void complete(MPI_Request *rq, int r, const char *what)
{
    int flag = 0, idx = -1, outc = 0, ind[1];
    MPI_Status st[1];
    static _Thread_local unsigned how_counter;
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

static inline int bval(int root, int n, int i) { return root * 1000003 + n * 7 + i; }

/* rc must be an error of class cls whose message names call. */
static inline void expect_error(int rc, int cls, const char *call, int r)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int got = -1, len = 0;
    EPT_CHECK(rc != MPI_SUCCESS, "%s returned MPI_SUCCESS, expected an error (rank %d)", call, r);
    EPT_OK(MPI_Error_class(rc, &got));
    EPT_OK(MPI_Error_string(rc, msg, &len));
    EPT_CHECK(got == cls, "%s: error class %d, expected %d (message '%s')", call, got, cls, msg);
    EPT_CHECK(strstr(msg, call) != NULL, "%s: the message '%s' does not name the call", call, msg);
}

/* An abort inside MPI (an assertion) names the phase too. */
static inline void abort_fire(int sig)
{
    const char *p = atomic_load(&phase);
    static const char m[] = "FAIL: aborted (SIGABRT); last phase entered: ";
    if (write(2, m, sizeof m - 1) < 0 || write(2, p, strlen(p)) < 0 || write(2, "\n", 1) < 0)
        _exit(4);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void (*coll_nb_tests)(MPI_Comm c, int r, int s);

static inline void coll_nb_body(MPI_Comm c, void *arg)
{
    int r, s;
    (void)arg;
    EPT_OK(MPI_Comm_rank(c, &r));
    EPT_OK(MPI_Comm_size(c, &s));
    /* Errors come back to EPT_OK, which names the call and the line. */
    EPT_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    coll_nb_tests(c, r, s);
    PHASE("done");
}

/* The whole program: tests(c, rank, size) runs once per rank. */
static inline int coll_nb_main(int argc, char **argv, void (*tests)(MPI_Comm c, int r, int s))
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

    coll_nb_tests = tests;
    run_ranks(local_ranks(argc, argv), coll_nb_body, NULL);

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

#endif
