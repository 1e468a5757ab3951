#!/bin/sh
# transceiver.sh DCSIM SRC - transceiver cages as a part class
# (docs/failures.md "Transceivers: a cage takes its ports down together").
# A cage down is its ports' cables down by hand, bit for bit (the whole step
# report but the parts line, text and JSON): on the NDR leaf-spine of
# tests/scenarios/flapping-cable.xml (catalog port form: twin-port) a
# spine's cage (its ports to both leaves) and a leaf's uplink cage, and on
# the RoCE example with --cage-ports 2 a leaf's uplink cage; any port of a
# cage names the same cage; the digest does not depend on the order of the
# parts; refusals: no port form (RoCE without --cage-ports), single-port
# cages (ib-hdr), a link leaving a host, no such link, a bad --cage-ports.
# The campaign: <failure component="transceiver"> counts the cages of the
# tier's switches (the cluster MTBF is the part MTBF / cages), the trace
# names each part by its cage's first port, and 1 and 2 threads agree.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d /tmp/dcsim-xcvr-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
s=$src/tests/scenarios/flapping-cable.xml
ex=$src/scenarios/examples/concurrency-leafspine.xml
# flapping-cable.xml: hosts 0-47 (48 host cables, links 0-95), leaves 48-49,
# spines 50-57; leaf 48's uplinks are cables 48-55 (links 96, 98, .., 110,
# leaving the leaf), spine 50's ports are links 97 (to leaf 48) and 113
# (to leaf 49): 24 host ports then 8 uplinks per leaf, cage k = ports 2k, 2k+1
same() { # same DESCRIPTION "ARGS A" "ARGS B": every line but the parts line equal
    "$dcsim" step $2 >"$tmp/a" 2>&1
    "$dcsim" step $3 >"$tmp/b" 2>&1
    grep -v "^failed parts" "$tmp/a" >"$tmp/a2"
    grep -v "^failed parts" "$tmp/b" >"$tmp/b2"
    if ! cmp -s "$tmp/a2" "$tmp/b2"; then
        echo "FAIL: $1: the reports differ"; diff "$tmp/a2" "$tmp/b2" | head; fail=1
    fi
    grep -q "4 directed links down" "$tmp/a" || { echo "FAIL: $1: not 4 links down"; cat "$tmp/a"; fail=1; }
}
same "spine cage = its two cables" "$s -q --fail transceiver=97" "$s -q --fail link=96 --fail link=112"
same "the cage's other port names it" "$s -q --fail transceiver=113" "$s -q --fail link=96 --fail link=112"
same "leaf uplink cage" "$s -q --fail transceiver=96" "$s -q --fail link=96 --fail link=98"
same "leaf uplink cage, concurrent" "$s -q --concurrent --fail transceiver=98" "$s -q --concurrent --fail link=96 --fail link=98"
same "RoCE, --cage-ports 2" "$ex -q --cage-ports 2 --fail transceiver=4128" "$ex -q --fail link=4128 --fail link=4130"
# the iteration moved (the comparison is not of two unchanged reports)
grep -q "iteration 3.89304 s as built -> 3.74522 s" "$tmp/a" ||
    { echo "FAIL: RoCE cage: iteration"; grep iteration "$tmp/a"; fail=1; }
j1=$("$dcsim" step "$s" -q --json --fail transceiver=96 | python3 -c '
import json, sys
f = json.load(sys.stdin)["failure_state"]; f.pop("parts"); f.pop("digest"); print(json.dumps(f, sort_keys=True))')
j2=$("$dcsim" step "$s" -q --json --fail link=96 --fail link=98 | python3 -c '
import json, sys
f = json.load(sys.stdin)["failure_state"]; f.pop("parts"); f.pop("digest"); print(json.dumps(f, sort_keys=True))')
[ -n "$j1" ] && [ "$j1" = "$j2" ] || { echo "FAIL: JSON of the cage and of its cables differ"; fail=1; }
d1=$("$dcsim" step "$s" -q --fail transceiver=96 --fail link=100:0.5 | grep "^failed parts")
d2=$("$dcsim" step "$s" -q --fail link=100:0.5 --fail transceiver=96 | grep "^failed parts")
[ -n "$d1" ] && [ "$d1" = "$d2" ] || { echo "FAIL: order changed the state: $d1 / $d2"; fail=1; }
d3=$("$dcsim" step "$ex" -q --cage-ports 2 --fail transceiver=4128 | grep "^failed parts")
d4=$("$dcsim" step "$ex" -q --cage-ports 3 --fail transceiver=4128 | grep "^failed parts")
[ "$d3" != "$d4" ] || { echo "FAIL: the ports per cage do not change the digest"; fail=1; }
printf '%s\n' "$d4" | grep -q "6 directed links down" || { echo "FAIL: 3 ports a cage: $d4"; fail=1; }
bad "no port form" "no port form for the fabric's roce-400g switches" "$dcsim" step "$ex" -q --fail transceiver=4128
bad "single-port cages" "ib-hdr switches have no twin-port cages" \
    "$dcsim" step "$s" -q --set cluster/fabric/@link=ib-hdr --fail transceiver=96
bad "a host's link, no port form" "transceiver=0: a host-side transceiver needs the servers' port form" "$dcsim" step "$s" -q --fail transceiver=0
bad "no such link" "transceiver=9999: no directed link 9999" "$dcsim" step "$s" -q --fail transceiver=9999
bad "cage ports 1" "--cage-ports 1: the ports one transceiver cage serves must be" \
    "$dcsim" step "$s" -q --cage-ports 1 --fail transceiver=96
bad "cage ports alone" "--cage-ports 2: an option of --fail transceiver=ID" "$dcsim" step "$s" -q --cage-ports 2
# the campaign: spine cages (tier 2): 8 spines of 2 ports, one cage each
sed -e '/<failure component="cable"/,/flap-up/c\
    <failure component="transceiver" tier="2" distribution="exponential" mtbf="80h" repair="6h"/>' \
    "$s" >"$tmp/x.xml"
grep -q 'component="transceiver" tier="2"' "$tmp/x.xml" && ! grep -q 'flaps=' "$tmp/x.xml" ||
    { echo "FAIL: the campaign scenario was not made"; cat "$tmp/x.xml"; fail=1; }
OMP_NUM_THREADS=1 "$dcsim" run "$tmp/x.xml" -q --json --replicas 4 -o "$tmp/x.h5" >"$tmp/r1" ||
    { echo "FAIL: transceiver campaign"; fail=1; }
OMP_NUM_THREADS=2 "$dcsim" run "$tmp/x.xml" -q --json --replicas 4 >"$tmp/r2"
cmp -s "$tmp/r1" "$tmp/r2" || { echo "FAIL: 1 and 2 threads differ"; fail=1; }
python3 - "$tmp/r1" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
# 8 cages at 80 h each: the cluster MTBF is 10 h
assert abs(s["cluster_mtbf_s"] - 36000) < 1e-6, s["cluster_mtbf_s"]
assert s["parts_down"] > 0 and s["parts_repaired"] > 0, s
PY
/usr/bin/python3 - "$tmp/x.h5" <<'PY' || fail=1
import sys
import h5py
rows = h5py.File(sys.argv[1], "r")["/campaign/parts"][:]
ids = set(int(x) for x in rows["fabric_id"])
# spine s's cage: its first port, link 97 + 2 x (s - 50), leaving spine s
assert rows.size > 0 and ids <= set(range(97, 112, 2)), ids
PY
[ "$fail" -eq 0 ] && echo "ok: transceivers"
exit "$fail"
