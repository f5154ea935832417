#!/usr/bin/env python3
"""Generates pmpi/guards.gen.c: an entry point for every MPI function of the
installed MPICH that takes a handle which can be an endpoint handle, and that
epmpi does not implement by hand (maint/implemented.txt).

Each generated entry point passes classic handles straight to PMPI_ and
answers an endpoint handle (or, in world mode, MPI_COMM_WORLD / MPI_COMM_SELF)
with a clear "not supported on endpoint ..." error, so no endpoint handle ever
reaches MPICH.

Input: MPICH's mpi_proto.h and ROMIO's mpio.h (found through `mpicc -show`)
and the symbols libmpich exports (`nm -D`).  Usage:
    maint/gen_guards.py --mpicc mpicc --implemented maint/implemented.txt --out pmpi/guards.gen.c
    maint/gen_guards.py ... --check      # exit 1 if the committed file is stale
"""
import argparse
import os
import re
import subprocess
import sys

# Handle kinds by C type: (test expression template, error class, what to call it).
BY_VALUE = {
    "MPI_Comm": ("ep_entry_comm_is_ep({0})", "MPI_ERR_COMM", "communicators"),
    "MPI_Group": ("ep_group_handle_is_ep({0})", "MPI_ERR_GROUP", "groups"),
    "MPI_Request": ("ep_request_handle_is_ep({0})", "MPI_ERR_REQUEST", "requests"),
    "MPI_Message": ("ep_message_handle_is_ep({0})", "MPI_ERR_REQUEST", "messages"),
    "MPI_Win": ("ep_win_handle_is_ep({0})", "MPI_ERR_WIN", "windows"),
}

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
}


def find_headers(mpicc):
    out = subprocess.run([mpicc, "-show"], capture_output=True, text=True, check=True).stdout.split()
    incs = [a[2:] for a in out if a.startswith("-I")] + ["/usr/include"]
    libs = [a[2:] for a in out if a.startswith("-L")] + ["/usr/lib/x86_64-linux-gnu", "/usr/lib"]
    headers = []
    for h in ("mpi_proto.h", "mpio.h"):
        for d in incs:
            p = os.path.join(d, h)
            if os.path.exists(p):
                headers.append(p)
                break
        else:
            sys.exit("gen_guards: %s not found in %s" % (h, " ".join(incs)))
    for d in libs:
        p = os.path.join(d, "libmpich.so")
        if os.path.exists(p):
            return headers, p
    sys.exit("gen_guards: libmpich.so not found")


def exported(lib):
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
    """Returns (type_without_name, name, is_pointer, is_array)."""
    m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*(\[\s*\w*\s*\])*$", p)
    if not m:
        sys.exit("gen_guards: cannot parse parameter: " + p)
    ctype, name, arr = m.group(1).strip(), m.group(2), m.group(3)
    base = ctype.replace("const", "").replace("*", "").strip()
    return ctype, name, "*" in ctype, arr is not None, base, p


def parse(proto_path):
    text = open(proto_path).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    funcs = []
    for m in re.finditer(r"^int\s+(MPIX?_\w+)\s*\((.*?)\)\s*(?:MPICH_ATTR\w*\([^;]*?\)\s*)*(?:MPICH|ROMIO)_API_PUBLIC\s*;", text,
                         flags=re.S | re.M):
        name, params = m.group(1), " ".join(m.group(2).split())
        if name.startswith("MPI_T_") or params in ("", "void") or "..." in params:
            continue
        funcs.append((name, [parse_param(p) for p in split_params(params)]))
    return funcs


def guards_for(name, params):
    """The checks a generated entry point makes, or None if it needs none."""
    checks = []
    for ctype, pname, is_ptr, is_arr, base, _ in params:
        if base not in BY_VALUE:
            continue
        test, cls, what = BY_VALUE[base]
        if not is_ptr and not is_arr:
            checks.append((test.format(pname), cls, what, pname))
        elif is_arr:
            if "const" not in ctype and not name.startswith("MPI_Wait") and not name.startswith("MPI_Test"):
                continue  # output array
            return "array"  # input arrays of handles need a hand-written entry point
        elif (base, pname) in POINTER_INPUTS or POINTER_INPUT_FUNCS.get(name) == base:
            checks.append(("({0} && {1})".format(pname, test.format("*" + pname)), cls, what, "*" + pname))
    return checks


def narrowed(params_c, params_int):
    """The MPI_Count parameters of a large-count (_c) function whose int form
    has the same parameters but for int in their place, or None."""
    if len(params_c) != len(params_int):
        return None
    counts = []
    for pc, pi in zip(params_c, params_int):
        if pc[1] != pi[1]:
            return None
        if pc[0] == pi[0]:
            continue
        if pc[0] == "MPI_Count" and pi[0] == "int" and not pc[3]:
            counts.append(pc[1])
        else:
            return None
    return counts


def generate(funcs, implemented, exports):
    out = [
        "/* Generated by maint/gen_guards.py from MPICH's mpi_proto.h: do not edit.",
        " * Entry points for MPI functions that take a handle which can be an",
        " * endpoint handle and that epmpi does not implement by hand: classic",
        " * handles pass straight to PMPI_; endpoint handles get a clear error, or,",
        " * for the large-count (_c) form of an implemented call, that call when",
        " * the counts fit in an int. */",
        '#include "entry.h"',
        "",
    ]
    n = 0
    by_name = dict(funcs)
    for name, params in funcs:
        if name in implemented or name not in exports:
            continue
        checks = guards_for(name, params)
        if not checks:
            continue
        if checks == "array":
            sys.exit("gen_guards: %s takes an array of handles: implement it by hand and list it in "
                     "maint/implemented.txt" % name)
        decl = ", ".join(p[5] for p in params)
        args = ", ".join(p[1] for p in params)
        out.append("EP_API int(%s)(%s)" % (name, decl))
        out.append("{")
        # A large-count form of a call epmpi implements: on endpoints, the int
        # form runs when the counts fit in an int.
        base = name[:-2] if name.endswith("_c") else None
        counts = narrowed(params, by_name[base]) if base in implemented and base in by_name else None
        if counts:
            out.append("    if (!(%s))" % " || ".join(t for t, _, _, _ in checks))
            out.append("        return P%s(%s);" % (name, args))
            comm = next((pn for _, _, what, pn in checks if what == "communicators"), "MPI_COMM_NULL")
            for c in counts:
                out.append("    if (%s > INT_MAX || %s < INT_MIN)" % (c, c))
                out.append('        return ep_count_too_large("%s", %s, %s);' % (name, comm, c))
            out.append("    return %s(%s);" % (base, ", ".join("(int)" + p[1] if p[1] in counts else p[1]
                                                               for p in params)))
            out.append("}")
            out.append("")
            n += 1
            continue
        for test, cls, what, pname in checks:
            out.append("    if (%s)" % test)
            if what == "communicators":
                # Raised on the communicator's own error handler.
                out.append('        return ep_unsupported_comm("%s", %s);' % (name, pname))
            else:
                out.append('        return ep_unsupported("%s", "%s", %s);' % (name, what, cls))
        out.append("    return P%s(%s);" % (name, args))
        out.append("}")
        out.append("")
        n += 1
    out.append("/* %d entry points. */" % n)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpicc", default="mpicc")
    ap.add_argument("--implemented", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    headers, lib = find_headers(a.mpicc)
    implemented = {l.split("#")[0].strip() for l in open(a.implemented)} - {""}
    funcs = [f for h in headers for f in parse(h)]
    text = generate(funcs, implemented, exported(lib))
    if a.check:
        old = open(a.out).read() if os.path.exists(a.out) else ""
        if old != text:
            sys.exit("gen_guards: %s is stale: run `make guards`" % a.out)
        return
    with open(a.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
