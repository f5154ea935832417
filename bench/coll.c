/* epmpi-bench: cases every rank of the communicator takes part in.
 *
 * coll    MPI_Barrier, MPI_Bcast (root 0, MPI_BYTE) and MPI_Allreduce
 *         (MPI_SUM of MPI_DOUBLE); Bcast and Allreduce at each size, their
 *         results checked once before the timing; reports microseconds per
 *         call.
 * create  making and freeing a communicator: MPI_Comm_dup, MPI_Comm_split
 *         (two colours, by rank parity) and MPI_Comm_create_endpoints with
 *         one endpoint per caller (found at run time: epmpi exports it, so
 *         the program needs no epmpi header; without it, as under plain
 *         MPICH, "endpoints" times MPI_Comm_dup instead, the nearest call
 *         that makes a communicator of the same ranks); reports microseconds
 *         per creation and free. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "bench.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const long coll_sizes[] = {8, 64L << 10, 8L << 20};

/* ---- collectives -------------------------------------------------------------- */

enum coll_op { BARRIER, BCAST, ALLREDUCE };
static const char *const coll_name[] = {"barrier", "bcast", "allreduce"};

struct coll {
    enum coll_op op;
    int bytes;
    unsigned char *bc;   /* Bcast buffer */
    double *send, *recv; /* Allreduce buffers */
};

static void coll_run(const struct party *p, void *ctx, long n)
{
    struct coll *c = ctx;
    int count = c->bytes / (int)sizeof(double);
    for (long i = 0; i < n; i++) {
        switch (c->op) {
        case BARRIER:
            MPI_Barrier(p->comm);
            break;
        case BCAST:
            MPI_Bcast(c->bc, c->bytes, MPI_BYTE, 0, p->comm);
            break;
        case ALLREDUCE:
            MPI_Allreduce(c->send, c->recv, count, MPI_DOUBLE, MPI_SUM, p->comm);
            break;
        }
    }
}

static unsigned char pattern(size_t i) { return (unsigned char)(i * 131u + (i >> 8) * 7u + 1u); }

/* One call of known data, checked on every rank. */
static void coll_check(const struct party *p, struct coll *c)
{
    if (c->op == BCAST) {
        for (size_t i = 0; i < (size_t)c->bytes; i++)
            c->bc[i] = p->rank == 0 ? pattern(i) : 0;
        MPI_Bcast(c->bc, c->bytes, MPI_BYTE, 0, p->comm);
        for (size_t i = 0; i < (size_t)c->bytes; i++)
            if (c->bc[i] != pattern(i))
                party_fail(p, "MPI_Bcast of %d bytes: byte %zu is %d, expected %d", c->bytes, i, c->bc[i], pattern(i));
    } else if (c->op == ALLREDUCE) {
        size_t count = (size_t)c->bytes / sizeof(double);
        for (size_t i = 0; i < count; i++) {
            c->send[i] = p->rank + 1 + (double)(i % 5);
            c->recv[i] = -1;
        }
        MPI_Allreduce(c->send, c->recv, (int)count, MPI_DOUBLE, MPI_SUM, p->comm);
        double n = p->size;
        for (size_t i = 0; i < count; i++) {
            /* the sum over ranks r of r + 1 + i % 5: exact in doubles */
            double want = n * (n + 1) / 2 + n * (double)(i % 5);
            if (c->recv[i] != want)
                party_fail(p, "MPI_Allreduce of %d bytes: element %zu is %g, expected %g", c->bytes, i, c->recv[i],
                           want);
        }
    }
}

void case_coll(const struct party *p, const struct bench_opts *o)
{
    const long *sizes;
    int nsizes = bench_sizes(o, coll_sizes, sizeof coll_sizes / sizeof *coll_sizes, &sizes);
    long big = 0;
    for (int s = 0; s < nsizes; s++)
        big = sizes[s] > big ? sizes[s] : big;
    struct coll c = {BARRIER, 0, party_alloc(p, (size_t)big), party_alloc(p, (size_t)big), party_alloc(p, (size_t)big)};
    for (c.op = BARRIER; c.op <= ALLREDUCE; c.op++) {
        for (int s = 0; s < (c.op == BARRIER ? 1 : nsizes); s++) {
            c.bytes = c.op == BARRIER ? 0 : (int)sizes[s];
            coll_check(p, &c);
            double per_call = bench_measure(p, o, 0.1, coll_run, &c);
            party_report(p, "coll", coll_name[c.op], c.bytes, per_call * 1e6, "us");
        }
    }
    free(c.bc);
    free(c.send);
    free(c.recv);
}

/* ---- communicator creation ------------------------------------------------------ */

typedef int (*create_endpoints_fn)(MPI_Comm parent, int my_num_ep, MPI_Info info, MPI_Comm out[]);

enum create_op { DUP, SPLIT, ENDPOINTS };
static const char *const create_name[] = {"dup", "split", "endpoints"};

struct create {
    enum create_op op;
    create_endpoints_fn create_endpoints; /* NULL without epmpi */
};

static void create_run(const struct party *p, void *ctx, long n)
{
    struct create *c = ctx;
    for (long i = 0; i < n; i++) {
        MPI_Comm made;
        if (c->op == SPLIT)
            MPI_Comm_split(p->comm, p->rank % 2, p->rank, &made);
        else if (c->op == ENDPOINTS && c->create_endpoints)
            c->create_endpoints(p->comm, 1, MPI_INFO_NULL, &made);
        else
            MPI_Comm_dup(p->comm, &made);
        MPI_Comm_free(&made);
    }
}

void case_create(const struct party *p, const struct bench_opts *o)
{
    struct create c = {DUP, NULL};
    /* dlsym returns an object pointer; POSIX guarantees the conversion. */
    void *sym = dlsym(RTLD_DEFAULT, "MPI_Comm_create_endpoints");
    memcpy(&c.create_endpoints, &sym, sizeof sym);
    if (!c.create_endpoints && p->id == 0)
        printf("# create endpoints: no MPI_Comm_create_endpoints here, timing MPI_Comm_dup instead\n");
    for (c.op = DUP; c.op <= ENDPOINTS; c.op++) {
        double per_call = bench_measure(p, o, 0.05, create_run, &c);
        party_report(p, "create", create_name[c.op], 0, per_call * 1e6, "us");
    }
}
