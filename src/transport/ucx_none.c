/* The UCX transport when epmpi is built without UCX (ucx.h): nothing
 * starts, every communicator keeps the MPI path. */
#include "transport/ucx.h"

#include "base/settings.h"

#include <stdio.h>

#ifndef EP_HAVE_UCX

int ep_ucx_on;

ep_status_t ep_ucx_init(char *err, size_t errlen)
{
    if (ep_config.transport != EP_TRANSPORT_UCX)
        return EP_OK;
    snprintf(err, errlen,
             "EPMPI_TRANSPORT=ucx, but epmpi was built without UCX (install libucx-dev, then "
             "configure and build again)");
    return EP_ERR_OTHER;
}
void ep_ucx_stop_helper(void) {}
void ep_ucx_finalize(void) {}
void ep_ucx_describe(char *buf, size_t len) { snprintf(buf, len, "transport mpi (built without UCX)"); }
ep_status_t ep_ucx_comm_start(ep_comm_t *c, MPI_Request *req)
{
    c->ucx = 0;
    *req = MPI_REQUEST_NULL;
    return EP_OK;
}
ep_status_t ep_ucx_comm_finish(ep_comm_t *c, MPI_Request *req)
{
    (void)c;
    *req = MPI_REQUEST_NULL;
    return EP_OK;
}
void ep_ucx_comm_gone(ep_comm_t *c) { (void)c; }
/* Never called: no communicator has c->ucx. */
ep_status_t ep_ucx_send(ep_request_t *s, int idx, const ep_dt_layout_t *lay)
{
    (void)s, (void)idx, (void)lay;
    return EP_ERR_INTERN;
}
void ep_ucx_recv(ep_request_t *r, ep_msg_t *m) { (void)r, (void)m; }
int ep_ucx_send_now(ep_endpoint_t *ep, int idx, const void *buf, size_t bytes, int tag)
{
    (void)ep, (void)idx, (void)buf, (void)bytes, (void)tag;
    return 0;
}
int ep_ucx_via_inbox(const ep_comm_t *c, int idx)
{
    (void)c, (void)idx;
    return 0;
}
int ep_ucx_node_holds(const ep_comm_t *c)
{
    (void)c;
    return 0;
}
int ep_ucx_recv_post_hold(ep_endpoint_t *ep)
{
    (void)ep;
    return 0;
}
void ep_ucx_recv_post_give(ep_endpoint_t *ep, int took) { (void)ep, (void)took; }
int ep_ucx_recv_post(ep_request_t *r)
{
    (void)r;
    return 0;
}
int ep_ucx_recv_cancel(ep_request_t *r)
{
    (void)r;
    return 0;
}
int ep_ucx_test(ep_request_t *r)
{
    (void)r;
    return EP_ERR_INTERN;
}
void ep_ucx_poll_ep(ep_endpoint_t *ep) { (void)ep; }
void ep_ucx_progress(void) {}
void ep_ucx_msg_discard(ep_msg_t *m) { (void)m; }

#endif
