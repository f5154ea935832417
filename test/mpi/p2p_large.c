/* Large messages: 1 MiB and 8 MiB between endpoints of one process and
 * between processes, with MPI_Sendrecv (around the ring, pairwise with every
 * rank, with oneself), MPI_Sendrecv_replace (contiguous and with a strided
 * datatype), MPI_Isend + MPI_Recv and MPI_Ssend; every byte is checked.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#define MIB (1 << 20)
static const int sizes[2] = {MIB, 8 * MIB};

typedef struct {
    MPI_Comm comm;
    int me, n, left, right;
    unsigned char *sb, *rb;
} ctx_t;

static void check(const ctx_t *x, const char *what, const MPI_Status *st, const unsigned char *b, int size, int src,
                  int tag, int c)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    EPT_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && cnt == size,
              "%s, %d bytes: rank %d: status source %d tag %d count %d, expected %d %d %d", what, size, x->me,
              st->MPI_SOURCE, st->MPI_TAG, cnt, src, tag, size);
    size_t bad = first_bad(b, (size_t)size, src, tag, c);
    EPT_CHECK(bad == (size_t)size, "%s, %d bytes: rank %d: byte %zu from %d wrong", what, size, x->me, bad, src);
}

static void large(MPI_Comm comm, void *arg)
{
    (void)arg;
    ctx_t x = {.comm = comm};
    MPI_Status st;
    ept_ring_place(comm, &x.me, &x.n, &x.left, &x.right);
    x.sb = malloc(8 * MIB);
    x.rb = malloc(8 * MIB);
    EPT_CHECK(x.sb && x.rb, "out of memory");
    for (int si = 0; si < 2; si++) {
        int size = sizes[si], tag = 10 * si;

        PHASE("MPI_Sendrecv around the ring");
        fill(x.sb, (size_t)size, x.me, tag, 1);
        memset(x.rb, 0, (size_t)size);
        EPT_OK(MPI_Sendrecv(x.sb, size, MPI_BYTE, x.right, tag, x.rb, size, MPI_BYTE, x.left, tag, comm, &st));
        check(&x, "MPI_Sendrecv ring", &st, x.rb, size, x.left, tag, 1);

        PHASE("MPI_Sendrecv with oneself");
        fill(x.sb, (size_t)size, x.me, tag + 1, 2);
        EPT_OK(MPI_Sendrecv(x.sb, size, MPI_BYTE, x.me, tag + 1, x.rb, size, MPI_BYTE, x.me, tag + 1, comm, &st));
        check(&x, "MPI_Sendrecv self", &st, x.rb, size, x.me, tag + 1, 2);

        PHASE("MPI_Sendrecv_replace around the ring");
        fill(x.rb, (size_t)size, x.me, tag + 2, 3);
        EPT_OK(MPI_Sendrecv_replace(x.rb, size, MPI_BYTE, x.right, tag + 2, x.left, tag + 2, comm, &st));
        check(&x, "MPI_Sendrecv_replace ring", &st, x.rb, size, x.left, tag + 2, 3);

        PHASE("MPI_Sendrecv_replace with oneself");
        fill(x.rb, (size_t)size, x.me, tag + 3, 4);
        EPT_OK(MPI_Sendrecv_replace(x.rb, size, MPI_BYTE, x.me, tag + 3, x.me, tag + 3, comm, &st));
        check(&x, "MPI_Sendrecv_replace self", &st, x.rb, size, x.me, tag + 3, 4);

        PHASE("MPI_Isend + MPI_Recv around the ring");
        MPI_Request r;
        fill(x.sb, (size_t)size, x.me, tag + 4, 5);
        EPT_OK(MPI_Isend(x.sb, size, MPI_BYTE, x.right, tag + 4, comm, &r));
        EPT_OK(MPI_Recv(x.rb, size, MPI_BYTE, x.left, tag + 4, comm, &st));
        EPT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        check(&x, "MPI_Isend + MPI_Recv", &st, x.rb, size, x.left, tag + 4, 5);

        PHASE("MPI_Ssend token ring");
        fill(x.sb, (size_t)size, x.me, tag + 5, 6);
        if (x.n == 1) {
            EPT_OK(MPI_Irecv(x.rb, size, MPI_BYTE, x.left, tag + 5, comm, &r));
            EPT_OK(MPI_Ssend(x.sb, size, MPI_BYTE, x.right, tag + 5, comm));
            EPT_OK(MPI_Wait(&r, &st));
        } else if (x.me == 0) {
            EPT_OK(MPI_Ssend(x.sb, size, MPI_BYTE, x.right, tag + 5, comm));
            EPT_OK(MPI_Recv(x.rb, size, MPI_BYTE, x.left, tag + 5, comm, &st));
        } else {
            EPT_OK(MPI_Recv(x.rb, size, MPI_BYTE, x.left, tag + 5, comm, &st));
            EPT_OK(MPI_Ssend(x.sb, size, MPI_BYTE, x.right, tag + 5, comm));
        }
        check(&x, "MPI_Ssend ring", &st, x.rb, size, x.left, tag + 5, 6);
        EPT_OK(MPI_Barrier(comm));
    }

    /* 1 MiB pairwise with every rank: round k, to me+k, from me-k. */
    PHASE("MPI_Sendrecv pairwise with every rank");
    for (int k = 0; k < x.n; k++) {
        int dst = (x.me + k) % x.n, src = (x.me + x.n - k) % x.n;
        fill(x.sb, MIB, x.me, 100 + k, dst);
        EPT_OK(MPI_Sendrecv(x.sb, MIB, MPI_BYTE, dst, 100 + k, x.rb, MIB, MPI_BYTE, src, 100 + k, comm, &st));
        check(&x, "MPI_Sendrecv pairwise", &st, x.rb, MIB, src, 100 + k, x.me);
    }
    EPT_OK(MPI_Barrier(comm));

    /* Sendrecv_replace with every other int of a 2 MiB buffer (1 MiB of data);
     * the ints in between stay as they are. */
    PHASE("MPI_Sendrecv_replace with a strided datatype");
    MPI_Datatype strided;
    int nint = MIB / 4, *ib = (int *)x.rb;
    EPT_OK(MPI_Type_vector(nint, 1, 2, MPI_INT, &strided));
    EPT_OK(MPI_Type_commit(&strided));
    for (int i = 0; i < 2 * nint; i++)
        ib[i] = i % 2 ? -7 : x.me * 1000003 + i;
    EPT_OK(MPI_Sendrecv_replace(ib, 1, strided, x.right, 200, x.left, 200, comm, &st));
    int cnt = -1;
    MPI_Get_count(&st, strided, &cnt);
    EPT_CHECK(st.MPI_SOURCE == x.left && st.MPI_TAG == 200 && cnt == 1,
              "strided MPI_Sendrecv_replace: rank %d: status source %d tag %d count %d", x.me, st.MPI_SOURCE,
              st.MPI_TAG, cnt);
    for (int i = 0; i < 2 * nint; i++)
        EPT_CHECK(ib[i] == (i % 2 ? -7 : x.left * 1000003 + i), "strided MPI_Sendrecv_replace: rank %d: int %d is %d",
                  x.me, i, ib[i]);
    MPI_Type_free(&strided);
    EPT_OK(MPI_Barrier(comm));
    free(x.sb);
    free(x.rb);
}

int main(int argc, char **argv) { return ept_main(argc, argv, 30, large, NULL); }
