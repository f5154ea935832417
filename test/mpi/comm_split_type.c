/* MPI_Comm_split_type on endpoint communicators, every split type MPICH
 * 4.0.2 knows.  An endpoint lives where its process lives, so each result
 * must hold exactly the endpoints of the processes MPICH itself puts
 * together for that type and info (asked here with PMPI_Comm_split_type
 * over the same processes, before the endpoints run), ordered by key;
 * MPI_COMM_NULL where MPICH gives a process none.  Beyond what MPICH says,
 * MPI-4.0 (7.4.2) says directly:
 *   - MPI_COMM_TYPE_HW_GUIDED without the key "mpi_hw_resource_type", with
 *     MPI_INFO_NULL or with a value the implementation does not know gives
 *     MPI_COMM_NULL; the value "mpi_shared_memory" is MPI_COMM_TYPE_SHARED;
 *   - MPI_COMM_TYPE_HW_UNGUIDED gives a strict subset or MPI_COMM_NULL;
 *   - MPI_UNDEFINED gives MPI_COMM_NULL, also when only some ranks pass it;
 *   - an unknown split type is an error (MPI_ERR_ARG), not a hang.
 *
 * World mode (PxT) and explicit shapes (P:a,b,..). */
#include "eptest.h"

typedef struct {
    int type;
    const char *value; /* of "mpi_hw_resource_type"; NULL: MPI_INFO_NULL */
    const char *name;
} case_t;

static const case_t cases[] = {
    {MPI_COMM_TYPE_SHARED, NULL, "MPI_COMM_TYPE_SHARED"},
#ifdef MPI_COMM_TYPE_HW_GUIDED /* MPI 4.0's (not in Open MPI 4.1) */
    {MPI_COMM_TYPE_HW_GUIDED, NULL, "MPI_COMM_TYPE_HW_GUIDED, MPI_INFO_NULL"},
    {MPI_COMM_TYPE_HW_GUIDED, "mpi_shared_memory", "MPI_COMM_TYPE_HW_GUIDED, mpi_shared_memory"},
    {MPI_COMM_TYPE_HW_GUIDED, "Machine", "MPI_COMM_TYPE_HW_GUIDED, Machine"},
    {MPI_COMM_TYPE_HW_GUIDED, "Package", "MPI_COMM_TYPE_HW_GUIDED, Package"},
    {MPI_COMM_TYPE_HW_GUIDED, "NUMANode", "MPI_COMM_TYPE_HW_GUIDED, NUMANode"},
    {MPI_COMM_TYPE_HW_GUIDED, "Core", "MPI_COMM_TYPE_HW_GUIDED, Core"},
    {MPI_COMM_TYPE_HW_GUIDED, "PU", "MPI_COMM_TYPE_HW_GUIDED, PU"},
    {MPI_COMM_TYPE_HW_GUIDED, "no_such_resource", "MPI_COMM_TYPE_HW_GUIDED, an unknown value"},
    {MPI_COMM_TYPE_HW_UNGUIDED, NULL, "MPI_COMM_TYPE_HW_UNGUIDED"},
#endif
#ifdef MPIX_COMM_TYPE_NEIGHBORHOOD /* MPICH's */
    {MPIX_COMM_TYPE_NEIGHBORHOOD, NULL, "MPIX_COMM_TYPE_NEIGHBORHOOD"},
#endif
    {MPI_UNDEFINED, NULL, "MPI_UNDEFINED"},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))
#define MAXPROCS 64

/* Per case, the world ranks of the processes MPICH groups with this one
 * (a bit each), 0 for MPI_COMM_NULL; and this process's world rank. */
static uint64_t reference[NCASES];
static int my_proc;

static MPI_Info info_of(const case_t *k)
{
    MPI_Info info = MPI_INFO_NULL;
    if (k->value) {
        EPT_OK(MPI_Info_create(&info));
        EPT_OK(MPI_Info_set(info, "mpi_hw_resource_type", k->value));
    }
    return info;
}

/* MPICH's answers for the processes that hold endpoints, on a classic
 * communicator over exactly them (what the endpoint communicator spans). */
static void ask_mpich(int nlocal)
{
    MPI_Comm procs, part;
    MPI_Group wg, pg;
    PMPI_Comm_rank(MPI_COMM_WORLD, &my_proc);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Comm_split(MPI_COMM_WORLD, nlocal > 0 ? 0 : MPI_UNDEFINED, my_proc, &procs);
    for (int i = 0; i < NCASES && procs != MPI_COMM_NULL; i++) {
        MPI_Info info = info_of(&cases[i]);
        EPT_CHECK(PMPI_Comm_split_type(procs, cases[i].type, 0, info, &part) == MPI_SUCCESS, "MPICH: %s failed",
                  cases[i].name);
        if (part != MPI_COMM_NULL) {
            int n, world[MAXPROCS], idx[MAXPROCS];
            PMPI_Comm_size(part, &n);
            EPT_CHECK(n <= MAXPROCS, "more than %d processes", MAXPROCS);
            for (int j = 0; j < n; j++)
                idx[j] = j;
            PMPI_Comm_group(part, &pg);
            PMPI_Group_translate_ranks(pg, n, idx, wg, world);
            PMPI_Group_free(&pg);
            for (int j = 0; j < n; j++)
                reference[i] |= 1ull << world[j];
            PMPI_Comm_free(&part);
        }
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    }
    if (procs != MPI_COMM_NULL)
        PMPI_Comm_free(&procs);
    PMPI_Group_free(&wg);
}

static void body(MPI_Comm comm, void *arg)
{
    (void)arg;
    int r, n;
    EPT_OK(MPI_Comm_rank(comm, &r));
    EPT_OK(MPI_Comm_size(comm, &n));
    /* Which process each rank lives in. */
    int *proc_of = malloc(sizeof(int) * (size_t)n);
    EPT_CHECK(proc_of, "out of memory");
    EPT_OK(MPI_Allgather(&my_proc, 1, MPI_INT, proc_of, 1, MPI_INT, comm));
    int key = n - r; /* reversed: the new ranks run backwards */
    for (int i = 0; i < NCASES; i++) {
        const case_t *k = &cases[i];
        PHASE(k->name);
        MPI_Info info = info_of(k);
        MPI_Comm nc;
        EPT_OK(MPI_Comm_split_type(comm, k->type, key, info, &nc));
        if (info != MPI_INFO_NULL)
            EPT_OK(MPI_Info_free(&info));
        /* Expected: the ranks whose processes MPICH put with ours. */
        int want_size = 0, want_rank = 0;
        for (int q = 0; q < n; q++)
            if (reference[i] >> proc_of[q] & 1) {
                want_size++;
                want_rank += q > r; /* keys reversed */
            }
        if (!want_size) {
            EPT_CHECK(nc == MPI_COMM_NULL, "%s: rank %d got a communicator where MPICH gives its process none", k->name,
                      r);
        } else {
            int ns = -1, nr = -1;
            EPT_CHECK(nc != MPI_COMM_NULL, "%s: rank %d got MPI_COMM_NULL where MPICH gives its process a part",
                      k->name, r);
            EPT_OK(MPI_Comm_size(nc, &ns));
            EPT_OK(MPI_Comm_rank(nc, &nr));
            EPT_CHECK(ns == want_size && nr == want_rank, "%s: rank %d is rank %d of %d, expected %d of %d", k->name, r,
                      nr, ns, want_rank, want_size);
            /* A working communicator: everybody's old rank summed. */
            long sum = 0, want_sum = 0;
            EPT_OK(MPI_Allreduce(&(long){r}, &sum, 1, MPI_LONG, MPI_SUM, nc));
            for (int q = 0; q < n; q++)
                if (reference[i] >> proc_of[q] & 1)
                    want_sum += q;
            EPT_CHECK(sum == want_sum, "%s: a reduction over the result gave %ld, expected %ld", k->name, sum,
                      want_sum);
            EPT_OK(MPI_Comm_free(&nc));
        }
        /* What MPI-4.0 says whatever MPICH does. */
        if (k->type == MPI_UNDEFINED)
            EPT_CHECK(!want_size, "%s: MPI says MPI_COMM_NULL", k->name);
#ifdef MPI_COMM_TYPE_HW_GUIDED
        if (k->type == MPI_COMM_TYPE_HW_GUIDED && (!k->value || !strcmp(k->value, "no_such_resource")))
            EPT_CHECK(!want_size, "%s: MPI says MPI_COMM_NULL", k->name);
        if (k->type == MPI_COMM_TYPE_HW_GUIDED && k->value && !strcmp(k->value, "mpi_shared_memory"))
            EPT_CHECK(reference[i] == reference[0], "%s: MPI says the same as MPI_COMM_TYPE_SHARED", k->name);
        if (k->type == MPI_COMM_TYPE_HW_UNGUIDED)
            EPT_CHECK(want_size < n, "%s: a part of all %d ranks is no strict subset", k->name, n);
#endif
    }

    PHASE("MPI_UNDEFINED from some ranks");
    {
        MPI_Comm nc;
        EPT_OK(MPI_Comm_split_type(comm, r % 2 ? MPI_COMM_TYPE_SHARED : MPI_UNDEFINED, r, MPI_INFO_NULL, &nc));
        int want_size = 0, want_rank = 0, ns = -1, nr = -1;
        for (int q = 1; q < n; q += 2)
            if (reference[0] >> proc_of[q] & 1) {
                want_size++;
                want_rank += q < r;
            }
        if (r % 2 == 0) {
            EPT_CHECK(nc == MPI_COMM_NULL, "rank %d passed MPI_UNDEFINED and got a communicator", r);
        } else {
            EPT_CHECK(nc != MPI_COMM_NULL, "rank %d passed MPI_COMM_TYPE_SHARED and got MPI_COMM_NULL", r);
            EPT_OK(MPI_Comm_size(nc, &ns));
            EPT_OK(MPI_Comm_rank(nc, &nr));
            EPT_CHECK(ns == want_size && nr == want_rank,
                      "shared among odd ranks: rank %d is %d of %d, expected %d of %d", r, nr, ns, want_rank,
                      want_size);
            EPT_OK(MPI_Comm_free(&nc));
        }
    }

    PHASE("an unknown split type");
    {
        MPI_Comm nc = MPI_COMM_WORLD;
        int cls = -1;
        EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
        int rc = MPI_Comm_split_type(comm, 12345, 0, MPI_INFO_NULL, &nc);
        MPI_Error_class(rc, &cls);
        EPT_CHECK(cls == MPI_ERR_ARG, "split type 12345: class %d, expected MPI_ERR_ARG", cls);
        EPT_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
    }
    free(proc_of);
}

int main(int argc, char **argv)
{
    int nlocal = ept_init(&argc, &argv, 60);
    ask_mpich(nlocal);
    run_ranks(nlocal, body, NULL);
    PHASE("MPI_Finalize");
    MPI_Finalize();
    return 0;
}
