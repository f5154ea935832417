#include "error.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EP_ERR_TAG 0x0007ff00u      /* MPICH's generic-message index, all ones */
#define EP_ERR_TAG_MASK 0x4007ff00u /* ... with the dynamic-code bit clear */
#define EP_ERR_CLASS_MASK 0x7fu
#define EP_ERR_SEQ_SHIFT 19
#define EP_ERR_SEQ_MASK 0x7ffu /* bits 19-29 */
#define EP_ERR_RING 1024 /* half the sequence space, so a reused slot is detected */
#define EP_ERR_MSG 320

static const struct {
    int cls;
    const char *text;
} status_table[] = {
#define EP_X(name, cls, text) {cls, text},
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

/* Message ring.  A slot is written under ring_lock; readers copy under it. */
typedef struct {
    unsigned seq; /* sequence number that wrote the slot */
    char msg[EP_ERR_MSG];
} ep_err_slot_t;

static ep_err_slot_t ring[EP_ERR_RING];
static unsigned ring_next;
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;

int ep_error_code_makev(int cls, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&ring_lock);
    unsigned seq = ring_next++ & EP_ERR_SEQ_MASK;
    ep_err_slot_t *s = &ring[seq % EP_ERR_RING];
    s->seq = seq;
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    pthread_mutex_unlock(&ring_lock);
    return (int)(EP_ERR_TAG | (seq << EP_ERR_SEQ_SHIFT) | ((unsigned)cls & EP_ERR_CLASS_MASK));
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

int ep_error_code_string(int code, char *buf, int *len)
{
    if (code == MPI_ERR_ENDPOINTS) {
        snprintf(buf, MPI_MAX_ERROR_STRING, "%s", class_text(code));
        *len = (int)strlen(buf);
        return 1;
    }
    if (!is_ours(code))
        return 0;
    unsigned seq = ((unsigned)code >> EP_ERR_SEQ_SHIFT) & EP_ERR_SEQ_MASK;
    int cls = (int)((unsigned)code & EP_ERR_CLASS_MASK);
    pthread_mutex_lock(&ring_lock);
    ep_err_slot_t *s = &ring[seq % EP_ERR_RING];
    if (s->seq == seq && s->msg[0])
        snprintf(buf, MPI_MAX_ERROR_STRING, "%s", s->msg);
    else
        snprintf(buf, MPI_MAX_ERROR_STRING, "%s", class_text(cls));
    pthread_mutex_unlock(&ring_lock);
    *len = (int)strlen(buf);
    return 1;
}

/* User error handlers: a small table from handle to function, append-only
 * (handles are few; MPI_Errhandler_free leaves the entry, harmless). */
#define EP_MAX_USER_EH 256
static struct {
    MPI_Errhandler eh;
    MPI_Comm_errhandler_function *fn;
} user_eh[EP_MAX_USER_EH];
static _Atomic int n_user_eh;
static pthread_mutex_t eh_lock = PTHREAD_MUTEX_INITIALIZER;

void ep_errhandler_record(MPI_Errhandler eh, MPI_Comm_errhandler_function *fn)
{
    pthread_mutex_lock(&eh_lock);
    int n = atomic_load(&n_user_eh);
    int i;
    for (i = 0; i < n; i++)
        if (user_eh[i].eh == eh)
            break;
    if (i < EP_MAX_USER_EH) {
        user_eh[i].eh = eh;
        user_eh[i].fn = fn;
        if (i == n)
            atomic_store(&n_user_eh, n + 1);
    }
    pthread_mutex_unlock(&eh_lock);
}

static MPI_Comm_errhandler_function *user_fn(MPI_Errhandler eh)
{
    int n = atomic_load(&n_user_eh);
    for (int i = n - 1; i >= 0; i--)
        if (user_eh[i].eh == eh)
            return user_eh[i].fn;
    return NULL;
}

int ep_errhandler_invoke(MPI_Errhandler eh, MPI_Comm comm, int code)
{
    if (code == MPI_SUCCESS || eh == MPI_ERRORS_RETURN)
        return code;
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_ABORT) {
        MPI_Comm_errhandler_function *fn = user_fn(eh);
        if (fn) {
            fn(&comm, &code);
            return code;
        }
    }
    char buf[MPI_MAX_ERROR_STRING];
    int len, cls = MPI_ERR_OTHER;
    if (!ep_error_code_string(code, buf, &len))
        PMPI_Error_string(code, buf, &len);
    ep_error_code_class(code, &cls);
    fprintf(stderr, "epmpi: fatal error: %s\n", buf);
    fflush(stderr);
    PMPI_Abort(MPI_COMM_WORLD, cls ? cls : 1);
    return code;
}
