/* Open MPI's handles and status (included by abi/handle.h only).
 *
 * Open MPI's handles are pointers to its objects (MPI_COMM_WORLD is the
 * address of a global).  epmpi reserves an address range of 2^30 bytes at
 * load time, mapped with no access and no memory behind it, and the handle
 * of registry id `id` is the address base + id: no object of Open MPI's
 * can lie there, a handle is classified with one subtraction and one
 * comparison, and one that leaks into Open MPI faults at its first access,
 * at an address inside the range, instead of reading another object; that
 * fault is named (abi/openmpi.c) before the job ends.
 */
#ifndef EP_ABI_OPENMPI_H
#define EP_ABI_OPENMPI_H

#include <stddef.h>

#define EP_MPI_NAME "Open MPI"

#define EP_OMPI_HANDLE_SPAN ((uintptr_t)1 << 30)

/* The reserved range's start (abi/openmpi.c); until the library's
 * constructor ran, a value that no pointer minus it lands in the range. */
extern uintptr_t ep_ompi_handle_base;

static inline int ep_ompi_hid(const void *h)
{
    uintptr_t d = (uintptr_t)h - ep_ompi_handle_base;
    return d < EP_OMPI_HANDLE_SPAN ? (int)d : 0;
}

#define EP_HID(h) ep_ompi_hid((const void *)(h))
#define EP_HANDLE(T, id) ((T)(void *)(ep_ompi_handle_base + (uintptr_t)(unsigned)(id)))

/* What to add when the MPI refuses a window. */
#define EP_MPI_WINDOW_HINT "; Open MPI's one-sided components: ompi_info | grep osc"

/* How messages print a handle: "invalid group " EP_HFMT, EP_HARG(g). */
#define EP_HFMT "%p"
#define EP_HARG(h) ((void *)(h))

/* Learns what epmpi needs of Open MPI's predefined objects, and names the
 * fault of an endpoint handle that reached Open MPI (a PMPI_ call given
 * one); after PMPI_Init_thread.  0 on success. */
int ep_abi_init(void);

/* The predefined contiguous datatypes and their sizes, learnt at
 * MPI_Init (ep_abi_init) into a small hash table of their addresses; the
 * bounds of those addresses let every other handle out with two tests. */
#define EP_OMPI_DT_SLOTS 256
typedef struct {
    uintptr_t handle;
    int size;
} ep_ompi_dt_slot_t;
extern uintptr_t ep_ompi_dt_lo, ep_ompi_dt_hi;
extern ep_ompi_dt_slot_t ep_ompi_dt_table[EP_OMPI_DT_SLOTS];

static inline unsigned ep_ompi_dt_hash(uintptr_t p) { return (unsigned)((p >> 4) ^ (p >> 12)) % EP_OMPI_DT_SLOTS; }

static inline int ep_datatype_builtin_size(MPI_Datatype t)
{
    uintptr_t p = (uintptr_t)t;
    if (p < ep_ompi_dt_lo || p > ep_ompi_dt_hi)
        return -1;
    for (unsigned i = ep_ompi_dt_hash(p);; i = (i + 1) % EP_OMPI_DT_SLOTS) {
        if (ep_ompi_dt_table[i].handle == p)
            return ep_ompi_dt_table[i].size;
        if (!ep_ompi_dt_table[i].handle)
            return -1;
    }
}

static inline int ep_datatype_is_predefined(MPI_Datatype t) { return ep_datatype_builtin_size(t) >= 0; }

/* Any other datatype handle may be Open MPI's: Open MPI validates it. */
static inline int ep_datatype_maybe_mpi(MPI_Datatype t)
{
    return t != MPI_DATATYPE_NULL && t != NULL && !ep_handle_is_ep(EP_HID(t));
}

/* The predefined reduction operations, MPI_MAX to MPI_NO_OP. */
int ep_op_is_predefined(MPI_Op op);
static inline int ep_op_is_builtin(MPI_Op op) { return op == MPI_OP_NULL || ep_op_is_predefined(op); }

/* MPI_Status in Open MPI's layout: a cancelled flag and a size_t count
 * after the public fields. */
static inline void ep_mpi_status_set(MPI_Status *st, int source, int tag, int error, int64_t bytes, int cancelled)
{
    st->MPI_SOURCE = source;
    st->MPI_TAG = tag;
    st->MPI_ERROR = error;
    st->_cancelled = cancelled ? 1 : 0;
    st->_ucount = (size_t)bytes;
}

static inline int64_t ep_mpi_status_bytes(const MPI_Status *st) { return (int64_t)st->_ucount; }

static inline int ep_mpi_status_cancelled(const MPI_Status *st) { return st->_cancelled; }

/* Open MPI before 5.0 (MPI 3.1) has no MPI_ERRORS_ABORT: the handler
 * comparisons treat it as MPI_ERRORS_ARE_FATAL. */
#ifndef MPI_ERRORS_ABORT
#define MPI_ERRORS_ABORT MPI_ERRORS_ARE_FATAL
#endif

#endif
