/* MPI-IO with libepmpi.so preloaded, without world mode (shapes P:a,b,..:
 * process p also makes the p-th number of endpoints): a file on the
 * endpoint communicator (every rank writes its rank collectively and reads
 * all of them back) next to MPICH's own MPI-IO on the classic
 * MPI_COMM_WORLD (ROMIO), untouched: its handle is ROMIO's, collective
 * writes at offsets, a non-blocking write completed by MPI_Wait, a file view
 * with a strided datatype, reads of what the other processes wrote, the file
 * size, and MPICH's own error for a missing file.  file_io tests MPI-IO on
 * endpoints in depth. */
#include "eptest.h"

#include <stdint.h>

#define N 1000 /* ints per process and block */

static void endpoint_file(MPI_Comm ep, const char *path)
{
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    int r, n;
    EPT_OK(MPI_Comm_rank(ep, &r));
    EPT_OK(MPI_Comm_size(ep, &n));
    EPT_OK(MPI_File_open(ep, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    EPT_CHECK(((uintptr_t)fh & 1) == 1, "the endpoint file handle %p is not epmpi's", (void *)fh);
    EPT_OK(MPI_File_write_at_all(fh, (MPI_Offset)r * (MPI_Offset)sizeof(int), &r, 1, MPI_INT, &st));
    EPT_OK(MPI_File_sync(fh));
    EPT_OK(MPI_Barrier(ep));
    EPT_OK(MPI_File_sync(fh));
    int *all = malloc(sizeof(int) * (size_t)n);
    EPT_OK(MPI_File_read_at_all(fh, 0, all, n, MPI_INT, &st));
    for (int q = 0; q < n; q++)
        EPT_CHECK(all[q] == q, "endpoint file: int %d is %d", q, all[q]);
    free(all);
    EPT_OK(MPI_File_close(&fh));
    EPT_CHECK(fh == MPI_FILE_NULL, "close did not null the endpoint handle");
}

int main(int argc, char **argv)
{
    int n = ept_init(&argc, &argv, 60), me, np, rc, cls;
    char path[64] = "";
    int *buf = malloc(sizeof(int) * N * 4), *in = malloc(sizeof(int) * N * 4);
    MPI_Comm *h = malloc(sizeof(MPI_Comm) * (size_t)(n > 0 ? n : 1));
    MPI_File fh;
    MPI_Request rq;
    MPI_Status st;
    MPI_Offset size;
    MPI_Datatype vector, strided;
    EPT_CHECK(buf && in && h, "out of memory");
    EPT_CHECK(ept_world_endpoints() == 0 && n > 0, "runs without world mode, with endpoints (shapes P:a,b,..)");
    EPT_OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    EPT_OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    if (me == 0) {
        snprintf(path, sizeof path, "/tmp/ept_io_XXXXXX");
        int fd = mkstemp(path);
        EPT_CHECK(fd >= 0, "mkstemp");
        close(fd);
    }
    EPT_OK(MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD));

    PHASE("a file on endpoints");
    char eppath[80];
    snprintf(eppath, sizeof eppath, "%s.ep", path);
    EPT_OK(MPI_Comm_create_endpoints(MPI_COMM_WORLD, n, MPI_INFO_NULL, h));
#pragma omp parallel num_threads(n)
    {
        endpoint_file(h[omp_get_thread_num()], eppath);
        EPT_OK(MPI_Comm_free(&h[omp_get_thread_num()]));
    }

    PHASE("classic MPI-IO");
    EPT_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    EPT_CHECK(fh != MPI_FILE_NULL && ((uintptr_t)fh & 1) == 0, "the classic file handle %p is not ROMIO's", (void *)fh);
    for (int i = 0; i < 2 * N; i++)
        buf[i] = me * 100000 + i;
    /* Block 0 of each process collectively, block 1 without blocking. */
    EPT_OK(MPI_File_write_at_all(fh, (MPI_Offset)me * N * sizeof(int), buf, N, MPI_INT, &st));
    EPT_OK(MPI_File_iwrite_at(fh, (MPI_Offset)(np + me) * N * sizeof(int), buf + N, N, MPI_INT, &rq));
    EPT_CHECK(!EPT_IS_EP_HANDLE(rq), "request " EPT_HFMT " is not the MPI's", EPT_HARG(rq));
    EPT_OK(MPI_Wait(&rq, &st));
    EPT_OK(MPI_File_sync(fh));
    EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
    EPT_OK(MPI_File_sync(fh));
    int other = (me + 1) % np;
    EPT_OK(MPI_File_read_at(fh, (MPI_Offset)other * N * sizeof(int), in, N, MPI_INT, &st));
    EPT_OK(MPI_File_read_at(fh, (MPI_Offset)(np + other) * N * sizeof(int), in + N, N, MPI_INT, &st));
    for (int i = 0; i < 2 * N; i++)
        EPT_CHECK(in[i] == other * 100000 + i, "int %d of process %d's blocks: %d", i, other, in[i]);
    EPT_OK(MPI_File_get_size(fh, &size));
    EPT_CHECK(size == (MPI_Offset)(2 * np * N * sizeof(int)), "file size %lld", (long long)size);

    /* A view: process p owns ints p, p + np, p + 2 np, ... after the blocks. */
    EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
    EPT_OK(MPI_Type_vector(N, 1, np, MPI_INT, &vector));
    EPT_OK(MPI_Type_create_resized(vector, 0, (MPI_Aint)sizeof(int) * N * np, &strided));
    EPT_OK(MPI_Type_free(&vector));
    EPT_OK(MPI_Type_commit(&strided));
    EPT_OK(
        MPI_File_set_view(fh, (MPI_Offset)(2 * np * N + me) * sizeof(int), MPI_INT, strided, "native", MPI_INFO_NULL));
    EPT_OK(MPI_File_write_all(fh, buf, N, MPI_INT, &st));
    EPT_OK(MPI_File_sync(fh));
    EPT_OK(MPI_Barrier(MPI_COMM_WORLD));
    EPT_OK(MPI_File_sync(fh));
    EPT_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    EPT_OK(MPI_File_read_at(fh, (MPI_Offset)2 * np * N * sizeof(int), in, N, MPI_INT, &st));
    for (int i = 0; i < N; i++)
        EPT_CHECK(in[i] == (i % np) * 100000 + i / np, "interleaved int %d: %d", i, in[i]);
    EPT_OK(MPI_Type_free(&strided));
    EPT_OK(MPI_File_close(&fh));
    EPT_CHECK(fh == MPI_FILE_NULL, "close did not null the handle");

    /* MPICH's own error (files return errors by default). */
    rc = MPI_File_open(MPI_COMM_SELF, "/nonexistent-dir/ept", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    EPT_OK(MPI_Error_class(rc, &cls));
    EPT_CHECK(cls == MPI_ERR_NO_SUCH_FILE, "opening a missing file: class %d", cls);

    free(buf);
    free(in);
    free(h);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
