! Fortran with the mpi module and epmpif.h, in world mode and with
! MPI_COMM_CREATE_ENDPOINTS: the checks are in f_body.inc.
program f_usempi
    use mpi
    use omp_lib
    implicit none
    include 'epmpif.h'
    include 'f_body.inc'
end program f_usempi

include 'f_callbacks.inc'
