/* Fault injection for tests: a library preloaded beside libepmpi.so that
 * makes some of epmpi's own allocations and PMPI calls fail.
 *
 * Only calls made from libepmpi.so's code fail (the caller's return
 * address lies in its text); MPICH, libgomp and the test program are left
 * alone.  The PMPI calls that can fail are those that start an operation
 * (a failed one started nothing, which is what MPICH's own failures look
 * like); calls that complete operations never fail, since MPICH would
 * still own their buffers.
 *
 * Settings (environment, read at the first intercepted call):
 *   EPMPI_FAULT_NTH=name:N[,name:N...]  fail the N-th call (from 1) of
 *        name (malloc, calloc, realloc, aligned_alloc, posix_memalign, one
 *        of the PMPI functions below, or one of the UCX functions below)
 *        made by libepmpi in this process (PMPI_Win_shared_query, a local
 *        call, counts as 1 element), or shm_open (the node inboxes'
 *        shared memory: -1 with EACCES, counting as 1), or pwrite (a
 *        file's own descriptor: -1 with ENOSPC, counting as 1);
 *   EPMPI_FAULT_ALLOC=P, EPMPI_FAULT_PMPI=P, EPMPI_FAULT_UCX=P  fail each
 *        allocation, each PMPI call, or each UCX call, with probability P
 *        (0 to 1);
 *   EPMPI_FAULT_SEED=S  seeds the random failures (mixed with the rank);
 *   EPMPI_FAULT_DELAY_MS=T  no random failure in the first T milliseconds;
 *   EPMPI_FAULT_MAX=K  at most K random failures per process (default 1);
 *   EPMPI_FAULT_MIN=M  only calls of at least M bytes (allocations) or M
 *        elements (PMPI calls) count and fail;
 *   EPMPI_FAULT_RANK=R  only in the process of rank R (PMI_RANK, or
 *                       OMPI_COMM_WORLD_RANK under Open MPI);
 *   EPMPI_FAULT_CORRUPT=F  the first message header epmpi sends (PMPI_Isend
 *        of MPI_BYTE with tag 0, net.c's ep_wire_hdr_t) goes out with field
 *        F spoilt: dst (the destination endpoint, 2^31-1), bytes (-5) or
 *        flags (0x40).
 * When built with UCX, the UCX calls that start a transfer or make a
 * connection fail too (ucp_tag_send_nbx, ucp_tag_send_sync_nbx,
 * ucp_tag_recv_nbx, ucp_tag_msg_recv_nbx with UCS_ERR_IO_ERROR before
 * reaching UCX, ucp_ep_create likewise); their amount is the bytes, and
 * a connection passes any EPMPI_FAULT_MIN.
 * Every failure is reported on stderr as "epfault: ...". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <limits.h>
#include <link.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef EP_HAVE_UCX
#include <ucp/api/ucp.h>
#define FAULT_UCX_FUNCS(X) \
    X(ucp_tag_send_nbx) X(ucp_tag_send_sync_nbx) X(ucp_tag_recv_nbx) X(ucp_tag_msg_recv_nbx) X(ucp_ep_create)
#else
#define FAULT_UCX_FUNCS(X)
#endif

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);

/* The intercepted functions, numbered, by group (each group has its own
 * random failure rate). */
#define FAULT_ALLOC_FUNCS(X) X(malloc) X(calloc) X(realloc) X(aligned_alloc) X(posix_memalign)
#define FAULT_PMPI_FUNCS(X) \
    X(PMPI_Isend)           \
    X(PMPI_Issend)          \
    X(PMPI_Irsend)          \
    X(PMPI_Isend_c) X(PMPI_Irecv) X(PMPI_Irecv_c) X(PMPI_Send) X(PMPI_Improbe) X(PMPI_Win_shared_query)
#define FAULT_SYS_FUNCS(X) X(shm_open) X(pwrite)
#define FAULT_FUNCS(X) FAULT_ALLOC_FUNCS(X) FAULT_PMPI_FUNCS(X) FAULT_UCX_FUNCS(X) FAULT_SYS_FUNCS(X)
enum {
#define X(f) F_##f,
    FAULT_FUNCS(X)
#undef X
        F_COUNT
};
static const char *const names[] = {
#define X(f) #f,
    FAULT_FUNCS(X)
#undef X
};
/* Where the groups start: the sizes of those before. */
#define ONE(f) +1
enum { F_FIRST_PMPI = 0 FAULT_ALLOC_FUNCS(ONE), F_FIRST_UCX = F_FIRST_PMPI FAULT_PMPI_FUNCS(ONE) };
#undef ONE

static _Atomic int state;          /* 0: not read, 1: reading, 2: ready */
static uintptr_t text_lo, text_hi; /* libepmpi.so's code */
static long nth[F_COUNT];          /* fail the nth call, 0: never */
static _Atomic long calls[F_COUNT];
static double p_alloc, p_pmpi, p_ucx;
static uint64_t seed;
static long delay_ns, max_random = 1, min_amount;
static int off;             /* EPMPI_FAULT_RANK names another process */
static const char *corrupt; /* EPMPI_FAULT_CORRUPT */
static _Atomic int corrupted;
static _Atomic long random_done;
static struct timespec t0;

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "libepmpi.so"))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            text_lo = info->dlpi_addr + ph->p_vaddr;
            text_hi = text_lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

static void read_settings(void)
{
    const char *s;
    if ((s = getenv("EPMPI_FAULT_NTH"))) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", s);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            char *colon = strchr(tok, ':');
            if (!colon)
                continue;
            *colon = 0;
            for (int f = 0; f < F_COUNT; f++)
                if (!strcmp(tok, names[f]))
                    nth[f] = atol(colon + 1);
        }
    }
    if ((s = getenv("EPMPI_FAULT_ALLOC")))
        p_alloc = atof(s);
    if ((s = getenv("EPMPI_FAULT_PMPI")))
        p_pmpi = atof(s);
    if ((s = getenv("EPMPI_FAULT_UCX")))
        p_ucx = atof(s);
    if ((s = getenv("EPMPI_FAULT_DELAY_MS")))
        delay_ns = atol(s) * 1000000L;
    if ((s = getenv("EPMPI_FAULT_MAX")))
        max_random = atol(s);
    corrupt = getenv("EPMPI_FAULT_CORRUPT");
    if ((s = getenv("EPMPI_FAULT_MIN")))
        min_amount = atol(s);
    /* the process's rank as the launcher gives it: hydra's, or Open MPI's */
    const char *rank = getenv("PMI_RANK") ? getenv("PMI_RANK") : getenv("OMPI_COMM_WORLD_RANK");
    if ((s = getenv("EPMPI_FAULT_RANK")) && rank && atol(s) != atol(rank))
        off = 1;
    seed = (s = getenv("EPMPI_FAULT_SEED")) ? strtoull(s, NULL, 10) : 1;
    if (rank)
        seed = seed * 1000003u + (uint64_t)atol(rank) + 1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
}

/* Ready once libepmpi.so is known; until then (and while reading the
 * settings, which may allocate) nothing fails. */
static int ready(void)
{
    int st = atomic_load_explicit(&state, memory_order_acquire);
    if (st == 2)
        return 1;
    if (st == 1)
        return 0;
    int zero = 0;
    if (!atomic_compare_exchange_strong(&state, &zero, 1))
        return 0;
    dl_iterate_phdr(find_lib, NULL);
    read_settings();
    atomic_store_explicit(&state, text_lo ? 2 : 0, memory_order_release);
    return text_lo != 0;
}

static double uniform(void)
{
    static __thread uint64_t x;
    if (!x)
        x = seed ^ ((uint64_t)(uintptr_t)&x * 0x9e3779b97f4a7c15u);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return (double)(x >> 11) / (double)(1ull << 53);
}

static int random_due(int f)
{
    double p = f >= F_FIRST_UCX ? p_ucx : f >= F_FIRST_PMPI ? p_pmpi : p_alloc;
    if (p <= 0)
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long el = (now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec);
    if (el < delay_ns || uniform() >= p)
        return 0;
    return atomic_fetch_add(&random_done, 1) < max_random;
}

/* Whether call f of `amount` bytes or elements, made from caller, fails. */
static int fails(int f, const void *caller, long amount)
{
    uintptr_t a = (uintptr_t)caller;
    if (!ready() || a < text_lo || a >= text_hi || off || amount < min_amount)
        return 0;
    long n = atomic_fetch_add(&calls[f], 1) + 1;
    if (n != nth[f] && !random_due(f))
        return 0;
    char msg[128];
    int len = snprintf(msg, sizeof msg, "epfault: failing %s (call %ld) in process %d\n", names[f], n, (int)getpid());
    if (write(2, msg, (size_t)len) < 0)
        return 1;
    return 1;
}

#define CALLER __builtin_return_address(0)

void *malloc(size_t n) { return fails(F_malloc, CALLER, (long)n) ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t size)
{
    return fails(F_calloc, CALLER, (long)(n * size)) ? NULL : __libc_calloc(n, size);
}
void *realloc(void *p, size_t n) { return fails(F_realloc, CALLER, (long)n) ? NULL : __libc_realloc(p, n); }
void *aligned_alloc(size_t align, size_t n)
{
    return fails(F_aligned_alloc, CALLER, (long)n) ? NULL : __libc_memalign(align, n);
}
int posix_memalign(void **out, size_t align, size_t n)
{
    if (fails(F_posix_memalign, CALLER, (long)n))
        return 12; /* ENOMEM */
    void *p = __libc_memalign(align, n);
    if (!p)
        return 12;
    *out = p;
    return 0;
}

/* PMPI calls: fail with MPI_ERR_OTHER before reaching MPICH. */
#define REAL(f) ((__typeof__(&f))real_fn(F_##f))
static void *real_fn(int f)
{
    static void *_Atomic fns[F_COUNT];
    void *p = atomic_load(&fns[f]);
    if (!p) {
        p = dlsym(RTLD_NEXT, names[f]);
        atomic_store(&fns[f], p);
    }
    return p;
}

/* net.c's header layout: ctx (8 bytes), src, dst, tag, flags, bytes (8). */
static void spoil(void *h)
{
    char *b = h;
    if (!strcmp(corrupt, "dst"))
        memcpy(b + 12, &(int32_t){INT32_MAX}, 4);
    else if (!strcmp(corrupt, "flags"))
        memcpy(b + 20, &(int32_t){0x40}, 4);
    else if (!strcmp(corrupt, "bytes"))
        memcpy(b + 24, &(int64_t){-5}, 8);
    static const char m[] = "epfault: spoiling a message header\n";
    if (write(2, m, sizeof m - 1) < 0)
        return;
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    const void *caller = CALLER;
    if (fails(F_PMPI_Isend, caller, (long)count))
        return MPI_ERR_OTHER;
    if (corrupt && !off && tag == 0 && t == MPI_BYTE && count >= 32 && (uintptr_t)caller >= text_lo &&
        (uintptr_t)caller < text_hi && !atomic_exchange(&corrupted, 1)) {
        spoil((void *)buf); /* epmpi's own header buffer, sent once */
    }
    return REAL(PMPI_Isend)(buf, count, t, dest, tag, comm, req);
}
int PMPI_Issend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return fails(F_PMPI_Issend, CALLER, (long)count) ? MPI_ERR_OTHER
                                                     : REAL(PMPI_Issend)(buf, count, t, dest, tag, comm, req);
}
int PMPI_Irsend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return fails(F_PMPI_Irsend, CALLER, (long)count) ? MPI_ERR_OTHER
                                                     : REAL(PMPI_Irsend)(buf, count, t, dest, tag, comm, req);
}
int PMPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    return fails(F_PMPI_Isend_c, CALLER, (long)count) ? MPI_ERR_OTHER
                                                      : REAL(PMPI_Isend_c)(buf, count, t, dest, tag, comm, req);
}
int PMPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *req)
{
    return fails(F_PMPI_Irecv, CALLER, (long)count) ? MPI_ERR_OTHER
                                                    : REAL(PMPI_Irecv)(buf, count, t, src, tag, comm, req);
}
int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *req)
{
    return fails(F_PMPI_Irecv_c, CALLER, (long)count) ? MPI_ERR_OTHER
                                                      : REAL(PMPI_Irecv_c)(buf, count, t, src, tag, comm, req);
}
int PMPI_Send(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    return fails(F_PMPI_Send, CALLER, (long)count) ? MPI_ERR_OTHER : REAL(PMPI_Send)(buf, count, t, dest, tag, comm);
}
int PMPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, MPI_Status *st)
{
    return fails(F_PMPI_Improbe, CALLER, 1) ? MPI_ERR_OTHER : REAL(PMPI_Improbe)(src, tag, comm, flag, msg, st);
}
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *unit, void *base)
{
    return fails(F_PMPI_Win_shared_query, CALLER, 1) ? MPI_ERR_OTHER
                                                     : REAL(PMPI_Win_shared_query)(win, rank, size, unit, base);
}

int shm_open(const char *name, int oflag, mode_t mode)
{
    if (fails(F_shm_open, CALLER, 1)) {
        errno = EACCES;
        return -1;
    }
    return REAL(shm_open)(name, oflag, mode);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (fails(F_pwrite, CALLER, 1)) {
        errno = ENOSPC;
        return -1;
    }
    return REAL(pwrite)(fd, buf, n, off);
}

#ifdef EP_HAVE_UCX
/* UCX calls: fail before reaching UCX, as UCX reports a broken transport. */
ucs_status_ptr_t ucp_tag_send_nbx(ucp_ep_h ep, const void *buf, size_t count, ucp_tag_t tag,
                                  const ucp_request_param_t *prm)
{
    return fails(F_ucp_tag_send_nbx, CALLER, (long)count) ? UCS_STATUS_PTR(UCS_ERR_IO_ERROR)
                                                          : REAL(ucp_tag_send_nbx)(ep, buf, count, tag, prm);
}
ucs_status_ptr_t ucp_tag_send_sync_nbx(ucp_ep_h ep, const void *buf, size_t count, ucp_tag_t tag,
                                       const ucp_request_param_t *prm)
{
    return fails(F_ucp_tag_send_sync_nbx, CALLER, (long)count) ? UCS_STATUS_PTR(UCS_ERR_IO_ERROR)
                                                               : REAL(ucp_tag_send_sync_nbx)(ep, buf, count, tag, prm);
}
ucs_status_ptr_t ucp_tag_recv_nbx(ucp_worker_h w, void *buf, size_t count, ucp_tag_t tag, ucp_tag_t mask,
                                  const ucp_request_param_t *prm)
{
    return fails(F_ucp_tag_recv_nbx, CALLER, (long)count) ? UCS_STATUS_PTR(UCS_ERR_IO_ERROR)
                                                          : REAL(ucp_tag_recv_nbx)(w, buf, count, tag, mask, prm);
}
ucs_status_ptr_t ucp_tag_msg_recv_nbx(ucp_worker_h w, void *buf, size_t count, ucp_tag_message_h msg,
                                      const ucp_request_param_t *prm)
{
    return fails(F_ucp_tag_msg_recv_nbx, CALLER, (long)count) ? UCS_STATUS_PTR(UCS_ERR_IO_ERROR)
                                                              : REAL(ucp_tag_msg_recv_nbx)(w, buf, count, msg, prm);
}
ucs_status_t ucp_ep_create(ucp_worker_h w, const ucp_ep_params_t *prm, ucp_ep_h *ep)
{
    return fails(F_ucp_ep_create, CALLER, LONG_MAX) ? UCS_ERR_IO_ERROR : REAL(ucp_ep_create)(w, prm, ep);
}
#endif
