#include "datatype.h"

#include "handle.h"

#include <stdlib.h>
#include <string.h>

ep_status_t ep_dt_check(MPI_Datatype t)
{
    if (ep_datatype_builtin_size(t) >= 0)
        return t == MPI_DATATYPE_NULL ? EP_ERR_TYPE : EP_OK;
    if (t == MPI_DATATYPE_NULL || ep_handle_is_ep((int)t))
        return EP_ERR_TYPE;
    /* A handle of the datatype type with a valid kind; MPICH validates the rest. */
    unsigned u = (unsigned)t;
    if (((u & EP_HANDLE_TYPE_MASK) >> EP_HANDLE_TYPE_SHIFT) != EP_HTYPE_DATATYPE || (u >> 30) == 0)
        return EP_ERR_TYPE;
    int sz;
    if (PMPI_Type_size(t, &sz) != MPI_SUCCESS)
        return EP_ERR_TYPE;
    return EP_OK;
}

ep_status_t ep_dt_layout(MPI_Datatype t, int count, ep_dt_layout_t *out)
{
    int bs = ep_datatype_builtin_size(t);
    if (bs > 0) {
        out->type_size = bs;
        out->bytes = (int64_t)bs * count;
        out->contig = 1;
        out->offset = 0;
        return EP_OK;
    }
    MPI_Count sz;
    MPI_Aint lb, ext, tlb, text;
    if (PMPI_Type_size_x(t, &sz) != MPI_SUCCESS || PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS)
        return EP_ERR_TYPE;
    out->type_size = sz;
    out->bytes = (int64_t)sz * count;
    out->contig = (sz == text) && (count <= 1 || ext == sz);
    out->offset = tlb;
    return EP_OK;
}

ep_status_t ep_dt_pack(const void *buf, int count, MPI_Datatype t, const ep_dt_layout_t *lay, void *out)
{
    if (lay->bytes == 0)
        return EP_OK;
    if (lay->contig) {
        memcpy(out, (const char *)buf + lay->offset, (size_t)lay->bytes);
        return EP_OK;
    }
    int ipos = 0;
    if (lay->bytes > INT32_MAX ||
        PMPI_Pack(buf, count, t, out, (int)lay->bytes, &ipos, MPI_COMM_SELF) != MPI_SUCCESS)
        return EP_ERR_TYPE;
    return EP_OK;
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
    int n = lay->type_size ? (int)(bytes / lay->type_size) : 0;
    (void)count;
    if (n == 0)
        return EP_OK;
    int ipos = 0;
    if (bytes > INT32_MAX ||
        PMPI_Unpack(in, (int)bytes, &ipos, buf, n, t, MPI_COMM_SELF) != MPI_SUCCESS)
        return EP_ERR_TYPE;
    return EP_OK;
}

ep_status_t ep_dt_copy(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                       MPI_Datatype rt, int64_t *sent)
{
    ep_dt_layout_t sl, rl;
    ep_status_t rc;
    if ((rc = ep_dt_layout(st, scount, &sl)) || (rc = ep_dt_layout(rt, rcount, &rl)))
        return rc;
    *sent = sl.bytes;
    int64_t n = sl.bytes < rl.bytes ? sl.bytes : rl.bytes;
    if (n == 0)
        return EP_OK;
    if (sl.contig && rl.contig) {
        memcpy((char *)rbuf + rl.offset, (const char *)sbuf + sl.offset, (size_t)n);
        return EP_OK;
    }
    if (sl.contig)
        return ep_dt_unpack((const char *)sbuf + sl.offset, n, rbuf, rcount, rt, &rl);
    void *tmp = malloc((size_t)sl.bytes);
    if (!tmp)
        return EP_ERR_NO_MEM;
    rc = ep_dt_pack(sbuf, scount, st, &sl, tmp);
    if (!rc)
        rc = ep_dt_unpack(tmp, n, rbuf, rcount, rt, &rl);
    free(tmp);
    return rc;
}
