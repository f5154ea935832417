/* epmpi-bench: collective MPI-IO.
 *
 * io   every rank writes, then reads, its own block of a file shared by all
 *      (rank r's block at offset r * size: the usual block decomposition)
 *      with MPI_File_write_at_all and MPI_File_read_at_all; the data read
 *      is checked once before the timing; reports microseconds per call.
 *      The file is made in $TMPDIR (else /tmp) and deleted at the end. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const long io_sizes[] = {4L << 10, 64L << 10, 1L << 20, 16L << 20};

struct io {
    MPI_File fh;
    int write;
    long bytes;
    MPI_Offset at; /* this rank's block */
    char *buf;
};

static void io_run(const struct party *p, void *ctx, long n)
{
    struct io *f = ctx;
    MPI_Status st;
    for (long i = 0; i < n; i++) {
        int rc = f->write ? MPI_File_write_at_all(f->fh, f->at, f->buf, (int)f->bytes, MPI_BYTE, &st)
                          : MPI_File_read_at_all(f->fh, f->at, f->buf, (int)f->bytes, MPI_BYTE, &st);
        if (rc != MPI_SUCCESS)
            party_fail(p, "MPI_File_%s_at_all of %ld bytes failed (error %d)", f->write ? "write" : "read", f->bytes,
                       rc);
    }
}

void case_io(const struct party *p, const struct bench_opts *o)
{
    const long *sizes;
    int nsizes = bench_sizes(o, io_sizes, sizeof io_sizes / sizeof *io_sizes, &sizes);
    long big = bench_max_size(sizes, nsizes);
    /* One name for the whole job: rank 0's process id. */
    char path[512];
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, p->comm);
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/epmpi-bench-io.%ld", dir && *dir ? dir : "/tmp", pid);
    struct io f = {MPI_FILE_NULL, 0, 0, 0, party_alloc(p, (size_t)big)};
    if (MPI_File_open(p->comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                      &f.fh) != MPI_SUCCESS)
        party_fail(p, "cannot open %s", path);
    for (int s = 0; s < nsizes; s++) {
        f.bytes = sizes[s];
        f.at = (MPI_Offset)p->rank * f.bytes;
        for (long i = 0; i < f.bytes; i++)
            f.buf[i] = bench_pattern(i, p->rank);
        f.write = 1;
        io_run(p, &f, 1);
        memset(f.buf, 0, (size_t)f.bytes);
        f.write = 0;
        io_run(p, &f, 1);
        for (long i = 0; i < f.bytes; i++)
            if (f.buf[i] != bench_pattern(i, p->rank))
                party_fail(p, "MPI_File_read_at_all of %ld bytes: byte %ld is %d, expected %d", f.bytes, i, f.buf[i],
                           bench_pattern(i, p->rank));
        for (f.write = 1; f.write >= 0; f.write--) {
            double per_call = bench_measure(p, o, 0.1, io_run, &f);
            party_report(p, "io", f.write ? "write_all" : "read_all", f.bytes, per_call * 1e6, "us");
        }
    }
    MPI_File_close(&f.fh);
    free(f.buf);
}
