/* Meetings: the endpoints of this process that take part in one
 * construction call, whatever communicators they call it on, gather here
 * and one of them builds for all.  Used where the endpoints involved do not
 * share one communicator (MPI_Intercomm_create, whose two groups may share
 * processes; MPI_Comm_create_group, collective over a subgroup only).
 *
 * A meeting is named by three integers every participant computes alike.
 * Each participant brings a pointer to its own record; the last of the
 * `expected` participants to arrive calls drive(records, n, arg) with every
 * record (in arrival order) while the others wait, driving progress; drive
 * writes each participant's results into its record.  Everyone returns
 * drive's status. */
#ifndef EP_MEET_H
#define EP_MEET_H

#include "base/error.h"

#include <stdint.h>

typedef ep_status_t (*ep_meet_drive_fn)(void *const *records, int n, void *arg);

ep_status_t ep_meet(uint64_t k0, uint64_t k1, uint64_t k2, int expected, void *record, ep_meet_drive_fn drive,
                    void *arg);

/* Mixes the bits of x: for naming meetings after many integers. */
static inline uint64_t ep_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

#endif
