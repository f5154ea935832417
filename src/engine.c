#include "engine.h"

#include "core/attr.h"
#include "diag/diag.h"
#include "p2p/direct.h"
#include "p2p/p2p.h"
#include "epmpi.h"
#include "base/error.h"
#include "transport/net.h"
#include "core/proc.h"
#include "core/request.h"
#include "base/settings.h"
#include "base/thread.h"
#include "transport/transport.h"
#include "transport/ucx.h"
#include "rma/win.h"
#include "core/world.h"
#include "comm/world_create.h"

#include <stdio.h>

int ep_tag_ub = 32767;

static int engine_up;

static void fatal_setup(const char *call, const char *msg) { ep_die(1, "%s: %s", call, msg); }

/* --verbose: one line per process saying how it runs. */
static void describe(void)
{
    int wr = ep_proc_world_rank(), ws = ep_proc_world_size();
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], world[160] = "world mode off";
    int len;
    PMPI_Get_library_version(lib, &len);
    for (int i = 0; i < len; i++) {
        if (lib[i] == '\n') {
            lib[i] = '\0';
            break;
        }
        if (lib[i] == '\t') /* MPICH's "MPICH Version:\t4.0.2" */
            lib[i] = ' ';
    }
    if (ep_world_mode())
        snprintf(world, sizeof world, "world mode on, %d endpoints, threads %s, OpenMP threads %d", ep_config.endpoints,
                 ep_config.threads_by_call ? "first-call" : "openmp", ep_thread_omp_max());
    char tr[512];
    ep_ucx_describe(tr, sizeof tr);
    ep_say("epmpi %s: process %d of %d: %s, wait %s, eager limit %zu, collectives %s, debug %s, stats %s, %s; %s\n",
           EPMPI_VERSION, wr, ws, world, ep_config_wait_name(ep_config.wait), ep_config.eager_limit,
           ep_config.coll_gathered ? "gathered" : "auto", ep_config.debug ? "on" : "off",
           ep_config.stats ? "on" : "off", tr, lib);
}

static int (*raise_world)(int code);

static void classic_world_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    if (!ep_pmpi_quiet)
        raise_world(*code);
}

int ep_engine_init(const char *call, int *argc, char ***argv, int (*raise)(int code))
{
    raise_world = raise;
    char err[256];
    int prov = 0, rc;

    if (ep_config_load(err, sizeof err)) {
        /* Start MPI anyway so the job ends cleanly with the message. */
        PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &prov);
        fatal_setup(call, err);
    }
    rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &prov);
    if (rc != MPI_SUCCESS)
        return rc;
    if (prov != MPI_THREAD_MULTIPLE)
        fatal_setup(call, "the MPI library does not provide MPI_THREAD_MULTIPLE, which epmpi needs");
    if (ep_abi_init())
        fatal_setup(call, "could not learn the predefined datatypes of " EP_MPI_NAME);
    int *ub, has_ub = 0;
    if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &has_ub) == MPI_SUCCESS && has_ub)
        ep_tag_ub = *ub;
    if (ep_proc_init() || ep_net_init())
        fatal_setup(call, "could not set up the transport communicators");
    if (ep_ucx_init(err, sizeof err))
        fatal_setup(call, err);
    if (ep_diag_init(err, sizeof err))
        fatal_setup(call, err);
    engine_up = 1;
    if (ep_config.endpoints > 0) {
        ep_status_t st = ep_world_init(ep_config.endpoints);
        if (st) {
            snprintf(err, sizeof err, "could not create %d world endpoints per process (EPMPI_ENDPOINTS): %s",
                     ep_config.endpoints, ep_status_text(st));
            fatal_setup(call, err);
        }
        MPI_Errhandler eh;
        if (PMPI_Comm_create_errhandler(classic_world_errors, &eh) == MPI_SUCCESS) {
            PMPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
            PMPI_Errhandler_free(&eh);
        }
    }
    if (ep_config.verbose)
        describe();
    return MPI_SUCCESS;
}

/* What the lanes still hold for ep is matched (diag.h). */
static void drain_lanes(ep_endpoint_t *ep) { ep_p2p_drain(ep, 1); }

int ep_engine_finalize(int (*delete_failed)(int failed, int code))
{
    int rc = MPI_SUCCESS, failed;
    if (engine_up) {
        int cb = ep_world_mode() ? ep_world_delete_attrs(&failed) : MPI_SUCCESS;
        if (cb != MPI_SUCCESS)
            rc = delete_failed(failed, cb);
        /* Everyone has stopped communicating once all processes are here. */
        PMPI_Barrier(MPI_COMM_WORLD);
        ep_diag_finalize(drain_lanes);
        ep_request_credits_drop_all(); /* the endpoints' holds the threads took in advance */
        if (ep_world_mode())
            ep_world_finalize();
        ep_ucx_stop_helper();
        ep_win_finalize();
        ep_progress_finalize();
        ep_net_finalize();
        ep_proc_finalize();
        ep_ucx_finalize();
        ep_request_pools_free();
        ep_keyval_finalize();
        ep_errhandler_finalize();
        ep_dt_finalize();
        ep_registry_finalize();
        engine_up = 0;
    }
    int done = PMPI_Finalize();
    return rc != MPI_SUCCESS ? rc : done;
}
