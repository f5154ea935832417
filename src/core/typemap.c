/* A datatype's typemap as runs of bytes (typemap.h). */
#include "core/typemap.h"
#include "abi/large.h"

#include "abi/handle.h"
#include "base/grow.h"

#include <stdlib.h>
#include <string.h>

/* Appends a run, merged into the last one when it starts where that ends.
 * Past r->max runs it sets r->full and returns EP_ERR_TYPE, which unwinds
 * the decoding; ep_typemap_runs turns it back into EP_OK. */
static ep_status_t add_run(ep_runs_t *r, MPI_Offset off, int64_t len)
{
    if (len <= 0)
        return EP_OK;
    if (r->n && r->off[r->n - 1] + r->len[r->n - 1] == off) {
        r->len[r->n - 1] += len;
        return EP_OK;
    }
    if (r->max && r->n == r->max) {
        r->full = 1;
        return EP_ERR_TYPE;
    }
    if (!EP_GROW(r->off, r->n, r->cap_off, 16) || !EP_GROW(r->len, r->n, r->cap_len, 16))
        return EP_ERR_NO_MEM;
    r->off[r->n] = off;
    r->len[r->n++] = len;
    return EP_OK;
}

void ep_runs_free(ep_runs_t *r)
{
    free(r->off);
    free(r->len);
    memset(r, 0, sizeof *r);
}

/* One instance of t at base through MPI_Pack: each data byte's offset is
 * read off a buffer whose bytes spell their own offsets, one byte of the
 * offset per pass. */
static ep_status_t runs_packed(MPI_Datatype t, MPI_Offset base, ep_runs_t *r)
{
    MPI_Count size, tlb, text;
    if (PMPI_Type_size_x(t, &size) || PMPI_Type_get_true_extent_x(t, &tlb, &text))
        return EP_ERR_TYPE;
    if (text > EP_TYPEMAP_PACK_MAX || size > INT32_MAX) {
        r->unpacked = text;
        return EP_ERR_TYPE;
    }
    unsigned char *src = malloc((size_t)text + 1), *packed = malloc((size_t)size + 1);
    int64_t *at = calloc((size_t)size + 1, sizeof *at);
    ep_status_t rc = src && packed && at ? EP_OK : EP_ERR_NO_MEM;
    for (int shift = 0; !rc && ((int64_t)1 << shift) <= text; shift += 8) {
        int pos = 0;
        for (MPI_Count i = 0; i < text; i++)
            src[i] = (unsigned char)(i >> shift);
        if (PMPI_Pack(src - tlb, 1, t, packed, (int)size, &pos, MPI_COMM_SELF) != MPI_SUCCESS)
            rc = EP_ERR_TYPE;
        for (MPI_Count j = 0; !rc && j < size; j++)
            at[j] |= (int64_t)packed[j] << shift;
    }
    for (MPI_Count j = 0; !rc && j < size; j++)
        rc = add_run(r, base + tlb + at[j], 1);
    free(src), free(packed), free(at);
    return rc;
}

/* A derived type's constructor.  arg holds its count, length,
 * displacement and stride arguments in the constructor's order, however
 * they were given: as ints and addresses (array_of_integers, then
 * array_of_addresses) or as large counts, which hold them all.  A
 * subarray's ndims and order stay ints, its sizes, subsizes and starts
 * are arg[sub .. sub + 3 ndims). */
typedef struct contents {
    int comb, nd, ndims, order, sub;
    MPI_Count *arg;
    MPI_Datatype *type;
} contents_t;

static void contents_free(contents_t *c)
{
    for (int j = 0; j < c->nd; j++) {
        MPI_Count ni, na, nl, nd;
        int comb;
        if (ep_pmpi_type_get_envelope_c(c->type[j], &ni, &na, &nl, &nd, &comb) == MPI_SUCCESS &&
            comb != MPI_COMBINER_NAMED)
            PMPI_Type_free(&c->type[j]);
    }
    free(c->arg), free(c->type);
}

static ep_status_t contents_get(MPI_Datatype t, contents_t *c)
{
    MPI_Count ni, na, nl, nd;
    memset(c, 0, sizeof *c);
    if (ep_pmpi_type_get_envelope_c(t, &ni, &na, &nl, &nd, &c->comb) != MPI_SUCCESS)
        return EP_ERR_TYPE;
    if (c->comb == MPI_COMBINER_NAMED)
        return EP_OK;
    int *iv = malloc(sizeof *iv * (size_t)(ni + 1));
    MPI_Aint *av = malloc(sizeof *av * (size_t)(na + 1));
    MPI_Count *lv = malloc(sizeof *lv * (size_t)(nl + 1));
    c->arg = calloc((size_t)(ni + na + nl + 1), sizeof *c->arg);
    c->type = malloc(sizeof *c->type * (size_t)(nd + 1));
    ep_status_t rc = iv && av && lv && c->arg && c->type ? EP_OK : EP_ERR_NO_MEM;
    if (!rc && ep_pmpi_type_get_contents_c(t, ni, na, nl, nd, iv, av, lv, c->type) != MPI_SUCCESS)
        rc = EP_ERR_TYPE;
    if (!rc) {
        c->nd = (int)nd;
        MPI_Count k = 0;
        if (nl > 0) /* large counts: every argument is one */
            for (; k < nl; k++)
                c->arg[k] = lv[k];
        else
            for (MPI_Count i = 0; i < ni + na; i++)
                c->arg[k++] = i < ni ? (MPI_Count)iv[i] : (MPI_Count)av[i - ni];
        if (c->comb == MPI_COMBINER_SUBARRAY) {
            c->ndims = iv[0];
            c->order = nl > 0 ? iv[1] : iv[1 + 3 * iv[0]];
            c->sub = nl > 0 ? 0 : 1;
        }
    }
    free(iv), free(av), free(lv);
    if (rc) {
        free(c->arg), free(c->type);
        c->arg = NULL, c->type = NULL, c->nd = 0;
    }
    return rc;
}

static ep_status_t runs_of(MPI_Datatype t, MPI_Offset base, int64_t count, ep_runs_t *r);

/* The rows of a subarray instance at b: rows of the last dimension (C
 * order) or of the first (Fortran order), each a run of elements. */
static ep_status_t runs_subarray(const contents_t *c, MPI_Offset b, MPI_Count oext, ep_runs_t *r)
{
    int n = c->ndims, fortran = c->order == MPI_ORDER_FORTRAN, inner = fortran ? 0 : n - 1;
    const MPI_Count *sizes = c->arg + c->sub, *subs = sizes + n, *starts = sizes + 2 * n;
    int64_t rows = 1;
    ep_status_t rc = EP_OK;
    for (int d = 0; d < n; d++)
        if (d != inner)
            rows *= subs[d];
    for (int64_t row = 0; row < rows && !rc; row++) {
        /* the row's first element in the whole array, dimensions from the
         * slowest */
        int64_t rest = row, idx = 0;
        for (int k = 0; k < n; k++) {
            int d = fortran ? n - 1 - k : k;
            MPI_Count at = starts[d];
            if (d != inner) {
                int64_t below = 1; /* rows per step of d among the outer dimensions */
                for (int k2 = k + 1; k2 < n; k2++) {
                    int d2 = fortran ? n - 1 - k2 : k2;
                    if (d2 != inner)
                        below *= subs[d2];
                }
                at += rest / below;
                rest %= below;
            }
            idx = idx * sizes[d] + at;
        }
        rc = runs_of(c->type[0], b + idx * oext, subs[inner], r);
    }
    return rc;
}

/* One instance of derived type t at b, decoded from its constructor. */
static ep_status_t runs_decoded(MPI_Datatype t, MPI_Offset b, ep_runs_t *r)
{
    contents_t c;
    MPI_Count olb, oext = 0;
    ep_status_t rc = contents_get(t, &c);
    if (!rc && c.nd > 0 && c.comb != MPI_COMBINER_STRUCT && PMPI_Type_get_extent_x(c.type[0], &olb, &oext))
        rc = EP_ERR_TYPE;
    if (rc) {
        contents_free(&c);
        return rc;
    }
    const MPI_Count *a = c.arg;
    int64_t n = a[0]; /* the count, for the constructors that have one */
    switch (c.comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        rc = runs_of(c.type[0], b, 1, r);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        rc = runs_of(c.type[0], b, n, r);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: { /* count, blocklength, stride */
        MPI_Offset stride = c.comb == MPI_COMBINER_VECTOR ? a[2] * oext : a[2];
        for (int64_t j = 0; j < n && !rc; j++)
            rc = runs_of(c.type[0], b + j * stride, a[1], r);
        break;
    }
    case MPI_COMBINER_INDEXED:       /* count, blocklengths[count], displacements[count] */
    case MPI_COMBINER_HINDEXED:      /* the same, displacements in bytes */
    case MPI_COMBINER_INDEXED_BLOCK: /* count, blocklength, displacements[count] */
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT: { /* count, blocklengths[count], displacements[count]; types[count] */
        int one_len = c.comb == MPI_COMBINER_INDEXED_BLOCK || c.comb == MPI_COMBINER_HINDEXED_BLOCK;
        MPI_Count unit = c.comb == MPI_COMBINER_INDEXED || c.comb == MPI_COMBINER_INDEXED_BLOCK ? oext : 1;
        const MPI_Count *disp = one_len ? a + 2 : a + 1 + n;
        for (int64_t j = 0; j < n && !rc; j++)
            rc = runs_of(c.type[c.comb == MPI_COMBINER_STRUCT ? j : 0], b + disp[j] * unit, one_len ? a[1] : a[1 + j],
                         r);
        break;
    }
    case MPI_COMBINER_SUBARRAY:
        rc = runs_subarray(&c, b, oext, r);
        break;
    default: /* darray, and whatever MPI adds: by packing */
        rc = runs_packed(t, b, r);
        break;
    }
    contents_free(&c);
    return rc;
}

/* One instance of t at b: a predefined type is one block, or (a pair type
 * with padding, MPI_SHORT_INT) laid out by packing. */
static ep_status_t runs_one(MPI_Datatype t, MPI_Offset b, ep_runs_t *r)
{
    MPI_Count size, tlb, text, ni, na, nl, nd;
    int comb;
    if (PMPI_Type_size_x(t, &size) || PMPI_Type_get_true_extent_x(t, &tlb, &text) ||
        ep_pmpi_type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb) != MPI_SUCCESS)
        return EP_ERR_TYPE;
    if (size == 0)
        return EP_OK;
    if (comb != MPI_COMBINER_NAMED)
        return runs_decoded(t, b, r);
    return size == text ? add_run(r, b + tlb, size) : runs_packed(t, b, r);
}

/* count instances of t at base, base + extent, ...: one laid out, then
 * repeated every extent. */
static ep_status_t runs_of(MPI_Datatype t, MPI_Offset base, int64_t count, ep_runs_t *r)
{
    int basic = ep_datatype_builtin_size(t);
    MPI_Count lb, ext;
    if (count <= 0)
        return EP_OK;
    if (basic > 0) /* a basic predefined type: one block, back to back */
        return add_run(r, base, count * basic);
    if (count == 1)
        return runs_one(t, base, r);
    if (PMPI_Type_get_extent_x(t, &lb, &ext))
        return EP_ERR_TYPE;
    ep_runs_t one = {.max = r->max ? r->max + 1 : 0};
    ep_status_t rc = runs_one(t, 0, &one);
    if (one.full)
        rc = EP_OK;
    if (!rc && one.n == 1 && one.len[0] == ext) /* back to back without gaps: one run */
        rc = add_run(r, base + one.off[0], count * ext);
    else
        for (int64_t i = 0; i < count && !rc; i++)
            for (int k = 0; k < one.n && !rc; k++)
                rc = add_run(r, base + i * ext + one.off[k], one.len[k]);
    r->unpacked = r->unpacked ? r->unpacked : one.unpacked;
    ep_runs_free(&one);
    return rc;
}

/* top: t is the caller's, which may be a parameterised Fortran type (no
 * inner types); an inner one would be freed by contents_free. */
static ep_status_t element_of(MPI_Datatype t, int top, MPI_Datatype *elem)
{
    contents_t c;
    ep_status_t rc = contents_get(t, &c);
    if (rc || c.comb == MPI_COMBINER_NAMED || c.nd == 0) {
        *elem = t;
        return rc ? rc : c.comb == MPI_COMBINER_NAMED || top ? EP_OK : EP_ERR_TYPE;
    }
    *elem = MPI_DATATYPE_NULL;
    for (int j = 0; j < c.nd && !rc; j++) {
        MPI_Datatype e;
        if (!(rc = element_of(c.type[j], 0, &e)) && *elem != MPI_DATATYPE_NULL && e != *elem)
            rc = EP_ERR_TYPE;
        *elem = e;
    }
    contents_free(&c);
    return rc;
}

ep_status_t ep_typemap_element(MPI_Datatype t, MPI_Datatype *elem) { return element_of(t, 1, elem); }

ep_status_t ep_typemap_runs(MPI_Datatype t, MPI_Offset base, int64_t count, ep_runs_t *r)
{
    ep_status_t rc = runs_of(t, base, count, r);
    return r->full ? EP_OK : rc;
}

int ep_typemap_contiguous(MPI_Datatype t, int many)
{
    MPI_Count size, lb, ext, tlb, text;
    if (PMPI_Type_size_x(t, &size) || PMPI_Type_get_extent_x(t, &lb, &ext) ||
        PMPI_Type_get_true_extent_x(t, &tlb, &text))
        return 0;
    if (size != text || (many && ext != size))
        return 0;
    ep_runs_t r = {.max = 1};
    int one = ep_typemap_runs(t, 0, 1, &r) == EP_OK && !r.full && r.n <= 1;
    ep_runs_free(&r);
    return one;
}
