/* Datatype helpers: sizes, contiguity, and typed copies through packing.
 * Contiguous data is moved with memcpy; anything else with PMPI_Pack /
 * PMPI_Unpack, which MPICH implements for every derived type. */
#ifndef EP_DATATYPE_H
#define EP_DATATYPE_H

#include "base/error.h"
#include "abi/handle.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* What epmpi learnt of a derived datatype, kept on the type (datatype.c). */
typedef struct ep_dt_rec ep_dt_rec_t;

typedef struct ep_dt_layout {
    int64_t bytes; /* count * type size: the packed size */
    int64_t type_size;
    int contig;      /* the count elements are one contiguous block */
    MPI_Aint offset; /* where that block starts, relative to buf (true lb) */
} ep_dt_layout_t;

/* Describes count elements of t; EP_ERR_TYPE for an invalid or uncommitted
 * type.  Builtin types, on every message path, are described inline. */
ep_status_t ep_dt_layout_derived(MPI_Datatype t, int count, ep_dt_layout_t *out);
static inline ep_status_t ep_dt_layout(MPI_Datatype t, int count, ep_dt_layout_t *out)
{
    int bs = ep_datatype_builtin_size(t);
    if (bs <= 0)
        return ep_dt_layout_derived(t, count, out);
    out->type_size = bs;
    out->bytes = (int64_t)bs * count;
    out->contig = 1;
    out->offset = 0;
    return EP_OK;
}

/* Frees what ep_dt_layout keeps (MPI_Finalize, before PMPI_Finalize). */
void ep_dt_finalize(void);

/* Packs count elements of t at buf into out (which holds lay->bytes). */
ep_status_t ep_dt_pack(const void *buf, int count, MPI_Datatype t, const ep_dt_layout_t *lay, void *out);

/* Unpacks `bytes` packed bytes into buf (count elements of t at most);
 * only whole elements are written. */
ep_status_t ep_dt_unpack(const void *in, int64_t bytes, void *buf, int count, MPI_Datatype t,
                         const ep_dt_layout_t *lay);

/* Copies (sbuf, scount, st) into (rbuf, rcount, rt), at most the receive
 * capacity; returns the number of bytes the sender offered in *sent. */
ep_status_t ep_dt_copy(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                       int64_t *sent);

/* The same with both layouts already known (the message path computes each
 * request's layout once, when it starts). */
ep_status_t ep_dt_copy_laid(const void *sbuf, int scount, MPI_Datatype st, const ep_dt_layout_t *sl, void *rbuf,
                            int rcount, MPI_Datatype rt, const ep_dt_layout_t *rl);

/* Checks that t is a usable datatype; a derived type's record (datatype.c)
 * is learnt here at its first use. */
ep_status_t ep_dt_check(MPI_Datatype t);

/* MPI lets a program free a datatype or a user operation (op.h) while
 * non-blocking operations still use it.  epmpi's requests name them by
 * handle, so every operation that outlives its call holds the handles it
 * uses until it is over; MPI_Type_free of a held type only marks it
 * (ep_dt_free_deferred: 1; -1 when it was marked already, 0 when it is
 * not held), and the last release frees it in MPICH.  Predefined types are
 * ignored.  A derived type is held through its record, which the holder
 * keeps and releases (NULL for a predefined type: nothing to release). */
ep_dt_rec_t *ep_dt_hold_rec(MPI_Datatype t);
void ep_dt_release_rec(ep_dt_rec_t *rec);
int ep_dt_free_deferred(MPI_Datatype t);

#endif
