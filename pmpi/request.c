/* Completion calls.  Arrays may mix endpoint and classic requests: classic
 * ones are tested with PMPI_Test (never a blocking PMPI wait, which would
 * stop this thread from driving the engine), endpoint ones by the engine.
 * Arrays holding only classic requests go straight to PMPI. */
#include "coll/coll.h"
#include "diag/diag.h"
#include "entry.h"
#include "p2p/p2p.h"
#include "p2p/partitioned.h"
#include "base/wait.h"
#include "transport/transport.h"

#include <stdlib.h>
#include <string.h>

/* The empty status of a null or inactive request (MPI-4.0 3.7.3).  Like
 * every status a completion call gives, it leaves MPI_ERROR alone (3.2.5):
 * multi_note sets that field when a call returns MPI_ERR_IN_STATUS. */
static void status_empty(MPI_Status *st)
{
    static const MPI_Status empty = {.MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG};
    entry_status_give(st, &empty);
}

static int any_ep(int n, const MPI_Request reqs[])
{
    for (int i = 0; i < n; i++)
        if (ep_request_handle_is_ep(reqs[i]))
            return 1;
    return 0;
}

/* Finishes a completed endpoint request: status out, handle released (or
 * made inactive if persistent).  Returns its error code. */
static int entry_finish(ep_request_t *r, MPI_Request *slot, MPI_Status *st, const char *call, int multi)
{
    int code = MPI_SUCCESS;
    if (r->status.MPI_ERROR != MPI_SUCCESS) /* looked at inline: the usual case needs no call */
        code = multi ? entry_request_error_code(r, call) : entry_request_error(r, call);
    entry_status_give(st, &r->status); /* the multiple-completion calls set MPI_ERROR after (multi_note) */
    if (r->persistent) {
        ep_request_set_inactive(r);
    } else {
        ep_request_destroy(r);
        *slot = MPI_REQUEST_NULL;
    }
    return code;
}

/* The shared request of a send that was over when it returned (request.h):
 * complete, nothing to look up or free.  The waits of a window of small
 * sends take it here at a few instructions each. */
static int finish_sent(MPI_Request *h, MPI_Status *st)
{
    *h = MPI_REQUEST_NULL;
    entry_status_give(st, &ep_request_sent.status);
    return MPI_SUCCESS;
}

static int bad_request(const char *call, MPI_Request h)
{
    return entry_raise(NULL, call, MPI_ERR_REQUEST, "invalid request " EP_HFMT " (already completed or freed?)",
                       EP_HARG(h));
}

/* One non-destructive look at request i: 1 when it is complete (or null /
 * inactive).  For classic requests this uses PMPI_Request_get_status. */
static int peek(MPI_Request h, int *rc)
{
    *rc = MPI_SUCCESS;
    if (h == MPI_REQUEST_NULL)
        return 1;
    if (ep_request_handle_is_ep(h)) {
        ep_request_t *r = ep_request_get(h);
        return r ? ep_request_poll(r) : 1;
    }
    int flag = 0;
    *rc = PMPI_Request_get_status(h, &flag, MPI_STATUS_IGNORE);
    return flag || *rc != MPI_SUCCESS;
}

/* The endpoint part of try_complete and try_complete_active: 1 when r
 * completed (or its handle is dead), 0 when pending, -1 when inactive.
 * *owner (if not NULL) gets the request's endpoint, where errors go. */
static int entry_step(const char *call, MPI_Request *h, MPI_Status *st, int multi, int *code, ep_endpoint_t **owner)
{
    ep_request_t *r = ep_request_get(*h);
    if (!r) {
        *code = bad_request(call, *h);
        return 1;
    }
    if (owner)
        *owner = r->ep;
    if (ep_request_inactive(r))
        return -1;
    if (!ep_request_poll(r))
        return 0;
    *code = entry_finish(r, h, st, call, multi);
    return 1;
}

/* Completes request *h if it can, destructively; 1 when done.  Null and
 * inactive requests count as done with an empty status. */
static int try_complete(const char *call, MPI_Request *h, MPI_Status *st, int multi, int *code, ep_endpoint_t **owner)
{
    *code = MPI_SUCCESS;
    if (owner)
        *owner = NULL;
    if (*h == MPI_REQUEST_NULL) {
        status_empty(st);
        return 1;
    }
    if (!ep_request_handle_is_ep(*h)) {
        int flag = 0;
        *code = PMPI_Test(h, &flag, st);
        return flag || *code != MPI_SUCCESS;
    }
    int done = entry_step(call, h, st, multi, code, owner);
    if (done < 0)
        status_empty(st);
    return done != 0;
}

/* For the any/some calls: completes request *h if it can.  Returns 1 when
 * it completed, 0 when still pending, -1 when it is null or inactive (not
 * counted).  Classic requests go through PMPI_Testany on one request,
 * which tells an inactive persistent request from a completed one. */
static int try_complete_active(const char *call, MPI_Request *h, MPI_Status *st, int multi, int *code,
                               ep_endpoint_t **owner)
{
    *code = MPI_SUCCESS;
    if (owner)
        *owner = NULL;
    if (*h == MPI_REQUEST_NULL)
        return -1;
    if (!ep_request_handle_is_ep(*h)) {
        int idx = MPI_UNDEFINED, flag = 0;
        *code = PMPI_Testany(1, h, &idx, &flag, st);
        if (*code != MPI_SUCCESS)
            return 1;
        return !flag ? 0 : idx == MPI_UNDEFINED ? -1 : 1;
    }
    return entry_step(call, h, st, multi, code, owner);
}

/* The calls that complete several requests report MPI_ERR_IN_STATUS, with
 * each request's code in its status, to the handler of the first failed
 * request's endpoint. */
typedef struct multi_err {
    int failed;
    ep_endpoint_t *ep;
} multi_err_t;

static void multi_note(multi_err_t *m, MPI_Status *st, int code, ep_endpoint_t *ep)
{
    if (st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = code;
    if (code != MPI_SUCCESS && !m->failed++)
        m->ep = ep;
}

static int multi_result(const multi_err_t *m, const char *call)
{
    if (!m->failed)
        return MPI_SUCCESS;
    return entry_raise(m->ep, call, MPI_ERR_IN_STATUS, "one or more requests failed; see the statuses");
}

static MPI_Status *status_at(MPI_Status *array, int i)
{
    return array == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &array[i];
}

ENTRY_ENDPOINT_PATH int wait_endpoints(MPI_Request *request, MPI_Status *status)
{
    int code;
    if (*request == EP_REQUEST_SENT)
        return finish_sent(request, status);
    ep_request_t *r = ep_request_get(*request);
    if (!r)
        return bad_request("MPI_Wait", *request);
    if (ep_request_inactive(r)) {
        status_empty(status);
        return MPI_SUCCESS;
    }
    if (!ep_request_poll(r)) {
        ep_diag_enter(r->ep, "MPI_Wait");
        ep_request_wait(r);
        ep_diag_leave(r->ep);
    }
    code = entry_finish(r, request, status, "MPI_Wait", 0);
    return code;
}

ENTRY_API int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (!request || !ep_request_handle_is_ep(*request))
        return PMPI_Wait(request, status);
    return wait_endpoints(request, status);
}

ENTRY_ENDPOINT_PATH int test_endpoint(MPI_Request *request, int *flag, MPI_Status *status)
{
    int code;
    ep_progress();
    *flag = try_complete("MPI_Test", request, status, 0, &code, NULL);
    return code;
}

ENTRY_API int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (!request || !ep_request_handle_is_ep(*request))
        return PMPI_Test(request, flag, status);
    return test_endpoint(request, flag, status);
}

/* Whether request i of an array, r, is complete.  While r is in NET, it
 * is tested together with the PMPI parts of those after it that are in
 * NET too (ep_transport_test_some). */
static int done_at(ep_request_t *r, const MPI_Request reqs[], int i, int count)
{
    if (ep_request_state(r) == EP_RS_NET) {
        ep_request_t *rs[EP_TEST_SOME_MAX];
        int n = 0;
        rs[n++] = r;
        for (i++; i < count && n < EP_TEST_SOME_MAX; i++) {
            ep_request_t *q = ep_request_handle_is_ep(reqs[i]) ? ep_request_get(reqs[i]) : NULL;
            if (q && ep_request_state(q) == EP_RS_NET)
                rs[n++] = q;
        }
        ep_transport_test_some(rs, n);
    }
    return ep_request_poll(r);
}

/* Waits until r, array element i, is complete (apart from wait_ep: its
 * loop's values would be saved at every element). */
static __attribute__((noinline)) void wait_done(ep_request_t *r, const MPI_Request reqs[], int i, int count)
{
    EP_WAIT_UNTIL(done_at(r, reqs, i, count));
}

/* MPI_Waitall's wait for endpoint request *h, array element i: the handle
 * is looked up once, not at every poll. */
static int wait_ep(const char *call, MPI_Request reqs[], int i, int count, MPI_Status *st, ep_endpoint_t **owner)
{
    ep_request_t *r = ep_request_get(reqs[i]);
    *owner = NULL;
    if (!r)
        return bad_request(call, reqs[i]);
    *owner = r->ep;
    if (ep_request_inactive(r)) {
        status_empty(st);
        return MPI_SUCCESS;
    }
    /* Most are over already: the poll that completed one delivered what
     * had come for those after it. */
    if (ep_request_state(r) != EP_RS_DONE)
        wait_done(r, reqs, i, count);
    return entry_finish(r, &reqs[i], st, call, 1);
}

/* MPI_Waitall's wait for a classic request in an array with endpoint ones
 * (apart, like wait_done). */
static __attribute__((noinline)) int wait_classic(const char *call, MPI_Request *h, MPI_Status *st,
                                                  ep_endpoint_t **owner)
{
    int code;
    EP_WAIT_UNTIL(try_complete(call, h, st, 1, &code, owner));
    return code;
}

ENTRY_ENDPOINT_PATH int waitall_endpoints(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    static const char call[] = "MPI_Waitall";
    multi_err_t m = {0};
    /* In order: MPI does not say in which order requests complete, and
     * progress does not depend on which one is being polled (ep_progress and
     * any PMPI test move everything), so polling only the first unfinished
     * request keeps the waiting thread off the lines the others write. */
    for (int i = 0; i < count; i++) {
        MPI_Status *st = status_at(array_of_statuses, i);
        ep_endpoint_t *owner = NULL;
        int code;
        if (array_of_requests[i] == EP_REQUEST_SENT) {
            code = finish_sent(&array_of_requests[i], st);
        } else if (ep_request_handle_is_ep(array_of_requests[i])) {
            code = wait_ep(call, array_of_requests, i, count, st, &owner);
        } else {
            code = wait_classic(call, &array_of_requests[i], st, &owner);
        }
        multi_note(&m, st, code, owner);
    }
    return multi_result(&m, call);
}

ENTRY_API int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    if (count <= 0 || !array_of_requests || !any_ep(count, array_of_requests))
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    return waitall_endpoints(count, array_of_requests, array_of_statuses);
}

ENTRY_ENDPOINT_PATH int testall_endpoints(int count, MPI_Request array_of_requests[], int *flag,
                                          MPI_Status array_of_statuses[])
{
    static const char call[] = "MPI_Testall";
    ep_progress();
    /* MPI: complete nothing unless everything is complete. */
    for (int i = 0; i < count; i++) {
        int rc;
        if (!peek(array_of_requests[i], &rc)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    multi_err_t m = {0};
    for (int i = 0; i < count; i++) {
        ep_endpoint_t *owner;
        int code;
        MPI_Status *st = status_at(array_of_statuses, i);
        try_complete(call, &array_of_requests[i], st, 1, &code, &owner);
        multi_note(&m, st, code, owner);
    }
    *flag = 1;
    return multi_result(&m, call);
}

ENTRY_API int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    if (count <= 0 || !array_of_requests || !any_ep(count, array_of_requests))
        return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    return testall_endpoints(count, array_of_requests, flag, array_of_statuses);
}

/* What the any/some passes do with one request: try_complete_active, or
 * for MPI 4.1's get_status calls status_peek, which frees nothing. */
typedef int (*request_step_fn)(const char *call, MPI_Request *h, MPI_Status *st, int multi, int *code,
                               ep_endpoint_t **owner);

/* One pass of Testany (or Waitany, Request_get_status_any): 1 when it
 * settled (*index set). */
static int any_pass(const char *call, int count, MPI_Request reqs[], int *index, MPI_Status *status, int *code,
                    request_step_fn step)
{
    int active = 0;
    *code = MPI_SUCCESS;
    for (int i = 0; i < count; i++) {
        int done = step(call, &reqs[i], status, 0, code, NULL);
        if (done < 0)
            continue;
        active = 1;
        if (done) {
            *index = i;
            return 1;
        }
    }
    if (!active) {
        *index = MPI_UNDEFINED;
        status_empty(status);
        return 1;
    }
    return 0;
}

ENTRY_ENDPOINT_PATH int waitany_endpoints(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    int code;
    EP_WAIT_UNTIL(any_pass("MPI_Waitany", count, array_of_requests, index, status, &code, try_complete_active));
    return code;
}

ENTRY_API int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    if (count <= 0 || !array_of_requests || !any_ep(count, array_of_requests))
        return PMPI_Waitany(count, array_of_requests, index, status);
    return waitany_endpoints(count, array_of_requests, index, status);
}

ENTRY_ENDPOINT_PATH int testany_endpoints(int count, MPI_Request array_of_requests[], int *index, int *flag,
                                          MPI_Status *status)
{
    int code;
    ep_progress();
    *flag = any_pass("MPI_Testany", count, array_of_requests, index, status, &code, try_complete_active);
    if (!*flag)
        *index = MPI_UNDEFINED;
    return code;
}

ENTRY_API int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
    if (count <= 0 || !array_of_requests || !any_ep(count, array_of_requests))
        return PMPI_Testany(count, array_of_requests, index, flag, status);
    return testany_endpoints(count, array_of_requests, index, flag, status);
}

/* One pass of Testsome (or Waitsome, Request_get_status_some): 1 when it
 * settled. */
static int some_pass(const char *call, int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[],
                     multi_err_t *m, request_step_fn step)
{
    int active = 0, k = 0;
    for (int i = 0; i < n; i++) {
        ep_endpoint_t *owner;
        int code;
        MPI_Status *st = status_at(sts, k);
        int done = step(call, &reqs[i], st, 1, &code, &owner);
        if (done < 0)
            continue;
        active = 1;
        if (done) {
            multi_note(m, st, code, owner);
            idx[k++] = i;
        }
    }
    *outcount = active ? k : MPI_UNDEFINED;
    return !active || k > 0;
}

ENTRY_ENDPOINT_PATH int waitsome_endpoints(int incount, MPI_Request array_of_requests[], int *outcount,
                                           int array_of_indices[], MPI_Status array_of_statuses[])
{
    multi_err_t m = {0};
    EP_WAIT_UNTIL(some_pass("MPI_Waitsome", incount, array_of_requests, outcount, array_of_indices, array_of_statuses,
                            &m, try_complete_active));
    return multi_result(&m, "MPI_Waitsome");
}

ENTRY_API int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                           MPI_Status array_of_statuses[])
{
    if (incount <= 0 || !array_of_requests || !any_ep(incount, array_of_requests))
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    return waitsome_endpoints(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

ENTRY_ENDPOINT_PATH int testsome_endpoints(int incount, MPI_Request array_of_requests[], int *outcount,
                                           int array_of_indices[], MPI_Status array_of_statuses[])
{
    multi_err_t m = {0};
    ep_progress();
    some_pass("MPI_Testsome", incount, array_of_requests, outcount, array_of_indices, array_of_statuses, &m,
              try_complete_active);
    return multi_result(&m, "MPI_Testsome");
}

ENTRY_API int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                           MPI_Status array_of_statuses[])
{
    if (incount <= 0 || !array_of_requests || !any_ep(incount, array_of_requests))
        return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    return testsome_endpoints(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

ENTRY_ENDPOINT_PATH int request_get_status_ep(MPI_Request request, int *flag, MPI_Status *status)
{
    ep_request_t *r = ep_request_get(request);
    if (!r)
        return bad_request("MPI_Request_get_status", request);
    ep_progress();
    *flag = ep_request_poll(r);
    if (*flag && status != MPI_STATUS_IGNORE) {
        if (ep_request_inactive(r))
            status_empty(status);
        else
            entry_status_give(status, &r->status);
    }
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int request_free_endpoints(MPI_Request *request)
{
    ep_request_t *r = ep_request_get(*request);
    if (!r)
        return bad_request("MPI_Request_free", *request);
    /* MPI-4.0 3.7.3: freeing a collective's request before it completes
     * is erroneous; an inactive persistent one may go. */
    if (ep_request_partitioned(r) && !ep_request_inactive(r))
        return entry_raise(r->ep, "MPI_Request_free", MPI_ERR_REQUEST,
                           "an active partitioned request cannot be freed; complete it with a wait or test call "
                           "first");
    if (r->kind == EP_REQ_COLL && !(r->persistent && ep_request_inactive(r)))
        return entry_raise(r->ep, "MPI_Request_free", MPI_ERR_REQUEST,
                           r->persistent ? "an active persistent collective request cannot be freed; complete it "
                                           "with a wait or test call first"
                                         : "a non-blocking collective request cannot be freed; complete it with a "
                                           "wait or test call");
    ep_request_drop_handle(r);
    *request = MPI_REQUEST_NULL;
    if (ep_request_poll(r))
        ep_request_destroy(r);
    else
        ep_progress_detach(r); /* the operation goes on; the engine frees it */
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Request_free(MPI_Request *request)
{
    if (!request || !ep_request_handle_is_ep(*request))
        return PMPI_Request_free(request);
    return request_free_endpoints(request);
}

ENTRY_API int MPI_Cancel(MPI_Request *request)
{
    if (!request || !ep_request_handle_is_ep(*request))
        return PMPI_Cancel(request);
    ep_request_t *r = ep_request_get(*request);
    if (!r)
        return bad_request("MPI_Cancel", *request);
    if (r->kind == EP_REQ_COLL)
        return entry_raise(r->ep, "MPI_Cancel", MPI_ERR_REQUEST,
                           "a non-blocking collective cannot be cancelled (MPI makes it erroneous)");
    if (ep_request_partitioned(r) && !ep_request_inactive(r))
        return entry_raise(r->ep, "MPI_Cancel", MPI_ERR_REQUEST,
                           "an active partitioned request cannot be cancelled (MPI makes it erroneous)");
    /* Receives are cancelled if still unmatched.  Sends are not cancelled:
     * they complete normally and MPI_Test_cancelled reports false.  Nor is
     * a pair (MPI_Isendrecv): its send would go on whatever its receive
     * did, and MPI allows a cancel or a completion, not both. */
    if (r->kind == EP_REQ_RECV)
        ep_recv_cancel(r);
    return MPI_SUCCESS;
}

static int start_one(const char *call, MPI_Request *h)
{
    if (!ep_request_handle_is_ep(*h))
        return PMPI_Start(h);
    ep_request_t *r = ep_request_get(*h);
    if (!r)
        return bad_request(call, *h);
    if (!r->persistent)
        return entry_raise(r->ep, call, MPI_ERR_REQUEST, "request " EP_HFMT " is not persistent", EP_HARG(*h));
    if (!ep_request_inactive(r))
        return entry_raise(r->ep, call, MPI_ERR_REQUEST, "request " EP_HFMT " is already active", EP_HARG(*h));
    ep_status_t st = r->kind == EP_REQ_COLL      ? ep_coll_persistent_start(r)
                     : ep_request_partitioned(r) ? ep_part_start(r)
                                                 : ep_persistent_start(r);
    return st ? entry_raise_start(r->ep, call, st, r->count) : MPI_SUCCESS;
}

ENTRY_API int MPI_Start(MPI_Request *request)
{
    if (!request || !ep_request_handle_is_ep(*request))
        return PMPI_Start(request);
    return start_one("MPI_Start", request);
}

ENTRY_ENDPOINT_PATH int startall_endpoints(int count, MPI_Request array_of_requests[])
{
    for (int i = 0; i < count; i++) {
        int rc = start_one("MPI_Startall", &array_of_requests[i]);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}

ENTRY_API int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    if (count <= 0 || !array_of_requests || !any_ep(count, array_of_requests))
        return PMPI_Startall(count, array_of_requests);
    return startall_endpoints(count, array_of_requests);
}

/* ---- partitioned communication (src/p2p/partitioned.h) ------------------------ */

#if EP_HAVE_MPI_Pready /* MPI 4.0's (Open MPI 5.0 on) */

/* The partitioned send (send) or receive behind h; else NULL, the error
 * raised in *rc. */
static ep_request_t *part_request(const char *call, MPI_Request h, int send, int *rc)
{
    ep_request_t *r = ep_request_get(h);
    if (!r)
        *rc = bad_request(call, h);
    else if (r->kind != (send ? EP_REQ_PART_SEND : EP_REQ_PART_RECV))
        *rc = entry_raise(r->ep, call, MPI_ERR_REQUEST, "request " EP_HFMT " is not a partitioned %s", EP_HARG(h),
                          send ? "send (MPI_Psend_init)" : "receive (MPI_Precv_init)");
    else
        return r;
    return NULL;
}

static int check_partition(const char *call, ep_request_t *r, int i)
{
    int n = ep_part_partitions(r);
    if (i >= 0 && i < n)
        return MPI_SUCCESS;
    return entry_raise(r->ep, call, MPI_ERR_ARG, "partition %d does not exist (the request has %d, from 0)", i, n);
}

/* The active partitioned send behind h, or NULL (*rc raised). */
static ep_request_t *active_send(const char *call, MPI_Request h, int *rc)
{
    ep_request_t *r = part_request(call, h, 1, rc);
    if (r && ep_request_inactive(r)) {
        *rc = entry_raise(r->ep, call, MPI_ERR_REQUEST, "the partitioned send is not active (MPI_Start it first)");
        return NULL;
    }
    return r;
}

/* MPI_Pready_range of an active send; MPI_Pready is the range of one. */
ENTRY_ENDPOINT_PATH int pready_ep(const char *call, int low, int high, MPI_Request request)
{
    int rc;
    ep_request_t *r = active_send(call, request, &rc);
    if (!r)
        return rc;
    if ((rc = check_partition(call, r, low)) || (rc = check_partition(call, r, high)))
        return rc;
    if (low > high)
        return entry_raise(r->ep, call, MPI_ERR_ARG, "the range of partitions %d to %d is empty", low, high);
    for (int i = low; i <= high; i++) {
        ep_status_t st = ep_part_ready(r, i);
        if (st)
            return entry_raise_status(r->ep, call, st, "partition %d", i);
    }
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int pready_list_ep(int length, const int partitions[], MPI_Request request)
{
    static const char call[] = "MPI_Pready_list";
    int rc;
    ep_request_t *r = active_send(call, request, &rc);
    if (!r)
        return rc;
    if (length < 0 || (length > 0 && !partitions))
        return entry_raise(r->ep, call, MPI_ERR_ARG, "invalid list of %d partitions%s", length,
                           length > 0 ? " (array_of_partitions is NULL)" : "");
    for (int k = 0; k < length; k++)
        if ((rc = check_partition(call, r, partitions[k])))
            return rc;
    for (int k = 0; k < length; k++) {
        ep_status_t st = ep_part_ready(r, partitions[k]);
        if (st)
            return entry_raise_status(r->ep, call, st, "partition %d", partitions[k]);
    }
    return MPI_SUCCESS;
}

ENTRY_ENDPOINT_PATH int parrived_ep(MPI_Request request, int partition, int *flag)
{
    static const char call[] = "MPI_Parrived";
    int rc;
    ep_request_t *r = part_request(call, request, 0, &rc);
    if (!r)
        return rc;
    if ((rc = check_partition(call, r, partition)))
        return rc;
    if (!flag)
        return entry_raise(r->ep, call, MPI_ERR_ARG, "flag pointer is NULL");
    ep_progress();
    *flag = ep_part_arrived(r, partition);
    return MPI_SUCCESS;
}
#endif

#if HAVE_DECL_MPI_REQUEST_GET_STATUS_ALL
/* ---- MPI 4.1: the status of several requests, none of them freed ----------- */

/* try_complete_active without completing: the same answers and status, the
 * request left as it is.  A classic request is asked of
 * PMPI_Request_get_status, which cannot tell an inactive persistent request
 * from a complete one: it counts as complete. */
static int status_peek(const char *call, MPI_Request *h, MPI_Status *st, int multi, int *code, ep_endpoint_t **owner)
{
    *code = MPI_SUCCESS;
    if (owner)
        *owner = NULL;
    if (*h == MPI_REQUEST_NULL)
        return -1;
    if (!ep_request_handle_is_ep(*h)) {
        int flag = 0;
        *code = PMPI_Request_get_status(*h, &flag, st);
        return flag || *code != MPI_SUCCESS;
    }
    ep_request_t *r = ep_request_get(*h);
    if (!r) {
        *code = bad_request(call, *h);
        return 1;
    }
    if (owner)
        *owner = r->ep;
    if (ep_request_inactive(r))
        return -1;
    if (!ep_request_poll(r))
        return 0;
    if (r->status.MPI_ERROR != MPI_SUCCESS)
        *code = multi ? entry_request_error_code(r, call) : entry_request_error(r, call);
    entry_status_give(st, &r->status);
    return 1;
}

ENTRY_API int MPI_Request_get_status_all(int count, EP_GET_STATUS_CONST MPI_Request array_of_requests[], int *flag,
                                         MPI_Status array_of_statuses[])
{
    static const char call[] = "MPI_Request_get_status_all";
    if (count <= 0 || !array_of_requests || !any_ep(count, array_of_requests))
        return PMPI_Request_get_status_all(count, array_of_requests, flag, array_of_statuses);
    ep_progress();
    for (int i = 0; i < count; i++) /* statuses only when all are complete */
        if (!peek(array_of_requests[i], &(int){0})) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    multi_err_t m = {0};
    for (int i = 0; i < count; i++) {
        int code;
        ep_endpoint_t *owner;
        MPI_Status *st = status_at(array_of_statuses, i);
        if (status_peek(call, (MPI_Request *)&array_of_requests[i], st, 1, &code, &owner) < 0)
            status_empty(st);
        multi_note(&m, st, code, owner);
    }
    *flag = 1;
    return multi_result(&m, call);
}

ENTRY_API int MPI_Request_get_status_any(int count, EP_GET_STATUS_CONST MPI_Request array_of_requests[], int *indx,
                                         int *flag, MPI_Status *status)
{
    if (count <= 0 || !array_of_requests || !any_ep(count, array_of_requests))
        return PMPI_Request_get_status_any(count, array_of_requests, indx, flag, status);
    int code;
    ep_progress();
    *flag = any_pass("MPI_Request_get_status_any", count, (MPI_Request *)array_of_requests, indx, status, &code,
                     status_peek); /* status_peek only reads the requests */
    if (!*flag)
        *indx = MPI_UNDEFINED;
    return code;
}

ENTRY_API int MPI_Request_get_status_some(int incount, EP_GET_STATUS_CONST MPI_Request array_of_requests[],
                                          int *outcount, int array_of_indices[], MPI_Status array_of_statuses[])
{
    static const char call[] = "MPI_Request_get_status_some";
    if (incount <= 0 || !array_of_requests || !any_ep(incount, array_of_requests))
        return PMPI_Request_get_status_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    multi_err_t m = {0};
    ep_progress();
    some_pass(call, incount, (MPI_Request *)array_of_requests, outcount, array_of_indices, array_of_statuses, &m,
              status_peek); /* status_peek only reads the requests */
    return multi_result(&m, call);
}
#endif

#if HAVE_DECL_MPIX_WAITALL_ENQUEUE
/* MPICH's GPU-stream wait (MPICH 4.2): the requests of a stream
 * communicator, which an endpoint never is. */
ENTRY_API int MPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    if (count > 0 && array_of_requests && any_ep(count, array_of_requests))
        return entry_raise(NULL, "MPIX_Waitall_enqueue", MPI_ERR_REQUEST,
                           "endpoint requests cannot be waited for on a GPU stream");
    return PMPIX_Waitall_enqueue(count, array_of_requests, array_of_statuses);
}
#endif

/* The entry points whose dispatch is data (maint/dispatch.txt). */
#include "request.entry.gen.inc"
