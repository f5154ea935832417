#include "core/op.h"

#include "base/grow.h"
#include "abi/handle.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

/* One loop per (type, operation); the macros spell them out. */
#define EP_LOOP(T, EXPR)                \
    do {                                \
        const T *x = in;                \
        T *y = inout;                   \
        for (int i = 0; i < count; i++) \
            y[i] = (EXPR);              \
    } while (0)

/* Operations valid on every real type: sum, product, max, min. */
#define EP_ARITH(T)                            \
    if (op == MPI_SUM)                         \
        EP_LOOP(T, y[i] + x[i]);               \
    else if (op == MPI_PROD)                   \
        EP_LOOP(T, y[i] * x[i]);               \
    else if (op == MPI_MAX)                    \
        EP_LOOP(T, x[i] > y[i] ? x[i] : y[i]); \
    else if (op == MPI_MIN)                    \
        EP_LOOP(T, x[i] < y[i] ? x[i] : y[i]); \
    else

/* Integer types add the logical and bitwise operations. */
#define EP_INTEGER(T)                    \
    EP_ARITH(T)                          \
    if (op == MPI_LAND)                  \
        EP_LOOP(T, (T)(y[i] && x[i]));   \
    else if (op == MPI_LOR)              \
        EP_LOOP(T, (T)(y[i] || x[i]));   \
    else if (op == MPI_LXOR)             \
        EP_LOOP(T, (T)(!y[i] != !x[i])); \
    else if (op == MPI_BAND)             \
        EP_LOOP(T, (T)(y[i] & x[i]));    \
    else if (op == MPI_BOR)              \
        EP_LOOP(T, (T)(y[i] | x[i]));    \
    else if (op == MPI_BXOR)             \
        EP_LOOP(T, (T)(y[i] ^ x[i]));    \
    else                                 \
        return 0;                        \
    return 1

#define EP_REAL(T) \
    EP_ARITH(T)    \
    return 0;      \
    return 1

static int apply_int(const void *in, void *inout, int count, MPI_Op op) { EP_INTEGER(int); }
static int apply_unsigned(const void *in, void *inout, int count, MPI_Op op) { EP_INTEGER(unsigned); }
static int apply_long(const void *in, void *inout, int count, MPI_Op op) { EP_INTEGER(long); }
static int apply_ulong(const void *in, void *inout, int count, MPI_Op op) { EP_INTEGER(unsigned long); }
static int apply_llong(const void *in, void *inout, int count, MPI_Op op) { EP_INTEGER(long long); }
static int apply_ullong(const void *in, void *inout, int count, MPI_Op op) { EP_INTEGER(unsigned long long); }
static int apply_float(const void *in, void *inout, int count, MPI_Op op) { EP_REAL(float); }
static int apply_double(const void *in, void *inout, int count, MPI_Op op) { EP_REAL(double); }

int ep_op_apply(const void *in, void *inout, int count, MPI_Datatype t, MPI_Op op)
{
    if (t == MPI_DOUBLE)
        return apply_double(in, inout, count, op);
    if (t == MPI_INT || t == MPI_INT32_T)
        return apply_int(in, inout, count, op);
    if (t == MPI_LONG || t == MPI_INT64_T)
        return apply_long(in, inout, count, op);
    if (t == MPI_FLOAT)
        return apply_float(in, inout, count, op);
    if (t == MPI_UNSIGNED || t == MPI_UINT32_T)
        return apply_unsigned(in, inout, count, op);
    if (t == MPI_UNSIGNED_LONG || t == MPI_UINT64_T)
        return apply_ulong(in, inout, count, op);
    if (t == MPI_LONG_LONG)
        return apply_llong(in, inout, count, op);
    if (t == MPI_UNSIGNED_LONG_LONG)
        return apply_ullong(in, inout, count, op);
    return 0;
}

/* ---- which operation is defined on which type ------------------------------ */

enum { G_CINT = 1, G_FINT = 2, G_FLOAT = 4, G_LOGICAL = 8, G_COMPLEX = 16, G_BYTE = 32, G_PAIR = 64, G_ANY = 127 };

/* Most used first: every reduction on an endpoint communicator looks its
 * (type, operation) up here. */
static const struct {
    MPI_Datatype t;
    int group;
} type_groups[] = {
    {MPI_DOUBLE, G_FLOAT},
    {MPI_INT, G_CINT},
    {MPI_LONG, G_CINT},
    {MPI_FLOAT, G_FLOAT},
    {MPI_LONG_LONG, G_CINT},
    {MPI_UNSIGNED, G_CINT},
    {MPI_UNSIGNED_LONG, G_CINT},
    {MPI_INT64_T, G_CINT},
    {MPI_INT32_T, G_CINT},
    {MPI_UINT64_T, G_CINT},
    {MPI_UINT32_T, G_CINT},
    {MPI_2INT, G_PAIR},
    {MPI_DOUBLE_INT, G_PAIR},
    {MPI_SHORT, G_CINT},
    {MPI_UNSIGNED_SHORT, G_CINT},
    {MPI_LONG_LONG_INT, G_CINT},
    {MPI_UNSIGNED_LONG_LONG, G_CINT},
    {MPI_SIGNED_CHAR, G_CINT},
    {MPI_UNSIGNED_CHAR, G_CINT},
    {MPI_INT8_T, G_CINT},
    {MPI_INT16_T, G_CINT},
    {MPI_UINT8_T, G_CINT},
    {MPI_UINT16_T, G_CINT},
    {MPI_INTEGER, G_FINT},
    {MPI_AINT, G_FINT},
    {MPI_OFFSET, G_FINT},
    {MPI_COUNT, G_FINT},
    {MPI_LONG_DOUBLE, G_FLOAT},
    {MPI_REAL, G_FLOAT},
    {MPI_DOUBLE_PRECISION, G_FLOAT},
    {MPI_LOGICAL, G_LOGICAL},
    {MPI_C_BOOL, G_LOGICAL},
    {MPI_CXX_BOOL, G_LOGICAL},
    {MPI_C_COMPLEX, G_COMPLEX},
    {MPI_C_FLOAT_COMPLEX, G_COMPLEX},
    {MPI_C_DOUBLE_COMPLEX, G_COMPLEX},
    {MPI_C_LONG_DOUBLE_COMPLEX, G_COMPLEX},
    {MPI_CXX_FLOAT_COMPLEX, G_COMPLEX},
    {MPI_CXX_DOUBLE_COMPLEX, G_COMPLEX},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, G_COMPLEX},
    {MPI_COMPLEX, G_COMPLEX},
    {MPI_DOUBLE_COMPLEX, G_COMPLEX},
    {MPI_BYTE, G_BYTE},
    {MPI_FLOAT_INT, G_PAIR},
    {MPI_LONG_INT, G_PAIR},
    {MPI_SHORT_INT, G_PAIR},
    {MPI_LONG_DOUBLE_INT, G_PAIR},
    {MPI_2REAL, G_PAIR},
    {MPI_2DOUBLE_PRECISION, G_PAIR},
    {MPI_2INTEGER, G_PAIR},
};

static const struct {
    MPI_Op op;
    const char *name;
    int groups; /* the type groups it is defined on */
} op_groups[] = {
    {MPI_SUM, "MPI_SUM", G_CINT | G_FINT | G_FLOAT | G_COMPLEX},
    {MPI_MAX, "MPI_MAX", G_CINT | G_FINT | G_FLOAT},
    {MPI_MIN, "MPI_MIN", G_CINT | G_FINT | G_FLOAT},
    {MPI_PROD, "MPI_PROD", G_CINT | G_FINT | G_FLOAT | G_COMPLEX},
    {MPI_LAND, "MPI_LAND", G_CINT | G_LOGICAL},
    {MPI_LOR, "MPI_LOR", G_CINT | G_LOGICAL},
    {MPI_LXOR, "MPI_LXOR", G_CINT | G_LOGICAL},
    {MPI_BAND, "MPI_BAND", G_CINT | G_FINT | G_BYTE},
    {MPI_BOR, "MPI_BOR", G_CINT | G_FINT | G_BYTE},
    {MPI_BXOR, "MPI_BXOR", G_CINT | G_FINT | G_BYTE},
    {MPI_MAXLOC, "MPI_MAXLOC", G_PAIR},
    {MPI_MINLOC, "MPI_MINLOC", G_PAIR},
    {MPI_REPLACE, "MPI_REPLACE", G_ANY},
    {MPI_NO_OP, "MPI_NO_OP", G_ANY},
};

#define NOPS (sizeof op_groups / sizeof *op_groups)
#define NTYPES (sizeof type_groups / sizeof *type_groups)

/* 1 when MPI defines op on t, 0 when not, -1 when t or op is in no group;
 * *o gets op's index (NOPS: none). */
static int defined_on(MPI_Op op, MPI_Datatype t, size_t *o)
{
    size_t k = 0;
    for (*o = 0; *o < NOPS && op_groups[*o].op != op; (*o)++)
        ;
    if (*o == NOPS)
        return -1;
    if (op_groups[*o].groups == G_ANY)
        return 1;
    /* MPIs without Fortran make its types MPI_DATATYPE_NULL: never t */
    while (k < NTYPES && (type_groups[k].t != t || t == MPI_DATATYPE_NULL))
        k++;
    return k == NTYPES ? -1 : (op_groups[*o].groups & type_groups[k].group) != 0;
}

ep_status_t ep_op_check_table(MPI_Op op, MPI_Datatype t)
{
    size_t o;
    if (defined_on(op, t, &o) != 0)
        return EP_OK;
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len;
    PMPI_Type_get_name(t, name, &len);
    ep_status_explain(EP_ERR_OP, "%s is not defined on the datatype %s", op_groups[o].name, name);
    return EP_ERR_OP;
}

int ep_op_reduce_local(const void *in, void *inout, int count, MPI_Datatype t, MPI_Op op)
{
    if (ep_op_apply(in, inout, count, t, op))
        return MPI_SUCCESS;
    return PMPI_Reduce_local(in, inout, count, t, op);
}

int ep_op_commutative(MPI_Op op, int *commute)
{
    if (ep_op_is_predefined(op)) { /* all commutative */
        *commute = 1;
        return MPI_SUCCESS;
    }
    return PMPI_Op_commutative(op, commute);
}

/* ---- keeping user operations alive -------------------------------------------
 * A table of the operations held, with their hold counts. */

typedef struct held_op {
    MPI_Op handle;
    int count;
    int freed; /* the program freed it: free it with the last release */
} held_op_t;

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static held_op_t *held;
static int nheld;
static size_t held_cap;

/* Operations never freed: predefined, null. */
static int untracked(MPI_Op op) { return ep_op_is_builtin(op); }

static held_op_t *held_find(MPI_Op h)
{
    for (int i = 0; i < nheld; i++)
        if (held[i].handle == h)
            return &held[i];
    return NULL;
}

ep_status_t ep_op_hold(MPI_Op op)
{
    MPI_Op h = op;
    if (untracked(h))
        return EP_OK;
    pthread_mutex_lock(&held_lock);
    held_op_t *e = held_find(h);
    if (!e && EP_GROW(held, nheld, held_cap, 16)) {
        e = &held[nheld++];
        *e = (held_op_t){h, 0, 0};
    }
    if (e)
        e->count++;
    pthread_mutex_unlock(&held_lock);
    return e ? EP_OK : EP_ERR_NO_MEM;
}

void ep_op_release(MPI_Op op)
{
    MPI_Op h = op;
    int free_it = 0;
    if (untracked(h))
        return;
    pthread_mutex_lock(&held_lock);
    held_op_t *e = held_find(h);
    if (e && --e->count == 0) {
        free_it = e->freed;
        *e = held[--nheld];
    }
    pthread_mutex_unlock(&held_lock);
    if (free_it)
        PMPI_Op_free(&op);
}

int ep_op_free_deferred(MPI_Op op)
{
    MPI_Op h = op;
    if (untracked(h))
        return 0;
    pthread_mutex_lock(&held_lock);
    held_op_t *e = held_find(h);
    int r = !e ? 0 : e->freed ? -1 : 1;
    if (e)
        e->freed = 1;
    pthread_mutex_unlock(&held_lock);
    return r;
}
