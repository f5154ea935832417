/* Collectives on endpoint communicators, blocking and non-blocking: each
 * pair shares one function that checks the arguments once and describes
 * the call (src/coll.h).  The blocking form passes BLOCKING as the request
 * pointer and the call runs to completion; the non-blocking form passes
 * the caller's, which gets the request. */
#include "coll.h"
#include "entry.h"
#include "topo.h"

#include <stdlib.h>

#define BLOCKING EP_BLOCKING
#define coll_go ep_coll_go

/* Resolves a collective's communicator to its endpoint.  MPI_IN_PLACE has
 * no meaning on intercommunicators. */
#define COLL_ENTRY(call, comm, ep, sendbuf)                                                       \
    do {                                                                                          \
        EP_ENTRY_EP(call, comm, ep);                                                              \
        if ((ep)->comm->inter && (sendbuf) == MPI_IN_PLACE)                                       \
            return ep_raise(ep, call, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on intercommunicators"); \
    } while (0)
/* For the collectives MPI defines on intracommunicators only (scans). */
#define COLL_ENTRY_INTRA(call, comm, ep)                                                          \
    do {                                                                                          \
        int rc_;                                                                                  \
        EP_ENTRY_EP(call, comm, ep);                                                              \
        if ((rc_ = ep_check_intra(ep, call)))                                                     \
            return rc_;                                                                           \
    } while (0)

/* ---- argument checks shared by the collectives below ------------------------- */

/* A (buffer, count, type) triple. */
static int check_block(ep_endpoint_t *ep, const char *call, const void *buf, MPI_Count count, MPI_Datatype type)
{
    int rc;
    if ((rc = ep_check_count(ep, call, count)) || (rc = ep_check_type(ep, call, type)) ||
        (rc = ep_check_buf(ep, call, buf, count, type)))
        return rc;
    return MPI_SUCCESS;
}

/* Per-peer counts and displacements as a call passes them: ints (the
 * MPI-3 forms) or 64 bits (the _c forms, and Neighbor_alltoallw's
 * displacements).  The exchange reads 64 bits (src/coll.h). */
typedef struct vec {
    const int *counts, *displs;
    const MPI_Count *counts_c;
    const MPI_Aint *displs_c;
} vec_t;
#define VEC(c, d) ((vec_t){(c), (d), NULL, NULL})
#define VEC_C(c, d) ((vec_t){NULL, NULL, (c), (d)})

/* v's n entries, as 64 bits (*c, *d), checked: present, counts
 * non-negative.  Int arrays are widened into *blk, which the caller frees
 * once the call has started (a non-blocking one keeps its own copy). */
static int vec_read(ep_endpoint_t *ep, const char *call, const char *what, vec_t v, int n, const MPI_Count **c,
                    const MPI_Aint **d, void **blk)
{
    *blk = NULL;
    *c = v.counts_c;
    *d = v.displs_c;
    if ((!v.counts && !v.counts_c) || (!v.displs && !v.displs_c))
        return n ? ep_raise(ep, call, MPI_ERR_ARG, "%s counts or displacements are NULL", what) : MPI_SUCCESS;
    if (v.counts || v.displs) {
        char *b = *blk = malloc((sizeof(MPI_Count) + sizeof(MPI_Aint)) * (size_t)(n > 0 ? n : 1));
        if (!b)
            return ep_raise(ep, call, MPI_ERR_NO_MEM, "out of memory for %d counts", n);
        MPI_Count *cc = (MPI_Count *)(void *)b;
        MPI_Aint *dd = (MPI_Aint *)(void *)(b + sizeof(MPI_Count) * (size_t)(n > 0 ? n : 1));
        for (int r = 0; r < n; r++) {
            if (v.counts)
                cc[r] = v.counts[r];
            if (v.displs)
                dd[r] = v.displs[r];
        }
        if (v.counts)
            *c = cc;
        if (v.displs)
            *d = dd;
    }
    for (int r = 0; r < n; r++)
        if ((*c)[r] < 0) {
            free(*blk);
            *blk = NULL;
            return ep_raise(ep, call, MPI_ERR_COUNT, "%s count %lld for rank %d is negative", what,
                            (long long)(*c)[r], r);
        }
    return MPI_SUCCESS;
}

static int check_types(ep_endpoint_t *ep, const char *call, const MPI_Datatype *types, const MPI_Count *counts, int n)
{
    int rc;
    if (!types && n > 0)
        return ep_raise(ep, call, MPI_ERR_ARG, "datatype array is NULL");
    for (int r = 0; r < n; r++)
        if (counts[r] > 0 && (rc = ep_check_type(ep, call, types[r])))
            return rc;
    return MPI_SUCCESS;
}

/* Runs a described call and frees the widened arrays. */
static int go_free(ep_endpoint_t *ep, const char *call, ep_coll_args_t *a, MPI_Request *req, void *b1, void *b2)
{
    int rc = coll_go(ep, call, a, req);
    free(b1);
    free(b2);
    return rc;
}

static int check_reduction(ep_endpoint_t *ep, const char *call, int count, MPI_Datatype type, MPI_Op op)
{
    int rc;
    if ((rc = ep_check_count(ep, call, count)) || (rc = ep_check_type(ep, call, type)) ||
        (rc = ep_check_op(ep, call, op)))
        return rc;
    return MPI_SUCCESS;
}


/* ---- barrier, bcast, allreduce, allgather ---------------------------------- */

static int barrier_ep(const char *call, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    EP_ENTRY_EP(call, comm, ep);
    ep_coll_barrier(&a, ep);
    return coll_go(ep, call, &a, req);
}

EP_API int MPI_Barrier(MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Barrier(comm);
    return barrier_ep("MPI_Barrier", comm, BLOCKING);
}

EP_API int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ibarrier(comm, request);
    return barrier_ep("MPI_Ibarrier", comm, request);
}

static int bcast_ep(const char *call, void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    EP_ENTRY_EP(call, comm, ep);
    if ((rc = ep_check_root(ep, call, root)))
        return rc;
    /* Intercommunicators: the buffer matters at MPI_ROOT and in the other group. */
    if ((!ep->comm->inter || root != MPI_PROC_NULL) && (rc = check_block(ep, call, buffer, count, datatype)))
        return rc;
    ep_coll_bcast(&a, ep, buffer, count, datatype, root);
    return coll_go(ep, call, &a, req);
}

EP_API int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    return bcast_ep("MPI_Bcast", buffer, count, datatype, root, comm, BLOCKING);
}

EP_API int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                      MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
    return bcast_ep("MPI_Ibcast", buffer, count, datatype, root, comm, request);
}

/* Reduce, and Allreduce (all: every rank gets the result; root unused). */
static int reduce_ep(const char *call, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int all, int root, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    int inter = ep->comm->inter;
    if (!all && (rc = ep_check_root(ep, call, root)))
        return rc;
    if ((rc = check_reduction(ep, call, count, datatype, op)))
        return rc;
    /* Who receives the result, and who contributes (intercommunicators:
     * the root's group receives, the other contributes). */
    int gets = all || (inter ? root == MPI_ROOT : ep->rank == root);
    int gives = all || !inter || root >= 0;
    if (sendbuf == MPI_IN_PLACE && !gets)
        return ep_raise(ep, call, MPI_ERR_BUFFER, "MPI_IN_PLACE is only allowed at the root");
    if ((gets && (rc = ep_check_buf(ep, call, recvbuf, count, datatype))) ||
        (gives && sendbuf != MPI_IN_PLACE && (rc = ep_check_buf(ep, call, sendbuf, count, datatype))))
        return rc;
    ep_coll_reduce(&a, ep, sendbuf, recvbuf, count, datatype, op, all, root);
    return coll_go(ep, call, &a, req);
}

EP_API int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    return reduce_ep("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, 1, 0, comm, BLOCKING);
}

EP_API int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    return reduce_ep("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, 1, 0, comm, request);
}

EP_API int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                      MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    return reduce_ep("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, 0, root, comm, BLOCKING);
}

EP_API int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                       MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
    return reduce_ep("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, 0, root, comm,
                     request);
}

static int allgather_ep(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    if ((rc = check_block(ep, call, recvbuf, recvcount, recvtype)) ||
        (sendbuf != MPI_IN_PLACE && (rc = check_block(ep, call, sendbuf, sendcount, sendtype))))
        return rc;
    ep_coll_allgather(&a, ep, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return coll_go(ep, call, &a, req);
}

EP_API int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return allgather_ep("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, BLOCKING);
}

EP_API int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    return allgather_ep("MPI_Iallgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

/* ---- rooted data movement ------------------------------------------------------ */

/* The rooted calls' checks: the root, the non-root side (buf, count,
 * type), and at the root its per-rank side: root_count elements or the
 * per-rank counts and displacements (read into *c, *d, *blk; `what`:
 * "receive" for gathers, "send" for scatters). */
static int check_rooted(ep_endpoint_t *ep, const char *call, int root, const void *buf, MPI_Count count,
                        MPI_Datatype type, MPI_Count root_count, const vec_t *v, MPI_Datatype root_type,
                        const char *what, const MPI_Count **c, const MPI_Aint **d, void **blk)
{
    int rc;
    *c = NULL;
    *d = NULL;
    *blk = NULL;
    if ((rc = ep_check_root(ep, call, root)))
        return rc;
    /* Intercommunicators: MPI_ROOT holds the root's side, the other group
     * its own blocks, MPI_PROC_NULL nothing. */
    int inter = ep->comm->inter;
    int at_root = inter ? root == MPI_ROOT : ep->rank == root;
    if (buf == MPI_IN_PLACE && (inter || !at_root))
        return ep_raise(ep, call, MPI_ERR_BUFFER, "MPI_IN_PLACE is only allowed at the root of an intracommunicator");
    if ((!inter || root >= 0) && buf != MPI_IN_PLACE && (rc = check_block(ep, call, buf, count, type)))
        return rc;
    if (at_root && ((rc = ep_check_type(ep, call, root_type)) ||
                    (v ? (rc = vec_read(ep, call, what, *v, ep_remote_size(ep), c, d, blk))
                       : (rc = ep_check_count(ep, call, root_count)))))
        return rc;
    return MPI_SUCCESS;
}

/* v NULL: the uniform form (recvcount from each rank). */
static int gather_ep(const char *call, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                     void *recvbuf, MPI_Count recvcount, const vec_t *v, MPI_Datatype recvtype, int root,
                     MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    const MPI_Count *c;
    const MPI_Aint *d;
    void *blk;
    int rc;
    EP_ENTRY_EP(call, comm, ep);
    if ((rc = check_rooted(ep, call, root, sendbuf, sendcount, sendtype, recvcount, v, recvtype, "receive", &c, &d,
                           &blk)))
        return rc;
    ep_coll_gatherv(&a, ep, sendbuf, sendcount, sendtype, recvbuf, recvcount, c, d, recvtype, root);
    return go_free(ep, call, &a, req, blk, NULL);
}

EP_API int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return gather_ep("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, recvtype, root, comm,
                     BLOCKING);
}

EP_API int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    return gather_ep("MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, recvtype, root, comm,
                     request);
}

EP_API int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    vec_t v = VEC(recvcounts, displs);
    return gather_ep("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, 0, &v, recvtype, root, comm, BLOCKING);
}

EP_API int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                             request);
    vec_t v = VEC(recvcounts, displs);
    return gather_ep("MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf, 0, &v, recvtype, root, comm, request);
}

/* v NULL: the uniform form (sendcount to each rank). */
static int scatter_ep(const char *call, const void *sendbuf, MPI_Count sendcount, const vec_t *v,
                      MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    const MPI_Count *c;
    const MPI_Aint *d;
    void *blk;
    int rc;
    EP_ENTRY_EP(call, comm, ep);
    if ((rc = check_rooted(ep, call, root, recvbuf, recvcount, recvtype, sendcount, v, sendtype, "send", &c, &d,
                           &blk)))
        return rc;
    ep_coll_scatterv(&a, ep, sendbuf, sendcount, c, d, sendtype, recvbuf, recvcount, recvtype, root);
    return go_free(ep, call, &a, req, blk, NULL);
}

EP_API int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return scatter_ep("MPI_Scatter", sendbuf, sendcount, NULL, sendtype, recvbuf, recvcount, recvtype, root, comm,
                      BLOCKING);
}

EP_API int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    return scatter_ep("MPI_Iscatter", sendbuf, sendcount, NULL, sendtype, recvbuf, recvcount, recvtype, root, comm,
                      request);
}

EP_API int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    vec_t v = VEC(sendcounts, displs);
    return scatter_ep("MPI_Scatterv", sendbuf, 0, &v, sendtype, recvbuf, recvcount, recvtype, root, comm, BLOCKING);
}

EP_API int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                              request);
    vec_t v = VEC(sendcounts, displs);
    return scatter_ep("MPI_Iscatterv", sendbuf, 0, &v, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}

/* ---- all to all ---------------------------------------------------------------- */

static int allgatherv_ep(const char *call, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, vec_t v, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    const MPI_Count *c;
    const MPI_Aint *d;
    void *blk = NULL;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    if ((sendbuf != MPI_IN_PLACE && (rc = check_block(ep, call, sendbuf, sendcount, sendtype))) ||
        (rc = ep_check_type(ep, call, recvtype)) ||
        (rc = vec_read(ep, call, "receive", v, ep_remote_size(ep), &c, &d, &blk)))
        return rc;
    ep_coll_allgatherv(&a, ep, sendbuf, sendcount, sendtype, recvbuf, 0, c, d, recvtype);
    return go_free(ep, call, &a, req, blk, NULL);
}

EP_API int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    return allgatherv_ep("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, VEC(recvcounts, displs), recvtype,
                         comm, BLOCKING);
}

EP_API int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
    return allgatherv_ep("MPI_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, VEC(recvcounts, displs),
                         recvtype, comm, request);
}

static int alltoall_ep(const char *call, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    if ((sendbuf != MPI_IN_PLACE && (rc = check_block(ep, call, sendbuf, sendcount, sendtype))) ||
        (rc = check_block(ep, call, recvbuf, recvcount, recvtype)))
        return rc;
    ep_coll_alltoallw(&a, ep, sendbuf, sendcount, NULL, NULL, sendtype, NULL, recvbuf, recvcount, NULL, NULL,
                      recvtype, NULL, 0);
    return coll_go(ep, call, &a, req);
}

EP_API int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return alltoall_ep("MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, BLOCKING);
}

EP_API int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    return alltoall_ep("MPI_Ialltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

/* The v forms, and the w forms (w: a type per rank, displacements in
 * bytes). */
static int alltoallvw_ep(const char *call, int w, const void *sendbuf, vec_t sv, MPI_Datatype sendtype,
                         const MPI_Datatype *sendtypes, void *recvbuf, vec_t rv, MPI_Datatype recvtype,
                         const MPI_Datatype *recvtypes, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    const MPI_Count *sc = NULL, *rc_ = NULL;
    const MPI_Aint *sd = NULL, *rd = NULL;
    void *sblk = NULL, *rblk = NULL;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    int n = ep_remote_size(ep);
    if (sendbuf != MPI_IN_PLACE &&
        ((!w && (rc = ep_check_type(ep, call, sendtype))) || (rc = vec_read(ep, call, "send", sv, n, &sc, &sd, &sblk)) ||
         (w && (rc = check_types(ep, call, sendtypes, sc, n)))))
        goto fail;
    if ((!w && (rc = ep_check_type(ep, call, recvtype))) || (rc = vec_read(ep, call, "receive", rv, n, &rc_, &rd, &rblk)) ||
        (w && (rc = check_types(ep, call, recvtypes, rc_, n))))
        goto fail;
    ep_coll_alltoallw(&a, ep, sendbuf, 0, sc, sd, w ? MPI_BYTE : sendtype, sendtypes, recvbuf, 0, rc_, rd,
                      w ? MPI_BYTE : recvtype, recvtypes, w);
    return go_free(ep, call, &a, req, sblk, rblk);
fail:
    free(sblk);
    free(rblk);
    return rc;
}

EP_API int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                         MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    return alltoallvw_ep("MPI_Alltoallv", 0, sendbuf, VEC(sendcounts, sdispls), sendtype, NULL, recvbuf,
                         VEC(recvcounts, rdispls), recvtype, NULL, comm, BLOCKING);
}

EP_API int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                          void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                               request);
    return alltoallvw_ep("MPI_Ialltoallv", 0, sendbuf, VEC(sendcounts, sdispls), sendtype, NULL, recvbuf,
                         VEC(recvcounts, rdispls), recvtype, NULL, comm, request);
}

EP_API int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                         const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                         const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
    return alltoallvw_ep("MPI_Alltoallw", 1, sendbuf, VEC(sendcounts, sdispls), MPI_BYTE, sendtypes, recvbuf,
                         VEC(recvcounts, rdispls), MPI_BYTE, recvtypes, comm, BLOCKING);
}

EP_API int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                          const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                          const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                               request);
    return alltoallvw_ep("MPI_Ialltoallw", 1, sendbuf, VEC(sendcounts, sdispls), MPI_BYTE, sendtypes, recvbuf,
                         VEC(recvcounts, rdispls), MPI_BYTE, recvtypes, comm, request);
}

/* ---- reduce-scatter and scans ----------------------------------------------------- */

/* counts NULL: the _block form with `count` per rank.  The counts describe
 * the caller's own group (on an intercommunicator, how the other group's
 * reduced vector is scattered here). */
static int reduce_scatter_ep(const char *call, const void *sendbuf, void *recvbuf, int count, const int *counts,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY(call, comm, ep, sendbuf);
    if ((rc = check_reduction(ep, call, count, datatype, op)))
        return rc;
    for (int r = 0; counts && r < ep_local_size(ep); r++)
        if (counts[r] < 0)
            return ep_raise(ep, call, MPI_ERR_COUNT, "receive count %d for rank %d is negative", counts[r], r);
    ep_coll_reduce_scatter(&a, ep, sendbuf, recvbuf, count, counts, datatype, op);
    return coll_go(ep, call, &a, req);
}

EP_API int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                    MPI_Op op, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    return reduce_scatter_ep("MPI_Reduce_scatter_block", sendbuf, recvbuf, recvcount, NULL, datatype, op, comm, BLOCKING);
}

EP_API int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
    return reduce_scatter_ep("MPI_Ireduce_scatter_block", sendbuf, recvbuf, recvcount, NULL, datatype, op, comm,
                             request);
}

EP_API int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    return reduce_scatter_ep("MPI_Reduce_scatter", sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, BLOCKING);
}

EP_API int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
    return reduce_scatter_ep("MPI_Ireduce_scatter", sendbuf, recvbuf, 0, recvcounts, datatype, op, comm, request);
}

/* The _c forms: a reduction's counts must fit in an int on endpoints
 * (its fold runs by ints), so the counts are narrowed first. */
static int reduce_scatter_c(const char *call, const void *sendbuf, void *recvbuf, const MPI_Count *recvcounts,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    ep_endpoint_t *ep;
    int rc;
    EP_ENTRY_EP(call, comm, ep);
    if (!recvcounts)
        return ep_raise(ep, call, MPI_ERR_ARG, "receive counts are NULL");
    int n = ep_local_size(ep), *counts = malloc(sizeof *counts * (size_t)(n > 0 ? n : 1));
    if (!counts)
        return ep_raise(ep, call, MPI_ERR_NO_MEM, "out of memory for %d counts", n);
    for (int r = 0; r < n; r++) {
        if (recvcounts[r] > INT_MAX) {
            free(counts);
            return ep_raise(ep, call, MPI_ERR_COUNT,
                            "count %lld (rank %d) does not fit in an int, the largest count of a reduction on "
                            "endpoint communicators",
                            (long long)recvcounts[r], r);
        }
        counts[r] = (int)(recvcounts[r] < INT_MIN ? INT_MIN : recvcounts[r]);
    }
    rc = reduce_scatter_ep(call, sendbuf, recvbuf, 0, counts, datatype, op, comm, req);
    free(counts); /* read when the call is described */
    return rc;
}

EP_API int MPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    return reduce_scatter_c("MPI_Reduce_scatter_c", sendbuf, recvbuf, recvcounts, datatype, op, comm, BLOCKING);
}

EP_API int MPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ireduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
    return reduce_scatter_c("MPI_Ireduce_scatter_c", sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}

static int scan_ep(const char *call, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, int exclusive, MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    int rc;
    COLL_ENTRY_INTRA(call, comm, ep);
    if ((rc = check_reduction(ep, call, count, datatype, op)))
        return rc;
    ep_coll_scan(&a, ep, sendbuf, recvbuf, count, datatype, op, exclusive);
    return coll_go(ep, call, &a, req);
}

EP_API int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    return scan_ep("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm, 0, BLOCKING);
}

EP_API int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request);
    return scan_ep("MPI_Iscan", sendbuf, recvbuf, count, datatype, op, comm, 0, request);
}

EP_API int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    return scan_ep("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm, 1, BLOCKING);
}

EP_API int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request);
    return scan_ep("MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, comm, 1, request);
}

/* ---- neighbourhood collectives ----------------------------------------------
 * On the communicator's topology (src/topo.h), through the same exchange as
 * the all-to-alls.  The persistent forms (_init) are refused, like every
 * persistent collective on endpoints. */

/* The communicator must carry a topology; MPI_IN_PLACE means nothing here. */
static int nbr_entry(const char *call, MPI_Comm comm, const void *sendbuf, ep_endpoint_t **ep)
{
    int rc;
    if ((rc = ep_entry_endpoint(call, comm, ep)))
        return rc;
    if (!(*ep)->topo)
        return ep_raise(*ep, call, MPI_ERR_TOPOLOGY, "the communicator has no topology");
    if (sendbuf == MPI_IN_PLACE)
        return ep_raise(*ep, call, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in neighbourhood collectives");
    return MPI_SUCCESS;
}

/* v NULL: Neighbor_allgather, recvcount from each in-neighbour. */
static int nbr_allgather_ep(const char *call, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            void *recvbuf, MPI_Count recvcount, const vec_t *v, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    const MPI_Count *c = NULL;
    const MPI_Aint *d = NULL;
    void *blk = NULL;
    int rc;
    if ((rc = nbr_entry(call, comm, sendbuf, &ep)) || (rc = check_block(ep, call, sendbuf, sendcount, sendtype)) ||
        (!v && (rc = check_block(ep, call, recvbuf, recvcount, recvtype))) ||
        (v && ((rc = ep_check_type(ep, call, recvtype)) ||
               (rc = vec_read(ep, call, "receive", *v, ep->topo->indegree, &c, &d, &blk)))))
        return rc;
    ep_coll_neighbor(&a, ep, 1, sendbuf, sendcount, NULL, NULL, sendtype, NULL, recvbuf, recvcount, c, d, recvtype,
                     NULL, 0);
    return go_free(ep, call, &a, req, blk, NULL);
}

EP_API int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return nbr_allgather_ep("MPI_Neighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                            recvtype, comm, BLOCKING);
}

EP_API int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    return nbr_allgather_ep("MPI_Ineighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                            recvtype, comm, request);
}

EP_API int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    vec_t v = VEC(recvcounts, displs);
    return nbr_allgather_ep("MPI_Neighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf, 0, &v, recvtype, comm,
                            BLOCKING);
}

EP_API int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                    MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                         request);
    vec_t v = VEC(recvcounts, displs);
    return nbr_allgather_ep("MPI_Ineighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf, 0, &v, recvtype, comm,
                            request);
}

/* sv / rv NULL: Neighbor_alltoall, the uniform counts; w: a type per
 * neighbour, displacements in bytes. */
static int nbr_alltoall_ep(const char *call, int w, const void *sendbuf, MPI_Count sendcount, const vec_t *sv,
                           MPI_Datatype sendtype, const MPI_Datatype *sendtypes, void *recvbuf, MPI_Count recvcount,
                           const vec_t *rv, MPI_Datatype recvtype, const MPI_Datatype *recvtypes, MPI_Comm comm,
                           MPI_Request *req)
{
    ep_endpoint_t *ep;
    ep_coll_args_t a;
    const MPI_Count *sc = NULL, *rc_ = NULL;
    const MPI_Aint *sd = NULL, *rd = NULL;
    void *sblk = NULL, *rblk = NULL;
    int rc;
    if ((rc = nbr_entry(call, comm, sendbuf, &ep)))
        return rc;
    int out = ep->topo->outdegree, in = ep->topo->indegree;
    if (!sv) {
        if ((rc = check_block(ep, call, sendbuf, sendcount, sendtype)) ||
            (rc = check_block(ep, call, recvbuf, recvcount, recvtype)))
            return rc;
    } else if ((!w && ((rc = ep_check_type(ep, call, sendtype)) || (rc = ep_check_type(ep, call, recvtype)))) ||
               (rc = vec_read(ep, call, "send", *sv, out, &sc, &sd, &sblk)) ||
               (rc = vec_read(ep, call, "receive", *rv, in, &rc_, &rd, &rblk)) ||
               (w && ((rc = check_types(ep, call, sendtypes, sc, out)) ||
                      (rc = check_types(ep, call, recvtypes, rc_, in))))) {
        free(sblk);
        free(rblk);
        return rc;
    }
    ep_coll_neighbor(&a, ep, 0, sendbuf, sendcount, sc, sd, w ? MPI_BYTE : sendtype, sendtypes, recvbuf, recvcount,
                     rc_, rd, w ? MPI_BYTE : recvtype, recvtypes, w);
    return go_free(ep, call, &a, req, sblk, rblk);
}

EP_API int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return nbr_alltoall_ep("MPI_Neighbor_alltoall", 0, sendbuf, sendcount, NULL, sendtype, NULL, recvbuf, recvcount,
                           NULL, recvtype, NULL, comm, BLOCKING);
}

EP_API int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    return nbr_alltoall_ep("MPI_Ineighbor_alltoall", 0, sendbuf, sendcount, NULL, sendtype, NULL, recvbuf, recvcount,
                           NULL, recvtype, NULL, comm, request);
}

EP_API int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                       recvtype, comm);
    vec_t sv = VEC(sendcounts, sdispls), rv = VEC(recvcounts, rdispls);
    return nbr_alltoall_ep("MPI_Neighbor_alltoallv", 0, sendbuf, 0, &sv, sendtype, NULL, recvbuf, 0, &rv, recvtype,
                           NULL, comm, BLOCKING);
}

EP_API int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                        recvtype, comm, request);
    vec_t sv = VEC(sendcounts, sdispls), rv = VEC(recvcounts, rdispls);
    return nbr_alltoall_ep("MPI_Ineighbor_alltoallv", 0, sendbuf, 0, &sv, sendtype, NULL, recvbuf, 0, &rv, recvtype,
                           NULL, comm, request);
}

/* Neighbor_alltoallw's displacements are MPI_Aint already. */
EP_API int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                       recvtypes, comm);
    vec_t sv = {sendcounts, NULL, NULL, sdispls}, rv = {recvcounts, NULL, NULL, rdispls};
    return nbr_alltoall_ep("MPI_Neighbor_alltoallw", 1, sendbuf, 0, &sv, MPI_BYTE, sendtypes, recvbuf, 0, &rv,
                           MPI_BYTE, recvtypes, comm, BLOCKING);
}

EP_API int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                   MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                        recvtypes, comm, request);
    vec_t sv = {sendcounts, NULL, NULL, sdispls}, rv = {recvcounts, NULL, NULL, rdispls};
    return nbr_alltoall_ep("MPI_Ineighbor_alltoallw", 1, sendbuf, 0, &sv, MPI_BYTE, sendtypes, recvbuf, 0, &rv,
                           MPI_BYTE, recvtypes, comm, request);
}

/* ---- the large-count (_c) forms of the exchange collectives ---------------------
 * Counts of 64 bits go through as they are (the exchange and
 * PMPI_Ialltoallv_c between processes carry them); a derived type packed
 * through MPICH still needs its data under 2 GiB per block (MPI_ERR_COUNT). */

EP_API int MPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return gather_ep("MPI_Gather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, recvtype, root, comm,
                     BLOCKING);
}

EP_API int MPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Igather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    return gather_ep("MPI_Igather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, recvtype, root, comm,
                     request);
}

EP_API int MPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                         MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    vec_t v = VEC_C(recvcounts, displs);
    return gather_ep("MPI_Gatherv_c", sendbuf, sendcount, sendtype, recvbuf, 0, &v, recvtype, root, comm, BLOCKING);
}

EP_API int MPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                          MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Igatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                               request);
    vec_t v = VEC_C(recvcounts, displs);
    return gather_ep("MPI_Igatherv_c", sendbuf, sendcount, sendtype, recvbuf, 0, &v, recvtype, root, comm, request);
}

EP_API int MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return scatter_ep("MPI_Scatter_c", sendbuf, sendcount, NULL, sendtype, recvbuf, recvcount, recvtype, root, comm,
                      BLOCKING);
}

EP_API int MPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Iscatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    return scatter_ep("MPI_Iscatter_c", sendbuf, sendcount, NULL, sendtype, recvbuf, recvcount, recvtype, root, comm,
                      request);
}

EP_API int MPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                          MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    vec_t v = VEC_C(sendcounts, displs);
    return scatter_ep("MPI_Scatterv_c", sendbuf, 0, &v, sendtype, recvbuf, recvcount, recvtype, root, comm,
                      BLOCKING);
}

EP_API int MPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                           MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                           int root, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Iscatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                                request);
    vec_t v = VEC_C(sendcounts, displs);
    return scatter_ep("MPI_Iscatterv_c", sendbuf, 0, &v, sendtype, recvbuf, recvcount, recvtype, root, comm,
                      request);
}

EP_API int MPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    return allgatherv_ep("MPI_Allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, VEC_C(recvcounts, displs),
                         recvtype, comm, BLOCKING);
}

EP_API int MPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Iallgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                  request);
    return allgatherv_ep("MPI_Iallgatherv_c", sendbuf, sendcount, sendtype, recvbuf, VEC_C(recvcounts, displs),
                         recvtype, comm, request);
}

EP_API int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return alltoall_ep("MPI_Alltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, BLOCKING);
}

EP_API int MPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                           MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    return alltoall_ep("MPI_Ialltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

EP_API int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                           const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                comm);
    return alltoallvw_ep("MPI_Alltoallv_c", 0, sendbuf, VEC_C(sendcounts, sdispls), sendtype, NULL, recvbuf,
                         VEC_C(recvcounts, rdispls), recvtype, NULL, comm, BLOCKING);
}

EP_API int MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                            const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                 comm, request);
    return alltoallvw_ep("MPI_Ialltoallv_c", 0, sendbuf, VEC_C(sendcounts, sdispls), sendtype, NULL, recvbuf,
                         VEC_C(recvcounts, rdispls), recvtype, NULL, comm, request);
}

EP_API int MPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                comm);
    return alltoallvw_ep("MPI_Alltoallw_c", 1, sendbuf, VEC_C(sendcounts, sdispls), MPI_BYTE, sendtypes, recvbuf,
                         VEC_C(recvcounts, rdispls), MPI_BYTE, recvtypes, comm, BLOCKING);
}

EP_API int MPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ialltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                 comm, request);
    return alltoallvw_ep("MPI_Ialltoallw_c", 1, sendbuf, VEC_C(sendcounts, sdispls), MPI_BYTE, sendtypes, recvbuf,
                         VEC_C(recvcounts, rdispls), MPI_BYTE, recvtypes, comm, request);
}

EP_API int MPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Neighbor_allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return nbr_allgather_ep("MPI_Neighbor_allgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                            recvtype, comm, BLOCKING);
}

EP_API int MPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                     MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ineighbor_allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    return nbr_allgather_ep("MPI_Ineighbor_allgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                            recvtype, comm, request);
}

EP_API int MPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                     const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                     MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Neighbor_allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    vec_t v = VEC_C(recvcounts, displs);
    return nbr_allgather_ep("MPI_Neighbor_allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, 0, &v, recvtype,
                            comm, BLOCKING);
}

EP_API int MPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ineighbor_allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                           request);
    vec_t v = VEC_C(recvcounts, displs);
    return nbr_allgather_ep("MPI_Ineighbor_allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, 0, &v, recvtype,
                            comm, request);
}

EP_API int MPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Neighbor_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return nbr_alltoall_ep("MPI_Neighbor_alltoall_c", 0, sendbuf, sendcount, NULL, sendtype, NULL, recvbuf,
                           recvcount, NULL, recvtype, NULL, comm, BLOCKING);
}

EP_API int MPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ineighbor_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    return nbr_alltoall_ep("MPI_Ineighbor_alltoall_c", 0, sendbuf, sendcount, NULL, sendtype, NULL, recvbuf,
                           recvcount, NULL, recvtype, NULL, comm, request);
}

EP_API int MPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                    MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Neighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                         recvtype, comm);
    vec_t sv = VEC_C(sendcounts, sdispls), rv = VEC_C(recvcounts, rdispls);
    return nbr_alltoall_ep("MPI_Neighbor_alltoallv_c", 0, sendbuf, 0, &sv, sendtype, NULL, recvbuf, 0, &rv,
                           recvtype, NULL, comm, BLOCKING);
}

EP_API int MPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                     MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ineighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                          recvtype, comm, request);
    vec_t sv = VEC_C(sendcounts, sdispls), rv = VEC_C(recvcounts, rdispls);
    return nbr_alltoall_ep("MPI_Ineighbor_alltoallv_c", 0, sendbuf, 0, &sv, sendtype, NULL, recvbuf, 0, &rv,
                           recvtype, NULL, comm, request);
}

EP_API int MPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                    const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Neighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                         recvtypes, comm);
    vec_t sv = VEC_C(sendcounts, sdispls), rv = VEC_C(recvcounts, rdispls);
    return nbr_alltoall_ep("MPI_Neighbor_alltoallw_c", 1, sendbuf, 0, &sv, MPI_BYTE, sendtypes, recvbuf, 0, &rv,
                           MPI_BYTE, recvtypes, comm, BLOCKING);
}

EP_API int MPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                     MPI_Request *request)
{
    if (!ep_entry_comm_is_ep(comm))
        return PMPI_Ineighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                          recvtypes, comm, request);
    vec_t sv = VEC_C(sendcounts, sdispls), rv = VEC_C(recvcounts, rdispls);
    return nbr_alltoall_ep("MPI_Ineighbor_alltoallw_c", 1, sendbuf, 0, &sv, MPI_BYTE, sendtypes, recvbuf, 0, &rv,
                           MPI_BYTE, recvtypes, comm, request);
}
