#!/bin/sh
# make check-mpich-suite: MPICH's own test suite (test/mpi of the MPICH
# release installed here) run twice, on plain MPICH and through epmpi with
# every communicator an endpoint communicator (EPMPI_ENDPOINTS=1), and the
# tests that pass plain but fail through epmpi listed.  Exit 0 when there
# are none, 1 otherwise (77 when the suite cannot be had: no network to
# Debian's registry, not Debian, ...).
#
# MPICH's source comes from Debian's registry as the source package of the
# MPICH in use (a deb-src line for this release in a private apt state, so
# the machine's own apt setup is not touched), is unpacked and configured
# (MPICH's test configure, about half a minute) in the cache folder, and
# never enters this tree.
#
# Environment (make check-mpich-suite sets the first two):
#   SUITE_LIB      the libepmpi.so to preload
#   SUITE_CACHE    where the source and the built tests go
#   SUITE_DIRS     the test folders, comma-separated (default: the ones
#                  below); SUITE_MAXNP (4) the most processes of a test;
#                  SUITE_TIMEOUT (60) seconds per test
#   SUITE_EPMPI_ENV  more VAR=VALUE settings for the epmpi run, e.g.
#                  "EPMPI_P2P_PATH=engine"
#   SUITE_PLAIN=0  skips the plain run and takes its results from
#                  SUITE_CACHE/plain.tap of an earlier run
# test/mpich-suite.known lists the tests known to fail through epmpi, each
# with the reason: they are reported, and do not fail the run.
set -u
lib=${SUITE_LIB:?mpich-suite.sh: SUITE_LIB is not set (make check-mpich-suite sets it)}
cache=${SUITE_CACHE:?mpich-suite.sh: SUITE_CACHE is not set}
dirs=${SUITE_DIRS:-pt2pt,comm,coll,threads,rma,group,attr,errhan,init,topo,io,info,datatype}
maxnp=${SUITE_MAXNP:-4}
export MPITEST_TIMEOUT="${SUITE_TIMEOUT:-60}"
skip() { echo "mpich-suite: skipped: $*"; exit 77; }
fail() { echo "mpich-suite: $*" >&2; exit 1; }

version=$(mpichversion 2>/dev/null | awk '/MPICH Version:/ { print $3 }')
[ -n "$version" ] || skip "no mpichversion (is MPICH installed?)"
# shellcheck disable=SC1091
. /etc/os-release 2>/dev/null
if [ -z "${VERSION_CODENAME:-}" ] || ! command -v apt-get > /dev/null; then
    skip "not a Debian system with apt-get"
fi
mkdir -p "$cache" || fail "cannot make $cache"
cache=$(cd "$cache" && pwd)
src=$cache/mpich-$version/test/mpi

# ---- the source, once -------------------------------------------------------
if [ ! -f "$src/runtests" ]; then
    apt="$cache/apt"
    mkdir -p "$apt/lists/partial" "$apt/archives/partial"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $VERSION_CODENAME main" \
        > "$apt/sources.list"
    o="-o Dir::Etc::SourceParts=/dev/null -o Dir::Etc::sourcelist=$apt/sources.list -o Dir::State::Lists=$apt/lists"
    echo "== mpich-suite: MPICH $version's source from Debian's $VERSION_CODENAME"
    # shellcheck disable=SC2086
    (cd "$cache" && apt-get -qq $o update && apt-get -qq $o source --download-only mpich) > "$cache/apt.log" 2>&1 ||
        skip "apt-get source mpich failed (see $cache/apt.log)"
    # (Debian 13's is mpich_4.3.0+really4.2.1: the version is in the name.)
    tarball=$(ls "$cache"/mpich_*"$version"*.orig.tar.* 2>/dev/null | head -n 1)
    [ -n "$tarball" ] || fail "the source package is not MPICH $version: $(ls "$cache")"
    (cd "$cache" && tar -xf "$tarball" "mpich-$version/test/mpi") || fail "cannot unpack $tarball"
    echo "== mpich-suite: configuring the tests"
    (cd "$src" && ./configure MPICC=mpicc CC=mpicc --disable-fortran --disable-cxx --disable-spawn \
        --disable-ft-tests --disable-perftest > configure.log 2>&1) || fail "MPICH's test configure failed ($src/configure.log)"
fi

# ---- the tests of the chosen folders ---------------------------------------
echo "== mpich-suite: building $dirs"
(cd "$src" && make -j2 -C util > build.log 2>&1 && make -j2 -C dtpools >> build.log 2>&1) ||
    fail "building MPICH's test helpers failed ($src/build.log)"
for d in $(echo "$dirs" | tr ',' ' '); do
    (cd "$src" && make -j2 -C "$d" >> build.log 2>&1) || fail "building MPICH's tests in $d failed ($src/build.log)"
done

# runtests runs `MPIEXEC -n N prog args`: the epmpi run's launcher adds the
# preload and world mode with one endpoint per process.
launcher=$cache/mpiexec-epmpi
{
    echo "#!/bin/sh"
    printf 'exec mpiexec -genv LD_PRELOAD %s -genv EPMPI_ENDPOINTS 1' "$lib"
    for kv in ${SUITE_EPMPI_ENV:-}; do printf ' -genv %s %s' "${kv%%=*}" "${kv#*=}"; done
    echo ' "$@"'
} > "$launcher"
chmod +x "$launcher"

run() { # NAME MPIEXEC: one run of runtests, results in $cache/NAME.tap
    echo "== mpich-suite: the $1 run (at most $maxnp processes, ${MPITEST_TIMEOUT} s a test)"
    start=$(date +%s)
    (cd "$src" && ./runtests -srcdir=. -tests=testlist -testdirs="$dirs" -maxnp="$maxnp" -mpiexec="$2" \
        -tapfile="$cache/$1.tap" > "$cache/$1.out" 2>&1)
    echo "   $(grep -c '^ok' "$cache/$1.tap") passed, $(grep -c '^not ok' "$cache/$1.tap") failed in $(( $(date +%s) - start ))s"
}
if [ "${SUITE_PLAIN:-1}" != 0 ] || [ ! -f "$cache/plain.tap" ]; then
    run plain mpiexec
fi
run epmpi "$launcher"

# ---- tests that pass plain and fail through epmpi --------------------------
# A test is its folder, name, process count and occurrence (a program can
# run several times with other arguments, always in the same order).
results() {
    awk '/^(not )?ok / { sub(/ # time=.*/, ""); ok = $1 == "ok"; sub(/^(not )?ok +- +/, "");
                         n[$0]++; print $0 " #" n[$0], ok }' "$1"
}
results "$cache/plain.tap" > "$cache/plain.res"
results "$cache/epmpi.tap" > "$cache/epmpi.res"
worse=$(awk 'NR == FNR { plain[$1 " " $2 " " $3] = $4; next }
             ($1 " " $2 " " $3) in plain && plain[$1 " " $2 " " $3] == 1 && $4 == 0 { print $1 " " $2 " " $3 }' \
    "$cache/plain.res" "$cache/epmpi.res")
# Known ones: "folder/name processes  reason" lines, matched without the
# occurrence number.
known=$(dirname "$0")/mpich-suite.known
new=""
if [ -n "$worse" ]; then
    new=$(echo "$worse" | while read -r t np _; do
        reason=$(awk -v t="${t#./}" -v np="$np" '$1 == t && $2 == np { $1 = $2 = ""; sub(/^ +/, ""); print; exit }' \
            "$known" 2>/dev/null)
        if [ -n "$reason" ]; then
            echo "mpich-suite: known: $t $np: $reason" >&2
        else
            echo "$t $np"
        fi
    done)
fi
if [ -n "$new" ]; then
    echo "mpich-suite: $(echo "$new" | wc -l) tests pass on plain MPICH and fail through epmpi (their output: $cache/epmpi.tap):"
    echo "$new" | sed 's/^/   /'
    exit 1
fi
echo "== mpich-suite: no test passes on plain MPICH and fails through epmpi, but for the known ones listed"
