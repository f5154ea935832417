#!/bin/sh
# The manual pages render without warnings, and say what they must
# (make check; skipped without groff).
src=${EP_SRCDIR:-.}
command -v groff >/dev/null 2>&1 || { echo "skip: no groff"; exit 77; }
status=0
check() { # page, then strings its rendered text must contain
    page=$src/man/$1; shift
    # -P-cbou: plain text, without overstriking or escape sequences
    out=$(groff -man -Tutf8 -ww -P-cbou "$page" 2>man-warn.tmp)
    if [ -s man-warn.tmp ]; then echo "FAIL $page: groff warns:"; cat man-warn.tmp; status=1; fi
    for s in "$@"; do
        case $out in
            *"$s"*) ;;
            *) echo "FAIL $page: the rendered page lacks '$s'"; status=1 ;;
        esac
    done
    echo "rendered $page ($(printf '%s\n' "$out" | wc -l) lines)"
}
check epmpiexec.1 "epmpiexec - run an MPI program" "--endpoints" "EPMPI_STATS_FILE" "EPMPI_DEBUG" "--version" \
    "--dry-run" "EPMPI_UCX_TLS=tcp,self" \
    "--threads RULE" "EPMPI_THREADS" "takes the lowest free" "MPIX_Threadcomm_init(3)"
check MPI_Comm_create_endpoints.3 "MPIX_Comm_create_endpoints - give a process" "my_num_ep" \
    "MPI_ERR_ENDPOINTS" "SEE ALSO"
check MPIX_Threadcomm_init.3 "MPIX_Comm_test_threadcomm - one communicator" "num_threads" \
    "MPI_ERR_COMM" "MPIX_Threadcomm_finish(tc);" "threads arrive" "POSIX threads"
# The other thread-communicator calls are links to that page, made at
# install (Makefile.am: EP_MAN3_LINKS), not pages of their own.
for f in Threadcomm_start Threadcomm_finish Threadcomm_free Comm_test_threadcomm; do
    [ ! -e "$src/man/MPIX_$f.3" ] || { echo "FAIL: man/MPIX_$f.3 exists: it is installed as a link"; status=1; }
done
rm -f man-warn.tmp
exit $status
