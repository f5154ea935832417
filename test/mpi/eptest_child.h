/* The driver of the test programs that run themselves as a child MPI job
 * (api_fatal, api_threadcap).  What those tests check (that a job aborts,
 * with which exit code, and what it prints on the way) cannot be seen from
 * inside the job.  So the program, run as shape 1:0, calls no MPI function:
 * it starts its own executable again under a nested mpiexec (hydra's, or
 * Open MPI's mpirun when built for it), once per case,
 * naming the case in an environment variable that the child half of the
 * program reads, and judges how each child job ends.
 *
 * Each test keeps its cases and its verdict (what counts as the right
 * ending, in its own words); the running, the retries and the report are
 * here, once. */
#ifndef EPTEST_CHILD_H
#define EPTEST_CHILD_H

#include <mpi.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* want_exit of a case whose job may end with any exit code but 0: how an
 * MPI error aborts a job is MPICH's business, not the test's. */
#define EPT_CHILD_ANY_FAILURE (-1)
/* want_exit of a case whose processes end themselves without
 * MPI_Finalize: hydra reports that as 0 or as a failure depending on its
 * version and on which process ends first, so any ending but a timeout. */
#define EPT_CHILD_ANY_EXIT (-2)

typedef struct {
    const char *name;        /* the case, as the child reads it */
    const char *endpoints;   /* EPMPI_ENDPOINTS of the child job; NULL: unset (no world mode) */
    int np;                  /* processes */
    int threads;             /* OMP_NUM_THREADS */
    int want_exit;           /* the exit code the job must end with, EPT_CHILD_ANY_FAILURE or _ANY_EXIT */
    const char *must[8];     /* the output contains each of these (up to a NULL) */
    const char *must_not[2]; /* and none of these */
} ept_child_case;

/* The verdict on one run of case c, whose job ended with status code when
 * exited is set (else code is -1), printing out: NULL if the run is right,
 * else why not, a constant or written into buf. */
typedef const char *ept_child_judge(const ept_child_case *c, int exited, int code, const char *out, char *buf,
                                    size_t size);

typedef struct {
    const char *case_var; /* the environment variable that names the case to the child */
    /* The child half: runs case which (MPI_Init to MPI_Finalize), returns
     * the process's exit code. */
    int (*child)(const char *which, int argc, char **argv);
    const ept_child_case *cases;
    size_t ncases;
    /* The verdict; NULL: ept_child_check_exit, then ept_child_check_output. */
    ept_child_judge *judge;
    /* Several cases share a name and differ only in EPMPI_ENDPOINTS: name
     * it too in each case's lines of the log. */
    int label_endpoints;
    /* Seconds a child job may take (0: 60) before `timeout` ends it: a
     * test that a job ends promptly says how promptly. */
    int limit;
} ept_child_driver;

/* Fills in the cases of a driver from a table, counted where it stands. */
#define EPT_CHILD_CASES(table) .cases = (table), .ncases = sizeof(table) / sizeof *(table)

/* `timeout` ends a job that outlives its limit with 124, or 137 when it
 * has to kill it; a hang is never the ending a case wants. */
static inline int ept_child_timed_out(int exited, int code) { return exited && (code == 124 || code == 137); }

/* The exit-code part of a verdict: a hang is never right, a case that
 * wants a failure must not succeed, one that wants a code must end with
 * it.  NULL when the ending is right. */
static inline const char *ept_child_check_exit(const ept_child_case *c, int exited, int code, char *buf, size_t size)
{
    if (ept_child_timed_out(exited, code))
        return "the child job timed out (its time limit is in the command above)";
    if (c->want_exit == EPT_CHILD_ANY_FAILURE && exited && code == 0)
        return "the child job succeeded: what should have stopped it did not";
    if (c->want_exit >= 0 && (!exited || code != c->want_exit)) {
        snprintf(buf, size, "the child job ended with exit code %d, expected %d", code, c->want_exit);
        return buf;
    }
    return NULL;
}

/* The part of a verdict every test shares: the case's must and must_not
 * strings against the output; NULL if they all hold. */
static inline const char *ept_child_check_output(const ept_child_case *c, const char *out, char *buf, size_t size)
{
    for (int i = 0; i < (int)(sizeof c->must / sizeof *c->must) && c->must[i]; i++)
        if (!strstr(out, c->must[i])) {
            snprintf(buf, size, "the output does not contain '%s'", c->must[i]);
            return buf;
        }
    for (int i = 0; i < 2 && c->must_not[i]; i++)
        if (strstr(out, c->must_not[i])) {
            snprintf(buf, size, "the output contains '%s'", c->must_not[i]);
            return buf;
        }
    return NULL;
}

/* Runs the child job of case c; returns its output, stdout and stderr
 * together (malloc'd), and its status from pclose. */
static inline char *ept_child_run(const ept_child_driver *d, const ept_child_case *c, const char *label,
                                  const char *self, const char *lib, int *status)
{
    const char *mpiexec = getenv("MPIEXEC") && *getenv("MPIEXEC") ? getenv("MPIEXEC") : "mpiexec";
    char cmd[3 * PATH_MAX + 512], ep[64] = "";
    int limit = d->limit > 0 ? d->limit : 60;
    /* The job's own limit is well inside the one run-mpi puts on the whole
     * driver, so a hung case is reported as that case. */
#ifdef OPEN_MPI
    /* Open MPI's mpirun: -x sets a variable; it runs as root, and more
     * processes than cores, only when told. */
    if (c->endpoints)
        snprintf(ep, sizeof ep, "-x EPMPI_ENDPOINTS='%s' ", c->endpoints);
    snprintf(cmd, sizeof cmd,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 5 %d %s -n %d --oversubscribe "
             "--bind-to none %s-x OMP_NUM_THREADS=%d -x %s=%s -x LD_PRELOAD='%s' '%s' 2>&1",
             limit, mpiexec, c->np, ep, c->threads, d->case_var, c->name, lib, self);
#else
    if (c->endpoints)
        snprintf(ep, sizeof ep, "-genv EPMPI_ENDPOINTS '%s' ", c->endpoints);
    snprintf(cmd, sizeof cmd,
             "timeout -k 5 %d %s -n %d %s-genv OMP_NUM_THREADS %d -genv %s %s -genv LD_PRELOAD '%s' '%s' 2>&1", limit,
             mpiexec, c->np, ep, c->threads, d->case_var, c->name, lib, self);
#endif
    printf("--- %s: %s\n", label, cmd);
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
    /* The log shows what the job said, whatever the verdict. */
    printf("%s", out);
    return out;
}

/* Runs every case of d, each as its own child job, and reports each as
 * "ok:" or "FAIL".  Returns the number of failed cases, or -1 when the
 * driver cannot start child jobs at all. */
static inline int ept_child_run_all(const ept_child_driver *d)
{
    char self[PATH_MAX];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) {
        fprintf(stderr, "cannot find my own executable\n");
        return -1;
    }
    self[sl] = '\0';
    const char *pl = getenv("LD_PRELOAD");
    if (!pl || !strstr(pl, "libepmpi")) {
        fprintf(stderr, "LD_PRELOAD does not name libepmpi.so ('%s')\n", pl ? pl : "");
        return -1;
    }
    char *lib = strdup(pl);
    if (!lib) {
        fprintf(stderr, "out of memory\n");
        return -1;
    }
    /* Neither the shell nor mpiexec needs the library; the child gets it
     * through the launcher.  The outer job's process-manager settings would tie
     * the nested mpiexec to the outer job, and its EPMPI_ENDPOINTS would
     * leak into the cases that run without world mode. */
    unsetenv("LD_PRELOAD");
    const char *pmvars[] = {"PMI_FD",          "PMI_RANK",        "PMI_SIZE",        "PMI_PORT",       "PMI_ID",
                            "HYDI_CONTROL_FD", "MPI_LOCALNRANKS", "MPI_LOCALRANKID", "EPMPI_ENDPOINTS"};
    for (size_t i = 0; i < sizeof pmvars / sizeof *pmvars; i++)
        unsetenv(pmvars[i]);
    /* Open MPI's: every OMPI_, PMIX_, ORTE_ and OPAL_ variable the outer
     * mpirun gave this process (named first: unsetenv changes environ). */
    extern char **environ;
    char *names[512];
    size_t nn = 0;
    for (char **e = environ; *e && nn < sizeof names / sizeof *names; e++)
        if (!strncmp(*e, "OMPI_", 5) || !strncmp(*e, "PMIX_", 5) || !strncmp(*e, "ORTE_", 5) ||
            !strncmp(*e, "OPAL_", 5))
            names[nn++] = strndup(*e, strcspn(*e, "="));
    for (size_t i = 0; i < nn; i++) {
        if (names[i])
            unsetenv(names[i]);
        free(names[i]);
    }

    int failed = 0;
    for (size_t k = 0; k < d->ncases; k++) {
        const ept_child_case *c = &d->cases[k];
        int st, exited, code;
        const char *why;
        char label[256], buf[256], *out = NULL;
        if (d->label_endpoints)
            snprintf(label, sizeof label, "case %s, EPMPI_ENDPOINTS=%s", c->name,
                     c->endpoints ? c->endpoints : "(unset)");
        else
            snprintf(label, sizeof label, "case %s", c->name);
        for (int attempt = 1;; attempt++) {
            free(out);
            out = ept_child_run(d, c, label, self, lib, &st);
            exited = WIFEXITED(st), code = exited ? WEXITSTATUS(st) : -1;
            if (d->judge)
                why = d->judge(c, exited, code, out, buf, sizeof buf);
            else if (!(why = ept_child_check_exit(c, exited, code, buf, sizeof buf)))
                why = ept_child_check_output(c, out, buf, sizeof buf);
            /* mpiexec sometimes drops a job's output when the job aborts (plain
             * MPICH too: a message printed just before MPI_Abort can be lost).
             * A failure whose output holds nothing from epmpi or the child
             * is tried again. */
            if (!why || attempt == 3 || strstr(out, "epmpi") || strstr(out, "EPT_CHILD"))
                break;
            printf("(the job printed nothing from epmpi: output lost? trying again)\n");
        }
        if (why) {
            printf("FAIL %s (exit code %d): %s\n", label, code, why);
            failed++;
        } else {
            printf("ok: %s (exit code %d)\n", label, code);
        }
        free(out);
    }
    free(lib);
    return failed;
}

/* main of such a test: the same executable is the child when the case
 * variable names a case, and the driver otherwise (run-mpi's shape 1:0),
 * which calls no MPI function so that the nested jobs stand alone. */
static inline int ept_child_main(const ept_child_driver *d, int argc, char **argv)
{
    const char *which = getenv(d->case_var);
    if (which && *which)
        return d->child(which, argc, argv);
    return ept_child_run_all(d) != 0;
}

#endif
