/* Errors of the non-blocking collectives (coll_nb.h), on a duplicate with
 * MPI_ERRORS_RETURN: each of the seventeen with a NULL request pointer
 * gives MPI_ERR_REQUEST naming the call; then MPI_Cancel and
 * MPI_Request_free of a collective request (erroneous in MPI) give
 * MPI_ERR_REQUEST naming the call; the duplicate still works afterwards. */
#include "coll_nb.h"

/* ---- errors ------------------------------------------------------------- */

static void t_errors(MPI_Comm c, int r, int s)
{
    MPI_Comm d;
    MPI_Request rq;
    int x = r, y[8] = {0}, *cnt = calloc((size_t)s, sizeof(int)), *dsp = calloc((size_t)s, sizeof(int));
    MPI_Datatype *ty = malloc(sizeof *ty * (size_t)s);
    EPT_CHECK(cnt && dsp && ty, "out of memory");
    for (int q = 0; q < s; q++)
        ty[q] = MPI_INT;
    PHASE("errors: NULL request pointers");
    EPT_OK(MPI_Comm_dup(c, &d));
    EPT_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    expect_error(MPI_Ibarrier(d, NULL), MPI_ERR_REQUEST, "MPI_Ibarrier", r);
    expect_error(MPI_Ibcast(&x, 1, MPI_INT, 0, d, NULL), MPI_ERR_REQUEST, "MPI_Ibcast", r);
    expect_error(MPI_Igather(&x, 1, MPI_INT, y, 1, MPI_INT, 0, d, NULL), MPI_ERR_REQUEST, "MPI_Igather", r);
    expect_error(MPI_Igatherv(&x, 0, MPI_INT, y, cnt, dsp, MPI_INT, 0, d, NULL), MPI_ERR_REQUEST, "MPI_Igatherv", r);
    expect_error(MPI_Iscatter(y, 1, MPI_INT, &x, 1, MPI_INT, 0, d, NULL), MPI_ERR_REQUEST, "MPI_Iscatter", r);
    expect_error(MPI_Iscatterv(y, cnt, dsp, MPI_INT, &x, 0, MPI_INT, 0, d, NULL), MPI_ERR_REQUEST, "MPI_Iscatterv", r);
    expect_error(MPI_Iallgather(&x, 0, MPI_INT, y, 0, MPI_INT, d, NULL), MPI_ERR_REQUEST, "MPI_Iallgather", r);
    expect_error(MPI_Iallgatherv(&x, 0, MPI_INT, y, cnt, dsp, MPI_INT, d, NULL), MPI_ERR_REQUEST, "MPI_Iallgatherv", r);
    expect_error(MPI_Ialltoall(y, 0, MPI_INT, y + 4, 0, MPI_INT, d, NULL), MPI_ERR_REQUEST, "MPI_Ialltoall", r);
    expect_error(MPI_Ialltoallv(y, cnt, dsp, MPI_INT, y + 4, cnt, dsp, MPI_INT, d, NULL), MPI_ERR_REQUEST,
                 "MPI_Ialltoallv", r);
    expect_error(MPI_Ialltoallw(y, cnt, dsp, ty, y + 4, cnt, dsp, ty, d, NULL), MPI_ERR_REQUEST, "MPI_Ialltoallw", r);
    expect_error(MPI_Ireduce(&x, y, 1, MPI_INT, MPI_SUM, 0, d, NULL), MPI_ERR_REQUEST, "MPI_Ireduce", r);
    expect_error(MPI_Iallreduce(&x, y, 1, MPI_INT, MPI_SUM, d, NULL), MPI_ERR_REQUEST, "MPI_Iallreduce", r);
    expect_error(MPI_Ireduce_scatter(y, &x, cnt, MPI_INT, MPI_SUM, d, NULL), MPI_ERR_REQUEST, "MPI_Ireduce_scatter", r);
    expect_error(MPI_Ireduce_scatter_block(y, &x, 0, MPI_INT, MPI_SUM, d, NULL), MPI_ERR_REQUEST,
                 "MPI_Ireduce_scatter_block", r);
    expect_error(MPI_Iscan(&x, y, 1, MPI_INT, MPI_SUM, d, NULL), MPI_ERR_REQUEST, "MPI_Iscan", r);
    expect_error(MPI_Iexscan(&x, y, 1, MPI_INT, MPI_SUM, d, NULL), MPI_ERR_REQUEST, "MPI_Iexscan", r);

    PHASE("errors: MPI_Cancel of a collective request");
    EPT_OK(MPI_Ibarrier(d, &rq));
    expect_error(MPI_Cancel(&rq), MPI_ERR_REQUEST, "MPI_Cancel", r);
    expect_error(MPI_Request_free(&rq), MPI_ERR_REQUEST, "MPI_Request_free", r);
    MPI_Status st;
    EPT_OK(MPI_Wait(&rq, &st));
    int cancelled = 1;
    EPT_OK(MPI_Test_cancelled(&st, &cancelled));
    EPT_CHECK(!cancelled, "a collective request says cancelled after MPI_Cancel");

    PHASE("errors: the communicator still works");
    int out = -1;
    EPT_OK(MPI_Iallreduce(&x, &out, 1, MPI_INT, MPI_SUM, d, &rq));
    EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    EPT_CHECK(out == s * (s - 1) / 2, "Iallreduce after the errors: %d", out);
    EPT_OK(MPI_Comm_free(&d));
    free(cnt);
    free(dsp);
    free(ty);
}

static void tests(MPI_Comm c, int r, int s) { t_errors(c, r, s); }

int main(int argc, char **argv) { return coll_nb_main(argc, argv, tests); }
