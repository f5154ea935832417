/* What epmpi's Fortran entry points share: the generated mpi_f08 ones
 * (fortran.gen.c, MPICH's), the hand-written ones (fortran.c) and those
 * over Open MPI's bindings (fortran_ompi.c).
 *
 * They follow gfortran's conventions, which both MPIs' bindings use: every
 * argument by reference; a handle as the address of its integer (an f08
 * handle type holds one integer, MPI_VAL, so the address is the same);
 * MPI_Status in C's layout; LOGICAL as an int, 1 for .true.; CHARACTER
 * arguments blank-padded, not NUL-terminated, with their lengths as hidden
 * size_t arguments after all the others; mpi_f08's ierror optional (NULL when
 * absent).  MPICH's mpif.h and `use mpi` bindings call the C MPI_ functions,
 * so epmpi intercepts them as they are, except for the few listed in
 * maint/fortran_implemented.txt.  Open MPI's call PMPI_: fortran_ompi.c. */
#ifndef ENTRY_FORTRAN_H
#define ENTRY_FORTRAN_H

#include "entry.h"

#include <stddef.h>

/* MPICH's Fortran library (libmpichfort) is loaded by Fortran programs only;
 * its symbols are weak references here, resolved when it is. */
#define ENTRY_F_WEAK __attribute__((weak))

#define ENTRY_F_TRUE 1
#define ENTRY_F_FALSE 0

/* Room for any string an MPI call returns. */
#define ENTRY_F_STRING_MAX MPI_MAX_LIBRARY_VERSION_STRING

/* gfortran's array descriptor (GCC 8 and later), in which a Fortran procedure
 * that is not BIND(C) receives an assumed-rank argument: the choice buffers
 * of mpi_f08's f08ts routines.  Element i of dimension d is
 * base_addr + (i - lbound) * stride * span bytes away. */
typedef struct entry_gfc_array {
    void *base_addr; /* first element of the array or section */
    size_t offset;   /* for Fortran indexing; unused here */
    struct {
        size_t elem_len; /* bytes per element */
        int version;
        signed char rank; /* 0 for a scalar */
        signed char type;
        short attribute;
    } dtype;
    ptrdiff_t span; /* bytes per unit of stride */
    struct {
        ptrdiff_t stride, lbound, ubound;
    } dim[];
} entry_gfc_array_t;

static inline void entry_f_return(MPI_Fint *ierror, int rc)
{
    if (ierror)
        *ierror = rc;
}

/* A C flag (any non-zero is true) as a Fortran LOGICAL. */
static inline void entry_f_logical(int *flag) { *flag = *flag ? ENTRY_F_TRUE : ENTRY_F_FALSE; }

/* Makes the first n indices 1-based, as Fortran counts; entries (or an n)
 * of MPI_UNDEFINED stay. */
void entry_f_indices(int *indices, int n);
/* A file's Fortran handle is an endpoint file's (MPI_File_c2f, file.c). */
static inline int entry_file_fint_is_ep(MPI_Fint f) { return ep_registry_get((int)f, EP_OBJ_FILE) != NULL; }
/* A weights array of mpi_f08: its MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY as C's. */
int *entry_f08_weights(const int *w);

/* mpi_f08's MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE as C's. */
MPI_Status *entry_f08_status(MPI_Status *status);
MPI_Status *entry_f08_statuses(MPI_Status *statuses);

/* A Fortran string as a NUL-terminated copy without its trailing blanks
 * (free it), or NULL when out of memory. */
char *entry_f_string_in(const char *s, size_t len);
/* Stores src into a Fortran string of len characters, blank-padded. */
void entry_f_string_out(char *dst, size_t len, const char *src);
int entry_f_no_memory(const char *call);

/* The address a C call takes for an mpi_f08 choice buffer (MPI_IN_PLACE and
 * MPI_BOTTOM mapped to C's).  Only contiguous buffers: a non-contiguous
 * section is an MPI_ERR_BUFFER error, raised on comm's handler (see
 * maint/gen_entries.py for why). */
int entry_f08_buffer(const char *call, MPI_Comm comm, const entry_gfc_array_t *buf, void **out);

#endif
