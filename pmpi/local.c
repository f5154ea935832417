/* Local calls that take a communicator only for its context (packing) or to
 * ask about a topology: on an endpoint communicator they run on the
 * process's own MPI_COMM_SELF, which packs the same bytes (all endpoints of
 * a process share its data representation). */
#include "entry.h"

/* The classic communicator to hand to PMPI for comm, or MPI_COMM_NULL after
 * raising an error for a dead endpoint handle (*rc set). */
static MPI_Comm local_comm(const char *call, MPI_Comm comm, int *rc)
{
    ep_endpoint_t *ep;
    *rc = MPI_SUCCESS;
    if (!entry_comm_is_ep(comm))
        return comm;
    if ((*rc = entry_endpoint(call, comm, &ep)))
        return MPI_COMM_NULL;
    return MPI_COMM_SELF;
}

ENTRY_API int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
                       MPI_Comm comm)
{
    int rc;
    MPI_Comm c = local_comm("MPI_Pack", comm, &rc);
    return rc ? rc : PMPI_Pack(inbuf, incount, datatype, outbuf, outsize, position, c);
}

ENTRY_API int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                         MPI_Datatype datatype, MPI_Comm comm)
{
    int rc;
    MPI_Comm c = local_comm("MPI_Unpack", comm, &rc);
    return rc ? rc : PMPI_Unpack(inbuf, insize, position, outbuf, outcount, datatype, c);
}

ENTRY_API int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    int rc;
    MPI_Comm c = local_comm("MPI_Pack_size", comm, &rc);
    return rc ? rc : PMPI_Pack_size(incount, datatype, c, size);
}

#if EP_HAVE_MPI_Pack_c /* MPI 4.0's large counts (not in Open MPI) */
ENTRY_API int MPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                         MPI_Count *position, MPI_Comm comm)
{
    int rc;
    MPI_Comm c = local_comm("MPI_Pack_c", comm, &rc);
    return rc ? rc : PMPI_Pack_c(inbuf, incount, datatype, outbuf, outsize, position, c);
}

ENTRY_API int MPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                           MPI_Datatype datatype, MPI_Comm comm)
{
    int rc;
    MPI_Comm c = local_comm("MPI_Unpack_c", comm, &rc);
    return rc ? rc : PMPI_Unpack_c(inbuf, insize, position, outbuf, outcount, datatype, c);
}

ENTRY_API int MPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    int rc;
    MPI_Comm c = local_comm("MPI_Pack_size_c", comm, &rc);
    return rc ? rc : PMPI_Pack_size_c(incount, datatype, c, size);
}
#endif
