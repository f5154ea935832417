#!/usr/bin/env bash
# `make check-debian13`: the second platform.  Makes a Debian 13 ("trixie")
# root with debootstrap (MPICH 4.2.1, UCX 1.18: Debian's current stable),
# puts the committed tree in it, and runs there the README's two commands as
# a new user would: the first installs the packages, builds and runs the
# demo; the second builds and runs all tests.  Then the same tests over
# Debian 13's Open MPI 5.0 (test/openmpi.sh).  Needs root and Debian's
# registry.  The root stays in the build tree (debian13-root/) and is used
# again by the next run; EPMPI_DEBIAN13_TESTS=0 stops after the demo.
# EPMPI_DEBIAN_SUITE=sid does the same in Debian unstable (`make
# check-debian-sid`: MPICH 5.0, whatever sid has that day), in
# debian-sid-root/.
set -euo pipefail
srcdir=$(cd "${EP_SRCDIR:-$(dirname "$0")/..}" && pwd)
suite=${EPMPI_DEBIAN_SUITE:-trixie}
case $suite in # tag: the make target's and the root's name
    trixie) name="Debian 13" tag=debian13 ;;
    *) name="Debian $suite" tag=debian-$suite ;;
esac
root=$PWD/$tag-root
[ "$suite" = trixie ] && root=${EPMPI_DEBIAN13_ROOT:-$root}
mirror=${EPMPI_DEBIAN_MIRROR:-http://deb.debian.org/debian}
log=$PWD/$tag-debootstrap.log

fail() {
    echo "check-$tag: $*" >&2
    exit 1
}
[ "$(id -u)" = 0 ] || fail "needs root (debootstrap and chroot)"
command -v debootstrap >/dev/null || fail "needs debootstrap: apt-get install debootstrap"

build_cmd=$(sh "$srcdir/maint/readme_command.sh" "Build everything and run the demo" "$srcdir/README.md")
test_cmd=$(sh "$srcdir/maint/readme_command.sh" "Build and run all tests:" "$srcdir/README.md")
[ -n "$build_cmd" ] && [ -n "$test_cmd" ] || fail "README.md lacks its two commands"

# Bind mounts go before anything runs inside and always come off: nothing
# may delete the root while the host's /dev is mounted in it.
mounted=()
unmount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -l "${mounted[i]}" 2>/dev/null || true
    done
    mounted=()
}
trap unmount_all EXIT
trap 'unmount_all; exit 1' INT TERM HUP

start=$(date +%s)
if [ ! -x "$root/usr/bin/apt-get" ] || [ ! -f "$root/.debootstrap-done" ]; then
    [ -e "$root" ] && ! mountpoint -q "$root/proc" && rm -rf --one-file-system "$root"
    echo "== debootstrap $suite $root ($mirror)"
    debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$log" 2>&1 ||
        {
            tail -n 20 "$log"
            fail "debootstrap failed (log: $log)"
        }
    touch "$root/.debootstrap-done"
    echo "== debootstrap took $(($(date +%s) - start))s"
fi
# Unstable's Release file carries a Valid-Until date a few days ahead; a
# mirror that is a snapshot (this project's registry is) serves one past
# it, which apt refuses.  The root only builds and tests.
[ "$suite" = trixie ] || echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99epmpi-snapshot"
for d in proc sys dev dev/shm; do
    mkdir -p "$root/$d"
    mountpoint -q "$root/$d" || {
        mount --bind "/$d" "$root/$d"
        mounted+=("$root/$d")
    }
done

# The committed tree (as CI's clone has it), fresh each time; epmpi.clean
# keeps it unbuilt for the Open MPI build.
rm -rf --one-file-system "$root/root/epmpi" "$root/root/epmpi.clean"
mkdir -p "$root/root/epmpi.clean"
if git -C "$srcdir" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$srcdir" archive HEAD | tar -x -C "$root/root/epmpi.clean"
else # a release tarball's tree
    (cd "$srcdir" && tar -c --exclude='./debian*-root' --exclude=./openmpi-build .) | tar -x -C "$root/root/epmpi.clean"
fi
cp -a "$root/root/epmpi.clean" "$root/root/epmpi"

inside() {
    chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive ${EPMPI_TEST_HUGE:+EPMPI_TEST_HUGE=$EPMPI_TEST_HUGE} \
        /bin/bash -c "cd /root/epmpi && $1"
}
echo "== $name: $(inside 'cat /etc/debian_version')"
echo "== README build command: $build_cmd"
start=$(date +%s)
inside "$build_cmd"
echo "== MPICH $(inside 'mpichversion | sed -n "s/^MPICH Version: *//p"'), built and demo run in $(($(date +%s) - start))s"
[ "${EPMPI_DEBIAN13_TESTS:-1}" = 0 ] && exit 0
echo "== README test command: $test_cmd"
start=$(date +%s)
status=0
inside "$test_cmd" || status=$?
echo "== make check on $name took $(($(date +%s) - start))s"
if [ $status -ne 0 ]; then
    awk '/^(FAIL|ERROR): /, 0' "$root/root/epmpi/test-suite.log" 2>/dev/null | tail -n 150
    fail "the tests failed on $name"
fi
grep -q "^:test-result: PASS" "$root/root/epmpi/test/mpi/f_f08.trs" 2>/dev/null ||
    fail "the Fortran tests did not run on $name (is gfortran in the README's packages?)"

# Open MPI 5.0, Debian 13's other MPI: its packages (installing them makes
# mpicc and mpirun Open MPI's, so MPICH's are set back for the next run),
# then a clean copy of the tree and test/openmpi.sh, each program in one
# shape as CI's Open MPI 4.1 run.  EPMPI_DEBIAN13_OPENMPI=0 leaves it out.
if [ "$suite" = trixie ] && [ "${EPMPI_DEBIAN13_OPENMPI:-1}" != 0 ]; then
    echo "== $name: Open MPI"
    start=$(date +%s)
    inside "apt-get install -y -qq libopenmpi-dev openmpi-bin >/dev/null &&
        update-alternatives --set mpi /usr/bin/mpicc.mpich >/dev/null &&
        update-alternatives --set mpirun /usr/bin/mpirun.mpich >/dev/null" || fail "installing Open MPI failed"
    rm -rf --one-file-system "$root/root/epmpi-openmpi"
    mkdir -p "$root/root/epmpi-openmpi"
    cp -a "$root/root/epmpi.clean/." "$root/root/epmpi-openmpi/"
    inside "cd /root/epmpi-openmpi && EPMPI_TEST_ONE_SHAPE=1 bash test/openmpi.sh" ||
        fail "the tests failed over Open MPI on $name"
    echo "== $name: Open MPI $(inside 'ompi_info --version | sed -n "s/^Open MPI v//p"') took $(($(date +%s) - start))s"
fi
echo "== check-$tag passed"
