#define _GNU_SOURCE /* dladdr, dl_iterate_phdr */
/* Open MPI's Fortran bindings over epmpi.
 *
 * Open MPI's bindings (libmpi_mpifh for mpif.h and `use mpi`,
 * libmpi_usempif08 for mpi_f08, which calls libmpi_mpifh's routines) turn
 * Fortran arguments into C ones and call PMPI_ directly, past epmpi's MPI_
 * entry points.  So at load, and again at MPI_Init for libraries opened
 * later, epmpi points those libraries' imports at its own entry points:
 * PMPI_X at epmpi's MPI_X, and the Fortran routines that mpi_f08 calls
 * (ompi_x_f, pmpi_x_) at epmpi's mpi_x_, wherever epmpi has one.  Open MPI's
 * conversions then run as they are.  The routines of Open MPI's that read
 * the object behind a handle (the request a wait or test call writes back,
 * a new group's index, MPI_Alltoallw's communicator size) are replaced
 * below; attributes and keyvals are in fortran.c.
 *
 * An endpoint object's Fortran handle is its registry id: Open MPI's are
 * indices into its tables, which never reach 2^26. */
#include "fortran.h"

#if defined(OPEN_MPI)

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- handles ------------------------------------------------------------------ */

#define ENTRY_F_HANDLES(T, Name, htype)                                   \
    ENTRY_API MPI_Fint MPI_##Name##_c2f(T h)                              \
    {                                                                     \
        int id = EP_HID(h);                                               \
        return ep_handle_is_ep(id) ? (MPI_Fint)id : PMPI_##Name##_c2f(h); \
    }                                                                     \
    ENTRY_API T MPI_##Name##_f2c(MPI_Fint f)                              \
    {                                                                     \
        if (ep_handle_is_ep((int)f) && ep_handle_type((int)f) == (htype)) \
            return EP_HANDLE(T, f);                                       \
        return PMPI_##Name##_f2c(f);                                      \
    }

ENTRY_F_HANDLES(MPI_Comm, Comm, EP_HTYPE_COMM)
ENTRY_F_HANDLES(MPI_Group, Group, EP_HTYPE_GROUP)
ENTRY_F_HANDLES(MPI_Request, Request, EP_HTYPE_REQUEST)
ENTRY_F_HANDLES(MPI_Message, Message, EP_HTYPE_REQUEST)
ENTRY_F_HANDLES(MPI_Win, Win, EP_HTYPE_WIN)

/* ---- pointing Open MPI's Fortran libraries at epmpi ------------------------------ */

#if defined(__x86_64__)
#define ENTRY_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define ENTRY_R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define ENTRY_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define ENTRY_R_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

#if defined(ENTRY_R_JUMP_SLOT) && __ELF_NATIVE_CLASS == 64

static void *self_handle;     /* this library, for dlsym */
static const void *self_base; /* where it is loaded */

static int is_ompi_fortran_library(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libmpi_mpifh.", 13) == 0 || strncmp(base, "libmpi_usempi", 13) == 0;
}

/* epmpi's own definition of name, or NULL when it has none (dlsym on this
 * library's handle would also find libmpi's). */
static void *own_symbol(const char *name)
{
    Dl_info di;
    void *p = dlsym(self_handle, name);
    return p && dladdr(p, &di) && di.dli_fbase == self_base ? p : NULL;
}

/* What an import of name should reach instead: PMPI_X → MPI_X; ompi_x_f
 * and pmpi_x_ (Open MPI's Fortran routine under the names mpi_f08 calls) →
 * mpi_x_. */
static void *replacement(const char *name)
{
    char want[128];
    size_t n = strlen(name);
    if (n + 2 >= sizeof want)
        return NULL;
    if (strncmp(name, "PMPI_", 5) == 0)
        return own_symbol(name + 1);
    if (strncmp(name, "ompi_", 5) == 0 && n > 7 && strcmp(name + n - 2, "_f") == 0) {
        memcpy(want, "mpi_", 4);
        memcpy(want + 4, name + 5, n - 7);
        strcpy(want + 4 + (n - 7), "_");
        return own_symbol(want);
    }
    if (strncmp(name, "pmpi_", 5) == 0 && name[n - 1] == '_' && name[n - 2] != '_')
        return own_symbol(name + 1);
    return NULL;
}

typedef struct {
    uintptr_t lo, hi; /* the object's read-only-after-relocation range */
    long page;
} relro_t;

static void set_slot(void **slot, void *to, const relro_t *ro)
{
    if (*slot == to)
        return;
    uintptr_t a = (uintptr_t)slot;
    if (a >= ro->lo && a < ro->hi) {
        void *page = (void *)(a & ~(uintptr_t)(ro->page - 1));
        if (mprotect(page, (size_t)ro->page, PROT_READ | PROT_WRITE) != 0)
            return;
        __atomic_store_n(slot, to, __ATOMIC_RELEASE);
        mprotect(page, (size_t)ro->page, PROT_READ);
    } else {
        __atomic_store_n(slot, to, __ATOMIC_RELEASE);
    }
}

/* An address from the dynamic section: glibc has made most absolute. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
    return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

static void redirect_relocs(const struct dl_phdr_info *info, const ElfW(Rela) * r, size_t bytes,
                            const ElfW(Sym) * symtab, const char *strtab, const relro_t *ro)
{
    for (size_t i = 0; i < bytes / sizeof *r; i++) {
        unsigned long type = ELF64_R_TYPE(r[i].r_info);
        if (type != ENTRY_R_JUMP_SLOT && type != ENTRY_R_GLOB_DAT)
            continue;
        void *to = replacement(strtab + symtab[ELF64_R_SYM(r[i].r_info)].st_name);
        if (to)
            set_slot((void **)(info->dlpi_addr + r[i].r_offset), to, ro);
    }
}

static int redirect_object(struct dl_phdr_info *info, size_t size, void *unused)
{
    (void)size;
    (void)unused;
    if (!info->dlpi_name || !is_ompi_fortran_library(info->dlpi_name))
        return 0;
    const ElfW(Dyn) *dyn = NULL;
    relro_t ro = {0, 0, sysconf(_SC_PAGESIZE)};
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        else if (ph->p_type == PT_GNU_RELRO)
            ro = (relro_t){info->dlpi_addr + ph->p_vaddr, info->dlpi_addr + ph->p_vaddr + ph->p_memsz, ro.page};
    }
    if (!dyn)
        return 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t jmprel_size = 0, rela_size = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB:
            symtab = (const ElfW(Sym) *)dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_STRTAB:
            strtab = (const char *)dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_JMPREL:
            jmprel = (const ElfW(Rela) *)dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_PLTRELSZ:
            jmprel_size = dyn->d_un.d_val;
            break;
        case DT_RELA:
            rela = (const ElfW(Rela) *)dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_RELASZ:
            rela_size = dyn->d_un.d_val;
            break;
        default:
            break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    if (jmprel)
        redirect_relocs(info, jmprel, jmprel_size, symtab, strtab, &ro);
    if (rela)
        redirect_relocs(info, rela, rela_size, symtab, strtab, &ro);
    return 0;
}

__attribute__((constructor)) static void redirect_fortran_libraries(void)
{
    Dl_info di;
    if (!dladdr((void *)redirect_fortran_libraries, &di) || !di.dli_fname)
        return;
    self_base = di.dli_fbase;
    if ((self_handle = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
        dl_iterate_phdr(redirect_object, NULL);
}
#endif /* elsewhere Open MPI's Fortran bindings reach classic handles only */

/* ---- requests ------------------------------------------------------------------- */

/* Stores C status c into Fortran status f unless f is MPI_STATUS_IGNORE. */
static void status_out(const MPI_Status *c, MPI_Fint *f)
{
    if (f != MPI_F_STATUS_IGNORE)
        MPI_Status_c2f(c, f);
}

/* Fortran status i of an array (MPI_STATUS_SIZE integers each). */
static MPI_Fint *f_status_at(MPI_Fint *statuses, int i)
{
    return statuses == MPI_F_STATUSES_IGNORE ? MPI_F_STATUS_IGNORE
                                             : statuses + (size_t)i * (sizeof(MPI_Status) / sizeof(MPI_Fint));
}

/* C copies of count Fortran requests in *c (and room for count statuses
 * after them): MPI_SUCCESS, or the code of MPI_ERR_NO_MEM raised. */
static int requests_in(const char *call, int count, const MPI_Fint *f, MPI_Request **c, MPI_Status **statuses)
{
    size_t n = (size_t)(count > 0 ? count : 1);
    if (!(*c = malloc(n * (sizeof **c + sizeof(MPI_Status)))))
        return entry_f_no_memory(call);
    for (int i = 0; i < count; i++)
        (*c)[i] = MPI_Request_f2c(f[i]);
    if (statuses)
        *statuses = (MPI_Status *)(*c + n);
    return MPI_SUCCESS;
}

ENTRY_API void mpi_wait_(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Request r = MPI_Request_f2c(*request);
    MPI_Status s;
    int rc = MPI_Wait(&r, &s);
    if (rc == MPI_SUCCESS) {
        *request = MPI_Request_c2f(r);
        status_out(&s, status);
    }
    entry_f_return(ierror, rc);
}

ENTRY_API void mpi_test_(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Request r = MPI_Request_f2c(*request);
    MPI_Status s;
    int rc = MPI_Test(&r, flag, &s);
    if (rc == MPI_SUCCESS) {
        entry_f_logical(flag);
        *request = MPI_Request_c2f(r);
        if (*flag)
            status_out(&s, status);
    }
    entry_f_return(ierror, rc);
}

ENTRY_API void mpi_request_free_(MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request r = MPI_Request_f2c(*request);
    int rc = MPI_Request_free(&r);
    if (rc == MPI_SUCCESS)
        *request = MPI_Request_c2f(r);
    entry_f_return(ierror, rc);
}

/* The end of Waitall and Testall: requests and, unless ignored, statuses. */
static void all_out(int count, const MPI_Request *c, const MPI_Status *s, MPI_Fint *requests, MPI_Fint *statuses)
{
    for (int i = 0; i < count; i++) {
        requests[i] = MPI_Request_c2f(c[i]);
        status_out(&s[i], f_status_at(statuses, i));
    }
}

ENTRY_API void mpi_waitall_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierror)
{
    MPI_Status *s;
    MPI_Request *c;
    int rc = requests_in("MPI_Waitall", *count, requests, &c, &s);
    if (rc != MPI_SUCCESS) {
        entry_f_return(ierror, rc);
        return;
    }
    rc = MPI_Waitall(*count, c, statuses == MPI_F_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : s);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
        all_out(*count, c, s, requests, statuses);
    free(c);
    entry_f_return(ierror, rc);
}

ENTRY_API void mpi_testall_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses,
                            MPI_Fint *ierror)
{
    MPI_Status *s;
    MPI_Request *c;
    int rc = requests_in("MPI_Testall", *count, requests, &c, &s);
    if (rc != MPI_SUCCESS) {
        entry_f_return(ierror, rc);
        return;
    }
    rc = MPI_Testall(*count, c, flag, statuses == MPI_F_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : s);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {
        entry_f_logical(flag);
        if (*flag)
            all_out(*count, c, s, requests, statuses);
    }
    free(c);
    entry_f_return(ierror, rc);
}

ENTRY_API void mpi_waitany_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status,
                            MPI_Fint *ierror)
{
    MPI_Status s;
    MPI_Request *c;
    int rc = requests_in("MPI_Waitany", *count, requests, &c, NULL);
    if (rc != MPI_SUCCESS) {
        entry_f_return(ierror, rc);
        return;
    }
    rc = MPI_Waitany(*count, c, index, &s);
    if (rc == MPI_SUCCESS) {
        if (*index != MPI_UNDEFINED)
            requests[*index] = MPI_Request_c2f(c[*index]);
        entry_f_indices(index, 1);
        status_out(&s, status);
    }
    free(c);
    entry_f_return(ierror, rc);
}

ENTRY_API void mpi_testany_(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag,
                            MPI_Fint *status, MPI_Fint *ierror)
{
    MPI_Status s;
    MPI_Request *c;
    int rc = requests_in("MPI_Testany", *count, requests, &c, NULL);
    if (rc != MPI_SUCCESS) {
        entry_f_return(ierror, rc);
        return;
    }
    rc = MPI_Testany(*count, c, index, flag, &s);
    if (rc == MPI_SUCCESS) {
        entry_f_logical(flag);
        if (*flag && *index != MPI_UNDEFINED)
            requests[*index] = MPI_Request_c2f(c[*index]);
        entry_f_indices(index, 1);
        if (*flag)
            status_out(&s, status);
    }
    free(c);
    entry_f_return(ierror, rc);
}

/* The end of Waitsome and Testsome: the completed requests, their statuses
 * (in the order of indices) and 1-based indices. */
static void some_out(const MPI_Request *c, int outcount, MPI_Fint *indices, const MPI_Status *s, MPI_Fint *requests,
                     MPI_Fint *statuses)
{
    if (outcount == MPI_UNDEFINED)
        return;
    for (int i = 0; i < outcount; i++) {
        requests[indices[i]] = MPI_Request_c2f(c[indices[i]]);
        status_out(&s[i], f_status_at(statuses, i));
    }
    entry_f_indices(indices, outcount);
}

typedef int some_fn(int, MPI_Request[], int *, int[], MPI_Status[]);

static void some(some_fn *call_c, const char *call, const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                 MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierror)
{
    MPI_Status *s;
    MPI_Request *c;
    int rc = requests_in(call, *incount, requests, &c, &s);
    if (rc != MPI_SUCCESS) {
        entry_f_return(ierror, rc);
        return;
    }
    rc = call_c(*incount, c, outcount, indices, s);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
        some_out(c, *outcount, indices, s, requests, statuses);
    free(c);
    entry_f_return(ierror, rc);
}

ENTRY_API void mpi_waitsome_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                             MPI_Fint *statuses, MPI_Fint *ierror)
{
    some(MPI_Waitsome, "MPI_Waitsome", incount, requests, outcount, indices, statuses, ierror);
}

ENTRY_API void mpi_testsome_(const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                             MPI_Fint *statuses, MPI_Fint *ierror)
{
    some(MPI_Testsome, "MPI_Testsome", incount, requests, outcount, indices, statuses, ierror);
}

/* ---- groups --------------------------------------------------------------------- */

#define ENTRY_F_GROUP_PAIR(fname, Cname)                                                               \
    ENTRY_API void fname(const MPI_Fint *g1, const MPI_Fint *g2, MPI_Fint *newgroup, MPI_Fint *ierror) \
    {                                                                                                  \
        MPI_Group n;                                                                                   \
        int rc = Cname(MPI_Group_f2c(*g1), MPI_Group_f2c(*g2), &n);                                    \
        if (rc == MPI_SUCCESS)                                                                         \
            *newgroup = MPI_Group_c2f(n);                                                              \
        entry_f_return(ierror, rc);                                                                    \
    }

ENTRY_F_GROUP_PAIR(mpi_group_union_, MPI_Group_union)
ENTRY_F_GROUP_PAIR(mpi_group_intersection_, MPI_Group_intersection)
ENTRY_F_GROUP_PAIR(mpi_group_difference_, MPI_Group_difference)

/* Incl and excl take ranks (int n, const int ranks[]); their range forms
 * ranges (int n, int ranges[][3]): Fortran's INTEGER arrays as they are. */
#define ENTRY_F_GROUP_PICK(fname, Cname, Atype)                                                                   \
    ENTRY_API void fname(const MPI_Fint *group, const MPI_Fint *n, Atype a, MPI_Fint *newgroup, MPI_Fint *ierror) \
    {                                                                                                             \
        MPI_Group g;                                                                                              \
        int rc = Cname(MPI_Group_f2c(*group), *n, a, &g);                                                         \
        if (rc == MPI_SUCCESS)                                                                                    \
            *newgroup = MPI_Group_c2f(g);                                                                         \
        entry_f_return(ierror, rc);                                                                               \
    }

typedef int entry_f_range_t[3];
ENTRY_F_GROUP_PICK(mpi_group_incl_, MPI_Group_incl, const int *)
ENTRY_F_GROUP_PICK(mpi_group_excl_, MPI_Group_excl, const int *)
ENTRY_F_GROUP_PICK(mpi_group_range_incl_, MPI_Group_range_incl, entry_f_range_t *)
ENTRY_F_GROUP_PICK(mpi_group_range_excl_, MPI_Group_range_excl, entry_f_range_t *)

/* ---- MPI_Alltoallw ---------------------------------------------------------------- */

/* Fortran's MPI_IN_PLACE and MPI_BOTTOM: common blocks Open MPI defines
 * under gfortran's names. */
extern int mpi_fortran_in_place_ ENTRY_F_WEAK;
extern int mpi_fortran_bottom_ ENTRY_F_WEAK;

static void *f_buffer(void *b)
{
    if (&mpi_fortran_in_place_ && b == (void *)&mpi_fortran_in_place_)
        return MPI_IN_PLACE;
    if (&mpi_fortran_bottom_ && b == (void *)&mpi_fortran_bottom_)
        return MPI_BOTTOM;
    return b;
}

/* The C type arrays of (I)Alltoallw in one block: n send types (none in
 * place), then n receive types from *recv, n the size of comm's (remote)
 * group; MPI_SUCCESS or the error. */
static int alltoallw_types(const char *call, MPI_Comm comm, const void *sendbuf, const MPI_Fint *sendtypes,
                           const MPI_Fint *recvtypes, MPI_Datatype **types, MPI_Datatype **recv)
{
    int inter = 0, n = 0, rc = MPI_Comm_test_inter(comm, &inter);
    if (rc == MPI_SUCCESS)
        rc = inter ? MPI_Comm_remote_size(comm, &n) : MPI_Comm_size(comm, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!(*types = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof **types)))
        return entry_f_no_memory(call);
    *recv = *types + n;
    for (int i = 0; i < n; i++) {
        (*types)[i] = sendbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : MPI_Type_f2c(sendtypes[i]);
        (*recv)[i] = MPI_Type_f2c(recvtypes[i]);
    }
    return MPI_SUCCESS;
}

ENTRY_API void mpi_alltoallw_(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                              const MPI_Fint *sendtypes, void *recvbuf, const MPI_Fint *recvcounts,
                              const MPI_Fint *rdispls, const MPI_Fint *recvtypes, const MPI_Fint *comm,
                              MPI_Fint *ierror)
{
    MPI_Comm c = MPI_Comm_f2c(*comm);
    MPI_Datatype *types = NULL, *rtypes;
    void *sb = f_buffer(sendbuf);
    int rc = alltoallw_types("MPI_Alltoallw", c, sb, sendtypes, recvtypes, &types, &rtypes);
    if (rc == MPI_SUCCESS)
        rc = MPI_Alltoallw(sb, sendcounts, sdispls, types, f_buffer(recvbuf), recvcounts, rdispls, rtypes, c);
    free(types);
    entry_f_return(ierror, rc);
}

/* The non-blocking forms read the type arrays until they complete (the
 * endpoints of a process read each other's), so the converted arrays live
 * on the endpoint request and go with it; Open MPI's own collectives copy
 * them, so for classic requests they go now.  A request that holds
 * something else already keeps them till the end (never, in practice:
 * only reductions in pieces and persistent collectives hold anything). */
static void keep_with_request(MPI_Request r, void *mem)
{
    ep_request_t *q = ep_request_handle_is_ep(r) ? ep_request_get(r) : NULL;
    if (!q || q == &ep_request_sent) {
        free(mem);
    } else if (!q->ext) {
        q->ext = mem;
        q->ext_free = free;
    }
}

ENTRY_API void mpi_ialltoallw_(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                               const MPI_Fint *sendtypes, void *recvbuf, const MPI_Fint *recvcounts,
                               const MPI_Fint *rdispls, const MPI_Fint *recvtypes, const MPI_Fint *comm,
                               MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Comm c = MPI_Comm_f2c(*comm);
    MPI_Datatype *types = NULL, *rtypes;
    MPI_Request r;
    void *sb = f_buffer(sendbuf);
    int rc = alltoallw_types("MPI_Ialltoallw", c, sb, sendtypes, recvtypes, &types, &rtypes);
    if (rc == MPI_SUCCESS)
        rc = MPI_Ialltoallw(sb, sendcounts, sdispls, types, f_buffer(recvbuf), recvcounts, rdispls, rtypes, c, &r);
    if (rc == MPI_SUCCESS) {
        *request = MPI_Request_c2f(r);
        keep_with_request(r, types);
    } else {
        free(types);
    }
    entry_f_return(ierror, rc);
}

/* How many neighbours comm's topology gives the caller: sources and
 * destinations. */
static int neighbor_counts(MPI_Comm comm, int *in, int *out)
{
    int kind = MPI_UNDEFINED, rank = 0, weighted = 0, rc = MPI_Topo_test(comm, &kind);
    if (rc != MPI_SUCCESS)
        return rc;
    switch (kind) {
    case MPI_CART:
        rc = MPI_Cartdim_get(comm, in);
        *in *= 2;
        *out = *in;
        return rc;
    case MPI_GRAPH:
        if ((rc = MPI_Comm_rank(comm, &rank)) == MPI_SUCCESS)
            rc = MPI_Graph_neighbors_count(comm, rank, in);
        *out = *in;
        return rc;
    case MPI_DIST_GRAPH:
        return MPI_Dist_graph_neighbors_count(comm, in, out, &weighted);
    default:
        *in = *out = 0;
        return MPI_SUCCESS; /* no topology: the call itself reports it */
    }
}

/* MPI_Ineighbor_alltoallw: as many types as the topology's neighbours. */
ENTRY_API void mpi_ineighbor_alltoallw_(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Aint *sdispls,
                                        const MPI_Fint *sendtypes, void *recvbuf, const MPI_Fint *recvcounts,
                                        const MPI_Aint *rdispls, const MPI_Fint *recvtypes, const MPI_Fint *comm,
                                        MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Comm c = MPI_Comm_f2c(*comm);
    int indegree = 0, outdegree = 0, rc = neighbor_counts(c, &indegree, &outdegree);
    MPI_Datatype *types = NULL;
    MPI_Request r;
    if (rc == MPI_SUCCESS &&
        !(types = malloc((size_t)(indegree + outdegree > 0 ? indegree + outdegree : 1) * sizeof *types)))
        rc = entry_f_no_memory("MPI_Ineighbor_alltoallw");
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < outdegree; i++)
            types[i] = MPI_Type_f2c(sendtypes[i]);
        for (int i = 0; i < indegree; i++)
            types[outdegree + i] = MPI_Type_f2c(recvtypes[i]);
        rc = MPI_Ineighbor_alltoallw(f_buffer(sendbuf), sendcounts, sdispls, types, f_buffer(recvbuf), recvcounts,
                                     rdispls, types + outdegree, c, &r);
    }
    if (rc == MPI_SUCCESS) {
        *request = MPI_Request_c2f(r);
        keep_with_request(r, types);
    } else {
        free(types);
    }
    entry_f_return(ierror, rc);
}

/* ---- error handlers ---------------------------------------------------------------
 * Open MPI's binding makes the handler itself (a Fortran one, for its own
 * communicators); epmpi records it with a caller that hands the Fortran
 * function the Fortran handle of its endpoint communicator or window. */

typedef void entry_f_errhandler_fn(MPI_Fint *, MPI_Fint *);

static void f_comm_caller(MPI_Comm_errhandler_function *fn, MPI_Comm comm, int *code)
{
    MPI_Fint c = MPI_Comm_c2f(comm);
    ((entry_f_errhandler_fn *)(void (*)(void))fn)(&c, code);
}

static void f_win_caller(MPI_Comm_errhandler_function *fn, MPI_Comm win, int *code)
{
    MPI_Fint w = MPI_Win_c2f((MPI_Win)(void *)win);
    ((entry_f_errhandler_fn *)(void (*)(void))fn)(&w, code);
}

static int record_errhandler(const char *call, MPI_Fint rc, MPI_Fint *errhandler, entry_f_errhandler_fn *fn,
                             ep_errhandler_caller_t *caller)
{
    MPI_Errhandler eh = MPI_Errhandler_f2c(*errhandler);
    if (rc == MPI_SUCCESS && ep_errhandler_record(eh, (MPI_Comm_errhandler_function *)(void (*)(void))fn, caller)) {
        PMPI_Errhandler_free(&eh);
        return entry_raise(NULL, call, MPI_ERR_NO_MEM, "out of memory recording the handler");
    }
    return rc;
}

extern void pmpi_comm_create_errhandler_(entry_f_errhandler_fn *, MPI_Fint *, MPI_Fint *) ENTRY_F_WEAK;
extern void pmpi_win_create_errhandler_(entry_f_errhandler_fn *, MPI_Fint *, MPI_Fint *) ENTRY_F_WEAK;

ENTRY_API void mpi_comm_create_errhandler_(entry_f_errhandler_fn *fn, MPI_Fint *errhandler, MPI_Fint *ierror)
{
    MPI_Fint rc = MPI_SUCCESS;
    pmpi_comm_create_errhandler_(fn, errhandler, &rc);
    entry_f_return(ierror, record_errhandler("MPI_Comm_create_errhandler", rc, errhandler, fn, f_comm_caller));
}

ENTRY_API void mpi_win_create_errhandler_(entry_f_errhandler_fn *fn, MPI_Fint *errhandler, MPI_Fint *ierror)
{
    MPI_Fint rc = MPI_SUCCESS;
    pmpi_win_create_errhandler_(fn, errhandler, &rc);
    entry_f_return(ierror, record_errhandler("MPI_Win_create_errhandler", rc, errhandler, fn, f_win_caller));
}

#endif
