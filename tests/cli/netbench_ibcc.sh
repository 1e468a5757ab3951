#!/bin/sh
# netbench_ibcc.sh DCSIM SRC - `dcsim netbench --tier packet --ibcc` end to
# end on an InfiniBand fabric: the parameters echoed with the rules used for
# what was not given, FECN marks and BECNs counted (one BECN per mark), a
# marking threshold above any queue leaves the incast's time as without IB
# CC, a low one makes the queues shorter, JSON that parses, bad values and
# RoCE refused with one line and exit 2 (also by dcsim step --network packet).
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
sp=$src/scenarios/examples/superpod-h100.xml
ls=$src/scenarios/examples/concurrency-leafspine.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run="$dcsim netbench $sp --tier packet --op incast --ranks 9 --bytes 1M --buffer 1MB"
cc="threshold=100KB,marking-rate=0,increase=1,limit=127,timer=10us,step=20ns"

expect "ibcc echoed" 0 "^# IB CC        --ibcc: FECN at 100000 B queued, 1 in 1 eligible packets; BECN: CCTI +1 (limit 127), -1 every 10 us down to 0; 20 ns per CCTI step" \
    $run --ibcc "$cc"
expect "ibcc min rule" 0 "^#   IB CC min 0: rule: the table's first entry" $run --ibcc "$cc"
expect "ibcc victim rule" 0 "^#   IB CC victim 0: rule: the victim mask off" $run --ibcc "$cc"
expect "ibcc stats" 0 "^IB CC            [1-9][0-9]* FECN marks" $run --ibcc "$cc"

for t in off high low; do
    case $t in
    off) extra= ;;
    high) extra="--ibcc threshold=100MB,marking-rate=0,increase=1,limit=127,timer=10us,step=20ns" ;;
    low) extra="--ibcc $cc" ;;
    esac
    $run $extra --json >"$tmp/$t.json" 2>"$tmp/err" || { echo "FAIL $t: exit $?"; cat "$tmp/err"; fail=1; }
done
$py -c '
import json, math, sys
off, high, low = (json.load(open(sys.argv[1] + "/" + t + ".json")) for t in ("off", "high", "low"))
# nothing reaches 100 MB: no mark, and the same time as without IB CC
assert high["fecn_marks"] == 0 and high["packet_time_s"] == off["packet_time_s"], (high, off)
assert "fecn_marks" not in off
# every mark returns one BECN; the queues are shorter with marking at 100 KB
assert low["fecn_marks"] > 0 and low["becns"] == low["fecn_marks"], low
assert low["becns_in_flight"] <= low["becns"], low
assert low["max_held_bytes"] < off["max_held_bytes"], (low["max_held_bytes"], off["max_held_bytes"])
assert low["packet_time_s"] >= off["flow_time_s"] * (1 - 1e-9), low
b = low["ib_congestion_control"]
assert b["threshold_bytes"] == 1e5 and b["marking_rate"] == 0 and b["cct_step_s"] == 2e-8, b
for o in (off, high, low):
    for k, v in o.items():
        assert not isinstance(v, float) or math.isfinite(v), (k, v)
' "$tmp" || { echo "FAIL: ibcc JSON checks"; fail=1; }

expect "ibcc on roce" 2 "^dcsim netbench: error: --ibcc .*: InfiniBand congestion control needs an InfiniBand fabric link" \
    "$dcsim" netbench "$ls" --tier packet --op incast --ibcc "$cc"
expect "ibcc missing" 2 "error: --ibcc: step= is missing: IB CC values are a GAP" \
    $run --ibcc threshold=100KB,marking-rate=0,increase=1,limit=127,timer=10us
expect "ibcc bad key" 2 "error: --ibcc: 'rate=3': expected one of threshold=" \
    $run --ibcc "$cc,rate=3"
expect "ibcc twice" 2 "error: --ibcc: timer given twice" $run --ibcc "$cc,timer=1us"
for bad in "timer=0s" "timer=nan" "step=-1ns" "step=inf" "threshold=-1KB" "increase=0" \
           "victim=2" "marking-rate=4294967296" "min=200"; do
    key=${bad%%=*}
    args=$(printf '%s' "$cc" | sed "s/$key=[^,]*,\{0,1\}//")
    expect "ibcc $bad" 2 "error: --ibcc: " $run --ibcc "$args,$bad"
done
expect "ibcc phenomenon" 2 "error: --ibcc .*: runs with send, incast, alltoall, the collectives, incast-sweep and fidelity" \
    "$dcsim" netbench "$sp" --tier packet --op victim --buffer 1MB --ibcc "$cc"
expect "ibcc flow tier" 2 "error: --ibcc is an option of --tier packet" \
    "$dcsim" netbench "$sp" --ibcc "$cc"
# dcsim step takes the same option with --network packet
expect "step ibcc without packet" 2 "error: --ibcc is an option of --network packet" \
    "$dcsim" step "$ls" --ibcc "$cc"
expect "step ibcc on roce" 2 "error: --ibcc .*: InfiniBand congestion control needs an InfiniBand fabric link" \
    "$dcsim" step "$ls" --network packet --ibcc "$cc"
exit $fail
