! epmpi from Fortran (mpi_f08): MPI_Comm_create_endpoints gives this process
! one rank of a new communicator per OpenMP thread, and each thread drives
! its own.  Build and run (not in world mode: no -t):
!   mpifort -fopenmp -I<prefix>/include hello_endpoints.f90 -L<prefix>/lib -lepmpi
!   OMP_NUM_THREADS=2 epmpiexec -n 2 ./a.out
program hello_endpoints
    use mpi_f08
    use epmpi_f08
    use omp_lib
    implicit none
    integer :: provided, n
    type(MPI_Comm), allocatable :: ep(:)

    call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided)
    n = omp_get_max_threads()
    allocate (ep(n))
    call MPI_Comm_create_endpoints(MPI_COMM_WORLD, n, MPI_INFO_NULL, ep)
    !$omp parallel num_threads(n)
    call hello(ep(omp_get_thread_num() + 1))
    !$omp end parallel
    call MPI_Finalize()

contains

    subroutine hello(comm)
        type(MPI_Comm), intent(inout) :: comm
        integer :: rank, size, total

        call MPI_Comm_rank(comm, rank)
        call MPI_Comm_size(comm, size)
        call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, comm)
        print '(a, i0, a, i0, a, i0, a, i0, a)', 'OpenMP thread ', omp_get_thread_num(), ': rank ', rank, &
            ' of ', size, ' (sum of ranks ', total, ')'
        call MPI_Comm_free(comm)
    end subroutine hello
end program hello_endpoints
