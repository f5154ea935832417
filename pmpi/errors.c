/* MPI_Error_string / MPI_Error_class: know the codes epmpi mints. */
#include "entry.h"

ENTRY_API int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (string && resultlen && ep_error_code_string(errorcode, string, resultlen))
        return MPI_SUCCESS;
    return PMPI_Error_string(errorcode, string, resultlen);
}

ENTRY_API int MPI_Error_class(int errorcode, int *errorclass)
{
    if (errorclass && errorcode == MPI_ERR_ENDPOINTS) {
        *errorclass = MPI_ERR_ENDPOINTS;
        return MPI_SUCCESS;
    }
    if (errorclass && ep_error_code_class(errorcode, errorclass))
        return MPI_SUCCESS;
    return PMPI_Error_class(errorcode, errorclass);
}
