/* User error handlers on endpoints: any number of them, set concurrently
 * by every thread, and kept alive while in use.
 *   many     each thread creates 300 handlers (more than a process would
 *            have held in a fixed table), cycling through four functions,
 *            sets each on its endpoint of MPI_COMM_WORLD in turn and
 *            raises an error (MPI_Send to a rank that does not exist): the
 *            handler's own function runs, with the endpoint's handle;
 *   freed    a handler freed right after it is set stays in force: a
 *            handler created next (which MPICH may give the same handle)
 *            does not take its place;
 *   get      MPI_Comm_get_errhandler returns the handler in force, a
 *            reference the caller frees;
 *   MPI-1    MPI_Errhandler_create, _set and _get (the deprecated
 *            names) do the same, and their errors name them;
 *   window   the same for a window handler on an endpoint window.
 * World mode; all threads at once. */
#include "eptest.h"

#define PER_THREAD 300
#define NFN 4

static __thread int calls[NFN + 2]; /* [NFN + 1]: win_fn */
static __thread MPI_Comm seen;

#define FN(i)                                      \
    static void fn##i(MPI_Comm *c, int *code, ...) \
    {                                              \
        (void)code;                                \
        calls[i]++;                                \
        seen = *c;                                 \
    }
FN(0)
FN(1)
FN(2)
FN(3)
FN(4)
static MPI_Comm_errhandler_function *const fns[NFN + 1] = {fn0, fn1, fn2, fn3, fn4};

static void win_fn(MPI_Win *w, int *code, ...)
{
    (void)w;
    (void)code;
    calls[NFN + 1]++;
}

/* Raises an error on this thread's endpoint; function f must run once. */
static void expect_call(int f, const char *what)
{
    int before[NFN + 2], n, x = 0;
    memcpy(before, calls, sizeof before);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    seen = MPI_COMM_NULL;
    int rc = MPI_Send(&x, 1, MPI_INT, n + 5, 0, MPI_COMM_WORLD);
    EPT_CHECK(rc != MPI_SUCCESS, "%s: MPI_Send to rank %d succeeded", what, n + 5);
    for (int i = 0; i < NFN; i++)
        EPT_CHECK(calls[i] == before[i] + (i == f), "%s: function %d ran %d times, wanted %d", what, i,
                  calls[i] - before[i], i == f);
    EPT_CHECK(seen == MPI_COMM_WORLD, "%s: the handler got communicator " EPT_HFMT, what, EPT_HARG(seen));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int T = ept_require_world();
    watchdog_arm(100);
#pragma omp parallel num_threads(T)
    {
        MPI_Errhandler eh[PER_THREAD], got;
        char what[64];

        PHASE("many");
        for (int i = 0; i < PER_THREAD; i++)
            EPT_OK(MPI_Comm_create_errhandler(fns[i % NFN], &eh[i]));
        for (int i = 0; i < PER_THREAD; i++) {
            EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh[i]));
            snprintf(what, sizeof what, "handler %d", i);
            expect_call(i % NFN, what);
        }
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        for (int i = 0; i < PER_THREAD; i++)
            EPT_OK(MPI_Errhandler_free(&eh[i]));

        PHASE("freed");
        for (int round = 0; round < 50; round++) {
            MPI_Errhandler a, b;
            EPT_OK(MPI_Comm_create_errhandler(fn0, &a));
            EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, a));
            EPT_OK(MPI_Errhandler_free(&a));
            EPT_CHECK(a == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free left the handle");
            EPT_OK(MPI_Comm_create_errhandler(fn4, &b)); /* may reuse a's handle in MPICH */
            expect_call(0, "a handler freed while in use");
            EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, b));
            EPT_OK(MPI_Errhandler_free(&b));

            PHASE("get");
            EPT_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
            EPT_OK(MPI_Errhandler_free(&got));
            EPT_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
            EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
            EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, got)); /* still alive: got is a reference */
            EPT_OK(MPI_Errhandler_free(&got));
            int before = calls[4];
            int x = 0;
            EPT_CHECK(MPI_Send(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD) != MPI_SUCCESS, "bad rank accepted");
            EPT_CHECK(calls[4] == before + 1, "the handler got back from MPI_Comm_get_errhandler did not run");
            EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        }

#if EP_HAVE_MPI_Errhandler_set /* not in Open MPI's mpi.h */
        PHASE("the MPI-1 names");
        MPI_Errhandler old;
        EPT_OK(MPI_Errhandler_create(fn2, &old));
        EPT_OK(MPI_Errhandler_set(MPI_COMM_WORLD, old));
        EPT_OK(MPI_Errhandler_free(&old));
        expect_call(2, "a handler set with MPI_Errhandler_set");
        EPT_OK(MPI_Errhandler_get(MPI_COMM_WORLD, &got));
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, got));
        EPT_OK(MPI_Errhandler_free(&got));
        expect_call(2, "the handler MPI_Errhandler_get returned");
        int code = MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), len = 0, cls = -1;
        char msg[MPI_MAX_ERROR_STRING] = "";
        MPI_Error_class(code, &cls);
        MPI_Error_string(code, msg, &len);
        EPT_CHECK(cls == MPI_ERR_ARG && strstr(msg, "MPI_Errhandler_set"),
                  "MPI_Errhandler_set(MPI_ERRHANDLER_NULL): class %d, message '%s'", cls, msg);
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
#endif

        PHASE("window");
        static int mem[64];
        MPI_Win w;
        MPI_Errhandler weh;
        EPT_OK(MPI_Win_create(mem + omp_get_thread_num(), sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
        EPT_OK(MPI_Win_create_errhandler(win_fn, &weh));
        EPT_OK(MPI_Win_set_errhandler(w, weh));
        EPT_OK(MPI_Errhandler_free(&weh));
        MPI_Errhandler other;
        EPT_OK(MPI_Win_create_errhandler((MPI_Win_errhandler_function *)(void (*)(void))fn4, &other));
        int before = calls[NFN + 1], x = 1;
        EPT_CHECK(MPI_Put(&x, 1, MPI_INT, 1 << 20, 0, 1, MPI_INT, w) != MPI_SUCCESS, "MPI_Put to a bad rank accepted");
        EPT_CHECK(calls[NFN + 1] == before + 1, "the freed window handler did not run");
        EPT_OK(MPI_Errhandler_free(&other));
        EPT_OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
        EPT_OK(MPI_Win_free(&w));
    }
    MPI_Finalize();
    return 0;
}
