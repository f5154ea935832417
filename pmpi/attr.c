/* Attributes: the entry points of communicator and window attributes and
 * keyvals.  Keyvals are MPICH's (the create calls pass through, and record
 * the callbacks for endpoint objects, src/core/attr.h); on classic handles every
 * call goes to PMPI. */
#include "core/attr.h"
#include "entry.h"
#include "rma/win.h"

/* An endpoint object as the attribute calls see it: its attributes, the
 * kind of keyval it takes, and the handler its errors go to. */
typedef struct attr_obj {
    ep_attr_host_t h;
    ep_keyval_kind_t kind;
    MPI_Errhandler eh;
} attr_obj_t;

static attr_obj_t comm_obj(ep_endpoint_t *ep) { return (attr_obj_t){ep_attr_of(ep), EP_KEYVAL_COMM, ep->errhandler}; }

static attr_obj_t win_obj(ep_win_ep_t *we) { return (attr_obj_t){ep_win_attrs(we), EP_KEYVAL_WIN, we->errhandler}; }

#define raise_obj(o, call, cls, ...) entry_raise_on((o).eh, (o).h.handle, call, cls, __VA_ARGS__)

static int check_keyval(attr_obj_t o, const char *call, int keyval)
{
    if (ep_keyval_known(keyval, o.kind))
        return MPI_SUCCESS;
    return raise_obj(o, call, MPI_ERR_KEYVAL, "invalid keyval %d (not made by MPI_%s_create_keyval)", keyval,
                     o.kind == EP_KEYVAL_WIN ? "Win" : "Comm");
}

/* predefined: keyval is one of the object's predefined attributes. */
static int set_attr(attr_obj_t o, const char *call, int keyval, void *val, int predefined)
{
    int rc;
    if (predefined)
        return raise_obj(o, call, MPI_ERR_KEYVAL, "keyval %d is predefined and cannot be set", keyval);
    if ((rc = check_keyval(o, call, keyval)))
        return rc;
    if ((rc = ep_attr_set(o.h, keyval, val)) != MPI_SUCCESS)
        return raise_obj(o, call, MPI_ERR_OTHER, "the delete callback of the old value failed with error %d", rc);
    return MPI_SUCCESS;
}

static int check_outputs(attr_obj_t o, const char *call, const void *val, const int *flag)
{
    if (val && flag)
        return MPI_SUCCESS;
    return raise_obj(o, call, MPI_ERR_ARG, "%s pointer is NULL", val ? "flag" : "attribute_val");
}

static int get_attr(attr_obj_t o, const char *call, int keyval, void *val, int *flag)
{
    int rc = check_keyval(o, call, keyval);
    return rc ? rc : ep_attr_get(o.h, keyval, (void **)val, flag);
}

static int delete_attr(attr_obj_t o, const char *call, int keyval, int predefined)
{
    int rc;
    if (predefined)
        return raise_obj(o, call, MPI_ERR_KEYVAL, "keyval %d is predefined and cannot be deleted", keyval);
    if ((rc = check_keyval(o, call, keyval)))
        return rc;
    rc = ep_attr_delete(o.h, keyval);
    if (rc == MPI_ERR_KEYVAL)
        return MPI_SUCCESS; /* nothing was set: nothing to delete */
    if (rc != MPI_SUCCESS)
        return raise_obj(o, call, MPI_ERR_OTHER, "the delete callback failed with error %d", rc);
    return MPI_SUCCESS;
}

/* ---- communicators ------------------------------------------------------- */

static int comm_predefined(int keyval)
{
    return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO || keyval == MPI_WTIME_IS_GLOBAL ||
           keyval == MPI_UNIVERSE_SIZE || keyval == MPI_APPNUM || keyval == MPI_LASTUSEDCODE;
}

ENTRY_API int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    ep_endpoint_t *ep;
    int rc;
    ENTRY_RESOLVE("MPI_Comm_get_attr", comm, ep, PMPI_Comm_get_attr(comm, keyval, attribute_val, flag));
    if ((rc = check_outputs(comm_obj(ep), "MPI_Comm_get_attr", attribute_val, flag)))
        return rc;
    if (comm_predefined(keyval))
        /* Properties of the job, the same for every rank: MPICH's values. */
        return PMPI_Comm_get_attr(MPI_COMM_WORLD, keyval, attribute_val, flag);
    return get_attr(comm_obj(ep), "MPI_Comm_get_attr", keyval, attribute_val, flag);
}

ENTRY_API int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                                     MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                                     void *extra_state)
{
    int rc = PMPI_Comm_create_keyval(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state);
    if (rc == MPI_SUCCESS)
        ep_keyval_record(*comm_keyval, EP_KEYVAL_COMM, comm_copy_attr_fn, comm_delete_attr_fn, extra_state, 0);
    return rc;
}

/* The MPI-1 names: the same callbacks with other parameter types. */
ENTRY_API int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                                void *extra_state)
{
    int rc = PMPI_Keyval_create(copy_fn, delete_fn, keyval, extra_state);
    if (rc == MPI_SUCCESS)
        ep_keyval_record(*keyval, EP_KEYVAL_COMM, (MPI_Comm_copy_attr_function *)copy_fn,
                         (MPI_Comm_delete_attr_function *)delete_fn, extra_state, 0);
    return rc;
}

static int comm_set(const char *call, MPI_Comm comm, int keyval, void *val)
{
    ep_endpoint_t *ep;
    int rc = entry_endpoint(call, comm, &ep);
    return rc ? rc : set_attr(comm_obj(ep), call, keyval, val, comm_predefined(keyval));
}

static int comm_delete(const char *call, MPI_Comm comm, int keyval)
{
    ep_endpoint_t *ep;
    int rc = entry_endpoint(call, comm, &ep);
    return rc ? rc : delete_attr(comm_obj(ep), call, keyval, comm_predefined(keyval));
}

/* ---- windows --------------------------------------------------------------- */

/* The value of a predefined window attribute (C: a pointer to it, or for
 * MPI_WIN_BASE the base itself), or NULL for other keyvals. */
static void *win_predefined(ep_win_ep_t *we, int keyval, int *found)
{
    *found = 1;
    switch (keyval) {
    case MPI_WIN_BASE:
        return we->base;
    case MPI_WIN_SIZE:
        return &we->size;
    case MPI_WIN_DISP_UNIT:
        return &we->disp_unit;
    case MPI_WIN_CREATE_FLAVOR:
        return &we->flavor_attr;
    case MPI_WIN_MODEL:
        return &we->model_attr;
    }
    *found = 0;
    return NULL;
}

static int win_is_predefined(ep_win_ep_t *we, int keyval)
{
    int found;
    win_predefined(we, keyval, &found);
    return found;
}

ENTRY_API int MPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    static const char call[] = "MPI_Win_get_attr";
    ep_win_ep_t *we;
    int rc, predefined;
    if (!ep_win_handle_is_ep(win))
        return PMPI_Win_get_attr(win, keyval, attribute_val, flag);
    if ((rc = entry_win(call, win, &we)) || (rc = check_outputs(win_obj(we), call, attribute_val, flag)))
        return rc;
    void *v = win_predefined(we, keyval, &predefined);
    if (!predefined)
        return get_attr(win_obj(we), call, keyval, attribute_val, flag);
    *(void **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    static const char call[] = "MPI_Win_set_attr";
    ep_win_ep_t *we;
    int rc;
    if (!ep_win_handle_is_ep(win))
        return PMPI_Win_set_attr(win, win_keyval, attribute_val);
    if ((rc = entry_win(call, win, &we)))
        return rc;
    return set_attr(win_obj(we), call, win_keyval, attribute_val, win_is_predefined(we, win_keyval));
}

ENTRY_API int MPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    static const char call[] = "MPI_Win_delete_attr";
    ep_win_ep_t *we;
    int rc;
    if (!ep_win_handle_is_ep(win))
        return PMPI_Win_delete_attr(win, win_keyval);
    if ((rc = entry_win(call, win, &we)))
        return rc;
    return delete_attr(win_obj(we), call, win_keyval, win_is_predefined(we, win_keyval));
}

/* Windows are never duplicated: the copy callback is never called. */
ENTRY_API int MPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                                    MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                                    void *extra_state)
{
    int rc = PMPI_Win_create_keyval(win_copy_attr_fn, win_delete_attr_fn, win_keyval, extra_state);
    if (rc == MPI_SUCCESS)
        /* The table keeps a communicator's callback type; a window's is called
         * with the window's handle (ep_attr_host_t), which has the same
         * representation in every MPI. */
        ep_keyval_record(*win_keyval, EP_KEYVAL_WIN, NULL,
                         (MPI_Comm_delete_attr_function *)(void (*)(void))win_delete_attr_fn, extra_state, 0);
    return rc;
}

/* ---- freeing keyvals -------------------------------------------------------
 * MPI lets attributes outlive their keyval's free, and MPICH keeps a keyval
 * alive while attributes it knows of hold it; those of endpoints are
 * epmpi's, so the free goes through the engine (ep_keyval_free). */

static int free_keyval(const char *call, int *keyval, ep_keyval_kind_t kind)
{
    if (!keyval)
        return entry_raise(NULL, call, MPI_ERR_ARG, "keyval pointer is NULL");
    return ep_keyval_free(keyval, kind);
}

ENTRY_API int MPI_Comm_free_keyval(int *comm_keyval)
{
    return free_keyval("MPI_Comm_free_keyval", comm_keyval, EP_KEYVAL_COMM);
}

/* The MPI-1 name. */
ENTRY_API int MPI_Keyval_free(int *keyval) { return free_keyval("MPI_Keyval_free", keyval, EP_KEYVAL_COMM); }

ENTRY_API int MPI_Win_free_keyval(int *win_keyval)
{
    return free_keyval("MPI_Win_free_keyval", win_keyval, EP_KEYVAL_WIN);
}

/* The entry points whose dispatch is data (maint/dispatch.txt). */
#include "attr.entry.gen.inc"
