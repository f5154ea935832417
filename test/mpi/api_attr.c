/* User attributes on endpoint communicators: set / get / delete, copy
 * callbacks on MPI_Comm_dup (MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN and a
 * user callback), delete callbacks on replacement, deletion and
 * MPI_Comm_free, each called with the endpoint's own handle; the MPI-1
 * names; errors for unknown and predefined keyvals. */
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
static int kv_user, kv_dup, kv_null, kv_old;

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
    EPT_CHECK(c->deletes == 5 && c->last_comm == dd, "free: %d deletes, last on %x", c->deletes,
              (unsigned)c->last_comm);

    /* Errors. */
    int rc = MPI_Comm_set_attr(comm, MPI_TAG_UB, &r), cls = -1;
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_KEYVAL, "setting MPI_TAG_UB: class %d", cls);
    rc = MPI_Comm_get_attr(comm, 0x24000999, &v, &flag);
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_KEYVAL, "unknown keyval: class %d", cls);
    EPT_OK(MPI_Comm_delete_attr(comm, kv_dup));
    EPT_OK(MPI_Comm_delete_attr(comm, kv_null));
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
    run_ranks(nlocal, body, NULL);
    EPT_OK(MPI_Comm_free_keyval(&kv_user));
    EPT_OK(MPI_Comm_free_keyval(&kv_dup));
    EPT_OK(MPI_Comm_free_keyval(&kv_null));
    EPT_OK(MPI_Keyval_free(&kv_old));
    free(cnt);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
