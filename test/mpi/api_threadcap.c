/* World mode's limits: EPMPI_ENDPOINTS.  Run as shape 1:0, the program is a
 * driver that calls no MPI function: it starts itself again under mpiexec
 * (with EPT_THREADCAP_CHILD=<case> and libepmpi.so preloaded) and checks how
 * each child job ends and what it prints:
 *   fatal   EPMPI_ENDPOINTS=2 with 3 OpenMP threads: thread 2 has no
 *           endpoint; its MPI_Comm_rank(MPI_COMM_WORLD) aborts the job with
 *           a message naming MPI_Comm_rank and EPMPI_ENDPOINTS;
 *   return  the same with MPI_ERRORS_RETURN on MPI_COMM_WORLD and
 *           MPI_COMM_SELF: thread 2's MPI_Comm_rank, MPI_Send and
 *           MPI_Comm_size(MPI_COMM_SELF) return errors whose strings name the
 *           call and EPMPI_ENDPOINTS, and threads 0 and 1 go on normally
 *           (the child prints EPT_CHILD_OK and exits 0);
 *   init    bad values of EPMPI_ENDPOINTS (0, -3, abc, 1000000, 2x) stop
 *           the job in MPI_Init with a message naming EPMPI_ENDPOINTS.
 * A child that survives what should have stopped it prints
 * EPT_CHILD_SURVIVED. */
#include "eptest.h"
#include "eptest_child.h"

#include <unistd.h>

/* ---- children ------------------------------------------------------------ */

static int child(const char *which, int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (!strcmp(which, "init")) {
        printf("EPT_CHILD_SURVIVED: MPI_Init returned with EPMPI_ENDPOINTS='%s'\n", getenv("EPMPI_ENDPOINTS"));
        fflush(stdout);
    } else if (!strcmp(which, "fatal")) {
#pragma omp parallel num_threads(3)
        {
            if (omp_get_thread_num() == 2) {
                int r = -1;
                MPI_Comm_rank(MPI_COMM_WORLD, &r);
                printf("EPT_CHILD_SURVIVED: thread 2 got rank %d\n", r);
                fflush(stdout);
            } else {
                MPI_Barrier(MPI_COMM_WORLD);
                sleep(10); /* wait for the abort (bounded) */
            }
        }
    } else if (!strcmp(which, "return")) {
        int bad = 0;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
#pragma omp parallel num_threads(3) reduction(+ : bad)
        {
            int t = omp_get_thread_num();
            if (t == 2) {
                int r = -1, s = -1, v = 0, rc[3];
                char msg[MPI_MAX_ERROR_STRING];
                const char *calls[3] = {"MPI_Comm_rank", "MPI_Send", "MPI_Comm_size"};
                rc[0] = MPI_Comm_rank(MPI_COMM_WORLD, &r);
                rc[1] = MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
                rc[2] = MPI_Comm_size(MPI_COMM_SELF, &s);
                for (int i = 0; i < 3; i++) {
                    int len = 0;
                    msg[0] = '\0';
                    if (rc[i] != MPI_SUCCESS)
                        MPI_Error_string(rc[i], msg, &len);
                    if (rc[i] == MPI_SUCCESS || !strstr(msg, calls[i]) || !strstr(msg, "EPMPI_ENDPOINTS")) {
                        printf("EPT_CHILD_BAD: %s on thread 2 returned %d, '%s'\n", calls[i], rc[i], msg);
                        bad++;
                    } else {
                        printf("thread 2: %s: '%s'\n", calls[i], msg);
                    }
                }
                fflush(stdout);
            } else {
                int r = -1, sum = -1;
                MPI_Comm_rank(MPI_COMM_WORLD, &r);
                if (r != t) {
                    printf("EPT_CHILD_BAD: thread %d has rank %d\n", t, r);
                    bad++;
                }
                MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
                if (sum != 1) {
                    printf("EPT_CHILD_BAD: thread %d: allreduce gives %d\n", t, sum);
                    bad++;
                }
            }
        }
        /* Nothing reached endpoint 0 from thread 2's MPI_Send. */
        int flag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            printf("EPT_CHILD_BAD: a message arrived from the thread without an endpoint\n");
            bad++;
        }
        if (!bad)
            printf("EPT_CHILD_OK\n");
        fflush(stdout);
    } else {
        fprintf(stderr, "unknown case %s\n", which);
        return 2;
    }
    MPI_Finalize();
    return 0;
}

/* ---- driver: eptest_child.h runs the cases; the verdict is this test's ---- */

static const ept_child_case cases[] = {
    {"fatal", "2", 1, 3, EPT_CHILD_ANY_FAILURE, {"MPI_Comm_rank", "EPMPI_ENDPOINTS", NULL}, {NULL}},
    {"return", "2", 1, 3, 0, {"EPT_CHILD_OK", "EPMPI_ENDPOINTS", NULL}, {NULL}},
    {"init", "0", 2, 1, EPT_CHILD_ANY_FAILURE, {"EPMPI_ENDPOINTS", "'0'", NULL}, {NULL}},
    {"init", "-3", 2, 1, EPT_CHILD_ANY_FAILURE, {"EPMPI_ENDPOINTS", "-3", NULL}, {NULL}},
    {"init", "abc", 2, 1, EPT_CHILD_ANY_FAILURE, {"EPMPI_ENDPOINTS", "abc", NULL}, {NULL}},
    {"init", "1000000", 2, 1, EPT_CHILD_ANY_FAILURE, {"EPMPI_ENDPOINTS", "1000000", NULL}, {NULL}},
    {"init", "2x", 1, 1, EPT_CHILD_ANY_FAILURE, {"EPMPI_ENDPOINTS", "2x", NULL}, {NULL}},
};

/* A case either must be stopped (any failure) or must run clean (exit 0,
 * EPT_CHILD_OK among its must strings); either way the child's own markers
 * say more than a missing string would, so they are looked at first. */
static const char *judge(const ept_child_case *c, int exited, int code, const char *out, char *buf, size_t size)
{
    if (ept_child_timed_out(exited, code))
        return "the child job timed out";
    if (c->want_exit == 0 && code != 0)
        return "the child job failed";
    if (c->want_exit == EPT_CHILD_ANY_FAILURE && exited && code == 0)
        return "the child job succeeded: it should have been stopped";
    if (strstr(out, "EPT_CHILD_SURVIVED"))
        return "the child went on after the call that should have stopped it";
    if (strstr(out, "EPT_CHILD_BAD"))
        return "the child found a problem (EPT_CHILD_BAD above)";
    return ept_child_check_output(c, out, buf, size);
}

int main(int argc, char **argv)
{
    static const ept_child_driver driver = {
        .case_var = "EPT_THREADCAP_CHILD",
        .child = child,
        EPT_CHILD_CASES(cases),
        .judge = judge,
        .label_endpoints = 1, /* the init cases differ only in EPMPI_ENDPOINTS */
    };
    return ept_child_main(&driver, argc, argv);
}
