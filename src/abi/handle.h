/* Handle representation: the only file that knows how handles are encoded.
 *
 * MPICH handles are ints:
 *
 *   31 30 | 29 .. 26 | 25 ............................... 0
 *   kind  | type     | index / payload
 *
 * kind 0 is "invalid": MPICH hands out kind-0 handles only for the NULL
 * constants, whose low 26 bits are zero.  epmpi mints its own handles as
 * kind 0 + MPICH's type bits + a non-zero payload:
 *
 *   31 30 | 29 .. 26 | 25 .. 20   | 19 ........ 0
 *    0  0 | type     | generation | registry index (never 0)
 *
 * so a handle is classified with one mask test, the index gives O(1) lookup
 * in the registry, the generation recognises a freed (stale) handle, and an
 * endpoint handle that leaks into MPICH is rejected there as invalid rather
 * than dereferenced.  Pointer-handle MPIs (Open MPI, the MPI 5 ABI) will need
 * another version of this header only.
 */
#ifndef EP_HANDLE_H
#define EP_HANDLE_H

#include <mpi.h>
#include <stdint.h>

#define EP_HANDLE_KIND_SHIFT 30
#define EP_HANDLE_TYPE_SHIFT 26
#define EP_HANDLE_TYPE_MASK 0x3c000000u
#define EP_HANDLE_PAYLOAD_MASK 0x03ffffffu
#define EP_HANDLE_GEN_SHIFT 20
#define EP_HANDLE_GEN_MASK 0x3fu
#define EP_HANDLE_INDEX_MASK 0x000fffffu
#define EP_HANDLE_INDEX_MAX EP_HANDLE_INDEX_MASK

/* MPICH's object type numbers (bits 29-26). */
enum ep_handle_type {
    EP_HTYPE_COMM = 0x1,
    EP_HTYPE_GROUP = 0x2,
    EP_HTYPE_DATATYPE = 0x3,
    EP_HTYPE_FILE = 0x4,
    EP_HTYPE_WIN = 0x8,
    EP_HTYPE_REQUEST = 0xb, /* requests and messages share it */
};

static inline unsigned ep_handle_bits(int h) { return (unsigned)h; }

/* True when h is a handle epmpi minted (of any type). */
static inline int ep_handle_is_ep(int h)
{
    unsigned u = ep_handle_bits(h);
    return (u >> EP_HANDLE_KIND_SHIFT) == 0 && (u & EP_HANDLE_PAYLOAD_MASK) != 0;
}

static inline unsigned ep_handle_type(int h)
{
    return (ep_handle_bits(h) & EP_HANDLE_TYPE_MASK) >> EP_HANDLE_TYPE_SHIFT;
}

static inline int ep_handle_make(unsigned type, unsigned gen, unsigned index)
{
    return (int)((type << EP_HANDLE_TYPE_SHIFT) | ((gen & EP_HANDLE_GEN_MASK) << EP_HANDLE_GEN_SHIFT) |
                 (index & EP_HANDLE_INDEX_MASK));
}

static inline unsigned ep_handle_index(int h) { return ep_handle_bits(h) & EP_HANDLE_INDEX_MASK; }

/* Typed tests used by the entry points. */
static inline int ep_comm_handle_is_ep(MPI_Comm c) { return ep_handle_is_ep((int)c); }
static inline int ep_request_handle_is_ep(MPI_Request r) { return ep_handle_is_ep((int)r); }
static inline int ep_message_handle_is_ep(MPI_Message m) { return ep_handle_is_ep((int)m); }
static inline int ep_group_handle_is_ep(MPI_Group g) { return ep_handle_is_ep((int)g); }
static inline int ep_win_handle_is_ep(MPI_Win w) { return ep_handle_is_ep((int)w); }

/* MPI_File is a pointer (ROMIO's struct); an endpoint file handle is an
 * odd value, (registry handle << 1) | 1, which no pointer to a struct can
 * be.  Its Fortran handle is the registry handle itself, far above the
 * small indices ROMIO hands out. */
static inline int ep_file_handle_is_ep(MPI_File f) { return ((uintptr_t)f & 1u) != 0; }
static inline MPI_File ep_file_handle_make(int h) { return (MPI_File)(((uintptr_t)(unsigned)h << 1) | 1u); }
static inline int ep_file_handle_id(MPI_File f) { return (int)(unsigned)((uintptr_t)f >> 1); }

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

/* MPICH builtin datatypes (kind 01, type 0x3) encode their size in bits
 * 15-8; they are all contiguous.  Anything else is asked of PMPI. */
static inline int ep_datatype_builtin_size(MPI_Datatype t)
{
    unsigned u = (unsigned)t;
    if ((u & 0xfc000000u) == 0x4c000000u)
        return (int)((u >> 8) & 0xff);
    return -1;
}

/* MPI_Status in MPICH's layout (ep_mpi_status_*, apart from the engine's
 * ep_status_t codes): the byte count is split across count_lo and the
 * high bits of count_hi_and_cancelled, whose bit 0 is the cancelled flag. */
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

#endif
