/* Point-to-point with every non-empty message on the rendezvous path: the
 * program sets EPMPI_EAGER_LIMIT=0 before MPI_Init (in every process), so
 * even 1-byte messages are queued by reference inside a process and sent
 * header-first between processes.  Checked with small messages (0 to 100
 * bytes) and a few larger ones: non-overtaking with mixed tags (MPI_ANY_SOURCE
 * / MPI_ANY_TAG receives and specific tags in reverse order), pre-posted
 * wildcard receives, MPI_Probe / MPI_Mprobe / MPI_Improbe, MPI_Sendrecv
 * and MPI_Sendrecv_replace, an MPI_Issend that must not complete before its
 * receive starts, MPI_Request_free of a pending MPI_Isend, and of a pending
 * MPI_Irecv whose communicator is freed before it completes (also one waited
 * for after MPI_Comm_free), and a derived
 * datatype on both sides.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#define K 9
static const int seq_sizes[K] = {0, 1, 8, 100, 0, 3, 64, 20000, 1};
#define MAXMSG 20000

typedef struct {
    MPI_Comm comm;
    int me, n, left, right;
} ctx_t;

static int tag_of(int j) { return j % 3; }

static void make_msg(unsigned char *b, int size, int src, int round, int j)
{
    fill(b, (size_t)size, src, round, j);
    if (size >= 1)
        b[0] = (unsigned char)j;
}

static void check_msg(const ctx_t *x, const char *what, const unsigned char *b, const MPI_Status *st, int src,
                      int round, int j)
{
    int cnt = -1, size = seq_sizes[j];
    MPI_Get_count(st, MPI_BYTE, &cnt);
    EPT_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag_of(j) && cnt == size && (size == 0 || b[0] == j),
              "%s: rank %d: message %d from %d: status source %d tag %d count %d (first byte %d): out of order?", what,
              x->me, j, src, st->MPI_SOURCE, st->MPI_TAG, cnt, cnt > 0 ? b[0] : -1);
    for (int i = 1; i < size; i++)
        EPT_CHECK(b[i] == pat(src, round, j, (size_t)i), "%s: rank %d: message %d from %d: byte %d", what, x->me, j,
                  src, i);
}

/* Every rank sends K messages to every rank (MPI_Isend), then receives them:
 * how 0 MPI_ANY_SOURCE + MPI_ANY_TAG, 1 per source, tags in reverse order. */
static void order(ctx_t *x, int how, int round)
{
    unsigned char *sb[K], *rb = malloc(MAXMSG);
    MPI_Request *sr = malloc(sizeof *sr * (size_t)(K * x->n));
    int *next = calloc((size_t)x->n, sizeof(int));
    EPT_CHECK(rb && sr && next, "out of memory");
    PHASE(how ? "order: specific source, tags in reverse order" : "order: MPI_ANY_SOURCE and MPI_ANY_TAG");
    for (int j = 0; j < K; j++) {
        sb[j] = malloc((size_t)(seq_sizes[j] ? seq_sizes[j] : 1));
        EPT_CHECK(sb[j], "out of memory");
        make_msg(sb[j], seq_sizes[j], x->me, round, j);
    }
    for (int k = 0; k < x->n; k++) {
        int d = (x->me + k) % x->n;
        for (int j = 0; j < K; j++)
            EPT_OK(MPI_Isend(sb[j], seq_sizes[j], MPI_BYTE, d, tag_of(j), x->comm, &sr[d * K + j]));
    }
    MPI_Status st;
    if (how == 0) {
        for (int i = 0; i < K * x->n; i++) {
            EPT_OK(MPI_Recv(rb, MAXMSG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, x->comm, &st));
            int s = st.MPI_SOURCE;
            EPT_CHECK(s >= 0 && s < x->n && next[s] < K, "rank %d: source %d", x->me, s);
            check_msg(x, "MPI_ANY_SOURCE/MPI_ANY_TAG", rb, &st, s, round, next[s]++);
        }
    } else {
        for (int k = 1; k <= x->n; k++) {
            int s = (x->me + x->n - k) % x->n;
            for (int t = 2; t >= 0; t--)
                for (int j = t; j < K; j += 3) {
                    EPT_OK(MPI_Recv(rb, MAXMSG, MPI_BYTE, s, t, x->comm, &st));
                    check_msg(x, "tags in reverse order", rb, &st, s, round, j);
                }
        }
    }
    EPT_OK(MPI_Waitall(K * x->n, sr, statuses_ignore()));
    for (int j = 0; j < K; j++)
        free(sb[j]);
    free(rb);
    free(sr);
    free(next);
    EPT_OK(MPI_Barrier(x->comm));
}

/* Pre-posted MPI_ANY_SOURCE receive, then specific; left sends twice. */
static void posted(ctx_t *x)
{
    int in[2][2], out[2][2];
    MPI_Request rr[2], sr[2];
    MPI_Status st[2];
    PHASE("pre-posted wildcard receives");
    EPT_OK(MPI_Irecv(in[0], 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, x->comm, &rr[0]));
    EPT_OK(MPI_Irecv(in[1], 2, MPI_INT, x->left, 3, x->comm, &rr[1]));
    EPT_OK(MPI_Barrier(x->comm));
    for (int i = 0; i < 2; i++) {
        out[i][0] = x->me;
        out[i][1] = i;
        EPT_OK(MPI_Isend(out[i], 2, MPI_INT, x->right, 3, x->comm, &sr[i]));
    }
    EPT_OK(MPI_Waitall(2, rr, st));
    EPT_OK(MPI_Waitall(2, sr, statuses_ignore()));
    for (int i = 0; i < 2; i++)
        EPT_CHECK(st[i].MPI_SOURCE == x->left && st[i].MPI_TAG == 3 && in[i][0] == x->left && in[i][1] == i,
                  "rank %d: posted receive %d got {%d, %d} (source %d tag %d)", x->me, i, in[i][0], in[i][1],
                  st[i].MPI_SOURCE, st[i].MPI_TAG);
    EPT_OK(MPI_Barrier(x->comm));
}

static void probes(ctx_t *x)
{
    int out[3] = {x->me, 1, 2}, in[3];
    MPI_Request sr[2];
    MPI_Status st;
    MPI_Message msg;
    int flag = 0, cnt = -1;
    PHASE("probes of rendezvous messages");
    EPT_OK(MPI_Isend(out, 3, MPI_INT, x->right, 40, x->comm, &sr[0]));
    EPT_OK(MPI_Isend(out, 2, MPI_INT, x->right, 41, x->comm, &sr[1]));
    EPT_OK(MPI_Probe(MPI_ANY_SOURCE, 40, x->comm, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    EPT_CHECK(st.MPI_SOURCE == x->left && cnt == 3, "rank %d: MPI_Probe: source %d count %d", x->me, st.MPI_SOURCE,
              cnt);
    EPT_OK(MPI_Mprobe(x->left, 40, x->comm, &msg, &st));
    EPT_OK(MPI_Mrecv(in, 3, MPI_INT, &msg, &st));
    EPT_CHECK(in[0] == x->left && in[2] == 2 && st.MPI_TAG == 40, "rank %d: MPI_Mrecv got %d %d tag %d", x->me, in[0],
              in[2], st.MPI_TAG);
    while (!flag)
        EPT_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, x->comm, &flag, &msg, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    EPT_CHECK(st.MPI_SOURCE == x->left && st.MPI_TAG == 41 && cnt == 2,
              "rank %d: MPI_Improbe: source %d tag %d count %d", x->me, st.MPI_SOURCE, st.MPI_TAG, cnt);
    MPI_Request r;
    EPT_OK(MPI_Imrecv(in, 2, MPI_INT, &msg, &r));
    EPT_OK(MPI_Wait(&r, &st));
    EPT_CHECK(in[0] == x->left && in[1] == 1, "rank %d: MPI_Imrecv got %d %d", x->me, in[0], in[1]);
    EPT_OK(MPI_Waitall(2, sr, statuses_ignore()));
    EPT_OK(MPI_Barrier(x->comm));
}

static void sendrecv(ctx_t *x)
{
    int a[5], b[5];
    MPI_Status st;
    PHASE("MPI_Sendrecv and MPI_Sendrecv_replace");
    for (int i = 0; i < 5; i++)
        a[i] = x->me * 10 + i;
    EPT_OK(MPI_Sendrecv(a, 5, MPI_INT, x->right, 50, b, 5, MPI_INT, x->left, 50, x->comm, &st));
    EPT_CHECK(b[4] == x->left * 10 + 4 && st.MPI_SOURCE == x->left, "rank %d: MPI_Sendrecv got %d", x->me, b[4]);
    EPT_OK(MPI_Sendrecv_replace(a, 5, MPI_INT, x->right, 51, x->left, 51, x->comm, &st));
    EPT_CHECK(a[4] == x->left * 10 + 4 && st.MPI_SOURCE == x->left, "rank %d: MPI_Sendrecv_replace got %d", x->me,
              a[4]);
    EPT_OK(MPI_Sendrecv_replace(a, 5, MPI_INT, x->me, 52, x->me, 52, x->comm, &st));
    EPT_CHECK(a[4] == x->left * 10 + 4 && st.MPI_SOURCE == x->me, "rank %d: MPI_Sendrecv_replace with oneself", x->me);
    EPT_OK(MPI_Barrier(x->comm));
}

/* An MPI_Issend completes only once its receive has started. */
static void issend(ctx_t *x)
{
    int v = x->me, in = -1, flag = 1;
    MPI_Request r;
    PHASE("MPI_Issend of a small message");
    EPT_OK(MPI_Issend(&v, 1, MPI_INT, x->right, 60, x->comm, &r));
    EPT_OK(MPI_Barrier(x->comm));
    EPT_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    EPT_CHECK(!flag, "rank %d: an MPI_Issend completed before any receive was posted", x->me);
    EPT_OK(MPI_Barrier(x->comm));
    EPT_OK(MPI_Recv(&in, 1, MPI_INT, x->left, 60, x->comm, MPI_STATUS_IGNORE));
    EPT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    EPT_CHECK(in == x->left, "rank %d: MPI_Issend payload %d", x->me, in);
    EPT_OK(MPI_Barrier(x->comm));
}

static void freed_send(ctx_t *x)
{
    int v[4] = {x->me, 7, 8, 9}, in[4];
    MPI_Request r;
    PHASE("MPI_Request_free of a pending MPI_Isend");
    EPT_OK(MPI_Isend(v, 4, MPI_INT, x->right, 70, x->comm, &r));
    EPT_OK(MPI_Request_free(&r));
    EPT_OK(MPI_Recv(in, 4, MPI_INT, x->left, 70, x->comm, MPI_STATUS_IGNORE));
    EPT_CHECK(in[0] == x->left && in[3] == 9, "rank %d: freed MPI_Isend delivered %d %d", x->me, in[0], in[3]);
    EPT_OK(MPI_Barrier(x->comm)); /* v stays valid until every receive is done */
}

/* A receive freed while pending must still complete after its
 * communicator is freed (MPI_Comm_free lets pending operations finish). */
static void freed_recv(ctx_t *x)
{
    int v[4] = {x->me, 7, 8, 9}, in[4] = {-1, -1, -1, -1};
    MPI_Comm d;
    MPI_Request r, s;
    PHASE("MPI_Request_free of a pending MPI_Irecv, then MPI_Comm_free");
    EPT_OK(MPI_Comm_dup(x->comm, &d));
    EPT_OK(MPI_Irecv(in, 4, MPI_INT, x->left, 71, d, &r));
    EPT_OK(MPI_Request_free(&r));
    EPT_OK(MPI_Isend(v, 4, MPI_INT, x->right, 71, d, &s));
    EPT_OK(MPI_Comm_free(&d));
    EPT_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    /* Any call drives progress, which finishes the freed receive. */
    for (double t0 = MPI_Wtime(); in[3] != 9 && MPI_Wtime() - t0 < 10;) {
        int flag;
        EPT_OK(MPI_Iprobe(MPI_ANY_SOURCE, 999, x->comm, &flag, MPI_STATUS_IGNORE));
    }
    EPT_CHECK(in[0] == x->left && in[3] == 9, "rank %d: freed MPI_Irecv got %d %d", x->me, in[0], in[3]);
    EPT_OK(MPI_Barrier(x->comm));
    /* The same, with the receive's request kept and waited for after
     * MPI_Comm_free. */
    MPI_Status st;
    int got = -1;
    in[0] = in[3] = -1;
    EPT_OK(MPI_Comm_dup(x->comm, &d));
    EPT_OK(MPI_Irecv(in, 4, MPI_INT, x->left, 72, d, &r));
    EPT_OK(MPI_Isend(v, 4, MPI_INT, x->right, 72, d, &s));
    EPT_OK(MPI_Comm_free(&d));
    EPT_OK(MPI_Wait(&r, &st));
    EPT_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    EPT_OK(MPI_Get_count(&st, MPI_INT, &got));
    EPT_CHECK(in[0] == x->left && in[3] == 9 && got == 4 && st.MPI_SOURCE == x->left && st.MPI_TAG == 72,
              "rank %d: MPI_Irecv waited for after MPI_Comm_free got %d %d, %d ints from %d tag %d", x->me, in[0],
              in[3], got, st.MPI_SOURCE, st.MPI_TAG);
    EPT_OK(MPI_Barrier(x->comm));
}

static void vector(ctx_t *x)
{
    int s[12], r[8];
    MPI_Datatype v;
    MPI_Request q;
    MPI_Status st;
    PHASE("derived datatype");
    EPT_OK(MPI_Type_vector(4, 2, 3, MPI_INT, &v)); /* ints 0,1,3,4,6,7,9,10 */
    EPT_OK(MPI_Type_commit(&v));
    for (int i = 0; i < 12; i++)
        s[i] = x->me * 100 + i;
    EPT_OK(MPI_Irecv(r, 8, MPI_INT, x->left, 80, x->comm, &q));
    EPT_OK(MPI_Send(s, 1, v, x->right, 80, x->comm));
    EPT_OK(MPI_Wait(&q, &st));
    for (int k = 0; k < 8; k++)
        EPT_CHECK(r[k] == x->left * 100 + 3 * (k / 2) + k % 2, "rank %d: vector element %d is %d", x->me, k, r[k]);
    MPI_Type_free(&v);
    EPT_OK(MPI_Barrier(x->comm));
}

static void rndv(MPI_Comm comm, void *arg)
{
    (void)arg;
    ctx_t x = {.comm = comm};
    ept_ring_place(comm, &x.me, &x.n, &x.left, &x.right);
    order(&x, 0, 0);
    order(&x, 1, 1);
    posted(&x);
    probes(&x);
    sendrecv(&x);
    issend(&x);
    freed_send(&x);
    freed_recv(&x);
    vector(&x);
}

int main(int argc, char **argv)
{
    int provided;
    watchdog_arm(30);
    /* Read by epmpi at MPI_Init, in every process alike. */
    setenv("EPMPI_EAGER_LIMIT", "0", 1);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    EPT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    int nlocal = local_ranks(argc, argv);
    run_ranks(nlocal, rndv, NULL);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
