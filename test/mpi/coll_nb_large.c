/* Large non-blocking collectives (coll_nb.h):
 *  - buffers are their owner's again once the request completes: in an
 *    8 MiB Ibcast the root (and the rank that receives for the others of
 *    its process) overwrites its buffer at once, while another rank
 *    completes the call for everyone in its process;
 *  - an 8 MiB Iallreduce (MPI_SUM on doubles). */
#include "coll_nb.h"

/* A buffer is its owner's again as soon as its request is complete.  The
 * ranks whose buffers the others' results are copied from (the root, and in
 * other processes the first local rank, which receives the data) poll
 * slowly and overwrite their buffer the moment the request completes; the
 * others poll fast, so one of them usually completes the instance for all
 * local ranks and does the copying. */
static void t_reuse(MPI_Comm c, int r, int s)
{
    const int n = 2 * 1024 * 1024; /* 8 MiB of ints */
    int *buf = malloc(sizeof(int) * (size_t)n), *priv = malloc(sizeof(int) * (size_t)n);
    MPI_Request rq;
    EPT_CHECK(buf && priv, "out of memory");
    for (int it = 0; it < 4; it++) {
        int root = it < 2 ? 0 : s - 1, flag = 0, source = r == root || omp_get_thread_num() == 0;
        PHASE("Ibcast: the ranks reuse their buffer as soon as their request completes");
        for (int i = 0; i < n; i++)
            buf[i] = r == root ? bval(root, n + it, i) : -1;
        if (r != root) /* the root calls first */
            while (atomic_load(&shared[2]) < it + 1)
                sched_yield();
        EPT_OK(MPI_Ibcast(buf, n, MPI_INT, root, c, &rq));
        if (r == root)
            atomic_fetch_add(&shared[2], 1);
        for (;;) {
            EPT_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
            if (flag)
                break;
            if (source)
                usleep(100);
            else
                sched_yield();
        }
        if (r != root)
            memcpy(priv, buf, sizeof(int) * (size_t)n);
        memset(buf, 0xee, sizeof(int) * (size_t)n);
        if (r != root)
            for (int i = 0; i < n; i++)
                if (priv[i] != bval(root, n + it, i))
                    EPT_CHECK(0,
                              "Ibcast of %d ints from %d, round %d: element %d is %d, expected %d (copied from a "
                              "buffer its owner had already reused?)",
                              n, root, it, i, priv[i], bval(root, n + it, i));
    }
    free(buf);
    free(priv);
}

/* ---- 8 MiB Iallreduce --------------------------------------------------- */

static void t_big(MPI_Comm c, int r, int s)
{
    const int n = 1024 * 1024;
    double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    MPI_Request rq;
    EPT_CHECK(a && b, "out of memory");
    PHASE("8 MiB Iallreduce");
    for (int i = 0; i < n; i++) {
        a[i] = r + (i % 13);
        b[i] = -1;
    }
    EPT_OK(MPI_Iallreduce(a, b, n, MPI_DOUBLE, MPI_SUM, c, &rq));
    complete(&rq, r, "8 MiB MPI_Iallreduce");
    for (int i = 0; i < n; i++) {
        double w = s * (s - 1) / 2.0 + (double)s * (i % 13);
        if (b[i] != w)
            EPT_CHECK(0, "Iallreduce of 1M doubles: element %d is %g, expected %g", i, b[i], w);
    }
    for (int i = 0; i < n; i++)
        EPT_CHECK(a[i] == r + (i % 13), "Iallreduce changed its send buffer at %d", i);
    free(a);
    free(b);
}

static void tests(MPI_Comm c, int r, int s)
{
    t_reuse(c, r, s);
    t_big(c, r, s);
}

int main(int argc, char **argv) { return coll_nb_main(argc, argv, tests); }
