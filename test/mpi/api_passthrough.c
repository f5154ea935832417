/* Pass-through: a plain MPI program (no world mode, no endpoints) with
 * libepmpi.so preloaded runs exactly as under MPICH; classic communicators
 * are untouched.  Results are checked against values computed here and,
 * where MPICH can answer, against the PMPI_ call itself:
 * sends and receives with MPI_ANY_SOURCE / MPI_ANY_TAG (status, count),
 * Probe / Iprobe, Ssend, Bsend, persistent requests, Sendrecv_replace,
 * Isend / Irecv / Waitall of small and 1 MiB messages, Comm_split,
 * Comm_dup / compare / free, names, attributes (MPI_TAG_UB is MPICH's),
 * Bcast / Reduce / Allreduce / Gather / Allgather / Alltoall / Scan,
 * Cart_create / Cart_shift, Win_create with MPI_Put and MPI_Win_fence,
 * Pack / Unpack, errors (MPICH's codes and classes) and user error handlers
 * on classic communicators, which receive the classic handle. */
#include "eptest.h"

#include <unistd.h>

/* Handles MPICH makes are never of kind 0 (bits 31-30), which epmpi's are. */
#define IS_MPI_HANDLE(h) (!EPT_IS_EP_HANDLE(h))

static MPI_Comm eh_got = MPI_COMM_NULL;
static int eh_code = -1;

static void classic_handler(MPI_Comm *comm, int *code, ...)
{
    eh_got = *comm;
    eh_code = *code;
}

int main(int argc, char **argv)
{
    int rank, size, prank, psize;
    if (ept_world_endpoints() > 0) {
        fprintf(stderr, "skip: runs without world mode\n");
        return 77;
    }
    (void)argv;
    (void)argc;
    MPI_Init(&argc, &argv);
    EPT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    EPT_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    PMPI_Comm_rank(MPI_COMM_WORLD, &prank);
    PMPI_Comm_size(MPI_COMM_WORLD, &psize);
    EPT_CHECK(rank == prank && size == psize, "rank %d size %d, MPICH says %d of %d", rank, size, prank, psize);
    EPT_CHECK(size >= 2, "needs at least 2 processes");
    const char *pmi_rank = getenv("PMI_RANK");
    EPT_CHECK(!pmi_rank || atoi(pmi_rank) == rank, "PMI_RANK %s, rank %d", pmi_rank, rank);

    /* ---- wildcard receives ---- */
    if (rank == 0) {
        int seen = 0;
        for (int i = 1; i < size; i++) {
            int v[4] = {-1, -1, -1, -1}, cnt = -1;
            MPI_Status st;
            EPT_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            EPT_OK(MPI_Get_count(&st, MPI_INT, &cnt));
            EPT_CHECK(cnt == st.MPI_SOURCE % 4 + 1, "probe: count %d from %d", cnt, st.MPI_SOURCE);
            EPT_OK(MPI_Recv(v, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            EPT_OK(MPI_Get_count(&st, MPI_INT, &cnt));
            EPT_CHECK(st.MPI_TAG == 100 + st.MPI_SOURCE && cnt == st.MPI_SOURCE % 4 + 1 && v[0] == st.MPI_SOURCE * 7,
                      "wildcard receive: source %d tag %d count %d value %d", st.MPI_SOURCE, st.MPI_TAG, cnt, v[0]);
            seen |= 1 << st.MPI_SOURCE;
        }
        EPT_CHECK(seen == ((1 << size) - 2), "senders seen: 0x%x", seen);
    } else {
        int v[4] = {rank * 7, rank * 7, rank * 7, rank * 7};
        EPT_OK(MPI_Send(v, rank % 4 + 1, MPI_INT, 0, 100 + rank, MPI_COMM_WORLD));
    }
    /* Rank 0's wildcards must see only those messages. */
    EPT_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- ring: Isend / Irecv / Waitall, small and 1 MiB ---- */
    {
        const int big = 1 << 18; /* ints: 1 MiB */
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        int *bo = malloc(sizeof(int) * big), *bi = malloc(sizeof(int) * big), so = rank, si = -1;
        MPI_Request rq[4];
        MPI_Status sts[4];
        EPT_CHECK(bo && bi, "out of memory");
        for (int i = 0; i < big; i++)
            bo[i] = rank * 1000 + i;
        EPT_OK(MPI_Irecv(&si, 1, MPI_INT, from, 1, MPI_COMM_WORLD, &rq[0]));
        EPT_OK(MPI_Irecv(bi, big, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &rq[1]));
        EPT_OK(MPI_Isend(&so, 1, MPI_INT, to, 1, MPI_COMM_WORLD, &rq[2]));
        EPT_OK(MPI_Isend(bo, big, MPI_INT, to, 2, MPI_COMM_WORLD, &rq[3]));
        for (int k = 0; k < 4; k++)
            EPT_CHECK(IS_MPI_HANDLE(rq[k]), "request " EPT_HFMT " is not the MPI's handle", EPT_HARG(rq[k]));
        EPT_OK(MPI_Waitall(4, rq, sts));
        EPT_CHECK(si == from && sts[1].MPI_SOURCE == from, "ring: %d from %d", si, sts[1].MPI_SOURCE);
        for (int i = 0; i < big; i++)
            if (bi[i] != from * 1000 + i)
                EPT_CHECK(0, "ring 1 MiB: element %d is %d", i, bi[i]);
        /* Ssend, Sendrecv_replace, Iprobe. */
        int x = rank, flag = 0;
        EPT_OK(MPI_Sendrecv_replace(&x, 1, MPI_INT, to, 3, from, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        EPT_CHECK(x == from, "sendrecv_replace: %d", x);
        MPI_Request sr;
        EPT_OK(MPI_Issend(&so, 1, MPI_INT, to, 4, MPI_COMM_WORLD, &sr));
        while (!flag)
            EPT_OK(MPI_Iprobe(from, 4, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        EPT_OK(MPI_Recv(&si, 1, MPI_INT, from, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        EPT_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        /* Buffered send. */
        int bsz = MPI_BSEND_OVERHEAD + 64;
        char *bbuf = malloc((size_t)bsz);
        EPT_OK(MPI_Buffer_attach(bbuf, bsz));
        EPT_OK(MPI_Bsend(&so, 1, MPI_INT, to, 5, MPI_COMM_WORLD));
        EPT_OK(MPI_Recv(&si, 1, MPI_INT, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        EPT_CHECK(si == from, "bsend: %d", si);
        void *det;
        EPT_OK(MPI_Buffer_detach(&det, &bsz));
        free(bbuf);
        /* Persistent requests, started three times. */
        MPI_Request pr[2];
        int pv = 0, pin = -1;
        EPT_OK(MPI_Send_init(&pv, 1, MPI_INT, to, 6, MPI_COMM_WORLD, &pr[0]));
        EPT_OK(MPI_Recv_init(&pin, 1, MPI_INT, from, 6, MPI_COMM_WORLD, &pr[1]));
        for (int k = 0; k < 3; k++) {
            pv = rank * 10 + k;
            EPT_OK(MPI_Startall(2, pr));
            EPT_OK(MPI_Waitall(2, pr, sts));
            EPT_CHECK(pin == from * 10 + k, "persistent round %d: %d", k, pin);
        }
        EPT_OK(MPI_Request_free(&pr[0]));
        EPT_OK(MPI_Request_free(&pr[1]));
        free(bo);
        free(bi);
    }

    /* ---- communicators ---- */
    {
        MPI_Comm dup, half;
        int res = -1, pres = -1, hr, hs, sum = -1;
        EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        EPT_CHECK(IS_MPI_HANDLE(dup), "dup " EPT_HFMT " is not the MPI's handle", EPT_HARG(dup));
        EPT_OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
        PMPI_Comm_compare(MPI_COMM_WORLD, dup, &pres);
        EPT_CHECK(res == MPI_CONGRUENT && res == pres, "compare world/dup %d (MPICH %d)", res, pres);
        EPT_OK(MPI_Comm_compare(dup, dup, &res));
        EPT_CHECK(res == MPI_IDENT, "compare dup/dup %d", res);
        EPT_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
        EPT_OK(MPI_Comm_rank(half, &hr));
        EPT_OK(MPI_Comm_size(half, &hs));
        int want_hs = (size + 1 - rank % 2) / 2;
        /* key -rank: ranks in reverse order within each half. */
        int want_hr = want_hs - 1 - rank / 2;
        EPT_CHECK(hs == want_hs && hr == want_hr, "split: rank %d of %d, expected %d of %d", hr, hs, want_hr, want_hs);
        EPT_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half));
        int want_sum = 0;
        for (int q = rank % 2; q < size; q += 2)
            want_sum += q;
        EPT_CHECK(sum == want_sum, "allreduce on the split half: %d, expected %d", sum, want_sum);
        EPT_OK(MPI_Comm_compare(MPI_COMM_WORLD, half, &res));
        EPT_CHECK(res == MPI_UNEQUAL, "compare world/half %d", res);
        int inter = -1;
        EPT_OK(MPI_Comm_test_inter(half, &inter));
        EPT_CHECK(inter == 0, "test_inter %d", inter);
        /* Names and attributes. */
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        EPT_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
        EPT_CHECK(!strcmp(name, "MPI_COMM_WORLD"), "world name '%s'", name);
        EPT_OK(MPI_Comm_set_name(dup, "my dup"));
        EPT_OK(MPI_Comm_get_name(dup, name, &len));
        EPT_CHECK(!strcmp(name, "my dup") && len == 6, "dup name '%s'", name);
        int *ub, *pub, flag = 0, pflag = 0;
        EPT_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
        PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &pub, &pflag);
        EPT_CHECK(flag && pflag && *ub == *pub, "MPI_TAG_UB %d, MPICH's %d", flag ? *ub : -1, pflag ? *pub : -1);
        /* User attributes on a classic communicator work as in MPICH. */
        int key, val = 77, *got = NULL;
        EPT_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
        EPT_OK(MPI_Comm_set_attr(dup, key, &val));
        EPT_OK(MPI_Comm_get_attr(dup, key, &got, &flag));
        EPT_CHECK(flag && got == &val, "user attribute: flag %d", flag);
        EPT_OK(MPI_Comm_delete_attr(dup, key));
        EPT_OK(MPI_Comm_free_keyval(&key));
        /* Groups. */
        MPI_Group wg, hg;
        int tr = -1;
        EPT_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        EPT_OK(MPI_Comm_group(half, &hg));
        EPT_OK(MPI_Group_translate_ranks(hg, 1, &hr, wg, &tr));
        EPT_CHECK(tr == rank, "translate_ranks: %d", tr);
        EPT_OK(MPI_Group_free(&wg));
        EPT_OK(MPI_Group_free(&hg));
        EPT_OK(MPI_Comm_free(&half));
        EPT_OK(MPI_Comm_free(&dup));
        EPT_CHECK(dup == MPI_COMM_NULL, "free did not null the handle");
    }

    /* ---- collectives ---- */
    {
        int root = size - 1, x = rank + 1, sum = -1, *all = malloc(sizeof(int) * (size_t)size * 2);
        int *a2a_in = malloc(sizeof(int) * (size_t)size), *a2a_out = malloc(sizeof(int) * (size_t)size);
        EPT_CHECK(all && a2a_in && a2a_out, "out of memory");
        int b = rank == 1 ? 4242 : -1;
        EPT_OK(MPI_Bcast(&b, 1, MPI_INT, 1, MPI_COMM_WORLD));
        EPT_CHECK(b == 4242, "bcast: %d", b);
        EPT_OK(MPI_Reduce(&x, &sum, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
        if (rank == root)
            EPT_CHECK(sum == size * (size + 1) / 2, "reduce: %d", sum);
        EPT_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_PROD, MPI_COMM_WORLD));
        int f = 1;
        for (int q = 1; q <= size; q++)
            f *= q;
        EPT_CHECK(sum == f, "allreduce prod: %d", sum);
        EPT_OK(MPI_Gather(&x, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if (rank == 0)
            for (int q = 0; q < size; q++)
                EPT_CHECK(all[q] == q + 1, "gather slot %d: %d", q, all[q]);
        int two[2] = {rank, -rank};
        EPT_OK(MPI_Allgather(two, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++)
            EPT_CHECK(all[2 * q] == q && all[2 * q + 1] == -q, "allgather slot %d", q);
        for (int q = 0; q < size; q++)
            a2a_in[q] = rank * 100 + q;
        EPT_OK(MPI_Alltoall(a2a_in, 1, MPI_INT, a2a_out, 1, MPI_INT, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++)
            EPT_CHECK(a2a_out[q] == q * 100 + rank, "alltoall from %d: %d", q, a2a_out[q]);
        EPT_OK(MPI_Scan(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EPT_CHECK(sum == (rank + 1) * (rank + 2) / 2, "scan: %d", sum);
        EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
        free(all);
        free(a2a_in);
        free(a2a_out);
    }

    /* ---- topology ---- */
    {
        MPI_Comm cart;
        int dims[1] = {size}, periods[1] = {1}, src = -1, dst = -1, cr = -1, got = -1;
        EPT_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
        EPT_OK(MPI_Comm_rank(cart, &cr));
        EPT_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
        EPT_CHECK(cr == rank && src == (rank + size - 1) % size && dst == (rank + 1) % size,
                  "cart: rank %d shift %d -> %d", cr, src, dst);
        EPT_OK(MPI_Sendrecv(&cr, 1, MPI_INT, dst, 0, &got, 1, MPI_INT, src, 0, cart, MPI_STATUS_IGNORE));
        EPT_CHECK(got == src, "cart sendrecv: %d", got);
        int topo = -1;
        EPT_OK(MPI_Topo_test(cart, &topo));
        EPT_CHECK(topo == MPI_CART, "topo_test %d", topo);
        EPT_OK(MPI_Comm_free(&cart));
    }

    /* ---- one-sided ---- */
    {
        int *wbuf = calloc((size_t)size, sizeof(int));
        MPI_Win win;
        EPT_CHECK(wbuf != NULL, "out of memory");
        EPT_OK(MPI_Win_create(wbuf, (MPI_Aint)(sizeof(int) * (size_t)size), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                              &win));
        EPT_CHECK(IS_MPI_HANDLE(win), "window " EPT_HFMT " is not the MPI's handle", EPT_HARG(win));
        int v = rank + 1;
        EPT_OK(MPI_Win_fence(0, win));
        for (int q = 0; q < size; q++)
            EPT_OK(MPI_Put(&v, 1, MPI_INT, q, rank, 1, MPI_INT, win));
        EPT_OK(MPI_Win_fence(0, win));
        for (int q = 0; q < size; q++)
            EPT_CHECK(wbuf[q] == q + 1, "window slot %d: %d", q, wbuf[q]);
        int g = -1;
        EPT_OK(MPI_Get(&g, 1, MPI_INT, (rank + 1) % size, rank, 1, MPI_INT, win));
        EPT_OK(MPI_Win_fence(0, win));
        EPT_CHECK(g == rank + 1, "get: %d", g);
        EPT_OK(MPI_Win_free(&win));
        free(wbuf);
    }

    /* ---- pack / unpack ---- */
    {
        int in[3] = {1, 2, 3}, out[3] = {0}, pos = 0, psz = 0;
        char packed[64];
        EPT_OK(MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &psz));
        EPT_CHECK(psz >= 12 && psz <= 64, "pack size %d", psz);
        EPT_OK(MPI_Pack(in, 3, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD));
        int upos = 0;
        EPT_OK(MPI_Unpack(packed, sizeof packed, &upos, out, 3, MPI_INT, MPI_COMM_WORLD));
        EPT_CHECK(out[0] == 1 && out[2] == 3 && upos == pos, "unpack");
    }

    /* ---- errors: MPICH's own, through the classic handlers ---- */
    {
        MPI_Comm d;
        int v = 0, cls = -1, len;
        char msg[MPI_MAX_ERROR_STRING];
        EPT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        EPT_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        EPT_OK(MPI_Comm_get_errhandler(d, &eh));
        EPT_CHECK(eh == MPI_ERRORS_RETURN, "get_errhandler " EPT_HFMT, EPT_HARG(eh));
        int rc = MPI_Send(&v, 1, MPI_INT, size + 2, 0, d);
        EPT_CHECK(rc != MPI_SUCCESS, "MPI_Send to a bad rank succeeded");
        EPT_OK(MPI_Error_class(rc, &cls));
        EPT_OK(MPI_Error_string(rc, msg, &len));
        int pcls = -1;
        PMPI_Error_class(rc, &pcls);
        EPT_CHECK(cls == MPI_ERR_RANK && pcls == cls && len > 0, "bad rank on a classic comm: class %d (MPICH %d): %s",
                  cls, pcls, msg);
        rc = MPI_Bcast(&v, 1, MPI_INT, size, d);
        EPT_OK(MPI_Error_class(rc, &cls));
        EPT_CHECK(cls == MPI_ERR_ROOT, "bad root on a classic comm: class %d", cls);
        /* A user handler receives the classic handle. */
        MPI_Errhandler ueh;
        EPT_OK(MPI_Comm_create_errhandler(classic_handler, &ueh));
        EPT_OK(MPI_Comm_set_errhandler(d, ueh));
        EPT_OK(MPI_Comm_call_errhandler(d, MPI_ERR_OTHER));
        EPT_CHECK(eh_got == d && eh_code == MPI_ERR_OTHER, "user handler got " EPT_HFMT " / %d", EPT_HARG(eh_got),
                  eh_code);
        eh_got = MPI_COMM_NULL;
        rc = MPI_Recv(&v, 1, MPI_INT, 0, -5, d, MPI_STATUS_IGNORE);
        EPT_OK(MPI_Error_class(rc, &cls));
        EPT_CHECK(eh_got == d && cls == MPI_ERR_TAG, "bad tag with a user handler: handle " EPT_HFMT " class %d",
                  EPT_HARG(eh_got), cls);
        EPT_OK(MPI_Errhandler_free(&ueh));
        EPT_OK(MPI_Comm_free(&d));
    }

    EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
