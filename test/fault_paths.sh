#!/bin/sh
# Error paths under injected faults (test/fault/fault.c): each case runs
# test/fault/fault_cases in world mode 2 x 2 with one chosen failure, over
# the MPI transport (net.c, whose header ring and payloads these are), and
# checks how the job ends.
#   payload, isend  the payload of a 1 MiB message between processes cannot
#           be sent after its header (the first PMPI send of 1000 elements
#           or more in process 0 fails): the sender gets MPI_ERR_OTHER
#           saying so, the receiver MPI_ERR_OTHER saying the sender failed,
#           and the next message between them arrives whole;
#   dst, bytes, flags  a header arrives with that field spoilt: the receiving
#           process stops with a message, without using the field;
#   ring    the header ring's buffers (the first allocation of 400 kB or
#           more) cannot be had: the job stops with an out-of-memory
#           message, no crash;
# and over the UCX transport (src/transport/ucx.c), when epmpi was built with it:
#   ucx send, ucx connect  UCX cannot start a 1 MiB send, or connect to
#           the receiver: that MPI_Send fails with MPI_ERR_OTHER saying
#           nothing was sent, and the same send again arrives whole (its
#           envelope goes through the node inbox, its data over UCX);
#   inbox irecv  UCX cannot receive the data of a 1 MiB message whose
#           envelope came through the node inbox and matched: the receive
#           fails saying the data were dropped, the sender completes, and
#           the next message arrives whole;
#   inbox map  process 0 cannot map the other's node inboxes at MPI_Init
#           (its second shm_open fails): the node goes without them
#           (--verbose says why, in both processes) and messages flow
#           over UCX;
#   inbox make  process 0 cannot make its own (its first shm_open fails):
#           likewise;
#   file    process 0's first pwrite of a file's own descriptor fails
#           with ENOSPC: that rank's MPI_File_write_at_all returns
#           MPI_ERR_NO_SPACE naming the pwrite, its bytes and offset and
#           the system's reason; the other ranks' and the next writes
#           succeed;
#   init alloc K  the K-th allocation of epmpi's, K = 1 to 40, fails in
#           both processes during MPI_Init and a barrier (the transports,
#           the node inboxes, the world endpoints): the job runs or stops
#           with a message, and never crashes or hangs (the init case: a
#           failed send later on would leave its receiver waiting, as MPI
#           has it);
# and with the node inboxes off (EPMPI_SHM=0), every message over UCX:
#   ucx irecv  UCX cannot receive a 1 MiB message that epmpi matched: the
#           receive fails saying the data were dropped, the sender's
#           rendezvous still completes (no hang), and the next message
#           arrives whole;
#   ucx post  a blocking receive cannot be posted in UCX: epmpi's own
#           matching takes it, and it succeeds.
# Exit 0 passed, 1 failed, 77 skipped.
: "${EP_FAULT_LIB:?}" "${EP_FAULT_CASES:?}" "${EP_LIB:?}"
MPIEXEC=${BENCH_MPIEXEC:-mpiexec}
MPI_KIND=${EP_MPI_KIND:-mpich}
# shellcheck source=bench/mpi-launch.sh
. "${EP_SRCDIR:?}/bench/mpi-launch.sh"
preload=$EP_LIB:$EP_FAULT_LIB
[ -n "$EP_SAN_PRELOAD" ] && preload=$EP_SAN_PRELOAD:$preload
# Jobs that stop on an error leave memory behind (leaks are other tests'
# business); any other sanitizer report still ends the job.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0

# run CASE ENV... : runs the case, output in $out; ENV is -genv NAME VALUE
# triples (mpi_launch: -x NAME=VALUE for Open MPI).
run() {
    c=$1; shift
    out=$(mpi_launch 60 -n 2 -genv EPMPI_ENDPOINTS 2 -genv OMP_NUM_THREADS 2 "$@" \
          -genv LD_PRELOAD "$preload" "$EP_FAULT_CASES" "$c" 2>&1)
    code=$?
    echo "--- $c ($*): exit $code"
    echo "$out" | sed 's/^/    /'
}
want() { # want WHAT PATTERN: the output holds a line matching PATTERN
    if echo "$out" | grep -q -- "$2"; then :; else echo "FAIL: $1: no line matching '$2'"; status=1; fi
}
wont() {
    if echo "$out" | grep -q -- "$2"; then echo "FAIL: $1: a line matches '$2'"; status=1; fi
}
ended_ok() { # the job finished with 0
    [ $code -eq 0 ] || { echo "FAIL: $1: the job ended with $code"; status=1; }
}
stopped() { # the job stopped by itself, not by the timeout
    [ $code -ne 0 ] && [ $code -ne 124 ] && [ $code -ne 137 ] || { echo "FAIL: $1: exit $code"; status=1; }
}

for c in payload isend; do
    run $c -genv EPMPI_TRANSPORT mpi -genv EPMPI_FAULT_NTH PMPI_Isend:1,PMPI_Issend:1 -genv EPMPI_FAULT_MIN 1000 -genv EPMPI_FAULT_RANK 0
    want "$c" "epfault: failing PMPI_Isend"
    want "$c" "EPT_FAULT sender class=MPI_ERR_OTHER msg=MPI_.*: the transport failed to send the message's data"
    want "$c" "EPT_FAULT receiver class=MPI_ERR_OTHER msg=MPI_Recv: the sender's transport failed to send"
    want "$c" "EPT_FAULT after ok"
    ended_ok "$c"
done

# A corrupt header (test/fault/fault.c spoils the first one process 0
# sends): the receiving process stops with a message naming it, before
# using the field.
for field in dst bytes flags; do
    run payload -genv EPMPI_TRANSPORT mpi -genv EPMPI_FAULT_CORRUPT $field -genv EPMPI_FAULT_RANK 0
    want "corrupt $field" "epfault: spoiling a message header"
    want "corrupt $field" "epmpi: fatal error in .*: process 1 received a corrupt message header from process 0"
    wont "corrupt $field" "AddressSanitizer\|runtime error\|signal 11\|Segmentation"
    stopped "corrupt $field"
done

if [ -n "$EP_SANITIZER" ]; then
    echo "ring: skipped (a sanitizer's allocator comes first: allocations cannot be made to fail)"
else
    run init -genv EPMPI_TRANSPORT mpi -genv EPMPI_FAULT_NTH malloc:1 -genv EPMPI_FAULT_MIN 400000
    want ring "epfault: failing malloc"
    want ring "epmpi: .*out of memory"
    wont ring "EPT_FAULT init ok"
    wont ring "signal 11\|Segmentation\|SIGSEGV"
    stopped ring
fi
# The sanitizers intercept pwrite themselves and call the fault library's
# from their own code, where it cannot tell epmpi's calls from MPICH's.
if [ -n "$EP_SANITIZER" ]; then
    echo "file: skipped (the sanitizer's pwrite comes first: epmpi's writes cannot be told apart)"
else
    run file -genv EPMPI_FAULT_NTH pwrite:1 -genv EPMPI_FAULT_RANK 0
    want file "epfault: failing pwrite (call 1)"
    want file "EPT_FAULT file class=MPI_ERR_NO_SPACE msg=.*MPI_File_write_at_all.*pwrite of 131072 bytes at offset [0-9]* of the file failed: No space left on device"
    want file "EPT_FAULT file class=MPI_SUCCESS"
    wont file "EPT_FAULT file again class=[^M]"
    wont file "EPT_FAULT file again class=MPI_ERR"
    ended_ok file
fi
if ! grep -q ucp_ep_create "$EP_FAULT_LIB"; then
    echo "ucx: skipped (built without UCX)"
    exit $status
fi
# (The sends are of 1 MiB: EPMPI_FAULT_MIN passes over smaller ones.)
ucx="-genv EPMPI_TRANSPORT ucx -genv EPMPI_FAULT_MIN 1000"
for f in send:ucp_tag_send_nbx connect:ucp_ep_create; do
    run resend $ucx -genv EPMPI_FAULT_NTH "${f#*:}:1" -genv EPMPI_FAULT_RANK 0
    want "ucx ${f%%:*}" "epfault: failing ${f#*:}"
    want "ucx ${f%%:*}" "EPT_FAULT sender class=MPI_ERR_OTHER msg=MPI_Send: UCX could not connect to the peer or start the transfer (nothing was sent)"
    want "ucx ${f%%:*}" "EPT_FAULT sender again class=MPI_SUCCESS"
    want "ucx ${f%%:*}" "EPT_FAULT after ok"
    ended_ok "ucx ${f%%:*}"
done
run irecv $ucx -genv EPMPI_FAULT_NTH ucp_tag_recv_nbx:1 -genv EPMPI_FAULT_RANK 1
want "inbox irecv" "epfault: failing ucp_tag_recv_nbx"
want "inbox irecv" "EPT_FAULT receiver class=MPI_ERR_OTHER msg=MPI_Wait: UCX could not receive the matched message; its data were dropped"
want "inbox irecv" "EPT_FAULT sender class=MPI_SUCCESS"
want "inbox irecv" "EPT_FAULT after ok"
ended_ok "inbox irecv"
run payload -genv EPMPI_TRANSPORT ucx -genv EPMPI_FAULT_NTH shm_open:2 -genv EPMPI_FAULT_RANK 0 -genv EPMPI_VERBOSE 1
want "inbox map" "epfault: failing shm_open (call 2)"
want "inbox map" "process 0 of 2: .*no node inboxes: this process could not map another's"
want "inbox map" "process 1 of 2: .*no node inboxes: a process of the job could not map its node's"
want "inbox map" "EPT_FAULT receiver class=MPI_SUCCESS"
want "inbox map" "EPT_FAULT after ok"
ended_ok "inbox map"
run payload -genv EPMPI_TRANSPORT ucx -genv EPMPI_FAULT_NTH shm_open:1 -genv EPMPI_FAULT_RANK 0 -genv EPMPI_VERBOSE 1
want "inbox make" "epfault: failing shm_open (call 1)"
want "inbox make" "process 0 of 2: .*no node inboxes: this process could not make shared memory for them"
want "inbox make" "process 1 of 2: .*no node inboxes: another process of this node has none"
want "inbox make" "EPT_FAULT receiver class=MPI_SUCCESS"
want "inbox make" "EPT_FAULT after ok"
ended_ok "inbox make"

ucx="$ucx -genv EPMPI_SHM 0"
run irecv $ucx -genv EPMPI_FAULT_NTH ucp_tag_msg_recv_nbx:1 -genv EPMPI_FAULT_RANK 1
want "ucx irecv" "epfault: failing ucp_tag_msg_recv_nbx"
want "ucx irecv" "EPT_FAULT receiver class=MPI_ERR_OTHER msg=MPI_Wait: UCX could not receive the matched message; its data were dropped"
want "ucx irecv" "EPT_FAULT sender class=MPI_SUCCESS"
want "ucx irecv" "EPT_FAULT after ok"
ended_ok "ucx irecv"
run post $ucx -genv EPMPI_FAULT_NTH ucp_tag_recv_nbx:1 -genv EPMPI_FAULT_RANK 1
want "ucx post" "epfault: failing ucp_tag_recv_nbx"
want "ucx post" "EPT_FAULT receiver class=MPI_SUCCESS"
want "ucx post" "EPT_FAULT after ok"
ended_ok "ucx post"
k=1
while [ $k -le 40 ]; do
    run init -genv EPMPI_TRANSPORT ucx -genv EPMPI_FAULT_NTH malloc:$k,calloc:$k >/dev/null
    case $out in
        *"signal 11"* | *"Segmentation fault"* | *"Caught signal"*) echo "FAIL: init alloc $k: a crash"; echo "$out"; status=1 ;;
    esac
    if [ $code -eq 124 ] || [ $code -eq 137 ]; then echo "FAIL: init alloc $k: the job hung"; status=1; fi
    k=$((k + 1))
done
echo "--- init alloc 1 to 40: checked"
exit $status
