/* Communicator management on endpoint communicators, in world mode:
 *  - MPI_Comm_dup keeps rank and size; traffic on a dup never matches
 *    receives on the original with the same source and tag (nor wildcards),
 *    and the other way round; MPI_Comm_free of dups (create/free loops:
 *    comm_loop);
 *  - MPI_Comm_test_inter is 0; MPI_Comm_get_attr gives MPI_TAG_UB >= 2^28-1,
 *    MPI_WTIME_IS_GLOBAL and MPI_HOST on MPI_COMM_WORLD, dups and MPI_COMM_SELF;
 *  - MPI_Comm_set_name / get_name per endpoint (default names of
 *    MPI_COMM_WORLD and MPI_COMM_SELF, each endpoint sees its own name);
 *  - MPI_COMM_SELF is one rank per endpoint: send to self, collectives;
 *  - error handlers: set outside the parallel region applies to all the
 *    process's endpoints, inside only to the caller's; get returns what was
 *    set; a dup inherits its parent's; MPI_Comm_call_errhandler and a real
 *    error call a user handler (MPI_Comm_create_errhandler) with the
 *    endpoint's handle and the code, and the call returns the code. */
#include "eptest.h"

#define MAXT 64

static MPI_Errhandler user_eh;
static int eh_calls[MAXT];
static MPI_Comm eh_comm[MAXT];
static int eh_code[MAXT];

static void user_handler(MPI_Comm *comm, int *code, ...)
{
    int t = omp_get_thread_num();
    eh_calls[t]++;
    eh_comm[t] = *comm;
    eh_code[t] = *code;
}

static void check_attrs(MPI_Comm c, const char *what)
{
    int *v, flag = 0, size;
    EPT_OK(MPI_Comm_size(c, &size));
    EPT_OK(MPI_Comm_get_attr(c, MPI_TAG_UB, &v, &flag));
    EPT_CHECK(flag && *v >= (1 << 28) - 1, "%s: MPI_TAG_UB flag %d value %d", what, flag, flag ? *v : -1);
    flag = 0;
    EPT_OK(MPI_Comm_get_attr(c, MPI_WTIME_IS_GLOBAL, &v, &flag));
    EPT_CHECK(flag && (*v == 0 || *v == 1), "%s: MPI_WTIME_IS_GLOBAL flag %d value %d", what, flag, flag ? *v : -1);
    flag = 0;
    EPT_OK(MPI_Comm_get_attr(c, MPI_HOST, &v, &flag));
    EPT_CHECK(flag && (*v == MPI_PROC_NULL || (*v >= 0 && *v < size)), "%s: MPI_HOST flag %d value %d", what, flag,
              flag ? *v : -1);
}

static void check_name(MPI_Comm c, const char *want, const char *what)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    memset(name, 'x', sizeof name);
    EPT_OK(MPI_Comm_get_name(c, name, &len));
    EPT_CHECK(strcmp(name, want) == 0 && len == (int)strlen(want), "%s: name '%.*s' (length %d), expected '%s'", what,
              MPI_MAX_OBJECT_NAME - 1, name, len, want);
}

static void check_eh(MPI_Comm c, MPI_Errhandler want, const char *what)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    EPT_OK(MPI_Comm_get_errhandler(c, &eh));
    EPT_CHECK(eh == want, "%s: error handler " EPT_HFMT ", expected " EPT_HFMT, what, EPT_HARG(eh), EPT_HARG(want));
}

/* Messages on d never match receives on c (same source, tag and wildcards). */
static void check_isolation(MPI_Comm c, MPI_Comm d, int r, int s, const char *what)
{
    int to = (r + 1) % s, from = (r + s - 1) % s, a = 1000 + r, b = 2000 + r, x = -1, y = -1, flag = 1;
    MPI_Request rq[3];
    MPI_Status st, sts[2];
    /* Sent on d first, then on c; received on c first. */
    EPT_OK(MPI_Isend(&a, 1, MPI_INT, to, 5, d, &rq[0]));
    EPT_OK(MPI_Isend(&b, 1, MPI_INT, to, 5, c, &rq[1]));
    EPT_OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st));
    EPT_CHECK(x == 2000 + from && st.MPI_SOURCE == from && st.MPI_TAG == 5,
              "%s: receive on the original got %d from %d tag %d (expected %d from %d tag 5)", what, x, st.MPI_SOURCE,
              st.MPI_TAG, 2000 + from, from);
    EPT_OK(MPI_Recv(&y, 1, MPI_INT, from, 5, d, &st));
    EPT_CHECK(y == 1000 + from, "%s: receive on the dup got %d, expected %d", what, y, 1000 + from);
    EPT_OK(MPI_Waitall(2, rq, sts));
    /* A wildcard receive posted on c first; a message on d must not take it. */
    x = -1;
    EPT_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &rq[2]));
    EPT_OK(MPI_Barrier(c));
    EPT_OK(MPI_Send(&a, 1, MPI_INT, to, 6, d));
    EPT_OK(MPI_Recv(&y, 1, MPI_INT, from, 6, d, MPI_STATUS_IGNORE));
    EPT_CHECK(y == 1000 + from, "%s: dup got %d", what, y);
    EPT_OK(MPI_Test(&rq[2], &flag, &st));
    EPT_CHECK(!flag, "%s: a message sent on the dup completed a receive on the original (got %d)", what, x);
    EPT_OK(MPI_Barrier(c));
    EPT_OK(MPI_Send(&b, 1, MPI_INT, to, 6, c));
    EPT_OK(MPI_Wait(&rq[2], &st));
    EPT_CHECK(x == 2000 + from && st.MPI_SOURCE == from && st.MPI_TAG == 6, "%s: original got %d from %d tag %d", what,
              x, st.MPI_SOURCE, st.MPI_TAG);
}

int main(int argc, char **argv)
{
    int provided, wsize;
    int T = ept_require_world();
    EPT_CHECK(T <= MAXT, "at most %d endpoints", MAXT);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    EPT_OK(MPI_Comm_create_errhandler(user_handler, &user_eh));

    /* Error handlers set outside the parallel region: every endpoint. */
    check_eh(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, "default on MPI_COMM_WORLD");
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
#pragma omp parallel num_threads(T)
    {
        check_eh(MPI_COMM_WORLD, MPI_ERRORS_RETURN, "MPI_COMM_WORLD after a set outside the region");
        check_eh(MPI_COMM_SELF, MPI_ERRORS_RETURN, "MPI_COMM_SELF after a set outside the region");
    }
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));

#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num(), r = -1, s = -1, dr = -1, ds = -1, flag = -1;
        char what[96];
        MPI_Comm d, d2;
        EPT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &r));
        EPT_OK(MPI_Comm_size(MPI_COMM_WORLD, &s));
        check_eh(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD after resetting");

        /* ---- dup ---- */
        EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        EPT_CHECK(d != MPI_COMM_WORLD && d != MPI_COMM_NULL, "dup handle " EPT_HFMT, EPT_HARG(d));
        EPT_OK(MPI_Comm_rank(d, &dr));
        EPT_OK(MPI_Comm_size(d, &ds));
        EPT_CHECK(dr == r && ds == s, "dup: rank %d size %d, world rank %d size %d", dr, ds, r, s);
        check_isolation(MPI_COMM_WORLD, d, r, s, "world vs dup");
        check_isolation(d, MPI_COMM_WORLD, r, s, "dup vs world");
        EPT_OK(MPI_Comm_dup(d, &d2));
        check_isolation(d, d2, r, s, "dup vs dup of dup");

        /* ---- inter, attributes ---- */
        EPT_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
        EPT_CHECK(flag == 0, "MPI_Comm_test_inter(MPI_COMM_WORLD) = %d", flag);
        flag = -1;
        EPT_OK(MPI_Comm_test_inter(d, &flag));
        EPT_CHECK(flag == 0, "MPI_Comm_test_inter(dup) = %d", flag);
        flag = -1;
        EPT_OK(MPI_Comm_test_inter(MPI_COMM_SELF, &flag));
        EPT_CHECK(flag == 0, "MPI_Comm_test_inter(MPI_COMM_SELF) = %d", flag);
        check_attrs(MPI_COMM_WORLD, "MPI_COMM_WORLD");
        check_attrs(d, "dup");
        check_attrs(MPI_COMM_SELF, "MPI_COMM_SELF");

        /* ---- names ---- */
        check_name(MPI_COMM_WORLD, "MPI_COMM_WORLD", "default name of MPI_COMM_WORLD");
        check_name(MPI_COMM_SELF, "MPI_COMM_SELF", "default name of MPI_COMM_SELF");
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD)); /* everyone has read the defaults */
        char name[MPI_MAX_OBJECT_NAME];
        snprintf(name, sizeof name, "world endpoint %d", r);
        EPT_OK(MPI_Comm_set_name(MPI_COMM_WORLD, name));
        snprintf(name, sizeof name, "dup endpoint %d", r);
        EPT_OK(MPI_Comm_set_name(d, name));
        snprintf(name, sizeof name, "self of %d", r);
        EPT_OK(MPI_Comm_set_name(MPI_COMM_SELF, name));
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every endpoint has named its handles */
        snprintf(name, sizeof name, "world endpoint %d", r);
        check_name(MPI_COMM_WORLD, name, "MPI_COMM_WORLD after set_name");
        snprintf(name, sizeof name, "dup endpoint %d", r);
        check_name(d, name, "dup after set_name");
        snprintf(name, sizeof name, "self of %d", r);
        check_name(MPI_COMM_SELF, name, "MPI_COMM_SELF after set_name");

        /* ---- MPI_COMM_SELF: one rank per endpoint ---- */
        {
            int sr = -1, ss = -1, v = r * 3 + 1, got = -1, sum = -1, b = -1;
            MPI_Request rq;
            MPI_Status st;
            EPT_OK(MPI_Comm_rank(MPI_COMM_SELF, &sr));
            EPT_OK(MPI_Comm_size(MPI_COMM_SELF, &ss));
            EPT_CHECK(sr == 0 && ss == 1, "MPI_COMM_SELF: rank %d size %d", sr, ss);
            EPT_OK(MPI_Isend(&v, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &rq));
            EPT_OK(MPI_Recv(&got, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &st));
            EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            EPT_CHECK(got == v && st.MPI_SOURCE == 0 && st.MPI_TAG == 9,
                      "MPI_COMM_SELF: got %d from %d tag %d, expected %d (my own message)", got, st.MPI_SOURCE,
                      st.MPI_TAG, v);
            got = -1;
            EPT_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 10, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF,
                                MPI_STATUS_IGNORE));
            EPT_CHECK(got == v, "MPI_COMM_SELF sendrecv: got %d, expected %d", got, v);
            EPT_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
            EPT_CHECK(sum == v, "MPI_COMM_SELF allreduce: %d, expected %d", sum, v);
            b = v;
            EPT_OK(MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_SELF));
            EPT_CHECK(b == v, "MPI_COMM_SELF bcast: %d", b);
            EPT_OK(MPI_Barrier(MPI_COMM_SELF));
            /* Nothing sent on MPI_COMM_SELF is visible on MPI_COMM_WORLD. */
            EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
            EPT_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            EPT_CHECK(!flag, "a message is pending on MPI_COMM_WORLD after traffic on MPI_COMM_SELF only");
        }

        /* ---- error handlers, per endpoint ---- */
        check_eh(d, MPI_ERRORS_ARE_FATAL, "dup of MPI_COMM_WORLD (inherits)");
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (t % 2 == 0)
            EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
        check_eh(MPI_COMM_WORLD, t % 2 == 0 ? MPI_ERRORS_RETURN : MPI_ERRORS_ARE_FATAL,
                 "MPI_COMM_WORLD after a set by the even threads inside the region");
        {
            MPI_Comm d3;
            EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d3));
            check_eh(d3, t % 2 == 0 ? MPI_ERRORS_RETURN : MPI_ERRORS_ARE_FATAL, "dup inherits the endpoint's handler");
            EPT_OK(MPI_Comm_free(&d3));
        }
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        check_eh(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD reset inside the region");

        /* MPI_Comm_call_errhandler with a user handler: on MPI_COMM_WORLD... */
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, user_eh));
        check_eh(MPI_COMM_WORLD, user_eh, "user handler on MPI_COMM_WORLD");
        eh_calls[t] = 0;
        EPT_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
        EPT_CHECK(eh_calls[t] == 1 && eh_code[t] == MPI_ERR_OTHER,
                  "call_errhandler on MPI_COMM_WORLD: %d calls, code %d", eh_calls[t], eh_code[t]);
        {
            int res = -1, hr = -1;
            EPT_OK(MPI_Comm_compare(eh_comm[t], MPI_COMM_WORLD, &res));
            EPT_OK(MPI_Comm_rank(eh_comm[t], &hr));
            EPT_CHECK(res == MPI_IDENT && hr == r,
                      "the handler got handle " EPT_HFMT
                      ": compare with MPI_COMM_WORLD %d (want MPI_IDENT), rank %d (want %d)",
                      EPT_HARG(eh_comm[t]), res, hr, r);
        }
        /* ... and on a dup, which must pass exactly the dup's handle. */
        EPT_OK(MPI_Comm_set_errhandler(d, user_eh));
        eh_calls[t] = 0;
        EPT_OK(MPI_Comm_call_errhandler(d, MPI_ERR_ARG));
        EPT_CHECK(eh_calls[t] == 1 && eh_comm[t] == d && eh_code[t] == MPI_ERR_ARG,
                  "call_errhandler on a dup: %d calls, handle " EPT_HFMT " (dup is " EPT_HFMT "), code %d", eh_calls[t],
                  EPT_HARG(eh_comm[t]), EPT_HARG(d), eh_code[t]);
        /* A real error goes to the same handler, and the call returns the code. */
        eh_calls[t] = 0;
        {
            int v = 0, cls = -1;
            int rc = MPI_Send(&v, 1, MPI_INT, -5, 0, d);
            EPT_CHECK(rc != MPI_SUCCESS, "MPI_Send to rank -5 succeeded");
            MPI_Error_class(rc, &cls);
            EPT_CHECK(eh_calls[t] == 1 && eh_comm[t] == d && eh_code[t] == rc && cls == MPI_ERR_RANK,
                      "MPI_Send to rank -5 with a user handler: %d calls, handle " EPT_HFMT " (dup " EPT_HFMT
                      "), code %d (returned "
                      "%d, class %d)",
                      eh_calls[t], EPT_HARG(eh_comm[t]), EPT_HARG(d), eh_code[t], rc, cls);
            snprintf(what, sizeof what, "dup of a dup with a user handler");
            MPI_Comm d4;
            EPT_OK(MPI_Comm_dup(d, &d4));
            check_eh(d4, user_eh, what);
            eh_calls[t] = 0;
            EPT_OK(MPI_Comm_call_errhandler(d4, MPI_ERR_TAG));
            EPT_CHECK(eh_calls[t] == 1 && eh_comm[t] == d4 && eh_code[t] == MPI_ERR_TAG,
                      "call_errhandler on the dup of a dup: %d calls, handle " EPT_HFMT " (want " EPT_HFMT ")",
                      eh_calls[t], EPT_HARG(eh_comm[t]), EPT_HARG(d4));
            EPT_OK(MPI_Comm_free(&d4));
        }
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        EPT_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_ARE_FATAL));

        /* ---- free ---- */
        EPT_OK(MPI_Comm_free(&d2));
        EPT_CHECK(d2 == MPI_COMM_NULL, "MPI_Comm_free did not set the handle to MPI_COMM_NULL");
        EPT_OK(MPI_Comm_free(&d));
        EPT_CHECK(d == MPI_COMM_NULL, "MPI_Comm_free did not set the handle to MPI_COMM_NULL");
    }
    EPT_OK(MPI_Errhandler_free(&user_eh));
    (void)wsize;
    MPI_Finalize();
    return 0;
}
