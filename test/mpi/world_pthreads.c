/* World mode with plain pthreads: threads that are not OpenMP threads are all
 * endpoint 0 of their process, and several of them may drive that endpoint
 * at once (MPI_THREAD_MULTIPLE semantics per endpoint).  Each pair of
 * threads with the same index in neighbouring processes exchanges messages
 * on its own tag, as a threaded program would under plain MPICH. */
#include "eptest.h"

#include <pthread.h>

#define NTHREADS 4
#define ITERS 200

static int rank, size;

static void *worker(void *arg)
{
    int id = (int)(long)arg, r;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    EPT_CHECK(r == rank, "a pthread is endpoint 0: rank %d, expected %d", r, rank);
    for (int i = 0; i < ITERS; i++) {
        int out[2] = {rank, i * NTHREADS + id}, in[2];
        MPI_Request rq;
        MPI_Status st;
        MPI_Irecv(in, 2, MPI_INT, left, id, MPI_COMM_WORLD, &rq);
        MPI_Send(out, 2, MPI_INT, right, id, MPI_COMM_WORLD);
        MPI_Wait(&rq, &st);
        EPT_CHECK(in[0] == left && in[1] == i * NTHREADS + id, "thread %d iter %d got (%d,%d)", id, i, in[0], in[1]);
        EPT_CHECK(st.MPI_SOURCE == left && st.MPI_TAG == id, "status (%d,%d)", st.MPI_SOURCE, st.MPI_TAG);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    ept_require_world();
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    EPT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pthread_t t[NTHREADS];
    for (long i = 0; i < NTHREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
