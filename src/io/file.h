/* MPI-IO on endpoint communicators.
 *
 * Each endpoint is a process in MPI's sense: its own file handle, file view
 * and individual file pointer.  Underneath, each process opens the file once
 * with ROMIO (MPICH's MPI-IO) over the process-level communicator of a
 * private duplicate of the communicator the file was opened on, and keeps
 * ROMIO's view at bytes (disp 0, MPI_BYTE, MPI_BYTE):
 *
 *   - an endpoint's view is applied here: an access of `count` elements at
 *     an offset of the view becomes a list of byte pieces of the file
 *     (ep_file_pieces), read or written with explicit offsets;
 *   - independent accesses, and the long pieces of collective ones, go
 *     through the process's own POSIX descriptor of the file where that is
 *     safe (a local or parallel file system, not atomic mode), each
 *     endpoint its own pieces at once (ROMIO's calls from threads take
 *     turns under MPICH's lock), else through ROMIO calls of their own;
 *   - a collective access combines the rest of the local endpoints' pieces
 *     into one request per process: their union goes to ROMIO as a single
 *     collective call (a view of those pieces, the call, and the byte view
 *     again), in place through a memory type of their addresses, staged
 *     only where pieces overlap, so ROMIO's two-phase I/O sees one process
 *     with all of its endpoints' data; no call where no process has such
 *     pieces;
 *   - the shared file pointer, in etypes, lives in an atomic counter when
 *     the file's ranks are in one process, else in an MPI window at the
 *     first process (fetch-and-add under an exclusive lock).
 *
 * The engine returns ep_status_t; an error ROMIO reported is EP_ERR_IO, its
 * MPI code kept in the file (ep_file_t.romio_code) or passed back by
 * ep_file_open, for the entry point to raise with ROMIO's class and text.
 */
#ifndef EP_FILE_H
#define EP_FILE_H

#include "core/comm.h"
#include "core/registry.h"

#include <mpi.h>
#include <stdint.h>

typedef struct ep_file_proc ep_file_proc_t;

/* A view: the filetype's data as runs of bytes (offsets from the
 * filetype's origin, in typemap order), tiled every `extent` bytes from
 * disp. */
typedef struct ep_file_view {
    MPI_Offset disp;
    MPI_Datatype etype, filetype; /* the program's types, duplicated when derived (freed with the view) */
    int64_t esize;                /* etype size */
    int64_t size, extent;         /* filetype size and extent */
    int nrun;
    MPI_Offset *run_off; /* [nrun] */
    int64_t *run_len;    /* [nrun] */
    int64_t *run_pos;    /* [nrun] bytes of the filetype's data before run i */
} ep_file_view_t;

/* A view of (disp, etype, filetype): the filetype as runs of bytes (its
 * typemap, core/typemap.h), the types kept (duplicated when derived).  EP_ERR_ARG
 * when the filetype holds no whole number of etypes; EP_ERR_VIEW when a
 * typemap has negative or decreasing displacements, or (writable: the
 * file is open for writing) overlapping regions (MPI-4.0 14.3). */
ep_status_t ep_file_view_make(ep_file_view_t *v, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                              int writable);
void ep_file_view_free(ep_file_view_t *v);
/* The byte of the file where byte b of the view's data lies; *run (may be
 * NULL) the filetype run it falls in. */
MPI_Offset ep_file_view_byte(const ep_file_view_t *v, int64_t b, int *run);
/* How many bytes of the view's data lie before byte x of the file. */
int64_t ep_file_view_data_before(const ep_file_view_t *v, MPI_Offset x);

typedef struct ep_file {
    ep_object_t obj;   /* EP_OBJ_FILE */
    MPI_File handle;   /* its handle (handle.h) */
    ep_endpoint_t *ep; /* its rank of the file's communicator (a duplicate of the one opened on) */
    ep_file_proc_t *proc;
    int amode;
    _Atomic MPI_Errhandler errhandler;
    ep_file_view_t view;
    int external32; /* the view's data representation is "external32" (else "native") */
    MPI_Offset pos; /* individual file pointer, in etypes of the view */
    int romio_code; /* ROMIO's error code behind the last EP_ERR_IO */
    /* a split collective begun: its result, for the end call */
    int split; /* 0, or the kind of access begun (ep_file_how_t | EP_FILE_READ) */
    const void *split_buf;
    MPI_Status split_status;
    ep_status_t split_rc;
} ep_file_t;

/* Access kinds: where the offset comes from, and who takes part. */
typedef enum {
    EP_FILE_AT = 1,         /* explicit offset */
    EP_FILE_INDIVIDUAL = 2, /* the individual file pointer */
    EP_FILE_SHARED = 3,     /* the shared file pointer (independent) */
    EP_FILE_ORDERED = 4,    /* the shared file pointer in rank order (collective) */
    EP_FILE_WHERE = 7,
    EP_FILE_COLL = 8,  /* collective (AT, INDIVIDUAL; ORDERED always is) */
    EP_FILE_READ = 16, /* read, else write */
} ep_file_how_t;

/* The file behind a live endpoint file handle, or NULL. */
ep_file_t *ep_file_get(MPI_File f);

/* MPI_File_open by each rank of ep's communicator.  eh: the new handles'
 * error handler.  On EP_ERR_IO, *romio_code is ROMIO's error. */
ep_status_t ep_file_open(ep_endpoint_t *ep, const char *name, int amode, MPI_Info info, MPI_Errhandler eh,
                         ep_file_t **out, int *romio_code);
/* MPI_File_close (collective); f is gone after it, whatever it returns. */
ep_status_t ep_file_close(ep_file_t *f, int *romio_code);

/* Whether count elements of t (bytes in memory) take as many bytes in the
 * "external32" representation: the types an endpoint file in external32
 * accepts, in its view and in its accesses. */
int ep_file_external32_fits(MPI_Datatype t, int count, int64_t bytes);

/* MPI_File_set_view (collective), of the "native" or "external32" data
 * representation (set in external32 by the caller). */
ep_status_t ep_file_set_view(ep_file_t *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype);

/* A data access: count elements of type at buf, at `offset` (EP_FILE_AT;
 * in etypes of the view) or the kind's file pointer.  st: the status
 * (bytes moved), or NULL. */
ep_status_t ep_file_access(ep_file_t *f, int how, MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                           MPI_Status *st);

/* Collective calls on the process's ROMIO file, once per process (the
 * local ranks meet first): MPI_File_set_size, _preallocate, _sync,
 * _set_atomicity, _set_info, _seek_shared. */
typedef enum {
    EP_FILE_SET_SIZE,
    EP_FILE_PREALLOCATE,
    EP_FILE_SYNC,
    EP_FILE_SET_ATOMICITY,
    EP_FILE_SET_INFO, /* arg: the MPI_Info */
    EP_FILE_SEEK_SHARED,
} ep_file_coll_t;
/* whence: MPI_File_seek_shared's. */
ep_status_t ep_file_collective(ep_file_t *f, ep_file_coll_t what, MPI_Offset arg, int whence);

/* Local queries and the individual file pointer. */
ep_status_t ep_file_size(ep_file_t *f, MPI_Offset *size);
int ep_file_atomicity(ep_file_t *f);
MPI_File ep_file_romio(ep_file_t *f);
/* The byte of the file where the view's offset (in etypes) lies. */
MPI_Offset ep_file_byte_offset(const ep_file_t *f, MPI_Offset offset);
/* MPI_File_seek: EP_ERR_ARG when the result is negative. */
ep_status_t ep_file_seek(ep_file_t *f, MPI_Offset offset, int whence);
ep_status_t ep_file_shared_position(ep_file_t *f, MPI_Offset *pos);

#endif
