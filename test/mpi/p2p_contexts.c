/* Communicator isolation for point-to-point on endpoint communicators: a
 * communicator and its duplicates (MPI_Comm_dup, also of a duplicate) share
 * ranks but never each other's messages: MPI_ANY_SOURCE / MPI_ANY_TAG
 * receives, pre-posted or not, and probes on one communicator only see that
 * communicator's messages, small or large.  Freshly duplicated communicators
 * are used at once, before other processes may have finished creating their
 * side (messages that arrive early must wait for it), and freed, many times.
 *
 * World mode (PxT): the ranks of MPI_COMM_WORLD.  Explicit shapes (P:a,b,..):
 * each process creates its list entry of endpoints with
 * MPI_Comm_create_endpoints and thread i drives handle i. */
#include "eptest.h"

#define NC 3
#define LARGE 8192 /* ints: 32 KiB */
#define FRESH 10

typedef struct {
    MPI_Comm c[NC]; /* the communicator and two duplicates */
    int me, n, left, right;
    int *sb[NC], *rb[NC];
} ctx_t;

static int val(int src, int which, int round, int i)
{
    return (int)((((unsigned)src * 7u + (unsigned)which) * 1000u + (unsigned)round) * 100003u + (unsigned)i);
}

static void fill_sends(ctx_t *x, int count, int round)
{
    for (int k = 0; k < NC; k++)
        for (int i = 0; i < count; i++)
            x->sb[k][i] = val(x->me, k, round, i);
}

static void check(const ctx_t *x, const char *what, int k, const MPI_Status *st, int count, int round)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_INT, &cnt);
    int which = -1;
    for (int j = 0; j < NC; j++)
        if (x->rb[k][0] == val(x->left, j, round, 0))
            which = j;
    EPT_CHECK(which == k, "%s: rank %d: a receive on communicator %d got the message sent on communicator %d", what,
              x->me, k, which);
    EPT_CHECK(st->MPI_SOURCE == x->left && st->MPI_TAG == 5 && cnt == count,
              "%s: rank %d: communicator %d: status source %d tag %d count %d", what, x->me, k, st->MPI_SOURCE,
              st->MPI_TAG, cnt);
    for (int i = 0; i < count; i++)
        EPT_CHECK(x->rb[k][i] == val(x->left, k, round, i), "%s: rank %d: communicator %d: int %d wrong", what, x->me,
                  k, i);
}

static void contexts(MPI_Comm comm, void *arg)
{
    (void)arg;
    ctx_t x;
    x.c[0] = comm;
    ept_ring_place(comm, &x.me, &x.n, &x.left, &x.right);
    PHASE("MPI_Comm_dup");
    EPT_OK(MPI_Comm_dup(comm, &x.c[1]));
    EPT_OK(MPI_Comm_dup(x.c[1], &x.c[2]));
    for (int k = 0; k < NC; k++) {
        int r = -1, s = -1;
        MPI_Comm_rank(x.c[k], &r);
        MPI_Comm_size(x.c[k], &s);
        EPT_CHECK(r == x.me && s == x.n, "duplicate %d: rank %d size %d, expected %d %d", k, r, s, x.me, x.n);
        x.sb[k] = malloc(sizeof(int) * LARGE);
        x.rb[k] = malloc(sizeof(int) * LARGE);
        EPT_CHECK(x.sb[k] && x.rb[k], "out of memory");
    }
    int round = 0;
    for (int large = 0; large < 2; large++) {
        int count = large ? LARGE : 4;
        MPI_Request sr[NC], rr[NC];
        MPI_Status st[NC];

        PHASE("messages on three communicators, then MPI_ANY_SOURCE / MPI_ANY_TAG receives");
        fill_sends(&x, count, round);
        for (int k = NC - 1; k >= 0; k--) /* the last communicator's message first */
            EPT_OK(MPI_Isend(x.sb[k], count, MPI_INT, x.right, 5, x.c[k], &sr[k]));
        EPT_OK(MPI_Barrier(comm));
        for (int k = 0; k < NC; k++) {
            EPT_OK(MPI_Recv(x.rb[k], count, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, x.c[k], &st[k]));
            check(&x, "unexpected messages", k, &st[k], count, round);
        }
        EPT_OK(MPI_Waitall(NC, sr, statuses_ignore()));
        EPT_OK(MPI_Barrier(comm));
        round++;

        PHASE("pre-posted MPI_ANY_SOURCE / MPI_ANY_TAG receives on three communicators");
        fill_sends(&x, count, round);
        for (int k = NC - 1; k >= 0; k--)
            EPT_OK(MPI_Irecv(x.rb[k], count, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, x.c[k], &rr[k]));
        EPT_OK(MPI_Barrier(comm));
        for (int k = 0; k < NC; k++)
            EPT_OK(MPI_Send(x.sb[k], count, MPI_INT, x.right, 5, x.c[k]));
        EPT_OK(MPI_Waitall(NC, rr, st));
        for (int k = 0; k < NC; k++)
            check(&x, "pre-posted receives", k, &st[k], count, round);
        EPT_OK(MPI_Barrier(comm));
        round++;

        PHASE("probes see only their communicator's messages");
        fill_sends(&x, count, round);
        EPT_OK(MPI_Isend(x.sb[1], count, MPI_INT, x.right, 5, x.c[1], &sr[1]));
        EPT_OK(MPI_Barrier(comm));
        int flag = 1;
        MPI_Message msg;
        EPT_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, x.c[0], &flag, &st[0]));
        EPT_CHECK(!flag, "rank %d: MPI_Iprobe on a communicator found a message sent on its duplicate", x.me);
        EPT_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, x.c[2], &flag, &msg, &st[2]));
        EPT_CHECK(!flag, "rank %d: MPI_Improbe on a communicator found a message sent on another duplicate", x.me);
        EPT_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, x.c[1], &msg, &st[1]));
        EPT_OK(MPI_Mrecv(x.rb[1], count, MPI_INT, &msg, &st[1]));
        check(&x, "probes", 1, &st[1], count, round);
        EPT_OK(MPI_Wait(&sr[1], MPI_STATUS_IGNORE));
        EPT_OK(MPI_Barrier(comm));
        round++;
    }

    /* Fresh duplicates used at once: the right neighbour may be in another
     * process that has not finished its MPI_Comm_dup yet. */
    for (int i = 0; i < FRESH; i++) {
        MPI_Comm c;
        MPI_Request r;
        MPI_Status st;
        /* Small (eager) and large (rendezvous) messages in turn. */
        int count = i % 2 ? LARGE : 2, *out = x.sb[0], *in = x.rb[0];
        PHASE("fresh duplicates used at once");
        for (int j = 0; j < count; j++) {
            out[j] = val(x.me, 9, i, j);
            in[j] = -1;
        }
        EPT_OK(MPI_Comm_dup(i % 2 ? x.c[1] : comm, &c));
        EPT_OK(MPI_Isend(out, count, MPI_INT, x.right, i, c, &r));
        EPT_OK(MPI_Recv(in, count, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st));
        EPT_CHECK(st.MPI_SOURCE == x.left && st.MPI_TAG == i, "fresh duplicate %d: rank %d: source %d tag %d", i, x.me,
                  st.MPI_SOURCE, st.MPI_TAG);
        for (int j = 0; j < count; j++)
            EPT_CHECK(in[j] == val(x.left, 9, i, j), "fresh duplicate %d: rank %d: int %d wrong", i, x.me, j);
        EPT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        EPT_OK(MPI_Comm_free(&c));
    }
    PHASE("MPI_Comm_free of the duplicates");
    EPT_OK(MPI_Comm_free(&x.c[2]));
    EPT_OK(MPI_Comm_free(&x.c[1]));
    for (int k = 0; k < NC; k++) {
        free(x.sb[k]);
        free(x.rb[k]);
    }
}

int main(int argc, char **argv) { return ept_main(argc, argv, 30, contexts, NULL); }
