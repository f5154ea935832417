/* Settings read from the environment once, at MPI_Init. */
#ifndef EP_SETTINGS_H
#define EP_SETTINGS_H

#include <stddef.h>

typedef enum { EP_WAIT_SPIN, EP_WAIT_YIELD, EP_WAIT_SLEEP } ep_wait_policy_t;
typedef enum { EP_TRANSPORT_AUTO, EP_TRANSPORT_UCX, EP_TRANSPORT_MPI } ep_transport_t;
/* EPMPI_P2P_PATH: which communicators pass their messages straight to
 * MPICH (direct.h). */
typedef enum { EP_P2P_AUTO, EP_P2P_ENGINE, EP_P2P_MPICH } ep_p2p_path_t;

typedef struct ep_config {
    int endpoints;            /* EPMPI_ENDPOINTS: world-mode endpoints per process, 0 = off */
    ep_wait_policy_t wait;    /* EPMPI_WAIT: how a blocked endpoint waits */
    size_t eager_limit;       /* EPMPI_EAGER_LIMIT: largest message sent without a rendezvous */
    int verbose;              /* EPMPI_VERBOSE: print settings at init */
    int coll_gathered;        /* EPMPI_COLL_ALGORITHM=gathered: reductions and scans gather
                                 every input and fold in rank order (the path used when ranks
                                 are not grouped by process), for testing and debugging */
    ep_p2p_path_t p2p_path;   /* EPMPI_P2P_PATH: engine, every message through epmpi's own
                                 matching (for testing and comparison); mpich, every
                                 communicator of the direct shape straight to MPICH; auto,
                                 those of them that are not all on this node (direct.h) */
    int debug;                /* EPMPI_DEBUG: report two threads inside one endpoint's
                                 blocking calls at the same time (diag.h) */
    int stats;                /* EP_STATS_* bits: count traffic per endpoint when non-zero */
    const char *stats_file;   /* EPMPI_STATS_FILE: where the CSV goes, or NULL */
    ep_transport_t transport; /* EPMPI_TRANSPORT: endpoint messages between processes over UCX
                                 (ucx.h) or MPICH (net.c, the default); auto: UCX when built
                                 with it and it starts */
    int ucx_workers;          /* EPMPI_WORKERS: UCX workers per process, 0 = the default */
    int threads_by_call;      /* EPMPI_THREADS=first-call: a thread takes a world endpoint at its
                                 first call (thread.h); openmp (0): OpenMP thread t is endpoint t */
    int shm;                  /* EPMPI_SHM: under UCX, messages between the processes of a node
                                 go through epmpi's inboxes in shared memory (inbox.h) */
} ep_config_t;

#define EP_STATS_TABLE 1 /* EPMPI_STATS=1: a table on stderr at MPI_Finalize */
#define EP_STATS_CSV 2   /* EPMPI_STATS_FILE: a CSV file */

#define EP_MAX_ENDPOINTS_PER_PROCESS 65536
#define EP_EAGER_LIMIT_DEFAULT 16384
#define EP_EAGER_LIMIT_MAX (1u << 20)
#define EP_UCX_WORKERS_MAX 256

extern ep_config_t ep_config;

/* Reads the environment into ep_config.  On a bad value returns -1 and
 * writes a message naming the variable and the accepted values to err. */
int ep_config_load(char *err, size_t errlen);

const char *ep_config_wait_name(ep_wait_policy_t w);
const char *ep_config_transport_name(ep_transport_t t);

#endif
