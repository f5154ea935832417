/* A datatype's typemap as runs of bytes: the one place that decodes a
 * datatype from its constructor.
 *
 * The runs come in typemap order (the order MPI_Pack visits the data), a
 * run that starts where the one before ends merged into it.  So one
 * instance of a type is a plain copy of memory exactly when its typemap is
 * one run (ep_typemap_contiguous), and a file view's data lies in the
 * file along the runs of its filetype (io/file.c).
 *
 * Every constructor is decoded from MPI_Type_get_contents_c, whether it
 * was made with int or large counts, except darray (and any constructor
 * MPI adds later), whose instances are laid out by packing a buffer whose
 * bytes spell their own offsets; that costs a pass over the type's true
 * extent per byte of an offset, and is refused beyond
 * EP_TYPEMAP_PACK_MAX bytes. */
#ifndef EP_TYPEMAP_H
#define EP_TYPEMAP_H

#include "base/error.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define EP_TYPEMAP_PACK_MAX (64 << 20)

typedef struct ep_runs {
    MPI_Offset *off; /* [n] where each run starts, from the base given */
    int64_t *len;    /* [n] its bytes */
    int n;
    int max;            /* stop once more than this many runs would come (0: never); full is set then */
    int full;           /* runs were left out: max was reached */
    MPI_Count unpacked; /* the true extent of an instance too large to lay out by packing, else 0 */
    size_t cap_off, cap_len;
} ep_runs_t;

/* Appends to r the data of count instances of t at base, base + extent,
 * ... in typemap order.  EP_ERR_TYPE when MPI cannot describe t, or when
 * an instance that needs packing is too large (r->unpacked says so);
 * EP_ERR_NO_MEM.  With r->max set, stops early (EP_OK, r->full). */
ep_status_t ep_typemap_runs(MPI_Datatype t, MPI_Offset base, int64_t count, ep_runs_t *r);
void ep_runs_free(ep_runs_t *r);

/* 1 when the data of one instance of t (many: of several back to back) is
 * one block without gaps in typemap order, so packing it is a copy; 0
 * otherwise, also when t cannot be decoded. */
int ep_typemap_contiguous(MPI_Datatype t, int many);

/* The one predefined type t is built of (t itself when predefined), as
 * MPI_Accumulate requires of its datatypes; EP_ERR_TYPE when t mixes
 * several or cannot be decoded. */
ep_status_t ep_typemap_element(MPI_Datatype t, MPI_Datatype *elem);

#endif
