/* Communicator queries and management on endpoint communicators. */
#include "core/attr.h"
#include "comm/comm_create.h"
#include "diag/diag.h"
#include "entry.h"
#include "base/thread.h"
#include "comm/threadcomm.h"

#include <stdio.h>
#include <string.h>

ENTRY_ENDPOINT_PATH int comm_rank_ep(MPI_Comm comm, int *rank)
{
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP("MPI_Comm_rank", comm, ep);
    if (!rank)
        return entry_raise(ep, "MPI_Comm_rank", MPI_ERR_ARG, "rank pointer is NULL");
    *rank = ep_local_rank(ep);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int comm_size_ep(MPI_Comm comm, int *size)
{
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP("MPI_Comm_size", comm, ep);
    if (!size)
        return entry_raise(ep, "MPI_Comm_size", MPI_ERR_ARG, "size pointer is NULL");
    *size = ep_local_size(ep);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int comm_test_inter_ep(MPI_Comm comm, int *flag)
{
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP("MPI_Comm_test_inter", comm, ep);
    if (!flag)
        return entry_raise(ep, "MPI_Comm_test_inter", MPI_ERR_ARG, "flag pointer is NULL");
    *flag = ep->comm->inter;
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int comm_remote_size_ep(MPI_Comm comm, int *size)
{
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP("MPI_Comm_remote_size", comm, ep);
    if (!ep->comm->inter)
        return entry_raise(ep, "MPI_Comm_remote_size", MPI_ERR_COMM, "the communicator is not an intercommunicator");
    if (!size)
        return entry_raise(ep, "MPI_Comm_remote_size", MPI_ERR_ARG, "size pointer is NULL");
    *size = ep_remote_size(ep);
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    ep_endpoint_t *a = NULL, *b = NULL;
    int rc;
    if (!entry_comm_is_ep(comm1) && !entry_comm_is_ep(comm2))
        return PMPI_Comm_compare(comm1, comm2, result);
    if (entry_comm_is_ep(comm1) && (rc = entry_endpoint("MPI_Comm_compare", comm1, &a)))
        return rc;
    if (entry_comm_is_ep(comm2) && (rc = entry_endpoint("MPI_Comm_compare", comm2, &b)))
        return rc;
    if (!result)
        return entry_raise(a ? a : b, "MPI_Comm_compare", MPI_ERR_ARG, "result pointer is NULL");
    if (a && b) {
        *result = ep_comm_compare_ep(a, b);
        return MPI_SUCCESS;
    }
    MPI_Comm classic = a ? comm2 : comm1;
    if (classic == MPI_COMM_NULL)
        return entry_raise(a ? a : b, "MPI_Comm_compare", MPI_ERR_COMM, "communicator is MPI_COMM_NULL");
    ep_status_t st = ep_comm_compare_classic(a ? a : b, classic, result);
    return st ? entry_raise_status(a ? a : b, "MPI_Comm_compare", st, NULL) : MPI_SUCCESS;
}

/* The four duplications share one function.  with_info: info is the new
 * communicator's hint set, MPI_INFO_NULL for none (MPICH accepts it so,
 * and programs rely on it); otherwise the old one's hints are copied. */
static int dup_ep(const char *call, MPI_Comm comm, MPI_Info info, int with_info, MPI_Comm *newcomm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    MPI_Info copy = MPI_INFO_NULL;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if (!newcomm)
        return entry_raise(ep, call, MPI_ERR_ARG, "newcomm pointer is NULL");
    if (!with_info)
        info = ep->info;
    if (info != MPI_INFO_NULL &&
        (with_info ? entry_comm_hints(info, &copy) : PMPI_Info_dup(info, &copy)) != MPI_SUCCESS)
        return entry_raise(ep, call, MPI_ERR_INFO, "invalid info " EP_HFMT, EP_HARG(info));
    ep_comm_dup_args(&a, ep, copy, newcomm);
    int rc = entry_coll_go(ep, call, &a, req);
    if (rc != MPI_SUCCESS && copy != MPI_INFO_NULL && req != ENTRY_BLOCKING)
        PMPI_Info_free(&copy); /* not started: nobody took it */
    return rc;
}

ENTRY_ENDPOINT_PATH int comm_set_info_ep(MPI_Comm comm, MPI_Info info)
{
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP("MPI_Comm_set_info", comm, ep);
    MPI_Info copy;
    if (info == MPI_INFO_NULL || entry_comm_hints(info, &copy) != MPI_SUCCESS)
        return entry_raise(ep, "MPI_Comm_set_info", MPI_ERR_INFO, "invalid info " EP_HFMT, EP_HARG(info));
    ep_endpoint_set_info(ep, copy);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int comm_get_info_ep(MPI_Comm comm, MPI_Info *info_used)
{
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP("MPI_Comm_get_info", comm, ep);
    int rc = ep->info != MPI_INFO_NULL ? PMPI_Info_dup(ep->info, info_used) : PMPI_Info_create(info_used);
    /* Which path its messages take, and which transport, for the curious. */
    const char *path = ep_comm_p2p_path(ep->comm), *transport = ep_comm_transport(ep->comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(*info_used, "epmpi_p2p_path", path);
    if (rc == MPI_SUCCESS && transport)
        rc = PMPI_Info_set(*info_used, "epmpi_transport", transport);
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : entry_raise(ep, "MPI_Comm_get_info", MPI_ERR_INFO, "could not copy the info");
}

ENTRY_API int MPI_Comm_free(MPI_Comm *comm)
{
    ep_endpoint_t *ep;
    if (!comm)
        return PMPI_Comm_free(comm);
    ENTRY_RESOLVE("MPI_Comm_free", *comm, ep, PMPI_Comm_free(comm));
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return entry_raise(ep, "MPI_Comm_free", MPI_ERR_COMM, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed");
    if (ep_threadcomm_get(*comm))
        return entry_raise(ep, "MPI_Comm_free", MPI_ERR_COMM,
                           "a thread communicator is freed with MPIX_Threadcomm_free");
    int rc = ep_attr_delete_all(ep_attr_of(ep));
    if (rc != MPI_SUCCESS)
        return entry_raise(ep, "MPI_Comm_free", MPI_ERR_OTHER, "an attribute delete callback failed with error %d", rc);
    ep_endpoint_free(ep);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* The split types the MPI knows (MPI 4.0's hardware types are not in Open
 * MPI 4.1; MPICH's neighbourhood type is MPICH's). */
static int known_split_type(int split_type)
{
    switch (split_type) {
    case MPI_UNDEFINED:
    case MPI_COMM_TYPE_SHARED:
#ifdef MPI_COMM_TYPE_HW_GUIDED
    case MPI_COMM_TYPE_HW_GUIDED:
    case MPI_COMM_TYPE_HW_UNGUIDED:
#endif
#ifdef MPIX_COMM_TYPE_NEIGHBORHOOD
    case MPIX_COMM_TYPE_NEIGHBORHOOD:
#endif
        return 1;
    default:
        return 0;
    }
}

ENTRY_ENDPOINT_PATH int comm_split_ep(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_split";
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if (!newcomm)
        return entry_raise(ep, call, MPI_ERR_ARG, "newcomm pointer is NULL");
    if (color < 0 && color != MPI_UNDEFINED)
        return entry_raise(ep, call, MPI_ERR_ARG, "invalid color %d (must be non-negative or MPI_UNDEFINED)", color);
    ep_status_t st = ep_comm_split(ep, color, key, newcomm);
    return st ? entry_raise_status(ep, call, st, NULL) : MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int comm_split_type_ep(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Comm_split_type";
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if (!newcomm)
        return entry_raise(ep, call, MPI_ERR_ARG, "newcomm pointer is NULL");
    /* The types MPICH knows: an endpoint goes where its process goes (an
     * intercommunicator splits into intercommunicators, as with
     * MPI_Comm_split).  Any other value is refused at once, before anything
     * collective. */
    if (!known_split_type(split_type))
        return entry_raise(ep, call, MPI_ERR_ARG, "unknown split type %d", split_type);
    ep_status_t st = ep_comm_split_type(ep, split_type, key, info, newcomm);
    return st ? entry_raise_status(ep, call, st, NULL) : MPI_SUCCESS;
}

static int create_endpoints(const char *call, MPI_Comm parent, int my_num_ep, MPI_Info info, MPI_Comm out[])
{
    ep_endpoint_t *ep = NULL;
    ep_status_t st;
    int rc, inter = 0;
    (void)info;

    if (entry_comm_is_ep(parent)) {
        if ((rc = entry_endpoint(call, parent, &ep)) || (rc = entry_check_intra(ep, call)))
            return rc;
    } else if (parent == MPI_COMM_NULL) {
        return entry_raise(NULL, call, MPI_ERR_COMM, "parent communicator is MPI_COMM_NULL");
    } else if (PMPI_Comm_test_inter(parent, &inter) != MPI_SUCCESS) {
        return entry_raise(NULL, call, MPI_ERR_COMM, "invalid parent communicator " EP_HFMT, EP_HARG(parent));
    } else if (inter) {
        return entry_raise_classic(parent, call, MPI_ERR_COMM, "the parent is an intercommunicator");
    }
    /* Errors go to the parent's handler, endpoint or classic. */
#define RAISE_PARENT(cls, ...) \
    (ep ? entry_raise(ep, call, cls, __VA_ARGS__) : entry_raise_classic(parent, call, cls, __VA_ARGS__))
    if (my_num_ep < 0)
        return RAISE_PARENT(MPI_ERR_ARG, "my_num_ep is %d (must be non-negative)", my_num_ep);
    if (my_num_ep > 0 && !out)
        return RAISE_PARENT(MPI_ERR_ARG, "out_comm_hdls is NULL but my_num_ep is %d", my_num_ep);
    st = ep ? ep_comm_create_endpoints_ep(ep, my_num_ep, out)
            : ep_comm_create_endpoints_classic(parent, 0, my_num_ep, out);
    if (st == EP_OK)
        return MPI_SUCCESS;
    if (st == EP_ERR_ENDPOINTS)
        return RAISE_PARENT(MPI_ERR_ENDPOINTS, "could not create %d endpoints (out of handles or memory)", my_num_ep);
    return RAISE_PARENT(ep_status_class(st), "%s", ep_status_take_text(st));
#undef RAISE_PARENT
}

/* ---- MPICH's thread communicators, on endpoints ------------------------------ */

ENTRY_API int MPIX_Threadcomm_init(MPI_Comm comm, int num_threads, MPI_Comm *newcomm)
{
    static const char call[] = "MPIX_Threadcomm_init";
    ep_endpoint_t *ep = NULL;
    ep_threadcomm_t *tc;
    int rc, inter = 0;
    if (entry_comm_is_ep(comm)) {
        if ((rc = entry_endpoint(call, comm, &ep)) || (rc = entry_check_intra(ep, call)))
            return rc;
    } else if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
        return entry_raise(NULL, call, MPI_ERR_COMM, "invalid parent communicator " EP_HFMT, EP_HARG(comm));
    }
    if (num_threads < 1 || !newcomm)
        return ep ? entry_raise(ep, call, MPI_ERR_ARG, "num_threads is %d (must be at least 1)", num_threads)
                  : entry_raise_classic(comm, call, MPI_ERR_ARG, "num_threads is %d (must be at least 1)", num_threads);
    ep_status_t st = ep_threadcomm_init(comm, ep, num_threads, &tc);
    if (st)
        return ep ? entry_raise_status(ep, call, st, NULL)
                  : entry_raise_classic(comm, call, ep_status_class(st), "%s", ep_status_take_text(st));
    *newcomm = tc->handle;
    return MPI_SUCCESS;
}

/* Start and finish bracket a thread's use of the handle: start makes the
 * calling thread (of any kind) one of the endpoints, finish lets it go;
 * both wait for all the process's threads of the communicator. */
static int threadcomm_step(const char *call, MPI_Comm threadcomm, ep_status_t (*step)(ep_threadcomm_t *))
{
    ep_threadcomm_t *tc = ep_threadcomm_get(threadcomm);
    if (!tc)
        return entry_raise(NULL, call, MPI_ERR_COMM, EP_HFMT " is not a thread communicator", EP_HARG(threadcomm));
    ep_status_t st = step(tc);
    if (st)
        return entry_raise(NULL, call, ep_status_class(st), "%s", ep_status_take_text(st));
    return MPI_SUCCESS;
}

ENTRY_API int MPIX_Threadcomm_start(MPI_Comm threadcomm)
{
    return threadcomm_step("MPIX_Threadcomm_start", threadcomm, ep_threadcomm_start);
}

ENTRY_API int MPIX_Threadcomm_finish(MPI_Comm threadcomm)
{
    return threadcomm_step("MPIX_Threadcomm_finish", threadcomm, ep_threadcomm_finish);
}

ENTRY_API int MPIX_Threadcomm_free(MPI_Comm *threadcomm)
{
    ep_threadcomm_t *tc = threadcomm ? ep_threadcomm_get(*threadcomm) : NULL;
    if (!tc)
        return entry_raise(NULL, "MPIX_Threadcomm_free", MPI_ERR_COMM, EP_HFMT " is not a thread communicator",
                           EP_HARG(threadcomm ? *threadcomm : MPI_COMM_NULL));
    ep_threadcomm_free(tc);
    *threadcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* MPICH 4.2's question, answered on every MPICH: true for the handle
 * MPIX_Threadcomm_init gave, inside or outside start / finish (not for
 * communicators derived from it, which are each thread's own endpoint
 * communicators). */
ENTRY_API int MPIX_Comm_test_threadcomm(MPI_Comm comm, int *flag)
{
    static const char call[] = "MPIX_Comm_test_threadcomm";
    if (!entry_comm_is_ep(comm)) {
#if HAVE_DECL_PMPIX_COMM_TEST_THREADCOMM
        return PMPIX_Comm_test_threadcomm(comm, flag);
#else
        int inter;
        if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
            return entry_raise(NULL, call, MPI_ERR_COMM, "invalid communicator " EP_HFMT, EP_HARG(comm));
        if (!flag)
            return entry_raise_classic(comm, call, MPI_ERR_ARG, "flag pointer is NULL");
        *flag = 0;
        return MPI_SUCCESS;
#endif
    }
    ep_endpoint_t *ep = NULL;
    int is_threadcomm = ep_threadcomm_get(comm) != NULL, rc;
    if (!is_threadcomm && (rc = entry_endpoint(call, comm, &ep)))
        return rc;
    if (!flag)
        return entry_raise(ep, call, MPI_ERR_ARG, "flag pointer is NULL");
    *flag = is_threadcomm;
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Comm_create_endpoints(MPI_Comm parent_comm, int my_num_ep, MPI_Info info, MPI_Comm out_comm_hdls[])
{
    return create_endpoints("MPI_Comm_create_endpoints", parent_comm, my_num_ep, info, out_comm_hdls);
}

ENTRY_API int MPIX_Comm_create_endpoints(MPI_Comm parent_comm, int my_num_ep, MPI_Info info, MPI_Comm out_comm_hdls[])
{
    return create_endpoints("MPIX_Comm_create_endpoints", parent_comm, my_num_ep, info, out_comm_hdls);
}

/* ---- names ---------------------------------------------------------------- */

ENTRY_ENDPOINT_PATH int comm_set_name_ep(MPI_Comm comm, const char *comm_name)
{
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP("MPI_Comm_set_name", comm, ep);
    if (!comm_name)
        return entry_raise(ep, "MPI_Comm_set_name", MPI_ERR_ARG, "comm_name is NULL");
    snprintf(ep->name, sizeof ep->name, "%s", comm_name);
    ep_stats_named(ep);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int comm_get_name_ep(MPI_Comm comm, char *comm_name, int *resultlen)
{
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP("MPI_Comm_get_name", comm, ep);
    const char *n = ep->name;
    if (!*n && comm == MPI_COMM_WORLD)
        n = "MPI_COMM_WORLD";
    else if (!*n && comm == MPI_COMM_SELF)
        n = "MPI_COMM_SELF";
    snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", n);
    *resultlen = (int)strlen(comm_name);
    return MPI_SUCCESS;
}

/* ---- error handlers ------------------------------------------------------- */

/* The handler's function is recorded, for endpoints to call it. */
static int create_errhandler(const char *call, MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    int rc = PMPI_Comm_create_errhandler(fn, errhandler);
    if (rc == MPI_SUCCESS && ep_errhandler_record(*errhandler, fn, NULL)) {
        PMPI_Errhandler_free(errhandler);
        return entry_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory recording the handler");
    }
    return rc;
}

ENTRY_API int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create_errhandler("MPI_Comm_create_errhandler", fn, errhandler);
}

#if EP_HAVE_MPI_Errhandler_create /* MPI-1's name, which Open MPI's mpi.h no longer offers */
ENTRY_API int MPI_Errhandler_create(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create_errhandler("MPI_Errhandler_create", fn, errhandler);
}
#endif

/* A handler endpoints still use is freed when the last lets it go. */
ENTRY_API int MPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    if (!errhandler)
        return PMPI_Errhandler_free(errhandler);
    return ep_errhandler_free(errhandler);
}

/* Also the MPI-1 names, MPI_Errhandler_set and _get (call). */
ENTRY_ENDPOINT_PATH int comm_set_errhandler_ep(const char *call, MPI_Comm comm, MPI_Errhandler errhandler)
{
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if (errhandler == MPI_ERRHANDLER_NULL)
        return entry_raise(ep, call, MPI_ERR_ARG, "errhandler is MPI_ERRHANDLER_NULL");
    if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF) {
        /* The main thread speaks for the process, as it does for MPI_Init:
         * outside a parallel region (first-call: for the endpoints no
         * other thread holds), the endpoints of the process get it. */
        ep_endpoint_t **eps = ep_world.ep + (comm == MPI_COMM_WORLD ? 0 : ep_world.nep);
        for (int t = 0; t < ep_world.nep; t++)
            if (eps[t] == ep || ep_thread_speaks_for(t))
                ep_errhandler_assign(&eps[t]->errhandler, errhandler);
        return MPI_SUCCESS;
    }
    ep_errhandler_assign(&ep->errhandler, errhandler);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int comm_get_errhandler_ep(const char *call, MPI_Comm comm, MPI_Errhandler *errhandler)
{
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP(call, comm, ep);
    *errhandler = ep->errhandler;
    ep_errhandler_give(*errhandler); /* the caller's reference, for its MPI_Errhandler_free */
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int comm_call_errhandler_ep(MPI_Comm comm, int errorcode)
{
    ep_endpoint_t *ep;
    ENTRY_RESOLVE_EP("MPI_Comm_call_errhandler", comm, ep);
    ep_errhandler_invoke(ep->errhandler, ep->user_handle, errorcode);
    return MPI_SUCCESS;
}

/* The entry points whose dispatch is data (maint/dispatch.txt). */
#include "comm.entry.gen.inc"
