/* MPI-IO on endpoint communicators (src/io/file.h): every MPI_File_ call.
 * Classic files (ROMIO's pointers) go straight to PMPI_; an endpoint file
 * handle is an odd value (src/abi/handle.h).  Errors go to the file's error
 * handler (MPI_ERRORS_RETURN unless the program changed the default with
 * MPI_File_set_errhandler(MPI_FILE_NULL, ...)); those of MPI_File_open to
 * that default's.
 *
 * The non-blocking calls (MPI_File_iread ... _iwrite_at_all) and the split
 * collectives (_begin / _end) do their transfer when they start: the
 * request comes back complete, and _end returns what _begin did.  MPI
 * allows it; a non-blocking collective thus waits for the other ranks of
 * the file, as the blocking one does. */
#include "entry.h"
#include "core/datatype.h"
#include "io/file.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- errors ---------------------------------------------------------------- */

/* The error handler of MPI_FILE_NULL: files take it when they open, and
 * errors tied to no valid file go to it. */
static MPI_Errhandler default_handler(void)
{
    MPI_Errhandler eh = MPI_ERRORS_RETURN;
    if (PMPI_File_get_errhandler(MPI_FILE_NULL, &eh) == MPI_SUCCESS && !ep_errhandler_predefined(eh)) {
        MPI_Errhandler ref = eh; /* keep the handle, give MPICH's reference back */
        PMPI_Errhandler_free(&ref);
    }
    return eh;
}

/* Raises an error of class cls with handler eh, for file handle h. */
static int raise_on(MPI_Errhandler eh, MPI_File h, const char *call, int cls, const char *text)
{
    return ep_errhandler_invoke_file(eh, h, ep_error_code_make(cls, "%s: %s", call, text));
}

/* An engine status on handler eh; EP_ERR_IO carries ROMIO's code (class
 * and text). */
static int status_on(MPI_Errhandler eh, MPI_File h, const char *call, ep_status_t st, int romio_code)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = MPI_ERR_IO;
    if (st == EP_OK)
        return MPI_SUCCESS;
    if (st != EP_ERR_IO)
        return raise_on(eh, h, call, ep_status_class(st), ep_status_take_text(st));
    PMPI_Error_class(romio_code, &cls);
    PMPI_Error_string(romio_code, text, &len);
    return raise_on(eh, h, call, cls, text);
}

/* Raises an error of class cls on file f (NULL: on MPI_FILE_NULL's handler). */
static int file_raise(ep_file_t *f, const char *call, int cls, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int file_raise(ep_file_t *f, const char *call, int cls, const char *fmt, ...)
{
    char text[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return f ? raise_on(f->errhandler, f->handle, call, cls, text)
             : raise_on(default_handler(), MPI_FILE_NULL, call, cls, text);
}

/* The same for an engine status. */
static int file_status(ep_file_t *f, const char *call, ep_status_t st, int romio_code)
{
    return f ? status_on(f->errhandler, f->handle, call, st, romio_code)
             : status_on(default_handler(), MPI_FILE_NULL, call, st, romio_code);
}

/* Resolves an endpoint file handle, or raises MPI_ERR_FILE. */
static int file_get(const char *call, MPI_File fh, ep_file_t **f)
{
    if ((*f = ep_file_get(fh)))
        return MPI_SUCCESS;
    return file_raise(NULL, call, MPI_ERR_FILE, "invalid file handle %p (closed already?)", (void *)fh);
}

/* A datatype argument: errors on the file's handler. */
static int check_type(ep_file_t *f, const char *call, MPI_Datatype t)
{
    if (t == MPI_DATATYPE_NULL)
        return file_raise(f, call, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
    ep_status_t st = ep_dt_check(t);
    return st ? file_raise(f, call, ep_status_class(st), "invalid datatype " EP_HFMT " (%s)", EP_HARG(t),
                           ep_status_take_text(st))
              : MPI_SUCCESS;
}

/* In an entry point taking a file: classic files go to the PMPI_ call. */
#define FILE_ENTRY(call, fh, f, pass)  \
    do {                               \
        if (!ep_file_handle_is_ep(fh)) \
            return (pass);             \
        FILE_RESOLVE(call, fh, f);     \
    } while (0)
/* The same once fh is known to be an endpoint file. */
#define FILE_RESOLVE(call, fh, f)             \
    do {                                      \
        int rc_;                              \
        if ((rc_ = file_get(call, fh, &(f)))) \
            return rc_;                       \
    } while (0)

#define CHECK_PTR(f, call, p, what)                                      \
    do {                                                                 \
        if (!(p))                                                        \
            return file_raise(f, call, MPI_ERR_ARG, "%s is NULL", what); \
    } while (0)

/* ---- open and close ------------------------------------------------------------ */

ENTRY_ENDPOINT_PATH int file_open_ep(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static const char call[] = "MPI_File_open";
    ep_endpoint_t *ep;
    ep_file_t *f;
    int rc, code = MPI_SUCCESS;
    ENTRY_RESOLVE_EP(call, comm, ep);
    if ((rc = entry_check_intra(ep, call)))
        return rc;
    if (!fh || !filename)
        return file_raise(NULL, call, MPI_ERR_ARG, "%s is NULL", fh ? "filename" : "the file handle pointer");
    ep_status_t st = ep_file_open(ep, filename, amode, info, default_handler(), &f, &code);
    if (st)
        return file_status(NULL, call, st, code);
    *fh = f->handle;
    return MPI_SUCCESS;
}

ENTRY_API int MPI_File_close(MPI_File *fh)
{
    static const char call[] = "MPI_File_close";
    ep_file_t *f;
    int code = MPI_SUCCESS;
    if (!fh)
        return PMPI_File_close(fh);
    FILE_ENTRY(call, *fh, f, PMPI_File_close(fh));
    if (f->split)
        return file_raise(f, call, MPI_ERR_OTHER, "a split collective begun on the file has not ended");
    /* The file goes: an error is raised on its handler, held until then,
     * with MPI_FILE_NULL for the file. */
    MPI_Errhandler eh = f->errhandler;
    ep_errhandler_hold(eh);
    ep_status_t st = ep_file_close(f, &code);
    *fh = MPI_FILE_NULL;
    int rc = status_on(eh, MPI_FILE_NULL, call, st, code);
    ep_errhandler_release(eh);
    return rc;
}

ENTRY_API MPI_Fint MPI_File_c2f(MPI_File fh)
{
    if (!ep_file_handle_is_ep(fh))
        return PMPI_File_c2f(fh);
    return (MPI_Fint)ep_file_handle_id(fh);
}

ENTRY_API MPI_File MPI_File_f2c(MPI_Fint fh)
{
    if (ep_registry_get((int)fh, EP_OBJ_FILE)) /* the registry id (MPI_File_c2f) */
        return ep_file_handle_make((int)fh);
    return PMPI_File_f2c(fh);
}

/* ---- error handlers ---------------------------------------------------------- */

ENTRY_API int MPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    int rc = PMPI_File_create_errhandler(fn, errhandler);
    if (rc == MPI_SUCCESS &&
        ep_errhandler_record(*errhandler, (MPI_Comm_errhandler_function *)(void (*)(void))fn, NULL)) {
        PMPI_Errhandler_free(errhandler);
        return file_raise(NULL, "MPI_File_create_errhandler", MPI_ERR_NO_MEM, "out of memory recording the handler");
    }
    return rc;
}

ENTRY_API int MPI_File_set_errhandler(MPI_File fh, MPI_Errhandler errhandler)
{
    static const char call[] = "MPI_File_set_errhandler";
    ep_file_t *f;
    FILE_ENTRY(call, fh, f, PMPI_File_set_errhandler(fh, errhandler));
    if (errhandler == MPI_ERRHANDLER_NULL)
        return file_raise(f, call, MPI_ERR_ARG, "errhandler is MPI_ERRHANDLER_NULL");
    ep_errhandler_assign(&f->errhandler, errhandler);
    return MPI_SUCCESS;
}

ENTRY_API int MPI_File_get_errhandler(MPI_File fh, MPI_Errhandler *errhandler)
{
    static const char call[] = "MPI_File_get_errhandler";
    ep_file_t *f;
    FILE_ENTRY(call, fh, f, PMPI_File_get_errhandler(fh, errhandler));
    CHECK_PTR(f, call, errhandler, "errhandler");
    *errhandler = f->errhandler;
    ep_errhandler_give(*errhandler); /* the caller's reference, for its MPI_Errhandler_free */
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int file_call_errhandler_ep(MPI_File fh, int errorcode)
{
    ep_file_t *f;
    FILE_RESOLVE("MPI_File_call_errhandler", fh, f);
    ep_errhandler_invoke_file(f->errhandler, fh, errorcode);
    return MPI_SUCCESS;
}

/* ---- queries and collective settings --------------------------------------------- */

ENTRY_ENDPOINT_PATH int file_get_amode_ep(MPI_File fh, int *amode)
{
    static const char call[] = "MPI_File_get_amode";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    CHECK_PTR(f, call, amode, "amode");
    *amode = f->amode;
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int file_get_group_ep(MPI_File fh, MPI_Group *group)
{
    static const char call[] = "MPI_File_get_group";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    CHECK_PTR(f, call, group, "group");
    return MPI_Comm_group(f->ep->handle, group);
}

ENTRY_ENDPOINT_PATH int file_get_info_ep(MPI_File fh, MPI_Info *info_used)
{
    static const char call[] = "MPI_File_get_info";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    CHECK_PTR(f, call, info_used, "info_used");
    int rc = PMPI_File_get_info(ep_file_romio(f), info_used);
    return rc ? file_status(f, call, EP_ERR_IO, rc) : MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int file_get_size_ep(MPI_File fh, MPI_Offset *size)
{
    static const char call[] = "MPI_File_get_size";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    CHECK_PTR(f, call, size, "size");
    return file_status(f, call, ep_file_size(f, size), f->romio_code);
}

ENTRY_ENDPOINT_PATH int file_get_atomicity_ep(MPI_File fh, int *flag)
{
    static const char call[] = "MPI_File_get_atomicity";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    CHECK_PTR(f, call, flag, "flag");
    *flag = ep_file_atomicity(f);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int file_get_type_extent_ep(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    static const char call[] = "MPI_File_get_type_extent";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    CHECK_PTR(f, call, extent, "extent");
    int rc = PMPI_File_get_type_extent(ep_file_romio(f), datatype, extent);
    return rc ? file_status(f, call, EP_ERR_IO, rc) : MPI_SUCCESS;
}

#if EP_HAVE_MPI_File_get_type_extent_c
ENTRY_ENDPOINT_PATH int file_get_type_extent_c_ep(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    static const char call[] = "MPI_File_get_type_extent_c";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    CHECK_PTR(f, call, extent, "extent");
    int rc = PMPI_File_get_type_extent_c(ep_file_romio(f), datatype, extent);
    return rc ? file_status(f, call, EP_ERR_IO, rc) : MPI_SUCCESS;
}
#endif

int entry_file_large_type(const char *call, MPI_File fh, MPI_Count count, MPI_Datatype t, MPI_Datatype *large)
{
    ep_file_t *f;
    int rc;
    const char *failed;
    *large = MPI_DATATYPE_NULL;
    if (count <= INT_MAX && count >= INT_MIN)
        return MPI_SUCCESS;
    if ((rc = file_get(call, fh, &f)) || (rc = check_type(f, call, t)))
        return rc;
    if (count < 0)
        return file_raise(f, call, MPI_ERR_COUNT, "count %lld is negative", (long long)count);
    if ((failed = entry_large_type_new(count, 0, t, large)))
        return file_raise(f, call, MPI_ERR_INTERN, "cannot %s a datatype of %lld elements", failed, (long long)count);
    return MPI_SUCCESS;
}

/* The collective settings: every rank of the file calls them. */
static int collective(const char *call, MPI_File fh, ep_file_coll_t what, MPI_Offset arg, int whence)
{
    ep_file_t *f = ep_file_get(fh);
    if (!f)
        return file_raise(NULL, call, MPI_ERR_FILE, "invalid file handle %p (closed already?)", (void *)fh);
    return file_status(f, call, ep_file_collective(f, what, arg, whence), f->romio_code);
}

ENTRY_ENDPOINT_PATH int file_set_size_ep(MPI_File fh, MPI_Offset size)
{
    if (size < 0)
        return file_raise(ep_file_get(fh), "MPI_File_set_size", MPI_ERR_ARG, "size %lld is negative", (long long)size);
    return collective("MPI_File_set_size", fh, EP_FILE_SET_SIZE, size, 0);
}

ENTRY_ENDPOINT_PATH int file_preallocate_ep(MPI_File fh, MPI_Offset size)
{
    if (size < 0)
        return file_raise(ep_file_get(fh), "MPI_File_preallocate", MPI_ERR_ARG, "size %lld is negative",
                          (long long)size);
    return collective("MPI_File_preallocate", fh, EP_FILE_PREALLOCATE, size, 0);
}

/* ---- views and file pointers ---------------------------------------------------------- */

static int check_external32(ep_file_t *f, const char *call, MPI_Datatype t, const char *which)
{
    int size = -1;
    if (PMPI_Type_size(t, &size) == MPI_SUCCESS && ep_file_external32_fits(t, 1, size))
        return MPI_SUCCESS;
    return file_raise(f, call, MPI_ERR_UNSUPPORTED_DATAREP,
                      "the %s's size in the \"external32\" representation differs from its %d bytes in memory "
                      "(MPI_LONG, for one); endpoint files take external32 views of types of equal sizes only",
                      which, size);
}

ENTRY_ENDPOINT_PATH int file_set_view_ep(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                                         const char *datarep, MPI_Info info)
{
    static const char call[] = "MPI_File_set_view";
    ep_file_t *f;
    int rc;
    FILE_RESOLVE(call, fh, f);
    (void)info; /* hints change nothing here; MPI lets them be ignored */
    if ((rc = check_type(f, call, etype)) || (rc = check_type(f, call, filetype)))
        return rc;
    int ext32 = datarep && !strcmp(datarep, "external32");
    if (!datarep || (strcmp(datarep, "native") && !ext32))
        return file_raise(f, call, MPI_ERR_UNSUPPORTED_DATAREP,
                          "data representation '%s': \"native\" and \"external32\" on endpoint communicators",
                          datarep ? datarep : "(null)");
    if (ext32 &&
        ((rc = check_external32(f, call, etype, "etype")) || (rc = check_external32(f, call, filetype, "filetype"))))
        return rc;
    if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT)
        return file_raise(f, call, MPI_ERR_ARG, "disp %lld is negative", (long long)disp);
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        /* The shared file pointer's byte in the file (14.3; collective:
         * nobody moves it meanwhile). */
        MPI_Offset at;
        if (!(f->amode & MPI_MODE_SEQUENTIAL))
            return file_raise(f, call, MPI_ERR_ARG, "MPI_DISPLACEMENT_CURRENT is for MPI_MODE_SEQUENTIAL files only");
        if ((rc = file_status(f, call, ep_file_shared_position(f, &at), f->romio_code)))
            return rc;
        disp = ep_file_byte_offset(f, at);
    }
    if (f->split)
        return file_raise(f, call, MPI_ERR_OTHER, "a split collective begun on the file has not ended");
    if ((rc = file_status(f, call, ep_file_set_view(f, disp, etype, filetype), f->romio_code)))
        return rc;
    f->external32 = ext32;
    return MPI_SUCCESS;
}

/* A copy the caller owns: predefined types as they are. */
static int give_type(MPI_Datatype t, MPI_Datatype *out)
{
    if (ep_datatype_builtin_size(t) > 0) {
        *out = t;
        return MPI_SUCCESS;
    }
    return PMPI_Type_dup(t, out);
}

ENTRY_ENDPOINT_PATH int file_get_view_ep(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                                         char *datarep)
{
    static const char call[] = "MPI_File_get_view";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    if (!disp || !etype || !filetype || !datarep)
        return file_raise(f, call, MPI_ERR_ARG, "an output argument is NULL");
    *disp = f->view.disp;
    if (give_type(f->view.etype, etype) || give_type(f->view.filetype, filetype))
        return file_raise(f, call, MPI_ERR_INTERN, "could not copy the view's datatypes");
    strcpy(datarep, f->external32 ? "external32" : "native");
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int file_seek_ep(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char call[] = "MPI_File_seek";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
        return file_raise(f, call, MPI_ERR_ARG, "invalid whence %d", whence);
    return file_status(f, call, ep_file_seek(f, offset, whence), f->romio_code);
}

ENTRY_ENDPOINT_PATH int file_get_position_ep(MPI_File fh, MPI_Offset *offset)
{
    static const char call[] = "MPI_File_get_position";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    CHECK_PTR(f, call, offset, "offset");
    *offset = f->pos;
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int file_get_byte_offset_ep(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    static const char call[] = "MPI_File_get_byte_offset";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    CHECK_PTR(f, call, disp, "disp");
    if (offset < 0)
        return file_raise(f, call, MPI_ERR_ARG, "offset %lld is negative", (long long)offset);
    *disp = ep_file_byte_offset(f, offset);
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int file_seek_shared_ep(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char call[] = "MPI_File_seek_shared";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
        return file_raise(f, call, MPI_ERR_ARG, "invalid whence %d", whence);
    return collective(call, fh, EP_FILE_SEEK_SHARED, offset, whence);
}

ENTRY_ENDPOINT_PATH int file_get_position_shared_ep(MPI_File fh, MPI_Offset *offset)
{
    static const char call[] = "MPI_File_get_position_shared";
    ep_file_t *f;
    FILE_RESOLVE(call, fh, f);
    CHECK_PTR(f, call, offset, "offset");
    return file_status(f, call, ep_file_shared_position(f, offset), f->romio_code);
}

/* ---- data access ------------------------------------------------------------------------
 * Every read and write is one call of data_access(): how says where the offset
 * comes from and whether the call is collective (src/io/file.h); status for
 * the blocking calls, request for the non-blocking ones. */

static int data_access(const char *call, MPI_File fh, int how, MPI_Offset offset, const void *buf, int count,
                       MPI_Datatype type, MPI_Status *status, MPI_Request *request)
{
    ep_file_t *f;
    int rc, read = (how & EP_FILE_READ) != 0;
    if ((rc = file_get(call, fh, &f)))
        return rc;
    if (count < 0)
        return file_raise(f, call, MPI_ERR_COUNT, "invalid count %d (must be non-negative)", count);
    if ((rc = check_type(f, call, type)))
        return rc;
    if (!buf && count > 0)
        return file_raise(f, call, MPI_ERR_BUFFER, "the buffer is NULL");
    if (read && (f->amode & MPI_MODE_WRONLY))
        return file_raise(f, call, MPI_ERR_ACCESS, "the file was opened MPI_MODE_WRONLY");
    if (!read && (f->amode & MPI_MODE_RDONLY))
        return file_raise(f, call, MPI_ERR_READ_ONLY, "the file was opened MPI_MODE_RDONLY");
    if ((how & EP_FILE_WHERE) == EP_FILE_AT && offset < 0)
        return file_raise(f, call, MPI_ERR_ARG, "offset %lld is negative", (long long)offset);
    MPI_Status st;
    ep_status_t s = ep_file_access(f, how, offset, (void *)buf, count, type, &st);
    if (s)
        return file_status(f, call, s, f->romio_code);
    if (request) {
        ep_request_t *r = ep_request_completed(f->ep, &st);
        if (!r)
            return file_raise(f, call, MPI_ERR_NO_MEM, "out of memory for the request");
        *request = r->handle;
    } else if (status) { /* NULL: ignored, as MPI_STATUS_IGNORE */
        entry_status_give(status, &st);
    }
    return MPI_SUCCESS;
}

static int blocking(const char *call, MPI_File fh, int how, MPI_Offset offset, const void *buf, int count,
                    MPI_Datatype type, MPI_Status *status)
{
    return data_access(call, fh, how, offset, buf, count, type, status, NULL);
}

static int nonblocking(const char *call, MPI_File fh, int how, MPI_Offset offset, const void *buf, int count,
                       MPI_Datatype type, MPI_Request *request)
{
    if (!request) {
        ep_file_t *f = ep_file_get(fh);
        return file_raise(f, call, MPI_ERR_REQUEST, "the request pointer is NULL");
    }
    return data_access(call, fh, how, offset, buf, count, type, NULL, request);
}

/* The direction of a transfer, or'ed with its EP_FILE_ positioning bits in
 * the bodies' calls that maint/dispatch.txt names (R | EP_FILE_AT, ...). */
#define R EP_FILE_READ
#define W 0

/* ---- split collectives: _begin does the transfer, _end reports it ------------------------------- */

static int split_begin(const char *call, MPI_File fh, int how, MPI_Offset offset, const void *buf, int count,
                       MPI_Datatype type)
{
    ep_file_t *f;
    int rc;
    if ((rc = file_get(call, fh, &f)))
        return rc;
    if (f->split)
        return file_raise(f, call, MPI_ERR_OTHER, "a split collective begun on the file has not ended");
    rc = data_access(call, fh, how, offset, buf, count, type, &f->split_status, NULL);
    f->split = how; /* begun, even when it failed: _end ends it (how is never 0) */
    f->split_buf = buf;
    f->split_rc = rc;
    return rc;
}

static int split_end(const char *call, MPI_File fh, int how, const void *buf, MPI_Status *status)
{
    ep_file_t *f;
    int rc;
    if ((rc = file_get(call, fh, &f)))
        return rc;
    if (f->split != how)
        return file_raise(f, call, MPI_ERR_OTHER, "no matching split collective was begun on the file");
    if (buf != f->split_buf)
        return file_raise(f, call, MPI_ERR_BUFFER, "the buffer is not the one given to the _begin call");
    f->split = 0;
    if (status)
        entry_status_give(status, &f->split_status);
    return f->split_rc;
}

/* The entry points whose dispatch is data (maint/dispatch.txt). */
#include "file.entry.gen.inc"
