#!/bin/sh
# The engine's layers (docs/DEVELOPING.md), lowest first:
#   abi base core diag transport p2p coll comm rma io
# then the top of the engine (src/engine.c, src/progress.c,
# src/comm_parts.c, which know every layer) and pmpi/ (the entry points)
# above.  A file of src/LAYER/ includes headers of its own layer and the
# ones below it, never of a layer above, nor the top's or the entry
# layer's: this test fails on any such include.  A call a lower layer
# needs from a higher one is declared below and defined above.
# Exit: 0 when no include points up.
top=${EP_SRCDIR:-$(dirname "$0")/..}
order="abi base core diag transport p2p coll comm rma io"

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
nfiles=0
for f in "$top"/src/*/*.[ch]; do
    nfiles=$((nfiles + 1))
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
    # The top's headers (src/*.h) and the entry layer's (pmpi/*.h) are
    # above every layer.
    sed -n 's/^#include "\([a-z0-9_]*\.h\)".*/\1/p' "$f" | while read -r h; do
        [ -e "$top/src/$h" ] || [ -e "$top/pmpi/$h" ] || continue
        echo "src/$layer/$(basename "$f") -> $h"
    done >> "$found"
done

if [ -s "$found" ]; then
    echo "layers: these includes point to a higher layer:"
    sed 's/^/  /' "$found"
    status=1
fi
[ $status = 0 ] && echo "layers: $nfiles files of $(echo $order | wc -w) layers, no include points up"
exit $status
