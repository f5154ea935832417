#include "core/attr.h"
#include "base/grow.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct ep_keyval {
    int keyval;
    ep_keyval_kind_t kind;
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
    int owns_extra; /* extra is epmpi's (a Fortran proxy record): freed with the entry */
    int holds;      /* attributes of endpoints and endpoint windows set with it */
    int freed;      /* the program freed it while holds > 0: MPICH's free waits for the last */
} ep_keyval_t;

/* Keyvals are few: a table under a mutex, one entry per keyval number.
 * MPI lets attributes outlive their keyval's free, and MPICH keeps a
 * freed keyval (its callbacks, and its number from being handed out
 * again) while attributes of MPICH's hold it; epmpi's attributes are not
 * MPICH's, so it counts them (holds) and frees a keyval in MPICH only
 * once the last one goes (ep_keyval_free).  A number MPICH hands out again
 * takes over its entry, so a program that makes and frees keyvals in a
 * loop does not grow the table. */
static ep_keyval_t *keyvals;
static int n_keyvals;
static size_t cap_keyvals;
static pthread_mutex_t keyval_lock = PTHREAD_MUTEX_INITIALIZER;

/* One attribute of an endpoint. */
typedef struct ep_attr {
    struct ep_attr *next;
    int keyval;
    void *val;
} ep_attr_t;

void ep_keyval_record(int keyval, ep_keyval_kind_t kind, MPI_Comm_copy_attr_function *copy,
                      MPI_Comm_delete_attr_function *del, void *extra, int owns_extra)
{
    ep_keyval_t k = {keyval, kind, copy, del, extra, owns_extra, 0, 0};
    pthread_mutex_lock(&keyval_lock);
    for (int i = 0; i < n_keyvals; i++)
        if (keyvals[i].keyval == keyval) {
            /* A number MPICH handed out again: the old keyval is gone
             * (ep_keyval_free leaves none behind while attributes hold it). */
            if (keyvals[i].owns_extra)
                free(keyvals[i].extra);
            keyvals[i] = k;
            pthread_mutex_unlock(&keyval_lock);
            return;
        }
    if (!EP_GROW(keyvals, n_keyvals, cap_keyvals, 16)) {
        pthread_mutex_unlock(&keyval_lock);
        if (owns_extra)
            free(extra);
        return;
    }
    keyvals[n_keyvals++] = k;
    pthread_mutex_unlock(&keyval_lock);
}

void ep_keyval_finalize(void)
{
    pthread_mutex_lock(&keyval_lock);
    for (int i = 0; i < n_keyvals; i++)
        if (keyvals[i].owns_extra)
            free(keyvals[i].extra);
    free(keyvals);
    keyvals = NULL;
    n_keyvals = cap_keyvals = 0;
    pthread_mutex_unlock(&keyval_lock);
}

static int keyval_find(int keyval, ep_keyval_t *out)
{
    int found = 0;
    pthread_mutex_lock(&keyval_lock);
    for (int i = 0; i < n_keyvals && !found; i++)
        if (keyvals[i].keyval == keyval) {
            *out = keyvals[i];
            found = 1;
        }
    pthread_mutex_unlock(&keyval_lock);
    return found;
}

/* MPICH's free of keyval k (the kind's call). */
static void pmpi_free_keyval(int keyval, ep_keyval_kind_t kind)
{
    if (kind == EP_KEYVAL_WIN)
        PMPI_Win_free_keyval(&keyval);
    else
        PMPI_Comm_free_keyval(&keyval);
}

/* Removes entry i, keyval_lock held. */
static void keyval_remove(int i)
{
    if (keyvals[i].owns_extra)
        free(keyvals[i].extra);
    keyvals[i] = keyvals[--n_keyvals];
}

/* One attribute more (d = 1) or fewer (-1) with keyval; the last one of a
 * keyval the program freed frees it in MPICH. */
static void keyval_hold(int keyval, int d)
{
    int release = 0;
    ep_keyval_kind_t kind = EP_KEYVAL_COMM;
    pthread_mutex_lock(&keyval_lock);
    for (int i = 0; i < n_keyvals; i++)
        if (keyvals[i].keyval == keyval) {
            keyvals[i].holds += d;
            if (keyvals[i].holds == 0 && keyvals[i].freed) {
                release = 1;
                kind = keyvals[i].kind;
                keyval_remove(i);
            }
            break;
        }
    pthread_mutex_unlock(&keyval_lock);
    if (release)
        pmpi_free_keyval(keyval, kind);
}

int ep_keyval_free(int *keyval, ep_keyval_kind_t kind)
{
    int later = 0;
    pthread_mutex_lock(&keyval_lock);
    for (int i = 0; i < n_keyvals; i++)
        if (keyvals[i].keyval == *keyval && keyvals[i].kind == kind) {
            /* Freed again while attributes still hold it: MPICH takes
             * that too (attr/keyval_double_free), nothing more to do. */
            later = keyvals[i].holds > 0 || keyvals[i].freed;
            keyvals[i].freed = later;
            break;
        }
    pthread_mutex_unlock(&keyval_lock);
    if (!later)
        return kind == EP_KEYVAL_WIN ? PMPI_Win_free_keyval(keyval) : PMPI_Comm_free_keyval(keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int ep_keyval_known(int keyval, ep_keyval_kind_t kind)
{
    ep_keyval_t k;
    return keyval_find(keyval, &k) && k.kind == kind;
}

static ep_attr_t **attrs_of(ep_attr_host_t h) { return (ep_attr_t **)h.list; }

static int call_delete(ep_attr_host_t h, int keyval, void *val)
{
    ep_keyval_t k;
    if (!keyval_find(keyval, &k) || !k.del)
        return MPI_SUCCESS;
    return k.del((MPI_Comm)h.handle, keyval, val, k.extra);
}

int ep_attr_get(ep_attr_host_t h, int keyval, void **val, int *flag)
{
    *flag = 0;
    pthread_mutex_lock(h.lock);
    for (ep_attr_t *a = *attrs_of(h); a; a = a->next)
        if (a->keyval == keyval) {
            *val = a->val;
            *flag = 1;
            break;
        }
    pthread_mutex_unlock(h.lock);
    return MPI_SUCCESS;
}

int ep_attr_delete(ep_attr_host_t h, int keyval)
{
    void *val;
    int flag, rc;
    ep_attr_get(h, keyval, &val, &flag);
    if (!flag)
        return MPI_ERR_KEYVAL;
    /* The callback runs unlocked: it may call MPI on this endpoint. */
    if ((rc = call_delete(h, keyval, val)) != MPI_SUCCESS)
        return rc;
    int gone = 0;
    pthread_mutex_lock(h.lock);
    for (ep_attr_t **pp = attrs_of(h); *pp; pp = &(*pp)->next)
        if ((*pp)->keyval == keyval) {
            ep_attr_t *a = *pp;
            *pp = a->next;
            free(a);
            gone = 1;
            break;
        }
    pthread_mutex_unlock(h.lock);
    if (gone)
        keyval_hold(keyval, -1);
    return MPI_SUCCESS;
}

int ep_attr_set(ep_attr_host_t h, int keyval, void *val)
{
    void *old;
    int flag, rc;
    ep_attr_get(h, keyval, &old, &flag);
    if (flag && (rc = call_delete(h, keyval, old)) != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(h.lock);
    ep_attr_t **pp = attrs_of(h);
    while (*pp && (*pp)->keyval != keyval)
        pp = &(*pp)->next;
    int added = 0;
    if (*pp) {
        (*pp)->val = val;
    } else if ((*pp = malloc(sizeof **pp))) {
        (*pp)->next = NULL;
        (*pp)->keyval = keyval;
        (*pp)->val = val;
        added = 1;
    }
    rc = *pp ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    pthread_mutex_unlock(h.lock);
    if (added)
        keyval_hold(keyval, 1);
    return rc;
}

int ep_attr_copy(ep_attr_host_t h, ep_attr_host_t dup)
{
    /* Snapshot the list, then run the callbacks unlocked. */
    int n = 0, rc = MPI_SUCCESS;
    pthread_mutex_lock(h.lock);
    for (ep_attr_t *a = *attrs_of(h); a; a = a->next)
        n++;
    ep_attr_t *snap = malloc(sizeof *snap * (size_t)(n ? n : 1));
    int i = 0;
    for (ep_attr_t *a = *attrs_of(h); snap && a; a = a->next)
        snap[i++] = *a;
    pthread_mutex_unlock(h.lock);
    if (!snap)
        return MPI_ERR_NO_MEM;
    for (i = 0; i < n && rc == MPI_SUCCESS; i++) {
        ep_keyval_t k;
        void *nv = NULL;
        int flag = 0;
        if (!keyval_find(snap[i].keyval, &k) || !k.copy)
            continue; /* MPI_COMM_NULL_COPY_FN: not copied */
        rc = k.copy((MPI_Comm)h.handle, snap[i].keyval, k.extra, snap[i].val, &nv, &flag);
        if (rc == MPI_SUCCESS && flag)
            rc = ep_attr_set(dup, snap[i].keyval, nv);
    }
    free(snap);
    return rc;
}

int ep_attr_delete_all(ep_attr_host_t h)
{
    for (;;) {
        /* The most recently set attribute is at the end of the list. */
        int keyval = 0, found = 0, rc;
        pthread_mutex_lock(h.lock);
        for (ep_attr_t *a = *attrs_of(h); a; a = a->next) {
            keyval = a->keyval;
            found = 1;
        }
        pthread_mutex_unlock(h.lock);
        if (!found)
            return MPI_SUCCESS;
        if ((rc = ep_attr_delete(h, keyval)) != MPI_SUCCESS)
            return rc;
    }
}

void ep_attr_discard(ep_attr_host_t h)
{
    for (ep_attr_t *a = *attrs_of(h), *next; a; a = next) {
        next = a->next;
        keyval_hold(a->keyval, -1);
        free(a);
    }
    *h.list = NULL;
}
