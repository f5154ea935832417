/* MPI-IO on endpoint communicators (file.h). */
#include "io/file.h"
#include "abi/large.h"

#include "coll/coll.h"
#include "comm/comm_create.h"
#include "core/datatype.h"
#include "core/typemap.h"
#include "base/grow.h"
#include "base/wait.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

struct ep_file_proc {
    MPI_File fh; /* ROMIO's file, over pc, its view bytes */
    MPI_Comm pc; /* the file communicator's process-level one (MPI_COMM_SELF for one process) */
    int nprocs, myproc;
    _Atomic MPI_Offset sfp;   /* the shared file pointer, when nprocs is 1 */
    MPI_Win sfp_win;          /* else its window: one MPI_Offset at process 0 */
    pthread_mutex_t sfp_lock; /* one passive epoch at a time from this process */
    int fd;                   /* the process's own descriptor of the file (own_open), or -1 */
    int64_t own_min;          /* the shortest piece of a collective access it moves */
    _Atomic int atomic;       /* MPI_File_set_atomicity's mode */
    int coll_direct[2];       /* [read]: long pieces of collective accesses may leave ROMIO's collective */
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

/* Its finish only hands out the lead's status: the actor does that for
 * every endpoint, and nobody waits at a barrier after the lead. */
static const ep_coll_kind_t step_kind = {.start = step_start, .finish = step_finish, .copy_finish = 1};

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
    int64_t pos;   /* in the access's packed data */
    int64_t moved; /* by the access: bytes of it read or written */
    int done;      /* moved by its own endpoint before a collective access's meeting */
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
    ps->p[ps->n++] = (piece_t){off, len, pos, 0, 0};
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

/* ---- the process's own descriptor --------------------------------------------
 * ROMIO's calls from the threads of one process take turns (MPICH runs
 * each MPI-IO call under its global lock, the pread or pwrite included),
 * so endpoints that move their data through ROMIO move it one at a time.
 * Where ROMIO's file is a plain POSIX file, each process also opens it
 * itself, and endpoints move contiguous pieces with pread and pwrite, at
 * once: what ROMIO's UFS driver does for contiguous data, without the
 * lock.  Not in atomic mode (ROMIO locks byte ranges there), not on
 * network file systems whose clients cache (NFS, SMB), not behind a ROMIO
 * file system prefix other than ufs:, lustre: or gpfs:. */

/* A descriptor of the file ROMIO opened as name, or -1 where it is not
 * to be used; *local: the file system is a node's own (a disk's, memory),
 * where a pread costs less than a collective call of ROMIO's for pieces
 * of a few KiB (below). */
static int own_open(const char *name, int amode, int *local)
{
    const char *colon = strchr(name, ':'), *slash = strchr(name, '/');
    if (amode & MPI_MODE_SEQUENTIAL)
        return -1;
    if (colon && (!slash || colon < slash)) { /* a ROMIO file system prefix, as ROMIO reads names */
        size_t n = (size_t)(colon - name);
        if (!((n == 3 && !strncmp(name, "ufs", 3)) || (n == 6 && !strncmp(name, "lustre", 6)) ||
              (n == 4 && !strncmp(name, "gpfs", 4))))
            return -1;
        name = colon + 1;
    }
    int flags = amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR;
    int fd = open(name, flags | O_CLOEXEC);
    struct statfs fs;
    if (fd >= 0 && (fstatfs(fd, &fs) || fs.f_type == 0x6969 /* NFS */ || fs.f_type == 0x517b /* SMB */ ||
                    fs.f_type == (long)0xff534d42 /* CIFS */ || fs.f_type == (long)0xfe534d42 /* SMB2 */)) {
        close(fd);
        fd = -1;
    }
    static const long node_own[] = {0xef53 /* ext2-4 */,    0x58465342 /* xfs */,     (long)0x9123683e /* btrfs */,
                                    0x01021994 /* tmpfs */, 0x794c7630 /* overlay */, (long)0xf2f52010 /* f2fs */,
                                    0x2fc12fc1 /* zfs */,   (long)0x858458f6 /* ramfs */};
    *local = 0;
    for (size_t i = 0; fd >= 0 && i < sizeof node_own / sizeof *node_own; i++)
        *local |= (long)fs.f_type == node_own[i];
    return fd;
}

/* Whether collective accesses may move long pieces outside ROMIO's
 * collective call: not where the program asked ROMIO for collective
 * buffering ("romio_cb_read"/"romio_cb_write" "enable"), nor for writes
 * where it turned it off ("disable": ROMIO then writes without first
 * meeting the other processes, which the order of writes below needs). */
static void hints_learn(ep_file_proc_t *p)
{
    static const char *const key[2] = {"romio_cb_write", "romio_cb_read"};
    char val[MPI_MAX_INFO_VAL + 1];
    MPI_Info info;
    p->coll_direct[0] = p->coll_direct[1] = 1;
    if (PMPI_File_get_info(p->fh, &info) != MPI_SUCCESS)
        return;
    for (int read = 0; read < 2; read++) {
        int flag = 0;
        if (PMPI_Info_get(info, key[read], MPI_MAX_INFO_VAL, val, &flag) == MPI_SUCCESS && flag)
            p->coll_direct[read] = strcmp(val, "enable") && (read || strcmp(val, "disable"));
    }
    PMPI_Info_free(&info);
}

static int own_usable(const ep_file_proc_t *p) { return p->fd >= 0 && !atomic_load(&p->atomic); }

/* Moves piece q of data through the own descriptor; q->moved, short only
 * at the end of the file.  EP_OK, or why it failed (explained: the call,
 * the bytes, the system's reason). */
static ep_status_t own_move(int fd, int read, char *data, piece_t *q)
{
    while (q->moved < q->len) {
        int64_t left = q->len - q->moved;
        size_t chunk = left < EP_FILE_ROMIO_STEP ? (size_t)left : (size_t)EP_FILE_ROMIO_STEP;
        ssize_t n = read ? pread(fd, data + q->moved, chunk, q->off + q->moved)
                         : pwrite(fd, data + q->moved, chunk, q->off + q->moved);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (n == 0 && !read)) {
            int e = n < 0 ? errno : EIO;
            ep_status_t st = e == ENOSPC ? EP_ERR_FILE_SPACE : e == EDQUOT ? EP_ERR_FILE_QUOTA : EP_ERR_FILE_SYS;
            ep_status_explain(st, "%s of %zu bytes at offset %lld of the file failed: %s", read ? "pread" : "pwrite",
                              chunk, (long long)(q->off + q->moved), strerror(e));
            return st;
        }
        if (n == 0) /* the end of the file */
            break;
        q->moved += n;
    }
    return EP_OK;
}

/* Moves piece q of data with ROMIO calls of its own, in steps of at most
 * EP_FILE_ROMIO_STEP, through ROMIO's byte view; q->moved, short only at
 * the end of the file.  MPI_SUCCESS or ROMIO's code. */
static int romio_move(MPI_File fh, int read, char *data, piece_t *q)
{
    while (q->moved < q->len) {
        int64_t len = q->len - q->moved < EP_FILE_ROMIO_STEP ? q->len - q->moved : EP_FILE_ROMIO_STEP;
        MPI_Status st;
        MPI_Count got = 0;
        int rc = read ? ep_pmpi_file_read_at_c(fh, q->off + q->moved, data + q->moved, len, MPI_BYTE, &st)
                      : ep_pmpi_file_write_at_c(fh, q->off + q->moved, data + q->moved, len, MPI_BYTE, &st);
        if (rc != MPI_SUCCESS)
            return rc;
        ep_pmpi_get_count_c(&st, MPI_BYTE, &got);
        q->moved += got;
        if (got < len) /* the end of the file */
            break;
    }
    return MPI_SUCCESS;
}

/* Reads or writes the pieces of one endpoint: through the own descriptor,
 * else with ROMIO calls of their own; what moved is the prefix up to the
 * first piece that came short (the end of the file). */
static ep_status_t independent(ep_file_t *f, part_t *pt)
{
    int own = own_usable(f->proc);
    pt->got = 0;
    for (int i = 0; i < pt->ps.n; i++) {
        piece_t *q = &pt->ps.p[i];
        char *data = pt->data + q->pos;
        ep_status_t rc = own ? own_move(f->proc->fd, pt->read, data, q)
                             : romio(romio_move(f->proc->fh, pt->read, data, q), &f->romio_code);
        pt->got += q->moved;
        if (rc)
            return rc;
        if (q->moved < q->len)
            return EP_OK;
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
    piece_t *q;
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

/* A piece of a collective access at least this long leaves ROMIO's
 * collective call, as ROMIO itself moves a process's contiguous data when
 * the processes' accesses do not interleave: its endpoint moves it
 * through the process's own descriptor before the meeting (above), else
 * the meeting's lead moves it with ROMIO calls of its own.  In ROMIO's
 * collective call it would go through a memory type of several blocks,
 * which ROMIO (MPICH 4.0.2) copies through its 4 MiB sieve buffer, growing
 * the buffer piece by piece for a longer piece: a copy quadratic in the
 * piece's length (17 s for two pieces of 256 MiB).  Writes leave it before
 * ROMIO's call: ROMIO may read, fill in and write back a range with holes
 * (data sieving, two-phase I/O), which must find them there; every
 * process's call starts by meeting the others.  On a node's own file
 * system the own descriptor takes pieces from EP_FILE_OWN_MIN_LOCAL on:
 * ROMIO's collective call costs some microseconds (two barriers in its
 * views, an allgather, a 4 MiB sieve buffer), a pread of a few KiB less;
 * shorter pieces, which a strided view makes many of, stay with ROMIO's
 * sieve. */
#define EP_FILE_DIRECT_MIN ((int64_t)1 << 16)
#define EP_FILE_OWN_MIN_LOCAL ((int64_t)512)

/* The lead's long pieces (refs, in file order) moved with ROMIO calls of
 * their own, with the byte view.  A read that comes short has met the end
 * of the file: the pieces after it have nothing to read. */
static int lead_direct(MPI_File fh, int read, const ref_t *refs, int n)
{
    for (int k = 0; k < n; k++) {
        int rc = romio_move(fh, read, refs[k].data, refs[k].q);
        if (rc != MPI_SUCCESS || refs[k].q->moved < refs[k].q->len)
            return rc;
    }
    return MPI_SUCCESS;
}

/* The long pieces of an endpoint's part of a collective access moved
 * through the process's own descriptor, before the meeting (above). */
static ep_status_t own_long_pieces(ep_file_proc_t *p, part_t *pt)
{
    ep_status_t rc = EP_OK;
    if (!own_usable(p) || !p->coll_direct[pt->read])
        return EP_OK;
    for (int i = 0; i < pt->ps.n && !rc; i++) {
        piece_t *q = &pt->ps.p[i];
        if ((q->done = q->len >= p->own_min))
            rc = own_move(p->fd, pt->read, pt->data + q->pos, q);
    }
    return rc;
}

/* The order of collective_lead's refs when long pieces leave ROMIO's
 * collective call (EP_FILE_DIRECT_MIN, above): the others first, each
 * group in file order. */
static int cmp_ref_short_first(const void *a, const void *b)
{
    int xl = ((const ref_t *)a)->q->len >= EP_FILE_DIRECT_MIN, yl = ((const ref_t *)b)->q->len >= EP_FILE_DIRECT_MIN;
    return xl != yl ? xl - yl : cmp_ref(a, b);
}

/* Run by local index 0 for a collective access: one ROMIO collective call
 * over a view of the union of every local part's pieces that is still to
 * move (long ones may have moved already, or move here in calls of their
 * own: EP_FILE_DIRECT_MIN).  Pieces that do not overlap go between ROMIO
 * and their parts' data in place, through a memory type of their
 * addresses; overlapping ones (reads of the same bytes, say) through one
 * staged copy of the union. */
static ep_status_t collective_lead(ep_comm_t *c, void *const *all, void *arg)
{
    ep_file_proc_t *p = arg;
    part_t *const *parts = (part_t *const *)all;
    int read = parts[0]->read, np = 0, ns = 0, nc = 0, overlap = 0, code = MPI_SUCCESS;
    for (int j = 0; j < c->nlocal; j++)
        for (int i = 0; i < parts[j]->ps.n; i++)
            np += !parts[j]->ps.p[i].done;
    ref_t *refs = malloc(sizeof *refs * (size_t)(np + 1));
    seg_t *seg = malloc(sizeof *seg * (size_t)(np + 1));
    MPI_Aint *at = malloc(sizeof *at * (size_t)(np + 1));
    int64_t *len = malloc(sizeof *len * (size_t)(np + 1));
    ep_status_t rc = refs && seg && at && len ? EP_OK : EP_ERR_NO_MEM;
    np = 0;
    for (int j = 0; j < c->nlocal && !rc; j++)
        for (int i = 0; i < parts[j]->ps.n; i++)
            if (!parts[j]->ps.p[i].done)
                refs[np++] = (ref_t){&parts[j]->ps.p[i], parts[j]->data + parts[j]->ps.p[i].pos};
    if (!rc)
        qsort(refs, (size_t)np, sizeof *refs, cmp_ref);
    for (int64_t k = 0, end = 0; k < np && !rc; k++) { /* end: the furthest any piece before reaches */
        overlap |= k > 0 && refs[k].q->off < end;
        end = refs[k].q->off + refs[k].q->len > end ? refs[k].q->off + refs[k].q->len : end;
    }
    /* Where no pieces overlap, the long ones leave ROMIO's call: the
     * collective ones first, then the long ones, each in file order. */
    if (!rc && !overlap && p->coll_direct[read])
        qsort(refs, (size_t)np, sizeof *refs, cmp_ref_short_first);
    while (!rc && nc < np && (overlap || !p->coll_direct[read] || refs[nc].q->len < EP_FILE_DIRECT_MIN))
        nc++;
    int64_t total = 0;
    for (int k = 0; k < nc && !rc; k++) {
        const piece_t *q = refs[k].q;
        if (ns && q->off <= seg[ns - 1].off + seg[ns - 1].len) { /* overlaps or touches the last one */
            int64_t end = q->off + q->len - seg[ns - 1].off;
            if (end > seg[ns - 1].len) {
                total += end - seg[ns - 1].len;
                seg[ns - 1].len = end;
            }
        } else {
            seg[ns++] = (seg_t){q->off, q->len, total};
            total += q->len;
        }
    }
    char *stage = NULL;
    if (!rc && overlap && !(stage = malloc((size_t)total + 1)))
        rc = EP_ERR_NO_MEM;
    if (!rc && stage && !read) /* part by part: a later one's bytes win */
        for (int j = 0; j < c->nlocal; j++)
            for (int i = 0; i < parts[j]->ps.n; i++) {
                const piece_t *q = &parts[j]->ps.p[i];
                if (!q->done)
                    memcpy(stage + stage_of(seg, ns, q), parts[j]->data + q->pos, (size_t)q->len);
            }
    /* The file type (the segments) and the memory type: the stage, one
     * block of memory, or the pieces' addresses. */
    int one_block = nc > 0;
    for (int k = 1; k < nc && one_block; k++)
        one_block = refs[k - 1].data + refs[k - 1].q->len == refs[k].data;
    MPI_Datatype ft = MPI_BYTE, mt = MPI_BYTE;
    void *mem = stage ? stage : one_block ? refs[0].data : MPI_BOTTOM;
    MPI_Count want = 0;
    for (int s = 0; s < ns && !rc; s++)
        at[s] = (MPI_Aint)seg[s].off, len[s] = seg[s].len;
    if (!rc && total > 0 && !(rc = bytes_type(ns, at, len, &ft))) {
        if (mem == MPI_BOTTOM) {
            for (int k = 0; k < nc; k++) {
                PMPI_Get_address(refs[k].data, &at[k]);
                len[k] = refs[k].q->len;
            }
            if (!(rc = bytes_type(nc, at, len, &mt)))
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
    /* The long pieces first (above), then the same three ROMIO calls in
     * every process, whatever failed here, so that none is left waiting;
     * none where no process has anything left for them (they cost two
     * barriers and an allgather in ROMIO; this one small allreduce). */
    if (!rc && nc < np)
        code = lead_direct(p->fh, read, refs + nc, np - nc);
    int any = nc > 0, r1 = MPI_SUCCESS, r2 = MPI_SUCCESS, r3 = MPI_SUCCESS;
    MPI_Request req;
    if (p->nprocs > 1 &&
        (r1 = ep_wait_pmpi_started(PMPI_Iallreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, p->pc, &req), &req)))
        any = 0;
    MPI_Count n = 0;
    MPI_Status st;
    if (any) {
        r1 = PMPI_File_set_view(p->fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL);
        r2 = read ? ep_pmpi_file_read_at_all_c(p->fh, 0, mem, want, mt, &st)
                  : ep_pmpi_file_write_at_all_c(p->fh, 0, mem, want, mt, &st);
        r3 = PMPI_File_set_view(p->fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    }
    if (ft != MPI_BYTE)
        PMPI_Type_free(&ft);
    if (mt != MPI_BYTE)
        PMPI_Type_free(&mt);
    code = code ? code : r1 ? r1 : r2 ? r2 : r3;
    MPI_Offset size = INT64_MAX;
    if (!rc && !code && any) {
        ep_pmpi_get_count_c(&st, MPI_BYTE, &n);
        /* ROMIO counts a noncontiguous read whole even where it met the
         * end of the file (MPICH 4.0.2): the file's size tells. */
        if (read && n > 0 && PMPI_File_get_size(p->fh, &size) != MPI_SUCCESS)
            size = INT64_MAX;
    }
    if (!rc && code)
        rc = EP_ERR_IO;
    /* The collective pieces moved the prefix of the first n bytes in file
     * order, and reads what lies before the end of the file; each part, the
     * prefix of its pieces that moved whole, and what moved of the next. */
    for (int k = 0; k < nc && !rc; k++) {
        piece_t *q = refs[k].q;
        int64_t from = stage_of(seg, ns, q), have = n - from < q->len ? n - from : q->len;
        have = size - q->off < have ? size - q->off : have;
        q->moved = have > 0 ? have : 0;
        if (read && stage && have > 0)
            memcpy(refs[k].data, stage + from, (size_t)have);
    }
    for (int j = 0; j < c->nlocal; j++) {
        part_t *pt = parts[j];
        pt->got = 0;
        if (code)
            pt->f->romio_code = code;
        for (int i = 0; i < pt->ps.n && !rc; i++) {
            pt->got += pt->ps.p[i].moved;
            if (pt->ps.p[i].moved < pt->ps.p[i].len)
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
    /* A file of one process has no other process to meet in ROMIO's
     * collective call: its endpoints move their data on their own, at once,
     * as independent accesses do (unless the program asked ROMIO for
     * collective buffering, hints_learn). */
    if (coll && f->proc->nprocs == 1 && f->proc->coll_direct[pt.read])
        coll = 0;
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
    if (!rc && coll)
        rc = own_long_pieces(f->proc, &pt);
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
    int local = 0;
    p->fd = own_open(o->name, o->amode, &local);
    p->own_min = local ? EP_FILE_OWN_MIN_LOCAL : EP_FILE_DIRECT_MIN;
    hints_learn(p);
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
            if (p->fd >= 0)
                close(p->fd);
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
    if (p->fd >= 0) /* before ROMIO's close, which may delete the file */
        close(p->fd);
    p->fd = -1;
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
        rc = romio_all(PMPI_File_set_atomicity(p->fh, (int)a->arg), c->nlocal, all);
        if (!rc)
            atomic_store(&p->atomic, a->arg != 0);
        return rc;
    case EP_FILE_SET_INFO:
        rc = romio_all(PMPI_File_set_info(p->fh, (MPI_Info)a->arg), c->nlocal, all);
        hints_learn(p);
        return rc;
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
