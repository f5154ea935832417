#include "core/datatype.h"
#include "abi/large.h"
#include "core/typemap.h"

#include "abi/handle.h"
#include "base/thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static ep_dt_rec_t *rec_of(MPI_Datatype t, ep_status_t *why);

ep_status_t ep_dt_check(MPI_Datatype t)
{
    if (ep_datatype_builtin_size(t) >= 0)
        return t == MPI_DATATYPE_NULL ? EP_ERR_TYPE : EP_OK;
    if (t == MPI_DATATYPE_NULL || ep_datatype_handle_is_ep(t))
        return EP_ERR_TYPE;
    if (!ep_datatype_maybe_mpi(t))
        return EP_ERR_TYPE;
    ep_status_t why = EP_OK;
    return rec_of(t, &why) ? EP_OK : why;
}

/* ---- what epmpi knows of a derived datatype ---------------------------------
 * What takes MPICH several calls to learn about a derived datatype (its
 * size and extents, and whether it is contiguous: its envelope and
 * contents, recursively) is learnt once, at its first use, into a record
 * that hangs on the datatype itself as an attribute of a private keyval.
 * MPICH deletes the attribute when it destroys the type, so a handle it
 * reuses never finds a stale record, even after a free that bypasses epmpi
 * (MPICH's Fortran bindings call PMPI_Type_free for the types they make
 * for array sections).  The record also counts the operations that hold
 * the type (see datatype.h), in one atomic word, so holding costs no lock.
 *
 * Asking MPICH for the attribute takes its global lock, so each thread
 * also remembers the last few records it used, with the value of a
 * counter that every destruction of a type with a record increments: an
 * entry is good while the counter has not moved, since then no type was
 * destroyed and no handle reused.  A type is learnt under learn_lock, so
 * that it gets one record; the delete callback never takes that lock
 * (it runs under MPICH's), only the leaf lock of the list of records. */
#define REC_FREED 1u /* the program freed it: PMPI_Type_free at the last release */
#define REC_GONE 2u  /* MPICH destroyed the type: free the record at the last release */
#define REC_HOLD 4u  /* one hold */

struct ep_dt_rec {
    MPI_Datatype type;
    MPI_Count size;
    MPI_Aint true_lb;
    int contig_one;                /* one element is a gap-free block */
    int contig_many;               /* so are several, back to back */
    _Atomic unsigned state;        /* holds * REC_HOLD | REC_FREED | REC_GONE */
    struct ep_dt_rec *prev, *next; /* the list MPI_Finalize empties */
};

static int rec_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t rec_keyval_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t learn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static ep_dt_rec_t *recs;
static _Atomic unsigned long rec_epoch;

/* 64 bytes of initial-exec thread-local storage (thread.h). */
#define REC_MEMO 4
typedef struct {
    unsigned long epoch;
    unsigned next;
    MPI_Datatype type[REC_MEMO];
    ep_dt_rec_t *rec[REC_MEMO];
} rec_memo_t;
static __thread rec_memo_t memo EP_TLS;

static void rec_free(ep_dt_rec_t *rec)
{
    pthread_mutex_lock(&list_lock);
    if (rec->prev)
        rec->prev->next = rec->next;
    else
        recs = rec->next;
    if (rec->next)
        rec->next->prev = rec->prev;
    pthread_mutex_unlock(&list_lock);
    free(rec);
}

/* MPICH destroys the type (or MPI_Finalize takes the record off it). */
static int rec_delete(MPI_Datatype t, int keyval, void *val, void *extra)
{
    (void)t, (void)keyval, (void)extra;
    ep_dt_rec_t *rec = val;
    atomic_fetch_add_explicit(&rec_epoch, 1, memory_order_release);
    if (atomic_fetch_or_explicit(&rec->state, REC_GONE, memory_order_acq_rel) < REC_HOLD)
        rec_free(rec);
    return MPI_SUCCESS;
}

static void rec_keyval_make(void)
{
    int k;
    if (PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, rec_delete, &k, NULL) == MPI_SUCCESS)
        rec_keyval = k;
}

/* Takes the records off the types still alive.  A record that some
 * operation still holds (a request the program never completed) stays. */
void ep_dt_finalize(void)
{
    for (;;) {
        pthread_mutex_lock(&list_lock);
        ep_dt_rec_t *rec = recs;
        while (rec && (atomic_load(&rec->state) & REC_GONE))
            rec = rec->next;
        MPI_Datatype t = rec ? rec->type : MPI_DATATYPE_NULL;
        pthread_mutex_unlock(&list_lock);
        if (!rec || PMPI_Type_delete_attr(t, rec_keyval) != MPI_SUCCESS)
            break;
    }
    if (rec_keyval != MPI_KEYVAL_INVALID)
        PMPI_Type_free_keyval(&rec_keyval);
    atomic_fetch_add_explicit(&rec_epoch, 1, memory_order_release);
}

static ep_dt_rec_t *rec_attached(MPI_Datatype t)
{
    void *v = NULL;
    int flag = 0;
    if (PMPI_Type_get_attr(t, rec_keyval, &v, &flag) != MPI_SUCCESS || !flag)
        return NULL;
    return v;
}

static ep_dt_rec_t *rec_learn(MPI_Datatype t, ep_status_t *why)
{
    MPI_Count sz;
    MPI_Aint lb, ext, tlb, text;
    if (PMPI_Type_size_x(t, &sz) != MPI_SUCCESS || PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS)
        return NULL;
    ep_dt_rec_t *rec = calloc(1, sizeof *rec);
    if (!rec) {
        *why = EP_ERR_NO_MEM;
        return NULL;
    }
    rec->type = t;
    rec->size = sz;
    rec->true_lb = tlb;
    rec->contig_one = ep_typemap_contiguous(t, 0);
    rec->contig_many = ep_typemap_contiguous(t, 1);
    if (PMPI_Type_set_attr(t, rec_keyval, rec) != MPI_SUCCESS) {
        free(rec);
        return NULL;
    }
    pthread_mutex_lock(&list_lock);
    rec->next = recs;
    if (recs)
        recs->prev = rec;
    recs = rec;
    pthread_mutex_unlock(&list_lock);
    return rec;
}

/* The record of derived type t, learnt at its first use; NULL when t is
 * not a usable type (*why: EP_ERR_TYPE) or memory ran out (EP_ERR_NO_MEM). */
static ep_dt_rec_t *rec_of(MPI_Datatype t, ep_status_t *why)
{
    unsigned long epoch = atomic_load_explicit(&rec_epoch, memory_order_acquire);
    if (memo.epoch == epoch) {
        for (int i = 0; i < REC_MEMO; i++)
            if (memo.type[i] == t && memo.rec[i])
                return memo.rec[i];
    } else {
        memset(&memo, 0, sizeof memo);
        memo.epoch = epoch;
    }
    *why = EP_ERR_TYPE;
    pthread_once(&rec_keyval_once, rec_keyval_make);
    if (rec_keyval == MPI_KEYVAL_INVALID)
        return NULL;
    ep_dt_rec_t *rec = rec_attached(t);
    if (!rec) {
        pthread_mutex_lock(&learn_lock);
        if (!(rec = rec_attached(t)))
            rec = rec_learn(t, why);
        pthread_mutex_unlock(&learn_lock);
    }
    if (rec) {
        unsigned i = memo.next++ % REC_MEMO;
        memo.type[i] = t;
        memo.rec[i] = rec;
    }
    return rec;
}

/* Handles that can have a record: MPICH datatypes that are not predefined. */
static int rec_kind(MPI_Datatype t)
{
    return ep_datatype_builtin_size(t) < 0 && ep_datatype_maybe_mpi(t) && !ep_datatype_is_predefined(t);
}

ep_status_t ep_dt_layout_derived(MPI_Datatype t, int count, ep_dt_layout_t *out)
{
    if (t == MPI_DATATYPE_NULL && count == 0) { /* a message of nothing (pmpi/entry.c) */
        *out = (ep_dt_layout_t){.contig = 1};
        return EP_OK;
    }
    ep_status_t why;
    ep_dt_rec_t *rec = rec_of(t, &why);
    if (!rec)
        return why;
    out->type_size = rec->size;
    out->bytes = (int64_t)rec->size * count;
    out->contig = count <= 1 ? rec->contig_one : rec->contig_many;
    out->offset = rec->true_lb;
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
    /* The large-count pack: a block may exceed 2 GiB (counts beyond INT_MAX). */
    MPI_Datatype pt = bottom_shift(&buf, t, lay);
    MPI_Count pos = 0;
    int rc = ep_pmpi_pack_c(buf, count, pt, out, lay->bytes, &pos, MPI_COMM_SELF);
    if (pt != t)
        PMPI_Type_free(&pt);
    return rc == MPI_SUCCESS ? EP_OK : EP_ERR_TYPE;
}

ep_status_t ep_dt_unpack(const void *in, int64_t bytes, void *buf, int count, MPI_Datatype t, const ep_dt_layout_t *lay)
{
    if (bytes > lay->bytes)
        bytes = lay->bytes;
    if (bytes <= 0)
        return EP_OK;
    if (lay->contig) {
        memcpy((char *)buf + lay->offset, in, (size_t)bytes);
        return EP_OK;
    }
    /* With the full count MPICH stores a trailing partial element too. */
    const void *cbuf = buf;
    MPI_Datatype ut = bottom_shift(&cbuf, t, lay);
    MPI_Count pos = 0;
    int rc = ep_pmpi_unpack_c(in, bytes, &pos, (void *)cbuf, count, ut, MPI_COMM_SELF);
    if (ut != t)
        PMPI_Type_free(&ut);
    return rc == MPI_SUCCESS ? EP_OK : EP_ERR_TYPE;
}

ep_status_t ep_dt_copy(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                       int64_t *sent)
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

/* ---- keeping datatypes alive ------------------------------------------------
 * A derived datatype's holds are counted in its record (user operations:
 * op.c).  Predefined handles are never freed and are never counted. */

ep_dt_rec_t *ep_dt_hold_rec(MPI_Datatype t)
{
    ep_status_t why;
    ep_dt_rec_t *rec = rec_kind(t) ? rec_of(t, &why) : NULL;
    if (rec)
        atomic_fetch_add_explicit(&rec->state, REC_HOLD, memory_order_relaxed);
    return rec;
}

void ep_dt_release_rec(ep_dt_rec_t *rec)
{
    if (!rec)
        return;
    unsigned s = atomic_fetch_sub_explicit(&rec->state, REC_HOLD, memory_order_acq_rel);
    if (s >= 2 * REC_HOLD)
        return;
    if (s & REC_GONE) {
        rec_free(rec);
    } else if (s & REC_FREED) {
        MPI_Datatype t = rec->type;
        PMPI_Type_free(&t); /* rec_delete frees the record */
    }
}

int ep_dt_free_deferred(MPI_Datatype t)
{
    /* From the list, not from MPICH: a handle freed already gets
     * MPI_Type_free's own error from MPICH. */
    pthread_mutex_lock(&list_lock);
    ep_dt_rec_t *rec = recs;
    while (rec && (rec->type != t || (atomic_load(&rec->state) & REC_GONE)))
        rec = rec->next;
    pthread_mutex_unlock(&list_lock);
    if (!rec)
        return 0;
    unsigned s = atomic_load_explicit(&rec->state, memory_order_acquire);
    do {
        if (s < REC_HOLD)
            return 0;
        if (s & REC_FREED)
            return -1;
    } while (!atomic_compare_exchange_weak_explicit(&rec->state, &s, s | REC_FREED, memory_order_acq_rel,
                                                    memory_order_acquire));
    return 1;
}
