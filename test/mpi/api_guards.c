/* Every generated entry point (pmpi/entries.gen.c) refuses endpoint handles
 * cleanly, in world mode: each thread calls all of them (api_guards.gen.c)
 * with an endpoint communicator, group, request, message, window and file in each
 * handle argument they check, once with a duplicate of MPI_COMM_WORLD and
 * once with MPI_COMM_WORLD itself, under MPI_ERRORS_RETURN.  Each call must
 * return the error class of the handle's kind (MPI_ERR_COMM, MPI_ERR_GROUP,
 * MPI_ERR_REQUEST, MPI_ERR_WIN; MPI_ERR_COUNT for a large-count _c form given
 * a count beyond INT_MAX, MPI_ERR_TOPOLOGY for a neighbourhood one on a
 * communicator without topology) with a message naming the function, and must have
 * done nothing: afterwards the endpoint request is still pending and can be
 * cancelled, the endpoint message can still be received, and the
 * communicator still works.  Failures are collected and listed together. */
#include "api_guards.h"

#include <stdatomic.h>

static _Atomic int failures;

void ept_guard_expect(int rc, int cls, const char *call, const char *word)
{
    int c = MPI_SUCCESS, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &c);
        MPI_Error_string(rc, msg, &len);
    }
    if (c != cls || !strstr(msg, call) || !strstr(msg, word)) {
        fprintf(stderr,
                "FAIL (thread %d): %s returned error class %d, expected %d, with the message '%s' (it must "
                "name the call and say '%s')\n",
                omp_get_thread_num(), call, c, cls, msg, word);
        failures++;
    }
}

/* epmpi's handles have kind 0 (bits 31-30) and a non-zero payload. */
static void body(void)
{
    MPI_Comm dup;
    MPI_Group group;
    MPI_Request request;
    MPI_Message message;
    MPI_Status st;
    MPI_Win win;
    MPI_File file;
    int me, flag = 0, sent, got = -1, never = -1, n;

    EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    EPT_OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    EPT_OK(MPI_Comm_rank(dup, &me));
    EPT_OK(MPI_Comm_group(dup, &group));
    EPT_OK(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, dup, &win));
    int id = (int)getpid();
    char path[64];
    EPT_OK(MPI_Bcast(&id, 1, MPI_INT, 0, dup));
    snprintf(path, sizeof path, "/tmp/epmpi_api_guards_%d", id);
    EPT_OK(MPI_File_open(dup, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &file));
    EPT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EPT_OK(MPI_Irecv(&never, 1, MPI_INT, me, 2, dup, &request));
    sent = 1000 + me;
    EPT_OK(MPI_Send(&sent, 1, MPI_INT, me, 1, dup));
    while (!flag)
        EPT_OK(MPI_Improbe(me, 1, dup, &flag, &message, MPI_STATUS_IGNORE));
    EPT_CHECK(EPT_IS_EP_HANDLE(dup) && EPT_IS_EP_HANDLE(group) && EPT_IS_EP_HANDLE(request) &&
                  EPT_IS_EP_HANDLE(message) && EPT_IS_EP_HANDLE(win),
              "not all endpoint handles: comm " EPT_HFMT " group " EPT_HFMT " request " EPT_HFMT " message " EPT_HFMT
              " win " EPT_HFMT,
              EPT_HARG(dup), EPT_HARG(group), EPT_HARG(request), EPT_HARG(message), EPT_HARG(win));

    n = ept_call_guards(dup, group, request, message, win, file);
    n += ept_call_guards(MPI_COMM_WORLD, group, request, message, win, file);
    /* Handle-taking functions epmpi does not implement by hand: 138 in
     * MPICH 4.0.2, most of them MPI-4's large-count forms; 6 in Open MPI
     * 4.1, an MPI-3.1 (a floor, in case the generator lost most of them). */
    int floor = MPI_VERSION >= 4 ? 130 : 6;
    EPT_CHECK(n >= 2 * floor, "only %d calls, expected at least %d", n, 2 * floor);

    /* Nothing happened to the handles. */
    EPT_OK(MPI_Test(&request, &flag, &st));
    EPT_CHECK(!flag, "the pending receive completed");
    EPT_OK(MPI_Cancel(&request));
    EPT_OK(MPI_Wait(&request, &st));
    EPT_OK(MPI_Test_cancelled(&st, &flag));
    EPT_CHECK(flag && never == -1, "the receive was not cancelled (flag %d, value %d)", flag, never);
    EPT_OK(MPI_Mrecv(&got, 1, MPI_INT, &message, &st));
    EPT_CHECK(got == sent && st.MPI_SOURCE == me, "matched message: %d from %d", got, st.MPI_SOURCE);
    EPT_OK(MPI_Group_free(&group));
    EPT_OK(MPI_Win_free(&win));
    EPT_OK(MPI_File_close(&file));
    EPT_OK(MPI_Barrier(dup));
    EPT_OK(MPI_Comm_free(&dup));
    if (me == 0)
        printf("%d calls of %d generated entry points per thread: clean errors\n", n, n / 2);
}

int main(int argc, char **argv)
{
    int provided, t = ept_require_world();
    watchdog_arm(60);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    /* Outside a parallel region: for all of this process's endpoints. */
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
#pragma omp parallel num_threads(t)
    body();
    EPT_CHECK(failures == 0, "%d calls did not fail as expected", (int)failures);
    MPI_Finalize();
    return 0;
}
