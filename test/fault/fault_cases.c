/* The programs test/fault_paths.sh runs with faults injected
 * (test/fault/fault.c), world mode, MPI_ERRORS_RETURN on MPI_COMM_WORLD.
 * argv[1] names the case; each prints what it saw as "EPT_FAULT ..." lines
 * for the script to judge:
 *   payload  rank 0 sends 1 MiB to rank n/2 (another process), rank n/2
 *            receives it; both print the class and message they got;
 *            then the same again, which must work ("after ok");
 *   isend    the same with MPI_Isend and MPI_Wait on the sender;
 *   init     nothing but MPI_Init and a barrier of every rank ("init ok"). */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES (1 << 20)

static void report(const char *who, int rc)
{
    int cls = MPI_SUCCESS, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
    }
    printf("EPT_FAULT %s class=%d msg=%s\n", who, cls, msg);
    fflush(stdout);
}

static void exchange(int use_isend, int report_it)
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
            if (!use_isend)
                rc = MPI_Send(buf, BYTES, MPI_BYTE, n / 2, 5, MPI_COMM_WORLD);
            else if ((rc = MPI_Isend(buf, BYTES, MPI_BYTE, n / 2, 5, MPI_COMM_WORLD, &rq)) == MPI_SUCCESS)
                rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
            if (report_it)
                report("sender", rc);
        } else if (r == n / 2) {
            rc = MPI_Recv(buf, BYTES, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (report_it)
                report("receiver", rc);
            else if (rc != MPI_SUCCESS || buf[0] != 7 || buf[BYTES - 1] != 7)
                printf("EPT_FAULT after failed: rc %d, bytes %d %d\n", rc, buf[0], buf[BYTES - 1]);
            else
                printf("EPT_FAULT after ok\n");
        }
        free(buf);
    }
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (!strcmp(which, "payload") || !strcmp(which, "isend")) {
        exchange(!strcmp(which, "isend"), 1);
        exchange(0, 0);
    } else if (!strcmp(which, "init")) {
#pragma omp parallel
        MPI_Barrier(MPI_COMM_WORLD);
        printf("EPT_FAULT init ok\n");
    } else {
        fprintf(stderr, "unknown case '%s'\n", which);
        return 2;
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
