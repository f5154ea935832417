/* Freeing a datatype or a user operation that non-blocking operations on
 * endpoints still use: MPI allows it, and the free takes effect when the
 * last of them is over (src/datatype.h).  Handles no such operation holds
 * go straight to MPICH. */
#include "datatype.h"
#include "entry.h"

EP_API int MPI_Type_free(MPI_Datatype *datatype)
{
    if (!datatype)
        return PMPI_Type_free(datatype);
    int held = ep_handle_free_deferred((int)*datatype);
    if (held < 0)
        return ep_raise(NULL, "MPI_Type_free", MPI_ERR_TYPE, "datatype 0x%x was freed already",
                        (unsigned)*datatype);
    if (!held)
        return PMPI_Type_free(datatype);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

EP_API int MPI_Op_free(MPI_Op *op)
{
    if (!op)
        return PMPI_Op_free(op);
    int held = ep_handle_free_deferred((int)*op);
    if (held < 0)
        return ep_raise(NULL, "MPI_Op_free", MPI_ERR_OP, "operation 0x%x was freed already", (unsigned)*op);
    if (!held)
        return PMPI_Op_free(op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
