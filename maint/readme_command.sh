#!/bin/sh
# Prints the command README.md gives under a line starting with $1 (the
# first indented line after it): what .ci/run and test/debian13.sh run, so
# that the README cannot drift from what is tested.  $2: README.md's path.
awk -v head="$1" 'index($0, head) == 1 { found = 1; next } found && /^    / { sub(/^    /, ""); print; exit }' \
    "${2:-README.md}"
