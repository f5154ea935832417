/* Fatal errors with the default error handler (MPI_ERRORS_ARE_FATAL).
 * Run as shape 1:0, the program is a driver that calls no MPI function: it
 * starts itself again under mpiexec (with EPT_FATAL_CHILD=<case> and
 * libepmpi.so preloaded) for each case below and checks how the child job
 * ends and what it prints:
 *   send      world 2x2: rank 3 calls MPI_Send to rank 999: the job aborts,
 *             and the message names MPI_Send, the rank, 999;
 *   bcast     world 1x2: MPI_Bcast with root 999: aborts naming MPI_Bcast, root;
 *   explicit  no world mode, 2 processes x 2 endpoints from
 *             MPI_Comm_create_endpoints: MPI_Recv with tag -3 on one
 *             endpoint: aborts naming MPI_Recv and the tag;
 *   abort     world 2x2: MPI_Abort(MPI_COMM_WORLD, 42) on one thread ends
 *             the job with exit code 42 (as under MPICH), with no error
 *             about MPI_Abort itself;
 *   abort_return  world 1x2, MPI_ERRORS_RETURN on MPI_COMM_WORLD:
 *             MPI_Abort(MPI_COMM_WORLD, 44) still ends the job, exit code 44;
 *   abort_ep  no world mode: MPI_Abort(endpoint handle, 43): exit code 43.
 * A child that survives its fatal call prints EPT_CHILD_SURVIVED. */
#include "eptest.h"

#include <limits.h>
#include <sys/wait.h>
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
    } else if (!strcmp(which, "explicit")) {
        int me;
        MPI_Comm h[2];
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        MPI_Comm_create_endpoints(MPI_COMM_WORLD, 2, MPI_INFO_NULL, h);
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
        int me;
        MPI_Comm h[2];
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        MPI_Comm_create_endpoints(MPI_COMM_WORLD, 2, MPI_INFO_NULL, h);
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
    } else {
        fprintf(stderr, "unknown case %s\n", which);
        return 2;
    }
    MPI_Finalize();
    return 0;
}

/* ---- driver ---------------------------------------------------------------- */

typedef struct {
    const char *name;
    int np;
    int endpoints; /* EPMPI_ENDPOINTS, 0: not set (no world mode) */
    int threads;   /* OMP_NUM_THREADS */
    int want_exit; /* expected exit code; -1: any failure */
    const char *must[4];
    const char *must_not[2];
} case_t;

static const case_t cases[] = {
    {"send", 2, 2, 2, -1, {"MPI_Send", "rank", "999", NULL}, {"EPT_CHILD_SURVIVED", NULL}},
    {"bcast", 1, 2, 2, -1, {"MPI_Bcast", "root", "999", NULL}, {"EPT_CHILD_SURVIVED", NULL}},
    {"explicit", 2, 0, 2, -1, {"MPI_Recv", "tag", "-3", NULL}, {"EPT_CHILD_SURVIVED", NULL}},
    {"abort", 2, 2, 2, 42, {NULL}, {"EPT_CHILD_SURVIVED", "not supported"}},
    {"abort_return", 1, 2, 2, 44, {NULL}, {"EPT_CHILD_SURVIVED", "not supported"}},
    {"abort_ep", 2, 0, 2, 43, {NULL}, {"EPT_CHILD_SURVIVED", "not supported"}},
};

/* Runs the child job of case c; returns its output (malloc'd) and status. */
static char *run_child(const char *self, const char *lib, const case_t *c, int *status)
{
    const char *mpiexec = getenv("MPIEXEC") && *getenv("MPIEXEC") ? getenv("MPIEXEC") : "mpiexec";
    char cmd[3 * PATH_MAX + 512], ep[64] = "";
    if (c->endpoints)
        snprintf(ep, sizeof ep, "-genv EPMPI_ENDPOINTS %d", c->endpoints);
    snprintf(cmd, sizeof cmd,
             "timeout -k 5 60 %s -n %d %s -genv OMP_NUM_THREADS %d -genv EPT_FATAL_CHILD %s -genv LD_PRELOAD '%s' "
             "'%s' 2>&1",
             mpiexec, c->np, ep, c->threads, c->name, lib, self);
    printf("--- case %s: %s\n", c->name, cmd);
    fflush(stdout);
    FILE *f = popen(cmd, "r");
    if (!f) {
        perror("popen");
        exit(1);
    }
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    size_t n;
    while (out && (n = fread(out + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 >= cap)
            out = realloc(out, cap *= 2);
    }
    if (!out) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    out[len] = '\0';
    *status = pclose(f);
    printf("%s", out);
    return out;
}

int main(int argc, char **argv)
{
    const char *which = getenv("EPT_FATAL_CHILD");
    if (which && *which)
        return child(which, argc, argv);

    /* The driver: no MPI here, so the nested mpiexec jobs are independent. */
    char self[PATH_MAX];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) {
        fprintf(stderr, "cannot find my own executable\n");
        return 1;
    }
    self[sl] = '\0';
    const char *pl = getenv("LD_PRELOAD");
    if (!pl || !strstr(pl, "libepmpi")) {
        fprintf(stderr, "LD_PRELOAD does not name libepmpi.so ('%s')\n", pl ? pl : "");
        return 1;
    }
    char *lib = strdup(pl);
    /* Neither the shell nor mpiexec needs the library; the child gets it
     * through -genv.  Forget the outer job's process-manager settings. */
    unsetenv("LD_PRELOAD");
    const char *pmvars[] = {"PMI_FD", "PMI_RANK", "PMI_SIZE", "PMI_PORT", "PMI_ID", "HYDI_CONTROL_FD",
                            "MPI_LOCALNRANKS", "MPI_LOCALRANKID", "EPMPI_ENDPOINTS"};
    for (size_t i = 0; i < sizeof pmvars / sizeof *pmvars; i++)
        unsetenv(pmvars[i]);

    int failed = 0;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const case_t *c = &cases[k];
        int st, exited, code;
        const char *why;
        char buf[256], *out = NULL;
        for (int attempt = 1;; attempt++) {
            free(out);
            out = run_child(self, lib, c, &st);
            exited = WIFEXITED(st), code = exited ? WEXITSTATUS(st) : -1;
            why = NULL;
            if (exited && (code == 124 || code == 137))
                why = "the child job timed out instead of aborting";
            else if (c->want_exit < 0 && exited && code == 0)
                why = "the child job succeeded: the erroneous call did not abort it";
            else if (c->want_exit >= 0 && (!exited || code != c->want_exit)) {
                snprintf(buf, sizeof buf, "the child job ended with exit code %d, expected %d", code, c->want_exit);
                why = buf;
            }
            for (int i = 0; !why && i < 4 && c->must[i]; i++)
                if (!strstr(out, c->must[i])) {
                    snprintf(buf, sizeof buf, "the output does not contain '%s'", c->must[i]);
                    why = buf;
                }
            for (int i = 0; !why && i < 2 && c->must_not[i]; i++)
                if (strstr(out, c->must_not[i])) {
                    snprintf(buf, sizeof buf, "the output contains '%s'", c->must_not[i]);
                    why = buf;
                }
            /* mpiexec sometimes drops a job's output when the job aborts (plain
             * MPICH too: a message printed just before MPI_Abort can be lost).
             * A failure whose output holds nothing from epmpi or the child
             * is tried again. */
            if (!why || attempt == 3 || strstr(out, "epmpi") || strstr(out, "EPT_CHILD"))
                break;
            printf("(the job printed nothing from epmpi: output lost? trying again)\n");
        }
        if (why) {
            printf("FAIL case %s (exit code %d): %s\n", c->name, code, why);
            failed = 1;
        } else {
            printf("ok: case %s (exit code %d)\n", c->name, code);
        }
        free(out);
    }
    free(lib);
    return failed;
}
