/* Collectives among the stress traffic: started (and, when blocking,
 * finished) by coll_start, results checked by coll_check. */
#include "stress.h"

static long long reduce_val(uint64_t key, int b, int i)
{
    return (long long)(hk(key, (uint64_t)b << 32 | (uint64_t)i) & 0xffffff);
}

/* Members (base ranks) whose inputs reach this rank: its communicator, or
 * the remote group of the intercommunicator. */
static int coll_inputs(const layout_t *L, int kind, int *who)
{
    int m = kind_size(L, kind, 1);
    for (int r = 0; r < m; r++)
        who[r] = kind_base(L, kind, r);
    return m;
}

static int coll_root_arg(const layout_t *L, const coll_t *c)
{
    if (c->kind != K_INTER)
        return c->kind == K_SPLIT ? c->root % L->nmem[L->color[L->me]] : c->root;
    if (L->color[L->me] != c->group)
        return c->root;
    return L->c2rank[L->me] == c->root ? MPI_ROOT : MPI_PROC_NULL;
}

/* Starts collective i: a non-blocking one joins the pending requests. */
void coll_start(rank_t *R, int i)
{
    const layout_t *L = R->L;
    const coll_t *c = &R->P->coll[i];
    MPI_Comm comm = L->comm[c->kind];
    int n = kind_size(L, c->kind, 0), me = kind_rank(L, c->kind, L->me), root = coll_root_arg(L, c);
    size_t bytes = c->op == C_BCAST || c->op == C_IBCAST ? (size_t)c->count : (size_t)c->count * sizeof(long long);
    if (c->op == C_ALLTOALLV)
        bytes = (size_t)n * 600;
    R->cbuf[i] = malloc(bytes + GUARD);
    R->cout[i] = malloc(bytes + GUARD);
    EPT_CHECK(R->cbuf[i] && R->cout[i], "out of memory");
    memset(R->cout[i], GUARD_BYTE, bytes + GUARD);
    long long *in = (long long *)R->cbuf[i], *out = (long long *)R->cout[i];
    MPI_Request q = MPI_REQUEST_NULL;
    int nb = c->op >= C_IBARRIER;
    switch (c->op) {
    case C_BARRIER:
        EPT_OK(MPI_Barrier(comm));
        break;
    case C_IBARRIER:
        EPT_OK(MPI_Ibarrier(comm, &q));
        break;
    case C_BCAST:
    case C_IBCAST: {
        int is_root = c->kind == K_INTER ? root == MPI_ROOT : me == root;
        if (is_root)
            gen(R->cout[i], bytes, c->key, 0);
        if (c->op == C_BCAST)
            EPT_OK(MPI_Bcast(R->cout[i], c->count, MPI_BYTE, root, comm));
        else
            EPT_OK(MPI_Ibcast(R->cout[i], c->count, MPI_BYTE, root, comm, &q));
        break;
    }
    case C_ALLREDUCE:
    case C_IALLREDUCE:
        for (int j = 0; j < c->count; j++)
            in[j] = reduce_val(c->key, L->me, j);
        if (c->op == C_ALLREDUCE)
            EPT_OK(MPI_Allreduce(in, out, c->count, MPI_LONG_LONG, MPI_SUM, comm));
        else
            EPT_OK(MPI_Iallreduce(in, out, c->count, MPI_LONG_LONG, MPI_SUM, comm, &q));
        break;
    case C_ALLTOALLV: {
        /* Block to rank j: hk(key, from, to) % 513 bytes at j * 600 + gap. */
        int *sc = R->cnt, *sd = R->displ, *rc = R->cnt + n, *rd = R->displ + n;
        for (int j = 0; j < n; j++) {
            int tb = kind_base(L, c->kind, j);
            sc[j] = (int)(hk(c->key, (uint64_t)L->me << 32 | (uint64_t)tb) % 513);
            sd[j] = j * 600 + (int)(hk(c->key, (uint64_t)j) % 80);
            gen(R->cbuf[i] + sd[j], (size_t)sc[j], hk(c->key, (uint64_t)L->me << 32 | (uint64_t)tb), 0);
            rc[j] = (int)(hk(c->key, (uint64_t)tb << 32 | (uint64_t)L->me) % 513);
            rd[j] = j * 600 + (int)(hk(c->key, (uint64_t)j + 77) % 80);
        }
        EPT_OK(MPI_Alltoallv(R->cbuf[i], sc, sd, MPI_BYTE, R->cout[i], rc, rd, MPI_BYTE, comm));
        break;
    }
    }
    if (nb)
        add_pending(R, q, R_COLL, i);
    R->stat[ST_COLL + c->op]++;
}

void coll_check(rank_t *R, int i)
{
    const layout_t *L = R->L;
    const coll_t *c = &R->P->coll[i];
    int n = kind_size(L, c->kind, 0);
    size_t bytes = 0;
    switch (c->op) {
    case C_BCAST:
    case C_IBCAST: {
        bytes = (size_t)c->count;
        if (c->kind == K_INTER && coll_root_arg(L, c) == MPI_PROC_NULL)
            break; /* the root's own group receives nothing */
        unsigned char *want = malloc(bytes + 1);
        EPT_CHECK(want, "out of memory");
        gen(want, bytes, c->key, 0);
        if (memcmp(want, R->cout[i], bytes) != 0)
            mismatch(R, "%s of %zu bytes on %s: wrong data", coll_name[c->op], bytes, kind_name[c->kind]);
        free(want);
        break;
    }
    case C_ALLREDUCE:
    case C_IALLREDUCE: {
        int *who = malloc(sizeof *who * (size_t)L->n);
        EPT_CHECK(who, "out of memory");
        int m = coll_inputs(L, c->kind, who);
        bytes = (size_t)c->count * sizeof(long long);
        const long long *out = (const long long *)R->cout[i];
        for (int j = 0; j < c->count; j++) {
            long long want = 0;
            for (int r = 0; r < m; r++)
                want += reduce_val(c->key, who[r], j);
            if (out[j] != want) {
                mismatch(R, "%s of %d on %s: element %d is %lld, expected %lld", coll_name[c->op], c->count,
                         kind_name[c->kind], j, out[j], want);
                break;
            }
        }
        free(who);
        break;
    }
    case C_ALLTOALLV: {
        bytes = (size_t)n * 600;
        unsigned char want[600];
        for (int j = 0; j < n; j++) {
            int tb = kind_base(L, c->kind, j), len = R->cnt[n + j], at = R->displ[n + j];
            gen(want, (size_t)len, hk(c->key, (uint64_t)tb << 32 | (uint64_t)L->me), 0);
            if (memcmp(want, R->cout[i] + at, (size_t)len) != 0)
                mismatch(R, "Alltoallv on %s: wrong block from rank %d", kind_name[c->kind], j);
            for (int b = j * 600; b < (j + 1) * 600; b++)
                if ((b < at || b >= at + len) && R->cout[i][b] != GUARD_BYTE) {
                    mismatch(R, "Alltoallv on %s: byte %d outside the blocks was written", kind_name[c->kind], b);
                    break;
                }
        }
        break;
    }
    }
    for (size_t b = bytes; b < bytes + GUARD; b++)
        if (R->cout[i][b] != GUARD_BYTE) {
            mismatch(R, "%s on %s: byte %zu past the result was written", coll_name[c->op], kind_name[c->kind], b);
            break;
        }
    free(R->cbuf[i]);
    free(R->cout[i]);
    R->cbuf[i] = R->cout[i] = NULL;
}
