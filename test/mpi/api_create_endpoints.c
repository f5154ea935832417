/* MPI_Comm_create_endpoints and MPIX_Comm_create_endpoints (no world mode;
 * argv[1] lists the endpoints each process asks for, by MPI_COMM_WORLD rank):
 *  - the new communicator has the sum of the counts as its size, and ranks
 *    follow parent rank, then handle index; handles are distinct and the
 *    array is not written past my_num_ep; 0 endpoints (NULL array) works;
 *  - point-to-point between every pair of ranks and Allreduce work on it;
 *  - a second level: endpoints created from an endpoint communicator, every
 *    parent endpoint asking for its own count (1 or 2; then 0, 1 or 2 with
 *    MPIX_ and a NULL array for 0), ranks again by parent rank then index;
 *  - the same driven from pthreads instead of OpenMP threads, with an info
 *    object, and endpoints of an endpoint communicator made from pthreads;
 *  - classic parents other than MPI_COMM_WORLD: one with the processes in
 *    reverse order (ranks follow the parent's order), and the even and odd
 *    processes creating endpoints of their own halves at the same time;
 *  - my_num_ep < 0 and a NULL array with my_num_ep > 0 give MPI_ERR_ARG with
 *    MPI_ERRORS_RETURN on the parent (classic and endpoint parents), raised
 *    on the parent's error handler and not on MPI_COMM_WORLD's;
 *  - every handle is freed with MPI_Comm_free, which sets it to MPI_COMM_NULL. */
#include "eptest.h"

#include <pthread.h>

/* Resolved at run time from the preloaded libepmpi.so. */
#pragma weak MPIX_Comm_create_endpoints

#define SENTINEL ((MPI_Comm)0x5a5a5a5a)

typedef int create_fn_t(MPI_Comm, int, MPI_Info, MPI_Comm[]);

static int nprocs, myproc;
static int *counts; /* endpoints asked for by each process */
static int total;   /* size of the level-1 communicator */
static int first;   /* this process's first level-1 rank */

/* Level-2 count asked for by level-1 rank r, in the two variants. */
static int level2_count(int variant, int r) { return variant == 0 ? 1 + r % 2 : (r + 1) % 3; }

/* Rank r's traffic and reductions on handle h of a communicator of size s:
 * every rank sends one message to every rank (itself included). */
static void exercise(MPI_Comm h, int exp_rank, int exp_size, const char *what)
{
    int r = -1, s = -1;
    EPT_OK(MPI_Comm_rank(h, &r));
    EPT_OK(MPI_Comm_size(h, &s));
    EPT_CHECK(r == exp_rank && s == exp_size, "%s: rank %d of %d, expected rank %d of %d", what, r, s, exp_rank,
              exp_size);
    int *out = malloc(sizeof(int) * (size_t)s), *in = malloc(sizeof(int) * (size_t)s);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)s);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * 2 * (size_t)s);
    EPT_CHECK(out && in && rq && sts, "out of memory");
    for (int d = 0; d < s; d++) {
        in[d] = -1;
        EPT_OK(MPI_Irecv(&in[d], 1, MPI_INT, d, d, h, &rq[d]));
    }
    for (int d = 0; d < s; d++) {
        out[d] = r * 1000 + d;
        EPT_OK(MPI_Isend(&out[d], 1, MPI_INT, d, r, h, &rq[s + d]));
    }
    EPT_OK(MPI_Waitall(2 * s, rq, sts));
    for (int d = 0; d < s; d++)
        EPT_CHECK(in[d] == d * 1000 + r, "%s: rank %d got %d from rank %d, expected %d", what, r, in[d], d,
                  d * 1000 + r);
    /* A blocking ring as well, with the source checked in the status. */
    int token = r, got = -1;
    MPI_Status st;
    EPT_OK(MPI_Sendrecv(&token, 1, MPI_INT, (r + 1) % s, 77, &got, 1, MPI_INT, MPI_ANY_SOURCE, 77, h, &st));
    EPT_CHECK(got == (r + s - 1) % s && st.MPI_SOURCE == got, "%s: ring: got %d from source %d", what, got,
              st.MPI_SOURCE);
    int sum = -1, max = -1;
    EPT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, h));
    EPT_CHECK(sum == s * (s - 1) / 2, "%s: sum of ranks %d, expected %d", what, sum, s * (s - 1) / 2);
    EPT_OK(MPI_Allreduce(&r, &max, 1, MPI_INT, MPI_MAX, h));
    EPT_CHECK(max == s - 1, "%s: max rank %d", what, max);
    EPT_OK(MPI_Barrier(h));
    free(out);
    free(in);
    free(rq);
    free(sts);
}

static void free_handle(MPI_Comm *h, const char *what)
{
    EPT_OK(MPI_Comm_free(h));
    EPT_CHECK(*h == MPI_COMM_NULL, "%s: MPI_Comm_free left the handle at " EPT_HFMT, what, EPT_HARG(*h));
}

/* Creates n endpoints of a communicator from the classic MPI_COMM_WORLD with
 * fn and checks the handles.  Returns an array of n + 1 (the last one a
 * sentinel that must survive), or NULL (the create call gets NULL) for n == 0. */
static MPI_Comm *create_level1(create_fn_t *fn, int n, MPI_Info info, const char *what)
{
    MPI_Comm *h = NULL;
    if (n > 0) {
        h = malloc(sizeof(MPI_Comm) * (size_t)(n + 1));
        EPT_CHECK(h != NULL, "out of memory");
        for (int i = 0; i <= n; i++)
            h[i] = SENTINEL;
    }
    EPT_OK(fn(MPI_COMM_WORLD, n, info, h));
    for (int i = 0; i < n; i++) {
        EPT_CHECK(h[i] != MPI_COMM_NULL && h[i] != SENTINEL, "%s: handle %d not set", what, i);
        for (int j = 0; j < i; j++)
            EPT_CHECK(h[i] != h[j], "%s: handles %d and %d are both " EPT_HFMT, what, j, i, EPT_HARG(h[i]));
    }
    if (n > 0)
        EPT_CHECK(h[n] == SENTINEL, "%s: the array was written past my_num_ep", what);
    return h;
}

/* ---- OpenMP part: level 1 from MPI_COMM_WORLD, two level-2 variants -------- */

static void run_openmp(create_fn_t *fn1, const char *name1)
{
    int n = counts[myproc];
    MPI_Comm *h = create_level1(fn1, n, MPI_INFO_NULL, name1);
    for (int variant = 0; variant < 2; variant++) {
        create_fn_t *fn2 = variant == 0 ? MPI_Comm_create_endpoints : MPIX_Comm_create_endpoints;
        /* Level-2 ranks: by level-1 rank, then index. */
        int total2 = 0, base2 = 0, local2 = 0;
        for (int r = 0; r < total; r++) {
            if (r < first)
                base2 += level2_count(variant, r);
            else if (r < first + n)
                local2 += level2_count(variant, r);
            total2 += level2_count(variant, r);
        }
        MPI_Comm *h2 = malloc(sizeof(MPI_Comm) * (size_t)(local2 + 1));
        int *exp2 = malloc(sizeof(int) * (size_t)(local2 + 1));
        EPT_CHECK(h2 && exp2, "out of memory");
        if (n > 0) {
#pragma omp parallel num_threads(n)
            {
                int i = omp_get_thread_num(), r = first + i;
                char what[64];
                snprintf(what, sizeof what, "%s level 1", name1);
                if (variant == 0)
                    exercise(h[i], r, total, what);
                int m = level2_count(variant, r), off = 0, off_rank = base2;
                for (int k = first; k < r; k++) {
                    off += level2_count(variant, k);
                    off_rank += level2_count(variant, k);
                }
                MPI_Comm mine[3] = {SENTINEL, SENTINEL, SENTINEL};
                EPT_OK(fn2(h[i], m, MPI_INFO_NULL, m == 0 && variant == 1 ? NULL : mine));
                for (int j = 0; j < m; j++) {
                    EPT_CHECK(mine[j] != MPI_COMM_NULL && mine[j] != SENTINEL, "level 2: handle %d not set", j);
                    h2[off + j] = mine[j];
                    exp2[off + j] = off_rank + j;
                }
                EPT_CHECK(mine[m] == SENTINEL, "level 2: the array was written past my_num_ep (%d)", m);
            }
        }
        for (int k = 0; k < local2; k++)
            for (int j = 0; j < k; j++)
                EPT_CHECK(h2[k] != h2[j], "level 2: local handles %d and %d are equal", j, k);
        if (local2 > 0) {
#pragma omp parallel num_threads(local2)
            {
                int k = omp_get_thread_num();
                char what[64];
                snprintf(what, sizeof what, "level 2 (variant %d)", variant);
                exercise(h2[k], exp2[k], total2, what);
                free_handle(&h2[k], what);
            }
        }
        free(h2);
        free(exp2);
    }
    if (n > 0) {
#pragma omp parallel num_threads(n)
        {
            int i = omp_get_thread_num();
            free_handle(&h[i], "level 1");
        }
    }
    free(h);
}

/* ---- pthread part ------------------------------------------------------- */

typedef struct {
    MPI_Comm h;
    int rank;
} pt_arg_t;

static void *pt_main(void *p)
{
    pt_arg_t *a = p;
    exercise(a->h, a->rank, total, "pthreads level 1");
    /* One endpoint per parent endpoint: same size, same ranks. */
    MPI_Comm c = MPI_COMM_NULL;
    EPT_OK(MPI_Comm_create_endpoints(a->h, 1, MPI_INFO_NULL, &c));
    exercise(c, a->rank, total, "pthreads level 2");
    free_handle(&c, "pthreads level 2");
    free_handle(&a->h, "pthreads level 1");
    return NULL;
}

static void run_pthreads(void)
{
    int n = counts[myproc];
    MPI_Info info;
    EPT_OK(MPI_Info_create(&info));
    EPT_OK(MPI_Info_set(info, "epmpi_test_hint", "1"));
    MPI_Comm *h = create_level1(MPIX_Comm_create_endpoints, n, info, "MPIX_Comm_create_endpoints (pthreads)");
    EPT_OK(MPI_Info_free(&info));
    pthread_t *th = malloc(sizeof(pthread_t) * (size_t)(n + 1));
    pt_arg_t *args = malloc(sizeof(pt_arg_t) * (size_t)(n + 1));
    EPT_CHECK(th && args, "out of memory");
    for (int i = 0; i < n; i++) {
        args[i].h = h[i];
        args[i].rank = first + i;
        EPT_CHECK(pthread_create(&th[i], NULL, pt_main, &args[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    free(th);
    free(args);
    free(h);
}

/* ---- other classic parents ---------------------------------------------- */

/* Parents whose rank order is not MPI_COMM_WORLD's (processes reversed) and
 * parents over part of the processes (even / odd world ranks, created at the
 * same time in both halves): ranks follow the parent's ranks. */
static void run_other_parents(void)
{
    for (int kind = 0; kind < 2; kind++) {
        MPI_Comm parent;
        int color = kind == 0 ? 0 : myproc % 2;
        int key = kind == 0 ? nprocs - myproc : myproc;
        EPT_OK(MPI_Comm_split(MPI_COMM_WORLD, color, key, &parent));
        /* Members of the parent, in parent rank order, by world rank. */
        int psize = 0, *members = malloc(sizeof(int) * (size_t)nprocs);
        EPT_CHECK(members != NULL, "out of memory");
        for (int p = 0; p < nprocs; p++)
            if (kind == 0 || p % 2 == color)
                members[psize++] = p;
        if (kind == 0)
            for (int i = 0; i < psize / 2; i++) {
                int t = members[i];
                members[i] = members[psize - 1 - i];
                members[psize - 1 - i] = t;
            }
        int sz = 0, fst = 0, n = counts[myproc];
        for (int i = 0; i < psize; i++) {
            if (members[i] == myproc)
                fst = sz;
            sz += counts[members[i]];
        }
        const char *what = kind == 0 ? "parent with the processes reversed" : "parent of even or odd processes";
        MPI_Comm *h = NULL;
        if (n > 0)
            EPT_CHECK((h = malloc(sizeof(MPI_Comm) * (size_t)n)) != NULL, "out of memory");
        EPT_OK(MPI_Comm_create_endpoints(parent, n, MPI_INFO_NULL, h));
        if (n > 0) {
#pragma omp parallel num_threads(n)
            {
                int i = omp_get_thread_num();
                exercise(h[i], fst + i, sz, what);
                free_handle(&h[i], what);
            }
        }
        free(h);
        free(members);
        EPT_OK(MPI_Comm_free(&parent));
    }
}

/* ---- errors ------------------------------------------------------------- */

static _Atomic int world_handler_calls;

static void world_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    world_handler_calls++;
}

static void check_arg_error(int rc, const char *call, const char *what)
{
    int cls = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    EPT_CHECK(rc != MPI_SUCCESS, "%s: %s succeeded", what, call);
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    EPT_CHECK(cls == MPI_ERR_ARG, "%s: error class %d, expected MPI_ERR_ARG (%d); message '%s'", what, cls, MPI_ERR_ARG,
              msg);
    EPT_CHECK(strstr(msg, call) != NULL, "%s: the message '%s' does not name %s", what, msg, call);
}

static void run_errors(void)
{
    MPI_Comm dummy[4];
    int rc;

    /* Classic parent MPI_COMM_WORLD with MPI_ERRORS_RETURN. */
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Comm_create_endpoints(MPI_COMM_WORLD, -1, MPI_INFO_NULL, dummy);
    check_arg_error(rc, "MPI_Comm_create_endpoints", "my_num_ep -1 on MPI_COMM_WORLD");
    rc = MPIX_Comm_create_endpoints(MPI_COMM_WORLD, -7, MPI_INFO_NULL, dummy);
    check_arg_error(rc, "MPIX_Comm_create_endpoints", "my_num_ep -7 on MPI_COMM_WORLD");
    rc = MPI_Comm_create_endpoints(MPI_COMM_WORLD, 2, MPI_INFO_NULL, NULL);
    check_arg_error(rc, "MPI_Comm_create_endpoints", "NULL array with my_num_ep 2");

    /* Endpoint parent whose handles have MPI_ERRORS_RETURN (while
     * MPI_COMM_WORLD is back to the default, which must not be used). */
    int n = counts[myproc];
    MPI_Comm *h = create_level1(MPI_Comm_create_endpoints, n, MPI_INFO_NULL, "error parent");
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    if (n > 0) {
#pragma omp parallel num_threads(n)
        {
            int i = omp_get_thread_num();
            MPI_Comm out[2];
            EPT_OK(MPI_Comm_set_errhandler(h[i], MPI_ERRORS_RETURN));
            int e = MPI_Comm_create_endpoints(h[i], -2, MPI_INFO_NULL, out);
            check_arg_error(e, "MPI_Comm_create_endpoints", "my_num_ep -2 on an endpoint parent");
            e = MPIX_Comm_create_endpoints(h[i], -1, MPI_INFO_NULL, out);
            check_arg_error(e, "MPIX_Comm_create_endpoints", "my_num_ep -1 on an endpoint parent");
            /* The parent still works afterwards. */
            exercise(h[i], first + i, total, "endpoint parent after errors");
            free_handle(&h[i], "endpoint parent");
        }
    }
    free(h);

    /* A classic parent other than MPI_COMM_WORLD: the error goes to the
     * parent's handler (MPI_ERRORS_RETURN), not to MPI_COMM_WORLD's (a user
     * handler that counts its calls). */
    MPI_Comm parent;
    MPI_Errhandler weh;
    EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    EPT_OK(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN));
    EPT_OK(MPI_Comm_create_errhandler(world_handler, &weh));
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, weh));
    rc = MPI_Comm_create_endpoints(parent, -1, MPI_INFO_NULL, dummy);
    int calls = world_handler_calls;
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    EPT_CHECK(calls == 0,
              "my_num_ep -1 on a classic parent with MPI_ERRORS_RETURN: the error was raised on MPI_COMM_WORLD's "
              "handler (%d calls) instead of the parent's",
              calls);
    check_arg_error(rc, "MPI_Comm_create_endpoints", "my_num_ep -1 on a classic dup of MPI_COMM_WORLD");
    EPT_OK(MPI_Errhandler_free(&weh));
    EPT_OK(MPI_Comm_free(&parent));
}

int main(int argc, char **argv)
{
    int provided;
    if (ept_world_endpoints() > 0 || argc < 2) {
        fprintf(stderr, "skip: needs an explicit shape (P:a,b,...) and no world mode\n");
        return 77;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    EPT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    EPT_CHECK(MPI_Comm_create_endpoints != NULL && MPIX_Comm_create_endpoints != NULL,
              "MPI_Comm_create_endpoints is not available: is libepmpi.so preloaded?");
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_rank(MPI_COMM_WORLD, &myproc);
    counts = malloc(sizeof(int) * (size_t)nprocs);
    EPT_CHECK(counts != NULL, "out of memory");
    total = first = 0;
    for (int p = 0; p < nprocs; p++) {
        counts[p] = ept_list_item(argv[1], p);
        EPT_CHECK(counts[p] >= 0, "bad shape argument '%s'", argv[1]);
        if (p < myproc)
            first += counts[p];
        total += counts[p];
    }
    EPT_CHECK(total > 0, "shape '%s' creates no endpoint", argv[1]);

    run_openmp(MPI_Comm_create_endpoints, "MPI_Comm_create_endpoints");
    run_openmp(MPIX_Comm_create_endpoints, "MPIX_Comm_create_endpoints");
    run_pthreads();
    run_other_parents();
    run_errors();

    free(counts);
    MPI_Finalize();
    return 0;
}
