/* The large-count calls over MPI-3's (abi/large.h), for MPIs without the
 * _c forms.  Compiled to nothing where the MPI has them. */
#include "abi/large.h"

#if !EP_MPI_LARGE_COUNT

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* count elements of type as (*n, *t): the same when count fits in an int,
 * else one element of a new derived type (*made set: free it after the
 * call; MPI lets a type go while operations that use it are pending). */
static int as_int_count(MPI_Count count, MPI_Datatype type, int *n, MPI_Datatype *t, int *made)
{
    *made = 0;
    if (count >= 0 && count <= INT_MAX) {
        *n = (int)count;
        *t = type;
        return MPI_SUCCESS;
    }
    int rc = ep_pmpi_type_contiguous_c(count, type, t);
    if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(t)) != MPI_SUCCESS)
        PMPI_Type_free(t);
    if (rc != MPI_SUCCESS)
        return rc;
    *n = 1;
    *made = 1;
    return MPI_SUCCESS;
}

/* A contiguous type of count elements of old, for any count: blocks of 2^30
 * elements, and a struct of those and the rest when count is not a
 * multiple. */
int ep_pmpi_type_contiguous_c(MPI_Count count, MPI_Datatype old, MPI_Datatype *out)
{
    if (count >= 0 && count <= INT_MAX)
        return PMPI_Type_contiguous((int)count, old, out);
    const MPI_Count chunk = (MPI_Count)1 << 30;
    MPI_Count nchunks = count / chunk, rest = count % chunk;
    if (nchunks > INT_MAX)
        return MPI_ERR_COUNT;
    MPI_Aint lb, extent;
    MPI_Datatype block, blocks, tail = MPI_DATATYPE_NULL;
    int rc = PMPI_Type_get_extent(old, &lb, &extent);
    if (rc != MPI_SUCCESS || (rc = PMPI_Type_contiguous((int)chunk, old, &block)) != MPI_SUCCESS)
        return rc;
    rc = PMPI_Type_contiguous((int)nchunks, block, &blocks);
    PMPI_Type_free(&block);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!rest) {
        *out = blocks;
        return MPI_SUCCESS;
    }
    if ((rc = PMPI_Type_contiguous((int)rest, old, &tail)) == MPI_SUCCESS) {
        int lens[2] = {1, 1};
        MPI_Aint disp[2] = {0, (MPI_Aint)(nchunks * chunk) * extent};
        MPI_Datatype types[2] = {blocks, tail};
        rc = PMPI_Type_create_struct(2, lens, disp, types, out);
        PMPI_Type_free(&tail);
    }
    PMPI_Type_free(&blocks);
    return rc;
}

/* Each block a contiguous type of its elements, and a struct of those. */
int ep_pmpi_type_create_hindexed_c(MPI_Count count, const MPI_Count lens[], const MPI_Count displs[], MPI_Datatype old,
                                   MPI_Datatype *out)
{
    if (count < 0 || count > INT_MAX)
        return MPI_ERR_COUNT;
    int n = (int)count, made = 0, rc = MPI_SUCCESS;
    /* zeroed: GCC 14 cannot tell that the loop fills all n before the struct reads them */
    MPI_Datatype *types = calloc((size_t)(n ? n : 1), sizeof *types);
    MPI_Aint *disp = calloc((size_t)(n ? n : 1), sizeof *disp);
    int *ones = calloc((size_t)(n ? n : 1), sizeof *ones);
    if (!types || !disp || !ones)
        rc = MPI_ERR_NO_MEM;
    while (!rc && made < n) { /* made: the blocks' types made so far */
        disp[made] = (MPI_Aint)displs[made];
        ones[made] = 1;
        if (!(rc = ep_pmpi_type_contiguous_c(lens[made], old, &types[made])))
            made++;
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_create_struct(n, ones, disp, types, out);
    for (int i = 0; i < made; i++) /* the struct holds what it needs of them */
        PMPI_Type_free(&types[i]);
    free(types), free(disp), free(ones);
    return rc;
}

/* The body of a _c form over its int form CALL, which names n and t: the
 * count as as_int_count gives it, the type freed after the call. */
#define OVER_INT_FORM(CALL)                            \
    int n, made;                                       \
    MPI_Datatype t;                                    \
    int rc = as_int_count(count, type, &n, &t, &made); \
    if (rc == MPI_SUCCESS) {                           \
        rc = (CALL);                                   \
        if (made)                                      \
            PMPI_Type_free(&t);                        \
    }                                                  \
    return rc

int ep_pmpi_isend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
    OVER_INT_FORM(PMPI_Isend(buf, n, t, dest, tag, comm, req));
}

int ep_pmpi_irecv_c(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    OVER_INT_FORM(PMPI_Irecv(buf, n, t, source, tag, comm, req));
}

int ep_pmpi_file_read_at_c(MPI_File fh, MPI_Offset off, void *buf, MPI_Count count, MPI_Datatype type, MPI_Status *st)
{
    OVER_INT_FORM(PMPI_File_read_at(fh, off, buf, n, t, st));
}

int ep_pmpi_file_write_at_c(MPI_File fh, MPI_Offset off, const void *buf, MPI_Count count, MPI_Datatype type,
                            MPI_Status *st)
{
    OVER_INT_FORM(PMPI_File_write_at(fh, off, buf, n, t, st));
}

int ep_pmpi_file_read_at_all_c(MPI_File fh, MPI_Offset off, void *buf, MPI_Count count, MPI_Datatype type,
                               MPI_Status *st)
{
    OVER_INT_FORM(PMPI_File_read_at_all(fh, off, buf, n, t, st));
}

int ep_pmpi_file_write_at_all_c(MPI_File fh, MPI_Offset off, const void *buf, MPI_Count count, MPI_Datatype type,
                                MPI_Status *st)
{
    OVER_INT_FORM(PMPI_File_write_at_all(fh, off, buf, n, t, st));
}

/* The engine asks for counts of MPI_BYTE (or of basic types): elements and
 * count are the same then. */
int ep_pmpi_get_count_c(const MPI_Status *st, MPI_Datatype type, MPI_Count *count)
{
    return PMPI_Get_elements_x(st, type, count);
}

int ep_pmpi_type_get_envelope_c(MPI_Datatype t, MPI_Count *ni, MPI_Count *na, MPI_Count *nl, MPI_Count *nd,
                                int *combiner)
{
    int i, a, d;
    int rc = PMPI_Type_get_envelope(t, &i, &a, &d, combiner);
    if (rc == MPI_SUCCESS)
        *ni = i, *na = a, *nl = 0, *nd = d;
    return rc;
}

int ep_pmpi_type_get_contents_c(MPI_Datatype t, MPI_Count ni, MPI_Count na, MPI_Count nl, MPI_Count nd, int iv[],
                                MPI_Aint av[], MPI_Count lv[], MPI_Datatype tv[])
{
    (void)lv;
    if (nl != 0 || ni > INT_MAX || na > INT_MAX || nd > INT_MAX)
        return MPI_ERR_ARG;
    return PMPI_Type_get_contents(t, (int)ni, (int)na, (int)nd, iv, av, tv);
}

/* Unpacks the first `bytes` (less than one element) of packed data into the
 * element at elem, leaving the rest of it as it was: the element is packed
 * as it is, its first bytes replaced, and unpacked back.  (MPICH stores a
 * trailing partial element; Open MPI's MPI_Unpack refuses one.) */
static int partial_element(const char *packed, MPI_Count bytes, MPI_Count size, char *elem, MPI_Datatype type,
                           MPI_Comm comm)
{
    char *tmp = malloc((size_t)size);
    int pos = 0, rc = tmp ? PMPI_Pack(elem, 1, type, tmp, (int)size, &pos, comm) : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        memcpy(tmp, packed, (size_t)bytes);
        pos = 0;
        rc = PMPI_Unpack(tmp, (int)size, &pos, elem, 1, type, comm);
    }
    free(tmp);
    return rc;
}

/* Packing in pieces of at most INT_MAX bytes, each of whole elements; an
 * unpack may end inside an element (partial_element). */
static int pieces(const void *in, MPI_Count insize, MPI_Count *position, void *out, MPI_Count outsize, MPI_Count count,
                  MPI_Datatype type, MPI_Comm comm, int pack)
{
    MPI_Count size;
    MPI_Aint lb, extent;
    int rc = PMPI_Type_size_x(type, &size);
    if (rc != MPI_SUCCESS || (rc = PMPI_Type_get_extent(type, &lb, &extent)) != MPI_SUCCESS)
        return rc;
    if (size == 0)
        return MPI_SUCCESS;
    MPI_Count per = INT_MAX / size;
    if (per == 0)
        return MPI_ERR_COUNT; /* one element beyond 2 GiB */
    const char *packed = pack ? out : in;
    MPI_Count room = pack ? outsize : insize;
    for (MPI_Count first = 0; first < count && *position < room;) {
        MPI_Count left = room - *position, k = count - first < per ? count - first : per;
        if (k > left / size)
            k = left / size; /* whole elements only */
        char *elems = (char *)(pack ? in : out) + (MPI_Aint)first * extent;
        char *at = (char *)packed + *position;
        if (k == 0) { /* less than an element left */
            if (pack)
                return MPI_ERR_TRUNCATE;
            rc = partial_element(at, left, size, elems, type, comm);
            *position += rc == MPI_SUCCESS ? left : 0;
            return rc;
        }
        int pos = 0;
        rc = pack ? PMPI_Pack(elems, (int)k, type, at, (int)(k * size), &pos, comm)
                  : PMPI_Unpack(at, (int)(k * size), &pos, elems, (int)k, type, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        *position += pos;
        first += k;
    }
    return MPI_SUCCESS;
}

int ep_pmpi_pack_c(const void *in, MPI_Count count, MPI_Datatype type, void *out, MPI_Count outsize,
                   MPI_Count *position, MPI_Comm comm)
{
    return pieces(in, 0, position, out, outsize, count, type, comm, 1);
}

int ep_pmpi_unpack_c(const void *in, MPI_Count insize, MPI_Count *position, void *out, MPI_Count count,
                     MPI_Datatype type, MPI_Comm comm)
{
    return pieces(in, insize, position, out, 0, count, type, comm, 0);
}

/* Rewrites n MPI_Count (or MPI_Aint: the same size here) values as ints at
 * the same address; element i's int lands on bytes already read. */
_Static_assert(sizeof(MPI_Count) == sizeof(MPI_Aint), "counts and displacements share the conversion");
static int *ints_in_place(void *array, int n, int *rc)
{
    for (int i = 0; i < n; i++) {
        MPI_Count v;
        memcpy(&v, (char *)array + (size_t)i * sizeof v, sizeof v);
        if (v < 0 || v > INT_MAX)
            *rc = MPI_ERR_COUNT; /* more than 2 GiB between two processes */
        int w = (int)v;
        memcpy((char *)array + (size_t)i * sizeof w, &w, sizeof w);
    }
    return array;
}

int ep_pmpi_ialltoallv_c(const void *sbuf, MPI_Count scnt[], MPI_Aint sdsp[], MPI_Datatype stype, void *rbuf,
                         MPI_Count rcnt[], MPI_Aint rdsp[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    int n, rc = PMPI_Comm_size(comm, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    int *sc = ints_in_place(scnt, n, &rc), *sd = ints_in_place(sdsp, n, &rc);
    int *rn = ints_in_place(rcnt, n, &rc), *rd = ints_in_place(rdsp, n, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    return PMPI_Ialltoallv(sbuf, sc, sd, stype, rbuf, rn, rd, rtype, comm, req);
}

int ep_pmpi_iallgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcnt[],
                          MPI_Aint rdsp[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    int n, rc = PMPI_Comm_size(comm, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    if (scount > INT_MAX)
        return MPI_ERR_COUNT;
    int *rn = ints_in_place(rcnt, n, &rc), *rd = ints_in_place(rdsp, n, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    return PMPI_Iallgatherv(sbuf, (int)scount, stype, rbuf, rn, rd, rtype, comm, req);
}

#endif
