/* Persistent collectives (MPI-4.0 6.12) on endpoint communicators.  Each
 * of the 22 init calls (MPI_Barrier_init to MPI_Neighbor_alltoallw_init,
 * the neighbourhood ones on a periodic ring made with MPI_Cart_create)
 * makes an inactive request; every start runs the call again on what the
 * buffers hold then, and every result is checked against values computed
 * here.  Round 0 starts and completes each request alone (MPI_Start, then
 * MPI_Wait or an MPI_Test loop); the later rounds start them all at once
 * with MPI_Startall, together with a persistent send to the right and a
 * persistent receive from the left, the odd ranks in the reverse order of
 * the even ones (starts need not follow the init order), and complete
 * them with MPI_Waitall.
 * Also: MPI_Start of an active request fails with MPI_ERR_REQUEST, an
 * init call with a bad root fails with MPI_ERR_ROOT, the large-count form
 * MPI_Bcast_init_c runs with a count that fits, and the inactive requests
 * are freed with MPI_Request_free.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"
#if !EP_HAVE_MPI_Bcast_init
/* MPI 4.0's persistent collectives: not in this MPI. */
int main(void)
{
    puts("skipped: this MPI has no MPI 4.0's persistent collectives");
    return 77;
}
#else
#define ROUNDS 4
#define NCOLL 22
#define MAXN 64              /* ranks at most */

enum {
    BARRIER,
    BCAST,
    ALLREDUCE,
    REDUCE,
    ALLGATHER,
    ALLGATHERV,
    GATHER,
    GATHERV,
    SCATTER,
    SCATTERV,
    ALLTOALL,
    ALLTOALLV,
    ALLTOALLW,
    RS_BLOCK,
    RS,
    SCAN,
    EXSCAN,
    NB_ALLGATHER,
    NB_ALLGATHERV,
    NB_ALLTOALL,
    NB_ALLTOALLV,
    NB_ALLTOALLW
};
static const char *names[NCOLL] = {"MPI_Barrier_init",
                                   "MPI_Bcast_init",
                                   "MPI_Allreduce_init",
                                   "MPI_Reduce_init",
                                   "MPI_Allgather_init",
                                   "MPI_Allgatherv_init",
                                   "MPI_Gather_init",
                                   "MPI_Gatherv_init",
                                   "MPI_Scatter_init",
                                   "MPI_Scatterv_init",
                                   "MPI_Alltoall_init",
                                   "MPI_Alltoallv_init",
                                   "MPI_Alltoallw_init",
                                   "MPI_Reduce_scatter_block_init",
                                   "MPI_Reduce_scatter_init",
                                   "MPI_Scan_init",
                                   "MPI_Exscan_init",
                                   "MPI_Neighbor_allgather_init",
                                   "MPI_Neighbor_allgatherv_init",
                                   "MPI_Neighbor_alltoall_init",
                                   "MPI_Neighbor_alltoallv_init",
                                   "MPI_Neighbor_alltoallw_init"};

/* One rank's buffers: each call has its own input and output. */
typedef struct {
    int bcast[4], red_in[3], allred[3], red[3], one, all[MAXN], sc[MAXN], sc_out, a2a_in[MAXN], a2a_out[MAXN],
        rs_in[MAXN], rs_out, scan_in, scan_out, exscan_out, nb_in[2], nb_out[2], p2p_in, p2p_out;
    int counts[MAXN], displs[MAXN], bytes[MAXN], two[2], tdispl[2];
    MPI_Aint nbdispls[2];
    MPI_Datatype types[MAXN], ntypes[2];
} bufs_t;

static int sum_to(int n) { return n * (n - 1) / 2; } /* 0 + 1 + ... + n-1 */

/* Fills the inputs of round k. */
static void inputs(bufs_t *b, int me, int n, int k)
{
    for (int i = 0; i < 4; i++)
        b->bcast[i] = me == n - 1 ? k * 100 + i : -1;
    for (int i = 0; i < 3; i++)
        b->red_in[i] = me + k + i;
    b->one = me * 10 + k;
    for (int j = 0; j < n; j++) {
        b->sc[j] = me == 0 ? j * 10 + k : -1;
        b->a2a_in[j] = me * 100 + j + k;
        b->rs_in[j] = me + j + k;
    }
    b->scan_in = me + 1 + k;
    for (int s = 0; s < 2; s++)
        b->nb_in[s] = me * 100 + s * 10 + k;
    b->p2p_in = me * 1000 + k;
}

static void expect(int got, int want, const char *what, int me, int k, int i)
{
    EPT_CHECK(got == want, "rank %d, round %d: %s element %d: got %d, expected %d", me, k, what, i, got, want);
}

/* Checks the outputs of round k (left: where the persistent receive's
 * message comes from). */
static void outputs(const bufs_t *b, int me, int n, int k, int left)
{
    int lo = (me + n - 1) % n, ro = (me + 1) % n; /* the cartesian ring's neighbours */
    for (int i = 0; i < 4; i++)
        expect(b->bcast[i], k * 100 + i, names[BCAST], me, k, i);
    for (int i = 0; i < 3; i++) {
        expect(b->allred[i], sum_to(n) + n * (k + i), names[ALLREDUCE], me, k, i);
        if (me == 0)
            expect(b->red[i], sum_to(n) + n * (k + i), names[REDUCE], me, k, i);
    }
    for (int j = 0; j < n; j++) {
        expect(b->all[j], j * 10 + k, "MPI_Allgather_init or MPI_Allgatherv_init", me, k, j);
        expect(b->a2a_out[j], j * 100 + me + k, "MPI_Alltoall_init (v, w)", me, k, j);
    }
    expect(b->sc_out, me * 10 + k, "MPI_Scatter_init or MPI_Scatterv_init", me, k, 0);
    expect(b->rs_out, sum_to(n) + n * (me + k), "MPI_Reduce_scatter_init (block)", me, k, 0);
    int scan = 0;
    for (int r = 0; r <= me; r++)
        scan += r + 1 + k;
    expect(b->scan_out, scan, names[SCAN], me, k, 0);
    if (me) /* rank 0's is undefined */
        expect(b->exscan_out, scan - (me + 1 + k), names[EXSCAN], me, k, 0);
    expect(b->nb_out[0], lo * 100 + 10 + k, "MPI_Neighbor_alltoall_init (v, w) from the left", me, k, 0);
    expect(b->nb_out[1], ro * 100 + k, "MPI_Neighbor_alltoall_init (v, w) from the right", me, k, 1);
    expect(b->p2p_out, left * 1000 + k, "MPI_Recv_init", me, k, 0);
}

/* Makes the 22 persistent requests over comm (the neighbourhood ones over
 * its cartesian ring). */
static void init_all(bufs_t *b, MPI_Comm comm, MPI_Comm ring, int n, MPI_Request *rq)
{
    MPI_Info info = MPI_INFO_NULL;
    for (int j = 0; j < n; j++) {
        b->counts[j] = 1;
        b->displs[j] = j;
        b->bytes[j] = j * (int)sizeof(int);
        b->types[j] = MPI_INT;
    }
    for (int s = 0; s < 2; s++) {
        b->two[s] = 1;
        b->tdispl[s] = s;
        b->nbdispls[s] = (MPI_Aint)(s * sizeof(int));
        b->ntypes[s] = MPI_INT;
    }
    EPT_OK(MPI_Barrier_init(comm, info, &rq[BARRIER]));
    EPT_OK(MPI_Bcast_init(b->bcast, 4, MPI_INT, n - 1, comm, info, &rq[BCAST]));
    EPT_OK(MPI_Allreduce_init(b->red_in, b->allred, 3, MPI_INT, MPI_SUM, comm, info, &rq[ALLREDUCE]));
    EPT_OK(MPI_Reduce_init(b->red_in, b->red, 3, MPI_INT, MPI_SUM, 0, comm, info, &rq[REDUCE]));
    EPT_OK(MPI_Allgather_init(&b->one, 1, MPI_INT, b->all, 1, MPI_INT, comm, info, &rq[ALLGATHER]));
    EPT_OK(
        MPI_Allgatherv_init(&b->one, 1, MPI_INT, b->all, b->counts, b->displs, MPI_INT, comm, info, &rq[ALLGATHERV]));
    EPT_OK(MPI_Gather_init(&b->one, 1, MPI_INT, b->all, 1, MPI_INT, 0, comm, info, &rq[GATHER]));
    EPT_OK(MPI_Gatherv_init(&b->one, 1, MPI_INT, b->all, b->counts, b->displs, MPI_INT, 0, comm, info, &rq[GATHERV]));
    EPT_OK(MPI_Scatter_init(b->sc, 1, MPI_INT, &b->sc_out, 1, MPI_INT, 0, comm, info, &rq[SCATTER]));
    EPT_OK(
        MPI_Scatterv_init(b->sc, b->counts, b->displs, MPI_INT, &b->sc_out, 1, MPI_INT, 0, comm, info, &rq[SCATTERV]));
    EPT_OK(MPI_Alltoall_init(b->a2a_in, 1, MPI_INT, b->a2a_out, 1, MPI_INT, comm, info, &rq[ALLTOALL]));
    EPT_OK(MPI_Alltoallv_init(b->a2a_in, b->counts, b->displs, MPI_INT, b->a2a_out, b->counts, b->displs, MPI_INT, comm,
                              info, &rq[ALLTOALLV]));
    EPT_OK(MPI_Alltoallw_init(b->a2a_in, b->counts, b->bytes, b->types, b->a2a_out, b->counts, b->bytes, b->types, comm,
                              info, &rq[ALLTOALLW]));
    EPT_OK(MPI_Reduce_scatter_block_init(b->rs_in, &b->rs_out, 1, MPI_INT, MPI_SUM, comm, info, &rq[RS_BLOCK]));
    EPT_OK(MPI_Reduce_scatter_init(b->rs_in, &b->rs_out, b->counts, MPI_INT, MPI_SUM, comm, info, &rq[RS]));
    EPT_OK(MPI_Scan_init(&b->scan_in, &b->scan_out, 1, MPI_INT, MPI_SUM, comm, info, &rq[SCAN]));
    EPT_OK(MPI_Exscan_init(&b->scan_in, &b->exscan_out, 1, MPI_INT, MPI_SUM, comm, info, &rq[EXSCAN]));
    EPT_OK(MPI_Neighbor_allgather_init(&b->one, 1, MPI_INT, b->nb_out, 1, MPI_INT, ring, info, &rq[NB_ALLGATHER]));
    EPT_OK(MPI_Neighbor_allgatherv_init(&b->one, 1, MPI_INT, b->nb_out, b->two, b->tdispl, MPI_INT, ring, info,
                                        &rq[NB_ALLGATHERV]));
    EPT_OK(MPI_Neighbor_alltoall_init(b->nb_in, 1, MPI_INT, b->nb_out, 1, MPI_INT, ring, info, &rq[NB_ALLTOALL]));
    EPT_OK(MPI_Neighbor_alltoallv_init(b->nb_in, b->two, b->tdispl, MPI_INT, b->nb_out, b->two, b->tdispl, MPI_INT,
                                       ring, info, &rq[NB_ALLTOALLV]));
    EPT_OK(MPI_Neighbor_alltoallw_init(b->nb_in, b->two, b->nbdispls, b->ntypes, b->nb_out, b->two, b->nbdispls,
                                       b->ntypes, ring, info, &rq[NB_ALLTOALLW]));
}

/* Round 0: each request alone, and what it wrote checked at once where
 * several share an output buffer. */
static void one_by_one(bufs_t *b, MPI_Request *rq, int me, int n)
{
    int lo = (me + n - 1) % n, ro = (me + 1) % n;
    for (int c = 0; c < NCOLL; c++) {
        PHASE(names[c]);
        memset(b->all, 0xff, sizeof b->all);
        memset(b->nb_out, 0xff, sizeof b->nb_out);
        b->sc_out = b->rs_out = -1;
        EPT_OK(MPI_Start(&rq[c]));
        if (c % 2) {
            EPT_OK(MPI_Wait(&rq[c], MPI_STATUS_IGNORE));
        } else {
            int flag = 0;
            while (!flag)
                EPT_OK(MPI_Test(&rq[c], &flag, MPI_STATUS_IGNORE));
        }
        EPT_CHECK(rq[c] != MPI_REQUEST_NULL, "rank %d: %s's request was freed by its completion", me, names[c]);
        switch (c) {
        case ALLGATHER:
        case ALLGATHERV:
            for (int j = 0; j < n; j++)
                expect(b->all[j], j * 10, names[c], me, 0, j);
            break;
        case GATHER:
        case GATHERV:
            for (int j = 0; me == 0 && j < n; j++)
                expect(b->all[j], j * 10, names[c], me, 0, j);
            break;
        case SCATTER:
        case SCATTERV:
            expect(b->sc_out, me * 10, names[c], me, 0, 0);
            break;
        case RS_BLOCK:
        case RS:
            expect(b->rs_out, sum_to(n) + n * me, names[c], me, 0, 0);
            break;
        case NB_ALLGATHER:
        case NB_ALLGATHERV:
            expect(b->nb_out[0], lo * 10, names[c], me, 0, 0);
            expect(b->nb_out[1], ro * 10, names[c], me, 0, 1);
            break;
        }
    }
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    int me, n, left, right, dims[1] = {0}, periods[1] = {1};
    ept_ring_place(comm, &me, &n, &left, &right);
    EPT_CHECK(n <= MAXN, "at most %d ranks", MAXN);
    MPI_Comm ring;
    dims[0] = n;
    EPT_OK(MPI_Cart_create(comm, 1, dims, periods, 0, &ring));
    bufs_t *b = calloc(1, sizeof *b);
    EPT_CHECK(b, "out of memory");
    MPI_Request rq[NCOLL + 2];
    PHASE("the init calls");
    init_all(b, comm, ring, n, rq);
    EPT_OK(MPI_Send_init(&b->p2p_in, 1, MPI_INT, right, 9, comm, &rq[NCOLL]));
    EPT_OK(MPI_Recv_init(&b->p2p_out, 1, MPI_INT, left, 9, comm, &rq[NCOLL + 1]));

    inputs(b, me, n, 0);
    one_by_one(b, rq, me, n);
    PHASE("a started request is started again");
    EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    EPT_OK(MPI_Start(&rq[BARRIER]));
    int rc = MPI_Start(&rq[BARRIER]), cls = -1;
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_REQUEST, "rank %d: MPI_Start of an active request gave class %d, not %d", me, cls,
              MPI_ERR_REQUEST);
    EPT_OK(MPI_Wait(&rq[BARRIER], MPI_STATUS_IGNORE));
    MPI_Request bad = MPI_REQUEST_NULL;
    rc = MPI_Bcast_init(b->bcast, 4, MPI_INT, n, comm, MPI_INFO_NULL, &bad);
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_ROOT && bad == MPI_REQUEST_NULL, "rank %d: MPI_Bcast_init with root %d gave class %d", me,
              n, cls);
    EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));

    for (int k = 1; k < ROUNDS; k++) {
        PHASE("MPI_Startall of every persistent request");
        inputs(b, me, n, k);
        /* Of the requests sharing an output, the one whose round it is. */
        MPI_Request run[NCOLL + 2];
        int m = 0;
        for (int c = 0; c < NCOLL + 2; c++) {
            int pair = c == ALLGATHER || c == GATHER || c == SCATTER || c == RS_BLOCK || c == NB_ALLGATHER;
            int second = c == ALLGATHERV || c == GATHERV || c == SCATTERV || c == RS || c == NB_ALLGATHERV;
            int a2a = c == ALLTOALL || c == ALLTOALLV || c == ALLTOALLW;
            int nba2a = c == NB_ALLTOALL || c == NB_ALLTOALLV || c == NB_ALLTOALLW;
            if ((pair && k % 2) || (second && !(k % 2)) || (a2a && c - ALLTOALL != k % 3) ||
                (nba2a && c - NB_ALLTOALL != k % 3) || c == GATHER || c == GATHERV || c == NB_ALLGATHER ||
                c == NB_ALLGATHERV)
                continue;
            run[m++] = rq[c];
        }
        /* Starts need not keep the init order (MPI-4.0 6.12): odd ranks
         * start theirs the other way round. */
        for (int i = 0; me % 2 && i < m / 2; i++) {
            MPI_Request t = run[i];
            run[i] = run[m - 1 - i];
            run[m - 1 - i] = t;
        }
        EPT_OK(MPI_Startall(m, run));
        EPT_OK(MPI_Waitall(m, run, statuses_ignore()));
        outputs(b, me, n, k, left);
    }
#if EP_HAVE_MPI_Bcast_init_c /* Open MPI 5.0 has the persistent collectives, not their _c forms */
    PHASE("MPI_Bcast_init_c");
    MPI_Request big;
    inputs(b, me, n, 7);
    EPT_OK(MPI_Bcast_init_c(b->bcast, (MPI_Count)4, MPI_INT, n - 1, comm, MPI_INFO_NULL, &big));
    EPT_OK(MPI_Start(&big));
    EPT_OK(MPI_Wait(&big, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        expect(b->bcast[i], 700 + i, "MPI_Bcast_init_c", me, 7, i);
    EPT_OK(MPI_Request_free(&big));
#endif
    PHASE("MPI_Request_free of the inactive requests");
    for (int c = 0; c < NCOLL + 2; c++) {
        EPT_OK(MPI_Request_free(&rq[c]));
        EPT_CHECK(rq[c] == MPI_REQUEST_NULL, "rank %d: MPI_Request_free left %s's handle", me,
                  c < NCOLL ? names[c] : "a persistent point-to-point request");
    }
    EPT_OK(MPI_Comm_free(&ring));
    free(b);
}

int main(int argc, char **argv) { return ept_main(argc, argv, 60, body, NULL); }

#endif
