! Fortran with mpi_f08 and epmpi_f08, in world mode (shapes PxT: thread t of
! process p, PMI_RANK, is rank p*T + t) and with MPI_Comm_create_endpoints
! (shapes P:a,b,..: MPI_Comm_compare of two handles of a process is
! MPI_ALIASED; thread i drives handle i).  MPICH's mpi_f08 routines without
! buffers call PMPI_ directly, so these run through epmpi's own mpi_f08 entry
! points.  Every rank checks: its rank and size, a ring (MPI_Sendrecv;
! MPI_Isend / MPI_Irecv / MPI_Waitall of 1000 doubles; MPI_Waitany's 1-based
! index; MPI_Test and MPI_Iprobe flags; MPI_STATUS(ES)_IGNORE; a blocking
! send of a non-contiguous array section), receives with MPI_ANY_SOURCE / MPI_ANY_TAG (type(MPI_Status),
! MPI_Get_count), MPI_Allreduce (MPI_SUM, and MPI_MAX with MPI_IN_PLACE),
! MPI_Alltoallw, MPI_Comm_split (colour rank mod 2, key -rank) and an
! MPI_Allreduce on the half, MPI_Comm_get_attr(MPI_TAG_UB) (the value), a
! keyval with Fortran callbacks through MPI_Comm_dup and MPI_Comm_free, a
! window (MPI_Win_create) with its predefined attributes and a keyval whose
! Fortran delete callback MPI_Win_free calls, names, a periodic ring with
! MPI_Neighbor_alltoall and a distributed graph given MPI_UNWEIGHTED,
! and errors with MPI_ERRORS_RETURN: MPI_Send to a bad rank (MPI_ERR_RANK, a
! message naming MPI_Send), MPI_Isend of a non-contiguous section
! (MPI_ERR_BUFFER: not taken on endpoints) and MPI_File_open (MPI_ERR_COMM:
! files on endpoints are not for mpi_f08); then with a Fortran error handler.
module f08_checks
    use mpi_f08
    use omp_lib
    implicit none
    integer :: ndeleted = 0, nerrors = 0

contains

    ! One thread reports and ends the job (the others wait: a STOP closes the
    ! units another thread may be writing to).
    subroutine fail(what)
        use, intrinsic :: iso_fortran_env, only: error_unit
        character(len=*), intent(in) :: what
        !$omp critical (fail)
        write (error_unit, '(a, i0, a, a)') 'FAIL (thread ', omp_get_thread_num(), '): ', what
        flush (error_unit)
        call MPI_Abort(MPI_COMM_WORLD, 1)
        stop 1
        !$omp end critical (fail)
    end subroutine fail

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        if (.not. ok) call fail(what)
    end subroutine check

    subroutine ranks(comm, want_rank, want_size)
        type(MPI_Comm), intent(in) :: comm
        integer, intent(in) :: want_rank, want_size
        integer :: r, n

        call MPI_Comm_rank(comm, r)
        call MPI_Comm_size(comm, n)
        call check(r == want_rank .and. n == want_size, 'MPI_Comm_rank / MPI_Comm_size')
        call ring(comm, r, n)
        call wildcard(comm, r, n)
        call reductions(comm, r, n)
        call split_halves(comm, r, n)
        call attributes(comm, r)
        call window(comm, r)
        call topology(comm, r, n)
        call errors(comm, n)
    end subroutine ranks

    ! A periodic ring (LOGICAL periods, MPI_Cart_shift) with
    ! MPI_Neighbor_alltoall, and a distributed graph given MPI_UNWEIGHTED.
    subroutine topology(comm, r, n)
        type(MPI_Comm), intent(in) :: comm
        integer, intent(in) :: r, n
        type(MPI_Comm) :: ring, g
        integer :: src, dst, sb(2), rb(2), indeg, outdeg, srcs(1), dsts(1), dw(1)
        logical :: weighted

        call MPI_Cart_create(comm, 1, [n], [.true.], .false., ring)
        call MPI_Cart_shift(ring, 0, 1, src, dst)
        call check(src == mod(r + n - 1, n) .and. dst == mod(r + 1, n), 'MPI_Cart_shift')
        sb = [100 * r, 100 * r + 1]
        rb = -1
        call MPI_Neighbor_alltoall(sb, 1, MPI_INTEGER, rb, 1, MPI_INTEGER, ring)
        ! the block from -1 is what that rank sent towards +1
        call check(rb(1) == 100 * src + 1 .and. rb(2) == 100 * dst, 'MPI_Neighbor_alltoall on a ring')
        call MPI_Comm_free(ring)
        call MPI_Dist_graph_create_adjacent(comm, 1, [mod(r + n - 1, n)], MPI_UNWEIGHTED, 1, [mod(r + 1, n)], &
                                            MPI_UNWEIGHTED, MPI_INFO_NULL, .false., g)
        call MPI_Dist_graph_neighbors_count(g, indeg, outdeg, weighted)
        call check(indeg == 1 .and. outdeg == 1 .and. .not. weighted, 'MPI_Dist_graph_neighbors_count')
        ! MPI_UNWEIGHTED for one output, an array for the other (Open MPI's
        ! interface makes both INTENT(OUT): one actual argument for both is
        ! an aliasing error there)
        call MPI_Dist_graph_neighbors(g, 1, srcs, MPI_UNWEIGHTED, 1, dsts, dw)
        call check(srcs(1) == mod(r + n - 1, n) .and. dsts(1) == mod(r + 1, n), 'MPI_Dist_graph_neighbors')
        call MPI_Comm_free(g)
    end subroutine topology

    subroutine ring(comm, r, n)
        type(MPI_Comm), intent(in) :: comm
        integer, intent(in) :: r, n
        integer :: left, right, got, i, idx, ierr
        integer :: strided(10), packed(5)
        type(MPI_Status) :: status, statuses(2)
        type(MPI_Request) :: reqs(2)
        double precision :: a(1000), b(1000)
        logical :: flag

        left = mod(r + n - 1, n)
        right = mod(r + 1, n)
        call MPI_Sendrecv(r, 1, MPI_INTEGER, right, 10, got, 1, MPI_INTEGER, left, 10, comm, status, ierr)
        call check(ierr == MPI_SUCCESS .and. got == left .and. status%MPI_SOURCE == left, 'ring: MPI_Sendrecv')
        do i = 1, 1000
            a(i) = r * 1000 + i
        end do
        b = -1
        call MPI_Irecv(b, 1000, MPI_DOUBLE_PRECISION, left, 11, comm, reqs(1))
        call MPI_Isend(a, 1000, MPI_DOUBLE_PRECISION, right, 11, comm, reqs(2))
        call MPI_Waitall(2, reqs, statuses)
        call check(statuses(1)%MPI_SOURCE == left .and. statuses(1)%MPI_TAG == 11, 'ring: MPI_Waitall statuses')
        do i = 1, 1000
            if (b(i) /= left * 1000 + i) call fail('ring: 1000 doubles')
        end do
        ! MPI_Waitany counts from 1; MPI_Test and MPI_Iprobe give LOGICALs.
        got = -1
        call MPI_Irecv(got, 1, MPI_INTEGER, left, 12, comm, reqs(2))
        reqs(1) = MPI_REQUEST_NULL
        call MPI_Test(reqs(1), flag, MPI_STATUS_IGNORE)
        call check(transfer(flag, 0) == transfer(.true., 0), 'MPI_Test of MPI_REQUEST_NULL: not .true.')
        ! The posted receive, not MPI_Iprobe, gets the message.
        call MPI_Iprobe(left, 12, comm, flag, status)
        call check(.not. flag, 'MPI_Iprobe found a message a receive was posted for')
        call MPI_Send(r, 1, MPI_INTEGER, right, 12, comm)
        call MPI_Waitany(2, reqs, idx, status)
        call check(idx == 2 .and. got == left .and. status%MPI_TAG == 12, 'ring: MPI_Waitany index')
        ! mpi_f08's MPI_STATUS(ES)_IGNORE are objects: nothing may be written there.
        call MPI_Irecv(got, 1, MPI_INTEGER, left, 14, comm, reqs(1))
        call MPI_Isend(r, 1, MPI_INTEGER, right, 14, comm, reqs(2))
        call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
        call check(MPI_STATUS_IGNORE%MPI_TAG == 0 .and. MPI_STATUSES_IGNORE(1)%MPI_TAG == 0, &
                   'a status was written to MPI_STATUS_IGNORE or MPI_STATUSES_IGNORE')
        ! A non-contiguous section with a blocking call: MPICH's binding makes
        ! a datatype and calls MPI_Send.
        strided = [(r * 100 + i, i = 1, 10)]
        call MPI_Sendrecv(strided(1:10:2), 5, MPI_INTEGER, right, 13, packed, 5, MPI_INTEGER, left, 13, comm, &
                          MPI_STATUS_IGNORE)
        call check(all(packed == [(left * 100 + i, i = 1, 10, 2)]), 'ring: a strided section')
    end subroutine ring

    subroutine wildcard(comm, r, n)
        type(MPI_Comm), intent(in) :: comm
        integer, intent(in) :: r, n
        integer :: v(4), i, cnt, src
        type(MPI_Status) :: status
        logical :: seen(0:n - 1)

        if (r == 0) then
            seen = .false.
            do i = 1, n - 1
                v = -1
                call MPI_Recv(v, 4, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, status)
                src = status%MPI_SOURCE
                call MPI_Get_count(status, MPI_INTEGER, cnt)
                call check(src > 0 .and. src < n, 'wildcard: source')
                call check(status%MPI_TAG == 100 + src .and. cnt == mod(src, 4) + 1 .and. v(1) == 7 * src, &
                           'wildcard: tag, count or value')
                call check(.not. seen(src), 'wildcard: one source twice')
                seen(src) = .true.
            end do
        else
            v = 7 * r
            call MPI_Send(v, mod(r, 4) + 1, MPI_INTEGER, 0, 100 + r, comm)
        end if
        call MPI_Barrier(comm)
    end subroutine wildcard

    subroutine reductions(comm, r, n)
        type(MPI_Comm), intent(in) :: comm
        integer, intent(in) :: r, n
        integer :: s, q
        integer, allocatable :: sendv(:), recvv(:), counts(:), displs(:)
        type(MPI_Datatype), allocatable :: types(:)
        double precision :: x

        call MPI_Allreduce(r, s, 1, MPI_INTEGER, MPI_SUM, comm)
        call check(s == n * (n - 1) / 2, 'MPI_Allreduce sum')
        x = r
        call MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE_PRECISION, MPI_MAX, comm)
        call check(x == n - 1, 'MPI_Allreduce max in place')
        ! MPI_Alltoallw: one integer to each rank.
        allocate (sendv(n), recvv(n), counts(n), displs(n), types(n))
        sendv = [(r * 1000 + q, q = 0, n - 1)]
        recvv = -1
        counts = 1
        displs = [(4 * q, q = 0, n - 1)]
        types = MPI_INTEGER
        call MPI_Alltoallw(sendv, counts, displs, types, recvv, counts, displs, types, comm)
        call check(all(recvv == [(q * 1000 + r, q = 0, n - 1)]), 'MPI_Alltoallw')
    end subroutine reductions

    subroutine split_halves(comm, r, n)
        type(MPI_Comm), intent(in) :: comm
        integer, intent(in) :: r, n
        type(MPI_Comm) :: half
        integer :: hr, hs, s, want, q

        call MPI_Comm_split(comm, mod(r, 2), -r, half)
        call MPI_Comm_rank(half, hr)
        call MPI_Comm_size(half, hs)
        call check(hs == (n + 1 - mod(r, 2)) / 2 .and. hr == hs - 1 - r / 2, 'MPI_Comm_split rank / size')
        call MPI_Allreduce(r, s, 1, MPI_INTEGER, MPI_SUM, half)
        want = 0
        do q = mod(r, 2), n - 1, 2
            want = want + q
        end do
        call check(s == want, 'MPI_Allreduce on the split half')
        call MPI_Comm_free(half)
        call check(half == MPI_COMM_NULL, 'MPI_Comm_free of the half')
    end subroutine split_halves

    subroutine copy_cb(oldcomm, keyval, extra, val_in, val_out, flag, ierror)
        type(MPI_Comm) :: oldcomm
        integer :: keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: extra, val_in, val_out
        logical :: flag
        if (oldcomm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID) stop 2
        val_out = val_in + extra
        flag = .true.
        ierror = MPI_SUCCESS
    end subroutine copy_cb

    subroutine delete_cb(comm, keyval, val, extra, ierror)
        type(MPI_Comm) :: comm
        integer :: keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: val, extra
        if (comm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID .or. val < 1000 .or. extra /= 5) stop 3
        !$omp atomic update
        ndeleted = ndeleted + 1
        ierror = MPI_SUCCESS
    end subroutine delete_cb

    subroutine attributes(comm, r)
        type(MPI_Comm), intent(in) :: comm
        integer, intent(in) :: r
        type(MPI_Comm) :: dup
        integer :: key, before, after
        integer(kind=MPI_ADDRESS_KIND) :: val, extra
        logical :: flag

        call MPI_Comm_get_attr(comm, MPI_TAG_UB, val, flag)
        call check(flag .and. val >= 268435455, 'MPI_TAG_UB is at least 2**28-1, as MPICH''s')
        extra = 5
        call MPI_Comm_create_keyval(copy_cb, delete_cb, key, extra)
        val = 1000 + r
        call MPI_Comm_set_attr(comm, key, val)
        call MPI_Comm_dup(comm, dup)
        call MPI_Comm_get_attr(dup, key, val, flag)
        call check(flag .and. val == 1000 + r + 5, 'keyval: the Fortran copy callback')
        !$omp atomic read
        before = ndeleted
        call MPI_Comm_free(dup)
        call MPI_Comm_delete_attr(comm, key)
        call MPI_Comm_get_attr(comm, key, val, flag)
        call check(.not. flag, 'keyval: attribute still there after MPI_Comm_delete_attr')
        !$omp atomic read
        after = ndeleted
        call check(after >= before + 2, 'keyval: the Fortran delete callback')
        call MPI_Comm_free_keyval(key)
    end subroutine attributes

    subroutine win_delete_cb(win, keyval, val, extra, ierror)
        type(MPI_Win) :: win
        integer :: keyval, ierror
        integer(kind=MPI_ADDRESS_KIND) :: val, extra
        if (win == MPI_WIN_NULL .or. keyval == MPI_KEYVAL_INVALID .or. val < 2000 .or. extra /= 5) stop 4
        !$omp atomic update
        ndeleted = ndeleted + 1
        ierror = MPI_SUCCESS
    end subroutine win_delete_cb

    subroutine window(comm, r)
        type(MPI_Comm), intent(in) :: comm
        integer, intent(in) :: r
        type(MPI_Win) :: win
        type(MPI_Errhandler) :: weh
        integer :: key, before, after, ierr
        integer, target :: buf(10)
        integer(kind=MPI_ADDRESS_KIND) :: val, extra, addr
        logical :: flag

        val = 40
        call MPI_Win_create(buf, val, 4, MPI_INFO_NULL, comm, win)
        call MPI_Win_get_attr(win, MPI_WIN_SIZE, val, flag, ierr)
        call check(ierr == MPI_SUCCESS .and. flag .and. val == 40, 'MPI_WIN_SIZE')
        call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, val, flag)
        call check(flag .and. val == 4, 'MPI_WIN_DISP_UNIT')
        call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, val, flag)
        call check(flag .and. val == MPI_WIN_FLAVOR_CREATE, 'MPI_WIN_CREATE_FLAVOR')
        call MPI_Win_get_attr(win, MPI_WIN_MODEL, val, flag)
        call check(flag .and. (val == MPI_WIN_UNIFIED .or. val == MPI_WIN_SEPARATE), 'MPI_WIN_MODEL')
        call MPI_Get_address(buf, addr)
        call MPI_Win_get_attr(win, MPI_WIN_BASE, val, flag)
        call check(flag .and. val == addr, 'MPI_WIN_BASE')
        extra = 5
        call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete_cb, key, extra)
        val = 2000 + r
        call MPI_Win_set_attr(win, key, val)
        val = 0
        call MPI_Win_get_attr(win, key, val, flag, ierr)
        call check(ierr == MPI_SUCCESS .and. flag .and. val == 2000 + r, 'MPI_Win_get_attr of a user keyval')
        ! A Fortran error handler of the window, called with the window.
        call MPI_Win_create_errhandler(count_win_error, weh)
        call MPI_Win_set_errhandler(win, weh)
        !$omp atomic read
        before = nerrors
        call MPI_Win_lock(MPI_LOCK_SHARED, -7, 0, win, ierr)
        !$omp atomic read
        after = nerrors
        call check(ierr /= MPI_SUCCESS .and. after >= before + 1, 'the Fortran window error handler was not called')
        call MPI_Errhandler_free(weh)
        !$omp atomic read
        before = ndeleted
        call MPI_Win_free(win, ierr)
        call check(ierr == MPI_SUCCESS .and. win == MPI_WIN_NULL, 'MPI_Win_free')
        !$omp atomic read
        after = ndeleted
        call check(after >= before + 1, 'window keyval: the Fortran delete callback')
        call MPI_Win_free_keyval(key)
    end subroutine window

    subroutine count_error(comm, code)
        type(MPI_Comm) :: comm
        integer :: code
        if (comm == MPI_COMM_NULL .or. code == MPI_SUCCESS) stop 4
        !$omp atomic update
        nerrors = nerrors + 1
    end subroutine count_error

    subroutine count_win_error(win, code)
        type(MPI_Win) :: win
        integer :: code
        if (win == MPI_WIN_NULL .or. code == MPI_SUCCESS) stop 5
        !$omp atomic update
        nerrors = nerrors + 1
    end subroutine count_win_error

    subroutine errors(comm, n)
        type(MPI_Comm), intent(in) :: comm
        integer, intent(in) :: n
        type(MPI_Comm) :: dup
        type(MPI_Request) :: req
        type(MPI_Errhandler) :: eh
        type(MPI_File) :: fh
        integer :: code, cls, length, v(10), before, after
        character(len=MPI_MAX_ERROR_STRING) :: msg
        character(len=MPI_MAX_OBJECT_NAME) :: name

        v = 0
        call MPI_Comm_dup(comm, dup)
        call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
        call MPI_Send(v, 1, MPI_INTEGER, n + 5, 0, dup, code)
        call check(code /= MPI_SUCCESS, 'MPI_Send to a bad rank succeeded')
        call MPI_Error_class(code, cls)
        call check(cls == MPI_ERR_RANK, 'MPI_Send to a bad rank: not MPI_ERR_RANK')
        call MPI_Error_string(code, msg, length)
        call check(index(msg(1:length), 'MPI_Send') > 0, 'the message does not name MPI_Send: '//msg(1:length))
        if (MPI_SUBARRAYS_SUPPORTED) then
            ! MPICH's mpi_f08 passes array descriptors, which epmpi reads
            call MPI_Isend(v(1:10:2), 5, MPI_INTEGER, 0, 0, dup, req, code)
            call MPI_Error_class(code, cls)
            call check(cls == MPI_ERR_BUFFER, 'MPI_Isend of a strided section on an endpoint: not MPI_ERR_BUFFER')
            call MPI_Error_string(code, msg, length)
            call check(index(msg(1:length), 'MPI_Isend') > 0 .and. index(msg(1:length), 'non-contiguous') > 0, &
                       'MPI_Isend of a strided section: '//msg(1:length))
            ! files on endpoint communicators are for C, mpif.h and use mpi
            call MPI_File_open(dup, '/tmp/epmpi-f08-refused', MPI_MODE_RDONLY, MPI_INFO_NULL, fh, code)
            call MPI_Error_class(code, cls)
            call check(cls == MPI_ERR_COMM, 'MPI_File_open of mpi_f08 on an endpoint: not MPI_ERR_COMM')
        else
            ! Open MPI's mpi_f08 calls its mpif.h routines, which reach epmpi:
            ! a file on an endpoint communicator, here one that is absent
            call MPI_File_open(dup, '/tmp/epmpi-f08-absent/none', MPI_MODE_RDONLY, MPI_INFO_NULL, fh, code)
            call MPI_Error_class(code, cls)
            call check(cls == MPI_ERR_NO_SUCH_FILE, 'MPI_File_open of an absent file: not MPI_ERR_NO_SUCH_FILE')
        end if
        ! A Fortran error handler, called by epmpi on the endpoint.
        call MPI_Comm_create_errhandler(count_error, eh)
        call MPI_Comm_set_errhandler(dup, eh)
        !$omp atomic read
        before = nerrors
        call MPI_Send(v, 1, MPI_INTEGER, -3, 0, dup, code)
        !$omp atomic read
        after = nerrors
        call check(code /= MPI_SUCCESS .and. after >= before + 1, 'the Fortran error handler was not called')
        call MPI_Errhandler_free(eh)
        call MPI_Comm_set_name(dup, 'fortran dup   ')
        call MPI_Comm_get_name(dup, name, length)
        call check(name == 'fortran dup' .and. length == 11, 'MPI_Comm_get_name: '//name)
        call MPI_Comm_free(dup)
    end subroutine errors
end module f08_checks

program f_f08
    use mpi_f08
    use epmpi_f08
    use omp_lib
    use f08_checks
    implicit none
    integer :: provided, nproc, me, t, nlocal, first, total, res
    integer, allocatable :: counts(:)
    type(MPI_Comm), allocatable :: handles(:)
    character(len=64) :: arg

    call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided)
    call check(provided == MPI_THREAD_MULTIPLE, 'MPI_Init_thread: not MPI_THREAD_MULTIPLE')
    call get_environment_variable('EPMPI_ENDPOINTS', arg)
    t = 0
    if (len_trim(arg) > 0) read (arg, *) t
    if (t > 0) then
        ! the process's place: hydra's variables, or Open MPI's mpirun's
        call get_environment_variable('PMI_RANK', arg)
        if (len_trim(arg) == 0) call get_environment_variable('OMPI_COMM_WORLD_RANK', arg)
        read (arg, *) me
        call get_environment_variable('PMI_SIZE', arg)
        if (len_trim(arg) == 0) call get_environment_variable('OMPI_COMM_WORLD_SIZE', arg)
        read (arg, *) nproc
        !$omp parallel num_threads(t)
        call ranks(MPI_COMM_WORLD, me * t + omp_get_thread_num(), nproc * t)
        !$omp end parallel
    else
        call MPI_Comm_rank(MPI_COMM_WORLD, me)
        call MPI_Comm_size(MPI_COMM_WORLD, nproc)
        allocate (counts(nproc))
        call get_command_argument(1, arg)
        read (arg, *) counts
        nlocal = counts(me + 1)
        first = sum(counts(1:me))
        total = sum(counts)
        allocate (handles(max(nlocal, 1)))
        call MPI_Comm_create_endpoints(MPI_COMM_WORLD, nlocal, MPI_INFO_NULL, handles)
        if (nlocal >= 2) then
            call MPI_Comm_compare(handles(1), handles(2), res)
            call check(res == MPI_ALIASED, 'two handles of one process are not MPI_ALIASED')
        end if
        if (nlocal > 0) then
            !$omp parallel num_threads(nlocal)
            call ranks(handles(omp_get_thread_num() + 1), first + omp_get_thread_num(), total)
            call MPI_Comm_free(handles(omp_get_thread_num() + 1))
            !$omp end parallel
        end if
        deallocate (counts, handles) ! main-program arrays stay allocated at exit otherwise
    end if
    call MPI_Finalize()
end program f_f08
