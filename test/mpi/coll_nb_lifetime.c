/* Objects freed while a non-blocking collective that uses them is pending
 * (coll_nb.h): derived datatypes freed right after the Ibcast / Igather /
 * Irecv that uses them, and a user operation right after its Iallreduce,
 * while other ranks have not called yet (MPI: "any communication that is
 * currently using this datatype will complete normally"). */
#include "coll_nb.h"

/* ---- a datatype freed while the collective is pending -------------------- */

static void int_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((const int *)in)[i];
}

static void t_type_lifetime(MPI_Comm c, int r, int s)
{
    int buf[3 * NV + 2];
    int *big = malloc(sizeof(int) * 3 * (size_t)NV * (size_t)s);
    MPI_Datatype t;
    MPI_Request rq;
    EPT_CHECK(big != NULL, "out of memory");
    PHASE("derived datatype freed while the collective is pending");
    for (int k = 0; k < 2; k++) {
        int root = k ? s - 1 : 0, late = k ? 0 : s - 1;
        EPT_OK(MPI_Type_vector(NV, 2, 3, MPI_INT, &t));
        EPT_OK(MPI_Type_commit(&t));
        for (int i = 0; i < 3 * NV + 2; i++)
            buf[i] = r == root && i < 3 * NV && i % 3 != 2 ? bval(root, 3, i) : -4;
        if (r == late)
            usleep(20000); /* the others free their type before the last rank arrives */
        EPT_OK(MPI_Ibcast(buf, 1, t, root, c, &rq));
        EPT_OK(MPI_Type_free(&t));
        EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int i = 0; i < 3 * NV + 2; i++) {
            int w = i % 3 != 2 && i < 3 * NV ? bval(root, 3, i) : -4;
            EPT_CHECK(buf[i] == w, "Ibcast from %d with a freed vector type: int %d is %d, expected %d", root, i,
                      buf[i], w);
        }
        /* Igather into a vector at the root, the type freed at once. */
        EPT_OK(MPI_Type_vector(NV, 2, 3, MPI_INT, &t));
        EPT_OK(MPI_Type_commit(&t));
        int mine[2 * NV];
        for (int i = 0; i < 2 * NV; i++)
            mine[i] = r * 10000 + i;
        for (int i = 0; i < 3 * NV * s; i++)
            big[i] = -4;
        if (r == late)
            usleep(20000);
        EPT_OK(MPI_Igather(mine, 2 * NV, MPI_INT, r == root ? big : NULL, 1, t, root, c, &rq));
        EPT_OK(MPI_Type_free(&t));
        EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (r == root)
            for (int q = 0; q < s; q++) /* the vector's extent is 3 NV - 1 ints */
                for (int j = 0; j < 2 * NV; j++) {
                    int at = q * (3 * NV - 1) + 3 * (j / 2) + j % 2;
                    EPT_CHECK(big[at] == q * 10000 + j, "Igather to %d into a freed vector type: rank %d item %d is %d",
                              root, q, j, big[at]);
                }
        /* Iallreduce with a user operation freed at once. */
        MPI_Op op;
        int one = r + 1, sum = -1;
        EPT_OK(MPI_Op_create(int_sum, 1, &op));
        if (r == late)
            usleep(20000);
        EPT_OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, op, c, &rq));
        EPT_OK(MPI_Op_free(&op));
        EPT_CHECK(op == MPI_OP_NULL, "MPI_Op_free left the handle set");
        EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        EPT_CHECK(sum == s * (s + 1) / 2, "Iallreduce with a freed user operation: %d, expected %d", sum,
                  s * (s + 1) / 2);
        /* Irecv into a vector type freed before the message is sent. */
        int from = (r + s - 1) % s, to = (r + 1) % s;
        EPT_OK(MPI_Type_vector(NV, 2, 3, MPI_INT, &t));
        EPT_OK(MPI_Type_commit(&t));
        for (int i = 0; i < 3 * NV + 2; i++)
            buf[i] = -4;
        EPT_OK(MPI_Irecv(buf, 1, t, from, 77, c, &rq));
        EPT_OK(MPI_Type_free(&t));
        EPT_CHECK(t == MPI_DATATYPE_NULL, "MPI_Type_free left the handle set");
        EPT_OK(MPI_Barrier(c)); /* every receiver's type is freed before any send */
        for (int i = 0; i < 2 * NV; i++)
            mine[i] = r * 10000 + i;
        EPT_OK(MPI_Send(mine, 2 * NV, MPI_INT, to, 77, c));
        EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int i = 0; i < 3 * NV + 2; i++) {
            int w = i % 3 != 2 && i < 3 * NV ? from * 10000 + 2 * (i / 3) + i % 3 : -4;
            EPT_CHECK(buf[i] == w, "Irecv into a freed vector type: int %d is %d, expected %d", i, buf[i], w);
        }
    }
    free(big);
}

static void tests(MPI_Comm c, int r, int s) { t_type_lifetime(c, r, s); }

int main(int argc, char **argv) { return coll_nb_main(argc, argv, tests); }
