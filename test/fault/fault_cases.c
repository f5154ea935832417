/* The programs test/fault_paths.sh runs with faults injected
 * (test/fault/fault.c), world mode, MPI_ERRORS_RETURN on MPI_COMM_WORLD.
 * argv[1] names the case; each prints what it saw as "EPT_FAULT ..." lines
 * for the script to judge:
 *   payload  rank 0 sends 1 MiB to rank n/2 (another process), rank n/2
 *            receives it; both print the class and message they got;
 *            then the same again, which must work ("after ok");
 *   isend    the same with MPI_Isend and MPI_Wait on the sender;
 *   init     nothing but MPI_Init and a barrier of every rank ("init ok");
 *   file     every rank writes its own 128 KiB block of one file with
 *            MPI_File_write_at_all and reports, then again ("file again"),
 *            each rank a line;
 * and for the UCX transport, where a failed send has sent nothing:
 *   resend   rank 0 sends 1 MiB to rank n/2 twice, reporting both sends;
 *            rank n/2 receives once and must get the message whole;
 *   irecv    rank n/2 receives with MPI_Irecv and MPI_Wait (a receive
 *            that epmpi matches, then hands to UCX), both report, then
 *            the blocking exchange again ("after ok");
 *   post     the blocking exchange, reported, the sender starting 0.2 s
 *            late: the receive waits first, so it is one that UCX itself
 *            would match. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BYTES (1 << 20)

static void report(const char *who, int rc)
{
    int cls = MPI_SUCCESS, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
    }
    /* the classes the cases end with, by name: their numbers differ between MPIs */
    const char *name = cls == MPI_SUCCESS        ? "MPI_SUCCESS"
                       : cls == MPI_ERR_OTHER    ? "MPI_ERR_OTHER"
                       : cls == MPI_ERR_NO_SPACE ? "MPI_ERR_NO_SPACE"
                                                 : NULL;
    if (name)
        printf("EPT_FAULT %s class=%s msg=%s\n", who, name, msg);
    else
        printf("EPT_FAULT %s class=%d msg=%s\n", who, cls, msg);
    fflush(stdout);
}

enum { BLOCKING, ISEND, IRECV, RESEND, LATE };

static void exchange(int how, int report_it)
{
#pragma omp parallel
    {
        int r, n;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &n);
        char *buf = malloc(BYTES);
        memset(buf, r == 0 ? 7 : 0, BYTES);
        int rc = MPI_SUCCESS;
        if (r == 0) {
            MPI_Request rq;
            if (how == LATE)
                nanosleep(&(struct timespec){0, 200000000}, NULL);
            if (how != ISEND)
                rc = MPI_Send(buf, BYTES, MPI_BYTE, n / 2, 5, MPI_COMM_WORLD);
            else if ((rc = MPI_Isend(buf, BYTES, MPI_BYTE, n / 2, 5, MPI_COMM_WORLD, &rq)) == MPI_SUCCESS)
                rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
            if (report_it)
                report("sender", rc);
            if (how == RESEND)
                report("sender again", MPI_Send(buf, BYTES, MPI_BYTE, n / 2, 5, MPI_COMM_WORLD));
        } else if (r == n / 2) {
            MPI_Request rq;
            if (how != IRECV)
                rc = MPI_Recv(buf, BYTES, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else if ((rc = MPI_Irecv(buf, BYTES, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &rq)) == MPI_SUCCESS)
                rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
            if (report_it && how != RESEND)
                report("receiver", rc);
            else if (rc != MPI_SUCCESS || buf[0] != 7 || buf[BYTES - 1] != 7)
                printf("EPT_FAULT after failed: rc %d, bytes %d %d\n", rc, buf[0], buf[BYTES - 1]);
            else
                printf("EPT_FAULT after ok\n");
        }
        free(buf);
    }
}

/* The exchange cases: how the first exchange runs, and whether a plain
 * one follows ("after ok"). */
static const struct {
    const char *name;
    int how, again;
} cases[] = {
    {"payload", BLOCKING, 1}, {"isend", ISEND, 1}, {"irecv", IRECV, 1}, {"post", LATE, 1}, {"resend", RESEND, 0}};

/* Each endpoint writes its block (a piece epmpi moves with its own
 * descriptor) and reports, each time. */
static void file_blocks(void)
{
#pragma omp parallel
    {
        static _Thread_local char block[128 << 10];
        char path[64];
        MPI_File fh;
        int r, pid = (int)getpid();
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
        snprintf(path, sizeof path, "/tmp/epmpi_fault_file_%d", pid);
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                      &fh);
        for (int k = 0; k < 2; k++)
            report(k ? "file again" : "file", MPI_File_write_at_all(fh, (MPI_Offset)r * (MPI_Offset)sizeof block, block,
                                                                    (int)sizeof block, MPI_BYTE, MPI_STATUS_IGNORE));
        MPI_File_close(&fh);
    }
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    size_t c = 0, ncases = sizeof cases / sizeof *cases;
    while (c < ncases && strcmp(which, cases[c].name))
        c++;
    if (c == ncases && strcmp(which, "init") && strcmp(which, "file")) {
        fprintf(stderr, "unknown case '%s'\n", which);
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (c < ncases) {
        exchange(cases[c].how, 1);
        if (cases[c].again)
            exchange(BLOCKING, 0);
    } else if (!strcmp(which, "file")) {
        file_blocks();
    } else {
#pragma omp parallel
        MPI_Barrier(MPI_COMM_WORLD);
        printf("EPT_FAULT init ok\n");
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
