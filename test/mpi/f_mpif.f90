! Fortran with mpif.h and epmpif.h, in world mode and with
! MPI_COMM_CREATE_ENDPOINTS: the checks are in f_body.inc.
program f_mpif
    use omp_lib
    implicit none
    include 'mpif.h'
    include 'epmpif.h'
    include 'f_body.inc'
end program f_mpif

include 'f_callbacks.inc'
