/* Fortran entry points written by hand (maint/fortran_implemented.txt),
 * for both MPIs unless marked, and the helpers of the generated mpi_f08
 * ones (fortran.gen.c).  Conventions: fortran.h.  F77 names are the ones
 * gfortran makes (lower case, one trailing underscore), for mpif.h and
 * `use mpi` (and Open MPI's mpi_f08, which calls them); MPICH's mpi_f08
 * ones are <name>_f08_.  Handles go through MPI_X_f2c / MPI_X_c2f: casts
 * on MPICH, epmpi's own functions on Open MPI (fortran_ompi.c). */
#include "fortran.h"
#include "core/attr.h"

#include <stdlib.h>
#include <string.h>

/* ---- helpers of the generated entry points -------------------------------- */

void entry_f_indices(int *indices, int n)
{
    if (n == MPI_UNDEFINED)
        return;
    for (int i = 0; i < n; i++)
        if (indices[i] != MPI_UNDEFINED)
            indices[i]++;
}

/* mpi_f08's MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are arrays of its own
 * module (absent when the program does not use mpi_f08). */
extern int __mpi_f08_link_constants_MOD_mpi_unweighted __attribute__((weak));
extern int __mpi_f08_link_constants_MOD_mpi_weights_empty __attribute__((weak));

int *entry_f08_weights(const int *w)
{
    if (w && w == &__mpi_f08_link_constants_MOD_mpi_unweighted)
        return MPI_UNWEIGHTED;
    if (w && w == &__mpi_f08_link_constants_MOD_mpi_weights_empty)
        return MPI_WEIGHTS_EMPTY;
    return (int *)w;
}

#if !defined(OPEN_MPI)
/* MPICH's mpi_f08 glue: the addresses its module gives MPI_IN_PLACE,
 * MPI_BOTTOM, MPI_STATUS(ES)_IGNORE.  MPICH 4.0 defines them in libmpich,
 * 4.2 in libmpichfort (and no longer declares the first two in mpi.h), so
 * they are weak here: found when a Fortran program has loaded them, null in
 * a C program (maint/gen_entries.py checks at build time that the installed
 * MPICH exports them). */
extern int MPIR_F08_MPI_IN_PLACE;
extern int MPIR_F08_MPI_BOTTOM;
#pragma weak MPIR_F08_MPI_IN_PLACE
#pragma weak MPIR_F08_MPI_BOTTOM
#pragma weak MPI_F08_STATUS_IGNORE
#pragma weak MPI_F08_STATUSES_IGNORE

MPI_Status *entry_f08_status(MPI_Status *status)
{
    if (&MPI_F08_STATUS_IGNORE && (void *)status == (void *)MPI_F08_STATUS_IGNORE)
        return MPI_STATUS_IGNORE;
    return status;
}

MPI_Status *entry_f08_statuses(MPI_Status *statuses)
{
    if (&MPI_F08_STATUSES_IGNORE && (void *)statuses == (void *)MPI_F08_STATUSES_IGNORE)
        return MPI_STATUSES_IGNORE;
    return statuses;
}

#endif

char *entry_f_string_in(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

void entry_f_string_out(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (n > len)
        n = len;
    memcpy(dst, src, n);
    memset(dst + n, ' ', len - n);
}

int entry_f_no_memory(const char *call) { return entry_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory"); }

#if !defined(OPEN_MPI)
/* Whether the elements a descriptor describes are one block: each
 * dimension's byte stride is the size of the dimensions before it.  An
 * assumed-size last dimension (no upper bound) counts by its stride. */
static int gfc_contiguous(const entry_gfc_array_t *a)
{
    ptrdiff_t block = (ptrdiff_t)a->dtype.elem_len;
    for (int d = 0; d < a->dtype.rank; d++) {
        ptrdiff_t extent = a->dim[d].ubound - a->dim[d].lbound + 1;
        if (extent == 0)
            return 1;
        if (extent != 1 && a->dim[d].stride * a->span != block)
            return 0;
        block *= extent;
    }
    return 1;
}

int entry_f08_buffer(const char *call, MPI_Comm comm, const entry_gfc_array_t *buf, void **out)
{
    ep_endpoint_t *ep = NULL;
    int rc;
    if (&MPIR_F08_MPI_IN_PLACE && buf->base_addr == (void *)&MPIR_F08_MPI_IN_PLACE) {
        *out = MPI_IN_PLACE;
        return MPI_SUCCESS;
    }
    if (&MPIR_F08_MPI_BOTTOM && buf->base_addr == (void *)&MPIR_F08_MPI_BOTTOM) {
        *out = MPI_BOTTOM;
        return MPI_SUCCESS;
    }
    if (gfc_contiguous(buf)) {
        *out = buf->base_addr;
        return MPI_SUCCESS;
    }
    if (entry_comm_is_ep(comm) && (rc = entry_endpoint(call, comm, &ep)))
        return rc;
    return entry_raise(ep, call, MPI_ERR_BUFFER,
                       "the buffer is a non-contiguous array section of rank %d, which non-blocking calls on "
                       "endpoints do not take from mpi_f08: pass a contiguous array (or describe the layout with "
                       "a derived datatype)",
                       (int)buf->dtype.rank);
}

#endif

/* ---- MPI_Comm_create_endpoints --------------------------------------------- */

typedef int create_endpoints_fn(MPI_Comm, int, MPI_Info, MPI_Comm[]);

/* The new handles arrive as C's and leave as Fortran's (the same on MPICH). */
static int create_endpoints(create_endpoints_fn *create, const char *call, const MPI_Fint *parent, const int *my_num_ep,
                            const MPI_Fint *info, MPI_Fint *out)
{
    int n = *my_num_ep > 0 ? *my_num_ep : 1;
    MPI_Comm *c = malloc((size_t)n * sizeof *c);
    if (!c)
        return entry_f_no_memory(call);
    int rc = create(MPI_Comm_f2c(*parent), *my_num_ep, MPI_Info_f2c(*info), c);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < *my_num_ep; i++)
            out[i] = MPI_Comm_c2f(c[i]);
    free(c);
    return rc;
}

ENTRY_API void mpi_comm_create_endpoints_(const MPI_Fint *parent, const int *my_num_ep, const MPI_Fint *info,
                                          MPI_Fint *out_comm_hdls, MPI_Fint *ierror)
{
    entry_f_return(ierror, create_endpoints(MPI_Comm_create_endpoints, "MPI_Comm_create_endpoints", parent, my_num_ep,
                                            info, out_comm_hdls));
}

ENTRY_API void mpix_comm_create_endpoints_(const MPI_Fint *parent, const int *my_num_ep, const MPI_Fint *info,
                                           MPI_Fint *out_comm_hdls, MPI_Fint *ierror)
{
    entry_f_return(ierror, create_endpoints(MPIX_Comm_create_endpoints, "MPIX_Comm_create_endpoints", parent, my_num_ep,
                                            info, out_comm_hdls));
}

/* mpi_f08 passes the same arguments (ierror optional); its
 * MPIX_Comm_create_endpoints is this one too (include/epmpi_f08.f90). */
ENTRY_API void mpi_comm_create_endpoints_f08_(const MPI_Fint *parent, const int *my_num_ep, const MPI_Fint *info,
                                              MPI_Fint *out_comm_hdls, MPI_Fint *ierror)
    __attribute__((alias("mpi_comm_create_endpoints_")));

/* ---- MPI_Init, MPI_Init_thread, MPI_Finalize (MPICH's mpi_f08; the F77 ones
 * call the C ones) ------------------------------------------------------------ */
#if !defined(OPEN_MPI)

ENTRY_API void mpi_init_f08_(MPI_Fint *ierror) { entry_f_return(ierror, MPI_Init(NULL, NULL)); }

ENTRY_API void mpi_finalize_f08_(MPI_Fint *ierror) { entry_f_return(ierror, MPI_Finalize()); }

#if HAVE_DECL_MPI_BUFFER_FLUSH
ENTRY_API void mpi_buffer_flush_f08_(MPI_Fint *ierror) { entry_f_return(ierror, MPI_Buffer_flush()); }
#endif

ENTRY_API void mpi_init_thread_f08_(const int *required, int *provided, MPI_Fint *ierror)
{
    entry_f_return(ierror, MPI_Init_thread(NULL, NULL, *required, provided));
}
#endif

/* ---- attributes ---------------------------------------------------------------
 * Fortran attribute values are integers (INTEGER(MPI_ADDRESS_KIND); INTEGER
 * for the MPI-1 MPI_ATTR_GET / MPI_ATTR_PUT).  On an endpoint communicator or
 * window epmpi keeps the integer as the C attribute's pointer value; the
 * predefined attributes are C pointers to their value, read through (but
 * MPI_WIN_BASE is the address itself), and may have other keyvals in
 * Fortran (MPICH's: the C keyval + 1; Open MPI's: the C keyval).  The MPI's
 * own bindings do the same on classic handles with its internal calls (past
 * MPI_), so classic handles go to them.  Open MPI's mpi_f08 reaches these
 * routines through its mpif.h ones (fortran_ompi.c). */

#if defined(OPEN_MPI)
#define ENTRY_F_KEYVAL_OFFSET 0
#else
#define ENTRY_F_KEYVAL_OFFSET 1
#endif

static int predefined_keyval(int keyval)
{
    return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO || keyval == MPI_WTIME_IS_GLOBAL ||
           keyval == MPI_UNIVERSE_SIZE || keyval == MPI_APPNUM || keyval == MPI_LASTUSEDCODE ||
           keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
           keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL;
}

/* A Fortran keyval as C knows it. */
static int c_keyval(int keyval)
{
    return predefined_keyval(keyval - ENTRY_F_KEYVAL_OFFSET) ? keyval - ENTRY_F_KEYVAL_OFFSET : keyval;
}

/* The Fortran integer of C attribute value p of keyval. */
static MPI_Aint f_value(int keyval, const void *p)
{
    if (keyval == MPI_WIN_SIZE)
        return *(const MPI_Aint *)p;
    if (keyval == MPI_WIN_BASE || !predefined_keyval(keyval))
        return (MPI_Aint)p;
    return *(const int *)p;
}

/* The C get_attr calls with a Fortran handle. */
static int comm_get_attr(MPI_Fint comm, int keyval, void *val, int *flag)
{
    return MPI_Comm_get_attr(MPI_Comm_f2c(comm), keyval, val, flag);
}

static int win_get_attr(MPI_Fint win, int keyval, void *val, int *flag)
{
    return MPI_Win_get_attr(MPI_Win_f2c(win), keyval, val, flag);
}

static int get_attr(int (*get)(MPI_Fint, int, void *, int *), MPI_Fint handle, int fkeyval, MPI_Aint *val,
                    MPI_Fint *flag)
{
    void *p = NULL;
    int keyval = c_keyval(fkeyval), found = 0, rc = get(handle, keyval, &p, &found);
    if (rc == MPI_SUCCESS) {
        if (found)
            *val = f_value(keyval, p);
        *flag = found ? ENTRY_F_TRUE : ENTRY_F_FALSE;
    }
    return rc;
}

static int f_comm_is_ep(MPI_Fint comm) { return entry_comm_is_ep(MPI_Comm_f2c(comm)); }
static int f_win_is_ep(MPI_Fint win) { return ep_win_handle_is_ep(MPI_Win_f2c(win)); }

/* The MPI's own routines for classic handles: its F77 binding (pmpi_x_),
 * or MPICH's mpi_f08 one (pmpir_x_f08_); the same arguments. */
typedef void f_get_attr_fn(const MPI_Fint *, const MPI_Fint *, MPI_Aint *, MPI_Fint *, MPI_Fint *);
typedef void f_set_attr_fn(const MPI_Fint *, const MPI_Fint *, const MPI_Aint *, MPI_Fint *);

static void comm_get(f_get_attr_fn *classic, const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Aint *val,
                     MPI_Fint *flag, MPI_Fint *ierror)
{
    if (f_comm_is_ep(*comm))
        entry_f_return(ierror, get_attr(comm_get_attr, *comm, *keyval, val, flag));
    else
        classic(comm, keyval, val, flag, ierror);
}

static void comm_set(f_set_attr_fn *classic, const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Aint *val,
                     MPI_Fint *ierror)
{
    if (f_comm_is_ep(*comm))
        entry_f_return(ierror, MPI_Comm_set_attr(MPI_Comm_f2c(*comm), c_keyval(*keyval), (void *)*val));
    else
        classic(comm, keyval, val, ierror);
}

static void win_get(f_get_attr_fn *classic, const MPI_Fint *win, const MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                    MPI_Fint *ierror)
{
    if (f_win_is_ep(*win))
        entry_f_return(ierror, get_attr(win_get_attr, *win, *keyval, val, flag));
    else
        classic(win, keyval, val, flag, ierror);
}

static void win_set(f_set_attr_fn *classic, const MPI_Fint *win, const MPI_Fint *keyval, const MPI_Aint *val,
                    MPI_Fint *ierror)
{
    if (f_win_is_ep(*win))
        entry_f_return(ierror, MPI_Win_set_attr(MPI_Win_f2c(*win), c_keyval(*keyval), (void *)*val));
    else
        classic(win, keyval, val, ierror);
}

extern f_get_attr_fn pmpi_comm_get_attr_ ENTRY_F_WEAK;
extern f_set_attr_fn pmpi_comm_set_attr_ ENTRY_F_WEAK;
extern f_get_attr_fn pmpi_win_get_attr_ ENTRY_F_WEAK;
extern f_set_attr_fn pmpi_win_set_attr_ ENTRY_F_WEAK;
extern void pmpi_attr_get_(const MPI_Fint *, const MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *) ENTRY_F_WEAK;
extern void pmpi_attr_put_(const MPI_Fint *, const MPI_Fint *, const MPI_Fint *, MPI_Fint *) ENTRY_F_WEAK;

ENTRY_API void mpi_comm_get_attr_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                                  MPI_Fint *ierror)
{
    comm_get(pmpi_comm_get_attr_, comm, keyval, val, flag, ierror);
}

ENTRY_API void mpi_comm_set_attr_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Aint *val, MPI_Fint *ierror)
{
    comm_set(pmpi_comm_set_attr_, comm, keyval, val, ierror);
}

ENTRY_API void mpi_win_get_attr_(const MPI_Fint *win, const MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                                 MPI_Fint *ierror)
{
    win_get(pmpi_win_get_attr_, win, keyval, val, flag, ierror);
}

ENTRY_API void mpi_win_set_attr_(const MPI_Fint *win, const MPI_Fint *keyval, const MPI_Aint *val, MPI_Fint *ierror)
{
    win_set(pmpi_win_set_attr_, win, keyval, val, ierror);
}

ENTRY_API void mpi_attr_get_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag,
                             MPI_Fint *ierror)
{
    MPI_Aint v = 0;
    if (!f_comm_is_ep(*comm)) {
        pmpi_attr_get_(comm, keyval, val, flag, ierror);
        return;
    }
    int rc = get_attr(comm_get_attr, *comm, *keyval, &v, flag);
    if (rc == MPI_SUCCESS && *flag)
        *val = (MPI_Fint)v;
    entry_f_return(ierror, rc);
}

ENTRY_API void mpi_attr_put_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Fint *val, MPI_Fint *ierror)
{
    if (f_comm_is_ep(*comm))
        entry_f_return(ierror, MPI_Attr_put(MPI_Comm_f2c(*comm), c_keyval(*keyval), (void *)(MPI_Aint)*val));
    else
        pmpi_attr_put_(comm, keyval, val, ierror);
}

#if !defined(OPEN_MPI)
extern f_get_attr_fn pmpir_comm_get_attr_f08_ ENTRY_F_WEAK;
extern f_set_attr_fn pmpir_comm_set_attr_f08_ ENTRY_F_WEAK;
extern f_get_attr_fn pmpir_win_get_attr_f08_ ENTRY_F_WEAK;
extern f_set_attr_fn pmpir_win_set_attr_f08_ ENTRY_F_WEAK;

ENTRY_API void mpi_comm_get_attr_f08_(const MPI_Fint *comm, const MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                                      MPI_Fint *ierror)
{
    comm_get(pmpir_comm_get_attr_f08_, comm, keyval, val, flag, ierror);
}

ENTRY_API void mpi_comm_set_attr_f08_(const MPI_Fint *comm, const MPI_Fint *keyval, const MPI_Aint *val,
                                      MPI_Fint *ierror)
{
    comm_set(pmpir_comm_set_attr_f08_, comm, keyval, val, ierror);
}

ENTRY_API void mpi_win_get_attr_f08_(const MPI_Fint *win, const MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                                     MPI_Fint *ierror)
{
    win_get(pmpir_win_get_attr_f08_, win, keyval, val, flag, ierror);
}

ENTRY_API void mpi_win_set_attr_f08_(const MPI_Fint *win, const MPI_Fint *keyval, const MPI_Aint *val, MPI_Fint *ierror)
{
    win_set(pmpir_win_set_attr_f08_, win, keyval, val, ierror);
}
#endif

/* ---- keyvals -------------------------------------------------------------------
 * epmpi calls the copy and delete callbacks of endpoint communicators and
 * windows itself, the C way.  A Fortran callback takes every argument by
 * reference, handles as Fortran's and attribute values as integers, so a
 * keyval made from Fortran is recorded with these C proxies, which find the
 * Fortran callbacks in their extra state.  (The MPI's own binding still
 * records the callbacks for classic communicators.) */

/* Fortran callbacks: (comm, keyval, extra_state, attribute_val_in,
 * attribute_val_out, flag, ierror) and (comm, keyval, attribute_val,
 * extra_state, ierror); integers of MPI_ADDRESS_KIND, or default INTEGERs for
 * MPI-1's MPI_KEYVAL_CREATE. */
typedef void entry_f_copy_fn(const MPI_Fint *, const MPI_Fint *, const void *, const void *, void *, MPI_Fint *,
                             MPI_Fint *);
typedef void entry_f_delete_fn(const MPI_Fint *, const MPI_Fint *, const void *, const void *, MPI_Fint *);

typedef struct {
    entry_f_copy_fn *copy;
    entry_f_delete_fn *del;
    MPI_Aint extra; /* the extra_state given at creation */
    int mpi1;       /* values and extra state are default INTEGERs */
    int win;        /* a window's keyval: the handle is an MPI_Win */
} f_keyval_t;

/* The Fortran handle of the object a callback runs for. */
static MPI_Fint f_object(const f_keyval_t *k, MPI_Comm comm)
{
#if defined(OPEN_MPI)
    if (k->win)
        return MPI_Win_c2f((MPI_Win)(void *)comm);
#else
    (void)k;
#endif
    return MPI_Comm_c2f(comm);
}

static int f_copy_proxy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    const f_keyval_t *k = extra;
    MPI_Fint c = f_object(k, comm), kv = keyval, f = ENTRY_F_FALSE, ierr = MPI_SUCCESS;
    MPI_Aint a_extra = k->extra, a_in = (MPI_Aint)in, a_out = 0;
    MPI_Fint i_extra = (MPI_Fint)k->extra, i_in = (MPI_Fint)a_in, i_out = 0;
    if (k->mpi1) {
        k->copy(&c, &kv, &i_extra, &i_in, &i_out, &f, &ierr);
        a_out = i_out;
    } else {
        k->copy(&c, &kv, &a_extra, &a_in, &a_out, &f, &ierr);
    }
    *flag = f != ENTRY_F_FALSE;
    if (ierr == MPI_SUCCESS && *flag)
        *(void **)out = (void *)a_out;
    return ierr;
}

static int f_delete_proxy(MPI_Comm comm, int keyval, void *val, void *extra)
{
    const f_keyval_t *k = extra;
    MPI_Fint c = f_object(k, comm), kv = keyval, ierr = MPI_SUCCESS;
    MPI_Aint a_val = (MPI_Aint)val, a_extra = k->extra;
    MPI_Fint i_val = (MPI_Fint)a_val, i_extra = (MPI_Fint)k->extra;
    if (k->mpi1)
        k->del(&c, &kv, &i_val, &i_extra, &ierr);
    else
        k->del(&c, &kv, &a_val, &a_extra, &ierr);
    return ierr;
}

/* After the MPI made the keyval (rc): records the proxies.  The keyval
 * table owns the record: attributes may outlive their freed keyval. */
static int f_keyval_record(const char *call, int rc, int keyval, ep_keyval_kind_t kind, entry_f_copy_fn *copy,
                           entry_f_delete_fn *del, MPI_Aint extra, int mpi1)
{
    f_keyval_t *k;
    if (rc != MPI_SUCCESS)
        return rc;
    if (!(k = malloc(sizeof *k)))
        return entry_f_no_memory(call);
    *k = (f_keyval_t){copy, del, extra, mpi1, kind == EP_KEYVAL_WIN};
    ep_keyval_record(keyval, kind, kind == EP_KEYVAL_COMM ? f_copy_proxy : NULL, f_delete_proxy, k, 1);
    return MPI_SUCCESS;
}

extern void pmpi_comm_create_keyval_(entry_f_copy_fn *, entry_f_delete_fn *, MPI_Fint *, const MPI_Aint *,
                                     MPI_Fint *) ENTRY_F_WEAK;
extern void pmpi_keyval_create_(entry_f_copy_fn *, entry_f_delete_fn *, MPI_Fint *, const MPI_Fint *,
                                MPI_Fint *) ENTRY_F_WEAK;
extern void pmpi_win_create_keyval_(entry_f_copy_fn *, entry_f_delete_fn *, MPI_Fint *, const MPI_Aint *,
                                    MPI_Fint *) ENTRY_F_WEAK;

ENTRY_API void mpi_comm_create_keyval_(entry_f_copy_fn *copy, entry_f_delete_fn *del, MPI_Fint *keyval,
                                       const MPI_Aint *extra, MPI_Fint *ierror)
{
    MPI_Fint rc = MPI_SUCCESS;
    pmpi_comm_create_keyval_(copy, del, keyval, extra, &rc);
    entry_f_return(ierror,
                   f_keyval_record("MPI_Comm_create_keyval", rc, *keyval, EP_KEYVAL_COMM, copy, del, *extra, 0));
}

ENTRY_API void mpi_keyval_create_(entry_f_copy_fn *copy, entry_f_delete_fn *del, MPI_Fint *keyval,
                                  const MPI_Fint *extra, MPI_Fint *ierror)
{
    MPI_Fint rc = MPI_SUCCESS;
    pmpi_keyval_create_(copy, del, keyval, extra, &rc);
    entry_f_return(ierror, f_keyval_record("MPI_Keyval_create", rc, *keyval, EP_KEYVAL_COMM, copy, del, *extra, 1));
}

ENTRY_API void mpi_win_create_keyval_(entry_f_copy_fn *copy, entry_f_delete_fn *del, MPI_Fint *keyval,
                                      const MPI_Aint *extra, MPI_Fint *ierror)
{
    MPI_Fint rc = MPI_SUCCESS;
    pmpi_win_create_keyval_(copy, del, keyval, extra, &rc);
    entry_f_return(ierror, f_keyval_record("MPI_Win_create_keyval", rc, *keyval, EP_KEYVAL_WIN, copy, del, *extra, 0));
}

#if !defined(OPEN_MPI)
extern void pmpir_comm_create_keyval_f08_(entry_f_copy_fn *, entry_f_delete_fn *, MPI_Fint *, const MPI_Aint *,
                                          MPI_Fint *) ENTRY_F_WEAK;
extern void pmpir_win_create_keyval_f08_(entry_f_copy_fn *, entry_f_delete_fn *, MPI_Fint *, const MPI_Aint *,
                                         MPI_Fint *) ENTRY_F_WEAK;

ENTRY_API void mpi_comm_create_keyval_f08_(entry_f_copy_fn *copy, entry_f_delete_fn *del, MPI_Fint *keyval,
                                           const MPI_Aint *extra, MPI_Fint *ierror)
{
    MPI_Fint rc = MPI_SUCCESS;
    pmpir_comm_create_keyval_f08_(copy, del, keyval, extra, &rc);
    entry_f_return(ierror,
                   f_keyval_record("MPI_Comm_create_keyval", rc, *keyval, EP_KEYVAL_COMM, copy, del, *extra, 0));
}

ENTRY_API void mpi_win_create_keyval_f08_(entry_f_copy_fn *copy, entry_f_delete_fn *del, MPI_Fint *keyval,
                                          const MPI_Aint *extra, MPI_Fint *ierror)
{
    MPI_Fint rc = MPI_SUCCESS;
    pmpir_win_create_keyval_f08_(copy, del, keyval, extra, &rc);
    entry_f_return(ierror, f_keyval_record("MPI_Win_create_keyval", rc, *keyval, EP_KEYVAL_WIN, copy, del, *extra, 0));
}
#endif
