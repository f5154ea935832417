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

#include <limits.h>
#include <sys/wait.h>
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

/* ---- driver ---------------------------------------------------------------- */

typedef struct {
    const char *name;   /* EPT_THREADCAP_CHILD */
    const char *endpoints;
    int np, threads;
    int want_ok;        /* 1: the job must succeed and print EPT_CHILD_OK */
    const char *must[3];
} case_t;

static const case_t cases[] = {
    {"fatal", "2", 1, 3, 0, {"MPI_Comm_rank", "EPMPI_ENDPOINTS", NULL}},
    {"return", "2", 1, 3, 1, {"EPT_CHILD_OK", "EPMPI_ENDPOINTS", NULL}},
    {"init", "0", 2, 1, 0, {"EPMPI_ENDPOINTS", "'0'", NULL}},
    {"init", "-3", 2, 1, 0, {"EPMPI_ENDPOINTS", "-3", NULL}},
    {"init", "abc", 2, 1, 0, {"EPMPI_ENDPOINTS", "abc", NULL}},
    {"init", "1000000", 2, 1, 0, {"EPMPI_ENDPOINTS", "1000000", NULL}},
    {"init", "2x", 1, 1, 0, {"EPMPI_ENDPOINTS", "2x", NULL}},
};

static char *run_child(const char *self, const char *lib, const case_t *c, int *status)
{
    const char *mpiexec = getenv("MPIEXEC") && *getenv("MPIEXEC") ? getenv("MPIEXEC") : "mpiexec";
    char cmd[3 * PATH_MAX + 512];
    snprintf(cmd, sizeof cmd,
             "timeout -k 5 60 %s -n %d -genv EPMPI_ENDPOINTS '%s' -genv OMP_NUM_THREADS %d -genv EPT_THREADCAP_CHILD "
             "%s -genv LD_PRELOAD '%s' '%s' 2>&1",
             mpiexec, c->np, c->endpoints, c->threads, c->name, lib, self);
    printf("--- case %s, EPMPI_ENDPOINTS=%s: %s\n", c->name, c->endpoints, cmd);
    fflush(stdout);
    FILE *f = popen(cmd, "r");
    if (!f) {
        perror("popen");
        exit(1);
    }
    size_t cap = 1 << 16, len = 0, n;
    char *out = malloc(cap);
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
    const char *which = getenv("EPT_THREADCAP_CHILD");
    if (which && *which)
        return child(which, argc, argv);

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
                why = "the child job timed out";
            else if (c->want_ok && code != 0)
                why = "the child job failed";
            else if (!c->want_ok && exited && code == 0)
                why = "the child job succeeded: it should have been stopped";
            else if (strstr(out, "EPT_CHILD_SURVIVED"))
                why = "the child went on after the call that should have stopped it";
            else if (strstr(out, "EPT_CHILD_BAD"))
                why = "the child found a problem (EPT_CHILD_BAD above)";
            for (int i = 0; !why && i < 3 && c->must[i]; i++)
                if (!strstr(out, c->must[i])) {
                    snprintf(buf, sizeof buf, "the output does not contain '%s'", c->must[i]);
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
            printf("FAIL case %s, EPMPI_ENDPOINTS=%s (exit code %d): %s\n", c->name, c->endpoints, code, why);
            failed = 1;
        } else {
            printf("ok: case %s, EPMPI_ENDPOINTS=%s (exit code %d)\n", c->name, c->endpoints, code);
        }
        free(out);
    }
    free(lib);
    return failed;
}
