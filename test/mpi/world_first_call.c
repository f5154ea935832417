/* World mode for threads that are not OpenMP threads (EPMPI_THREADS=
 * first-call, set here unless the environment sets it):
 *
 * - the thread that called MPI_Init is endpoint 0 of its process; pthreads
 *   started one after another take endpoints 1, 2, ... at their first call
 *   on MPI_COMM_WORLD, in the order they make it, and keep them;
 * - all T threads of each process run a ring with wildcard receives, an
 *   Allreduce and a Barrier on MPI_COMM_WORLD, and MPI_COMM_SELF is each
 *   one's own; the error handler MPI_Init's thread set on MPI_COMM_WORLD
 *   before they came is theirs too (a send to a bad rank returns);
 * - one thread more than endpoints gets MPI_ERR_COMM (through the error
 *   handler MPI_Init's thread set on MPI_COMM_WORLD before the threads
 *   started), and MPI_Comm_rank still works after it;
 * - threads that end give their endpoints back: a second team of new
 *   threads takes them again, by arrival, and communicates;
 * - EPMPI_VERBOSE's line says "threads first-call". */
#include "eptest.h"

#include <pthread.h>

static int T, p, nworld;
static atomic_int taken_in_order; /* threads of this team that have their rank */

typedef struct {
    int index; /* 1..T-1: the order in which the thread makes its first call */
    int round;
    int rank;
} member_t;

/* What every endpoint of the process does in one round: its rank, a ring
 * over MPI_COMM_WORLD with wildcard receives, an Allreduce and a Barrier. */
static void communicate(int round, int expect_rank)
{
    int r, s, self_rank, self_size;
    EPT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &r));
    EPT_OK(MPI_Comm_size(MPI_COMM_WORLD, &s));
    EPT_CHECK(r == expect_rank && s == nworld, "round %d: rank %d of %d, expected %d of %d", round, r, s, expect_rank,
              nworld);
    EPT_OK(MPI_Comm_rank(MPI_COMM_SELF, &self_rank));
    EPT_OK(MPI_Comm_size(MPI_COMM_SELF, &self_size));
    EPT_CHECK(self_rank == 0 && self_size == 1, "MPI_COMM_SELF: rank %d of %d", self_rank, self_size);
    for (int i = 0; i < 50; i++) {
        int out[2] = {r, i}, in[2];
        MPI_Status st;
        MPI_Request rq;
        EPT_OK(MPI_Irecv(in, 2, MPI_INT, MPI_ANY_SOURCE, round, MPI_COMM_WORLD, &rq));
        EPT_OK(MPI_Send(out, 2, MPI_INT, (r + 1) % s, round, MPI_COMM_WORLD));
        EPT_OK(MPI_Wait(&rq, &st));
        EPT_CHECK(in[0] == (r + s - 1) % s && in[1] == i && st.MPI_SOURCE == in[0],
                  "round %d message %d: got (%d,%d) from %d", round, i, in[0], in[1], st.MPI_SOURCE);
    }
    long sum = 0, mine = r;
    EPT_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    EPT_CHECK(sum == (long)s * (s - 1) / 2, "round %d: Allreduce gave %ld", round, sum);
    EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void *member(void *arg)
{
    member_t *m = arg;
    /* Arrive in order: thread i makes its first call after thread i-1. */
    while (atomic_load(&taken_in_order) < m->index - 1)
        sched_yield();
    EPT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &m->rank));
    atomic_fetch_add(&taken_in_order, 1);
    communicate(m->round, p * T + m->index);
    int again, x = 0;
    EPT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &again));
    EPT_CHECK(again == m->rank, "a thread's rank changed from %d to %d", m->rank, again);
    /* Its endpoint has the handler MPI_Init's thread set before it came
     * (MPI_ERRORS_RETURN): a bad rank returns instead of ending the job. */
    EPT_CHECK(MPI_Send(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD) != MPI_SUCCESS, "a send to rank -5 succeeded");
    return NULL;
}

/* One thread too many: every endpoint of the process is held. */
static void *extra(void *arg)
{
    (void)arg;
    int r = -1, cls = -1, len;
    char msg[MPI_MAX_ERROR_STRING];
    int rc = MPI_Comm_rank(MPI_COMM_WORLD, &r);
    EPT_CHECK(rc != MPI_SUCCESS, "a thread beyond the %d endpoints got rank %d", T, r);
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    EPT_CHECK(cls == MPI_ERR_COMM, "error class %d, expected MPI_ERR_COMM", cls);
    EPT_CHECK(strstr(msg, "MPI_Comm_rank") && strstr(msg, "held by other threads") && strstr(msg, "EPMPI_ENDPOINTS"),
              "message '%s'", msg);
    return NULL;
}

/* A team of T-1 new threads beside MPI_Init's thread; while they hold
 * their endpoints, one more thread is refused. */
static void team(int round)
{
    pthread_t th[64], x;
    member_t m[64];
    atomic_store(&taken_in_order, 0);
    for (int i = 1; i < T; i++) {
        m[i] = (member_t){i, round, -1};
        EPT_CHECK(pthread_create(&th[i], NULL, member, &m[i]) == 0, "pthread_create");
    }
    while (atomic_load(&taken_in_order) < T - 1)
        sched_yield();
    EPT_CHECK(pthread_create(&x, NULL, extra, NULL) == 0, "pthread_create");
    pthread_join(x, NULL);
    communicate(round, p * T);
    for (int i = 1; i < T; i++) {
        pthread_join(th[i], NULL);
        EPT_CHECK(m[i].rank == p * T + i, "round %d: the thread arriving %d-th got rank %d, expected %d", round, i,
                  m[i].rank, p * T + i);
    }
}

int main(int argc, char **argv)
{
    int r;
    T = ept_require_world();
    EPT_CHECK(T <= 64, "at most 64 endpoints per process here");
    setenv("EPMPI_THREADS", "first-call", 0);
    setenv("EPMPI_VERBOSE", "1", 1);
    watchdog_arm(60);
    char line[1024];
    ept_init_caught(&argc, &argv, line, sizeof line);
    EPT_CHECK(strstr(line, "threads first-call"), "EPMPI_VERBOSE line '%s' lacks 'threads first-call'", line);

    MPI_Comm_size(MPI_COMM_WORLD, &nworld);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    p = r / T;
    EPT_CHECK(r % T == 0, "MPI_Init's thread is rank %d: not endpoint 0 of its process", r);
    /* MPI_Init's thread speaks for the endpoints no thread holds yet. */
    EPT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    PHASE("first team");
    team(1);
    PHASE("second team");
    team(2);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
