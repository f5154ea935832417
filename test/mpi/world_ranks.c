/* World mode: every OpenMP thread is its own rank of MPI_COMM_WORLD, rank
 * p*T+t, MPI_COMM_SELF is one rank per endpoint, and the main thread outside
 * the parallel region is endpoint 0.  MPI_Init leaves no name of its node
 * inboxes' shared memory behind, and removes those of processes gone. */
#include "eptest.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Leaves in /dev/shm the name of node inboxes whose process is gone, as a
 * killed job does (a child that has exited names it); its path in path. */
static void plant_stale_name(char *path, size_t len)
{
    struct stat st;
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    if (stat("/proc/self/ns/pid", &st))
        st.st_ino = 0;
    snprintf(path, len, "/dev/shm/epmpi.%llx.%d", (unsigned long long)st.st_ino, (int)child);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    if (fd >= 0)
        close(fd);
}

/* The entries of /dev/shm that name this process's node inboxes
 * ("epmpi.<pid namespace>.<pid>"): none once MPI_Init returned, as the
 * memory stays only as long as processes map it. */
static int own_shm_names(void)
{
    char tail[32];
    int n = 0;
    snprintf(tail, sizeof tail, ".%d", (int)getpid());
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name), tl = strlen(tail);
        n += !strncmp(e->d_name, "epmpi.", 6) && len > tl && !strcmp(e->d_name + len - tl, tail);
    }
    if (d)
        closedir(d);
    return n;
}

static void expect_path(MPI_Comm comm, const char *want, const char *what)
{
    MPI_Info info;
    char val[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    EPT_OK(MPI_Comm_get_info(comm, &info));
    EPT_OK(MPI_Info_get(info, "epmpi_p2p_path", MPI_MAX_INFO_VAL, val, &flag));
    EPT_CHECK(flag && !strcmp(val, want), "%s: epmpi_p2p_path is '%s', expected '%s'", what, flag ? val : "(unset)",
              want);
    MPI_Info_free(&info);
}

/* Whether a communicator with one rank per process, in process order,
 * passes its messages straight to MPICH (src/p2p/direct.h): never with
 * EPMPI_P2P_PATH=engine, always with mpich; with auto, unless all its
 * processes share a node whose inboxes are on (UCX between processes, as
 * the engine communicator `eng` over several processes reports it, and
 * EPMPI_SHM not 0).  Collective over MPI_COMM_WORLD. */
static int process_shaped_to_mpich(MPI_Comm eng, int nprocs)
{
    const char *path = getenv("EPMPI_P2P_PATH"), *shm = getenv("EPMPI_SHM");
    MPI_Comm node;
    int node_size, world_size;
    EPT_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_size(node, &node_size);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_free(&node);
    if (path && !strcmp(path, "engine"))
        return 0;
    if (path && !strcmp(path, "mpich"))
        return 1;
    int inboxes = nprocs > 1 && node_size == world_size && ept_hint_is(eng, "epmpi_transport", "ucx") &&
                  !(shm && !strcmp(shm, "0"));
    return !inboxes;
}

/* Each rank sends its rank to the next, as the tag too, received from any
 * source and tag; then a
 * 100-message stream in the other direction arrives in order. */
static void ring_exchange(MPI_Comm comm)
{
    int r, n, got = -1;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int next = (r + 1) % n, prev = (r + n - 1) % n;
    MPI_Status st;
    EPT_OK(MPI_Sendrecv(&r, 1, MPI_INT, next, r, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
    EPT_CHECK(got == prev && st.MPI_SOURCE == prev && st.MPI_TAG == prev, "ring: got %d from %d tag %d, expected %d",
              got, st.MPI_SOURCE, st.MPI_TAG, prev);
    MPI_Barrier(comm); /* before a wildcard receive could take the stream */
    MPI_Request rq[100];
    MPI_Status sts[100];
    int in[100];
    for (int i = 0; i < 100; i++)
        EPT_OK(MPI_Irecv(&in[i], 1, MPI_INT, next, MPI_ANY_TAG, comm, &rq[i]));
    for (int i = 0; i < 100; i++)
        EPT_OK(MPI_Send(&i, 1, MPI_INT, prev, i % 3, comm));
    EPT_OK(MPI_Waitall(100, rq, sts));
    for (int i = 0; i < 100; i++)
        EPT_CHECK(in[i] == i, "stream: message %d holds %d", i, in[i]);
}

int main(int argc, char **argv)
{
    int provided, wrank, wsize;
    int T = ept_require_world();
    char stale[128];
    plant_stale_name(stale, sizeof stale);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    EPT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int P = wsize / T;
    EPT_CHECK(wsize % T == 0 && P >= 1, "size %d with %d endpoints per process", wsize, T);
    int p = wrank / T;
    EPT_CHECK(wrank % T == 0, "outside a parallel region the caller is endpoint 0, got rank %d", wrank);
    EPT_CHECK(own_shm_names() == 0, "MPI_Init left %d names of its shared memory in /dev/shm", own_shm_names());
    int seen = 0;
#pragma omp parallel num_threads(T) reduction(+ : seen)
    {
        int r, s, sr, ss, t = omp_get_thread_num();
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &s);
        EPT_CHECK(r == p * T + t, "thread %d of process %d has rank %d", t, p, r);
        EPT_CHECK(s == P * T, "size %d", s);
        MPI_Comm_rank(MPI_COMM_SELF, &sr);
        MPI_Comm_size(MPI_COMM_SELF, &ss);
        EPT_CHECK(sr == 0 && ss == 1, "MPI_COMM_SELF rank %d size %d", sr, ss);
        int res;
        MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res);
        EPT_CHECK(res == MPI_IDENT, "world vs world: %d", res);
        /* Every rank is seen exactly once. */
        int *all = malloc(sizeof(int) * (size_t)s);
        MPI_Allgather(&r, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < s; i++)
            EPT_CHECK(all[i] == i, "allgather slot %d holds %d", i, all[i]);
        free(all);
        int sum = 0;
        MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        EPT_CHECK(sum == s * (s - 1) / 2, "sum of ranks %d", sum);
        int *tag_ub, flag;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
        EPT_CHECK(flag && *tag_ub >= (1 << 28) - 1, "MPI_TAG_UB %d", flag ? *tag_ub : -1);
        /* Messages may go straight to MPICH only on communicators where
         * each process holds one rank, in process order (src/p2p/direct.h). */
        MPI_Comm rev, col;
        MPI_Comm_split(MPI_COMM_WORLD, 0, s - r, &rev);
        expect_path(rev, "engine", "MPI_COMM_WORLD split in reverse order");
        int to_mpich = process_shaped_to_mpich(rev, P);
        /* The node's first process sweeps the names of processes gone when
         * the node has inboxes (two processes or more, UCX, EPMPI_SHM). */
        MPI_Comm node;
        int node_eps, swept = access(stale, F_OK) != 0;
        const char *shm = getenv("EPMPI_SHM");
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &node_eps);
        MPI_Comm_free(&node);
        if (t == 0 && node_eps > T && ept_hint_is(rev, "epmpi_transport", "ucx") && !(shm && !strcmp(shm, "0")))
            EPT_CHECK(swept, "MPI_Init left %s, the name of a process gone", stale);
        if (t == 0)
            unlink(stale);
        expect_path(MPI_COMM_WORLD, T == 1 && P > 1 && to_mpich ? "mpich" : "engine", "MPI_COMM_WORLD");
        MPI_Comm_split(MPI_COMM_WORLD, t, r, &col);
        expect_path(col, P > 1 && to_mpich ? "mpich" : "engine", "MPI_COMM_WORLD split by thread number");
        ring_exchange(rev);
        ring_exchange(col);
        MPI_Comm_free(&rev);
        MPI_Comm_free(&col);
        MPI_Barrier(MPI_COMM_WORLD);
        seen = 1;
    }
    EPT_CHECK(seen == T, "%d threads ran", seen);
    MPI_Finalize();
    return 0;
}
