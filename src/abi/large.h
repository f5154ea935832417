/* The MPI-4 large-count calls (the _c forms) the engine makes, on every MPI.
 *
 * The engine moves bytes between processes with counts beyond INT_MAX
 * (MPI_Count) and learns datatypes with MPI-4's envelope calls.  MPICH has
 * them all (4.0 on); Open MPI up to 5.0 has none.  ep_pmpi_X_c is PMPI_X_c
 * where the MPI has it, else abi/large.c's version over the MPI-3 calls:
 *   - a count beyond INT_MAX of a type becomes one element of a derived
 *     type of that many (sends, receives, file accesses, contiguous types);
 *   - counts are read back with PMPI_Get_elements_x;
 *   - the collectives' count and displacement arrays are turned into int
 *     arrays in place (the caller must not read them afterwards), and fail
 *     with MPI_ERR_COUNT when one does not fit in an int;
 *   - packing goes in pieces of whole elements under INT_MAX bytes, and an
 *     unpack that ends inside an element stores the part (as MPICH does);
 *   - the envelope calls report no large counts (there are no large-count
 *     type constructors to report).
 */
#ifndef EP_ABI_LARGE_H
#define EP_ABI_LARGE_H

#include "config.h"
#include <mpi.h>

#if HAVE_DECL_PMPI_ISEND_C

#define EP_MPI_LARGE_COUNT 1
#define ep_pmpi_isend_c PMPI_Isend_c
#define ep_pmpi_irecv_c PMPI_Irecv_c
#define ep_pmpi_get_count_c PMPI_Get_count_c
#define ep_pmpi_type_contiguous_c PMPI_Type_contiguous_c
#define ep_pmpi_type_create_hindexed_c PMPI_Type_create_hindexed_c
#define ep_pmpi_type_get_envelope_c PMPI_Type_get_envelope_c
#define ep_pmpi_type_get_contents_c PMPI_Type_get_contents_c
#define ep_pmpi_pack_c PMPI_Pack_c
#define ep_pmpi_unpack_c PMPI_Unpack_c
#define ep_pmpi_file_read_at_c PMPI_File_read_at_c
#define ep_pmpi_file_write_at_c PMPI_File_write_at_c
#define ep_pmpi_file_read_at_all_c PMPI_File_read_at_all_c
#define ep_pmpi_file_write_at_all_c PMPI_File_write_at_all_c
#define ep_pmpi_ialltoallv_c PMPI_Ialltoallv_c
#define ep_pmpi_iallgatherv_c PMPI_Iallgatherv_c

#else

#define EP_MPI_LARGE_COUNT 0
int ep_pmpi_isend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                    MPI_Request *req);
int ep_pmpi_irecv_c(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                    MPI_Request *req);
int ep_pmpi_get_count_c(const MPI_Status *st, MPI_Datatype type, MPI_Count *count);
int ep_pmpi_type_contiguous_c(MPI_Count count, MPI_Datatype old, MPI_Datatype *out);
int ep_pmpi_type_create_hindexed_c(MPI_Count count, const MPI_Count lens[], const MPI_Count displs[], MPI_Datatype old,
                                   MPI_Datatype *out);
int ep_pmpi_type_get_envelope_c(MPI_Datatype t, MPI_Count *ni, MPI_Count *na, MPI_Count *nl, MPI_Count *nd,
                                int *combiner);
int ep_pmpi_type_get_contents_c(MPI_Datatype t, MPI_Count ni, MPI_Count na, MPI_Count nl, MPI_Count nd, int iv[],
                                MPI_Aint av[], MPI_Count lv[], MPI_Datatype tv[]);
int ep_pmpi_pack_c(const void *in, MPI_Count count, MPI_Datatype type, void *out, MPI_Count outsize,
                   MPI_Count *position, MPI_Comm comm);
int ep_pmpi_unpack_c(const void *in, MPI_Count insize, MPI_Count *position, void *out, MPI_Count count,
                     MPI_Datatype type, MPI_Comm comm);
int ep_pmpi_file_read_at_c(MPI_File fh, MPI_Offset off, void *buf, MPI_Count count, MPI_Datatype type, MPI_Status *st);
int ep_pmpi_file_write_at_c(MPI_File fh, MPI_Offset off, const void *buf, MPI_Count count, MPI_Datatype type,
                            MPI_Status *st);
int ep_pmpi_file_read_at_all_c(MPI_File fh, MPI_Offset off, void *buf, MPI_Count count, MPI_Datatype type,
                               MPI_Status *st);
int ep_pmpi_file_write_at_all_c(MPI_File fh, MPI_Offset off, const void *buf, MPI_Count count, MPI_Datatype type,
                                MPI_Status *st);
int ep_pmpi_ialltoallv_c(const void *sbuf, MPI_Count scnt[], MPI_Aint sdsp[], MPI_Datatype stype, void *rbuf,
                         MPI_Count rcnt[], MPI_Aint rdsp[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req);
int ep_pmpi_iallgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcnt[],
                          MPI_Aint rdsp[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req);

#endif

#endif
