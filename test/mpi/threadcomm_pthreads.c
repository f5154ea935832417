/* Thread communicators driven by POSIX threads, not OpenMP (MPICH's own
 * threadcomm tests start theirs this way):
 *
 * - each process makes one for 2 or 3 threads (uneven), started by as
 *   many pthreads: the ranks a process's threads get at
 *   MPIX_Threadcomm_start are distinct, follow the process's rank, and hold
 *   until MPIX_Threadcomm_finish;
 * - a ring with wildcard receives, an Allreduce and a Comm_dup made inside
 *   the region;
 * - start / finish three times on the same communicator;
 * - an attribute a thread sets inside the region is its own, and its
 *   delete callback runs at that thread's finish;
 * - a thread that uses the communicator before its start, or finishes
 *   without starting, gets MPI_ERR_COMM; starting twice too;
 * - MPIX_Comm_test_threadcomm is true for the handle, outside regions too. */
#include "eptest.h"

#include <pthread.h>

#pragma weak MPIX_Threadcomm_init
#pragma weak MPIX_Threadcomm_start
#pragma weak MPIX_Threadcomm_finish
#pragma weak MPIX_Threadcomm_free
#pragma weak MPIX_Comm_test_threadcomm

#define ROUNDS 3

static MPI_Comm tc;
static int first, total, mine, key;
static atomic_int deleted;
static atomic_int seen[ROUNDS][64]; /* [round][rank - first] threads that had that rank */

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    EPT_CHECK(*(int *)val >= 0, "delete callback: wrong attribute value");
    atomic_fetch_add(&deleted, 1);
    return MPI_SUCCESS;
}

static void *thread_main(void *arg)
{
    int id = (int)(intptr_t)arg, rc, cls, flag = 0, r, s;
    int *attr = malloc(sizeof *attr);
    *attr = id;
    /* Before its start, the handle is not this thread's yet. */
    rc = MPI_Comm_rank(tc, &r);
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_COMM, "MPI_Comm_rank before MPIX_Threadcomm_start: class %d, not MPI_ERR_COMM", cls);
    rc = MPIX_Threadcomm_finish(tc);
    MPI_Error_class(rc, &cls);
    EPT_CHECK(cls == MPI_ERR_COMM, "MPIX_Threadcomm_finish without a start: class %d, not MPI_ERR_COMM", cls);
    for (int round = 0; round < ROUNDS; round++) {
        int got = -1, sum = 0;
        MPI_Status st;
        MPI_Comm d;
        EPT_OK(MPIX_Threadcomm_start(tc));
        if (round == 0) {
            rc = MPIX_Threadcomm_start(tc);
            MPI_Error_class(rc, &cls);
            EPT_CHECK(cls == MPI_ERR_COMM, "a second MPIX_Threadcomm_start: class %d, not MPI_ERR_COMM", cls);
        }
        EPT_OK(MPI_Comm_rank(tc, &r));
        EPT_OK(MPI_Comm_size(tc, &s));
        EPT_CHECK(s == total && r >= first && r < first + mine, "round %d: rank %d of %d, expected %d..%d of %d", round,
                  r, s, first, first + mine - 1, total);
        atomic_fetch_add(&seen[round][r - first], 1);
        EPT_OK(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % s, 9, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &st));
        EPT_CHECK(got == (r + s - 1) % s && st.MPI_SOURCE == got, "round %d: ring got %d from %d", round, got,
                  st.MPI_SOURCE);
        EPT_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, tc));
        EPT_CHECK(sum == s * (s - 1) / 2, "round %d: allreduce %d", round, sum);
        EPT_OK(MPI_Comm_dup(tc, &d));
        int dr;
        EPT_OK(MPI_Comm_rank(d, &dr));
        EPT_CHECK(dr == r, "the dup made inside the region: rank %d, not %d", dr, r);
        EPT_OK(MPI_Barrier(d));
        EPT_OK(MPI_Comm_free(&d));
        if (round == 0) {
            void *v;
            EPT_OK(MPI_Comm_set_attr(tc, key, attr));
            EPT_OK(MPI_Comm_get_attr(tc, key, &v, &flag));
            EPT_CHECK(flag && v == attr, "the attribute this thread set is not its own");
            EPT_OK(MPIX_Comm_test_threadcomm(tc, &flag));
            EPT_CHECK(flag == 1, "MPIX_Comm_test_threadcomm: %d inside the region", flag);
        } else {
            void *v;
            EPT_OK(MPI_Comm_get_attr(tc, key, &v, &flag));
            EPT_CHECK(!flag, "round %d: an attribute of an earlier round is still there", round);
        }
        EPT_OK(MPIX_Threadcomm_finish(tc));
    }
    free(attr);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, wr, ws;
    watchdog_arm(60);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    EPT_CHECK(MPIX_Threadcomm_init && MPIX_Comm_test_threadcomm, "MPIX_Threadcomm_* are not available");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    mine = 2 + wr % 2;
    for (int p = 0; p < ws; p++) {
        if (p < wr)
            first += 2 + p % 2;
        total += 2 + p % 2;
    }
    EPT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &key, NULL));
    EPT_OK(MPIX_Threadcomm_init(MPI_COMM_WORLD, mine, &tc));
    int flag = 0;
    EPT_OK(MPIX_Comm_test_threadcomm(tc, &flag));
    EPT_CHECK(flag == 1, "MPIX_Comm_test_threadcomm: %d outside the region", flag);
    pthread_t th[3];
    for (int i = 0; i < mine; i++)
        EPT_CHECK(pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i) == 0, "pthread_create");
    for (int i = 0; i < mine; i++)
        pthread_join(th[i], NULL);
    for (int round = 0; round < ROUNDS; round++)
        for (int t = 0; t < mine; t++)
            EPT_CHECK(atomic_load(&seen[round][t]) == 1, "round %d: %d threads had rank %d", round,
                      atomic_load(&seen[round][t]), first + t);
    EPT_CHECK(atomic_load(&deleted) == mine, "the attributes' delete callback ran %d times, not %d",
              atomic_load(&deleted), mine);
    EPT_OK(MPIX_Threadcomm_free(&tc));
    EPT_OK(MPI_Comm_free_keyval(&key));
    MPI_Finalize();
    return 0;
}
