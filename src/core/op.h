/* Reduction operations applied by epmpi itself.  PMPI_Reduce_local takes
 * MPICH's global lock under MPI_THREAD_MULTIPLE, so endpoints folding at
 * the same time would queue on it; the predefined operations on the common
 * predefined types run here instead, lock-free.  Everything else (user
 * operations, pair types, other types) still goes to PMPI_Reduce_local. */
#ifndef EP_OP_H
#define EP_OP_H

#include "base/error.h"

#include <mpi.h>

/* inout[i] = in[i] op inout[i] for count elements; 0 when (t, op) is not
 * one epmpi applies itself (nothing done). */
int ep_op_apply(const void *in, void *inout, int count, MPI_Datatype t, MPI_Op op);

/* Whether MPI defines the predefined operation op on the type t (the
 * groups of MPI-4.0 section 6.9.2; MPI_REPLACE and MPI_NO_OP on every
 * type): EP_ERR_OP, explained with both names, when it does not; EP_OK
 * also when t or op is in none of the groups (the MPI decides: MPICH also
 * takes MPI_CHAR, for example). */
ep_status_t ep_op_check_table(MPI_Op op, MPI_Datatype t);
static inline ep_status_t ep_op_check(MPI_Op op, MPI_Datatype t)
{
    /* the table's commonest answers first: every reduction asks */
    if ((op == MPI_SUM || op == MPI_MAX || op == MPI_MIN) && (t == MPI_DOUBLE || t == MPI_INT))
        return EP_OK;
    return ep_op_check_table(op, t);
}

/* MPI_Op_commutative without MPICH for the predefined operations. */
int ep_op_commutative(MPI_Op op, int *commute);

/* The same for any (t, op): here when it can, else PMPI_Reduce_local. */
int ep_op_reduce_local(const void *in, void *inout, int count, MPI_Datatype t, MPI_Op op);

/* A user operation that non-blocking operations use stays until the last
 * of them is over (as datatypes do, datatype.h): each holds it, and
 * MPI_Op_free of a held operation only marks it (ep_op_free_deferred: 1;
 * -1 when it was marked already, 0 when it is not held); the last release
 * frees it in MPICH.  Predefined operations are ignored.  ep_op_hold:
 * EP_ERR_NO_MEM when the hold cannot be recorded, and the caller must not
 * use op past its call then. */
ep_status_t ep_op_hold(MPI_Op op);
void ep_op_release(MPI_Op op);
int ep_op_free_deferred(MPI_Op op);

#endif
