! epmpi: MPI endpoints for Fortran programs that use mpif.h or the mpi
! module.  Include it after them:
!       include 'mpif.h'          (or: use mpi)
!       include 'epmpif.h'
! and call
!       MPI_COMM_CREATE_ENDPOINTS(PARENT_COMM, MY_NUM_EP, INFO,
!                                 OUT_COMM_HDLS, IERROR)
! with INTEGER arguments (OUT_COMM_HDLS an array of MY_NUM_EP handles).
! Valid as fixed and as free source form.  The values match epmpi.h.
      INTEGER MPI_ALIASED
      PARAMETER (MPI_ALIASED=4)
      INTEGER MPI_ERR_ENDPOINTS
      PARAMETER (MPI_ERR_ENDPOINTS=120)
      EXTERNAL MPI_COMM_CREATE_ENDPOINTS
      EXTERNAL MPIX_COMM_CREATE_ENDPOINTS
