#!/bin/sh
# step_fail.sh DCSIM SRC - `dcsim step --fail` (docs/failures.md) on the
# shipped 3:1 leaf-spine: the iteration as built in the comparison is the
# plain step's to the last printed digit; a part failed then repaired is
# the empty state (digest and iteration unchanged, no link changed); the
# digest does not depend on the order of the parts; a spine down under
# adaptive routing never speeds the iteration up, takes its 2 x 43 cables'
# directions down and empties them, in text and JSON; a slow link counts as
# slow, not down; gpu=ID:SPEED names the straggler.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/concurrency-leafspine.xml
spine=2107 # leaves are nodes 2064-2106, spines 2107-2122 (dcsim topo: 43 + 16 switches)
plain=$("$dcsim" step "$ex" -q | sed -n 's/^iteration *\([0-9.]*\) s.*/\1/p')
built=$("$dcsim" step "$ex" -q --fail switch=$spine | sed -n 's/^ *iteration \([0-9.]*\) s as built.*/\1/p')
[ -n "$plain" ] && [ "$plain" = "$built" ] || {
    echo "FAIL: as built in the comparison ($built) is not the plain step's ($plain)"; fail=1; }
expect "repaired: no part" 0 "^failed parts    none (digest" \
    "$dcsim" step "$ex" -q --fail switch=$spine --fail switch=$spine:1
expect "repaired: no change" 0 "iteration $plain s as built -> $plain s (+0.000 %)" \
    "$dcsim" step "$ex" -q --fail link=4128 --fail link=4128:1
expect "repaired: no link changed" 0 "no link's bytes per iteration changed" \
    "$dcsim" step "$ex" -q --fail link=4128 --fail link=4128:1
d1=$("$dcsim" step "$ex" -q --fail link=4128:0.5 --fail switch=$spine | grep "^failed parts")
d2=$("$dcsim" step "$ex" -q --fail switch=$spine --fail link=4128:0.5 | grep "^failed parts")
[ -n "$d1" ] && [ "$d1" = "$d2" ] || { echo "FAIL: order changed the state: $d1 / $d2"; fail=1; }
out=$("$dcsim" step "$ex" -q --set cluster/fabric/@routing=adaptive --fail switch=$spine --json)
printf '%s\n' "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)
f = o["failure_state"]
assert f["parts"] == [{"class": "switch", "id": 2107, "speed": 0}], f["parts"]
assert f["links_down"] == 86 and f["links_slow"] == 0, f
assert o["iteration_s"] >= f["iteration_as_built_s"], (o["iteration_s"], f)
assert len(f["link_changes"]) == 8 and len(f["digest"]) == 16
for c in f["link_changes"]:
    if c["speed"] == 0:
        assert c["bytes_failed"] == 0 and (c["from"] == 2107 or c["to"] == 2107), c
' || { echo "FAIL: --json failure_state"; fail=1; }
expect "slow link" 0 "0 directed links down, 2 slow" "$dcsim" step "$ex" -q --fail link=4128:0.5
expect "gpu speed is the straggler" 0 "^stragglers      slowest GPU 5 at 90.0 % speed" \
    "$dcsim" step "$ex" -q --fail gpu=5:0.9
expect "concurrent" 0 "^failed parts    switch=2107" "$dcsim" step "$ex" -q --concurrent \
    --fail switch=$spine
expect "analytic" 0 "^failed parts    switch=2107" "$dcsim" step "$ex" -q --analytic \
    --fail switch=$spine
exit $fail
