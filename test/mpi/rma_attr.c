/* User attributes on windows (see rma_common.h for the shapes), each rank
 * with keyvals of its own:
 *  - MPI_Win_set_attr / MPI_Win_get_attr give back the value set; setting
 *    it again calls the delete callback on the old value, with the window's
 *    handle, the keyval and the extra state; MPI_Win_delete_attr calls it
 *    too and the attribute is gone (deleting an unset attribute is fine);
 *  - MPI_Win_free calls the delete callbacks of the attributes left (in an
 *    order MPI leaves open), also for a keyval freed with
 *    MPI_Win_free_keyval while its attribute was set; a keyval without delete callback
 *    (MPI_WIN_NULL_DELETE_FN) just works;
 *  - one keyval on two windows keeps a value per window;
 *  - errors (MPI_ERRORS_RETURN on the window): setting or deleting a
 *    predefined attribute, a communicator keyval on a window, a NULL flag
 *    pointer, and a delete
 *    callback that fails (MPI_Win_delete_attr returns its error and the
 *    attribute stays);
 *  - the predefined attributes still read as before;
 *  - window hints (MPI_Win_get_info / MPI_Win_set_info) as MPICH reports
 *    them: those given at creation, its defaults for the others, what
 *    MPI_Win_set_info sets; unknown keys are not kept. */
#include "rma_common.h"

/* What a delete callback saw, per keyval (its extra state). */
typedef struct seen {
    int calls;
    MPI_Win win;
    int keyval;
    void *val;
    int fail; /* return MPI_ERR_OTHER */
} seen_t;

static int delete_cb(MPI_Win win, int keyval, void *val, void *extra)
{
    seen_t *s = extra;
    s->calls++;
    s->win = win;
    s->keyval = keyval;
    s->val = val;
    return s->fail ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static void expect_seen(const seen_t *s, int calls, MPI_Win win, int keyval, void *val, const char *what)
{
    EPT_CHECK(s->calls == calls, "%s: the delete callback ran %d times, expected %d", what, s->calls, calls);
    EPT_CHECK(s->win == win && s->keyval == keyval && s->val == val,
              "%s: the delete callback got window " EPT_HFMT " keyval %d value %p, expected " EPT_HFMT " %d %p", what,
              EPT_HARG(s->win), s->keyval, s->val, EPT_HARG(win), keyval, val);
}

static void expect_attr(MPI_Win win, int keyval, void *want, const char *what)
{
    void *v = NULL;
    int flag = -1;
    EPT_OK(MPI_Win_get_attr(win, keyval, &v, &flag));
    if (want)
        EPT_CHECK(flag && v == want, "%s: value %p (flag %d), expected %p", what, v, flag, want);
    else
        EPT_CHECK(!flag, "%s: an attribute is set (%p)", what, v);
}

static void part_values(MPI_Comm comm)
{
    int me, x, y, z, w;
    seen_t sa = {0}, sb = {0};
    int ka, kb, kn;
    MPI_Win win, win2;
    void *base, *base2;
    EPT_OK(MPI_Comm_rank(comm, &me));
    PHASE("rma_attr: values");
    EPT_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_cb, &ka, &sa));
    EPT_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_cb, &kb, &sb));
    EPT_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kn, NULL));
    EPT_OK(MPI_Win_allocate(64, 1, MPI_INFO_NULL, comm, &base, &win));
    EPT_OK(MPI_Win_allocate(8, 4, MPI_INFO_NULL, comm, &base2, &win2));

    expect_attr(win, ka, NULL, "before any set");
    EPT_OK(MPI_Win_set_attr(win, ka, &x));
    expect_attr(win, ka, &x, "after set");
    EPT_CHECK(sa.calls == 0, "rank %d: setting a new attribute called the delete callback", me);
    EPT_OK(MPI_Win_set_attr(win, ka, &y));
    expect_attr(win, ka, &y, "after a second set");
    expect_seen(&sa, 1, win, ka, &x, "replacing the value");
    EPT_OK(MPI_Win_delete_attr(win, ka));
    expect_attr(win, ka, NULL, "after MPI_Win_delete_attr");
    expect_seen(&sa, 2, win, ka, &y, "MPI_Win_delete_attr");
    if (!(ept_classic && EPT_OPEN_MPI)) { /* Open MPI: an error (MPI_ERR_OTHER) */
        EPT_OK(MPI_Win_delete_attr(win, ka));
        EPT_CHECK(sa.calls == 2, "rank %d: deleting an unset attribute called the delete callback", me);
    }

    /* A value per window; the other window's attribute is left alone. */
    EPT_OK(MPI_Win_set_attr(win2, ka, &w));
    EPT_OK(MPI_Win_set_attr(win, ka, &x));
    expect_attr(win2, ka, &w, "the second window");
    EPT_OK(MPI_Win_delete_attr(win2, ka));
    expect_seen(&sa, 3, win2, ka, &w, "the second window's MPI_Win_delete_attr");
    expect_attr(win, ka, &x, "the first window after the second's delete");
    rma_check_attrs(win, base, 64, 1, MPI_WIN_FLAVOR_ALLOCATE, "with user attributes");
    EPT_OK(MPI_Win_free(&win2));

    /* Win_free: kb's and ka's callbacks, ka's keyval being gone by then. */
    EPT_OK(MPI_Win_set_attr(win, kn, &z));
    expect_attr(win, kn, &z, "the keyval without callbacks");
    EPT_OK(MPI_Win_set_attr(win, kb, &z));
    EPT_OK(MPI_Win_free_keyval(&ka));
    EPT_CHECK(ka == MPI_KEYVAL_INVALID, "rank %d: MPI_Win_free_keyval left keyval %d", me, ka);
    MPI_Win freed = win;
    EPT_OK(MPI_Win_free(&win));
    EPT_CHECK(win == MPI_WIN_NULL, "rank %d: MPI_Win_free left the handle", me);
    expect_seen(&sb, 1, freed, kb, &z, "MPI_Win_free (second keyval)");
    EPT_CHECK(sa.calls == 4 && sa.win == freed && sa.val == &x,
              "rank %d: MPI_Win_free: the freed keyval's delete callback ran %d times in all (value %p, expected %p)",
              me, sa.calls, sa.val, (void *)&x);
    EPT_OK(MPI_Win_free_keyval(&kb));
    EPT_OK(MPI_Win_free_keyval(&kn));
}

static void part_errors(MPI_Comm comm)
{
    int me, x, kw, kc;
    seen_t s = {0};
    MPI_Win win;
    void *base;
    EPT_OK(MPI_Comm_rank(comm, &me));
    if (ept_classic && EPT_OPEN_MPI) /* the classes and messages below are MPICH's and epmpi's */
        return;
    PHASE("rma_attr: errors");
    EPT_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_cb, &kw, &s));
    EPT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kc, NULL));
    EPT_OK(MPI_Win_allocate(16, 1, MPI_INFO_NULL, comm, &base, &win));
    EPT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    rma_expect_error(MPI_Win_set_attr(win, MPI_WIN_SIZE, &x), MPI_ERR_KEYVAL, "MPI_Win_set_attr",
                     "setting MPI_WIN_SIZE");
    rma_expect_error(MPI_Win_delete_attr(win, MPI_WIN_BASE), MPI_ERR_KEYVAL, "MPI_Win_delete_attr",
                     "deleting MPI_WIN_BASE");
    rma_expect_error(MPI_Win_set_attr(win, kc, &x), MPI_ERR_KEYVAL, "MPI_Win_set_attr",
                     "a communicator keyval on a window");
    void *v;
    int flag;
    rma_expect_error(MPI_Win_get_attr(win, kc, &v, &flag), MPI_ERR_KEYVAL, "MPI_Win_get_attr",
                     "getting a communicator keyval from a window");
    rma_expect_error(MPI_Win_get_attr(win, kw, &v, NULL), MPI_ERR_ARG, "MPI_Win_get_attr", "a NULL flag");

    /* A failing delete callback: the error comes back, the attribute stays. */
    EPT_OK(MPI_Win_set_attr(win, kw, &x));
    s.fail = 1;
    int rc = MPI_Win_delete_attr(win, kw);
    EPT_CHECK(rc != MPI_SUCCESS, "rank %d: MPI_Win_delete_attr succeeded though the delete callback failed", me);
    expect_seen(&s, 1, win, kw, &x, "the failing delete callback");
    expect_attr(win, kw, &x, "after a failed delete");
    s.fail = 0;
    EPT_OK(MPI_Win_delete_attr(win, kw));
    expect_attr(win, kw, NULL, "after the delete that worked");
    EPT_OK(MPI_Win_free(&win));
    EPT_CHECK(s.calls == 2, "rank %d: MPI_Win_free called a delete callback of a deleted attribute", me);
    EPT_OK(MPI_Win_free_keyval(&kw));
    EPT_OK(MPI_Comm_free_keyval(&kc));
}

/* The hint of key on win is want. */
static void expect_hint(MPI_Win win, const char *key, const char *want, const char *what)
{
    MPI_Info info;
    char val[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    EPT_OK(MPI_Win_get_info(win, &info));
    EPT_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag));
    EPT_OK(MPI_Info_free(&info));
    EPT_CHECK(flag && !strcmp(val, want), "%s: hint %s is %s, expected %s", what, key, flag ? val : "(none)", want);
}

static void set_hint(MPI_Win win, const char *key, const char *val)
{
    MPI_Info info;
    EPT_OK(MPI_Info_create(&info));
    EPT_OK(MPI_Info_set(info, key, val));
    EPT_OK(MPI_Win_set_info(win, info));
    EPT_OK(MPI_Info_free(&info));
}

/* Window hints as MPICH reports them: those given at creation, MPICH's
 * defaults for the others, what MPI_Win_set_info sets; unknown keys are
 * not kept. */
static void part_hints(MPI_Comm comm)
{
    MPI_Info in;
    MPI_Win win;
    int *base;
    EPT_OK(MPI_Info_create(&in));
    EPT_OK(MPI_Info_set(in, "no_locks", "true"));
    EPT_OK(MPI_Info_set(in, "epmpi_no_such_hint", "1"));
    EPT_OK(MPI_Win_allocate(sizeof(int), sizeof(int), in, comm, &base, &win));
    EPT_OK(MPI_Info_free(&in));
    expect_hint(win, "no_locks", "true", "given at MPI_Win_allocate");
    expect_hint(win, "accumulate_ordering", "rar,raw,war,waw", "the default");
    expect_hint(win, "accumulate_ops", "same_op_no_op", "the default");
    set_hint(win, "accumulate_ordering", "none");
    set_hint(win, "no_locks", "false");
    expect_hint(win, "accumulate_ordering", "none", "set with MPI_Win_set_info");
    expect_hint(win, "no_locks", "false", "set with MPI_Win_set_info");
    MPI_Info out;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 1;
    EPT_OK(MPI_Win_get_info(win, &out));
    EPT_OK(MPI_Info_get(out, "epmpi_no_such_hint", MPI_MAX_INFO_VAL, val, &flag));
    EPT_OK(MPI_Info_free(&out));
    EPT_CHECK(!flag, "an unknown hint was kept");
    EPT_OK(MPI_Win_free(&win));
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    part_values(comm);
    part_errors(comm);
    if (!(ept_classic && EPT_OPEN_MPI)) /* Open MPI reports other hints */
        part_hints(comm);
}

int main(int argc, char **argv) { return ept_main_classic(argc, argv, 60, body, NULL); }
