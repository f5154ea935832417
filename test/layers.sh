#!/bin/sh
# The engine's layers (docs/DEVELOPING.md), lowest first:
#   base abi core diag transport p2p coll rma io
# then src/engine.c (start-up and shutdown of them all) and pmpi/ (the
# entry points) above.  A file of src/LAYER/ includes headers of its own
# layer and the ones below it, never of a layer above: this test lists
# every include that points up and fails on one that test/layers.known
# does not name.  The known ones are debts (the communicator's set-up
# calling each layer's part, the diagnostics describing pending
# requests); an entry of the list that no longer occurs fails the test
# too, so the list only shrinks.  A call a lower layer needs from a
# higher one is declared below and defined above (docs/DEVELOPING.md).
# Exit: 0 when every upward include is known and every known one occurs.
top=${EP_SRCDIR:-$(dirname "$0")/..}
order="base abi core diag transport p2p coll rma io"
known="$top/test/layers.known"

rank() {
    i=0
    for l in $order; do
        [ "$l" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    echo -1
}

found=$(mktemp)
trap 'rm -f "$found"' EXIT
status=0
for f in "$top"/src/*/*.[ch]; do
    layer=$(basename "$(dirname "$f")")
    me=$(rank "$layer")
    if [ "$me" -lt 0 ]; then
        echo "layers: src/$layer/ is no layer of \"$order\" (name it in test/layers.sh)"
        status=1
        continue
    fi
    sed -n 's/^#include "\([a-z0-9_]*\)\/[a-z0-9_]*\.h".*/\1 &/p' "$f" | while read -r to line; do
        [ "$(rank "$to")" -gt "$me" ] || continue
        header=$(echo "$line" | sed 's/^#include "\(.*\)".*/\1/')
        echo "src/$layer/$(basename "$f") -> $header"
    done >> "$found"
    # src/engine.h is the top's: above every layer.
    grep -q '^#include "engine\.h"' "$f" && echo "src/$layer/$(basename "$f") -> engine.h" >> "$found"
    # Nothing in the engine includes the entry layer.
    if grep -q '^#include "\(entry\|fortran\)\.h"' "$f"; then
        echo "layers: src/$layer/$(basename "$f") includes the entry layer (pmpi/)"
        status=1
    fi
done

sort -u "$found" -o "$found"
grep -v '^#' "$known" | grep . | sort -u > "$found.known"
new=$(comm -23 "$found" "$found.known")
gone=$(comm -13 "$found" "$found.known")
rm -f "$found.known"
if [ -n "$new" ]; then
    echo "layers: these includes point to a higher layer:"
    echo "$new" | sed 's/^/  /'
    status=1
fi
if [ -n "$gone" ]; then
    echo "layers: test/layers.known names includes that are gone; remove them from it:"
    echo "$gone" | sed 's/^/  /'
    status=1
fi
[ $status = 0 ] && echo "layers: $(wc -l < "$found") known upward includes, no other"
exit $status
