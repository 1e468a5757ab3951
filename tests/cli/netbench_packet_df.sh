#!/bin/sh
# netbench_packet_df.sh DCSIM SRC - `dcsim netbench --tier packet --adaptive`
# on a Dragonfly (docs/fabric.md "Per-packet UGAL on a Dragonfly"): the
# scenario's paths pick UGAL-L, Valiant or minimal per packet at the source
# router; an all-to-all over 3 groups delivers every packet (conservation),
# Valiant routes every inter-group packet through a third group and
# minimal none, UGAL-L some; two runs agree; --valiant-candidates (default,
# all, a count, refusals); --ugal global (UGAL-G), --ugal progressive (PAR);
# a folded Clos takes the per-switch adaptive
# routing; a phenomenon, -o and the flow tier refuse it.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
df=$src/scenarios/examples/dragonfly-16k.xml
sp=$src/scenarios/examples/superpod-h100.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# 48 ranks: one per router, 16 routers per group: groups 0, 1 and 2
run="$dcsim netbench $df --tier packet --op alltoall --ranks 48 --bytes 16K --buffer 1MB"

expect "ugal routing line" 0 '^# routing      UGAL-L, minimal or Valiant by queue x links left (--adaptive, paths="ugal")' \
    $run --adaptive
expect "ugal counters" 0 "^per packet       [0-9]* of 9024 packets took a Valiant path" $run --adaptive
expect "no routing line without --adaptive" 0 "^packets          9024 delivered" $run
if $run 2>&1 | grep -q "^# routing\|^per packet"; then
    echo "FAIL: a routing line without --adaptive"; fail=1
fi
for p in ugal valiant minimal; do
    $run --adaptive --set "cluster/fabric/@paths=$p" --json >"$tmp/$p.json" 2>"$tmp/err" ||
        { echo "FAIL $p: exit $?"; cat "$tmp/err"; fail=1; }
done
$run --adaptive --json >"$tmp/ugal2.json" 2>"$tmp/err" || { echo "FAIL ugal2"; fail=1; }
$py -c '
import json, math, sys
d = {p: json.load(open(sys.argv[1] + "/" + p + ".json")) for p in ("ugal", "valiant", "minimal", "ugal2")}
packets = 48 * 47 * 4            # 16 KiB = 4 packets of 4096 B
inter = packets - 3 * 16 * 15 * 4  # pairs in two groups
for p, o in d.items():
    assert o["packets"] == packets, (p, o["packets"])
    assert o["messages"] == 48 * 47, p
    assert "per_packet_routing" in o, p
    for k, v in o.items():
        assert not isinstance(v, float) or math.isfinite(v), (p, k, v)
assert d["valiant"]["valiant_packets"] == inter, d["valiant"]["valiant_packets"]
assert d["minimal"]["valiant_packets"] == 0
assert 0 < d["ugal"]["valiant_packets"] < inter, d["ugal"]["valiant_packets"]
# Valiant crosses more links than minimal; UGAL-L in between
assert d["minimal"]["packet_hops"] < d["ugal"]["packet_hops"] < d["valiant"]["packet_hops"]
assert d["ugal"]["packet_time_s"] == d["ugal2"]["packet_time_s"]
assert d["ugal"]["valiant_packets"] == d["ugal2"]["valiant_packets"]
' "$tmp" || { echo "FAIL: Dragonfly per-packet routing JSON checks"; fail=1; }

# --valiant-candidates: the default (4, printed under "defaults used"), all
# (every third group), a count; refused without --adaptive, on a folded
# Clos, with paths="minimal", on the flow tier, and out of range
expect "candidates default line" 0 \
    '^#   Valiant candidates 4 per message (of the third groups): dcsim default' $run --adaptive
expect "candidates all line" 0 \
    '^#   Valiant candidates 127 per message (of the third groups): --valiant-candidates all' \
    $run --adaptive --valiant-candidates all
for k in all 1; do
    $run --adaptive --valiant-candidates $k --json >"$tmp/k$k.json" 2>"$tmp/err" ||
        { echo "FAIL candidates $k: exit $?"; cat "$tmp/err"; fail=1; }
    $run --adaptive --set "cluster/fabric/@paths=valiant" --valiant-candidates $k --json \
        >"$tmp/v$k.json" 2>"$tmp/err" || { echo "FAIL valiant candidates $k: exit $?"; fail=1; }
done
$py -c '
import json, sys
t = sys.argv[1]
d = {k: json.load(open(t + "/" + k + ".json")) for k in ("ugal", "kall", "k1", "vall", "v1")}
assert d["ugal"]["valiant_candidates"] == 4, d["ugal"]["valiant_candidates"]
assert d["kall"]["valiant_candidates"] == 127 and d["k1"]["valiant_candidates"] == 1
inter = 48 * 47 * 4 - 3 * 16 * 15 * 4
for k in ("vall", "v1"):  # Valiant: every inter-group packet through a third group
    assert d[k]["valiant_packets"] == inter, (k, d[k]["valiant_packets"])
    assert d[k]["packets"] == 48 * 47 * 4
for k in ("kall", "k1"):
    assert d[k]["packets"] == 48 * 47 * 4 and 0 < d[k]["valiant_packets"] < inter
' "$tmp" || { echo "FAIL: --valiant-candidates JSON checks"; fail=1; }
bad "candidates zero" "error: --valiant-candidates 0: expected a whole number from 1 to 65535, or all" \
    $run --adaptive --valiant-candidates 0
bad "candidates text" "error: --valiant-candidates 2x: expected a whole number from 1 to 65535, or all" \
    $run --adaptive --valiant-candidates 2x
bad "candidates without adaptive" "error: --valiant-candidates 4: needs --adaptive" \
    $run --valiant-candidates 4
bad "candidates minimal" 'error: --valiant-candidates 4: paths="minimal" takes no Valiant path' \
    $run --adaptive --set "cluster/fabric/@paths=minimal" --valiant-candidates 4
bad "candidates folded Clos" "error: --valiant-candidates 4: needs a Dragonfly family" \
    "$dcsim" netbench "$sp" --tier packet --op incast --ranks 4 --bytes 64K --buffer 1MB \
    --adaptive --valiant-candidates 4
bad "candidates flow tier" "error: --valiant-candidates is an option of --tier packet" \
    "$dcsim" netbench "$df" --valiant-candidates 4

# --ugal global: UGAL-G (every queue on both paths): its routing line,
# conservation, some packets Valiant; refusals
expect "ugal global line" 0 '^# routing      UGAL-G, minimal or Valiant by every queue on both paths' \
    $run --adaptive --ugal global
$run --adaptive --ugal global --json >"$tmp/g.json" 2>"$tmp/err" ||
    { echo "FAIL ugal global: exit $?"; cat "$tmp/err"; fail=1; }
$py -c '
import json, sys
o = json.load(open(sys.argv[1]))
inter = 48 * 47 * 4 - 3 * 16 * 15 * 4
assert o["packets"] == 48 * 47 * 4 and o["valiant_candidates"] == 4, o["packets"]
assert 0 < o["valiant_packets"] < inter, o["valiant_packets"]
' "$tmp/g.json" || { echo "FAIL: --ugal global JSON checks"; fail=1; }
# --ugal progressive: PAR (UGAL-L again at the gateway): its routing line,
# conservation, some packets Valiant
par_line='^# routing      PAR, minimal or Valiant by queue x links left .*and again at the source'
expect "ugal progressive line" 0 "$par_line group.s gateway" $run --adaptive --ugal progressive
$run --adaptive --ugal progressive --json >"$tmp/p.json" 2>"$tmp/err" ||
    { echo "FAIL ugal progressive: exit $?"; cat "$tmp/err"; fail=1; }
$py -c '
import json, sys
o = json.load(open(sys.argv[1]))
inter = 48 * 47 * 4 - 3 * 16 * 15 * 4
assert o["packets"] == 48 * 47 * 4 and o["valiant_candidates"] == 4, o["packets"]
assert 0 < o["valiant_packets"] < inter, o["valiant_packets"]
' "$tmp/p.json" || { echo "FAIL: --ugal progressive JSON checks"; fail=1; }
bad "ugal value" "error: --ugal both: expected local, global or progressive" \
    $run --adaptive --ugal both
bad "ugal valiant paths" 'error: --ugal global: needs a Dragonfly family with paths="ugal"' \
    $run --adaptive --set "cluster/fabric/@paths=valiant" --ugal global
bad "ugal without adaptive" "error: --ugal global: needs --adaptive" $run --ugal global
bad "ugal flow tier" "error: --ugal is an option of --tier packet" "$dcsim" netbench "$df" --ugal global

expect "fat-tree adaptive" 0 "^# routing      adaptive at every switch (--adaptive)" \
    "$dcsim" netbench "$sp" --tier packet --op incast --ranks 4 --bytes 64K --buffer 1MB --adaptive
bad "adaptive phenomenon" "error: --adaptive: runs with send, incast, alltoall and the collectives (--op victim sets its own routing)" \
    "$dcsim" netbench "$sp" --tier packet --op victim --buffer 1MB --adaptive
bad "adaptive flow tier" "error: --adaptive is an option of --tier packet" \
    "$dcsim" netbench "$df" --adaptive
expect "adaptive with -o" 2 "packet series: not with per-packet routing on a Dragonfly" \
    $run --adaptive -o "$tmp/df.h5"
exit $fail
