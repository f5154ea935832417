/* Fatal errors with the default error handler (MPI_ERRORS_ARE_FATAL).
 * Run as shape 1:0, the program is a driver that calls no MPI function: it
 * starts itself again under mpiexec (with EPT_FATAL_CHILD=<case> and
 * libepmpi.so preloaded) for each case below and checks how the child job
 * ends and what it prints:
 *   send      world 2x2: rank 3 calls MPI_Send to rank 999: the job aborts,
 *             and the message names MPI_Send, the rank, 999;
 *   bcast     world 1x2: MPI_Bcast with root 999: aborts naming MPI_Bcast, root;
 *   errors_abort  world 1x2, MPI_ERRORS_ABORT on MPI_COMM_WORLD: MPI_Send
 *             to rank 999 aborts naming MPI_Send and the rank;
 *   explicit  no world mode, 2 processes x 2 endpoints from
 *             MPI_Comm_create_endpoints: MPI_Recv with tag -3 on one
 *             endpoint: aborts naming MPI_Recv and the tag;
 *   abort     world 2x2: MPI_Abort(MPI_COMM_WORLD, 42) on one thread ends
 *             the job with exit code 42 (as under MPICH), with no error
 *             about MPI_Abort itself;
 *   abort_return  world 1x2, MPI_ERRORS_RETURN on MPI_COMM_WORLD:
 *             MPI_Abort(MPI_COMM_WORLD, 44) still ends the job, exit code 44;
 *   abort_ep  no world mode: MPI_Abort(endpoint handle, 43): exit code 43;
 *   leak      no world mode: PMPI_Comm_size of an endpoint handle, past
 *             epmpi: MPICH rejects the handle (invalid communicator);
 *             Open MPI reads the object behind it and faults, and epmpi
 *             names the cause before the job ends.
 * A child that survives its fatal call prints EPT_CHILD_SURVIVED. */
#include "eptest.h"
#include "eptest_child.h"

#include <unistd.h>

/* ---- children ------------------------------------------------------------ */

static void survived(const char *what)
{
    printf("EPT_CHILD_SURVIVED: %s returned\n", what);
    fflush(stdout);
}

/* The other threads wait for the abort: at most 10 s, less if MPI_Abort
 * returned in this process. */
static volatile int abort_returned;

static void wait_for_abort(void)
{
    for (int i = 0; i < 1000 && !abort_returned; i++)
        usleep(10000);
}

/* The cases without world mode: two endpoints of MPI_COMM_WORLD in each
 * process, one for each of its two threads.  Returns the process's rank in
 * MPI_COMM_WORLD, which picks the one that makes the fatal call. */
static int two_endpoints(MPI_Comm h[2])
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_create_endpoints(MPI_COMM_WORLD, 2, MPI_INFO_NULL, h);
    return me;
}

static int child(const char *which, int argc, char **argv)
{
    int provided, v = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (!strcmp(which, "send")) {
#pragma omp parallel num_threads(2)
        {
            int r;
            MPI_Comm_rank(MPI_COMM_WORLD, &r);
            MPI_Barrier(MPI_COMM_WORLD);
            if (r == 3) {
                MPI_Send(&v, 1, MPI_INT, 999, 0, MPI_COMM_WORLD);
                survived("MPI_Send to rank 999");
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    } else if (!strcmp(which, "bcast")) {
#pragma omp parallel num_threads(2)
        {
            int x = 1;
            MPI_Bcast(&x, 1, MPI_INT, 999, MPI_COMM_WORLD);
            survived("MPI_Bcast with root 999");
        }
    } else if (!strcmp(which, "errors_abort")) {
#ifdef MPI_ERRORS_ABORT
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT);
#else /* MPI 4.0's: Open MPI 4.1 has none, and MPI_ERRORS_ARE_FATAL does the same here */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
#endif
#pragma omp parallel num_threads(2)
        {
            int r;
            MPI_Comm_rank(MPI_COMM_WORLD, &r);
            if (r == 1) {
                MPI_Send(&v, 1, MPI_INT, 999, 0, MPI_COMM_WORLD);
                survived("MPI_Send to rank 999 under MPI_ERRORS_ABORT");
            }
        }
    } else if (!strcmp(which, "explicit")) {
        MPI_Comm h[2];
        int me = two_endpoints(h);
#pragma omp parallel num_threads(2)
        {
            int i = omp_get_thread_num(), x = 0;
            MPI_Barrier(h[i]);
            if (me == 1 && i == 1) {
                MPI_Recv(&x, 1, MPI_INT, 0, -3, h[i], MPI_STATUS_IGNORE);
                survived("MPI_Recv with tag -3");
            }
            MPI_Barrier(h[i]);
            MPI_Comm_free(&h[i]);
        }
    } else if (!strcmp(which, "abort") || !strcmp(which, "abort_return")) {
        int code = 42;
        if (!strcmp(which, "abort_return")) {
            /* MPI_Abort ends the job whatever the error handler. */
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            code = 44;
        }
#pragma omp parallel num_threads(2)
        {
            int r;
            MPI_Comm_rank(MPI_COMM_WORLD, &r);
            if (r == 1) {
                MPI_Abort(MPI_COMM_WORLD, code);
                survived("MPI_Abort");
                abort_returned = 1;
            } else {
                wait_for_abort();
            }
        }
    } else if (!strcmp(which, "abort_ep")) {
        MPI_Comm h[2];
        int me = two_endpoints(h);
#pragma omp parallel num_threads(2)
        {
            int i = omp_get_thread_num();
            if (me == 0 && i == 1) {
                MPI_Abort(h[i], 43);
                survived("MPI_Abort on an endpoint handle");
                abort_returned = 1;
            } else {
                wait_for_abort();
            }
        }
    } else if (!strcmp(which, "leak")) {
        MPI_Comm h[2];
        int me = two_endpoints(h), n = 0;
#pragma omp parallel num_threads(2)
        {
            if (me == 0 && omp_get_thread_num() == 1) {
                PMPI_Comm_size(h[1], &n);
                survived("PMPI_Comm_size of an endpoint handle");
                abort_returned = 1;
            } else {
                wait_for_abort();
            }
        }
    } else {
        fprintf(stderr, "unknown case %s\n", which);
        return 2;
    }
    MPI_Finalize();
    return 0;
}

/* ---- driver: eptest_child.h runs the cases; the verdict is this test's ---- */

static const ept_child_case cases[] = {
    {"send", "2", 2, 2, EPT_CHILD_ANY_FAILURE, {"MPI_Send", "rank", "999", NULL}, {"EPT_CHILD_SURVIVED", NULL}},
    {"bcast", "2", 1, 2, EPT_CHILD_ANY_FAILURE, {"MPI_Bcast", "root", "999", NULL}, {"EPT_CHILD_SURVIVED", NULL}},
    {"errors_abort", "2", 1, 2, EPT_CHILD_ANY_FAILURE, {"MPI_Send", "rank", "999", NULL}, {"EPT_CHILD_SURVIVED", NULL}},
    {"explicit", NULL, 2, 2, EPT_CHILD_ANY_FAILURE, {"MPI_Recv", "tag", "-3", NULL}, {"EPT_CHILD_SURVIVED", NULL}},
    {"abort", "2", 2, 2, 42, {NULL}, {"EPT_CHILD_SURVIVED", "not supported"}},
    {"abort_return", "2", 1, 2, 44, {NULL}, {"EPT_CHILD_SURVIVED", "not supported"}},
    {"abort_ep", NULL, 2, 2, 43, {NULL}, {"EPT_CHILD_SURVIVED", "not supported"}},
#if EPT_OPEN_MPI
    {"leak",
     NULL,
     2,
     2,
     EPT_CHILD_ANY_FAILURE,
     {"endpoint handle", "reached Open MPI", NULL},
     {"EPT_CHILD_SURVIVED", NULL}},
#else
    {"leak",
     NULL,
     2,
     2,
     EPT_CHILD_ANY_FAILURE,
     {"Comm_size", "nvalid communicator", NULL},
     {"EPT_CHILD_SURVIVED", NULL}},
#endif
};

int main(int argc, char **argv)
{
    static const ept_child_driver driver = {
        .case_var = "EPT_FATAL_CHILD",
        .child = child,
        EPT_CHILD_CASES(cases),
    };
    return ept_child_main(&driver, argc, argv);
}
