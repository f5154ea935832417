/* MPI-IO on endpoint communicators (file.h). */
#include "io/file.h"
#include "abi/large.h"

#include "coll/coll.h"
#include "comm/comm_create.h"
#include "core/datatype.h"
#include "core/typemap.h"
#include "base/grow.h"
#include "base/wait.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct ep_file_proc {
    MPI_File fh; /* ROMIO's file, over pc, its view bytes */
    MPI_Comm pc; /* the file communicator's process-level one (MPI_COMM_SELF for one process) */
    int nprocs, myproc;
    _Atomic MPI_Offset sfp;   /* the shared file pointer, when nprocs is 1 */
    MPI_Win sfp_win;          /* else its window: one MPI_Offset at process 0 */
    pthread_mutex_t sfp_lock; /* one passive epoch at a time from this process */
};

ep_file_t *ep_file_get(MPI_File f)
{
    if (!ep_file_handle_is_ep(f))
        return NULL;
    return (ep_file_t *)ep_registry_get(ep_file_handle_id(f), EP_OBJ_FILE);
}

MPI_File ep_file_romio(ep_file_t *f) { return f->proc->fh; }

/* ROMIO's result: EP_OK, or EP_ERR_IO with its code kept in *code. */
static ep_status_t romio(int rc, int *code)
{
    if (rc == MPI_SUCCESS)
        return EP_OK;
    if (code)
        *code = rc;
    return EP_ERR_IO;
}

/* The same for a collective step run once per process: every local file
 * (all[], as published to meet below) keeps ROMIO's code. */
static ep_status_t romio_all(int rc, int n, void *const *all)
{
    for (int j = 0; j < n && rc != MPI_SUCCESS; j++)
        ((ep_file_t *)all[j])->romio_code = rc;
    return romio(rc, NULL);
}

/* ---- collective steps ------------------------------------------------------
 * A collective file call is a collective kind (coll.h) run by the blocking
 * driver: every local rank of the file's communicator describes its part
 * (`mine`), local index 0 runs the step's lead() once for the process with
 * all the parts, and every rank gets the lead's status.  That status comes
 * back through finish, not start: a lead makes its ROMIO calls whatever
 * failed before them, so its failure leaves no process out of step, and
 * must not mark the communicator broken as a failed start would. */

typedef ep_status_t lead_fn(ep_comm_t *c, void *const *all, void *arg);

typedef struct step {
    void *mine;
    lead_fn *lead;
    void *arg;        /* local index 0's is the one used */
    ep_status_t done; /* local index 0's: what its lead returned */
} step_t;

static ep_status_t step_start(ep_coll_inst_t *in)
{
    step_t *s0 = in->args[0]->extra;
    void **all = in->scratch[0] = malloc(sizeof *all * (size_t)in->c->nlocal); /* freed with the instance */
    if (!all)
        return EP_ERR_NO_MEM;
    for (int j = 0; j < in->c->nlocal; j++)
        all[j] = ((step_t *)in->args[j]->extra)->mine;
    s0->done = s0->lead(in->c, all, s0->arg);
    return EP_OK;
}

static ep_status_t step_finish(ep_coll_inst_t *in, int lidx)
{
    (void)lidx;
    return ((step_t *)in->args[0]->extra)->done;
}

static const ep_coll_kind_t step_kind = {.start = step_start, .finish = step_finish};

static ep_status_t meet(ep_endpoint_t *d, void *mine, lead_fn *lead, void *arg)
{
    step_t s = {mine, lead, arg, EP_OK};
    ep_coll_args_t a;
    ep_coll_args_init(&a, &step_kind, d);
    a.extra = &s;
    return ep_coll_run(d, &a);
}

static ep_status_t proc_barrier(ep_file_proc_t *p)
{
    MPI_Request req;
    if (p->nprocs == 1)
        return EP_OK;
    return ep_wait_pmpi_started(PMPI_Ibarrier(p->pc, &req), &req) == MPI_SUCCESS ? EP_OK : EP_ERR_INTERN;
}

/* ---- the shared file pointer ---------------------------------------------- */

/* Adds n to the shared file pointer; *old gets its value before. */
static ep_status_t sfp_add(ep_file_proc_t *p, MPI_Offset n, MPI_Offset *old)
{
    if (p->nprocs == 1) {
        *old = atomic_fetch_add(&p->sfp, n);
        return EP_OK;
    }
    pthread_mutex_lock(&p->sfp_lock);
    int rc = PMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, p->sfp_win);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Fetch_and_op(&n, old, MPI_OFFSET, 0, 0, MPI_SUM, p->sfp_win);
        int u = PMPI_Win_unlock(0, p->sfp_win);
        rc = rc ? rc : u;
    }
    pthread_mutex_unlock(&p->sfp_lock);
    return rc == MPI_SUCCESS ? EP_OK : EP_ERR_INTERN;
}

/* Sets it (one caller in the whole file: process 0's leader). */
static ep_status_t sfp_set(ep_file_proc_t *p, MPI_Offset v)
{
    MPI_Offset old;
    if (p->nprocs == 1) {
        atomic_store(&p->sfp, v);
        return EP_OK;
    }
    pthread_mutex_lock(&p->sfp_lock);
    int rc = PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, p->sfp_win);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Fetch_and_op(&v, &old, MPI_OFFSET, 0, 0, MPI_REPLACE, p->sfp_win);
        int u = PMPI_Win_unlock(0, p->sfp_win);
        rc = rc ? rc : u;
    }
    pthread_mutex_unlock(&p->sfp_lock);
    return rc == MPI_SUCCESS ? EP_OK : EP_ERR_INTERN;
}

ep_status_t ep_file_shared_position(ep_file_t *f, MPI_Offset *pos) { return sfp_add(f->proc, 0, pos); }

/* ---- views ------------------------------------------------------------------ */

void ep_file_view_free(ep_file_view_t *v)
{
    if (v->etype != MPI_DATATYPE_NULL && ep_datatype_builtin_size(v->etype) <= 0)
        PMPI_Type_free(&v->etype);
    if (v->filetype != MPI_DATATYPE_NULL && ep_datatype_builtin_size(v->filetype) <= 0)
        PMPI_Type_free(&v->filetype);
    free(v->run_off), free(v->run_len), free(v->run_pos);
    memset(v, 0, sizeof *v);
    v->etype = v->filetype = MPI_DATATYPE_NULL;
}

/* A copy the view owns: predefined types as they are, derived ones dup'd. */
static int keep_type(MPI_Datatype t, MPI_Datatype *out)
{
    if (ep_datatype_builtin_size(t) > 0) {
        *out = t;
        return MPI_SUCCESS;
    }
    return PMPI_Type_dup(t, out);
}

/* MPI-4.0 14.3: the displacements of an etype's and a filetype's typemap
 * must be non-negative and non-decreasing, and, in a file open for
 * writing, the regions must not overlap; ROMIO's class for these is
 * MPI_ERR_IO.  r: one instance of the type, as runs (typemap.h). */
static ep_status_t typemap_fault(const ep_runs_t *r, const char *which, int writable)
{
    for (int i = 0; i < r->n; i++) {
        const char *what = NULL;
        if (r->off[i] < 0)
            what = "a negative displacement";
        else if (i && r->off[i] < r->off[i - 1])
            what = "decreasing displacements";
        else if (writable && i && r->off[i] < r->off[i - 1] + r->len[i - 1])
            what = "overlapping regions";
        if (what) {
            ep_status_explain(EP_ERR_VIEW,
                              "the %s has %s (a file view needs non-negative, non-decreasing, "
                              "non-overlapping displacements)",
                              which, what);
            return EP_ERR_VIEW;
        }
    }
    return EP_OK;
}

/* One instance of t (which: its role in the view) as runs of bytes. */
static ep_status_t typemap(MPI_Datatype t, const char *which, ep_runs_t *r)
{
    ep_status_t rc = ep_typemap_runs(t, 0, 1, r);
    if (rc == EP_ERR_TYPE && r->unpacked)
        ep_status_explain(EP_ERR_TYPE,
                          "the file view's %s spans %lld bytes, more than the %d epmpi can lay out for this "
                          "kind of type (build it from vector, indexed, struct, subarray or resized types)",
                          which, (long long)r->unpacked, EP_TYPEMAP_PACK_MAX);
    return rc;
}

ep_status_t ep_file_view_make(ep_file_view_t *v, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                              int writable)
{
    MPI_Count esize, fsize, lb, ext;
    ep_runs_t r = {0};
    memset(v, 0, sizeof *v);
    v->etype = v->filetype = MPI_DATATYPE_NULL;
    if (PMPI_Type_size_x(etype, &esize) || PMPI_Type_size_x(filetype, &fsize) ||
        PMPI_Type_get_extent_x(filetype, &lb, &ext))
        return EP_ERR_TYPE;
    if (esize <= 0 || fsize <= 0 || fsize % esize) {
        ep_status_explain(EP_ERR_ARG,
                          "the filetype (%lld bytes of data) must hold a whole, non-zero number of "
                          "etypes (%lld bytes)",
                          (long long)fsize, (long long)esize);
        return EP_ERR_ARG;
    }
    ep_runs_t er = {0};
    ep_status_t rc = typemap(etype, "etype", &er);
    if (!rc)
        rc = typemap_fault(&er, "etype", writable);
    ep_runs_free(&er);
    if (!rc)
        rc = typemap(filetype, "filetype", &r);
    if (!rc)
        rc = typemap_fault(&r, "filetype", writable);
    if (!rc && (keep_type(etype, &v->etype) || keep_type(filetype, &v->filetype)))
        rc = EP_ERR_TYPE;
    if (!rc && !(v->run_pos = malloc(sizeof *v->run_pos * (size_t)r.n)))
        rc = EP_ERR_NO_MEM;
    v->run_off = r.off;
    v->run_len = r.len;
    v->nrun = r.n;
    if (rc) {
        ep_file_view_free(v);
        return rc;
    }
    for (int i = 0; i < r.n; i++)
        v->run_pos[i] = i ? v->run_pos[i - 1] + r.len[i - 1] : 0;
    v->disp = disp;
    v->esize = esize;
    v->size = fsize;
    v->extent = ext;
    return EP_OK;
}

/* The byte of the file where byte b of the view's data lies. */
MPI_Offset ep_file_view_byte(const ep_file_view_t *v, int64_t b, int *run)
{
    int64_t tile = b / v->size, rem = b % v->size;
    int lo = 0, hi = v->nrun - 1; /* the last run starting at or before rem */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (v->run_pos[mid] <= rem)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (run)
        *run = lo;
    return v->disp + tile * v->extent + v->run_off[lo] + (rem - v->run_pos[lo]);
}

MPI_Offset ep_file_byte_offset(const ep_file_t *f, MPI_Offset offset)
{
    return ep_file_view_byte(&f->view, offset * f->view.esize, NULL);
}

/* Bytes of the view's data that lie before byte x of the file. */
int64_t ep_file_view_data_before(const ep_file_view_t *v, MPI_Offset x)
{
    if (x <= v->disp)
        return 0;
    int64_t rel = x - v->disp, tile = rel / v->extent, rem = rel % v->extent, n = tile * v->size;
    for (int i = 0; i < v->nrun; i++) {
        int64_t in = rem - v->run_off[i];
        n += in <= 0 ? 0 : in < v->run_len[i] ? in : v->run_len[i];
    }
    return n;
}

/* ---- pieces: an access as bytes of the file ---------------------------------- */

typedef struct piece {
    MPI_Offset off; /* in the file */
    int64_t len;
    int64_t pos; /* in the access's packed data */
} piece_t;

typedef struct pieces {
    piece_t *p;
    int n;
    size_t cap;
} pieces_t;

static ep_status_t piece_add(pieces_t *ps, MPI_Offset off, int64_t len, int64_t pos)
{
    if (ps->n && ps->p[ps->n - 1].off + ps->p[ps->n - 1].len == off) {
        ps->p[ps->n - 1].len += len;
        return EP_OK;
    }
    if (!EP_GROW(ps->p, ps->n, ps->cap, 8))
        return EP_ERR_NO_MEM;
    ps->p[ps->n++] = (piece_t){off, len, pos};
    return EP_OK;
}

/* The file bytes of `bytes` bytes of the view's data from data byte b. */
static ep_status_t view_pieces(const ep_file_view_t *v, int64_t b, int64_t bytes, pieces_t *ps)
{
    int64_t done = 0;
    if (v->nrun == 1 && v->run_len[0] == v->extent) /* dense: one piece */
        return bytes ? piece_add(ps, ep_file_view_byte(v, b, NULL), bytes, 0) : EP_OK;
    while (done < bytes) {
        int run;
        MPI_Offset at = ep_file_view_byte(v, b + done, &run);
        int64_t rem = (b + done) % v->size - v->run_pos[run], left = v->run_len[run] - rem;
        int64_t n = left < bytes - done ? left : bytes - done;
        ep_status_t rc = piece_add(ps, at, n, done);
        if (rc)
            return rc;
        done += n;
    }
    return EP_OK;
}

/* ---- data access -------------------------------------------------------------- */

/* One endpoint's part of an access. */
typedef struct part {
    ep_file_t *f;
    pieces_t ps;
    char *data;    /* the data: the caller's buffer, or a packed copy of it */
    int64_t bytes; /* asked */
    int64_t got;   /* moved (reads: the prefix that was in the file) */
    int read;
} part_t;

/* ROMIO's large-count calls (MPICH 4.0) still assert count <= INT_MAX:
 * byte counts to ROMIO stay within this, larger data goes in steps or as
 * one element of a type of its bytes. */
#define EP_FILE_ROMIO_STEP ((int64_t)1 << 30)

/* Reads or writes the pieces of one endpoint, one ROMIO call per piece
 * (per step of a larger one). */
static ep_status_t independent(ep_file_t *f, part_t *pt)
{
    MPI_File fh = f->proc->fh;
    pt->got = 0;
    for (int i = 0; i < pt->ps.n; i++) {
        piece_t *q = &pt->ps.p[i];
        for (int64_t done = 0; done < q->len;) {
            int64_t len = q->len - done < EP_FILE_ROMIO_STEP ? q->len - done : EP_FILE_ROMIO_STEP;
            char *at = pt->data + q->pos + done;
            MPI_Status st;
            MPI_Count n = 0;
            int rc = pt->read ? ep_pmpi_file_read_at_c(fh, q->off + done, at, len, MPI_BYTE, &st)
                              : ep_pmpi_file_write_at_c(fh, q->off + done, at, len, MPI_BYTE, &st);
            if (rc != MPI_SUCCESS)
                return romio(rc, &f->romio_code);
            ep_pmpi_get_count_c(&st, MPI_BYTE, &n);
            pt->got += n;
            done += n;
            if (n < len) /* the end of the file */
                return EP_OK;
        }
    }
    return EP_OK;
}

/* A union segment of the process's collective access. */
typedef struct seg {
    MPI_Offset off;
    int64_t len, stage; /* its place in the data, in file order */
} seg_t;

/* A piece of one local part, and where its bytes are. */
typedef struct ref {
    const piece_t *q;
    char *data;
} ref_t;

static int cmp_ref(const void *a, const void *b)
{
    const piece_t *x = ((const ref_t *)a)->q, *y = ((const ref_t *)b)->q;
    return (x->off > y->off) - (x->off < y->off);
}

/* Where piece q's bytes come in the data of the access taken in file order
 * (the staging buffer, when there is one): after the union segments
 * before the one that holds its first byte. */
static int64_t stage_of(const seg_t *s, int ns, const piece_t *q)
{
    int lo = 0, hi = ns - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (s[mid].off <= q->off)
            lo = mid;
        else
            hi = mid - 1;
    }
    return s[lo].stage + (q->off - s[lo].off);
}

/* *t: the bytes of n blocks (at[i], len[i]), in blocks of at most INT_MAX
 * bytes for MPI_Type_create_hindexed. */
static ep_status_t bytes_type(int n, const MPI_Aint *at, const int64_t *len, MPI_Datatype *t)
{
    int nb = 0;
    for (int i = 0; i < n; i++)
        nb += (int)((len[i] + INT32_MAX - 1) / INT32_MAX);
    int *bl = malloc(sizeof *bl * (size_t)(nb + 1));
    MPI_Aint *bd = malloc(sizeof *bd * (size_t)(nb + 1));
    ep_status_t rc = bl && bd ? EP_OK : EP_ERR_NO_MEM;
    for (int i = 0, b = 0; i < n && !rc; i++)
        for (int64_t o = 0; o < len[i]; o += INT32_MAX, b++) {
            bd[b] = at[i] + (MPI_Aint)o;
            bl[b] = (int)(len[i] - o < INT32_MAX ? len[i] - o : INT32_MAX);
        }
    if (!rc && PMPI_Type_create_hindexed(nb, bl, bd, MPI_BYTE, t) != MPI_SUCCESS)
        rc = EP_ERR_INTERN;
    else if (!rc && PMPI_Type_commit(t) != MPI_SUCCESS)
        PMPI_Type_free(t), rc = EP_ERR_INTERN;
    free(bl), free(bd);
    return rc;
}

/* Run by local index 0 for a collective access: one ROMIO collective call
 * over a view of the union of every local part's pieces.  Pieces that do
 * not overlap go between ROMIO and their parts' data in place (below);
 * overlapping ones (reads of the same bytes, say) through one staged copy
 * of the union. */
static ep_status_t collective_lead(ep_comm_t *c, void *const *all, void *arg)
{
    ep_file_proc_t *p = arg;
    part_t *const *parts = (part_t *const *)all;
    int read = parts[0]->read, np = 0, ns = 0, overlap = 0, code = MPI_SUCCESS;
    for (int j = 0; j < c->nlocal; j++)
        np += parts[j]->ps.n;
    ref_t *refs = malloc(sizeof *refs * (size_t)(np + 1));
    seg_t *seg = malloc(sizeof *seg * (size_t)(np + 1));
    MPI_Aint *at = malloc(sizeof *at * (size_t)(np + 1));
    int64_t *len = malloc(sizeof *len * (size_t)(np + 1));
    ep_status_t rc = refs && seg && at && len ? EP_OK : EP_ERR_NO_MEM;
    for (int j = 0, k = 0; j < c->nlocal && !rc; j++)
        for (int i = 0; i < parts[j]->ps.n; i++)
            refs[k++] = (ref_t){&parts[j]->ps.p[i], parts[j]->data + parts[j]->ps.p[i].pos};
    if (!rc)
        qsort(refs, (size_t)np, sizeof *refs, cmp_ref);
    int64_t total = 0;
    for (int k = 0; k < np && !rc; k++) {
        const piece_t *q = refs[k].q;
        if (ns && q->off <= seg[ns - 1].off + seg[ns - 1].len) { /* overlaps or touches the last one */
            int64_t end = q->off + q->len - seg[ns - 1].off;
            overlap |= q->off < seg[ns - 1].off + seg[ns - 1].len;
            if (end > seg[ns - 1].len) {
                total += end - seg[ns - 1].len;
                seg[ns - 1].len = end;
            }
        } else {
            seg[ns++] = (seg_t){q->off, q->len, total};
            total += q->len;
        }
    }
    /* In place: writes through a memory type of the pieces' addresses, or
     * one block of memory; reads only into one block, since ROMIO (MPICH
     * 4.0.2) reads into a memory type of several blocks far slower than
     * into a staged copy. */
    int one_block = np > 0;
    for (int k = 1; k < np && one_block; k++)
        one_block = refs[k - 1].data + refs[k - 1].q->len == refs[k].data;
    char *stage = NULL;
    if (!rc && (overlap || (read && !one_block)) && !(stage = malloc((size_t)total + 1)))
        rc = EP_ERR_NO_MEM;
    if (!rc && stage && !read) /* part by part: a later one's bytes win */
        for (int j = 0; j < c->nlocal; j++)
            for (int i = 0; i < parts[j]->ps.n; i++) {
                const piece_t *q = &parts[j]->ps.p[i];
                memcpy(stage + stage_of(seg, ns, q), parts[j]->data + q->pos, (size_t)q->len);
            }
    /* The file type (the segments) and the memory type. */
    MPI_Datatype ft = MPI_BYTE, mt = MPI_BYTE;
    void *mem = stage ? stage : one_block ? refs[0].data : MPI_BOTTOM;
    MPI_Count want = 0;
    for (int s = 0; s < ns && !rc; s++)
        at[s] = (MPI_Aint)seg[s].off, len[s] = seg[s].len;
    if (!rc && total > 0 && !(rc = bytes_type(ns, at, len, &ft))) {
        if (mem == MPI_BOTTOM) {
            for (int k = 0; k < np; k++) {
                PMPI_Get_address(refs[k].data, &at[k]);
                len[k] = refs[k].q->len;
            }
            if (!(rc = bytes_type(np, at, len, &mt)))
                want = 1;
        } else if (total > EP_FILE_ROMIO_STEP) { /* one element of a type of its bytes */
            if (ep_pmpi_type_contiguous_c(total, MPI_BYTE, &mt) || PMPI_Type_commit(&mt))
                rc = EP_ERR_INTERN;
            else
                want = 1;
        } else {
            want = total;
        }
    }
    if (rc)
        want = 0;
    /* Every process makes the same three ROMIO calls, whatever failed
     * here, so that none is left waiting. */
    MPI_Count n = 0;
    MPI_Status st;
    int r1 = PMPI_File_set_view(p->fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL);
    int r2 = read ? ep_pmpi_file_read_at_all_c(p->fh, 0, mem, want, mt, &st)
                  : ep_pmpi_file_write_at_all_c(p->fh, 0, mem, want, mt, &st);
    int r3 = PMPI_File_set_view(p->fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    if (ft != MPI_BYTE)
        PMPI_Type_free(&ft);
    if (mt != MPI_BYTE)
        PMPI_Type_free(&mt);
    code = r1 ? r1 : r2 ? r2 : r3;
    if (!rc && code)
        rc = EP_ERR_IO;
    if (!rc)
        ep_pmpi_get_count_c(&st, MPI_BYTE, &n);
    /* Each part moved the prefix of its pieces that lies in the first n
     * bytes in file order (reads stop at the end of the file). */
    for (int j = 0; j < c->nlocal; j++) {
        part_t *pt = parts[j];
        pt->got = 0;
        if (code)
            pt->f->romio_code = code;
        for (int i = 0; i < pt->ps.n && !rc; i++) {
            const piece_t *q = &pt->ps.p[i];
            int64_t from = stage_of(seg, ns, q), have = n - from < q->len ? n - from : q->len;
            if (have <= 0)
                break;
            if (read && stage)
                memcpy(pt->data + q->pos, stage + from, (size_t)have);
            pt->got += have;
            if (have < q->len)
                break;
        }
    }
    free(refs), free(seg), free(at), free(len), free(stage);
    return rc;
}

/* The offset, in etypes, an access of `etypes` etypes starts at: the
 * individual pointer, or the shared one (moved past it); ordered accesses
 * take their place in rank order (a collective step). */
static ep_status_t where(ep_file_t *f, int how, MPI_Offset etypes, MPI_Offset *at)
{
    ep_coll_args_t a;
    MPI_Offset before = 0, total = 0, base = 0;
    ep_status_t rc;
    switch (how & EP_FILE_WHERE) {
    case EP_FILE_INDIVIDUAL:
        *at = f->pos;
        return EP_OK;
    case EP_FILE_SHARED:
        return sfp_add(f->proc, etypes, at);
    case EP_FILE_ORDERED:
        ep_coll_scan(&a, f->ep, &etypes, &before, 1, MPI_OFFSET, MPI_SUM, 1);
        if ((rc = ep_coll_run(f->ep, &a)))
            return rc;
        ep_coll_reduce(&a, f->ep, &etypes, &total, 1, MPI_OFFSET, MPI_SUM, 1, 0);
        if ((rc = ep_coll_run(f->ep, &a)))
            return rc;
        if (ep_local_rank(f->ep) == 0 && (rc = sfp_add(f->proc, total, &base)))
            return rc;
        ep_coll_bcast(&a, f->ep, &base, 1, MPI_OFFSET, 0);
        if ((rc = ep_coll_run(f->ep, &a)))
            return rc;
        *at = base + (ep_local_rank(f->ep) ? before : 0);
        return EP_OK;
    }
    return EP_OK;
}

/* ---- the "external32" data representation --------------------------------------
 *
 * Data in the file in MPI's portable representation: big-endian, each
 * predefined type of a fixed size.  Endpoint files convert the bytes of
 * each element (MPICH's MPI_Pack_external) and keep the native layout, so
 * they take the types whose external32 size is their size in memory (all
 * but a few, such as MPI_LONG on 64-bit Linux): the view and the data then
 * cover the same bytes in both representations. */

int ep_file_external32_fits(MPI_Datatype t, int count, int64_t bytes)
{
    MPI_Aint ext = -1;
    return PMPI_Pack_external_size("external32", count, t, &ext) == MPI_SUCCESS && ext == bytes;
}

static ep_status_t ext32_pack(const void *buf, int count, MPI_Datatype t, char *out, int64_t bytes)
{
    MPI_Aint pos = 0;
    return PMPI_Pack_external("external32", buf, count, t, out, (MPI_Aint)bytes, &pos) == MPI_SUCCESS ? EP_OK
                                                                                                      : EP_ERR_DATAREP;
}

/* Unpacks what arrived, whole elements of t only (a short read). */
static ep_status_t ext32_unpack(const char *in, int64_t got, void *buf, int count, MPI_Datatype t,
                                const ep_dt_layout_t *l)
{
    MPI_Aint pos = 0;
    int whole = l->type_size ? (int)(got / l->type_size) : 0;
    if (whole > count)
        whole = count;
    return !whole || PMPI_Unpack_external("external32", in, (MPI_Aint)got, &pos, buf, whole, t) == MPI_SUCCESS
               ? EP_OK
               : EP_ERR_DATAREP;
}

ep_status_t ep_file_access(ep_file_t *f, int how, MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                           MPI_Status *st)
{
    ep_dt_layout_t l;
    part_t pt = {.f = f, .read = (how & EP_FILE_READ) != 0};
    int coll = (how & EP_FILE_COLL) || (how & EP_FILE_WHERE) == EP_FILE_ORDERED;
    ep_status_t rc = ep_dt_layout(type, count, &l);
    if (!rc && l.bytes % f->view.esize) {
        ep_status_explain(EP_ERR_ARG, "%lld bytes of data are not a whole number of etypes (%lld bytes each)",
                          (long long)l.bytes, (long long)f->view.esize);
        rc = EP_ERR_ARG;
    }
    MPI_Offset at = offset, etypes = rc ? 0 : l.bytes / f->view.esize;
    /* A collective access still takes part in its collective steps after a
     * local failure, with nothing to move. */
    if (rc && !coll)
        return rc;
    ep_status_t w = where(f, how, rc ? 0 : etypes, &at);
    rc = rc ? rc : w;
    pt.bytes = rc ? 0 : l.bytes;
    if (!rc && at < 0) {
        ep_status_explain(EP_ERR_ARG, "the offset %lld is negative", (long long)at);
        rc = EP_ERR_ARG;
        pt.bytes = 0;
    }
    if (!rc && pt.bytes && f->external32 && !ep_file_external32_fits(type, count, l.bytes))
        rc = EP_ERR_DATAREP, pt.bytes = 0;
    /* Contiguous data moves in place; other data, and any in external32,
     * through a packed copy. */
    char *packed = NULL;
    if (!rc && pt.bytes && l.contig && !f->external32)
        pt.data = (char *)buf + l.offset;
    else if (!rc && pt.bytes && !(pt.data = packed = malloc((size_t)pt.bytes)))
        rc = EP_ERR_NO_MEM, pt.bytes = 0;
    if (!rc && !pt.read && packed)
        rc = f->external32 ? ext32_pack(buf, count, type, packed, pt.bytes) : ep_dt_pack(buf, count, type, &l, packed);
    if (!rc && pt.bytes)
        rc = view_pieces(&f->view, at * f->view.esize, pt.bytes, &pt.ps);
    if (rc)
        pt.ps.n = 0;
    if (coll) {
        ep_status_t c = meet(f->ep, &pt, collective_lead, f->proc);
        rc = rc ? rc : c;
    } else if (!rc) {
        rc = independent(f, &pt);
    }
    if (!rc && pt.read && pt.got && packed)
        rc = f->external32 ? ext32_unpack(packed, pt.got, buf, count, type, &l)
                           : ep_dt_unpack(packed, pt.got, buf, count, type, &l);
    if (!rc && (how & EP_FILE_WHERE) == EP_FILE_INDIVIDUAL)
        f->pos = at + pt.got / f->view.esize;
    if (st)
        ep_mpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, rc ? 0 : pt.got, 0);
    free(packed);
    free(pt.ps.p);
    return rc;
}

/* ---- open, close, views, collective calls ------------------------------------ */

typedef struct open_arg {
    const char *name;
    int amode;
    MPI_Info info;
    ep_file_proc_t *proc; /* the result */
    int code;
} open_arg_t;

static ep_status_t open_lead(ep_comm_t *c, void *const *all, void *arg)
{
    open_arg_t *o = arg;
    ep_file_proc_t *p = calloc(1, sizeof *p);
    if (!p)
        return EP_ERR_NO_MEM;
    p->pc = c->pcomm != MPI_COMM_NULL ? c->pcomm : MPI_COMM_SELF;
    p->nprocs = c->nprocs;
    p->myproc = c->myproc;
    p->sfp_win = MPI_WIN_NULL;
    pthread_mutex_init(&p->sfp_lock, NULL);
    /* ROMIO's sequential mode would refuse the explicit offsets that every
     * access here becomes; the endpoint file keeps the mode (amode). */
    int rc = PMPI_File_open(p->pc, o->name, o->amode & ~MPI_MODE_SEQUENTIAL, o->info, &p->fh);
    if (rc != MPI_SUCCESS) {
        for (int j = 0; j < c->nlocal; j++)
            ((open_arg_t *)all[j])->code = rc;
        pthread_mutex_destroy(&p->sfp_lock);
        free(p);
        return EP_ERR_IO;
    }
    PMPI_File_set_errhandler(p->fh, MPI_ERRORS_RETURN); /* whatever the program made the default */
    if (p->nprocs > 1) {
        MPI_Offset *mem = NULL;
        rc = PMPI_Win_allocate(p->myproc == 0 ? sizeof *mem : 0, sizeof *mem, MPI_INFO_NULL, p->pc, &mem, &p->sfp_win);
        if (rc == MPI_SUCCESS && p->myproc == 0) {
            PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, p->sfp_win);
            *mem = 0;
            PMPI_Win_unlock(0, p->sfp_win);
        }
        if (rc == MPI_SUCCESS && proc_barrier(p)) /* zeroed before anyone adds */
            rc = MPI_ERR_INTERN;
        if (rc != MPI_SUCCESS) {
            PMPI_File_close(&p->fh);
            pthread_mutex_destroy(&p->sfp_lock);
            free(p);
            return EP_ERR_INTERN;
        }
    }
    for (int j = 0; j < c->nlocal; j++)
        ((open_arg_t *)all[j])->proc = p;
    return EP_OK;
}

ep_status_t ep_file_open(ep_endpoint_t *ep, const char *name, int amode, MPI_Info info, MPI_Errhandler eh,
                         ep_file_t **out, int *romio_code)
{
    MPI_Comm dh = MPI_COMM_NULL;
    *out = NULL;
    /* The file's own communicator: its collective steps stay apart from the
     * program's (a split: no attribute callbacks run). */
    ep_status_t rc = ep_comm_split(ep, 0, ep_local_rank(ep), &dh);
    if (rc)
        return rc;
    ep_endpoint_t *d = ep_endpoint_get(dh);
    open_arg_t o = {name, amode, info, NULL, MPI_SUCCESS};
    /* Local index 0 opens with its own arguments (MPI requires them alike)
     * and hands every local rank the result. */
    rc = meet(d, &o, open_lead, &o);
    ep_file_proc_t *p = o.proc;
    int code = o.code;
    ep_file_t *f = rc ? NULL : calloc(1, sizeof *f);
    if (!rc && !f)
        rc = EP_ERR_NO_MEM; /* the others have the file: it stays open until they close it */
    if (!rc) {
        f->obj.kind = EP_OBJ_FILE;
        f->ep = d;
        f->proc = p;
        f->amode = amode;
        ep_errhandler_assign(&f->errhandler, eh);
        rc = ep_file_view_make(&f->view, 0, MPI_BYTE, MPI_BYTE, 0);
        int h = rc ? 0 : ep_registry_add(EP_HTYPE_FILE, &f->obj);
        if (!rc && !h)
            rc = EP_ERR_NO_MEM;
        f->handle = ep_file_handle_make(h);
    }
    if (rc) {
        if (rc == EP_ERR_IO)
            *romio_code = code;
        if (f) {
            ep_errhandler_assign(&f->errhandler, MPI_ERRORS_RETURN);
            ep_file_view_free(&f->view);
            free(f);
        }
        ep_endpoint_free(d);
        return rc;
    }
    *out = f;
    return EP_OK;
}

static ep_status_t close_lead(ep_comm_t *c, void *const *all, void *arg)
{
    ep_file_proc_t *p = arg;
    if (p->sfp_win != MPI_WIN_NULL)
        PMPI_Win_free(&p->sfp_win);
    return romio_all(PMPI_File_close(&p->fh), c->nlocal, all);
}

ep_status_t ep_file_close(ep_file_t *f, int *romio_code)
{
    ep_endpoint_t *d = f->ep;
    ep_file_proc_t *p = f->proc;
    ep_status_t rc = meet(d, f, close_lead, p);
    if (rc == EP_ERR_IO)
        *romio_code = f->romio_code;
    if (d->lidx == 0 && rc != EP_ERR_NO_THREAD && rc != EP_ERR_SYNC_DEAD) {
        pthread_mutex_destroy(&p->sfp_lock);
        free(p);
    }
    ep_registry_remove(ep_file_handle_id(f->handle));
    ep_errhandler_assign(&f->errhandler, MPI_ERRORS_RETURN);
    ep_file_view_free(&f->view);
    free(f);
    ep_endpoint_free(d);
    return rc;
}

ep_status_t ep_file_set_view(ep_file_t *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype)
{
    ep_file_view_t v;
    ep_status_t made = ep_file_view_make(&v, disp, etype, filetype, !(f->amode & MPI_MODE_RDONLY));
    /* A new view puts the shared file pointer back at 0, in every process
     * (a collective step whatever failed here). */
    ep_status_t rc = ep_file_collective(f, EP_FILE_SEEK_SHARED, 0, MPI_SEEK_SET);
    if (made)
        return made;
    if (rc) {
        ep_file_view_free(&v);
        return rc;
    }
    ep_file_view_free(&f->view);
    f->view = v;
    f->pos = 0;
    return EP_OK;
}

typedef struct coll_arg {
    ep_file_coll_t what;
    MPI_Offset arg;
    int whence;
    ep_file_t *f;
} coll_arg_t;

static ep_status_t coll_lead(ep_comm_t *c, void *const *all, void *arg)
{
    coll_arg_t *a = arg;
    ep_file_proc_t *p = a->f->proc;
    ep_status_t rc = EP_OK;
    MPI_Offset cur = 0, size = 0;
    switch (a->what) {
    case EP_FILE_SET_SIZE:
        return romio_all(PMPI_File_set_size(p->fh, a->arg), c->nlocal, all);
    case EP_FILE_PREALLOCATE:
        return romio_all(PMPI_File_preallocate(p->fh, a->arg), c->nlocal, all);
    case EP_FILE_SYNC:
        return romio_all(PMPI_File_sync(p->fh), c->nlocal, all);
    case EP_FILE_SET_ATOMICITY:
        return romio_all(PMPI_File_set_atomicity(p->fh, (int)a->arg), c->nlocal, all);
    case EP_FILE_SET_INFO:
        return romio_all(PMPI_File_set_info(p->fh, (MPI_Info)a->arg), c->nlocal, all);
    case EP_FILE_SEEK_SHARED:
        /* Process 0 moves it between two barriers, from its leader's
         * arguments (MPI requires them alike). */
        rc = proc_barrier(p);
        if (!rc && c->myproc == 0) {
            if (a->whence == MPI_SEEK_CUR)
                rc = sfp_add(p, 0, &cur);
            else if (a->whence == MPI_SEEK_END && !(rc = romio_all(PMPI_File_get_size(p->fh, &size), c->nlocal, all)))
                cur = ep_file_view_data_before(&a->f->view, size) / a->f->view.esize;
            if (!rc && cur + a->arg < 0)
                rc = EP_ERR_ARG;
            if (!rc)
                rc = sfp_set(p, cur + a->arg);
        }
        ep_status_t b = proc_barrier(p);
        return rc ? rc : b;
    }
    return EP_OK;
}

ep_status_t ep_file_collective(ep_file_t *f, ep_file_coll_t what, MPI_Offset arg, int whence)
{
    coll_arg_t a = {what, arg, whence, f};
    return meet(f->ep, f, coll_lead, &a);
}

ep_status_t ep_file_size(ep_file_t *f, MPI_Offset *size)
{
    return romio(PMPI_File_get_size(f->proc->fh, size), &f->romio_code);
}

int ep_file_atomicity(ep_file_t *f)
{
    int flag = 0;
    PMPI_File_get_atomicity(f->proc->fh, &flag);
    return flag;
}

ep_status_t ep_file_seek(ep_file_t *f, MPI_Offset offset, int whence)
{
    MPI_Offset base = 0, size;
    ep_status_t rc;
    if (whence == MPI_SEEK_CUR)
        base = f->pos;
    else if (whence == MPI_SEEK_END) {
        if ((rc = ep_file_size(f, &size)))
            return rc;
        base = ep_file_view_data_before(&f->view, size) / f->view.esize;
    }
    if (base + offset < 0) {
        ep_status_explain(EP_ERR_ARG, "the file pointer would be %lld, before the start of the view",
                          (long long)(base + offset));
        return EP_ERR_ARG;
    }
    f->pos = base + offset;
    return EP_OK;
}
