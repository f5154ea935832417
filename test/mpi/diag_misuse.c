/* Bad environment and misuse, seen from outside the job.  Run as shape
 * 1:0, the program is a driver (eptest_child.h) that starts itself again
 * under mpiexec for each case and judges how the child job ends:
 *   set:VAR=VALUE  a bad value of an EPMPI_* variable (set by the child
 *             before MPI_Init) stops the job at MPI_Init with a message
 *             naming the variable, the value and the accepted values
 *             (EPMPI_ENDPOINTS has its own cases in api_threadcap);
 *   debug, debug_off  world 1x2: a plain pthread and OpenMP thread 0 block
 *             in MPI_Recv on endpoint 0 at the same time; with EPMPI_DEBUG=1
 *             a warning names MPI_Recv and EPMPI_DEBUG, without it nothing
 *             is said; both receive their messages and the job succeeds;
 *   pending   world 1x2: MPI_Finalize with an unmatched MPI_Irecv, a
 *             started partitioned receive nobody sends to, an
 *             incomplete MPI_Issend and its unreceived message: the job
 *             succeeds with a warning listing each (rank, tag, communicator);
 *   coll_agree  world 1x2, MPI_ERRORS_RETURN: the two endpoints pass
 *             different roots to MPI_Bcast (generic path), counts to
 *             MPI_Allreduce (one-pass path, large shared fold and
 *             MPI_Iallreduce): each call returns MPI_ERR_ROOT or
 *             MPI_ERR_COUNT on both, and a correct call works afterwards;
 *   coll_fatal  world 2x2: a root mismatch inside process 0 aborts the job
 *             with a message naming MPI_Bcast instead of hanging;
 *   few_threads  world 2 x 4 with OMP_NUM_THREADS=2 (the README's line by
 *             hand without OMP_NUM_THREADS, on two cores): the threads of
 *             the default region call MPI_Barrier; instead of hanging, the
 *             job stops with a message naming the failing world rank,
 *             EPMPI_ENDPOINTS=4 and the region's 2 threads;
 *   outside   world 2 x 2: MPI_Allreduce on MPI_COMM_WORLD outside any
 *             parallel region stops the job, explaining that the caller is
 *             endpoint 0 and the others cannot join;
 *   few_return  world 1 x 3 and 2 x 3, MPI_ERRORS_RETURN: a region of 2
 *             threads calls MPI_Allreduce (the one-process path, and the
 *             generic one); both get MPI_ERR_OTHER naming the thread count,
 *             and a later MPI_Barrier from a full region fails at once
 *             naming the earlier failure (never a hang or wrong data);
 *   stuck     world 1 x 2, EPMPI_DEBUG=1: rank 1 reaches MPI_Barrier on a
 *             named duplicate 8 s after rank 0: a warning names the call,
 *             the waiting rank, the communicator and the rank waited for;
 *   unfreed   world 1 x 2, EPMPI_DEBUG=1: a named duplicate of
 *             MPI_COMM_WORLD is not freed (another one is): MPI_Finalize
 *             names it, once; unfreed_quiet: without EPMPI_DEBUG (legal:
 *             MPI_Finalize frees it), nothing is said;
 *   few_p2p   world 2 x 2 with OMP_NUM_THREADS=1: a MPI_Sendrecv ring in
 *             the default region, which cannot complete: within 1 s a
 *             warning names the region's thread count, EPMPI_ENDPOINTS and
 *             OMP_NUM_THREADS (each process ends itself after 6 s, which
 *             hydra reports as success or failure depending on its version
 *             and on which process ends first: any ending but a timeout);
 *   late_thread  world 1 x 2, EPMPI_THREADS=first-call: MPI_Init's thread
 *             calls MPI_Barrier while no other thread holds endpoint 1; a
 *             pthread takes it 8 s later and the barrier completes: at 5 s
 *             a warning (without EPMPI_DEBUG) names MPI_COMM_WORLD, the
 *             endpoint no thread holds and EPMPI_THREADS=first-call;
 *   die_exit, die_abort  a process dies (_exit, abort()) while the others
 *             wait in MPI_Recv for it: the job ends with an error within
 *             its 30 s limit, not a hang. */
#include "eptest.h"
#include "eptest_child.h"

#include <pthread.h>
#include <unistd.h>

/* ---- children ------------------------------------------------------------ */

static void *pthread_recv(void *arg)
{
    int *x = arg;
    MPI_Recv(x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

/* OpenMP thread 0 and a pthread (endpoint 0 as well) both wait for rank 1,
 * which sends late. */
static void two_threads_one_endpoint(void)
{
#pragma omp parallel num_threads(2)
    {
        int r, a = 0, b = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        if (r == 0) {
            pthread_t th;
            EPT_CHECK(pthread_create(&th, NULL, pthread_recv, &a) == 0, "pthread_create");
            EPT_OK(MPI_Recv(&b, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            pthread_join(th, NULL);
            EPT_CHECK(a == 11 && b == 22, "received %d and %d", a, b);
        } else {
            int v1 = 11, v2 = 22;
            usleep(500000);
            EPT_OK(MPI_Send(&v1, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
            EPT_OK(MPI_Send(&v2, 1, MPI_INT, 0, 2, MPI_COMM_WORLD));
        }
    }
}

static void pending_at_finalize(void)
{
    static int in, out = 5, parts[4];
    MPI_Request rq;
#pragma omp parallel num_threads(2)
    {
        int r;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        if (r == 0) {
            EPT_OK(MPI_Irecv(&in, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, &rq));
#if EP_HAVE_MPI_Precv_init /* MPI 4.0's partitioned communication: not in every MPI */
            static MPI_Request prq;
            EPT_OK(MPI_Precv_init(parts, 2, 2, MPI_INT, 1, 55, MPI_COMM_WORLD, MPI_INFO_NULL, &prq));
            EPT_OK(MPI_Start(&prq));
#else
            (void)parts;
#endif
        } else
            EPT_OK(MPI_Issend(&out, 1, MPI_INT, 0, 66, MPI_COMM_WORLD, &rq));
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* Returns the error class of rc, as a name for the log. */
static const char *class_name(int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls == MPI_SUCCESS     ? "MPI_SUCCESS"
           : cls == MPI_ERR_ROOT  ? "MPI_ERR_ROOT"
           : cls == MPI_ERR_COUNT ? "MPI_ERR_COUNT"
                                  : "other";
}

#define EXPECT(call, want)                                                  \
    do {                                                                    \
        int rc_ = (call);                                                   \
        char msg_[MPI_MAX_ERROR_STRING] = "";                               \
        int len_ = 0;                                                       \
        if (rc_ != MPI_SUCCESS)                                             \
            MPI_Error_string(rc_, msg_, &len_);                             \
        printf("rank %d: %s -> %s: %s\n", r, #call, class_name(rc_), msg_); \
        if (strcmp(class_name(rc_), want))                                  \
            ok = 0;                                                         \
    } while (0)

static void coll_agree(void)
{
    static double big[2][1 << 17]; /* 1 MiB each: the shared fold */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#pragma omp parallel num_threads(2)
    {
        int r, ok = 1, x[1000] = {0}, y[2] = {1, 1}, z[2];
        MPI_Request rq;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        EXPECT(MPI_Bcast(x, 1000, MPI_INT, r, MPI_COMM_WORLD), "MPI_ERR_ROOT");
        EXPECT(MPI_Allreduce(y, z, 1 + r, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_ERR_COUNT");
        EXPECT(MPI_Allreduce(MPI_IN_PLACE, big[r], (1 << 17) - r, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
               "MPI_ERR_COUNT");
        EXPECT(MPI_Iallreduce(y, z, 1 + r, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq), "MPI_SUCCESS");
        EXPECT(MPI_Wait(&rq, MPI_STATUS_IGNORE), "MPI_ERR_COUNT");
        EXPECT(MPI_Allreduce(y, z, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_SUCCESS");
        if (z[0] != 2 || z[1] != 2)
            ok = 0;
        if (ok)
            printf("EPT_AGREE_OK rank %d\n", r);
        fflush(stdout);
    }
}

static void coll_fatal(void)
{
#pragma omp parallel num_threads(2)
    {
        int r, x[4] = {0};
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Bcast(x, 4, MPI_INT, r == 1 ? 1 : 0, MPI_COMM_WORLD);
        printf("EPT_CHILD_SURVIVED: MPI_Bcast with mismatched roots returned on rank %d\n", r);
        fflush(stdout);
    }
}

static void few_threads(void)
{
#pragma omp parallel
    {
        MPI_Barrier(MPI_COMM_WORLD);
        printf("EPT_CHILD_SURVIVED: MPI_Barrier returned in a region of %d threads\n", omp_get_num_threads());
        fflush(stdout);
    }
}

static void outside(void)
{
    int x = 1, y;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("EPT_CHILD_SURVIVED: MPI_Allreduce returned outside any region\n");
}

static int has_class_text(int rc, int cls, const char *a, const char *b)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0, c = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &c);
        MPI_Error_string(rc, msg, &len);
    }
    printf("got class %d: %s\n", c, msg);
    return c == cls && strstr(msg, a) && (!b || strstr(msg, b));
}

static void few_return(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#pragma omp parallel num_threads(2)
    {
        int r, x = 1, y = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        int rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (has_class_text(rc, MPI_ERR_OTHER, "EPMPI_ENDPOINTS=3", "region has 2 threads"))
            printf("EPT_FEW_OK rank %d\n", r);
        fflush(stdout);
    }
#pragma omp parallel num_threads(3)
    {
        int r, rc = MPI_Barrier(MPI_COMM_WORLD);
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        if (has_class_text(rc, MPI_ERR_OTHER, "MPI_Barrier: an earlier collective call", NULL))
            printf("EPT_DEAD_OK rank %d\n", r);
        fflush(stdout);
    }
}

static void *late_barrier(void *arg)
{
    (void)arg;
    sleep(8);                            /* the warning comes at 5 s: room for a loaded machine */
    EPT_OK(MPI_Barrier(MPI_COMM_WORLD)); /* its first call: it takes endpoint 1 */
    return NULL;
}

static void hung_as_expected(int sig)
{
    (void)sig;
    static const char m[] = "EPT_HUNG_AS_EXPECTED\n";
    if (write(1, m, sizeof m - 1) < 0)
        _exit(1);
    _exit(0);
}

static void few_p2p(void)
{
    signal(SIGALRM, hung_as_expected);
    alarm(6);
#pragma omp parallel
    {
        int r, s, x = 0, y;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &s);
        MPI_Sendrecv(&x, 1, MPI_INT, (r + 1) % s, 0, &y, 1, MPI_INT, (r + s - 1) % s, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        printf("EPT_CHILD_SURVIVED: rank %d\n", r);
    }
}

static void late_thread(void)
{
    pthread_t t;
    EPT_CHECK(pthread_create(&t, NULL, late_barrier, NULL) == 0, "pthread_create");
    EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
    pthread_join(t, NULL);
    printf("EPT_CHILD_OK\n");
}

static void stuck(void)
{
#pragma omp parallel num_threads(2)
    {
        MPI_Comm dup;
        EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        EPT_OK(MPI_Comm_set_name(dup, "ocean"));
        if (omp_get_thread_num() == 1)
            sleep(8); /* the warning comes at 5 s */
        EPT_OK(MPI_Barrier(dup));
        EPT_OK(MPI_Comm_free(&dup));
    }
    printf("EPT_CHILD_OK\n");
}

static void unfreed(void)
{
#pragma omp parallel num_threads(2)
    {
        MPI_Comm kept, freed;
        EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &kept));
        EPT_OK(MPI_Comm_set_name(kept, "ocean"));
        EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &freed));
        EPT_OK(MPI_Comm_free(&freed));
    }
    printf("EPT_CHILD_OK\n");
}

/* Rank `dying` (thread 0 of the last process) dies once everyone is in
 * MPI_Recv waiting for it. */
static void die(int use_abort)
{
#pragma omp parallel
    {
        int r, n, x;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &n);
        int dying = n - omp_get_num_threads();
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == dying) {
            usleep(300000);
            if (use_abort)
                abort();
            _exit(3);
        }
        MPI_Recv(&x, 1, MPI_INT, dying, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("EPT_CHILD_SURVIVED: rank %d received from the dead rank\n", r);
        fflush(stdout);
    }
}

/* The child cases that are one function, by name. */
static const struct {
    const char *name;
    void (*run)(void);
} plain_cases[] = {
    {"pending", pending_at_finalize},
    {"coll_agree", coll_agree},
    {"coll_fatal", coll_fatal},
    {"few_threads", few_threads},
    {"outside", outside},
    {"few_return", few_return},
    {"stuck", stuck},
    {"late_thread", late_thread},
    {"few_p2p", few_p2p},
    {"unfreed", unfreed},
    {"unfreed_quiet", unfreed},
    {NULL, NULL},
};

static int child(const char *which, int argc, char **argv)
{
    int provided;
    if (!strncmp(which, "set:", 4)) {
        char var[64];
        const char *eq = strchr(which, '=');
        snprintf(var, sizeof var, "%.*s", (int)(eq - which - 4), which + 4);
        setenv(var, eq + 1, 1);
    }
    if (!strcmp(which, "debug") || !strcmp(which, "stuck") || !strcmp(which, "unfreed"))
        setenv("EPMPI_DEBUG", "1", 1);
    if (!strcmp(which, "late_thread"))
        setenv("EPMPI_THREADS", "first-call", 1);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (!strncmp(which, "set:", 4)) {
        printf("EPT_CHILD_SURVIVED: MPI_Init returned with %s\n", which + 4);
        fflush(stdout);
    } else if (!strcmp(which, "debug") || !strcmp(which, "debug_off")) {
        two_threads_one_endpoint();
        printf("EPT_CHILD_OK\n");
    } else if (!strcmp(which, "die_exit") || !strcmp(which, "die_abort")) {
        die(!strcmp(which, "die_abort"));
    } else {
        int k = 0;
        while (plain_cases[k].name && strcmp(which, plain_cases[k].name))
            k++;
        if (!plain_cases[k].name) {
            fprintf(stderr, "unknown case %s\n", which);
            return 2;
        }
        plain_cases[k].run();
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}

/* ---- driver ---------------------------------------------------------------- */

#define BAD(var, value, accepted)                                                                                  \
    {                                                                                                              \
        "set:" var "=" value, NULL, 2, 1, EPT_CHILD_ANY_FAILURE, {"MPI_Init", var "='" value "'", accepted, NULL}, \
        {                                                                                                          \
            "EPT_CHILD_SURVIVED", NULL                                                                             \
        }                                                                                                          \
    }

/* Every case ends well within this (seconds); a dead process must not
 * leave the job hanging longer. */
#define EPT_DIAG_LIMIT 30

#define RECV_BLOCKS "two threads block on one endpoint"

/* What the pending case leaves at MPI_Finalize: a partitioned receive
 * too where the MPI has partitioned communication. */
#if EP_HAVE_MPI_Precv_init
#define PENDING_OPS "4"
#define PENDING_PARTITIONED "rank 0 of MPI_COMM_WORLD: partitioned receive (request not completed) from rank 1, tag 55"
#else
#define PENDING_OPS "3"
#define PENDING_PARTITIONED "rank 0 of MPI_COMM_WORLD: receive (request not completed) from rank 1, tag 77"
#endif

static const ept_child_case cases[] = {
    BAD("EPMPI_WAIT", "busy", "use spin, yield or sleep"),
    BAD("EPMPI_EAGER_LIMIT", "-1", "a byte count from 0 to 1048576"),
    BAD("EPMPI_EAGER_LIMIT", "4k", "a byte count from 0 to 1048576"),
    BAD("EPMPI_VERBOSE", "yes", "use 0 or 1"),
    BAD("EPMPI_DEBUG", "2", "use 0 or 1"),
    BAD("EPMPI_STATS", "on", "use 0 or 1"),
    BAD("EPMPI_COLL_ALGORITHM", "fast", "use auto or gathered"),
    BAD("EPMPI_P2P_PATH", "direct", "use auto, engine or mpich"),
    BAD("EPMPI_TRANSPORT", "verbs", "use auto, ucx or mpi"),
    BAD("EPMPI_WORKERS", "0", "a number of workers from 1 to 256"),
    BAD("EPMPI_THREADS", "pthreads", "use openmp or first-call"),
    BAD("EPMPI_STATS_FILE", "/nonexistent/dir/stats.csv", "cannot be written"),
    {"debug", "2", 1, 2, 0, {"EPT_CHILD_OK", "MPI_Recv", RECV_BLOCKS, "EPMPI_DEBUG"}, {NULL}},
    {"debug_off", "2", 1, 2, 0, {"EPT_CHILD_OK", NULL}, {RECV_BLOCKS, NULL}},
    {"pending",
     "2",
     1,
     2,
     0,
     {"MPI_Finalize: process 0 still has " PENDING_OPS " pending operations",
      "rank 0 of MPI_COMM_WORLD: receive (request not completed) from rank 1, tag 77", PENDING_PARTITIONED,
      "rank 1 of MPI_COMM_WORLD: send (request not completed) to rank 0, tag 66, 4 bytes",
      "rank 0 of MPI_COMM_WORLD: message arrived but never received, from rank 1, tag 66, 4 bytes"},
     {NULL}},
    {"coll_agree",
     "2",
     1,
     2,
     0,
     {"EPT_AGREE_OK rank 0", "EPT_AGREE_OK rank 1", "different roots", "different amounts"},
     {NULL}},
    {"coll_fatal",
     "2",
     2,
     2,
     EPT_CHILD_ANY_FAILURE,
     {"MPI_Bcast", "different roots", "epmpi: fatal error in world rank ", " (process 0, endpoint "},
     {"EPT_CHILD_SURVIVED", NULL}},
    {"few_threads",
     "4",
     2,
     2,
     EPT_CHILD_ANY_FAILURE,
     {"epmpi: fatal error in world rank ", "MPI_Barrier: with EPMPI_ENDPOINTS=4",
      "the caller's parallel region has 2 threads", "endpoints 2, 3 of this process"},
     {"EPT_CHILD_SURVIVED", NULL}},
    {"outside",
     "2",
     2,
     2,
     EPT_CHILD_ANY_FAILURE,
     {"MPI_Allreduce: called outside any parallel region", "EPMPI_ENDPOINTS=2", "endpoint 1 of this process",
      "a communicator with one endpoint per process (MPI_Comm_split", NULL},
     {"EPT_CHILD_SURVIVED", NULL}},
    {"few_return", "3", 1, 3, 0, {"EPT_FEW_OK rank 0", "EPT_FEW_OK rank 1", "EPT_DEAD_OK rank 2", NULL}, {NULL}},
    {"few_return", "3", 2, 3, 0, {"EPT_FEW_OK rank 3", "EPT_FEW_OK rank 4", "EPT_DEAD_OK rank 5", NULL}, {NULL}},
    {"stuck",
     "2",
     1,
     2,
     0,
     {"EPT_CHILD_OK", "epmpi: warning (EPMPI_DEBUG): MPI_Barrier: world rank 0 (process 0, endpoint 0), rank 0 of",
      "'ocean', has waited 5 s for rank 1 of that communicator", NULL},
     {NULL}},
    {"few_p2p",
     "2",
     2,
     1,
     EPT_CHILD_ANY_EXIT,
     {"EPT_HUNG_AS_EXPECTED",
      "has waited 1 s in a parallel region of 1 thread, but EPMPI_ENDPOINTS=2: the rank of thread 1 of each process "
      "cannot send, receive or join a collective",
      "(OMP_NUM_THREADS=2 or num_threads(2); OMP_NUM_THREADS is 1)", NULL},
     {"EPT_CHILD_SURVIVED", NULL}},
    {"late_thread",
     "2",
     1,
     1,
     0,
     {"EPT_CHILD_OK",
      "epmpi: warning: MPI_Barrier on MPI_COMM_WORLD (world rank 0) has waited 5 s for endpoint 1 of process 0 "
      "(world rank 1), which no thread holds: with EPMPI_THREADS=first-call",
      NULL},
     {NULL}},
    {"unfreed",
     "2",
     1,
     2,
     0,
     {"MPI_Finalize: process 0 has 1 endpoint communicator not freed", "'ocean' (size 2): ranks 0, 1 here", NULL},
     {NULL}},
    {"unfreed_quiet", "2", 1, 2, 0, {"EPT_CHILD_OK", NULL}, {"not freed", NULL}},
    {"die_exit", "2", 2, 2, EPT_CHILD_ANY_FAILURE, {NULL}, {"EPT_CHILD_SURVIVED", NULL}},
    {"die_abort", "1", 2, 1, EPT_CHILD_ANY_FAILURE, {NULL}, {"EPT_CHILD_SURVIVED", NULL}},
};

int main(int argc, char **argv)
{
    static const ept_child_driver driver = {
        .case_var = "EPT_DIAG_CHILD",
        .child = child,
        EPT_CHILD_CASES(cases),
        .limit = EPT_DIAG_LIMIT,
    };
    return ept_child_main(&driver, argc, argv);
}
