/* Open MPI's handles (abi/openmpi.h): the reserved handle range, and the
 * tables of Open MPI's predefined datatypes and operations.  Compiled to
 * nothing for MPICH. */
#include "abi/handle.h"

#if defined(OPEN_MPI)

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Until the constructor ran: no pointer p has p - base below the span. */
uintptr_t ep_ompi_handle_base = (uintptr_t)0 - 2 * EP_OMPI_HANDLE_SPAN;

uintptr_t ep_ompi_dt_lo = 1, ep_ompi_dt_hi = 0;
ep_ompi_dt_slot_t ep_ompi_dt_table[EP_OMPI_DT_SLOTS];

__attribute__((constructor)) static void reserve_handle_range(void)
{
    /* One page beyond the span, so that a field read at a small offset from
     * the last handle faults inside the reservation too. */
    void *p = mmap(NULL, EP_OMPI_HANDLE_SPAN + 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        static const char msg[] = "epmpi: cannot reserve the address range of endpoint handles (1 GiB of address "
                                  "space, no memory): is the address space limited (ulimit -v)?\n";
        ssize_t ignored = write(2, msg, sizeof msg - 1);
        (void)ignored;
        _exit(70);
    }
    ep_ompi_handle_base = (uintptr_t)p;
}

/* ---- a handle that reached Open MPI ------------------------------------------
 * Open MPI reads the object a handle points to, so an endpoint handle that
 * reaches it (a PMPI_ call of the program's, or a tool's) faults inside
 * the reserved range.  The fault is told apart from any other and named,
 * then the job ends as it would have; other faults go to the handler that
 * was there before (Open MPI's, a sanitizer's, the default). */

static struct sigaction before_segv, before_bus;

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
    uintptr_t d = (uintptr_t)si->si_addr - ep_ompi_handle_base;
    struct sigaction *before = sig == SIGBUS ? &before_bus : &before_segv;
    if (d < EP_OMPI_HANDLE_SPAN + 4096) {
        char msg[256];
        int n = snprintf(msg, sizeof msg,
                         "epmpi: an endpoint handle (%p, registry id %lu) reached Open MPI itself, which cannot "
                         "take it: a PMPI_ call, or a tool's, was given a handle epmpi made\n",
                         si->si_addr, (unsigned long)d);
        ssize_t ignored = write(2, msg, n > 0 && (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        (void)ignored;
    }
    sigaction(sig, before, NULL); /* the fault repeats under the handler that was there */
    if ((before->sa_flags & SA_SIGINFO) && before->sa_sigaction)
        before->sa_sigaction(sig, si, ctx);
    else if (before->sa_handler != SIG_DFL && before->sa_handler != SIG_IGN)
        before->sa_handler(sig);
}

/* After PMPI_Init_thread, so that Open MPI's own handler is the one before. */
static void catch_leaked_handles(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &before_segv);
    sigaction(SIGBUS, &sa, &before_bus);
}

/* ---- predefined objects ------------------------------------------------------ */

static void dt_add(MPI_Datatype t)
{
    int size = 0;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &size) != MPI_SUCCESS || size <= 0)
        return; /* not available in this build (an unsupported Fortran kind) */
    uintptr_t p = (uintptr_t)t;
    unsigned i = ep_ompi_dt_hash(p);
    while (ep_ompi_dt_table[i].handle && ep_ompi_dt_table[i].handle != p)
        i = (i + 1) % EP_OMPI_DT_SLOTS;
    ep_ompi_dt_table[i] = (ep_ompi_dt_slot_t){p, size};
    if (ep_ompi_dt_lo > ep_ompi_dt_hi || p < ep_ompi_dt_lo)
        ep_ompi_dt_lo = p;
    if (p > ep_ompi_dt_hi)
        ep_ompi_dt_hi = p;
}

int ep_abi_init(void)
{
    catch_leaked_handles();
    /* The contiguous predefined types (the pair types of MINLOC/MAXLOC have
     * gaps, and are treated as derived ones, as on MPICH). */
    static const MPI_Datatype contiguous[] = {
        MPI_BYTE,
        MPI_PACKED,
        MPI_CHAR,
        MPI_SHORT,
        MPI_INT,
        MPI_LONG,
        MPI_FLOAT,
        MPI_DOUBLE,
        MPI_LONG_DOUBLE,
        MPI_UNSIGNED_CHAR,
        MPI_SIGNED_CHAR,
        MPI_UNSIGNED_SHORT,
        MPI_UNSIGNED_LONG,
        MPI_UNSIGNED,
        MPI_WCHAR,
        MPI_LONG_LONG_INT,
        MPI_LONG_LONG,
        MPI_UNSIGNED_LONG_LONG,
        MPI_CHARACTER,
        MPI_LOGICAL,
        MPI_INTEGER,
        MPI_REAL,
        MPI_DOUBLE_PRECISION,
        MPI_COMPLEX,
        MPI_DOUBLE_COMPLEX,
        MPI_INT8_T,
        MPI_UINT8_T,
        MPI_INT16_T,
        MPI_UINT16_T,
        MPI_INT32_T,
        MPI_UINT32_T,
        MPI_INT64_T,
        MPI_UINT64_T,
        MPI_AINT,
        MPI_OFFSET,
        MPI_COUNT,
        MPI_C_BOOL,
        MPI_C_COMPLEX,
        MPI_C_FLOAT_COMPLEX,
        MPI_C_DOUBLE_COMPLEX,
        MPI_C_LONG_DOUBLE_COMPLEX,
        MPI_CXX_BOOL,
        MPI_CXX_FLOAT_COMPLEX,
        MPI_CXX_DOUBLE_COMPLEX,
        MPI_CXX_LONG_DOUBLE_COMPLEX,
#ifdef MPI_LOGICAL1 /* Fortran kinds: defined only when the build has them */
        MPI_LOGICAL1,
#endif
#ifdef MPI_LOGICAL2
        MPI_LOGICAL2,
#endif
#ifdef MPI_LOGICAL4
        MPI_LOGICAL4,
#endif
#ifdef MPI_LOGICAL8
        MPI_LOGICAL8,
#endif
#ifdef MPI_INTEGER1
        MPI_INTEGER1,
#endif
#ifdef MPI_INTEGER2
        MPI_INTEGER2,
#endif
#ifdef MPI_INTEGER4
        MPI_INTEGER4,
#endif
#ifdef MPI_INTEGER8
        MPI_INTEGER8,
#endif
#ifdef MPI_INTEGER16
        MPI_INTEGER16,
#endif
#ifdef MPI_REAL4
        MPI_REAL4,
#endif
#ifdef MPI_REAL8
        MPI_REAL8,
#endif
#ifdef MPI_REAL16
        MPI_REAL16,
#endif
#ifdef MPI_COMPLEX8
        MPI_COMPLEX8,
#endif
#ifdef MPI_COMPLEX16
        MPI_COMPLEX16,
#endif
#ifdef MPI_COMPLEX32
        MPI_COMPLEX32,
#endif
    };
    for (size_t i = 0; i < sizeof contiguous / sizeof *contiguous; i++)
        dt_add(contiguous[i]);
    return ep_ompi_dt_lo <= ep_ompi_dt_hi ? 0 : -1;
}

int ep_op_is_predefined(MPI_Op op)
{
    static const MPI_Op predefined[] = {MPI_MAX, MPI_MIN,  MPI_SUM,  MPI_PROD,   MPI_LAND,   MPI_BAND,    MPI_LOR,
                                        MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
    for (size_t i = 0; i < sizeof predefined / sizeof *predefined; i++)
        if (op == predefined[i])
            return 1;
    return 0;
}

#endif
