/* Which transport each kind of communicator gets (src/comm_parts.c,
 * src/transport/transport.c), as MPI_Comm_get_info reports it: one whose
 * ranks live in several processes and whose messages go through the
 * engine (epmpi_p2p_path "engine") names its transport in
 * epmpi_transport, UCX by default when epmpi is built with it, the MPI
 * transport with EPMPI_TRANSPORT=mpi (set by comm_transport_mpi, or by
 * make check-mpi-transport for both); one of a single
 * process, or direct (path "mpich"), names none.  Checked on the
 * communicator built at start-up (MPI_COMM_WORLD, or the endpoints of
 * argv[1]), its MPI_Comm_dup and MPI_Comm_idup (built in steps), a split
 * by process and one across them, and an intercommunicator between two
 * halves and its merge; a message goes around each, so each is
 * connected. */
#include "eptest.h"

#include <unistd.h>

/* The transport between processes: the one this program forces
 * (comm_transport_mpi), else the MPI transport when the environment asks
 * for it (make check-mpi-transport), else UCX when epmpi is built with
 * it. */
static const char *want_transport(void)
{
#ifdef EPT_TRANSPORT
    return EPT_TRANSPORT;
#else
    const char *forced = getenv("EPMPI_TRANSPORT");
    if (forced && !strcmp(forced, "mpi"))
        return "mpi";
#ifdef EPT_UCX
    return "ucx";
#else
    return "mpi";
#endif
#endif
}

/* The process (its pid) of each rank of intracommunicator comm, by rank,
 * in a block the caller frees; *n: comm's size. */
static long *pids(MPI_Comm comm, int *n)
{
    long me = (long)getpid(), *all;
    MPI_Comm_size(comm, n);
    all = malloc(sizeof *all * (size_t)*n);
    EPT_CHECK(all, "out of memory");
    EPT_OK(MPI_Allgather(&me, 1, MPI_LONG, all, 1, MPI_LONG, comm));
    return all;
}

/* The lowest rank of comm in the caller's process. */
static int first_of_my_process(MPI_Comm comm)
{
    int n, first = 0;
    long *all = pids(comm, &n);
    while (all[first] != (long)getpid())
        first++;
    free(all);
    return first;
}

/* 1 when comm's ranks live in more than one process. */
static int spans_processes(MPI_Comm comm)
{
    int n, spans = 0;
    long *all = pids(comm, &n);
    for (int i = 1; i < n; i++)
        spans |= all[i] != all[0];
    free(all);
    return spans;
}

/* Checks what comm reports, given whether its ranks span processes. */
static void check(MPI_Comm comm, int spans, const char *what)
{
    MPI_Info info;
    char path[MPI_MAX_INFO_VAL + 1] = "", tr[MPI_MAX_INFO_VAL + 1] = "";
    int pflag = 0, tflag = 0;
    EPT_OK(MPI_Comm_get_info(comm, &info));
    EPT_OK(MPI_Info_get(info, "epmpi_p2p_path", MPI_MAX_INFO_VAL, path, &pflag));
    EPT_OK(MPI_Info_get(info, "epmpi_transport", MPI_MAX_INFO_VAL, tr, &tflag));
    MPI_Info_free(&info);
    EPT_CHECK(pflag, "%s: no epmpi_p2p_path", what);
    const char *want = spans && strcmp(path, "mpich") ? want_transport() : NULL;
    EPT_CHECK(want ? tflag && !strcmp(tr, want) : !tflag,
              "%s: epmpi_transport '%s' (%s), expected %s (p2p path %s, ranks in %s)", what, tr,
              tflag ? "set" : "absent", want ? want : "none", path, spans ? "several processes" : "one process");
}

/* Checks comm and sends a message around it. */
static void check_intra(MPI_Comm comm, const char *what)
{
    int me, n, left, right, got = -1;
    check(comm, spans_processes(comm), what);
    ept_ring_place(comm, &me, &n, &left, &right);
    EPT_OK(MPI_Sendrecv(&me, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, comm, MPI_STATUS_IGNORE));
    EPT_CHECK(got == left, "%s: rank %d got %d from its left neighbour %d", what, me, got, left);
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    int me, n;
    MPI_Comm dup, idup, byproc, across, inter, merged;
    MPI_Request req;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    check_intra(comm, "the communicator built at start-up");
    EPT_OK(MPI_Comm_dup(comm, &dup));
    check_intra(dup, "MPI_Comm_dup");
    EPT_OK(MPI_Comm_idup(comm, &idup, &req));
    EPT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_intra(idup, "MPI_Comm_idup");
    /* A split by process. */
    EPT_OK(MPI_Comm_split(comm, first_of_my_process(comm), me, &byproc));
    check_intra(byproc, "a split by process");
    EPT_OK(MPI_Comm_split(comm, me % 2, me, &across));
    check_intra(across, "a split by rank parity");
    if (n > 1) {
        /* Halves: ranks below n/2, and the others. */
        int low = me < n / 2;
        MPI_Comm side;
        EPT_OK(MPI_Comm_split(comm, low, me, &side));
        EPT_OK(MPI_Intercomm_create(side, 0, comm, low ? n / 2 : 0, 11, &inter));
        /* Its two groups together are comm's ranks. */
        check(inter, spans_processes(comm), "MPI_Intercomm_create");
        EPT_OK(MPI_Intercomm_merge(inter, !low, &merged));
        check_intra(merged, "MPI_Intercomm_merge");
        EPT_OK(MPI_Comm_free(&merged));
        EPT_OK(MPI_Comm_free(&inter));
        EPT_OK(MPI_Comm_free(&side));
    }
    EPT_OK(MPI_Comm_free(&across));
    EPT_OK(MPI_Comm_free(&byproc));
    EPT_OK(MPI_Comm_free(&idup));
    EPT_OK(MPI_Comm_free(&dup));
}

int main(int argc, char **argv)
{
#ifdef EPT_TRANSPORT
    setenv("EPMPI_TRANSPORT", EPT_TRANSPORT, 1);
#endif
    return ept_main(argc, argv, 60, body, NULL);
}
