/* Small helpers for the MPI test programs: failure reporting with the
 * rank, and the shape the test runs in. */
#ifndef EPTEST_H
#define EPTEST_H

#include "epmpi.h"
#include "have.gen.h" /* EP_HAVE_MPI_X: whether the MPI below has MPI_X (MPI-4's, say) */

#include <fcntl.h>
#include <mpi.h>
#include <omp.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPT_CHECK(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            int r_ = -1;                                                                           \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                    \
            fprintf(stderr, "FAIL %s:%d (world rank %d, thread %d): %s: ", __FILE__, __LINE__, r_, \
                    omp_get_thread_num(), #cond);                                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            fflush(stderr);                                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
            /* Never go on after a failed check, even if MPI_Abort returned. */                    \
            PMPI_Abort(MPI_COMM_WORLD, 1);                                                         \
        }                                                                                          \
    } while (0)

#define EPT_OK(call) EPT_CHECK((call) == MPI_SUCCESS, "%s failed", #call)

/* A handle in a message: "handle " EPT_HFMT, EPT_HARG(h).  MPICH's are
 * ints, Open MPI's pointers. */
#ifdef OPEN_MPI
#define EPT_HFMT "%p"
#define EPT_HARG(h) ((void *)(h))
#else
#define EPT_HFMT "0x%x"
#define EPT_HARG(h) ((unsigned)(h))
#endif

/* 1 when h is a handle epmpi made, 0 when the MPI made it.  MPICH: epmpi's
 * are ints of kind 00 with a non-zero payload.  Open MPI: epmpi's are
 * addresses in a range mapped with no access, which a write from them
 * (to a pipe) refuses with EFAULT; the MPI's are its objects. */
static inline int ept_is_endpoint_handle(const void *h_as_ptr, int h_as_int)
{
#ifdef OPEN_MPI
    (void)h_as_int;
    static int fds[2] = {-1, -1};
    if (fds[0] < 0 && pipe(fds) != 0)
        return -1;
    char byte;
    ssize_t n = write(fds[1], h_as_ptr, 1);
    if (n == 1 && read(fds[0], &byte, 1) != 1)
        return -1;
    return n < 0;
#else
    (void)h_as_ptr;
    return ((unsigned)h_as_int >> 30) == 0 && ((unsigned)h_as_int & 0x03ffffffu) != 0;
#endif
}
#ifdef OPEN_MPI
#define EPT_IS_EP_HANDLE(h) ept_is_endpoint_handle((const void *)(h), 0)
#else
#define EPT_IS_EP_HANDLE(h) ept_is_endpoint_handle(NULL, (int)(h))
#endif

/* The tests that move more than 2 GiB: 1 (after saying why) when they
 * should skip, on a machine of less than gb GB of memory, or under
 * EPMPI_TEST_HUGE=0 (CI's runs from the release tarball and under the
 * sanitizers, after the tree's run has covered them). */
static inline int ept_skip_huge(double gb)
{
    struct sysinfo si;
    const char *huge = getenv("EPMPI_TEST_HUGE");
    if (huge && !strcmp(huge, "0")) {
        fprintf(stderr, "skip: EPMPI_TEST_HUGE=0\n");
        return 1;
    }
    if (sysinfo(&si) == 0 && (double)si.totalram * si.mem_unit < gb * 1e9) {
        fprintf(stderr, "skip: needs %.0f GB of memory\n", gb);
        return 1;
    }
    return 0;
}

/* Endpoints per process in world mode (EPMPI_ENDPOINTS), 0 when off. */
static inline int ept_world_endpoints(void)
{
    const char *s = getenv("EPMPI_ENDPOINTS");
    return s ? atoi(s) : 0;
}

/* Skip (exit 77) unless world mode is on. */
static inline int ept_require_world(void)
{
    int t = ept_world_endpoints();
    if (t <= 0) {
        fprintf(stderr, "skip: needs world mode (EPMPI_ENDPOINTS)\n");
        exit(77);
    }
    return t;
}

/* MPI_Init_thread (MPI_THREAD_MULTIPLE) with what it writes to stderr
 * (EPMPI_VERBOSE's line) caught into line[size]. */
static inline void ept_init_caught(int *argc, char ***argv, char *line, size_t size)
{
    char path[] = "/tmp/epmpi-init-XXXXXX";
    int provided, fd = mkstemp(path), saved = dup(2);
    if (fd < 0 || saved < 0) {
        fprintf(stderr, "FAIL: no temporary file for MPI_Init's output\n");
        exit(1);
    }
    dup2(fd, 2);
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, line, size - 1, 0);
    line[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
}

/* This process's entry in a comma-separated list argument ("1,2,3"). */
static inline int ept_list_item(const char *list, int index)
{
    const char *p = list;
    for (int i = 0; i < index && p; i++) {
        p = strchr(p, ',');
        if (p)
            p++;
    }
    return p ? atoi(p) : 0;
}

/* ---- shapes, payloads and a watchdog, for tests that run in both world
 * mode and explicit shapes ------------------------------------------------ */

/* Provided by the preloaded libepmpi.so, not by the MPICH we link with. */
#pragma weak MPI_Comm_create_endpoints

/* Watchdog: a hang fails the shape quickly, naming the last phase entered. */
static const char *_Atomic phase = "MPI_Init";
#define PHASE(s) atomic_store(&phase, (s))
static inline void watchdog_fire(int sig)
{
    (void)sig;
    const char *p = atomic_load(&phase);
    static const char m[] = "FAIL: watchdog: the test is still running after its time limit; last phase entered: ";
    if (write(2, m, sizeof m - 1) < 0 || write(2, p, strlen(p)) < 0 || write(2, "\n", 1) < 0)
        _exit(3);
    _exit(3);
}
static inline void watchdog_arm(int secs)
{
    signal(SIGALRM, watchdog_fire);
    alarm((unsigned)secs);
}

/* This process's number of ranks: T in world mode, else its entry of the
 * comma-separated list in argv[1] (explicit shapes P:a,b,..). */
static inline int local_ranks(int argc, char **argv)
{
    int T = ept_world_endpoints();
    if (T > 0)
        return T;
    int wr;
    EPT_CHECK(argc > 1, "explicit shapes pass the endpoints per process as argv[1]");
    EPT_CHECK(MPI_Comm_create_endpoints != NULL, "MPI_Comm_create_endpoints is not available");
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    return ept_list_item(argv[1], wr);
}

/* Runs body(comm, arg) once per local rank, concurrently, one OpenMP thread
 * per rank: in world mode on MPI_COMM_WORLD; otherwise on the handles of a
 * communicator made with MPI_Comm_create_endpoints (thread i, handle i). */
static inline void run_ranks(int nlocal, void (*body)(MPI_Comm, void *), void *arg)
{
    if (ept_world_endpoints() > 0) {
#pragma omp parallel num_threads(nlocal)
        {
            EPT_CHECK(omp_get_num_threads() == nlocal, "%d threads, wanted %d", omp_get_num_threads(), nlocal);
            body(MPI_COMM_WORLD, arg);
        }
        return;
    }
    MPI_Comm *h = malloc(sizeof *h * (size_t)(nlocal > 0 ? nlocal : 1));
    EPT_CHECK(h, "out of memory");
    EPT_OK(MPI_Comm_create_endpoints(MPI_COMM_WORLD, nlocal, MPI_INFO_NULL, h));
    if (nlocal > 0) {
#pragma omp parallel num_threads(nlocal)
        {
            int t = omp_get_thread_num();
            EPT_CHECK(omp_get_num_threads() == nlocal, "%d threads, wanted %d", omp_get_num_threads(), nlocal);
            body(h[t], arg);
            EPT_OK(MPI_Comm_free(&h[t]));
        }
    }
    free(h);
}

/* 1 when communicator c reports hint key with value want (epmpi reports
 * epmpi_p2p_path and epmpi_transport, src/p2p/direct.h). */
static inline int ept_hint_is(MPI_Comm c, const char *key, const char *want)
{
    MPI_Info info;
    char val[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    EPT_OK(MPI_Comm_get_info(c, &info));
    EPT_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag));
    MPI_Info_free(&info);
    return flag && !strcmp(val, want);
}

/* MPI_STATUSES_IGNORE through a volatile, so that GCC does not take the
 * constant for a zero-length array (-Wstringop-overflow). */
static inline MPI_Status *statuses_ignore(void)
{
    static MPI_Status *volatile p = MPI_STATUSES_IGNORE;
    return p;
}

/* Payload byte i of a message identified by (a, b, c). */
static inline unsigned char pat(int a, int b, int c, size_t i)
{
    uint32_t x = (uint32_t)a * 2654435761u ^ (uint32_t)b * 40503u ^ (uint32_t)c * 97u ^ (uint32_t)i * 2246822519u;
    x ^= x >> 13;
    return (unsigned char)(x ^ (x >> 7) ^ (i >> 8));
}

static inline void fill(unsigned char *buf, size_t n, int a, int b, int c)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = pat(a, b, c, i);
}

/* Index of the first byte that differs from the pattern, or n. */
static inline size_t first_bad(const unsigned char *buf, size_t n, int a, int b, int c)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != pat(a, b, c, i))
            return i;
    return n;
}

/* This rank's place in a ring over comm: rank, size and both neighbours. */
static inline void ept_ring_place(MPI_Comm comm, int *me, int *n, int *left, int *right)
{
    EPT_OK(MPI_Comm_rank(comm, me));
    EPT_OK(MPI_Comm_size(comm, n));
    *left = (*me + *n - 1) % *n;
    *right = (*me + 1) % *n;
}

/* ---- shared helpers of the collective tests ------------------------------ */

/* Every rank's host name (gethostname), by rank of comm, in a block the
 * caller frees: what MPI_COMM_TYPE_SHARED groups by, on one machine and
 * across the simulated hosts of make check-multinode alike. */
#define EPT_HOST_LEN 64
typedef char ept_host_t[EPT_HOST_LEN];

static inline ept_host_t *ept_host_names(MPI_Comm comm)
{
    ept_host_t mine = {0};
    int n;
    EPT_CHECK(gethostname(mine, EPT_HOST_LEN - 1) == 0, "gethostname failed");
    EPT_OK(MPI_Comm_size(comm, &n));
    ept_host_t *all = calloc((size_t)n, sizeof *all);
    EPT_CHECK(all, "out of memory");
    EPT_OK(MPI_Allgather(mine, EPT_HOST_LEN, MPI_CHAR, all, EPT_HOST_LEN, MPI_CHAR, comm));
    return all;
}

/* A page of counters shared by all processes of the job (a shared-memory
 * file), to check what happens between processes independently of MPI.
 * Collective over the classic MPI_COMM_WORLD; munmap 4096 bytes to free. */
static inline _Atomic long *ept_shared_page(void)
{
    char path[64] = "";
    int me;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        snprintf(path, sizeof path, "/dev/shm/ept_shared_XXXXXX");
        int fd = mkstemp(path);
        if (fd < 0) {
            snprintf(path, sizeof path, "/tmp/ept_shared_XXXXXX");
            fd = mkstemp(path);
        }
        EPT_CHECK(fd >= 0, "cannot create the shared counter file");
        EPT_CHECK(ftruncate(fd, 4096) == 0, "ftruncate");
        close(fd);
    }
    /* MPICH's own MPI_COMM_WORLD, independent of the library under test. */
    PMPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    int fd = open(path, O_RDWR);
    EPT_CHECK(fd >= 0, "cannot open %s", path);
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    EPT_CHECK(p != MAP_FAILED, "mmap");
    close(fd);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        unlink(path);
    return p;
}

/* A non-commutative operation: products of 2x2 matrices modulo a prime. */
#define EPT_MAT_MOD 1000003LL
typedef struct {
    long long m[4];
} ept_mat_t;

static inline ept_mat_t ept_mat_mul(ept_mat_t a, ept_mat_t b)
{
    const long long p = EPT_MAT_MOD;
    return (ept_mat_t){{(a.m[0] * b.m[0] + a.m[1] * b.m[2]) % p, (a.m[0] * b.m[1] + a.m[1] * b.m[3]) % p,
                        (a.m[2] * b.m[0] + a.m[3] * b.m[2]) % p, (a.m[2] * b.m[1] + a.m[3] * b.m[3]) % p}};
}

/* As MPI calls it: inout = in op inout, in from the lower ranks. */
static inline void ept_mat_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    ept_mat_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = ept_mat_mul(a[i], b[i]);
}

/* The matrix datatype and the operation (free both with MPI's calls). */
static inline void ept_mat_create(MPI_Datatype *type, MPI_Op *op)
{
    EPT_OK(MPI_Type_contiguous(4, MPI_LONG_LONG, type));
    EPT_OK(MPI_Type_commit(type));
    EPT_OK(MPI_Op_create(ept_mat_op, 0, op));
}

/* The start of a test's main(): a watchdog of secs seconds, MPI_Init_thread
 * with MPI_THREAD_MULTIPLE; returns this process's number of ranks. */
static inline int ept_init(int *argc, char ***argv, int secs)
{
    int provided;
    watchdog_arm(secs);
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    EPT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    return local_ranks(*argc, *argv);
}

/* The whole main() of a test that runs body once per rank, in world mode or
 * on endpoints made from argv[1], with a watchdog of secs seconds. */
static inline int ept_main(int argc, char **argv, int secs, void (*body)(MPI_Comm, void *), void *arg)
{
    run_ranks(ept_init(&argc, &argv, secs), body, arg);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}

/* Set by ept_main_classic before the body runs: 1 when it runs on the
 * classic MPI_COMM_WORLD. */
static int ept_classic;

/* 1 when the MPI under the test is Open MPI, whose classic objects answer
 * a few calls otherwise than MPICH and epmpi's endpoints (each use says
 * how): the classic shapes then check the MPI's own answer, or skip. */
#ifdef OPEN_MPI
#define EPT_OPEN_MPI 1
#else
#define EPT_OPEN_MPI 0
#endif

/* The main() of a test whose expectations MPICH checks too: as ept_main in
 * world mode and explicit shapes; when every entry of argv[1] is 0 (or there
 * is no argv[1]), body runs once per process on the classic MPI_COMM_WORLD,
 * every call going straight to MPICH. */
static inline int ept_main_classic(int argc, char **argv, int secs, void (*body)(MPI_Comm, void *), void *arg)
{
    ept_classic = ept_world_endpoints() == 0 && (argc < 2 || strspn(argv[1], "0,") == strlen(argv[1]));
    if (!ept_classic)
        return ept_main(argc, argv, secs, body, arg);
    watchdog_arm(secs);
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    EPT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    body(MPI_COMM_WORLD, arg);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}

#endif
