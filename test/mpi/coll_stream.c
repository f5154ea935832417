/* Streams of small blocking collectives back to back: Barrier, Bcast from
 * a rotating root, Reduce to a rotating root, Allreduce (predefined and
 * user operations, several types, MPI_IN_PLACE), interleaved with calls
 * too large for the one-process path (src/coll/coll_local.c) and with a rank
 * that sometimes lags, so that the per-endpoint records wrap around many
 * times while a slow endpoint still reads; and runs of Bcast and Reduce
 * with one root, where the ranks that wait for nobody run ahead of a
 * lagging one.  Every result is checked
 * against values computed here, on the test communicator and on a split
 * whose ranks are reversed.
 *
 * World mode (PxT) and explicit shapes (P:a,b,..). */
#include "eptest.h"

#include <unistd.h>

#define ROUNDS 3000
#define BIG 100 /* doubles: 800 B, over the one-process path's limit */

static MPI_Op user_max;

static void max_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        if (((const long *)in)[i] > ((long *)inout)[i])
            ((long *)inout)[i] = ((const long *)in)[i];
}

static long val(int q, int k, int i) { return (long)q * 1000 + k % 97 + i; }

static void stream(MPI_Comm c, const char *what)
{
    int r, n;
    EPT_OK(MPI_Comm_rank(c, &r));
    EPT_OK(MPI_Comm_size(c, &n));
    for (int k = 0; k < ROUNDS; k++) {
        int root = k % n, sel = k % 6;
        if (r == (k / 7) % n && k % 13 == 0)
            usleep(200); /* one rank lags now and then */
        if (sel == 0) {
            EPT_OK(MPI_Barrier(c));
        } else if (sel == 1) {
            int b[3] = {-1, -1, -1};
            if (r == root)
                for (int i = 0; i < 3; i++)
                    b[i] = (int)val(root, k, i);
            EPT_OK(MPI_Bcast(b, 3, MPI_INT, root, c));
            for (int i = 0; i < 3; i++)
                EPT_CHECK(b[i] == val(root, k, i), "%s round %d: Bcast from %d item %d is %d, expected %ld", what, k,
                          root, i, b[i], val(root, k, i));
        } else if (sel == 2) {
            double x[2] = {(double)val(r, k, 0), (double)val(r, k, 1)}, y[2] = {-1, -1};
            EPT_OK(MPI_Reduce(x, y, 2, MPI_DOUBLE, MPI_SUM, root, c));
            if (r == root)
                for (int i = 0; i < 2; i++) {
                    double want = 0;
                    for (int q = 0; q < n; q++)
                        want += (double)val(q, k, i);
                    EPT_CHECK(y[i] == want, "%s round %d: Reduce to %d item %d is %g, expected %g", what, k, root, i,
                              y[i], want);
                }
        } else if (sel == 3) {
            long x[4];
            for (int i = 0; i < 4; i++)
                x[i] = val(r, k, i) * (r % 2 ? -1 : 1);
            EPT_OK(MPI_Allreduce(MPI_IN_PLACE, x, 4, MPI_LONG, k % 2 ? MPI_MAX : user_max, c));
            for (int i = 0; i < 4; i++) {
                long want = val(0, k, i);
                for (int q = 0; q < n; q++)
                    if (val(q, k, i) * (q % 2 ? -1 : 1) > want)
                        want = val(q, k, i) * (q % 2 ? -1 : 1);
                EPT_CHECK(x[i] == want, "%s round %d: Allreduce max item %d is %ld, expected %ld", what, k, i, x[i],
                          want);
            }
        } else if (sel == 4) {
            int x = r + k, y = -1;
            EPT_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_BXOR, c));
            int want = 0;
            for (int q = 0; q < n; q++)
                want ^= q + k;
            EPT_CHECK(y == want, "%s round %d: Allreduce bxor is %d, expected %d", what, k, y, want);
        } else {
            double big[BIG];
            for (int i = 0; i < BIG; i++)
                big[i] = r == root ? (double)val(root, k, i) : -1;
            EPT_OK(MPI_Bcast(big, BIG, MPI_DOUBLE, root, c));
            EPT_CHECK(big[BIG - 1] == (double)val(root, k, BIG - 1) && big[0] == (double)val(root, k, 0),
                      "%s round %d: large Bcast from %d wrong", what, k, root);
        }
    }
}

/* One root many times in a row: the root of a Bcast and the non-roots of a
 * Reduce wait for nobody, so they run ahead of a lagging rank by as many
 * calls as the library lets them. */
static void run_ahead(MPI_Comm c, const char *what)
{
    int r, n;
    EPT_OK(MPI_Comm_rank(c, &r));
    EPT_OK(MPI_Comm_size(c, &n));
    for (int k = 0; k < 64; k++) {
        int b = r == 0 ? (int)val(0, k, 0) : -1;
        if (r == n - 1 && k == 1)
            usleep(3000);
        EPT_OK(MPI_Bcast(&b, 1, MPI_INT, 0, c));
        EPT_CHECK(b == val(0, k, 0), "%s: Bcast %d from 0 in a row gave %d, expected %ld", what, k, b, val(0, k, 0));
    }
    for (int k = 0; k < 64; k++) {
        long x = val(r, k, 0), y = -1, want = 0;
        if (r == 0 && k == 1)
            usleep(3000);
        EPT_OK(MPI_Reduce(&x, &y, 1, MPI_LONG, MPI_SUM, 0, c));
        for (int q = 0; q < n; q++)
            want += val(q, k, 0);
        EPT_CHECK(r != 0 || y == want, "%s: Reduce %d to 0 in a row gave %ld, expected %ld", what, k, y, want);
    }
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    int r, n;
    MPI_Comm rev;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    run_ahead(comm, "comm");
    stream(comm, "comm");
    EPT_OK(MPI_Comm_split(comm, 0, n - r, &rev));
    stream(rev, "reversed split");
    EPT_OK(MPI_Comm_free(&rev));
}

int main(int argc, char **argv)
{
    int nlocal = ept_init(&argc, &argv, 100);
    EPT_OK(MPI_Op_create(max_fn, 1, &user_max));
    run_ranks(nlocal, body, NULL);
    EPT_OK(MPI_Op_free(&user_max));
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
