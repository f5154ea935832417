/* Freeing a datatype or a user operation that non-blocking operations on
 * endpoints still use: MPI allows it, and the free takes effect when the
 * last of them is over (src/core/datatype.h, src/core/op.h).  Handles no such
 * operation holds go straight to MPICH. */
#include "core/datatype.h"
#include "entry.h"
#include "core/op.h"

/* 1 when epmpi answers the free of handle h itself (*rc): held says it is
 * held (1: the free is deferred) or was freed already (-1); 0 when MPICH
 * frees it now. */
static int answered(const char *call, int held, intptr_t h, int cls, const char *what, int *rc)
{
    *rc = held < 0 ? entry_raise(NULL, call, cls, "%s " EP_HFMT " was freed already", what, EP_HARG(h)) : MPI_SUCCESS;
    return held != 0;
}

ENTRY_API int MPI_Type_free(MPI_Datatype *datatype)
{
    int rc;
    if (!datatype ||
        !answered("MPI_Type_free", ep_dt_free_deferred(*datatype), (intptr_t)*datatype, MPI_ERR_TYPE, "datatype", &rc))
        return PMPI_Type_free(datatype);
    if (rc == MPI_SUCCESS)
        *datatype = MPI_DATATYPE_NULL;
    return rc;
}

ENTRY_API int MPI_Op_free(MPI_Op *op)
{
    int rc;
    if (!op || !answered("MPI_Op_free", ep_op_free_deferred(*op), (intptr_t)*op, MPI_ERR_OP, "operation", &rc))
        return PMPI_Op_free(op);
    if (rc == MPI_SUCCESS)
        *op = MPI_OP_NULL;
    return rc;
}
