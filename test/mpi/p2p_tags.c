/* Tags and many endpoints.
 *
 * Tags 0, 1, 32767, 2^28-1 and the communicator's MPI_TAG_UB (from
 * MPI_Comm_get_attr; at least 2^28-1) all work, with small (eager) and large
 * (rendezvous) messages: received by specific tag in reverse order, with
 * MPI_ANY_TAG in send order (status tags checked), with pre-posted receives,
 * and found by MPI_Iprobe.
 *
 * Many endpoints (explicit shapes whose list asks for more than 64 endpoints
 * per process, e.g. 1:1024 or 2:512,512): one MPI_Comm_create_endpoints
 * call makes them all; rank of each handle = ranks of lower processes +
 * handle index; four threads drive all handles with non-blocking ring and
 * cross exchanges using those tags, small and large, each operation
 * completed by another thread than the one that started it; this must
 * finish quickly.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Small explicit shapes
 * (P:a,b,..): each process creates its list entry of endpoints and thread i
 * drives handle i. */
#include "eptest.h"

#define NTAGS 5
#define LARGE (32 * 1024) /* bytes */
#define MANY 64           /* more endpoints per process than this: many-endpoint mode */
#define DRIVERS 4         /* threads driving the many endpoints */

/* The five tags on comm. */
static void get_tags(MPI_Comm comm, int tags[NTAGS])
{
    int *ub = NULL, flag = 0;
    EPT_OK(MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag));
    EPT_CHECK(flag && ub && *ub >= (1 << 28) - 1, "MPI_TAG_UB: flag %d value %d", flag, flag && ub ? *ub : -1);
    tags[0] = 0;
    tags[1] = 1;
    tags[2] = 32767;
    tags[3] = (1 << 28) - 1;
    tags[4] = *ub;
}

typedef struct {
    MPI_Comm comm;
    int me, n, left, right, tags[NTAGS], ntags;
} ctx_t;

static void check(const ctx_t *x, const char *what, const MPI_Status *st, const unsigned char *b, int size, int k)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    EPT_CHECK(st->MPI_SOURCE == x->left && st->MPI_TAG == x->tags[k] && cnt == size,
              "%s: rank %d: message with tag %d: status source %d tag %d count %d, expected %d %d %d", what, x->me,
              x->tags[k], st->MPI_SOURCE, st->MPI_TAG, cnt, x->left, x->tags[k], size);
    size_t bad = first_bad(b, (size_t)size, x->left, k, size);
    EPT_CHECK(bad == (size_t)size, "%s: rank %d: tag %d: byte %zu wrong", what, x->me, x->tags[k], bad);
}

static void tags_ranks(MPI_Comm comm, void *arg)
{
    (void)arg;
    ctx_t x = {.comm = comm};
    ept_ring_place(comm, &x.me, &x.n, &x.left, &x.right);
    get_tags(comm, x.tags);
    /* Five distinct tags unless MPI_TAG_UB is exactly 2^28-1. */
    x.ntags = x.tags[4] == x.tags[3] ? 4 : 5;
    unsigned char *sb[NTAGS], *rb[NTAGS];
    for (int k = 0; k < NTAGS; k++) {
        sb[k] = malloc(LARGE);
        rb[k] = malloc(LARGE);
        EPT_CHECK(sb[k] && rb[k], "out of memory");
    }
    for (int large = 0; large < 2; large++) {
        int size = large ? LARGE : 16;
        MPI_Request sr[NTAGS], rr[NTAGS];
        MPI_Status st[NTAGS];
        for (int k = 0; k < x.ntags; k++)
            fill(sb[k], (size_t)size, x.me, k, size);

        PHASE("tags: specific tags in reverse order");
        for (int k = 0; k < x.ntags; k++)
            EPT_OK(MPI_Isend(sb[k], size, MPI_BYTE, x.right, x.tags[k], comm, &sr[k]));
        for (int k = x.ntags - 1; k >= 0; k--) {
            EPT_OK(MPI_Recv(rb[k], size, MPI_BYTE, x.left, x.tags[k], comm, &st[k]));
            check(&x, "specific tag", &st[k], rb[k], size, k);
        }
        EPT_OK(MPI_Waitall(x.ntags, sr, statuses_ignore()));
        EPT_OK(MPI_Barrier(comm));

        PHASE("tags: MPI_Iprobe, then MPI_ANY_TAG in send order");
        for (int k = 0; k < x.ntags; k++)
            EPT_OK(MPI_Isend(sb[k], size, MPI_BYTE, x.right, x.tags[k], comm, &sr[k]));
        for (int k = x.ntags - 1; k >= 0; k--) {
            int flag = 0;
            MPI_Status ps;
            while (!flag)
                EPT_OK(MPI_Iprobe(x.left, x.tags[k], comm, &flag, &ps));
            EPT_CHECK(ps.MPI_TAG == x.tags[k], "MPI_Iprobe for tag %d found tag %d", x.tags[k], ps.MPI_TAG);
        }
        for (int k = 0; k < x.ntags; k++) {
            EPT_OK(MPI_Recv(rb[k], size, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st[k]));
            check(&x, "MPI_ANY_TAG", &st[k], rb[k], size, k);
        }
        EPT_OK(MPI_Waitall(x.ntags, sr, statuses_ignore()));
        EPT_OK(MPI_Barrier(comm));

        PHASE("tags: pre-posted receives, blocking sends");
        for (int k = 0; k < x.ntags; k++)
            EPT_OK(MPI_Irecv(rb[k], size, MPI_BYTE, x.left, x.tags[k], comm, &rr[k]));
        EPT_OK(MPI_Barrier(comm));
        for (int k = x.ntags - 1; k >= 0; k--)
            EPT_OK(MPI_Send(sb[k], size, MPI_BYTE, x.right, x.tags[k], comm));
        EPT_OK(MPI_Waitall(x.ntags, rr, st));
        for (int k = 0; k < x.ntags; k++)
            check(&x, "pre-posted", &st[k], rb[k], size, k);
        EPT_OK(MPI_Barrier(comm));
    }
    for (int k = 0; k < NTAGS; k++) {
        free(sb[k]);
        free(rb[k]);
    }
}

/* ---- many endpoints --------------------------------------------------- */

static int many_val(int src, int round, int i) { return (src * 31 + round) * 65537 + i; }

/* One exchange: every handle sends `ints` ints to rank (r + shift) and
 * receives from (r - shift), tag = tags[sender % NTAGS]; all non-blocking.
 * Any thread may drive any handle: in round `round` thread t starts the
 * operations of the handles i with (i + round) % nt == t, and after a thread
 * barrier completes those of the handles with (i + round + 1) % nt == t
 * (started by another thread), with one MPI_Waitall in even rounds and
 * MPI_Wait per request in odd ones. */
static void many_round(MPI_Comm *h, int nh, int size, int first, const int *tags, int shift, int ints, int round,
                       int **sbuf, int **rbuf)
{
    MPI_Request *req = malloc(sizeof *req * 2 * (size_t)nh);
    MPI_Status *st = malloc(sizeof *st * 2 * (size_t)nh);
    EPT_CHECK(req && st, "out of memory");
#pragma omp parallel num_threads(DRIVERS)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int i = 0; i < nh; i++) {
            int r = first + i, src = (r + size - shift % size) % size;
            if ((i + round) % nt == t)
                EPT_OK(MPI_Irecv(rbuf[i], ints, MPI_INT, src, tags[src % NTAGS], h[i], &req[2 * i]));
        }
        for (int i = 0; i < nh; i++) {
            int r = first + i, dst = (r + shift) % size;
            if ((i + round) % nt != t)
                continue;
            for (int j = 0; j < ints; j++)
                sbuf[i][j] = many_val(r, round, j);
            EPT_OK(MPI_Isend(sbuf[i], ints, MPI_INT, dst, tags[r % NTAGS], h[i], &req[2 * i + 1]));
        }
#pragma omp barrier
        int mine = 0;
        MPI_Request *sub = malloc(sizeof *sub * 2 * (size_t)nh);
        MPI_Status *subst = malloc(sizeof *subst * 2 * (size_t)nh);
        int *which = malloc(sizeof(int) * (size_t)nh);
        EPT_CHECK(sub && subst && which, "out of memory");
        for (int i = 0; i < nh; i++) {
            if ((i + round + 1) % nt != t)
                continue;
            if (round % 2) {
                EPT_OK(MPI_Wait(&req[2 * i], &st[2 * i]));
                EPT_OK(MPI_Wait(&req[2 * i + 1], &st[2 * i + 1]));
            } else {
                sub[2 * mine] = req[2 * i];
                sub[2 * mine + 1] = req[2 * i + 1];
                which[mine++] = i;
            }
        }
        if (!(round % 2)) {
            EPT_OK(MPI_Waitall(2 * mine, sub, subst));
            for (int k = 0; k < mine; k++) {
                st[2 * which[k]] = subst[2 * k];
                req[2 * which[k]] = sub[2 * k];
                req[2 * which[k] + 1] = sub[2 * k + 1];
            }
        }
        for (int i = 0; i < nh; i++) {
            int r = first + i, src = (r + size - shift % size) % size, cnt = -1;
            if ((i + round + 1) % nt != t)
                continue;
            EPT_CHECK(req[2 * i] == MPI_REQUEST_NULL && req[2 * i + 1] == MPI_REQUEST_NULL,
                      "many endpoints, round %d: rank %d: completed requests not freed", round, r);
            MPI_Get_count(&st[2 * i], MPI_INT, &cnt);
            EPT_CHECK(st[2 * i].MPI_SOURCE == src && st[2 * i].MPI_TAG == tags[src % NTAGS] && cnt == ints,
                      "many endpoints, round %d: rank %d: status source %d tag %d count %d, expected %d %d %d", round,
                      r, st[2 * i].MPI_SOURCE, st[2 * i].MPI_TAG, cnt, src, tags[src % NTAGS], ints);
            for (int j = 0; j < ints; j++)
                EPT_CHECK(rbuf[i][j] == many_val(src, round, j), "many endpoints, round %d: rank %d: int %d from %d",
                          round, r, j, src);
        }
        free(sub);
        free(subst);
        free(which);
    }
    free(req);
    free(st);
}

static void many(int argc, char **argv, int nh)
{
    int wrank, wsize, first = 0, size = 0;
    (void)argc;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    for (int p = 0; p < wsize; p++) {
        int e = ept_list_item(argv[1], p);
        if (p < wrank)
            first += e;
        size += e;
    }
    double t0 = MPI_Wtime();
    PHASE("many endpoints: MPI_Comm_create_endpoints");
    MPI_Comm *h = malloc(sizeof *h * (size_t)(nh ? nh : 1));
    EPT_CHECK(h, "out of memory");
    EPT_OK(MPI_Comm_create_endpoints(MPI_COMM_WORLD, nh, MPI_INFO_NULL, h));
    double t1 = MPI_Wtime();
    if (nh > 0) {
        int tags[NTAGS];
        get_tags(h[0], tags);
        for (int i = 0; i < nh; i++) {
            int r = -1, s = -1;
            MPI_Comm_rank(h[i], &r);
            MPI_Comm_size(h[i], &s);
            EPT_CHECK(r == first + i && s == size, "handle %d: rank %d size %d, expected %d %d", i, r, s, first + i,
                      size);
        }
        int maxints = LARGE / 4;
        int **sbuf = malloc(sizeof *sbuf * (size_t)nh), **rbuf = malloc(sizeof *rbuf * (size_t)nh);
        EPT_CHECK(sbuf && rbuf, "out of memory");
        for (int i = 0; i < nh; i++) {
            sbuf[i] = malloc(sizeof(int) * (size_t)maxints);
            rbuf[i] = malloc(sizeof(int) * (size_t)maxints);
            EPT_CHECK(sbuf[i] && rbuf[i], "out of memory");
        }
        PHASE("many endpoints: ring, small");
        many_round(h, nh, size, first, tags, 1, 3, 0, sbuf, rbuf);
        PHASE("many endpoints: halfway across, small");
        many_round(h, nh, size, first, tags, size / 2, 3, 1, sbuf, rbuf);
        PHASE("many endpoints: ring backwards, large");
        many_round(h, nh, size, first, tags, size - 1, maxints, 2, sbuf, rbuf);
        PHASE("many endpoints: halfway across, large");
        many_round(h, nh, size, first, tags, size / 2 + 1, maxints, 3, sbuf, rbuf);
        for (int i = 0; i < nh; i++) {
            free(sbuf[i]);
            free(rbuf[i]);
        }
        free(sbuf);
        free(rbuf);
    }
    double t2 = MPI_Wtime();
    EPT_CHECK(t2 - t0 < 15, "many endpoints: %d handles took %.1f s (creation %.1f s, exchanges %.1f s)", nh, t2 - t0,
              t1 - t0, t2 - t1);
    /* Freeing an endpoint handle is local: one thread frees them all. */
    for (int i = 0; i < nh; i++)
        EPT_OK(MPI_Comm_free(&h[i]));
    free(h);
}

int main(int argc, char **argv)
{
    int nlocal = ept_init(&argc, &argv, 30);
    int most = nlocal;
    if (ept_world_endpoints() == 0) {
        int wsize;
        MPI_Comm_size(MPI_COMM_WORLD, &wsize);
        for (int p = 0; p < wsize; p++)
            if (ept_list_item(argv[1], p) > most)
                most = ept_list_item(argv[1], p);
    }
    if (most > MANY)
        many(argc, argv, nlocal);
    else
        run_ranks(nlocal, tags_ranks, NULL);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
