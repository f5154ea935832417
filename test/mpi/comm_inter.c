/* Intercommunicators between groups of endpoints whose processes overlap.
 * On the test communicator (MPI_COMM_WORLD in world mode, the endpoints of
 * argv[1] otherwise) every rank takes a colour, the colours split it into
 * two groups, and MPI_Intercomm_create joins them:
 *  - by rank parity (with T > 1 every process is in both groups and both
 *    leaders live in process 0), peer = the test communicator (endpoints);
 *  - by process parity (groups of whole processes), peer = the same;
 *  - by rank parity again with the classic MPI_COMM_WORLD as peer (explicit
 *    shapes only: there the leaders are named by process).
 * On each: the queries (test_inter, sizes, ranks, the remote group
 * translated back), traffic from every rank to every remote rank received
 * with wildcards (status, payload and per-pair order checked), MPI_Comm_dup
 * of the intercommunicator with traffic on it, and MPI_Intercomm_merge
 * with the low group first, reversed, and with equal high values,
 * MPI_Comm_split_type; the calls intercommunicators refuse (a bad remote
 * rank or root, MPI_IN_PLACE, scans, and intercommunicator calls on an
 * intracommunicator) give the right error class naming the call. */
#include "eptest.h"

#include <sys/types.h>
#include <unistd.h>

#define NMSG 3

/* Each rank's process as a small number (processes ordered by pid). */
static void process_ids(MPI_Comm comm, int size, int *proc)
{
    long mine = (long)getpid(), *all = malloc(sizeof *all * (size_t)size);
    EPT_CHECK(all, "out of memory");
    EPT_OK(MPI_Allgather(&mine, 1, MPI_LONG, all, 1, MPI_LONG, comm));
    for (int r = 0; r < size; r++) {
        int k = 0;
        for (int s = 0; s < size; s++) /* processes with a smaller pid, counted once each */
            if (all[s] < all[r]) {
                int seen = 0;
                for (int q = 0; q < s; q++)
                    seen |= all[q] == all[s];
                k += !seen;
            }
        proc[r] = k;
    }
    free(all);
}

typedef struct intercomm_case {
    const char *name;
    int *color; /* [size] */
    int classic_peer;
} intercomm_case_t;

static void traffic(MPI_Comm inter, int lrank, int lsize, int rsize, const char *what)
{
    /* Every local rank sends NMSG messages to every remote rank. */
    int n = rsize * NMSG;
    int(*out)[3] = malloc(sizeof *out * (size_t)(n > 0 ? n : 1));
    MPI_Request *rq = malloc(sizeof *rq * (size_t)(n > 0 ? n : 1));
    (void)lsize;
    EPT_CHECK(out && rq, "out of memory");
    for (int r = 0, k = 0; r < rsize; r++)
        for (int m = 0; m < NMSG; m++, k++) {
            out[k][0] = lrank;
            out[k][1] = r;
            out[k][2] = m;
            EPT_OK(MPI_Isend(out[k], 3, MPI_INT, r, 100 + lrank, inter, &rq[k]));
        }
    /* Every remote rank sends NMSG to each of us. */
    int *next = calloc(rsize > 0 ? (size_t)rsize : 1, sizeof *next);
    EPT_CHECK(next, "out of memory");
    for (int k = 0; k < rsize * NMSG; k++) {
        int v[3];
        MPI_Status st;
        EPT_OK(MPI_Recv(v, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &st));
        EPT_CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize, "%s: source %d of %d", what, st.MPI_SOURCE, rsize);
        EPT_CHECK(st.MPI_TAG == 100 + st.MPI_SOURCE, "%s: tag %d from %d", what, st.MPI_TAG, st.MPI_SOURCE);
        EPT_CHECK(v[0] == st.MPI_SOURCE && v[1] == lrank, "%s: payload (%d,%d) from %d at %d", what, v[0], v[1],
                  st.MPI_SOURCE, lrank);
        EPT_CHECK(v[2] == next[st.MPI_SOURCE]++, "%s: message %d from %d out of order", what, v[2], st.MPI_SOURCE);
    }
    EPT_OK(MPI_Waitall(n, rq, statuses_ignore()));
    free(next);
    free(out);
    free(rq);
}

/* Reduce_scatter(_block) across the groups: the other group's vectors are
 * summed and scattered here by this group's counts.  Both groups' totals
 * are 2 * lsize * rsize, as MPI requires them to agree; the v form gives
 * local rank 0 less and the last rank more.  Element e of rank r's vector
 * is 100 * r + e. */
static void reduce_scatter(MPI_Comm inter, int rank, int lrank, int lsize, int rsize, const int *rem, const char *what)
{
    int total = 2 * lsize * rsize, *in = malloc(sizeof(int) * (size_t)total);
    int *counts = malloc(sizeof(int) * (size_t)lsize), *out = malloc(sizeof(int) * (size_t)(total + 1));
    EPT_CHECK(in && counts && out, "out of memory");
    for (int e = 0; e < total; e++)
        in[e] = 100 * rank + e;
    for (int i = 0; i < lsize; i++)
        counts[i] = 2 * rsize;
    if (lsize > 1) {
        counts[0] -= rsize;
        counts[lsize - 1] += rsize;
    }
    int off = 0, sum = 0;
    for (int i = 0; i < lrank; i++)
        off += counts[i];
    for (int k = 0; k < rsize; k++)
        sum += 100 * rem[k];
    for (int form = 0; form < 3; form++) {
        MPI_Request rq;
        int n = form == 1 ? counts[lrank] : 2 * rsize, first = form == 1 ? off : 2 * rsize * lrank;
        for (int e = 0; e <= total; e++)
            out[e] = -1;
        if (form == 0)
            EPT_OK(MPI_Reduce_scatter_block(in, out, 2 * rsize, MPI_INT, MPI_SUM, inter));
        else if (form == 1)
            EPT_OK(MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, inter));
        else {
            EPT_OK(MPI_Ireduce_scatter_block(in, out, 2 * rsize, MPI_INT, MPI_SUM, inter, &rq));
            EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        for (int e = 0; e < n; e++)
            EPT_CHECK(out[e] == sum + rsize * (first + e), "%s: reduce_scatter form %d [%d] = %d, expected %d", what,
                      form, e, out[e], sum + rsize * (first + e));
        EPT_CHECK(out[n] == -1, "%s: reduce_scatter form %d wrote past its block", what, form);
    }
    free(in);
    free(counts);
    free(out);
}

/* Collectives across the groups.  Each rank contributes its rank in the
 * test communicator, `rank`; rem[] lists the remote group's ranks there. */
static void collectives(MPI_Comm inter, int rank, int mine, int lrank, int lsize, int rsize, const int *rem,
                        const char *what)
{
    int v = -1, sum = 0, *all = malloc(sizeof *all * (size_t)rsize * 2), *mineall = malloc(sizeof(int) * (size_t)rsize);
    EPT_CHECK(all && mineall, "out of memory");
    for (int i = 0; i < rsize; i++)
        sum += rem[i];
    EPT_OK(MPI_Barrier(inter));
    /* Bcast from local rank 0 of colour 0 to the other group. */
    int root = mine == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    v = mine == 0 && lrank == 0 ? 4242 + rank : -1;
    EPT_OK(MPI_Bcast(&v, 1, MPI_INT, root, inter));
    if (mine != 0)
        EPT_CHECK(v == 4242 + rem[0], "%s: bcast got %d, expected %d", what, v, 4242 + rem[0]);
    /* Allreduce: the other group's sum; Iallreduce the same. */
    EPT_OK(MPI_Allreduce(&rank, &v, 1, MPI_INT, MPI_SUM, inter));
    EPT_CHECK(v == sum, "%s: allreduce %d, expected %d", what, v, sum);
    MPI_Request rq;
    v = -1;
    EPT_OK(MPI_Iallreduce(&rank, &v, 1, MPI_INT, MPI_MAX, inter, &rq));
    EPT_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    EPT_CHECK(v == rem[rsize - 1], "%s: iallreduce max %d, expected %d", what, v, rem[rsize - 1]);
    /* Reduce to local rank 0 of colour 1. */
    root = mine == 1 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    v = -1;
    EPT_OK(MPI_Reduce(&rank, &v, 1, MPI_INT, MPI_SUM, root, inter));
    if (root == MPI_ROOT)
        EPT_CHECK(v == sum, "%s: reduce %d, expected %d", what, v, sum);
    /* Allgather: the other group's ranks, in its rank order. */
    EPT_OK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, inter));
    for (int i = 0; i < rsize; i++)
        EPT_CHECK(all[i] == rem[i], "%s: allgather[%d] = %d, expected %d", what, i, all[i], rem[i]);
    /* Gather at local rank 0 of colour 0, scatter back from it. */
    root = mine == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    EPT_OK(MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, root, inter));
    if (root == MPI_ROOT)
        for (int i = 0; i < rsize; i++)
            EPT_CHECK(all[i] == rem[i], "%s: gather[%d] = %d, expected %d", what, i, all[i], rem[i]);
    for (int i = 0; i < rsize; i++)
        mineall[i] = 1000 * rank + i;
    v = -1;
    EPT_OK(MPI_Scatter(mineall, 1, MPI_INT, &v, 1, MPI_INT, root, inter));
    if (mine != 0)
        EPT_CHECK(v == 1000 * rem[0] + lrank, "%s: scatter got %d", what, v);
    /* Alltoall: block i to remote rank i. */
    EPT_OK(MPI_Alltoall(mineall, 1, MPI_INT, all, 1, MPI_INT, inter));
    for (int i = 0; i < rsize; i++)
        EPT_CHECK(all[i] == 1000 * rem[i] + lrank, "%s: alltoall[%d] = %d", what, i, all[i]);
    reduce_scatter(inter, rank, lrank, lsize, rsize, rem, what);
    free(all);
    free(mineall);
}

/* rc must be an error of class cls whose message names call. */
static void expect_error(int rc, int cls, const char *call, const char *what)
{
    int c = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    EPT_CHECK(rc != MPI_SUCCESS, "%s: %s succeeded", what, call);
    MPI_Error_class(rc, &c);
    MPI_Error_string(rc, msg, &len);
    EPT_CHECK(c == cls, "%s: %s gave class %d, expected %d ('%s')", what, call, c, cls, msg);
    EPT_CHECK(strstr(msg, call) != NULL, "%s: the message '%s' does not name %s", what, msg, call);
}

/* What intercommunicators refuse, each with a clear error (MPI_ERRORS_RETURN
 * on the intercommunicator and the local communicator). */
static void refusals(MPI_Comm inter, MPI_Comm local, int rsize, const char *what)
{
    int x = 1, y[2], n;
    MPI_Comm nc;
    EPT_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    EPT_OK(MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN));
    expect_error(MPI_Send(&x, 1, MPI_INT, rsize, 0, inter), MPI_ERR_RANK, "MPI_Send", what);
    expect_error(MPI_Bcast(&x, 1, MPI_INT, rsize, inter), MPI_ERR_ROOT, "MPI_Bcast", what);
    expect_error(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER, "MPI_Allreduce", what);
    expect_error(MPI_Reduce_scatter_block(MPI_IN_PLACE, y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER,
                 "MPI_Reduce_scatter_block", what);
    expect_error(MPI_Scan(&x, y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM, "MPI_Scan", what);
    expect_error(MPI_Comm_remote_size(local, &n), MPI_ERR_COMM, "MPI_Comm_remote_size", what);
    expect_error(MPI_Intercomm_merge(local, 0, &nc), MPI_ERR_COMM, "MPI_Intercomm_merge", what);
    expect_error(MPI_Intercomm_create(inter, 0, inter, 0, 1, &nc), MPI_ERR_COMM, "MPI_Intercomm_create", what);
    EPT_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_ARE_FATAL));
    EPT_OK(MPI_Comm_set_errhandler(local, MPI_ERRORS_ARE_FATAL));
}

static void one_case(MPI_Comm comm, int rank, int size, const intercomm_case_t *ic)
{
    const int *color = ic->color;
    int mine = color[rank], lsize = 0, rsize = 0, lrank = 0, remote_leader = -1;
    for (int r = 0; r < size; r++) {
        if (color[r] == mine) {
            lrank += r < rank;
            lsize++;
        } else {
            if (remote_leader < 0)
                remote_leader = r;
            rsize++;
        }
    }
    if (rsize == 0 || lsize == 0)
        return; /* one group only in this shape */
    PHASE(ic->name);
    MPI_Comm local, inter;
    EPT_OK(MPI_Comm_split(comm, mine, rank, &local));
    MPI_Comm peer = comm;
    if (ic->classic_peer) {
        peer = MPI_COMM_WORLD; /* classic: ranks are processes */
        int wr;
        EPT_OK(PMPI_Comm_rank(MPI_COMM_WORLD, &wr));
        int *wranks = malloc(sizeof *wranks * (size_t)size);
        EPT_CHECK(wranks, "out of memory");
        EPT_OK(MPI_Allgather(&wr, 1, MPI_INT, wranks, 1, MPI_INT, comm));
        remote_leader = wranks[remote_leader];
        free(wranks);
    }
    EPT_OK(MPI_Intercomm_create(local, 0, peer, remote_leader, 77, &inter));

    int flag = 0, n = -1, r = -1;
    EPT_OK(MPI_Comm_test_inter(inter, &flag));
    EPT_CHECK(flag, "%s: MPI_Comm_test_inter says intra", ic->name);
    EPT_OK(MPI_Comm_size(inter, &n));
    EPT_CHECK(n == lsize, "%s: size %d, expected %d", ic->name, n, lsize);
    EPT_OK(MPI_Comm_remote_size(inter, &n));
    EPT_CHECK(n == rsize, "%s: remote size %d, expected %d", ic->name, n, rsize);
    EPT_OK(MPI_Comm_rank(inter, &r));
    EPT_CHECK(r == lrank, "%s: rank %d, expected %d", ic->name, r, lrank);

    /* The remote group, translated back to the test communicator. */
    MPI_Group rg, cg;
    int *idx = malloc(sizeof *idx * (size_t)rsize), *got = malloc(sizeof *got * (size_t)rsize);
    EPT_CHECK(idx && got, "out of memory");
    EPT_OK(MPI_Comm_remote_group(inter, &rg));
    EPT_OK(MPI_Comm_group(comm, &cg));
    for (int i = 0; i < rsize; i++)
        idx[i] = i;
    EPT_OK(MPI_Group_translate_ranks(rg, rsize, idx, cg, got));
    for (int i = 0, k = 0; i < size; i++)
        if (color[i] != mine) {
            EPT_CHECK(got[k] == i, "%s: remote rank %d is rank %d of the communicator, expected %d", ic->name, k,
                      got[k], i);
            k++;
        }
    EPT_OK(MPI_Group_free(&rg));
    EPT_OK(MPI_Group_free(&cg));
    free(idx);
    free(got);

    traffic(inter, lrank, lsize, rsize, ic->name);
    int *rem = malloc(sizeof *rem * (size_t)rsize);
    EPT_CHECK(rem, "out of memory");
    for (int i = 0, k = 0; i < size; i++)
        if (color[i] != mine)
            rem[k++] = i;
    collectives(inter, rank, mine, lrank, lsize, rsize, rem, ic->name);
    refusals(inter, local, rsize, ic->name);
    free(rem);
    MPI_Comm dup;
    EPT_OK(MPI_Comm_dup(inter, &dup));
    EPT_OK(MPI_Comm_test_inter(dup, &flag));
    EPT_CHECK(flag, "%s: the dup is not an intercommunicator", ic->name);
    traffic(dup, lrank, lsize, rsize, "dup");
    EPT_OK(MPI_Comm_free(&dup));
    /* Split by node: an intercommunicator of the ranks of both groups on
     * this rank's host, or MPI_COMM_NULL where the other group has none. */
    ept_host_t *host = ept_host_names(comm);
    int here_l = 0, here_r = 0, here_lrank = 0;
    for (int i = 0; i < size; i++)
        if (!strcmp(host[i], host[rank])) {
            here_l += color[i] == mine;
            here_r += color[i] != mine;
            here_lrank += color[i] == mine && i < rank;
        }
    free(host);
    EPT_OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &dup));
    if (!here_r) {
        EPT_CHECK(dup == MPI_COMM_NULL,
                  "%s: split_type gave a communicator, but no rank of the other group is on "
                  "this host",
                  ic->name);
    } else {
        EPT_OK(MPI_Comm_test_inter(dup, &flag));
        EPT_OK(MPI_Comm_remote_size(dup, &n));
        EPT_CHECK(flag && n == here_r, "%s: split_type gave inter %d, remote size %d, expected %d", ic->name, flag, n,
                  here_r);
        EPT_OK(MPI_Comm_size(dup, &n));
        EPT_OK(MPI_Comm_rank(dup, &r));
        EPT_CHECK(n == here_l && r == here_lrank, "%s: split_type: rank %d of %d, expected %d of %d", ic->name, r, n,
                  here_lrank, here_l);
        traffic(dup, here_lrank, here_l, here_r, "split_type");
        EPT_OK(MPI_Comm_free(&dup));
    }

    /* Merges: colour 0 low, then colour 0 high, then equal values. */
    for (int variant = 0; variant < 3; variant++) {
        int high = variant == 0 ? mine != 0 : variant == 1 ? mine == 0 : 0;
        MPI_Comm merged;
        EPT_OK(MPI_Intercomm_merge(inter, high, &merged));
        EPT_OK(MPI_Comm_test_inter(merged, &flag));
        EPT_CHECK(!flag, "%s: the merge is an intercommunicator", ic->name);
        EPT_OK(MPI_Comm_size(merged, &n));
        EPT_CHECK(n == size, "%s: merged size %d, expected %d", ic->name, n, size);
        EPT_OK(MPI_Comm_rank(merged, &r));
        /* Everyone's (colour, local rank) in merged order. */
        int pairs[2] = {mine, lrank}, *all = malloc(sizeof *all * 2 * (size_t)size);
        EPT_CHECK(all, "out of memory");
        EPT_OK(MPI_Allgather(pairs, 2, MPI_INT, all, 2, MPI_INT, merged));
        EPT_CHECK(all[2 * r] == mine && all[2 * r + 1] == lrank, "%s: allgather on the merge is wrong", ic->name);
        int first = all[0], nfirst = 0;
        for (int i = 0; i < size; i++)
            nfirst += all[2 * i] == first;
        EPT_CHECK(nfirst == (first == mine ? lsize : rsize), "%s merge %d: %d ranks of colour %d", ic->name, variant,
                  nfirst, first);
        if (variant == 0)
            EPT_CHECK(first == 0, "%s: merge (colour 0 low) starts with colour %d", ic->name, first);
        if (variant == 1)
            EPT_CHECK(first != 0, "%s: merge (colour 0 high) starts with colour 0", ic->name);
        for (int i = 0; i < size; i++) { /* one group, then the other, each in local order */
            int col = i < nfirst ? first : 1 - first, l = i < nfirst ? i : i - nfirst;
            EPT_CHECK(all[2 * i] == col && all[2 * i + 1] == l,
                      "%s merge %d: rank %d is (colour %d, rank %d), expected (%d, %d)", ic->name, variant, i,
                      all[2 * i], all[2 * i + 1], col, l);
        }
        free(all);
        EPT_OK(MPI_Comm_free(&merged));
    }
    EPT_OK(MPI_Comm_free(&inter));
    EPT_OK(MPI_Comm_free(&local));
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    int rank, size;
    EPT_OK(MPI_Comm_rank(comm, &rank));
    EPT_OK(MPI_Comm_size(comm, &size));
    int *proc = malloc(sizeof *proc * (size_t)size), *c1 = malloc(sizeof *c1 * (size_t)size),
        *c2 = malloc(sizeof *c2 * (size_t)size);
    EPT_CHECK(proc && c1 && c2, "out of memory");
    process_ids(comm, size, proc);
    for (int r = 0; r < size; r++) {
        c1[r] = r % 2;
        c2[r] = proc[r] % 2;
    }
    intercomm_case_t cases[] = {{"rank parity", c1, 0}, {"process parity", c2, 0}, {"classic peer", c1, 1}};
    int ncases = ept_world_endpoints() > 0 ? 2 : 3;
    for (int i = 0; i < ncases; i++)
        one_case(comm, rank, size, &cases[i]);
    free(proc);
    free(c1);
    free(c2);
}

int main(int argc, char **argv) { return ept_main(argc, argv, 60, body, NULL); }
