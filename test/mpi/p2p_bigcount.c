/* The MPI-4 large-count forms on endpoint communicators: MPI_Send_c,
 * MPI_Recv_c, MPI_Isend_c / MPI_Irecv_c, MPI_Sendrecv_c, MPI_Mrecv_c,
 * MPI_Bcast_c and MPI_Allreduce_c run like their int forms; MPI_Bsend_c
 * takes its space from a buffer attached with MPI_Buffer_attach_c (and
 * MPI_Buffer_detach_c gives it back); a reduction's count beyond INT_MAX
 * with a null datatype is MPI_ERR_TYPE naming the call, which checks its
 * arguments before it cuts the vector in pieces (count_huge_c moves such
 * counts). */
#include "eptest.h"

#include <limits.h>
#if !EP_HAVE_MPI_Send_c
/* MPI 4.0's large-count (_c) calls: not in this MPI. */
int main(void)
{
    puts("skipped: this MPI has no MPI 4.0's large-count (_c) calls");
    return 77;
}
#else
static void body(MPI_Comm comm, void *arg)
{
    int r, n;
    (void)arg;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int right = (r + 1) % n, left = (r + n - 1) % n;
    int out[4] = {r, r + 1, r + 2, r + 3}, in[4] = {-1, -1, -1, -1};
    MPI_Request rq[2];
    MPI_Status st;
    MPI_Count cnt = 0;

    EPT_OK(MPI_Irecv_c(in, 4, MPI_INT, left, 1, comm, &rq[0]));
    EPT_OK(MPI_Isend_c(out, 4, MPI_INT, right, 1, comm, &rq[1]));
    EPT_OK(MPI_Waitall(2, rq, statuses_ignore()));
    EPT_CHECK(in[0] == left && in[3] == left + 3, "MPI_Isend_c / MPI_Irecv_c got %d %d", in[0], in[3]);

    EPT_OK(MPI_Sendrecv_c(out, 2, MPI_INT, right, 2, in, 4, MPI_INT, left, 2, comm, &st));
    MPI_Get_count_c(&st, MPI_INT, &cnt);
    EPT_CHECK(in[1] == left + 1 && cnt == 2, "MPI_Sendrecv_c: %d, count %lld", in[1], (long long)cnt);

    /* Small sends complete without their receive (eager), so a ring of
     * blocking sends is safe here. */
    EPT_OK(MPI_Send_c(out, 3, MPI_INT, right, 3, comm));
    EPT_OK(MPI_Send_c(out, 1, MPI_INT, right, 4, comm));
    MPI_Message m;
    EPT_OK(MPI_Mprobe(left, 3, comm, &m, &st));
    EPT_OK(MPI_Mrecv_c(in, 4, MPI_INT, &m, &st));
    EPT_CHECK(in[2] == left + 2 && m == MPI_MESSAGE_NULL, "MPI_Mrecv_c got %d", in[2]);
    EPT_OK(MPI_Recv_c(in, 4, MPI_INT, left, 4, comm, &st));
    MPI_Get_count_c(&st, MPI_INT, &cnt);
    EPT_CHECK(in[0] == left && cnt == 1, "MPI_Recv_c got %d, count %lld", in[0], (long long)cnt);

    EPT_OK(MPI_Bsend_c(out, 4, MPI_INT, right, 5, comm));
    EPT_OK(MPI_Recv_c(in, 4, MPI_INT, left, 5, comm, &st));
    EPT_CHECK(in[3] == left + 3, "MPI_Bsend_c: got %d", in[3]);

    int b[2] = {r == 0 ? 42 : 0, r == 0 ? 43 : 0}, sum = 0;
    EPT_OK(MPI_Bcast_c(b, 2, MPI_INT, 0, comm));
    EPT_CHECK(b[0] == 42 && b[1] == 43, "MPI_Bcast_c gave %d %d", b[0], b[1]);
    EPT_OK(MPI_Allreduce_c(&r, &sum, 1, MPI_INT, MPI_SUM, comm));
    EPT_CHECK(sum == n * (n - 1) / 2, "MPI_Allreduce_c gave %d", sum);

    EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    int rc = MPI_Allreduce_c(&r, &sum, (MPI_Count)INT_MAX + 1, MPI_DATATYPE_NULL, MPI_SUM, comm), cls = -1, len;
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    EPT_CHECK(cls == MPI_ERR_TYPE && strstr(msg, "MPI_Allreduce_c"), "a count beyond INT_MAX: class %d, '%s'", cls,
              msg);
}

int main(int argc, char **argv)
{
    int nlocal = ept_init(&argc, &argv, 30);
    /* Room for two buffered messages per local rank. */
    MPI_Count bsize = (MPI_Count)(4 * sizeof(int) + MPI_BSEND_OVERHEAD) * 2 * (nlocal > 0 ? nlocal : 1);
    char *bbuf = malloc((size_t)bsize);
    EPT_CHECK(bbuf, "out of memory");
    EPT_OK(MPI_Buffer_attach_c(bbuf, bsize));
    run_ranks(nlocal, body, NULL);
    PHASE("MPI_Buffer_detach_c");
    void *addr = NULL;
    MPI_Count dsize = 0;
    EPT_OK(MPI_Buffer_detach_c(&addr, &dsize));
    EPT_CHECK(addr == bbuf && dsize == bsize, "MPI_Buffer_detach_c gave %p, %lld bytes", addr, (long long)dsize);
    free(bbuf);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}

#endif
