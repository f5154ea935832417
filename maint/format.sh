#!/bin/sh
# The C and C++ sources in clang-format's style (.clang-format at the top of the
# tree): `maint/format.sh` rewrites them, `maint/format.sh --check` (make
# check-format, CI) fails naming every file that would change.  Generated
# files (*.gen.c, *.gen.inc) keep their generator's layout.  Needs clang-format
# (Debian's clang-format, version 14) and a git checkout; files git does not
# ignore are included before they are added.
set -eu
cd "$(dirname "$0")/.."
command -v clang-format > /dev/null || { echo "format.sh: clang-format is missing (apt-get install clang-format)" >&2; exit 2; }
files=$(git ls-files --cached --others --exclude-standard '*.c' '*.cpp' '*.h' | grep -v '\.gen\.[ch]$')
if [ "${1:-}" = --check ]; then
    bad=0
    for f in $files; do
        if ! clang-format --dry-run --Werror "$f" > /dev/null 2>&1; then
            echo "format.sh: $f is not formatted (maint/format.sh rewrites it)" >&2
            bad=1
        fi
    done
    exit $bad
fi
# shellcheck disable=SC2086 # one file name per word
clang-format -i $files
