/* EPMPI_STATS, EPMPI_STATS_FILE and EPMPI_VERBOSE seen from outside the
 * job.  Run as shape 1:0, the program is a driver (eptest_child.h) that
 * starts itself again under mpiexec for each case:
 *   stats    world 2x2 with EPMPI_STATS=1 and EPMPI_STATS_FILE: every rank
 *            sends one message of (rank+1)*100 bytes to every other rank,
 *            on MPI_COMM_WORLD and again on a duplicate (the same
 *            endpoints: their counts add up), plus collectives, which do
 *            not add messages.  Process 0 prints the CSV after MPI_Finalize; the
 *            driver checks every rank's row exactly (2 messages within the
 *            process and 4 to and from the other one), and the table on
 *            stderr;
 *   coll     world 2x2 with EPMPI_STATS_FILE: each rank makes 13 collective
 *            calls of known sizes (blocking, non-blocking, two starts of a
 *            persistent one, a neighbourhood all-to-all on a line without
 *            wrap-around), besides a duplicate and a Cartesian communicator
 *            (not counted): every rank's calls and bytes sent and received,
 *            exactly, and no point-to-point message;
 *   in_place world 1x2 with EPMPI_STATS_FILE: Allgather, Scatter, Gather,
 *            Alltoall and Reduce with MPI_IN_PLACE, whose blocks in the
 *            receive (or, for Scatter, send) buffer stand for the other
 *            buffer: every rank's bytes exactly;
 *   partitioned  world 1x2 with EPMPI_STATS_FILE: one partitioned message
 *            (MPI_Psend_init / MPI_Precv_init, 4 partitions) from rank 0
 *            to rank 1: its messages travel on their own channel, which
 *            the receiver's count must read as rank 0 (it crashed);
 *   named    2 processes without world mode, EPMPI_STATS=1: endpoints
 *            made by MPI_Comm_create_endpoints, 2 per process and named
 *            'ocean', then 2 more per process left unnamed; every rank sends
 *            to every other: the rows say "rank R of 'ocean'" and "rank R
 *            of unnamed comm 1", never a context id;
 *   verbose  world 2x2 with EPMPI_VERBOSE=1 EPMPI_DEBUG=1: one settings line
 *            per process naming the version, world mode, endpoints, thread
 *            rule, OpenMP thread count, wait policy, eager limit, debug and
 *            stats, and MPICH (no tab); without world mode, "world mode off"
 *            and no endpoint count. */
#include "eptest.h"
#include "eptest_child.h"

#include <unistd.h>

/* ---- children ------------------------------------------------------------ */

static void traffic(MPI_Comm comm)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    char *out = calloc((size_t)(r + 1) * 100, 1), *in = calloc((size_t)n * 100, 1);
    MPI_Request *rq = calloc((size_t)n, sizeof *rq);
    EPT_CHECK(out && in && rq, "out of memory");
    int k = 0;
    for (int s = 0; s < n; s++)
        if (s != r)
            EPT_OK(MPI_Isend(out, (r + 1) * 100, MPI_BYTE, s, 5, comm, &rq[k++]));
    for (int s = 0; s < n; s++)
        if (s != r)
            EPT_OK(MPI_Recv(in, n * 100, MPI_BYTE, s, 5, comm, MPI_STATUS_IGNORE));
    EPT_OK(MPI_Waitall(k, rq, statuses_ignore()));
    free(out);
    free(in);
    free(rq);
}

/* The calls of case "coll" on 4 ranks (see the driver's table for what
 * each rank sends and receives). */
static void collectives(void)
{
    int r, x[10] = {0}, y[16] = {0};
    double d[3] = {1, 2, 3}, e[3];
    MPI_Comm dup, line;
    MPI_Request rq;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    EPT_OK(MPI_Barrier(dup));
    EPT_OK(MPI_Bcast(x, 10, MPI_INT, 1, dup));
    EPT_OK(MPI_Allreduce(d, e, 3, MPI_DOUBLE, MPI_SUM, dup));
    EPT_OK(MPI_Reduce(x, y, 2, MPI_INT, MPI_SUM, 0, dup));
    EPT_OK(MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, 2, dup));
    EPT_OK(MPI_Scatter(y, 2, MPI_INT, x, 2, MPI_INT, 3, dup));
    EPT_OK(MPI_Allgather(x, 1, MPI_INT, y, 1, MPI_INT, dup));
    EPT_OK(MPI_Alltoall(y, 1, MPI_INT, x, 1, MPI_INT, dup));
    EPT_OK(MPI_Iallreduce(x, y, 1, MPI_INT, MPI_SUM, dup, &rq));
    EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
#if EP_HAVE_MPI_Allreduce_init
    EPT_OK(MPI_Allreduce_init(x, y, 1, MPI_INT, MPI_SUM, dup, MPI_INFO_NULL, &rq));
    for (int k = 0; k < 2; k++) {
        EPT_OK(MPI_Start(&rq));
        EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    EPT_OK(MPI_Request_free(&rq));
#else /* MPI 4.0's persistent collectives, not in this MPI: the same calls and bytes */
    for (int k = 0; k < 2; k++)
        EPT_OK(MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, dup));
#endif
    int dims = 4, periods = 0;
    EPT_OK(MPI_Cart_create(dup, 1, &dims, &periods, 0, &line));
    EPT_OK(MPI_Neighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, line));
    EPT_OK(MPI_Exscan(x, y, 1, MPI_INT, MPI_SUM, dup));
    EPT_OK(MPI_Comm_free(&line));
    EPT_OK(MPI_Comm_free(&dup));
}

/* Case "in_place" on 2 ranks (the driver's table has the sizes). */
static void in_place(void)
{
    int r, x[4] = {0}, y[4] = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    EPT_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, y, 2, MPI_INT, MPI_COMM_WORLD));
    EPT_OK(MPI_Scatter(x, 2, MPI_INT, r == 0 ? MPI_IN_PLACE : y, 2, MPI_INT, 0, MPI_COMM_WORLD));
    EPT_OK(MPI_Gather(r == 1 ? MPI_IN_PLACE : x, 2, MPI_INT, y, 2, MPI_INT, 1, MPI_COMM_WORLD));
    EPT_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, y, 1, MPI_INT, MPI_COMM_WORLD));
    EPT_OK(MPI_Reduce(r == 0 ? MPI_IN_PLACE : x, y, 3, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
}

#if EP_HAVE_MPI_Psend_init /* MPI 4.0's partitioned communication: not in every MPI */
static void partitioned(void)
{
    int r, buf[16] = {0};
    MPI_Request rq;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (r == 0)
        EPT_OK(MPI_Psend_init(buf, 4, 4, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
    else
        EPT_OK(MPI_Precv_init(buf, 4, 4, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
    EPT_OK(MPI_Start(&rq));
    if (r == 0)
        EPT_OK(MPI_Pready_range(0, 3, rq));
    EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    EPT_OK(MPI_Request_free(&rq));
}
#else
static void partitioned(void) {}
#endif

static int child(const char *which, int argc, char **argv)
{
    int provided, me;
    char path[64];
    /* The processes of one node share their parent, hydra's proxy. */
    snprintf(path, sizeof path, "/tmp/epmpi-diag-stats-%d.csv", (int)getppid());
    if (!strcmp(which, "stats") || !strcmp(which, "named") || !strcmp(which, "coll") || !strcmp(which, "in_place") ||
        !strcmp(which, "partitioned")) {
        setenv("EPMPI_STATS", "1", 1);
        setenv("EPMPI_STATS_FILE", path, 1);
    } else if (!strcmp(which, "verbose")) {
        setenv("EPMPI_VERBOSE", "1", 1);
        setenv("EPMPI_DEBUG", "1", 1);
    } else {
        fprintf(stderr, "unknown case %s\n", which);
        return 2;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me); /* endpoint 0: 0 in process 0 only */
    if (!strcmp(which, "stats")) {
#pragma omp parallel
        {
            MPI_Comm dup;
            int x = 1, y;
            traffic(MPI_COMM_WORLD);
            EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
            traffic(dup);
            EPT_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, dup));
            EPT_OK(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD));
            EPT_OK(MPI_Barrier(dup));
            EPT_OK(MPI_Comm_free(&dup));
        }
    }
    if (!strcmp(which, "coll")) {
#pragma omp parallel
        collectives();
    }
    if (!strcmp(which, "in_place")) {
#pragma omp parallel
        in_place();
    }
    if (!strcmp(which, "partitioned")) {
#pragma omp parallel
        partitioned();
    }
    if (!strcmp(which, "named")) {
        MPI_Comm ocean[2], plain[2];
        EPT_OK(MPI_Comm_create_endpoints(MPI_COMM_WORLD, 2, MPI_INFO_NULL, ocean));
#pragma omp parallel num_threads(2)
        {
            int t = omp_get_thread_num();
            EPT_OK(MPI_Comm_set_name(ocean[t], "ocean"));
            traffic(ocean[t]);
            EPT_OK(MPI_Comm_free(&ocean[t]));
        }
        EPT_OK(MPI_Comm_create_endpoints(MPI_COMM_WORLD, 2, MPI_INFO_NULL, plain));
#pragma omp parallel num_threads(2)
        {
            int t = omp_get_thread_num();
            traffic(plain[t]);
            EPT_OK(MPI_Comm_free(&plain[t]));
        }
    }
    MPI_Finalize();
    if (me == 0 && strcmp(which, "verbose")) {
        char line[512];
        FILE *f = fopen(path, "r");
        if (!f) {
            printf("EPT_CHILD_BAD: no %s\n", path);
            return 1;
        }
        while (fgets(line, sizeof line, f))
            printf("EPT_CSV %s", line);
        fclose(f);
        unlink(path);
    }
    return 0;
}

/* ---- driver ---------------------------------------------------------------- */

/* Rank r of 2 x 2 sends (r+1)*100 bytes to each of the three others, twice:
 * to its process's other rank (2 messages) and to the other process's two
 * (4), and receives the same way. */
/* How the MPI's MPI_Get_library_version begins, which the verbose line
 * quotes (its first line, tabs made spaces). */
#ifdef OPEN_MPI
#define MPI_LIBRARY_START "; Open MPI v"
#else
#define MPI_LIBRARY_START "; MPICH Version: "
#endif

static const ept_child_case cases[] = {
    {"stats",
     "2",
     2,
     2,
     0,
     {"EPT_CSV 0,world rank 0,2,200,4,400,2,400,4,1400,", "EPT_CSV 0,world rank 1,2,400,4,800,2,200,4,1400,",
      "EPT_CSV 1,world rank 2,2,600,4,1200,2,800,4,600,", "EPT_CSV 1,world rank 3,2,800,4,1600,2,600,4,600,"},
     {"EPT_CHILD_BAD", "world rank 4"}},
    {"stats",
     "2",
     2,
     2,
     0,
     {"EPT_CSV process,endpoint,sent_intra_msgs,sent_intra_bytes,sent_inter_msgs,sent_inter_bytes,recv_intra_msgs",
      "epmpi statistics (EPMPI_STATS)", "      0  world rank 0", "      1  world rank 3"},
     {"EPT_CHILD_BAD", NULL}},
    {"named",
     NULL,
     2,
     2,
     0,
     {"EPT_CSV 0,rank 0 of 'ocean',1,100,2,200,1,200,2,700,", "EPT_CSV 1,rank 3 of 'ocean',1,400,2,800,1,300,2,300,",
      "EPT_CSV 0,rank 0 of unnamed comm 1,1,100,2,200,1,200,2,700,",
      "EPT_CSV 1,rank 3 of unnamed comm 1,1,400,2,800,1,300,2,300,"},
     {"EPT_CHILD_BAD", "ctx"}},
    {"named",
     NULL,
     2,
     2,
     0,
     {"      0  rank 1 of 'ocean'", "      1  rank 3 of unnamed comm 1", "(unnamed comm K: the K-th communicator",
      NULL},
     {"EPT_CHILD_BAD", "ctx"}},
    /* Per rank: 13 calls.  Sent: Allreduce 24, Reduce 8, Gather 4,
     * Allgather 4, Alltoall 16, Iallreduce 4, the starts 8, Exscan 4 (72),
     * Bcast's root (1) 40, Scatter's root (3) 32, the line's ends (0, 3)
     * 4, its middle (1, 2) 8.  Received: Allreduce 24, Scatter 8,
     * Allgather 16, Alltoall 16, Iallreduce 4, the starts 8 (76), Bcast
     * 40 but at its root, Reduce's root (0) 8, Gather's root (2) 16, the
     * line 4 or 8, Exscan 4 but at rank 0. */
    {"coll",
     "2",
     2,
     2,
     0,
     {"EPT_CSV 0,world rank 0,0,0,0,0,0,0,0,0,", ",13,76,128\n", ",13,120,88\n", ",13,80,144\n", ",13,108,124\n",
      "EPT_CSV 1,world rank 3,0,0,0,0,0,0,0,0,", "EPT_CSV process,endpoint,sent_intra_msgs",
      ",wait_seconds,coll_calls,coll_sent_bytes,coll_recv_bytes"},
     {"EPT_CHILD_BAD", NULL}},
    /* Sent: Allgather 8 (the rank's block), Scatter 16 at its root (0),
     * Gather 8, Alltoall 8, Reduce 12: 52 at rank 0, 36 at rank 1 (the
     * Gather's root, its block in place).  Received: Allgather 16, Scatter
     * 8 (the root's block in place), Gather 16 at its root (1), Alltoall
     * 8, Reduce 12 at its root (0): 44 and 48. */
    {"in_place",
     "2",
     1,
     2,
     0,
     {"EPT_CSV 0,world rank 0,0,0,0,0,0,0,0,0,", ",5,52,44\n", ",5,36,48\n", NULL},
     {"EPT_CHILD_BAD", NULL}},
#if EP_HAVE_MPI_Psend_init
    {"partitioned",
     "2",
     1,
     2,
     0,
     {"EPT_CSV 0,world rank 0,", "EPT_CSV 0,world rank 1,", NULL},
     {"EPT_CHILD_BAD", NULL}},
#endif
    {"verbose",
     "2",
     2,
     2,
     0,
     {"epmpi " EPMPI_VERSION
      ": process 0 of 2: world mode on, 2 endpoints, threads openmp, OpenMP threads 2, wait yield, eager limit 16384",
      "epmpi " EPMPI_VERSION ": process 1 of 2: world mode on, 2 endpoints",
      "collectives auto, debug on, stats off, transport ", MPI_LIBRARY_START},
     {"MPICH Version:\t", NULL}},
    /* Without world mode the line says only that. */
    {"verbose",
     NULL,
     1,
     2,
     0,
     {"epmpi " EPMPI_VERSION ": process 0 of 1: world mode off, wait yield, eager limit 16384", NULL},
     {"endpoints", NULL}},
};

int main(int argc, char **argv)
{
    static const ept_child_driver driver = {
        .case_var = "EPT_STATS_CHILD",
        .child = child,
        EPT_CHILD_CASES(cases),
    };
    return ept_child_main(&driver, argc, argv);
}
