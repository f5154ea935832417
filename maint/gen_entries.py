#!/usr/bin/env python3
"""Generates epmpi's entry points for the MPI functions of the installed
MPICH that it does not write by hand, and a test that calls them.  The build
runs it (into the build tree) for the MPICH that configure found: MPICH
versions differ in their functions and prototypes (4.2 added MPI-4.1's
functions and made MPI_Pready_list's array const), so the files are made for
the mpi.h they are compiled with and are not part of the source tree.

  pmpi/entries.gen.c         an entry point for every MPI function that takes
                             a handle which can be an endpoint handle and that
                             epmpi does not implement by hand
                             (maint/implemented.txt): classic handles pass
                             straight to PMPI_; an endpoint handle (or, in
                             world mode, MPI_COMM_WORLD / MPI_COMM_SELF) gets a
                             clear "not supported on endpoint ..." error, so no
                             endpoint handle ever reaches MPICH.
  pmpi/fortran.gen.c         the mpi_f08 entry points epmpi needs: MPICH's
                             mpi_f08 routines call PMPI_ directly, past epmpi,
                             so epmpi exports the same symbols (see below).
  test/mpi/api_guards.gen.c  calls every entry point of entries.gen.c with an
                             endpoint handle in each handle argument it checks.
  pmpi/<chapter>.entry.gen.inc the entry points listed in maint/dispatch.txt,
                             each with the call of its hand-written endpoint
                             body: classic handles pass straight to PMPI_,
                             endpoint handles (the guard's test) go to the
                             body; pmpi/<chapter>.c includes the file.

Input: MPICH's mpi_proto.h and ROMIO's mpio.h (found through `mpicc -show`;
5.0 has the MPI_File calls in mpi_proto.h and no mpio.h),
the symbols libmpich and libmpichfort export (`nm -D`), and the lists of
entry points written by hand (maint/implemented.txt for C,
maint/fortran_implemented.txt for Fortran), and maint/dispatch.txt.  Usage:
    maint/gen_entries.py --mpicc mpicc [--srcdir DIR] [--outdir DIR]
        # write the files (those whose text changed) under DIR
    maint/gen_entries.py ... --coverage .libs/libepmpi.so
        # exit 1 unless that library exports an entry point for every
        # handle-taking MPI function libmpich exports (the _c forms too) and
        # for every mpi_f08 routine that needs one (make check runs this)

mpi_f08 (gfortran's ABI for MPICH 4.0's bindings): every argument is passed
by reference, handles as the address of their integer (type(MPI_Comm) holds
one integer, MPI_VAL), statuses in C's layout, ierror optional (NULL when
absent), CHARACTER lengths as hidden size_t arguments at the end; choice
buffers (the f08ts routines) as gfortran's own array descriptor.  The
routines without buffers (mpi_comm_rank_f08_, mpi_wait_f08_, ...) call
PMPI_ directly, so epmpi replaces each one whose C function it has an entry
point for:
  convert  the C function is implemented by hand: the arguments are converted
           (statuses, LOGICAL flags, 1-based indices, strings) and epmpi's own
           C entry point runs, for classic handles too, as C programs do.
  guard    the C function is a generated guard: an endpoint handle gets the
           guard's error, anything else goes to MPICH's PMPI binding
           (pmpir_*_f08_) untouched.
The f08ts routines convert their buffers and call the C MPI_ functions, which
epmpi intercepts; two kinds still need an entry point:
  - non-blocking and persistent calls epmpi implements on endpoints: for a
    non-contiguous array section MPICH makes a datatype, calls MPI_, and frees
    the datatype with PMPI_Type_free, past epmpi's hold on the types of
    operations in flight.  On endpoints epmpi converts the buffers itself and
    refuses non-contiguous sections; classic calls go to MPICH's binding.
  - the routines whose MPICH binding asks PMPI_ about the communicator first
    (F08TS_ASK_PMPI).
"""
import argparse
import os
import re
import subprocess
import sys

# Handle kinds by C type: (test expression template, error class, what to call it).
BY_VALUE = {
    "MPI_Comm": ("entry_comm_is_ep({0})", "MPI_ERR_COMM", "communicators"),
    "MPI_Group": ("ep_group_handle_is_ep({0})", "MPI_ERR_GROUP", "groups"),
    "MPI_Request": ("ep_request_handle_is_ep({0})", "MPI_ERR_REQUEST", "requests"),
    "MPI_Message": ("ep_message_handle_is_ep({0})", "MPI_ERR_REQUEST", "messages"),
    "MPI_Win": ("ep_win_handle_is_ep({0})", "MPI_ERR_WIN", "windows"),
    "MPI_File": ("ep_file_handle_is_ep({0})", "MPI_ERR_FILE", "files"),
}
# Fortran passes a file as its integer (MPI_File_c2f's), not as C's pointer.
F_TEST = {"MPI_File": "entry_file_fint_is_ep(*(const MPI_Fint *)&{0})"}

# Pointer parameters that are inputs (the handle is read): everything else of
# these types behind a pointer is an output, written by MPICH.
POINTER_INPUTS = {
    ("MPI_Comm", "comm"),  # MPI_Comm_free, MPI_Comm_disconnect
    ("MPI_Message", "message"),  # MPI_Mrecv, MPI_Imrecv (and their _c forms)
}
POINTER_INPUT_FUNCS = {
    "MPI_Group_free": "MPI_Group",
    "MPI_Win_free": "MPI_Win",
    "MPI_Request_free": "MPI_Request",
    "MPI_File_close": "MPI_File",
}

# mpi_f08 routines with buffers whose MPICH binding calls PMPI_ with the
# communicator before calling MPI_ (PMPI_Comm_size for the Alltoallw type
# arrays, PMPI_Dist_graph_neighbors_count for the neighbour ones).
F08TS_ASK_PMPI = {"MPI_Alltoallw", "MPI_Ialltoallw", "MPI_Alltoallw_init", "MPI_Neighbor_alltoallw",
                  "MPI_Ineighbor_alltoallw", "MPI_Neighbor_alltoallw_init"}

# The value a test passes for a handle argument it does not test.
NULL_HANDLE = {
    "MPI_Comm": "MPI_COMM_NULL", "MPI_Group": "MPI_GROUP_NULL", "MPI_Request": "MPI_REQUEST_NULL",
    "MPI_Message": "MPI_MESSAGE_NULL", "MPI_Win": "MPI_WIN_NULL", "MPI_Datatype": "MPI_DATATYPE_NULL",
    "MPI_Info": "MPI_INFO_NULL", "MPI_Op": "MPI_OP_NULL", "MPI_Errhandler": "MPI_ERRHANDLER_NULL",
    "MPI_File": "MPI_FILE_NULL", "MPI_Session": "MPI_SESSION_NULL", "MPIX_Stream": "MPIX_STREAM_NULL",
}
# Open MPI's parameter names where they differ from the standard's (as
# MPICH's prototypes, and so maint/dispatch.txt's bodies, spell them):
# the generated entry points use the standard's.
OMPI_PARAM_NAMES = {
    "MPI_Buffer_detach": {"buffer": "buffer_addr"}, "MPI_Cart_create": {"old_comm": "comm_old"},
    "MPI_Cart_sub": {"new_comm": "newcomm"}, "MPI_Comm_create_errhandler": {"function": "comm_errhandler_fn"},
    "MPI_Comm_get_errhandler": {"erhandler": "errhandler"},
    "MPI_Dist_graph_create": {"nodes": "sources", "targets": "destinations", "newcomm": "comm_dist_graph"},
    "MPI_Dist_graph_neighbors_count": {"inneighbors": "indegree", "outneighbors": "outdegree"},
    "MPI_Errhandler_create": {"function": "comm_errhandler_fn"},
    "MPI_File_create_errhandler": {"function": "file_errhandler_fn"}, "MPI_Graph_create": {"index": "indx"},
    "MPI_Graph_get": {"index": "indx"}, "MPI_Graph_map": {"index": "indx"}, "MPI_Imrecv": {"type": "datatype"},
    "MPI_Intercomm_create": {"bridge_comm": "peer_comm"}, "MPI_Intercomm_merge": {"newintercomm": "newintracomm"},
    "MPI_Mrecv": {"type": "datatype"}, "MPI_Precv_init": {"source": "dest"},
    "MPI_Pready": {"partitions": "partition"}, "MPI_Pready_list": {"partition_list": "array_of_partitions"}, "MPI_Rput": {"target_cout": "target_count"}, "MPI_Rsend": {"ibuf": "buf"},
    "MPI_Testany": {"index": "indx"}, "MPI_Type_free": {"type": "datatype"}, "MPI_Waitany": {"index": "indx"},
    "MPI_Win_create_errhandler": {"function": "win_errhandler_fn"},
}


# ... and in every function (Open MPI 5.0 spells `assert` so: its header
# may follow assert.h's macro).
OMPI_PARAM_NAMES_ALL = {"mpi_assert": "assert"}


def standard_names(name, params):
    """params with Open MPI's deviating names replaced by the standard's."""
    fix = dict(OMPI_PARAM_NAMES_ALL, **OMPI_PARAM_NAMES.get(name, {}))
    out = []
    for ctype, pname, is_ptr, is_arr, base, text in params:
        if pname in fix:
            text = re.sub(r"\b%s\b" % pname, fix[pname], text)
            pname = fix[pname]
        out.append((ctype, pname, is_ptr, is_arr, base, text))
    return out


SCALARS = {"int", "MPI_Aint", "MPI_Count", "MPI_Offset", "MPI_Fint", "MPIX_Grequest_class"}


def find_libs(mpicc):
    """The MPI ("mpich" or "openmpi"), its headers with the prototypes, its C
    library, and its Fortran library with the mpi_f08 routines (None for
    Open MPI: epmpi does not replace its Fortran bindings yet).  MPICH:
    mpi_proto.h, mpio.h, libmpich.so and libmpichfort.so; Open MPI: mpi.h and
    libmpi.so."""
    out = subprocess.run([mpicc, "-show"], capture_output=True, text=True, check=True).stdout.split()
    incs = [a[2:] for a in out if a.startswith("-I")] + ["/usr/include"]
    libs = [a[2:] for a in out if a.startswith("-L")] + ["/usr/lib/x86_64-linux-gnu", "/usr/lib"]

    def header(h, required=True):
        for d in incs:
            p = os.path.join(d, h)
            if os.path.exists(p):
                return p
        if required:
            sys.exit("gen_entries: %s not found in %s" % (h, " ".join(incs)))
        return None

    mpi_h = header("mpi.h")
    if "#define OPEN_MPI 1" in open(mpi_h).read():
        for d in libs:
            p = os.path.join(d, "libmpi.so")
            if os.path.exists(p):
                return "openmpi", [mpi_h], p, None
        sys.exit("gen_entries: Open MPI's libmpi.so not found in %s" % " ".join(libs))
    headers = [header("mpi_proto.h")]
    with open(headers[0]) as f:
        if "PMPI_File_open" not in f.read():  # MPICH 5.0 has them there, and no mpio.h
            headers.append(header("mpio.h"))
    for d in libs:
        p = os.path.join(d, "libmpich.so")
        if os.path.exists(p):
            fort = os.path.join(d, "libmpichfort.so")
            if not os.path.exists(fort):
                sys.exit("gen_entries: %s not found (MPICH's Fortran bindings: apt-get install libmpich-dev)" % fort)
            return "mpich", headers, p, fort
    sys.exit("gen_entries: libmpich.so not found")


def exported(lib):
    if lib is None:
        return set()
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.split()}


def split_params(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_param(p):
    """Returns (type_without_name, name, is_pointer, is_array, base type, text)."""
    m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*(\[\s*\w*\s*\])*$", p)
    if not m:
        sys.exit("gen_entries: cannot parse parameter: " + p)
    ctype, name, arr = m.group(1).strip(), m.group(2), m.group(3)
    base = ctype.replace("const", "").replace("*", "").strip()
    return ctype, name, "*" in ctype, arr is not None, base, p


def parse(proto_path):
    text = open(proto_path).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    funcs = []
    # MPICH: int MPI_X(...) MPICH_ATTR_...(...) MPICH_API_PUBLIC;
    # Open MPI: OMPI_DECLSPEC  int MPI_X(...) __mpi_interface_deprecated__(...);
    for m in re.finditer(r"^(?:int|OMPI_DECLSPEC\s+int)\s+(MPIX?_\w+)\s*\((.*?)\)\s*"
                         r"(?:(?:MPICH_ATTR\w*\([^;]*?\)|__mpi_interface_\w+__\((?:\"[^\"]*\"|[^;\"])*?\))\s*)*"
                         r"(?:(?:MPICH|ROMIO)_API_PUBLIC\s*)?;", text, flags=re.S | re.M):
        name, params = m.group(1), " ".join(m.group(2).split())
        if name.startswith("MPI_T_") or params in ("", "void") or "..." in params:
            continue
        funcs.append((name, [parse_param(p) for p in split_params(params)]))
    return funcs


def guards_for(name, params):
    """The handle arguments a generated entry point checks, as (C type, name,
    passed by pointer), or "array" (needs a hand-written entry point), or []
    when it takes no handle that can be an endpoint handle."""
    checks = []
    for ctype, pname, is_ptr, is_arr, base, _ in params:
        if base not in BY_VALUE:
            continue
        if not is_ptr and not is_arr:
            checks.append((base, pname, False))
        elif is_arr:
            # Every array of these handles is read (MPI has no output array
            # of them; MPICH 4.2 leaves const off MPI_Request_get_status_all's
            # requests), so it needs a hand-written entry point.
            return "array"
        elif (base, pname) in POINTER_INPUTS or POINTER_INPUT_FUNCS.get(name) == base:
            checks.append((base, pname, True))
    return checks


def check_test(check, fortran=False):
    """The C test of one check; Fortran passes every argument by reference."""
    base, pname, by_ptr = check
    test = F_TEST.get(base, BY_VALUE[base][0]) if fortran else BY_VALUE[base][0]
    if by_ptr and not fortran:
        return "({0} && {1})".format(pname, test.format("*" + pname))
    return test.format("*" + pname if by_ptr or fortran else pname)


def check_error(name, check, fortran=False):
    """The error an entry point returns for an endpoint handle in check."""
    base, pname, by_ptr = check
    _, cls, what = BY_VALUE[base]
    if what == "communicators":  # raised on the communicator's own error handler
        return 'entry_unsupported_comm("%s", %s)' % (name, "*" + pname if by_ptr or fortran else pname)
    return 'entry_unsupported("%s", "%s", %s)' % (name, what, cls)


# The large-count forms with count arrays: how many entries each array has
# (entry_peers_t in pmpi/entry.h), by the int form's name and the parameter.
ARRAY_PEERS = {"recvcounts": "ENTRY_PEERS", "displs": "ENTRY_PEERS", "sendcounts": "ENTRY_PEERS_SEND",
               "sdispls": "ENTRY_PEERS_SEND", "rdispls": "ENTRY_PEERS"}
ARRAY_PEERS_BY_CALL = {
    "Gatherv": {"recvcounts": "ENTRY_PEERS_AT_ROOT", "displs": "ENTRY_PEERS_AT_ROOT"},
    "Scatterv": {"sendcounts": "ENTRY_PEERS_AT_ROOT", "displs": "ENTRY_PEERS_AT_ROOT"},
    "Reduce_scatter": {"recvcounts": "ENTRY_GROUP"},
    "Neighbor_allgatherv": {"recvcounts": "ENTRY_IN_NEIGHBORS", "displs": "ENTRY_IN_NEIGHBORS"},
    "Neighbor_alltoallv": {"sendcounts": "ENTRY_OUT_NEIGHBORS", "sdispls": "ENTRY_OUT_NEIGHBORS",
                           "recvcounts": "ENTRY_IN_NEIGHBORS", "rdispls": "ENTRY_IN_NEIGHBORS"},
    "Neighbor_alltoallw": {"sendcounts": "ENTRY_OUT_NEIGHBORS", "recvcounts": "ENTRY_IN_NEIGHBORS"},
}


def array_peers(name, pname):
    """The entry_peers_t of array pname of large-count function name."""
    base = call_base(name)
    return ARRAY_PEERS_BY_CALL.get(base, {}).get(pname) or ARRAY_PEERS[pname]


# Counts beyond INT_MAX (see pmpi/entry.h).  The _c forms of these calls
# have a hand-written body for them, entry_large_<base>: the array forms, and
# the reductions (MPICH's operations refuse the derived type of the count's
# elements that the other scalar _c forms make with entry_large_type).
LARGE_BODIES = {"Gatherv", "Scatterv", "Allgatherv", "Alltoallv", "Alltoallw", "Neighbor_allgatherv",
               "Neighbor_alltoallv", "Neighbor_alltoallw", "Reduce", "Allreduce", "Scan", "Exscan",
               "Reduce_scatter_block", "Reduce_scatter"}


def call_base(name):
    """MPI_Ineighbor_alltoallv_c, MPI_Neighbor_alltoallv_init_c -> Neighbor_alltoallv."""
    base = re.sub(r"^MPI_I?(.*?)(_init)?(_c)?$", r"\1", name)
    return base[0].upper() + base[1:]


def large_mode(name, counts, checks):
    """What the _c form name does on endpoints with a count beyond INT_MAX:
    "large" (its entry_large_ body) or "type" (entry_large_type,
    entry_file_large_type for files).  An init form (MPI_Bcast_init_c) does
    the same as its non-blocking form, with the request of entry_persistent."""
    if call_base(name) in LARGE_BODIES:
        return "large"
    if any(how != "scalar" for _, how in counts):
        sys.exit("gen_entries: %s takes count arrays: write entry_large_%s (pmpi/coll.c) for counts beyond INT_MAX "
                 "and list it in LARGE_BODIES" % (name, call_base(name)))
    return "type"


def narrowed(params_c, params_int):
    """How a large-count (_c) function whose int form has the same
    parameters, but for int in place of MPI_Count (and of MPI_Aint in
    arrays), calls that form: [(parameter, "scalar" | "counts" | "displs")],
    or None."""
    if len(params_c) != len(params_int):
        return None
    out = []
    for pc, pi in zip(params_c, params_int):
        if pc[1] != pi[1]:
            return None
        if pc[0] == pi[0]:
            continue
        if pc[0] == "MPI_Count" and pi[0] == "int" and not pc[3]:
            out.append((pc[1], "scalar"))
        elif pc[0] == "const MPI_Count" and pi[0] == "const int" and pc[3]:
            out.append((pc[1], "counts"))
        elif pc[0] == "const MPI_Aint" and pi[0] == "const int" and pc[3]:
            out.append((pc[1], "displs"))
        else:
            return None
    return out


class Api:
    """The installed MPICH's functions, and what epmpi does with each."""

    def __init__(self, mpicc, implemented, fortran_implemented):
        self.mpi, headers, lib, fortlib = find_libs(mpicc)
        self.lib = lib
        self.funcs = [f for h in headers for f in parse(h)]
        self.header_text = "".join(open(h).read() for h in headers)
        # Open MPI still exports MPI-1's removed functions but its mpi.h makes
        # their names macros that fail a build: for epmpi they are absent.
        removed = set(re.findall(r"#define\s+(MPI_\w+)\(\.\.\.\)\s+THIS_FUNCTION_WAS_REMOVED", self.header_text))
        self.funcs = [f for f in self.funcs if f[0] not in removed]
        if self.mpi == "openmpi":
            self.funcs = [(n, standard_names(n, p)) for n, p in self.funcs]
        self.by_name = dict(self.funcs)
        self.by_lower = {n.lower(): n for n in self.by_name}
        self.exports = exported(lib) - removed
        self.fort_exports = exported(fortlib)
        self.implemented = implemented
        self.fortran_implemented = fortran_implemented
        self.guards = []  # (name, params, checks, narrowed counts or None)
        for name, params in self.funcs:
            if name in implemented or name not in self.exports:
                continue
            checks = guards_for(name, params)
            if not checks:
                continue
            if checks == "array":
                sys.exit("gen_entries: %s takes an array of handles: implement it by hand and list it in "
                         "maint/implemented.txt" % name)
            self.guards.append((name, params, checks, self.narrowing(name)))
        self.guarded = {g[0] for g in self.guards}

    def narrowing(self, name):
        """The counts of a _c form that runs its implemented int form on endpoints."""
        base = name[:-2] if name.endswith("_c") else None
        if base in self.implemented and base in self.by_name:
            return narrowed(self.by_name[name], self.by_name[base]) or None
        return None

    def handle_taking(self):
        """The exported functions that take a handle which can be an endpoint handle."""
        return sorted(n for n, p in self.funcs if n in self.exports and guards_for(n, p))

    def f08_routines(self):
        """(symbol, C name, ts, kind) of every mpi_f08 routine of libmpichfort
        that epmpi replaces with a generated entry point (kinds: see the top)."""
        out = []
        for sym in sorted(self.fort_exports):
            m = re.match(r"^(mpix?)_(\w+?)_f08(ts)?_(large_)?$", sym)
            if not m:
                continue
            cname = self.by_lower.get("%s_%s%s" % (m.group(1), m.group(2), "_c" if m.group(4) else ""))
            if sym in self.fortran_implemented:
                continue
            if not cname:
                if "%s_%s" % (m.group(1), m.group(2)) in {n.lower() for n in self.implemented}:
                    sys.exit("gen_entries: %s (MPICH's mpi_f08 binding of a function epmpi implements) has no "
                             "prototype to generate from: write it by hand and list it in "
                             "maint/fortran_implemented.txt" % sym)
                continue
            if cname not in self.implemented and cname not in self.guarded:
                continue  # no epmpi entry point: PMPI_ is what MPI_ would do
            ts = bool(m.group(3))
            params = self.by_name[cname]
            # A file is an integer in Fortran: the files' mpi_f08 routines
            # stay MPICH's, guarded (endpoint files are C only).
            takes_file = any(p[4] == "MPI_File" for p in params)
            supported = (cname in self.implemented or self.narrowing(cname)) and not takes_file
            asks = (cname[:-2] if cname.endswith("_c") else cname) in F08TS_ASK_PMPI
            makes_request = any(p[4] == "MPI_Request" and p[2] and not p[3] for p in params)
            if not ts:
                kind = "convert" if supported else "guard"
            elif supported and (asks or makes_request):
                kind = "convert"
            elif asks or takes_file:
                kind = "guard"
            else:
                continue
            if pmpi_f08(sym) not in self.fort_exports:
                sys.exit("gen_entries: libmpichfort exports %s but not %s" % (sym, pmpi_f08(sym)))
            out.append((sym, cname, ts, kind))
        return out


# ---- pmpi/entries.gen.c ------------------------------------------------------

def generate_entries(api):
    out = [
        "/* Generated by maint/gen_entries.py from MPICH's mpi_proto.h: do not edit.",
        " * Entry points for MPI functions that take a handle which can be an",
        " * endpoint handle and that epmpi does not implement by hand: classic",
        " * handles pass straight to PMPI_; endpoint handles get a clear error, or,",
        " * for the large-count (_c) form of an implemented call, that call when",
        " * the counts fit in an int. */",
        '#include "entry.h"',
        "",
        "#include <stdlib.h>",
        "",
    ]
    for name, params, checks, counts in api.guards:
        decl = ", ".join(p[5] for p in params)
        args = ", ".join(p[1] for p in params)
        out.append("ENTRY_API int(%s)(%s)" % (name, decl))
        out.append("{")
        if counts:
            # A large-count form of a call epmpi implements: on endpoints, the
            # int form runs when the counts fit in an int (arrays are copied);
            # beyond, see LARGE_BODIES.
            out.append("    if (!(%s))" % " || ".join(check_test(c) for c in checks))
            out.append("        return P%s(%s);" % (name, args))
            comm = next((c[1] for c in checks if c[0] == "MPI_Comm"), "MPI_COMM_NULL")
            fh = next((c[1] for c in checks if c[0] == "MPI_File"), None)
            pnames = [p[1] for p in params]
            scalars = [c for c, how in counts if how == "scalar"]
            arrays = [(c, how) for c, how in counts if how != "scalar"]
            mode = large_mode(name, counts, checks)
            large_body, large_types = mode == "large", mode == "type"
            # The large body's request: the blocking form's, the caller's, or
            # an init form's persistent one (its info goes there).
            pnames_req = ([p for p in pnames if p not in ("request", "info")]
                          + ["entry_persistent(request, info)" if name.endswith("_init_c")
                             else "request" if "request" in pnames else "ENTRY_BLOCKING"])
            large_call = 'entry_large_%s("%s", %s)' % (call_base(name), name, ", ".join(pnames_req))
            fits = " && ".join("%s <= INT_MAX && %s >= INT_MIN" % (c, c) for c in scalars)
            call = "%s(%s)" % (name[:-2], ", ".join("(int)" + p[1] if (p[1], "scalar") in counts
                                                   else p[1] + "_i" if any(p[1] == a for a, _ in arrays)
                                                   else p[1] for p in params))
            if large_types:
                # Each count beyond INT_MAX becomes one element of a type of
                # its elements: the type parameter follows its count, and the
                # buffer comes before.
                out.append("    if (%s)" % fits)
                out.append("        return %s;" % call)
                conv = {}
                for c in scalars:
                    i = pnames.index(c)
                    if i + 1 >= len(params) or params[i + 1][4] != "MPI_Datatype":
                        sys.exit("gen_entries: %s: no datatype follows count %s" % (name, c))
                    buf = next((p[1] for p in reversed(params[:i]) if p[4] == "void" and p[2]), None)
                    if not buf:
                        sys.exit("gen_entries: %s: no buffer before count %s" % (name, c))
                    conv[c] = ("ENTRY_LARGE_COUNT(%s, %s_t)" % (c, c), buf)
                    conv[params[i + 1][1]] = ("ENTRY_LARGE_TYPE(%s, %s_t)" % (params[i + 1][1], c), None)
                out.append("    MPI_Datatype %s;" % ", ".join("%s_t = MPI_DATATYPE_NULL" % c for c in scalars))
                out.append("    int rc = MPI_SUCCESS;")
                if fh:  # errors on the file's handler
                    tests = ['(rc = entry_file_large_type("%s", %s, %s, %s, &%s_t))'
                             % (name, fh, c, params[pnames.index(c) + 1][1], c) for c in scalars]
                else:
                    tests = ['(rc = entry_large_type("%s", %s, %s, %s, %s, &%s_t))'
                             % (name, comm, conv[c][1], c, params[pnames.index(c) + 1][1], c) for c in scalars]
                out.append("    (void)(%s);" % " || ".join(tests))
                out.append("    if (!rc)")
                out.append("        rc = %s(%s);" % (name[:-2], ", ".join(conv[p][0] if p in conv else p
                                                                         for p in pnames)))
                for c in scalars:
                    out.append("    entry_large_type_free(&%s_t);" % c)
                out.append("    return rc;")
            elif large_body and not arrays:
                out.append("    if (%s)" % fits)
                out.append("        return %s;" % call)
                out.append("    return %s;" % large_call)
            elif not arrays:
                out.append("    return %s;" % call)
            else:
                root = "root" if "root" in pnames else "0"
                sbuf = "sendbuf" if "sendbuf" in pnames else "NULL"
                out.append("    ep_endpoint_t *ep;")
                out.append('    int rc = entry_endpoint("%s", %s, &ep);' % (name, comm))
                out.append("    int large = %s;" % ("!(%s)" % fits if scalars else "0"))
                out.append("    int %s;" % ", ".join("*%s_i = NULL" % a for a, _ in arrays))
                tests = ['(rc = entry_%s_to_int(ep, "%s", %s, entry_peers(ep, %s, %s, %s), &%s_i, &large))'
                         % (how, name, a, array_peers(name, a), root, sbuf, a) for a, how in arrays]
                out.append("    if (!rc && !(%s))" % " || ".join(tests))
                out.append("        rc = large ? %s" % large_call)
                out.append("                  : %s;" % call)
                for a, _ in arrays:
                    out.append("    free(%s_i);" % a)
                out.append("    return rc;")
        else:
            for c in checks:
                out.append("    if (%s)" % check_test(c))
                out.append("        return %s;" % check_error(name, c))
            out.append("    return P%s(%s);" % (name, args))
        out.append("}")
        out.append("")
    out.append("/* %d entry points. */" % len(api.guards))
    return "\n".join(out) + "\n"


# ---- pmpi/fortran.gen.c -----------------------------------------------------

def pmpi_f08(sym):
    """MPICH's PMPI binding of an mpi_f08 routine: mpi_x_f08_ -> pmpir_x_f08_."""
    return re.sub(r"^mpi(x?)_", r"pmpi\1r_", sym)


def is_buffer(p):
    return p[4] == "void" and p[2] and p[1].endswith("buf")


def f_decl(p, ts):
    """The C declaration of a C parameter as mpi_f08 passes it."""
    ctype, name, is_ptr, is_arr, base, text = p
    if ts and is_buffer(p):
        return "const entry_gfc_array_t *" + name
    if not is_ptr and not is_arr:
        return "const %s *%s" % (ctype, name)
    return text


def f_signature(sym, params, ts):
    decls = [f_decl(p, ts) for p in params] + ["MPI_Fint *ierror"]
    decls += ["size_t %s_len" % p[1] for p in params if p[4] == "char"]
    return "%s(%s)" % (sym, ", ".join(decls))


def f_forward(sym, params):
    args = [p[1] for p in params] + ["ierror"] + ["%s_len" % p[1] for p in params if p[4] == "char"]
    return "%s(%s);" % (pmpi_f08(sym), ", ".join(args))


def f_convert(cname, params, ts, comm):
    """For the convert kind: local declarations, statements before the C
    call, the steps that may fail before it (expressions giving an MPI error
    code), its arguments, and statements after it.  comm: the communicator
    whose handler gets buffer errors."""
    decls, pre, steps, args, post = [], [], [], [], []
    for p in params:
        ctype, name, is_ptr, is_arr, base, _ = p
        if ts and is_buffer(p):
            decls.append("void *%s_c = NULL;" % name)
            steps.append('entry_f08_buffer("%s", %s, %s, &%s_c)' % (cname, comm, name, name))
            args.append(name + "_c")
        elif base == "char":
            if is_arr or ctype.count("*") != 1:
                sys.exit("gen_entries: %s: string array %s: write its mpi_f08 entry point by hand and list it in "
                         "maint/fortran_implemented.txt" % (cname, name))
            if "const" in ctype:
                decls.append("char *%s_c = entry_f_string_in(%s, %s_len);" % (name, name, name))
                steps.append('%s_c ? MPI_SUCCESS : entry_f_no_memory("%s")' % (name, cname))
                post.append("free(%s_c);" % name)
            else:
                decls.append("char %s_c[ENTRY_F_STRING_MAX] = \"\";" % name)
                post.append("if (rc == MPI_SUCCESS)")
                post.append("    entry_f_string_out(%s, %s_len, %s_c);" % (name, name, name))
            args.append(name + "_c")
        elif not is_ptr and not is_arr:
            args.append("*" + name)
        elif base == "MPI_Status":
            # (An array by its name too: MPICH 4.2 declares MPI_Waitall's as
            # MPI_Status *array_of_statuses.)
            many = is_arr or name.startswith("array_of_")
            args.append("entry_f08_status%s(%s)" % ("es" if many else "", name))
        elif name == "flag":
            args.append(name)
            post.append("entry_f_logical(flag);")
        elif name.endswith("weights"):  # the dist graph calls: mpi_f08's MPI_UNWEIGHTED
            args.append("entry_f08_weights(%s)" % name)
        elif name == "indx" and not is_arr:  # MPI_Waitany's index, not MPI_Graph_create's array
            pre.append("*indx = MPI_UNDEFINED;")
            args.append(name)
            post.append("entry_f_indices(indx, 1);")
        elif name == "array_of_indices":
            pre.append("*outcount = MPI_UNDEFINED;")
            args.append(name)
            post.append("entry_f_indices(array_of_indices, *outcount);")
        else:
            args.append(name)
    return decls, pre, steps, args, post


# The symbols of MPICH's mpi_f08 glue that pmpi/fortran.c compares buffers
# and statuses with (libmpich exports them in MPICH 4.0, libmpichfort in 4.2).
F08_GLUE = ("MPIR_F08_MPI_IN_PLACE", "MPIR_F08_MPI_BOTTOM", "MPI_F08_STATUS_IGNORE", "MPI_F08_STATUSES_IGNORE")


def generate_fortran(api):
    if api.mpi == "openmpi":
        return ("/* Generated by maint/gen_entries.py: do not edit.  Open MPI: epmpi does\n"
                " * not replace its Fortran bindings (yet), so there is nothing here. */\n")
    missing = [s for s in F08_GLUE if s not in api.exports | api.fort_exports]
    if missing:
        sys.exit("gen_entries: this MPICH's libraries export no %s: its mpi_f08 glue is not the one epmpi knows "
                 "(pmpi/fortran.c)" % " ".join(missing))
    out = [
        "/* Generated by maint/gen_entries.py from MPICH's mpi_proto.h and the",
        " * symbols of libmpichfort: do not edit.  The mpi_f08 routines epmpi",
        " * replaces, because MPICH's call PMPI_ past epmpi (see the generator):",
        " * convert: the arguments are converted and epmpi's C entry point runs;",
        " * guard: an endpoint handle gets the C guard's error, anything else goes",
        " * to MPICH's PMPI binding (pmpir_*) untouched; f08ts: choice buffers",
        " * arrive as gfortran array descriptors, converted on endpoints only. */",
        '#include "fortran.h"',
        "",
        "#include <stdlib.h>",
        "",
    ]
    routines = api.f08_routines()
    for sym, cname, ts, kind in routines:
        params = api.by_name[cname]
        checks = guards_for(cname, params)
        forwards = kind == "guard" or ts
        if forwards:
            out.append("extern void %s ENTRY_F_WEAK;" % f_signature(pmpi_f08(sym), params, ts))
        out.append("ENTRY_API void %s" % f_signature(sym, params, ts))
        out.append("{")
        if kind == "guard":
            for i, c in enumerate(checks):
                out.append("    %sif (%s)" % ("else " if i else "", check_test(c, fortran=True)))
                out.append("        entry_f_return(ierror, %s);" % check_error(cname, c, fortran=True))
            out.append("    else")
            out.append("        " + f_forward(sym, params))
        else:
            comm = next(("*" + c[1] for c in checks if c[0] == "MPI_Comm"), "MPI_COMM_NULL")
            decls, pre, steps, args, post = f_convert(cname, params, ts, comm)
            call = "%s(%s);" % (cname, ", ".join(args))
            if forwards:
                out.append("    if (!(%s)) {" % " || ".join(check_test(c, fortran=True) for c in checks))
                out.append("        " + f_forward(sym, params))
                out.append("        return;")
                out.append("    }")
            out += ["    " + d for d in decls]
            out += ["    " + s for s in pre]
            for i, step in enumerate(steps + [call.rstrip(";")]):
                if i == 0:
                    out.append("    int rc = %s;" % step)
                else:
                    out.append("    if (rc == MPI_SUCCESS)")
                    out.append("        rc = %s;" % step)
            out += ["    " + s for s in post]
            out.append("    entry_f_return(ierror, rc);")
        out.append("}")
        out.append("")
    out.append("/* %d entry points. */" % len(routines))
    return "\n".join(out) + "\n"


# ---- test/mpi/api_guards.gen.c ----------------------------------------------

def test_arg(p, tested, big):
    """The value a test passes for parameter p; tested: the check whose
    argument carries the endpoint handle; big: the count (or count array)
    given beyond INT_MAX."""
    ctype, name, is_ptr, is_arr, base, _ = p
    if tested and name == tested[1]:
        return "&%s_v" % base[4:].lower() if tested[2] else base[4:].lower()
    if name == big:
        return "ept_big_counts" if is_arr else "(MPI_Count)INT_MAX + 1"
    if is_ptr and base.endswith("_function"):
        return "NULL"
    if is_ptr or is_arr:
        return "ept_scratch"  # zeroed: reads as handles that are not endpoint handles
    if base in NULL_HANDLE:
        return NULL_HANDLE[base]
    if base in SCALARS:
        return "0"
    sys.exit("gen_entries: no test value for %s %s" % (ctype, name))


def generate_test(api):
    out = [
        "/* Generated by maint/gen_entries.py: do not edit.  Calls every entry",
        " * point of pmpi/entries.gen.c with an endpoint handle in each handle",
        " * argument it checks (the others: null handles, zeroed memory, 0) and",
        " * hands each return code to ept_guard_expect with the error class and a",
        " * word the message must have: a large-count (_c) form that runs its int",
        " * form on endpoints gets a count beyond INT_MAX instead (in an array of",
        " * 64 when it has no scalar count): a datatype error, since the",
        " * datatypes are null. */",
        '#include "api_guards.h"',
        "",
        "#include <limits.h>",
        "",
        "static char ept_scratch_mem[1 << 16] __attribute__((aligned(64)));",
        "static void *const ept_scratch = ept_scratch_mem;",
        "#define EPT_BIG (MPI_Count)INT_MAX + 1",
        "static const MPI_Count ept_big_counts[64] __attribute__((unused)) = {[0 ... 63] = EPT_BIG};",
        "",
        "int ept_call_guards(MPI_Comm comm, MPI_Group group, MPI_Request request, MPI_Message message, MPI_Win win,",
        "                    MPI_File file)",
        "{",
        "    MPI_File file_v = file;",
        "    MPI_Comm comm_v = comm;",
        "    MPI_Group group_v = group;",
        "    MPI_Request request_v = request;",
        "    MPI_Message message_v = message;",
        "    MPI_Win win_v = win;",
        "    int n = 0;",
        "",
    ]
    for name, params, checks, counts in api.guards:
        # A large-count form: a scalar count beyond INT_MAX, else a count
        # array of them; a neighbourhood one with count arrays only reads
        # none on a communicator without topology, whose int form refuses.
        scalars = [c for c, how in counts or [] if how == "scalar"]
        arrays = [c for c, how in counts or [] if how == "counts"]
        big = (scalars or arrays or [None])[0]
        # (The int form raises that error under its own name.)
        if not counts:
            cases = [(c, BY_VALUE[c[0]][1], "not supported", name) for c in checks]
        elif not scalars and "eighbor" in name:
            cases = [(checks[0], "MPI_ERR_TOPOLOGY", "topology", name[:-2])]
        elif large_mode(name, counts, checks) == "large" and "eighbor" in name:
            cases = [(checks[0], "MPI_ERR_TOPOLOGY", "topology", name)]
        else:  # a type is made of the count's elements: they are MPI_DATATYPE_NULL
            cases = [(checks[0], "MPI_ERR_TYPE", "datatype", name)]
        for tested, cls, word, says in cases:
            args = ", ".join(test_arg(p, tested, big) for p in params)
            out.append("    ept_guard_expect(%s(%s), %s, \"%s\", \"%s\");" % (name, args, cls, says, word))
            out.append("    n++;")
    out += ["    (void)comm_v, (void)group_v, (void)request_v, (void)message_v, (void)win_v, (void)file_v;",
            "    return n;", "}"]
    return "\n".join(out) + "\n"


# ---- the entry points whose dispatch is data (maint/dispatch.txt) -------------

def read_dispatch(path):
    """[(chapter, MPI function, call of its endpoint body)], in file order."""
    out, chapter = [], None
    for n, line in enumerate(open(path), 1):
        line = line.split("#")[0].strip()
        if not line:
            continue
        m = re.match(r"^\[(\w+)\]$", line)
        if m:
            chapter = m.group(1)
            continue
        m = re.match(r"^(MPIX?_\w+)\s+(\w+\(.*\))$", line)
        if not m or not chapter:
            sys.exit("gen_entries: maint/dispatch.txt:%d: expected `[chapter]` or `MPI_X body(args)`" % n)
        out.append((chapter, m.group(1), m.group(2)))
    return out


def generate_dispatch(api, entries):
    """pmpi/<chapter>.entry.gen.inc for each chapter of maint/dispatch.txt: the
    entry point of each function, with the test its guard would make."""
    files = {}
    for chapter, name, body in entries:
        out = files.setdefault("pmpi/%s.entry.gen.inc" % chapter, [
            "/* Generated by maint/gen_entries.py from maint/dispatch.txt and the MPI's",
            " * prototypes: do not edit.  The entry points of pmpi/%s.c whose" % chapter,
            " * dispatch is the usual one: classic handles go straight to PMPI_, an",
            " * endpoint handle to the endpoint body (a function of pmpi/%s.c, which" % chapter,
            " * includes this file at its end). */",
            ""])
        params = api.by_name.get(name)
        if params is None and api.mpi == "mpich":
            sys.exit("gen_entries: maint/dispatch.txt names %s, which MPICH does not declare" % name)
        if params is None or name not in api.exports:
            continue  # not in this MPI (Open MPI 4.1 has no MPI-4 functions): pmpi/have.gen.h says so
        checks = guards_for(name, params)
        if not checks or checks == "array":
            sys.exit("gen_entries: %s takes no single handles to test: write its entry point by hand "
                     "(maint/implemented.txt)" % name)
        tests = [check_test(c) for c in checks]
        out.append("ENTRY_API int %s(%s)" % (name, ", ".join(p[5] for p in params)))
        out.append("{")
        out.append("    if (!%s)" % (tests[0] if len(tests) == 1 else "(" + " || ".join(tests) + ")"))
        out.append("        return P%s(%s);" % (name, ", ".join(p[1] for p in params)))
        out.append("    return %s;" % body)
        out.append("}")
        out.append("")
    return {rel: "\n".join(lines).rstrip("\n") + "\n" for rel, lines in files.items()}


# ---- pmpi/have.gen.h -------------------------------------------------------------

def generate_have(api, names):
    """EP_HAVE_<function> 1 or 0 for each function epmpi writes an entry point
    for, and 1 for every other function the MPI declares and exports (the
    tests ask, e.g. for MPI_Send_c): whether this MPI has it.  The hand-written entry
    points that call the PMPI_ form of a function the MPI lacks (MPI-4's in
    Open MPI 4.1) are compiled out with it: a program built for that MPI
    cannot call them either.  (epmpi's own functions, MPI_Comm_create_endpoints
    and the thread communicators, are there on every MPI.)"""
    out = ["/* Generated by maint/gen_entries.py from the MPI's headers and library:",
           " * do not edit.  Which of the functions epmpi writes entry points for",
           " * this MPI has. */",
           "#ifndef EP_HAVE_GEN_H", "#define EP_HAVE_GEN_H", ""]
    declared = set(re.findall(r"^(?:OMPI_DECLSPEC\s+)?\w+\s+\**\s*(MPIX?_\w+)\s*\(", api.header_text, flags=re.M))
    for name in sorted(names | (declared & api.exports)):
        out.append("#define EP_HAVE_%s %d" % (name, int(name in declared and name in api.exports)))
    out += ["", "#endif"]
    return "\n".join(out) + "\n"


# ---- driver -------------------------------------------------------------------

def read_list(path):
    return {l.split("#")[0].strip() for l in open(path)} - {""}


def coverage(api, lib):
    """Checks that lib exports an entry point for every handle-taking MPI
    function and every mpi_f08 routine that needs one."""
    have = exported(lib)
    handle = api.handle_taking()
    # The hand-written routines that replace one of this MPICH's (epmpi's own,
    # the endpoint calls, are not MPICH's: the Fortran tests call them).
    f08 = [r[0] for r in api.f08_routines()] + sorted(api.fortran_implemented & api.fort_exports)
    missing = [n for n in handle + f08 if n not in have]
    if missing:
        sys.exit("coverage: %s exports no entry point for: %s\n(was it built for another MPICH? configure and build it again)"
                 % (lib, " ".join(missing)))
    print("coverage: %s has an entry point for each of the %d MPI functions of %s that take a handle "
          "(%d of them large-count _c forms) and for %d mpi_f08 routines"
          % (lib, len(handle), "libmpich", sum(n.endswith("_c") for n in handle), len(f08)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpicc", default="mpicc")
    ap.add_argument("--srcdir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--outdir", help="where the files go (default: the source tree)")
    ap.add_argument("--coverage", metavar="LIB")
    a = ap.parse_args()
    dispatch = read_dispatch(os.path.join(a.srcdir, "maint/dispatch.txt"))
    hand = read_list(os.path.join(a.srcdir, "maint/implemented.txt"))
    both = hand & {name for _, name, _ in dispatch}
    if both:
        sys.exit("gen_entries: in both maint/implemented.txt and maint/dispatch.txt: " + " ".join(sorted(both)))
    api = Api(a.mpicc, hand | {name for _, name, _ in dispatch},
              read_list(os.path.join(a.srcdir, "maint/fortran_implemented.txt")))
    if a.coverage:
        coverage(api, a.coverage)
        return
    outputs = {
        "pmpi/entries.gen.c": generate_entries(api),
        "pmpi/fortran.gen.c": generate_fortran(api),
        "test/mpi/api_guards.gen.c": generate_test(api),
        "pmpi/have.gen.h": generate_have(api, hand | {name for _, name, _ in dispatch}),
    }
    outputs.update(generate_dispatch(api, dispatch))
    # The build makes (and compiles) only the files Makefile.am lists.
    am = open(os.path.join(a.srcdir, "Makefile.am")).read()
    unlisted = [rel for rel in outputs if rel not in am.split()]
    if unlisted:
        sys.exit("gen_entries: list %s in GEN_ENTRIES in Makefile.am" % " ".join(unlisted))
    for rel, text in outputs.items():
        path = os.path.join(a.outdir or a.srcdir, rel)
        if not os.path.exists(path) or open(path).read() != text:
            # (An unchanged file keeps its time: nothing recompiles.)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)


if __name__ == "__main__":
    main()
