#include "datatype.h"

#include "handle.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

ep_status_t ep_dt_check(MPI_Datatype t)
{
    if (ep_datatype_builtin_size(t) >= 0)
        return t == MPI_DATATYPE_NULL ? EP_ERR_TYPE : EP_OK;
    if (t == MPI_DATATYPE_NULL || ep_handle_is_ep((int)t))
        return EP_ERR_TYPE;
    if (!ep_handle_is_mpich((int)t, EP_HTYPE_DATATYPE))
        return EP_ERR_TYPE;
    int sz;
    if (PMPI_Type_size(t, &sz) != MPI_SUCCESS)
        return EP_ERR_TYPE;
    return EP_OK;
}

/* 1 when every element of t is one gap-free block laid out in type-map
 * order, so memcpy moves it.  Equal size and true extent is not enough: a
 * type map may list its pieces out of memory order.  Known from how the
 * type was built: builtin types, and contiguous / duplicated types of them. */
static int type_is_contiguous(MPI_Datatype t, MPI_Count size, MPI_Aint ext, MPI_Aint text)
{
    int ni, na, nd, comb;
    if (ep_datatype_builtin_size(t) >= 0)
        return 1;
    if (size != text || size != ext || PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return 0;
    if (comb == MPI_COMBINER_NAMED)
        return 1;
    if ((comb != MPI_COMBINER_CONTIGUOUS && comb != MPI_COMBINER_DUP) || ni > 1 || na > 0 || nd != 1)
        return 0;
    int ints[1];
    MPI_Aint addrs[1];
    MPI_Datatype old;
    if (PMPI_Type_get_contents(t, ni, na, nd, ints, addrs, &old) != MPI_SUCCESS)
        return 0;
    MPI_Count osz;
    MPI_Aint olb, oext, otlb, otext;
    int contig = PMPI_Type_size_x(old, &osz) == MPI_SUCCESS && PMPI_Type_get_extent(old, &olb, &oext) == MPI_SUCCESS &&
                 PMPI_Type_get_true_extent(old, &otlb, &otext) == MPI_SUCCESS &&
                 type_is_contiguous(old, osz, oext, otext);
    int oni, ona, ond, ocomb;
    if (PMPI_Type_get_envelope(old, &oni, &ona, &ond, &ocomb) == MPI_SUCCESS && ocomb != MPI_COMBINER_NAMED)
        PMPI_Type_free(&old);
    return contig;
}

/* What takes MPICH several calls to learn about a derived datatype
 * (its extents, and whether it is contiguous: its envelope and contents,
 * recursively) is learnt once and kept on the datatype itself, as an
 * attribute of a private keyval.  MPICH deletes the attribute with the
 * type, so a handle it reuses never finds a stale one, even after a free
 * that bypasses epmpi (MPICH's Fortran bindings call PMPI_Type_free for
 * the types they make for array sections).  The value packs bit 0 (set),
 * bit 1 (one element is contiguous), bit 2 (several elements are) and the
 * true lower bound above them.  Without it every message with a derived
 * type cost some ten MPICH calls on each side. */
#define LAYOUT_SET 1u
#define LAYOUT_CONTIG_ONE 2u
#define LAYOUT_CONTIG_MANY 4u
#define LAYOUT_LB_SHIFT 3

static int layout_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t layout_keyval_once = PTHREAD_ONCE_INIT;

static void layout_keyval_make(void)
{
    int k;
    if (PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &k, NULL) == MPI_SUCCESS)
        layout_keyval = k;
}

void ep_dt_finalize(void)
{
    if (layout_keyval != MPI_KEYVAL_INVALID)
        PMPI_Type_free_keyval(&layout_keyval);
}

/* The cached value for t, or 0. */
static uint64_t layout_cached(MPI_Datatype t)
{
    void *v = NULL;
    int flag = 0;
    pthread_once(&layout_keyval_once, layout_keyval_make);
    if (layout_keyval == MPI_KEYVAL_INVALID || PMPI_Type_get_attr(t, layout_keyval, &v, &flag) != MPI_SUCCESS ||
        !flag)
        return 0;
    return (uint64_t)(uintptr_t)v;
}

static uint64_t layout_learn(MPI_Datatype t, MPI_Count sz)
{
    MPI_Aint lb, ext, tlb, text;
    if (PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS || PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS)
        return 0;
    uint64_t v = LAYOUT_SET | ((uint64_t)tlb << LAYOUT_LB_SHIFT);
    if (sz == text && type_is_contiguous(t, sz, sz, text))
        v |= LAYOUT_CONTIG_ONE;
    if (type_is_contiguous(t, sz, ext, text))
        v |= LAYOUT_CONTIG_MANY;
    /* Kept only when the lower bound survives the packing. */
    if (layout_keyval != MPI_KEYVAL_INVALID && ((int64_t)v >> LAYOUT_LB_SHIFT) == (int64_t)tlb)
        PMPI_Type_set_attr(t, layout_keyval, (void *)(uintptr_t)v);
    return v;
}

ep_status_t ep_dt_layout_derived(MPI_Datatype t, int count, ep_dt_layout_t *out)
{
    MPI_Count sz;
    if (PMPI_Type_size_x(t, &sz) != MPI_SUCCESS)
        return EP_ERR_TYPE;
    uint64_t v = layout_cached(t);
    if (!v && !(v = layout_learn(t, sz)))
        return EP_ERR_TYPE;
    out->type_size = sz;
    out->bytes = (int64_t)sz * count;
    out->contig = (v & (count <= 1 ? LAYOUT_CONTIG_ONE : LAYOUT_CONTIG_MANY)) != 0;
    out->offset = (MPI_Aint)((int64_t)v >> LAYOUT_LB_SHIFT);
    return EP_OK;
}

/* MPICH's pack and unpack refuse a NULL buffer, which is MPI_BOTTOM with a
 * type of absolute addresses: move the origin to the type's true lower
 * bound, which is a real address then.  Returns the type to use (to free
 * with PMPI_Type_free when it differs from t) and adjusts *buf. */
static MPI_Datatype bottom_shift(const void **buf, MPI_Datatype t, const ep_dt_layout_t *lay)
{
    MPI_Datatype nt;
    int one = 1;
    MPI_Aint disp = -lay->offset;
    if (*buf != NULL || PMPI_Type_create_hindexed(1, &one, &disp, t, &nt) != MPI_SUCCESS)
        return t;
    if (PMPI_Type_commit(&nt) != MPI_SUCCESS) {
        PMPI_Type_free(&nt);
        return t;
    }
    *buf = (const char *)NULL + lay->offset;
    return nt;
}

ep_status_t ep_dt_pack(const void *buf, int count, MPI_Datatype t, const ep_dt_layout_t *lay, void *out)
{
    if (lay->bytes == 0)
        return EP_OK;
    if (lay->contig) {
        memcpy(out, (const char *)buf + lay->offset, (size_t)lay->bytes);
        return EP_OK;
    }
    if (lay->bytes > INT32_MAX)
        return EP_ERR_COUNT;
    MPI_Datatype pt = bottom_shift(&buf, t, lay);
    int ipos = 0;
    int rc = PMPI_Pack(buf, count, pt, out, (int)lay->bytes, &ipos, MPI_COMM_SELF);
    if (pt != t)
        PMPI_Type_free(&pt);
    return rc == MPI_SUCCESS ? EP_OK : EP_ERR_TYPE;
}

ep_status_t ep_dt_unpack(const void *in, int64_t bytes, void *buf, int count, MPI_Datatype t,
                         const ep_dt_layout_t *lay)
{
    if (bytes > lay->bytes)
        bytes = lay->bytes;
    if (bytes <= 0)
        return EP_OK;
    if (lay->contig) {
        memcpy((char *)buf + lay->offset, in, (size_t)bytes);
        return EP_OK;
    }
    if (bytes > INT32_MAX)
        return EP_ERR_COUNT;
    /* With the full count MPICH stores a trailing partial element too. */
    const void *cbuf = buf;
    MPI_Datatype ut = bottom_shift(&cbuf, t, lay);
    int ipos = 0;
    int rc = PMPI_Unpack(in, (int)bytes, &ipos, (void *)cbuf, count, ut, MPI_COMM_SELF);
    if (ut != t)
        PMPI_Type_free(&ut);
    return rc == MPI_SUCCESS ? EP_OK : EP_ERR_TYPE;
}

ep_status_t ep_dt_copy(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                       MPI_Datatype rt, int64_t *sent)
{
    ep_dt_layout_t sl, rl;
    ep_status_t rc;
    if ((rc = ep_dt_layout(st, scount, &sl)) || (rc = ep_dt_layout(rt, rcount, &rl)))
        return rc;
    *sent = sl.bytes;
    return ep_dt_copy_laid(sbuf, scount, st, &sl, rbuf, rcount, rt, &rl);
}

ep_status_t ep_dt_copy_laid(const void *sbuf, int scount, MPI_Datatype st, const ep_dt_layout_t *sl, void *rbuf,
                            int rcount, MPI_Datatype rt, const ep_dt_layout_t *rl)
{
    ep_status_t rc;
    int64_t n = sl->bytes < rl->bytes ? sl->bytes : rl->bytes;
    if (n == 0)
        return EP_OK;
    if (sl->contig && rl->contig) {
        memcpy((char *)rbuf + rl->offset, (const char *)sbuf + sl->offset, (size_t)n);
        return EP_OK;
    }
    if (sl->contig)
        return ep_dt_unpack((const char *)sbuf + sl->offset, n, rbuf, rcount, rt, rl);
    void *tmp = malloc((size_t)sl->bytes);
    if (!tmp)
        return EP_ERR_NO_MEM;
    rc = ep_dt_pack(sbuf, scount, st, sl, tmp);
    if (!rc)
        rc = ep_dt_unpack(tmp, n, rbuf, rcount, rt, rl);
    free(tmp);
    return rc;
}

/* ---- keeping datatypes and operations alive --------------------------------
 * A table of the handles held, with their hold counts; predefined handles
 * (MPICH's builtin kind) are never freed and never enter it. */

typedef struct held {
    int handle;
    int count;
    int freed; /* the program freed it: free it with the last release */
    int is_op;
} held_t;

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static held_t *held;
static int nheld, held_cap;

/* Handles never freed: predefined, null, unset. */
static int untracked(int h)
{
    return h == 0 || ep_handle_is_builtin(h) || h == (int)MPI_DATATYPE_NULL || h == (int)MPI_OP_NULL;
}

static held_t *held_find(int h)
{
    for (int i = 0; i < nheld; i++)
        if (held[i].handle == h)
            return &held[i];
    return NULL;
}

static void hold(int h, int is_op)
{
    if (untracked(h))
        return;
    pthread_mutex_lock(&held_lock);
    held_t *e = held_find(h);
    if (!e && nheld == held_cap) {
        int cap = held_cap ? 2 * held_cap : 16;
        held_t *n = realloc(held, sizeof *held * (size_t)cap);
        if (n) {
            held = n;
            held_cap = cap;
        }
    }
    if (!e && nheld < held_cap) {
        e = &held[nheld++];
        *e = (held_t){h, 0, 0, is_op};
    }
    if (e) /* out of memory: the handle stays unheld, as before this table */
        e->count++;
    pthread_mutex_unlock(&held_lock);
}

static void release(int h)
{
    int free_it = 0, is_op = 0;
    if (untracked(h))
        return;
    pthread_mutex_lock(&held_lock);
    held_t *e = held_find(h);
    if (e && --e->count == 0) {
        free_it = e->freed;
        is_op = e->is_op;
        *e = held[--nheld];
    }
    pthread_mutex_unlock(&held_lock);
    if (free_it) {
        if (is_op) {
            MPI_Op op = (MPI_Op)h;
            PMPI_Op_free(&op);
        } else {
            MPI_Datatype t = (MPI_Datatype)h;
            PMPI_Type_free(&t);
        }
    }
}

void ep_type_hold(MPI_Datatype t) { hold((int)t, 0); }
void ep_type_release(MPI_Datatype t) { release((int)t); }
void ep_op_hold(MPI_Op op) { hold((int)op, 1); }
void ep_op_release(MPI_Op op) { release((int)op); }

int ep_handle_free_deferred(int h)
{
    pthread_mutex_lock(&held_lock);
    held_t *e = held_find(h);
    int r = !e ? 0 : e->freed ? -1 : 1;
    if (e)
        e->freed = 1;
    pthread_mutex_unlock(&held_lock);
    return r;
}
