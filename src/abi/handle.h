/* Handles: the only place that knows how an MPI encodes them.
 *
 * Every object epmpi makes behind a handle (endpoint communicator, request,
 * message, group, window, file) has a registry id, an int laid out as
 *
 *   31 30 | 29 .. 26 | 25 .. 20   | 19 ........ 0
 *    0  0 | type     | generation | registry index (never 0)
 *
 * so the index gives O(1) lookup in the registry and the generation
 * recognises a freed (stale) handle.  How an id becomes a value of the MPI's
 * handle types, and how a handle the MPI made is told from one of epmpi's,
 * depends on the MPI; abi/mpich.h and abi/openmpi.h each provide
 *
 *   EP_HID(h)          the registry id of handle h, 0 when epmpi did not make h
 *   EP_HANDLE(T, id)   the handle of type T for registry id id
 *   ep_datatype_builtin_size(t), ep_datatype_is_predefined(t),
 *   ep_datatype_maybe_mpi(t), ep_op_is_predefined(op)
 *                      what epmpi needs to know of the MPI's own objects
 *   ep_mpi_status_set / _bytes / _cancelled
 *                      MPI_Status's hidden fields
 *   ep_abi_init()      what there is to learn at MPI_Init
 *
 * and the rest of the code does not care which MPI it runs on.
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

/* Object types (bits 29-26): MPICH's own numbers, so that on MPICH an id
 * is a handle MPICH itself would reject as invalid (abi/mpich.h). */
enum ep_handle_type {
    EP_HTYPE_COMM = 0x1,
    EP_HTYPE_GROUP = 0x2,
    EP_HTYPE_DATATYPE = 0x3,
    EP_HTYPE_FILE = 0x4,
    EP_HTYPE_WIN = 0x8,
    EP_HTYPE_REQUEST = 0xb, /* requests and messages share it */
};

static inline unsigned ep_handle_bits(int id) { return (unsigned)id; }

/* True when id is a registry id (of any type): what EP_HID gives for a
 * handle epmpi minted. */
static inline int ep_handle_is_ep(int id)
{
    unsigned u = ep_handle_bits(id);
    return (u >> EP_HANDLE_KIND_SHIFT) == 0 && (u & EP_HANDLE_PAYLOAD_MASK) != 0;
}

static inline unsigned ep_handle_type(int id)
{
    return (ep_handle_bits(id) & EP_HANDLE_TYPE_MASK) >> EP_HANDLE_TYPE_SHIFT;
}

static inline int ep_handle_make(unsigned type, unsigned gen, unsigned index)
{
    return (int)((type << EP_HANDLE_TYPE_SHIFT) | ((gen & EP_HANDLE_GEN_MASK) << EP_HANDLE_GEN_SHIFT) |
                 (index & EP_HANDLE_INDEX_MASK));
}

static inline unsigned ep_handle_index(int id) { return ep_handle_bits(id) & EP_HANDLE_INDEX_MASK; }

#if defined(OPEN_MPI)
#include "abi/openmpi.h"
#elif defined(MPICH)
#include "abi/mpich.h"
#else
#error "epmpi knows the handles of MPICH and Open MPI only"
#endif

/* The handle for a registry id just minted, or null when the registry was
 * full (ep_registry_add gave 0). */
#define EP_HANDLE_NEW(T, id, null)              \
    __extension__({                             \
        int ep_id_ = (id);                      \
        ep_id_ ? EP_HANDLE(T, ep_id_) : (null); \
    })

/* Typed tests used by the entry points. */
static inline int ep_comm_handle_is_ep(MPI_Comm c) { return ep_handle_is_ep(EP_HID(c)); }
static inline int ep_request_handle_is_ep(MPI_Request r) { return ep_handle_is_ep(EP_HID(r)); }
static inline int ep_message_handle_is_ep(MPI_Message m) { return ep_handle_is_ep(EP_HID(m)); }
static inline int ep_group_handle_is_ep(MPI_Group g) { return ep_handle_is_ep(EP_HID(g)); }
static inline int ep_win_handle_is_ep(MPI_Win w) { return ep_handle_is_ep(EP_HID(w)); }
static inline int ep_op_handle_is_ep(MPI_Op op) { return ep_handle_is_ep(EP_HID(op)); }
static inline int ep_datatype_handle_is_ep(MPI_Datatype t) { return ep_handle_is_ep(EP_HID(t)); }

/* MPI_File is a pointer in both MPIs (ROMIO's or OMPIO's struct); an
 * endpoint file handle is an odd value, (registry id << 1) | 1, which no
 * pointer to a struct can be.  Its Fortran handle is the registry id
 * itself, far above the small indices the MPI hands out. */
static inline int ep_file_handle_is_ep(MPI_File f) { return ((uintptr_t)f & 1u) != 0; }
static inline MPI_File ep_file_handle_make(int id) { return (MPI_File)(((uintptr_t)(unsigned)id << 1) | 1u); }
static inline int ep_file_handle_id(MPI_File f) { return (int)(unsigned)((uintptr_t)f >> 1); }

#endif
