! epmpi: MPI endpoints for Fortran programs that use mpi_f08.
!     use mpi_f08
!     use epmpi_f08
!     call MPI_Comm_create_endpoints(parent_comm, my_num_ep, info, out_comm_hdls [, ierror])
! The values match epmpi.h.  Built with the mpifort that configure found
! (a .mod file is specific to one compiler version).
module epmpi_f08
    use mpi_f08, only: MPI_Comm, MPI_Info
    implicit none
    private
    public :: MPI_ALIASED, MPI_ERR_ENDPOINTS, MPI_Comm_create_endpoints, MPIX_Comm_create_endpoints

    ! MPI_Comm_compare: two handles of one communicator at different ranks.
    integer, parameter :: MPI_ALIASED = 4
    ! Error class: endpoints could not be created.
    integer, parameter :: MPI_ERR_ENDPOINTS = 120

    interface MPI_Comm_create_endpoints
        subroutine MPI_Comm_create_endpoints_f08(parent_comm, my_num_ep, info, out_comm_hdls, ierror)
            import :: MPI_Comm, MPI_Info
            implicit none
            type(MPI_Comm), intent(in) :: parent_comm
            integer, intent(in) :: my_num_ep
            type(MPI_Info), intent(in) :: info
            type(MPI_Comm), intent(out) :: out_comm_hdls(*)
            integer, optional, intent(out) :: ierror
        end subroutine MPI_Comm_create_endpoints_f08
    end interface MPI_Comm_create_endpoints

    ! MPICH's name for it.
    interface MPIX_Comm_create_endpoints
        procedure :: MPI_Comm_create_endpoints_f08
    end interface MPIX_Comm_create_endpoints
end module epmpi_f08
