#!/bin/sh
# The entry points on the way of every message test their handles before
# saving registers (ENTRY_ENDPOINT_PATH in pmpi/entry.h), so that on classic
# handles they cost a few instructions over PMPI_ (pass-through).  Reads
# the library's machine code: at most one register may be saved before the
# first conditional jump.  Skipped without objdump, off x86-64, in
# sanitizer builds (their instrumentation comes first) and in builds
# without optimization (configure's default CFLAGS have -O2).
# MPI_Sendrecv and MPI_Sendrecv_replace are not checked: they move their
# arguments on the stack for the jump to PMPI_, which takes registers.
lib=${EP_LIB:?EP_LIB: the built libepmpi.so}
command -v objdump >/dev/null 2>&1 || { echo "skip: no objdump"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "skip: not x86-64"; exit 77; }
[ -z "${BENCH_SAN_PRELOAD:-}" ] || { echo "skip: a sanitizer build"; exit 77; }
case " ${EP_CFLAGS-} " in
    *" -O2 "* | *" -O3 "*) ;;
    *) echo "skip: built without -O2 or -O3 (CFLAGS: ${EP_CFLAGS-})"; exit 77 ;;
esac
funcs="MPI_Send MPI_Ssend MPI_Rsend MPI_Bsend MPI_Isend MPI_Issend MPI_Irsend MPI_Ibsend
       MPI_Send_init MPI_Recv_init MPI_Recv MPI_Irecv MPI_Probe MPI_Iprobe MPI_Mprobe MPI_Improbe
       MPI_Mrecv MPI_Imrecv MPI_Wait MPI_Test MPI_Waitall MPI_Testall MPI_Waitany MPI_Testany
       MPI_Waitsome MPI_Testsome MPI_Start MPI_Startall MPI_Request_free MPI_Cancel"
objdump -d --no-show-raw-insn "$lib" | awk -v want="$funcs" '
BEGIN { n = split(want, w, /[ \n]+/); for (i = 1; i <= n; i++) if (w[i] != "") need[w[i]] = 1 }
/^[0-9a-f]+ <MPI_[A-Za-z_]+>:$/ {
    name = $2; gsub(/[<>:]/, "", name)
    if (!(name in need)) name = ""
    pushes = 0; k = 0; next
}
name != "" {
    k++
    if ($0 ~ /\tpush /) pushes++
    if ($0 ~ /\tj[a-z]+ / && $0 !~ /\tjmp /) { seen[name] = pushes; name = "" }
    else if (k > 32) { seen[name] = "no jump"; name = "" }
}
END {
    status = 0
    for (f in need) {
        if (!(f in seen)) { print "FAIL " f ": not in the library"; status = 1 }
        else if (seen[f] == "no jump") { print "FAIL " f ": no test in its first 32 instructions"; status = 1 }
        else if (seen[f] > 1) { print "FAIL " f ": saves " seen[f] " registers before testing its handles"; status = 1 }
        else print "ok " f " (" seen[f] " saved)"
    }
    exit status
}'
