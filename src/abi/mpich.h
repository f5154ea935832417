/* MPICH's handles and status (included by abi/handle.h only).
 *
 * MPICH handles are ints:
 *
 *   31 30 | 29 .. 26 | 25 ............................... 0
 *   kind  | type     | index / payload
 *
 * kind 0 is "invalid": MPICH hands out kind-0 handles only for the NULL
 * constants, whose low 26 bits are zero.  A registry id is kind 0 +
 * MPICH's type bits + a non-zero payload, so the id is the handle itself:
 * it is classified with one mask test, and one that leaks into MPICH is
 * rejected there as invalid rather than dereferenced.
 */
#ifndef EP_ABI_MPICH_H
#define EP_ABI_MPICH_H

#define EP_MPI_NAME "MPICH"

#define EP_HID(h) ((int)(h))
#define EP_HANDLE(T, id) ((T)(id))

/* What to add when the MPI refuses a window. */
#define EP_MPI_WINDOW_HINT ""

/* How messages print a handle: "invalid group " EP_HFMT, EP_HARG(g). */
#define EP_HFMT "0x%x"
#define EP_HARG(h) ((unsigned)(h))

/* Nothing to learn at MPI_Init: MPICH's handles say it all. */
static inline int ep_abi_init(void) { return 0; }

/* A handle MPICH may have handed out (kind 01, 10 or 11) of MPICH type
 * htype; MPICH validates the rest. */
static inline int ep_handle_is_mpich(int h, unsigned htype)
{
    return (ep_handle_bits(h) >> EP_HANDLE_KIND_SHIFT) != 0 && ep_handle_type(h) == htype;
}

/* MPICH's builtin objects (kind 01): the predefined datatypes and
 * operations, never freed. */
static inline int ep_handle_is_builtin(int h) { return (ep_handle_bits(h) >> EP_HANDLE_KIND_SHIFT) == 1; }

/* The predefined reduction operations, MPI_MAX to MPI_NO_OP. */
static inline int ep_op_is_predefined(MPI_Op op)
{
    unsigned u = ep_handle_bits((int)op);
    return u >= (unsigned)MPI_MAX && u <= (unsigned)MPI_NO_OP;
}

/* The MPI's own operations, never freed (MPI_OP_NULL too). */
static inline int ep_op_is_builtin(MPI_Op op) { return op == MPI_OP_NULL || ep_handle_is_builtin((int)op); }

/* MPICH builtin datatypes (kind 01, type 0x3) encode their size in bits
 * 15-8; they are all contiguous.  -1 for anything else (asked of PMPI). */
static inline int ep_datatype_builtin_size(MPI_Datatype t)
{
    unsigned u = (unsigned)t;
    if ((u & 0xfc000000u) == 0x4c000000u)
        return (int)((u >> 8) & 0xff);
    return -1;
}

/* A predefined datatype (never freed), of any shape. */
static inline int ep_datatype_is_predefined(MPI_Datatype t) { return ep_handle_is_builtin((int)t); }

/* A datatype handle MPICH may have handed out: MPICH validates the rest. */
static inline int ep_datatype_maybe_mpi(MPI_Datatype t) { return ep_handle_is_mpich((int)t, EP_HTYPE_DATATYPE); }

/* MPI_Status in MPICH's layout: the byte count is split across count_lo
 * and the high bits of count_hi_and_cancelled, whose bit 0 is the
 * cancelled flag. */
static inline void ep_mpi_status_set(MPI_Status *st, int source, int tag, int error, int64_t bytes, int cancelled)
{
    st->MPI_SOURCE = source;
    st->MPI_TAG = tag;
    st->MPI_ERROR = error;
    st->count_lo = (int)(bytes & 0xffffffff);
    st->count_hi_and_cancelled = (int)(((bytes >> 32) << 1) | (cancelled ? 1 : 0));
}

static inline int64_t ep_mpi_status_bytes(const MPI_Status *st)
{
    return (int64_t)(unsigned)st->count_lo | ((int64_t)(st->count_hi_and_cancelled >> 1) << 32);
}

static inline int ep_mpi_status_cancelled(const MPI_Status *st) { return st->count_hi_and_cancelled & 1; }

#endif
