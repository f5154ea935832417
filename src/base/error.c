#include "base/error.h"

#include "abi/handle.h"
#include "base/grow.h"
#include "base/invariant.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <unistd.h>

#define EP_ERR_TAG 0x0007ff00u      /* MPICH's generic-message index, all ones */
#define EP_ERR_TAG_MASK 0x4007ff00u /* ... with the dynamic-code bit clear */
#define EP_ERR_CLASS_MASK 0x7fu
#define EP_ERR_SEQ_SHIFT 19
#define EP_ERR_SEQ_MASK 0x7ffu /* bits 19-29 */
#define EP_ERR_RING 1024       /* half the sequence space, so a reused slot is detected */
#define EP_ERR_MSG 512

static const struct {
    int cls;
    const char *text;
} status_table[] = {
/* (clang-format 14 would spread the braces over lines.) */
/* clang-format off */
#define EP_X(name, cls, text) {cls, text},
    /* clang-format on */
    EP_STATUS_MAP(EP_X)
#undef EP_X
};

int ep_status_class(ep_status_t st)
{
    int i = -(int)st;
    return (i >= 0 && i < EP_STATUS_COUNT) ? status_table[i].cls : MPI_ERR_INTERN;
}

const char *ep_status_text(ep_status_t st)
{
    int i = -(int)st;
    return (i >= 0 && i < EP_STATUS_COUNT) ? status_table[i].text : "unknown status";
}

static __thread ep_status_t explained;
static __thread char explanation[EP_ERR_MSG];

void ep_status_explain(ep_status_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(explanation, sizeof explanation, fmt, ap);
    va_end(ap);
    explained = st;
}

const char *ep_status_take_text(ep_status_t st)
{
    if (st == EP_OK || st != explained)
        return ep_status_text(st);
    explained = EP_OK;
    return explanation;
}

/* Message ring.  A slot is written under ring_lock; readers copy under it. */
typedef struct {
    unsigned seq; /* sequence number that wrote the slot */
    char msg[EP_ERR_MSG];
} ep_err_slot_t;

static ep_err_slot_t ring[EP_ERR_RING];
static unsigned ring_next;
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;

/* The last codes the calling thread made, with their messages: the thread
 * that gets an error usually asks for its text, and a storm of errors in
 * other threads (more than EP_ERR_RING before it asks) must not take it
 * away.  (Seen: 8 endpoints raising errors in loops under ASan.) */
#define EP_ERR_MINE 4
static __thread struct {
    int code[EP_ERR_MINE];
    char msg[EP_ERR_MINE][EP_ERR_MSG];
    unsigned next;
} mine;

int ep_error_code_makev(int cls, const char *fmt, va_list ap)
{
    unsigned k = mine.next++ % EP_ERR_MINE;
    vsnprintf(mine.msg[k], sizeof mine.msg[k], fmt, ap);
    pthread_mutex_lock(&ring_lock);
    unsigned seq = ring_next++ & EP_ERR_SEQ_MASK;
    ep_err_slot_t *s = &ring[seq % EP_ERR_RING];
    s->seq = seq;
    memcpy(s->msg, mine.msg[k], sizeof s->msg);
    pthread_mutex_unlock(&ring_lock);
    int code = (int)(EP_ERR_TAG | (seq << EP_ERR_SEQ_SHIFT) | ((unsigned)cls & EP_ERR_CLASS_MASK));
    mine.code[k] = code;
    return code;
}

int ep_error_code_make(int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = ep_error_code_makev(cls, fmt, ap);
    va_end(ap);
    return code;
}

static int is_ours(int code) { return code > 0 && ((unsigned)code & EP_ERR_TAG_MASK) == EP_ERR_TAG; }

int ep_error_code_class(int code, int *cls)
{
    if (!is_ours(code))
        return 0;
    *cls = (int)((unsigned)code & EP_ERR_CLASS_MASK);
    return 1;
}

static const char *class_text(int cls)
{
    if (cls == MPI_ERR_ENDPOINTS)
        return "MPI_ERR_ENDPOINTS: endpoints could not be created";
    for (int i = 0; i < EP_STATUS_COUNT; i++)
        if (status_table[i].cls == cls)
            return status_table[i].text;
    return "error";
}

/* A message into a buffer of size bytes, cut to fit. */
static void copy_text(char *buf, size_t size, const char *text)
{
    size_t n = strnlen(text, size - 1);
    memcpy(buf, text, n);
    buf[n] = '\0';
}

/* ep_error_code_string into a buffer of size bytes. */
static int code_string(int code, char *buf, size_t size, int *len)
{
    if (code == MPI_ERR_ENDPOINTS) {
        copy_text(buf, size, class_text(code));
        *len = (int)strlen(buf);
        return 1;
    }
    if (!is_ours(code))
        return 0;
    unsigned seq = ((unsigned)code >> EP_ERR_SEQ_SHIFT) & EP_ERR_SEQ_MASK;
    int cls = (int)((unsigned)code & EP_ERR_CLASS_MASK);
    for (int k = 0; k < EP_ERR_MINE; k++)
        if (mine.code[k] == code) {
            copy_text(buf, size, mine.msg[k]);
            *len = (int)strlen(buf);
            return 1;
        }
    pthread_mutex_lock(&ring_lock);
    ep_err_slot_t *s = &ring[seq % EP_ERR_RING];
    if (s->seq == seq && s->msg[0])
        copy_text(buf, size, s->msg);
    else
        copy_text(buf, size, class_text(cls));
    pthread_mutex_unlock(&ring_lock);
    *len = (int)strlen(buf);
    return 1;
}

/* Cut to the MPI's limit: MPI_MAX_ERROR_STRING is 1024 in MPICH, 256 in
 * Open MPI. */
int ep_error_code_string(int code, char *buf, int *len) { return code_string(code, buf, MPI_MAX_ERROR_STRING, len); }

/* ---- user error handlers ----------------------------------------------
 * MPI_Comm_create_errhandler and MPI_Win_create_errhandler record each
 * handler's function here, by handle, in a table that grows as needed (a
 * handle MPICH reuses gets a fresh entry).  MPICH counts the references
 * of its own communicators, not of endpoints, so epmpi keeps the handlers
 * endpoints use alive itself: each entry counts the endpoint slots that
 * hold it (uses) and the references MPI_Comm_get_errhandler /
 * MPI_Win_get_errhandler handed out on endpoints (given: MPICH never saw
 * them).  MPI_Errhandler_free first gives back one of those; otherwise it
 * lets go of the program's MPICH reference, which is freed once no
 * endpoint uses the handler and the program has given every reference
 * back (deferred till then).  So MPICH cannot free a handler, and reuse
 * its handle for another, while an endpoint or the program uses it.  eh_lock guards the table; MPICH is never called
 * with it held (MPICH calls error handlers, which look here, under its own lock). */
typedef struct {
    MPI_Errhandler eh;
    MPI_Comm_errhandler_function *fn;
    ep_errhandler_caller_t *caller; /* NULL: a C function */
    long uses;                      /* endpoint slots holding it */
    long given;                     /* references handed out by get_errhandler on endpoints */
    long deferred;                  /* MPI_Errhandler_free calls waiting for uses to reach 0 */
} user_eh_t;
static user_eh_t *user_eh;
static int n_user_eh;
static size_t cap_user_eh;
static pthread_mutex_t eh_lock = PTHREAD_MUTEX_INITIALIZER;

static user_eh_t *find_locked(MPI_Errhandler eh)
{
    for (int i = 0; i < n_user_eh; i++)
        if (user_eh[i].eh == eh)
            return &user_eh[i];
    return NULL;
}

ep_status_t ep_errhandler_record(MPI_Errhandler eh, MPI_Comm_errhandler_function *fn, ep_errhandler_caller_t *caller)
{
    ep_status_t rc = EP_OK;
    pthread_mutex_lock(&eh_lock);
    user_eh_t *e = find_locked(eh);
    if (!e && EP_GROW(user_eh, n_user_eh, cap_user_eh, 16))
        e = &user_eh[n_user_eh++];
    if (e) /* a handle MPICH reuses was freed: nothing of the old entry holds */
        *e = (user_eh_t){eh, fn, caller, 0, 0, 0};
    else
        rc = EP_ERR_NO_MEM;
    pthread_mutex_unlock(&eh_lock);
    return rc;
}

/* One more use (an endpoint slot) or, with given, one more reference
 * handed to the program, of a recorded handler.  A predefined one handed
 * out gets an entry too: the program frees it (MPI-2.2 on), and Open MPI
 * counts the references of its predefined handlers, so the free must not
 * reach it for a reference it never gave. */
static void count_ref(MPI_Errhandler eh, int given)
{
    pthread_mutex_lock(&eh_lock);
    user_eh_t *e = find_locked(eh);
    if (!e && given && ep_errhandler_predefined(eh) && EP_GROW(user_eh, n_user_eh, cap_user_eh, 16)) {
        e = &user_eh[n_user_eh++];
        *e = (user_eh_t){eh, NULL, NULL, 0, 0, 0};
    }
    if (e)
        ++*(given ? &e->given : &e->uses);
    pthread_mutex_unlock(&eh_lock);
}

void ep_errhandler_hold(MPI_Errhandler eh) { count_ref(eh, 0); }

/* The MPICH references of e that may go now (taken off e), with eh_lock
 * held; the caller frees them once it is released. */
static long due_locked(user_eh_t *e)
{
    long n = 0;
    if (e->uses == 0 && e->given == 0) {
        n = e->deferred;
        e->deferred = 0;
    }
    return n;
}

/* Frees n MPICH references to eh. */
static int free_refs(MPI_Errhandler eh, long n)
{
    int rc = MPI_SUCCESS;
    for (; n > 0; n--) {
        MPI_Errhandler h = eh;
        rc = PMPI_Errhandler_free(&h);
    }
    return rc;
}

void ep_errhandler_release(MPI_Errhandler eh)
{
    long n = 0;
    pthread_mutex_lock(&eh_lock);
    user_eh_t *e = find_locked(eh);
    if (e && e->uses > 0 && --e->uses == 0)
        n = due_locked(e);
    pthread_mutex_unlock(&eh_lock);
    free_refs(eh, n);
}

void ep_errhandler_assign(_Atomic MPI_Errhandler *slot, MPI_Errhandler eh)
{
    ep_errhandler_hold(eh);
    ep_errhandler_release(atomic_exchange(slot, eh));
}

void ep_errhandler_give(MPI_Errhandler eh) { count_ref(eh, 1); }

int ep_errhandler_free(MPI_Errhandler *eh)
{
    pthread_mutex_lock(&eh_lock);
    user_eh_t *e = find_locked(*eh);
    if (!e) {
        pthread_mutex_unlock(&eh_lock);
        return PMPI_Errhandler_free(eh);
    }
    if (e->given > 0)
        e->given--;
    else
        e->deferred++;
    long n = due_locked(e);
    pthread_mutex_unlock(&eh_lock);
    int rc = free_refs(*eh, n);
    if (rc == MPI_SUCCESS)
        *eh = MPI_ERRHANDLER_NULL;
    return rc;
}

void ep_errhandler_finalize(void)
{
    pthread_mutex_lock(&eh_lock);
    free(user_eh);
    user_eh = NULL;
    n_user_eh = cap_user_eh = 0;
    pthread_mutex_unlock(&eh_lock);
}

static MPI_Comm_errhandler_function *user_fn(MPI_Errhandler eh, ep_errhandler_caller_t **caller)
{
    pthread_mutex_lock(&eh_lock);
    user_eh_t *e = find_locked(eh);
    MPI_Comm_errhandler_function *fn = e ? e->fn : NULL;
    *caller = e ? e->caller : NULL;
    pthread_mutex_unlock(&eh_lock);
    return fn;
}

/* MPI_ERRORS_ARE_FATAL (and a handler epmpi does not know): the message,
 * then the job ends. */
static void die_of(int code, const char *who)
{
    char buf[EP_ERR_MSG > MPI_MAX_ERROR_STRING ? EP_ERR_MSG : MPI_MAX_ERROR_STRING]; /* the whole message */
    int len, cls = MPI_ERR_OTHER;
    if (!code_string(code, buf, sizeof buf, &len))
        PMPI_Error_string(code, buf, &len);
    ep_error_code_class(code, &cls);
    ep_die(cls ? cls : 1, "fatal error in %s: %s", who, buf);
}

static void handle_only(MPI_Comm comm, char *buf, size_t size)
{
    snprintf(buf, size, "a call on communicator " EP_HFMT, EP_HARG(comm));
}

static ep_whoami_fn *_Atomic whoami = handle_only;

void ep_errhandler_set_whoami(ep_whoami_fn *fn) { atomic_store(&whoami, fn ? fn : handle_only); }

int ep_errhandler_invoke(MPI_Errhandler eh, MPI_Comm comm, int code)
{
    if (code == MPI_SUCCESS || eh == MPI_ERRORS_RETURN)
        return code;
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_ABORT) {
        ep_errhandler_caller_t *caller;
        MPI_Comm_errhandler_function *fn = user_fn(eh, &caller);
        if (fn) {
            if (caller)
                caller(fn, comm, &code);
            else
                fn(&comm, &code);
            return code;
        }
    }
    char who[MPI_MAX_OBJECT_NAME + 160];
    ep_whoami_fn *describe = atomic_load(&whoami);
    describe(comm, who, sizeof who);
    die_of(code, who);
    return code;
}

int ep_errhandler_invoke_file(MPI_Errhandler eh, MPI_File file, int code)
{
    if (code == MPI_SUCCESS || eh == MPI_ERRORS_RETURN)
        return code;
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_ABORT) {
        ep_errhandler_caller_t *caller; /* files' handlers are C's */
        MPI_Comm_errhandler_function *fn = user_fn(eh, &caller);
        if (fn) { /* recorded by MPI_File_create_errhandler: a file handler */
            ((MPI_File_errhandler_function *)(void (*)(void))fn)(&file, &code);
            return code;
        }
    }
    die_of(code, "a file");
    return code;
}

void ep_die(int exit_code, const char *fmt, ...)
{
    /* One write: the launcher interleaves the output of processes that
     * fail together, which must not split a message. */
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg - 1, fmt, ap);
    va_end(ap);
    n = n < 0 ? 0 : n > (int)sizeof msg - 2 ? (int)sizeof msg - 2 : n;
    msg[n] = '\n';
    msg[n + 1] = '\0';
    ep_say("epmpi: %s", msg);
    /* mpiexec drops what a process printed just before the job was
     * aborted (seen for about one abort in three): give the message a
     * moment to leave; the job is over anyway. */
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    ep_abort_job(exit_code);
}

void ep_abort_job(int exit_code)
{
    /* One PMPI_Abort per process: endpoints failing together would call it
     * from several threads, and Open MPI's is not thread-safe (seen: a
     * crash in its help-message parser).  The others wait for the end. */
    static atomic_flag aborting = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&aborting))
        for (;;)
            pause();
    PMPI_Abort(MPI_COMM_WORLD, exit_code);
    _exit(exit_code);
}

void ep_say(const char *fmt, ...)
{
    char small[4096], *msg = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof small && (msg = malloc((size_t)n + 1))) {
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    if (!msg) { /* no memory: what fits */
        msg = small;
        n = (int)sizeof small - 1;
    }
    fflush(stderr); /* what the program printed first comes first */
    for (size_t done = 0; done < (size_t)n;) {
        ssize_t w = write(2, msg + done, (size_t)n - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (msg != small)
        free(msg);
}

void ep_fatal(int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = ep_error_code_makev(cls, fmt, ap);
    va_end(ap);
    ep_errhandler_invoke(MPI_ERRORS_ARE_FATAL, MPI_COMM_WORLD, code);
    abort(); /* the fatal handler ends the job (ep_die) */
}

#ifdef EP_ASSERTS
void ep_assert_failed(const char *file, int line, const char *cond)
{
    ep_say("epmpi: internal assertion failed at %s:%d: %s\n", file, line, cond);
    fflush(stderr);
    abort();
}
#endif
