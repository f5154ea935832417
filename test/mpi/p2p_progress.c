/* Progress: endpoints that wait do not stop the others, and waiting yields
 * the CPU, so oversubscribed shapes (more endpoints than cores: 2x4, 1x8)
 * finish in a few seconds.
 *  - all-to-all with blocking sends: every rank sends a small message to
 *    every rank, then receives them all; with MPI_Bsend (safe by the
 *    standard) and with MPI_Send (relies on small standard sends being
 *    buffered, which epmpi documents: messages up to EPMPI_EAGER_LIMIT,
 *    16 KiB by default, are sent eagerly);
 *  - rank 0 blocks in MPI_Recv, MPI_Ssend and MPI_Probe while all other
 *    ranks pass tokens among themselves for many rounds; only then does the
 *    partner of rank 0 answer;
 *  - ping-pong of small messages between pairs of ranks, many round trips;
 * and the whole program must finish within 20 s.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#define A2A_ROUNDS 20
#define TOKEN_ROUNDS 100
#define PINGPONG 300
#define MSG 64 /* bytes */

typedef struct {
    MPI_Comm comm;
    int me, n;
} ctx_t;

static void all_to_all(ctx_t *x, int bsend)
{
    unsigned char sb[MSG], rb[MSG];
    MPI_Status st;
    PHASE(bsend ? "all-to-all, MPI_Bsend then MPI_Recv" : "all-to-all, MPI_Send then MPI_Recv");
    for (int round = 0; round < A2A_ROUNDS; round++) {
        int tag = 2 * round + bsend;
        fill(sb, MSG, x->me, tag, 0);
        for (int k = 0; k < x->n; k++) {
            int d = (x->me + k) % x->n;
            if (bsend)
                EPT_OK(MPI_Bsend(sb, MSG, MPI_BYTE, d, tag, x->comm));
            else
                EPT_OK(MPI_Send(sb, MSG, MPI_BYTE, d, tag, x->comm));
        }
        for (int k = 0; k < x->n; k++) {
            int s = (x->me + x->n - k) % x->n;
            EPT_OK(MPI_Recv(rb, MSG, MPI_BYTE, s, tag, x->comm, &st));
            EPT_CHECK(st.MPI_SOURCE == s && first_bad(rb, MSG, s, tag, 0) == MSG,
                      "all-to-all round %d: rank %d: bad message from %d (status source %d)", round, x->me, s,
                      st.MPI_SOURCE);
        }
    }
    EPT_OK(MPI_Barrier(x->comm));
}

/* Ranks 1..n-1 pass a token around their own ring TOKEN_ROUNDS times (a
 * single one sends it to itself). */
static void token_ring(ctx_t *x, int tag)
{
    int m = x->n - 1, i = x->me - 1, next = 1 + (i + 1) % m, prev = 1 + (i + m - 1) % m;
    for (int round = 0; round < TOKEN_ROUNDS; round++) {
        int tok = -1;
        if (m == 1) {
            MPI_Request r;
            int v = round;
            EPT_OK(MPI_Irecv(&tok, 1, MPI_INT, x->me, tag, x->comm, &r));
            EPT_OK(MPI_Send(&v, 1, MPI_INT, x->me, tag, x->comm));
            EPT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else if (i == 0) {
            int v = round;
            EPT_OK(MPI_Send(&v, 1, MPI_INT, next, tag, x->comm));
            EPT_OK(MPI_Recv(&tok, 1, MPI_INT, prev, tag, x->comm, MPI_STATUS_IGNORE));
        } else {
            EPT_OK(MPI_Recv(&tok, 1, MPI_INT, prev, tag, x->comm, MPI_STATUS_IGNORE));
            EPT_OK(MPI_Send(&tok, 1, MPI_INT, next, tag, x->comm));
        }
        EPT_CHECK(tok == round, "token ring: rank %d got token %d in round %d", x->me, tok, round);
    }
}

/* Rank 0 blocks (how: 0 MPI_Recv, 1 MPI_Ssend, 2 MPI_Probe) while the others
 * work; the last rank answers it afterwards. */
static void blocked_rank(ctx_t *x, int how)
{
    static const char *names[3] = {"rank 0 blocked in MPI_Recv while the others work",
                                   "rank 0 blocked in MPI_Ssend while the others work",
                                   "rank 0 blocked in MPI_Probe while the others work"};
    int last = x->n - 1, v = 12345 + how, got = -1;
    PHASE(names[how]);
    if (x->n == 1)
        return;
    if (x->me == 0) {
        if (how == 0) {
            EPT_OK(MPI_Recv(&got, 1, MPI_INT, last, 900, x->comm, MPI_STATUS_IGNORE));
        } else if (how == 1) {
            EPT_OK(MPI_Ssend(&v, 1, MPI_INT, last, 901, x->comm));
        } else {
            MPI_Status st;
            EPT_OK(MPI_Probe(MPI_ANY_SOURCE, 902, x->comm, &st));
            EPT_CHECK(st.MPI_SOURCE == last, "probe: source %d", st.MPI_SOURCE);
            EPT_OK(MPI_Recv(&got, 1, MPI_INT, last, 902, x->comm, MPI_STATUS_IGNORE));
        }
        EPT_CHECK(how == 1 || got == v, "rank 0 received %d", got);
    } else {
        token_ring(x, 800 + how);
        if (x->me == last) {
            if (how == 1) {
                EPT_OK(MPI_Recv(&got, 1, MPI_INT, 0, 901, x->comm, MPI_STATUS_IGNORE));
                EPT_CHECK(got == v, "rank %d received %d from rank 0's MPI_Ssend", x->me, got);
            } else {
                EPT_OK(MPI_Send(&v, 1, MPI_INT, 0, 900 + how, x->comm));
            }
        }
    }
    EPT_OK(MPI_Barrier(x->comm));
}

/* Pairs (0,1), (2,3)...; an odd last rank plays with itself. */
static void ping_pong(ctx_t *x)
{
    int partner = x->me ^ 1;
    PHASE("ping-pong");
    if (partner >= x->n)
        partner = x->me;
    for (int i = 0; i < PINGPONG; i++) {
        int out = x->me * 100000 + i, in = -1;
        if (partner == x->me) {
            EPT_OK(MPI_Sendrecv(&out, 1, MPI_INT, x->me, 950, &in, 1, MPI_INT, x->me, 950, x->comm, MPI_STATUS_IGNORE));
            EPT_CHECK(in == out, "self ping-pong %d", in);
        } else if (x->me < partner) {
            EPT_OK(MPI_Send(&out, 1, MPI_INT, partner, 950, x->comm));
            EPT_OK(MPI_Recv(&in, 1, MPI_INT, partner, 951, x->comm, MPI_STATUS_IGNORE));
            EPT_CHECK(in == partner * 100000 + i, "ping-pong: rank %d got %d", x->me, in);
        } else {
            EPT_OK(MPI_Recv(&in, 1, MPI_INT, partner, 950, x->comm, MPI_STATUS_IGNORE));
            EPT_CHECK(in == partner * 100000 + i, "ping-pong: rank %d got %d", x->me, in);
            EPT_OK(MPI_Send(&out, 1, MPI_INT, partner, 951, x->comm));
        }
    }
    EPT_OK(MPI_Barrier(x->comm));
}

static void progress(MPI_Comm comm, void *arg)
{
    (void)arg;
    ctx_t x = {.comm = comm};
    MPI_Comm_rank(comm, &x.me);
    MPI_Comm_size(comm, &x.n);
    all_to_all(&x, 1);
    all_to_all(&x, 0);
    for (int how = 0; how < 3; how++)
        blocked_rank(&x, how);
    ping_pong(&x);
}

int main(int argc, char **argv)
{
    int provided;
    watchdog_arm(30);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    EPT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    double t0 = MPI_Wtime();
    int nlocal = local_ranks(argc, argv);
    /* Bsend space: rounds are not separated by barriers, so messages of
     * several rounds may be in the buffer at once; make room for all. */
    int wsize, total = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (ept_world_endpoints() > 0)
        total = wsize;
    else
        for (int p = 0; p < wsize; p++)
            total += ept_list_item(argv[1], p);
    int bsize = A2A_ROUNDS * (MSG + MPI_BSEND_OVERHEAD) * (total > 0 ? total : 1) * (nlocal > 0 ? nlocal : 1);
    char *bbuf = malloc((size_t)bsize);
    EPT_CHECK(bbuf, "out of memory");
    EPT_OK(MPI_Buffer_attach(bbuf, bsize));
    run_ranks(nlocal, progress, NULL);
    PHASE("MPI_Buffer_detach");
    void *addr;
    int dsize;
    EPT_OK(MPI_Buffer_detach(&addr, &dsize));
    free(bbuf);
    double secs = MPI_Wtime() - t0;
    EPT_CHECK(secs < 20, "the test took %.1f s: waiting endpoints hold up the others", secs);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
