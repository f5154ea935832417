/* This process's place in the job (proc.h). */
#define _GNU_SOURCE /* sched_getaffinity */
#include "core/proc.h"

#include "base/settings.h"
#include "base/wait.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* What each process tells the others once, at MPI_Init: which memory it
 * can share (its node) and how many endpoints it brings.  Two processes
 * share a node when they run on one booted machine, in one network
 * namespace (as MPI's notion of a host: make check-multinode's simulated
 * hosts are namespaces of one machine) and see one /dev/shm. */
typedef struct proc_record {
    uint64_t boot;  /* the machine's boot id, folded; 0 unknown */
    uint64_t netns; /* the inode of its network namespace */
    uint64_t shm_dev, shm_ino;
    uint64_t pidns; /* the inode of its pid namespace: with pid, names its shared memory */
    int32_t pid;
    int32_t endpoints;
} proc_record_t;

static int world_rank, world_size;
static int node_size, node_index, *node_world; /* [node_size] world ranks of the node, ascending */
static proc_record_t *node_rec;                /* [node_size] their records */
static int spans_namespaces;
static MPI_Comm group_comm = MPI_COMM_NULL;
int ep_proc_cores_enough_v;

int ep_proc_world_rank(void) { return world_rank; }
int ep_proc_world_size(void) { return world_size; }
int ep_proc_node_id(void) { return node_world ? node_world[0] : world_rank; }
int ep_proc_node_size(void) { return node_size; }
int ep_proc_node_self(void) { return node_index; }
int ep_proc_spans_namespaces(void) { return spans_namespaces; }
MPI_Comm ep_proc_group_comm(void) { return group_comm; }

int ep_proc_node_index(int world)
{
    int lo = 0, hi = node_size;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (node_world[mid] < world)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < node_size && node_world[lo] == world ? lo : -1;
}

#define SHM_PREFIX "epmpi." /* then the pid namespace's inode in hex, ".", the pid */

void ep_proc_node_shm_name(int i, char *buf, size_t len)
{
    snprintf(buf, len, "/" SHM_PREFIX "%llx.%d", (unsigned long long)node_rec[i].pidns, (int)node_rec[i].pid);
}

/* A live process keeps its name, whatever job it belongs to. */
void ep_proc_node_shm_sweep(void)
{
    char prefix[64];
    int plen = snprintf(prefix, sizeof prefix, SHM_PREFIX "%llx.", (unsigned long long)node_rec[node_index].pidns);
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));) {
        char *end, name[300];
        if (strncmp(e->d_name, prefix, (size_t)plen))
            continue;
        long pid = strtol(e->d_name + plen, &end, 10);
        if (*end || pid <= 0 || pid > INT_MAX || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        snprintf(name, sizeof name, "/%s", e->d_name);
        shm_unlink(name);
    }
    if (d)
        closedir(d);
}

/* The machine's boot id, the two halves of the UUID folded into one word
 * as UCX does; 0 when it cannot be read. */
static uint64_t boot_id(void)
{
    char text[64] = "";
    uint64_t half[2] = {0, 0};
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f)
        return 0;
    if (!fgets(text, sizeof text, f))
        text[0] = '\0';
    fclose(f);
    int digits = 0;
    for (const char *c = text; *c && digits < 32; c++) {
        int v = *c >= '0' && *c <= '9' ? *c - '0' : *c >= 'a' && *c <= 'f' ? *c - 'a' + 10 : -1;
        if (v >= 0) {
            half[digits / 16] = half[digits / 16] << 4 | (uint64_t)v;
            digits++;
        }
    }
    return half[0] ^ half[1];
}

static uint64_t inode(const char *path)
{
    struct stat st;
    return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

static void record_mine(proc_record_t *r)
{
    struct stat shm;
    int have_shm = !stat("/dev/shm", &shm);
    *r = (proc_record_t){.boot = boot_id(),
                         .netns = inode("/proc/self/ns/net"),
                         .shm_dev = have_shm ? (uint64_t)shm.st_dev : 0,
                         .shm_ino = have_shm ? (uint64_t)shm.st_ino : 0,
                         .pidns = inode("/proc/self/ns/pid"),
                         .pid = (int32_t)getpid(),
                         .endpoints = ep_config.endpoints > 0 ? ep_config.endpoints : 1};
}

static int same_node(const proc_record_t *a, const proc_record_t *b)
{
    return a->boot == b->boot && a->netns == b->netns && a->shm_dev == b->shm_dev && a->shm_ino == b->shm_ino;
}

/* Keeps the node's members out of the job's records (in world order), and
 * what the records say about the machine. */
static ep_status_t learn_node(const proc_record_t *all)
{
    const proc_record_t *me = &all[world_rank];
    int threads = 0;
    node_size = 0;
    for (int p = 0; p < world_size; p++) {
        if (same_node(&all[p], me))
            node_size++;
        else if (me->boot && all[p].boot == me->boot && all[p].netns != me->netns)
            spans_namespaces = 1;
    }
    node_world = malloc(sizeof *node_world * (size_t)node_size);
    node_rec = malloc(sizeof *node_rec * (size_t)node_size);
    if (!node_world || !node_rec)
        return EP_ERR_NO_MEM;
    for (int p = 0, i = 0; p < world_size; p++) {
        if (!same_node(&all[p], me))
            continue;
        if (p == world_rank)
            node_index = i;
        node_world[i] = p;
        node_rec[i++] = all[p];
        threads += all[p].endpoints;
    }
    cpu_set_t cpus;
    ep_proc_cores_enough_v = !sched_getaffinity(0, sizeof cpus, &cpus) && threads <= CPU_COUNT(&cpus);
    ep_wait_crowded = !ep_proc_cores_enough_v;
    return EP_OK;
}

/* One exchange of fixed records and one duplicate of MPI_COMM_WORLD, both
 * started before either is awaited: MPICH's blocking constructors (a
 * split by node, say) poll without yielding and cost tenths of a second
 * each on a node with more processes than cores. */
ep_status_t ep_proc_init(void)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    proc_record_t mine, *all = malloc(sizeof *all * (size_t)world_size);
    MPI_Request dup_req = MPI_REQUEST_NULL, rec_req = MPI_REQUEST_NULL;
    ep_status_t rc = EP_ERR_INTERN;
    if (!all)
        return EP_ERR_NO_MEM;
    record_mine(&mine);
    if (PMPI_Comm_idup(MPI_COMM_WORLD, &group_comm, &dup_req) != MPI_SUCCESS) {
        group_comm = MPI_COMM_NULL;
        goto out;
    }
    int grc =
        PMPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, MPI_COMM_WORLD, &rec_req);
    int gwait = ep_wait_pmpi_started(grc, &rec_req);
    if (ep_wait_pmpi(&dup_req, MPI_STATUS_IGNORE) != MPI_SUCCESS || gwait != MPI_SUCCESS)
        goto out;
    PMPI_Comm_set_errhandler(group_comm, MPI_ERRORS_RETURN);
    rc = learn_node(all);
out:
    free(all);
    return rc;
}

void ep_proc_finalize(void)
{
    if (group_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&group_comm);
    free(node_world);
    free(node_rec);
    node_world = NULL;
    node_rec = NULL;
    node_size = 0;
}
