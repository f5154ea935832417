/* User attributes on endpoint communicators: set / get / delete, copy
 * callbacks on MPI_Comm_dup (MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN and a
 * user callback), delete callbacks on replacement, deletion and
 * MPI_Comm_free, each called with the endpoint's own handle; the MPI-1
 * names; errors for unknown and predefined keyvals.  From MPI-4.0 (7.7):
 * a keyval freed while an attribute uses it becomes MPI_KEYVAL_INVALID,
 * the attribute's copy and delete callbacks still run, and its number is
 * not handed out again meanwhile; a copy callback's error
 * fails MPI_Comm_dup with MPI_COMM_NULL, a delete callback's error fails
 * MPI_Comm_delete_attr and keeps the attribute.  MPI_Finalize deletes the
 * attributes of MPI_COMM_SELF, last set first, before anything else ("User
 * Functions at MPI Finalization"), then, as MPICH does, MPI_COMM_WORLD's;
 * in world mode each endpoint's, with MPI_COMM_WORLD in the callback
 * meaning that endpoint. */
#include "eptest.h"

typedef struct {
    int copies, deletes;
    MPI_Comm last_comm; /* handle the last callback received */
} counters_t;

static int copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    counters_t *c = extra;
    (void)keyval;
    int r;
    MPI_Comm_rank(comm, &r); /* callbacks may call MPI on the endpoint */
    __atomic_add_fetch(&c[r].copies, 1, __ATOMIC_RELAXED);
    c[r].last_comm = comm;
    *(void **)out = (char *)in + 1000;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    counters_t *c = extra;
    (void)keyval;
    (void)val;
    int r;
    MPI_Comm_rank(comm, &r);
    __atomic_add_fetch(&c[r].deletes, 1, __ATOMIC_RELAXED);
    c[r].last_comm = comm;
    return MPI_SUCCESS;
}

static counters_t *cnt;
static int kv_user, kv_dup, kv_null, kv_old, kv_freed, kv_copy_fails, kv_delete_fails, kv_fin[3];

static int copy_fails(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

/* Fails while the int its attribute points to is set. */
static int delete_fails(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    return *(int *)val ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* What the delete callbacks of MPI_Finalize saw, per world rank: the values
 * in call order.  A value is rank * 10 + i: i = 1..3 on MPI_COMM_SELF, 9 on
 * MPI_COMM_WORLD; a wrong object or rank records -1. */
#define FIN_MAX 4
static int (*fin_log)[FIN_MAX + 1]; /* [rank][0] counts */
static int fin_ranks;

static int fin_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)keyval, (void)extra;
    int v = (int)(long)val, me = -1, finalized = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Finalized(&finalized);
    int ok = !finalized && v / 10 == me && (comm == (v % 10 == 9 ? MPI_COMM_WORLD : MPI_COMM_SELF));
    int r = v / 10;
    if (r >= 0 && r < fin_ranks && fin_log[r][0] < FIN_MAX)
        fin_log[r][1 + fin_log[r][0]++] = ok ? v % 10 : -1;
    return MPI_SUCCESS;
}

/* MPI_COMM_SELF's handler in world mode at MPI_Finalize: keeps the message. */
static char fin_error[MPI_MAX_ERROR_STRING];
static void fin_handler(MPI_Comm *comm, int *code, ...)
{
    int len = 0;
    (void)comm;
    MPI_Error_string(*code, fin_error, &len);
}

/* Rank me hangs three attributes on MPI_COMM_SELF and one on MPI_COMM_WORLD. */
static void fin_set(int me)
{
    for (int i = 1; i <= 3; i++)
        EPT_OK(MPI_Comm_set_attr(MPI_COMM_SELF, kv_fin[i - 1], (void *)(long)(me * 10 + i)));
    EPT_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kv_fin[0], (void *)(long)(me * 10 + 9)));
}

static void body(MPI_Comm comm, void *arg)
{
    int r, flag = 0;
    void *v = NULL;
    (void)arg;
    MPI_Comm_rank(comm, &r);
    counters_t *c = &cnt[r];
    EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));

    EPT_OK(MPI_Comm_get_attr(comm, kv_user, &v, &flag));
    EPT_CHECK(!flag, "an attribute that was never set is found");
    EPT_OK(MPI_Comm_set_attr(comm, kv_user, (void *)(long)(r + 1)));
    EPT_OK(MPI_Comm_get_attr(comm, kv_user, &v, &flag));
    EPT_CHECK(flag && v == (void *)(long)(r + 1), "get after set: flag %d value %p", flag, v);
    EPT_OK(MPI_Comm_set_attr(comm, kv_user, (void *)(long)(r + 2))); /* replaces: deletes the old value */
    EPT_CHECK(c->deletes == 1 && c->last_comm == comm, "replacing called delete %d times", c->deletes);
    EPT_OK(MPI_Comm_set_attr(comm, kv_dup, (void *)(long)(r + 50)));
    EPT_OK(MPI_Comm_set_attr(comm, kv_null, (void *)(long)(r + 60)));
    EPT_OK(MPI_Attr_put(comm, kv_old, (void *)(long)(r + 70)));

    MPI_Comm d;
    EPT_OK(MPI_Comm_dup(comm, &d));
    /* Two keyvals use copy_fn: the MPI-2 one and the MPI-1 one. */
    EPT_CHECK(c->copies == 2 && c->last_comm == comm, "dup: copy callback called %d times", c->copies);
    EPT_OK(MPI_Comm_get_attr(d, kv_user, &v, &flag));
    EPT_CHECK(flag && v == (void *)(long)(r + 2 + 1000), "dup: user copy gave %p", v);
    EPT_OK(MPI_Comm_get_attr(d, kv_dup, &v, &flag));
    EPT_CHECK(flag && v == (void *)(long)(r + 50), "dup: MPI_COMM_DUP_FN gave %p", v);
    EPT_OK(MPI_Comm_get_attr(d, kv_null, &v, &flag));
    EPT_CHECK(!flag, "dup: MPI_COMM_NULL_COPY_FN copied the attribute");
    EPT_OK(MPI_Attr_get(d, kv_old, &v, &flag));
    EPT_CHECK(flag && v == (void *)(long)(r + 70 + 1000), "dup: MPI-1 keyval copy gave %p", v);

    EPT_OK(MPI_Comm_delete_attr(comm, kv_user));
    EPT_CHECK(c->deletes == 2, "delete_attr: delete callback called %d times in all", c->deletes);
    EPT_OK(MPI_Comm_get_attr(comm, kv_user, &v, &flag));
    EPT_CHECK(!flag, "deleted attribute still found");
    EPT_OK(MPI_Attr_delete(comm, kv_old));
    EPT_CHECK(c->deletes == 3, "MPI_Attr_delete: delete callback called %d times in all", c->deletes);

    /* Freeing the dup deletes its two attributes with callbacks (user and MPI-1 keyvals). */
    MPI_Comm dd = d;
    EPT_OK(MPI_Comm_free(&d));
    EPT_CHECK(c->deletes == 5 && c->last_comm == dd, "free: %d deletes, last on " EPT_HFMT, c->deletes,
              EPT_HARG(c->last_comm));

    /* Errors. */
    int rc = MPI_Comm_set_attr(comm, MPI_TAG_UB, &r), cls = -1;
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_KEYVAL, "setting MPI_TAG_UB: class %d", cls);
    rc = MPI_Comm_delete_attr(comm, MPI_TAG_UB);
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_KEYVAL, "deleting MPI_TAG_UB: class %d", cls);
    rc = MPI_Comm_get_attr(comm, 0x24000999, &v, &flag);
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_KEYVAL, "unknown keyval: class %d", cls);
    EPT_OK(MPI_Comm_delete_attr(comm, kv_dup));
    EPT_OK(MPI_Comm_delete_attr(comm, kv_null));

    /* A keyval freed while in use (rank 0's thread frees it for its process). */
    EPT_OK(MPI_Comm_dup(comm, &d));
    EPT_OK(MPI_Comm_set_attr(d, kv_freed, (void *)(long)(r + 80)));
    int before = c->deletes, copies = c->copies;
    static int old_number, kv_new[8];
#pragma omp barrier
#pragma omp masked
    {
        old_number = kv_freed;
        EPT_OK(MPI_Comm_free_keyval(&kv_freed));
        EPT_CHECK(kv_freed == MPI_KEYVAL_INVALID, "MPI_Comm_free_keyval left keyval %d", kv_freed);
        /* Freed again through another copy of its number while the
         * attribute holds it: MPICH takes that, and so does epmpi. */
        int again = old_number;
        EPT_OK(MPI_Keyval_free(&again));
        /* Its number is not handed out again while the attribute holds
         * it (MPICH reuses freed numbers at once otherwise). */
        for (int i = 0; i < 8; i++) {
            EPT_OK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &kv_new[i], NULL));
            EPT_CHECK(kv_new[i] != old_number, "keyval %d was handed out again while an attribute held it", old_number);
        }
    }
#pragma omp barrier
    /* The attribute keeps its callbacks: a duplicate copies it. */
    MPI_Comm d2;
    EPT_OK(MPI_Comm_dup(d, &d2));
    EPT_CHECK(c->copies == copies + 1, "freed keyval: MPI_Comm_dup called its copy callback %d times",
              c->copies - copies);
    EPT_OK(MPI_Comm_free(&d2));
    dd = d;
    EPT_OK(MPI_Comm_free(&d));
    EPT_CHECK(c->deletes == before + 2 && c->last_comm == dd,
              "freed keyval: MPI_Comm_free of the two communicators called its delete callback %d times",
              c->deletes - before);
#pragma omp barrier
#pragma omp masked
    for (int i = 0; i < 8; i++)
        EPT_OK(MPI_Keyval_free(&kv_new[i]));

    /* Callbacks that fail. */
    EPT_OK(MPI_Comm_set_attr(comm, kv_copy_fails, &r));
    d = comm;
    rc = MPI_Comm_dup(comm, &d);
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_OTHER && d == MPI_COMM_NULL,
              "a copy callback's MPI_ERR_OTHER: MPI_Comm_dup gave class %d, %s", cls,
              d == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    EPT_OK(MPI_Comm_delete_attr(comm, kv_copy_fails));
    int fail = 1;
    EPT_OK(MPI_Comm_set_attr(comm, kv_delete_fails, &fail));
    rc = MPI_Comm_delete_attr(comm, kv_delete_fails);
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_OTHER, "a delete callback's MPI_ERR_OTHER: MPI_Comm_delete_attr gave class %d", cls);
    EPT_OK(MPI_Comm_get_attr(comm, kv_delete_fails, &v, &flag));
    EPT_CHECK(flag && v == &fail, "the attribute whose delete callback failed is gone");
    fail = 0;
    EPT_OK(MPI_Comm_delete_attr(comm, kv_delete_fails));
}

int main(int argc, char **argv)
{
    int provided, size;
    watchdog_arm(30);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int nlocal = local_ranks(argc, argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cnt = calloc((size_t)(size * (nlocal + 1) + 64), sizeof *cnt);
    EPT_OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &kv_user, cnt));
    EPT_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv_dup, NULL));
    EPT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv_null, NULL));
    EPT_OK(MPI_Keyval_create((MPI_Copy_function *)copy_fn, (MPI_Delete_function *)delete_fn, &kv_old, cnt));
    EPT_OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &kv_freed, cnt));
    EPT_OK(MPI_Comm_create_keyval(copy_fails, MPI_COMM_NULL_DELETE_FN, &kv_copy_fails, NULL));
    EPT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fails, &kv_delete_fails, NULL));
    for (int i = 0; i < 3; i++)
        EPT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, fin_delete, &kv_fin[i], NULL));
    run_ranks(nlocal, body, NULL);
    EPT_OK(MPI_Comm_free_keyval(&kv_user));
    EPT_OK(MPI_Comm_free_keyval(&kv_dup));
    EPT_OK(MPI_Comm_free_keyval(&kv_null));
    EPT_OK(MPI_Keyval_free(&kv_old));
    EPT_OK(MPI_Comm_free_keyval(&kv_copy_fails));
    free(cnt);

    /* Attributes for MPI_Finalize to delete: on every world-mode endpoint,
     * else on the classic objects (MPICH's own, as a cross-check).  In
     * world mode, rank 0's MPI_COMM_SELF also gets, first, an attribute
     * whose delete callback fails: MPI_Finalize must report it through
     * MPI_COMM_SELF's handler, naming it, and still delete the other
     * endpoints'. */
    int world = ept_world_endpoints() > 0, mine = 0, fail = 1;
    fin_ranks = size * (world ? nlocal : 1);
    fin_log = calloc((size_t)fin_ranks, sizeof *fin_log);
    EPT_CHECK(fin_log, "out of memory");
    if (world) {
        MPI_Errhandler eh;
        EPT_OK(MPI_Comm_create_errhandler(fin_handler, &eh));
        EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh)); /* every endpoint's */
        EPT_OK(MPI_Errhandler_free(&eh));
#pragma omp parallel num_threads(nlocal)
        {
            int me;
            EPT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
            if (me == 0)
                EPT_OK(MPI_Comm_set_attr(MPI_COMM_SELF, kv_delete_fails, &fail));
            fin_set(me);
        }
    } else {
        EPT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &mine));
        fin_set(mine);
    }
    for (int i = 0; i < 3; i++)
        EPT_OK(MPI_Comm_free_keyval(&kv_fin[i])); /* the attributes keep them alive */
    EPT_OK(MPI_Comm_free_keyval(&kv_delete_fails));
    PHASE("MPI_Finalize");
    int rc = MPI_Finalize(), cls = MPI_SUCCESS, fails_here = world && fin_log[0][0];
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls); /* epmpi's own code, which it knows after MPI_Finalize */
    if (cls != (fails_here ? MPI_ERR_OTHER : MPI_SUCCESS) ||
        (fails_here && !strstr(fin_error, "MPI_Finalize: a delete callback of an attribute of world rank 0's "
                                          "MPI_COMM_SELF"))) {
        fprintf(stderr, "FAIL: MPI_Finalize returned class %d, want %d (a delete callback %s); handler got '%s'\n", cls,
                fails_here ? MPI_ERR_OTHER : MPI_SUCCESS, fails_here ? "failed" : "did not fail", fin_error);
        return 1;
    }
    int seen = 0;
    for (int q = 0; q < fin_ranks; q++) {
        const int *l = fin_log[q];
        if (!l[0])
            continue;
        seen++;
        /* MPI says when MPI_COMM_SELF's attributes go (first in MPI_Finalize),
         * not MPI_COMM_WORLD's: Open MPI deletes them later, when
         * MPI_Finalized is true already (the classic shapes). */
        int world_ok = l[4] == 9 || (!world && EPT_OPEN_MPI);
        if (!(l[0] == 4 && l[1] == 3 && l[2] == 2 && l[3] == 1 && world_ok)) {
            fprintf(stderr,
                    "FAIL: MPI_Finalize's delete callbacks for rank %d: %d calls, %d %d %d %d "
                    "(want 3 2 1 on MPI_COMM_SELF, then 9 on MPI_COMM_WORLD; -1: wrong object or rank)\n",
                    q, l[0], l[1], l[2], l[3], l[4]);
            return 1;
        }
    }
    if (seen != (world ? nlocal : 1)) {
        fprintf(stderr, "FAIL: MPI_Finalize ran delete callbacks for %d ranks of this process, want %d\n", seen,
                world ? nlocal : 1);
        return 1;
    }
    free(fin_log);
    return 0;
}
