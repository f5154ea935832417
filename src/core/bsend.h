/* Buffered-send space (MPI_Buffer_attach): a buffered message holds its
 * packed size plus MPI_BSEND_OVERHEAD of the attached bytes from its start
 * until its data has left (the message paths give it back), as MPI's
 * buffer model counts it. */
#ifndef EP_BSEND_H
#define EP_BSEND_H

#include <stddef.h>
#include <stdint.h>

void ep_bsend_attach(size_t size);
/* Waits until the buffered messages of endpoints have left the buffer. */
void ep_bsend_flush(void);
/* Bytes of the endpoints' buffered messages still in the buffer. */
size_t ep_bsend_in_flight(void);
/* ep_bsend_flush, then forgets the buffer; returns the size attached. */
size_t ep_bsend_detach(void);
/* 1 when n bytes of the attached space were free and are now held; before
 * saying no, reclaims the space of buffered sends the transport has
 * finished, waiting a little (20 ms at most) for those in flight. */
int ep_bsend_reserve(size_t n);
/* That wait; unit tests lengthen it so a loaded machine cannot outlast it. */
void ep_bsend_set_reclaim_wait(uint64_t ns);
/* Gives back space a buffered message held. */
void ep_bsend_release(size_t n);

#endif
