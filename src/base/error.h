/* Errors: engine status codes, and the MPI error codes epmpi mints.
 *
 * The engine returns ep_status_t (0 success, negative errors) from the one
 * table below, which also gives each status its MPI error class and default
 * text.  The entry points turn a status into an MPI error code that carries
 * a message naming the call and the problem, and hand it to the error
 * handler of the communicator involved.
 *
 * Minted codes stay below MPI_ERR_LASTCODE and use MPICH's own layout:
 * class in bits 0-6, "generic message index" in bits 8-18, then bits 19-29.
 * MPICH's generic index counts its built-in message table (well under the
 * 2047 the field holds), so epmpi marks its codes with index 0x7ff and keeps
 * a ring slot number in bits 19-29: MPI_Error_string / MPI_Error_class
 * recognise them with one mask.  A code whose slot was reused reports its
 * class's text only.
 */
#ifndef EP_ERROR_H
#define EP_ERROR_H

#include "abi/handle.h" /* MPI_ERRORS_ABORT where the MPI lacks it */
#include "epmpi.h"
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>

#define EP_STATUS_MAP(X)                                                                                               \
    X(OK, MPI_SUCCESS, "no error")                                                                                     \
    X(ERR_ARG, MPI_ERR_ARG, "invalid argument")                                                                        \
    X(ERR_COMM, MPI_ERR_COMM, "invalid communicator")                                                                  \
    X(ERR_RANK, MPI_ERR_RANK, "invalid rank")                                                                          \
    X(ERR_ROOT, MPI_ERR_ROOT, "invalid root")                                                                          \
    X(ERR_TAG, MPI_ERR_TAG, "invalid tag")                                                                             \
    X(ERR_COUNT, MPI_ERR_COUNT, "invalid count")                                                                       \
    X(ERR_TYPE, MPI_ERR_TYPE, "invalid datatype")                                                                      \
    X(ERR_OP, MPI_ERR_OP, "invalid reduction operation")                                                               \
    X(ERR_BSEND_SPACE, MPI_ERR_BUFFER, "not enough space in the buffer attached with MPI_Buffer_attach")               \
    X(ERR_TRUNCATE, MPI_ERR_TRUNCATE, "message truncated")                                                             \
    X(ERR_REQUEST, MPI_ERR_REQUEST, "invalid request")                                                                 \
    X(ERR_GROUP, MPI_ERR_GROUP, "invalid group")                                                                       \
    X(ERR_KEYVAL, MPI_ERR_KEYVAL, "invalid attribute key")                                                             \
    X(ERR_INFO, MPI_ERR_INFO, "invalid info object")                                                                   \
    X(ERR_NO_MEM, MPI_ERR_NO_MEM, "out of memory")                                                                     \
    X(ERR_IN_STATUS, MPI_ERR_IN_STATUS, "error code is in status")                                                     \
    X(ERR_PENDING, MPI_ERR_PENDING, "operation pending")                                                               \
    X(ERR_ENDPOINTS, MPI_ERR_ENDPOINTS, "endpoints could not be created")                                              \
    X(ERR_ENDPOINTS_NO_MEM, MPI_ERR_ENDPOINTS, "endpoints could not be created: out of memory")                        \
    X(ERR_ATTR_COPY, MPI_ERR_OTHER, "an attribute copy callback failed")                                               \
    X(ERR_WIN, MPI_ERR_WIN, "invalid window")                                                                          \
    X(ERR_RMA_SYNC, MPI_ERR_RMA_SYNC,                                                                                  \
      "no access epoch covers this target (MPI_Win_fence, _lock, _lock_all or _start first), or a synchronisation "    \
      "call out of order")                                                                                             \
    X(ERR_DISP, MPI_ERR_DISP, "the target displacement is negative")                                                   \
    X(ERR_RMA_RANGE, MPI_ERR_RMA_RANGE, "the target data lies outside the target's window")                            \
    X(ERR_RMA_SHARED, MPI_ERR_RMA_SHARED, "the processes of the communicator are not on one node")                     \
    X(ERR_ROOT_MISMATCH, MPI_ERR_ROOT, "the ranks of this process passed different roots to one collective call")      \
    X(ERR_COUNT_MISMATCH, MPI_ERR_COUNT,                                                                               \
      "the ranks of this process passed different amounts of data to one collective call (counts or datatype sizes)")  \
    X(ERR_CALL_MISMATCH, MPI_ERR_OTHER,                                                                                \
      "the ranks of this process are in different collective calls on this communicator")                              \
    X(ERR_COLL_BROKEN, MPI_ERR_OTHER,                                                                                  \
      "an earlier collective on this communicator failed in this process before it reached the other processes, "      \
      "which therefore no longer agree with this one on the collectives in progress")                                  \
    X(ERR_NO_THREAD, MPI_ERR_OTHER, "ranks of this process that the call waits for have no thread that could join it") \
    X(ERR_SYNC_DEAD, MPI_ERR_OTHER,                                                                                    \
      "an earlier collective call on this communicator failed because ranks of this process could not join it, which " \
      "leaves its ranks in this process out of step for good")                                                         \
    X(ERR_SPLIT_TYPE, MPI_ERR_OTHER, "the MPI's MPI_Comm_split_type failed for this process (is the info valid?)")     \
    X(ERR_TRANSPORT, MPI_ERR_OTHER, "the MPI could not start the transfer (nothing was sent or received)")             \
    X(ERR_UCX_START, MPI_ERR_OTHER, "UCX could not connect to the peer or start the transfer (nothing was sent)")      \
    X(ERR_UCX_RECV, MPI_ERR_OTHER, "UCX could not receive the matched message; its data were dropped")                 \
    X(ERR_UCX_FAILED, MPI_ERR_OTHER, "the UCX transport failed while moving the message's data")                       \
    X(ERR_SEND_FAILED, MPI_ERR_OTHER,                                                                                  \
      "the transport failed to send the message's data after its header; the receiver was told")                       \
    X(ERR_PEER_FAILED, MPI_ERR_OTHER, "the sender's transport failed to send the message's data after its header")     \
    X(ERR_PART_TWICE, MPI_ERR_ARG, "the partition was marked ready already in this round of the partitioned send")     \
    X(ERR_IO, MPI_ERR_IO, "the MPI-IO layer (ROMIO) reported an error")                                                \
    X(ERR_VIEW, MPI_ERR_IO, "the etype or filetype cannot make a file view")                                           \
    X(ERR_FILE_SPACE, MPI_ERR_NO_SPACE, "no space left on the file's device")                                          \
    X(ERR_FILE_QUOTA, MPI_ERR_QUOTA, "the file system's quota is exceeded")                                            \
    X(ERR_FILE_SYS, MPI_ERR_IO, "a read or write of the file failed")                                                  \
    X(ERR_DATAREP, MPI_ERR_UNSUPPORTED_DATAREP,                                                                        \
      "the datatype's size in the \"external32\" representation differs from its size in memory, which endpoint "      \
      "files do not convert")                                                                                          \
    X(ERR_INTERN, MPI_ERR_INTERN, "internal error")                                                                    \
    X(ERR_OTHER, MPI_ERR_OTHER, "error")

typedef enum {
#define EP_X(name, cls, text) EP_##name##_IDX,
    EP_STATUS_MAP(EP_X)
#undef EP_X
        EP_STATUS_COUNT
} ep_status_index_t;

typedef enum {
#define EP_X(name, cls, text) EP_##name = -(int)EP_##name##_IDX,
    EP_STATUS_MAP(EP_X)
#undef EP_X
} ep_status_t;

/* MPI error class and default text of an engine status. */
int ep_status_class(ep_status_t st);
const char *ep_status_text(ep_status_t st);

/* A failing engine call may explain its status in a sentence of its own
 * (what it found, what to change), which the entry point's message then
 * uses instead of the status's default text.  Kept per thread, for the
 * next raise of that status. */
void ep_status_explain(ep_status_t st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The explanation left for st, or the default text; forgets it (the text
 * stays readable until this thread explains again). */
const char *ep_status_take_text(ep_status_t st);

/* Mints a code of class cls carrying the formatted message. */
int ep_error_code_make(int cls, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ep_error_code_makev(int cls, const char *fmt, va_list ap);

/* 1 when code is one of ours; then writes its class. */
int ep_error_code_class(int code, int *cls);
/* 1 when code is one of ours or an epmpi-only class; writes its text. */
int ep_error_code_string(int code, char *buf, int *len);

/* Error handlers.  Predefined ones (this test) are interpreted here. */
static inline int ep_errhandler_predefined(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT;
}
/* User-defined ones need their function, recorded when
 * MPI_Comm_create_errhandler or MPI_Win_create_errhandler made them
 * (EP_ERR_NO_MEM: not recorded).  A handler from another language has a
 * caller, which calls fn for comm the way it wants (NULL: C's,
 * fn(&comm, code)). */
typedef void ep_errhandler_caller_t(MPI_Comm_errhandler_function *fn, MPI_Comm comm, int *code);
ep_status_t ep_errhandler_record(MPI_Errhandler eh, MPI_Comm_errhandler_function *fn, ep_errhandler_caller_t *caller);
/* An endpoint (or endpoint window) holds the user handler it uses, so
 * that MPI_Errhandler_free cannot free it meanwhile (error.c; nothing for
 * predefined handlers).  assign makes *slot eh, holding eh and releasing
 * what *slot held; slots are read and written by any thread. */
void ep_errhandler_hold(MPI_Errhandler eh);
void ep_errhandler_release(MPI_Errhandler eh);
void ep_errhandler_assign(_Atomic MPI_Errhandler *slot, MPI_Errhandler eh);
/* get_errhandler on an endpoint hands the caller a reference (give), which
 * its MPI_Errhandler_free gives back (ep_errhandler_free, which defers
 * the free of a handler endpoints hold). */
void ep_errhandler_give(MPI_Errhandler eh);
int ep_errhandler_free(MPI_Errhandler *eh);
/* Forgets the table (MPI_Finalize). */
void ep_errhandler_finalize(void);
/* Invokes eh for communicator handle comm with code; returns code when the
 * handler returns.  ERRORS_ARE_FATAL / ABORT print the message and abort. */
int ep_errhandler_invoke(MPI_Errhandler eh, MPI_Comm comm, int code);
/* The same for an error on a file: a user handler is a file handler. */
int ep_errhandler_invoke_file(MPI_Errhandler eh, MPI_File file, int code);
/* How a fatal handler names its caller and communicator: the layers above
 * know ranks and communicators, so diag.c installs its describer at
 * start-up; before that (and in unit tests) the handle alone is named. */
typedef void ep_whoami_fn(MPI_Comm comm, char *buf, size_t size);
void ep_errhandler_set_whoami(ep_whoami_fn *fn);

/* Prints a message on stderr with one write: glibc from 2.37 writes an
 * unbuffered stream 128 bytes at a time, and the launcher interleaves
 * the pieces of processes that print together (EPMPI_VERBOSE's lines,
 * errors that end a job). */
void ep_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An error that no communicator can be told about and that leaves the
 * engine unable to go on (a message in hand and no memory to keep it, a
 * corrupt header): prints "epmpi: fatal error: " and the message, and
 * aborts the job. */
void ep_fatal(int cls, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn, cold));
/* Prints "epmpi: <text>" on stderr and aborts the job with exit_code:
 * what every fatal error ends with (ep_fatal, a fatal error handler, a
 * failed start-up). */
void ep_die(int exit_code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn, cold));
/* Ends the job with exit_code: PMPI_Abort, and if it returns (MPICH 4.2
 * may, once it has asked the launcher to end the job) the process ends
 * there with that code. */
void ep_abort_job(int exit_code) __attribute__((noreturn, cold));

#endif
