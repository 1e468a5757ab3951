#!/bin/sh
# netbench_sharp.sh DCSIM SRC - `dcsim netbench --tier packet --op allreduce
# --algo in-network`: SHARP at the switches of an InfiniBand fabric
# (models/packet_sharp.h). On the superpod (ib-ndr, rail-optimised, no
# reduction-efficiency in the catalog: the reduction rate is the link's
# effective rate B), P whole MTU packets over a tree of H links up:
#   packet time - flow time = (2H - 1) MTU / B + 2H d        (exactly)
# (the flow tier: S / B + the plan's latency; the packet tier adds the
# pipeline; test_packet_sharp.c derives it). Every rank receives S; the
# switches sum P x (tree edges) packets; the run is deterministic; the
# defaults are printed; a RoCE fabric is refused with one line.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
sp=$src/scenarios/examples/superpod-h100.xml
ls=$src/scenarios/examples/concurrency-leafspine.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run="$dcsim netbench $sp --tier packet --op allreduce --algo in-network --buffer 1MB --bytes 4000KiB"

expect "sharp header" 0 "^# dcsim netbench --tier packet: allreduce, algorithm in-network, 8 ranks" $run --ranks 8
expect "sharp buffer default" 0 "^#   SHARP aggregation buffer: the children's ingress port buffers" $run --ranks 8
expect "sharp rate default" 0 "^#   SHARP reduction rate 47 GB/s: the link's effective rate (line rate" $run --ranks 8
expect "sharp tree one leaf" 0 "^SHARP tree       root switch [0-9]*, 1 link up, 1 switch;" $run --ranks 8
expect "sharp tree two SUs" 0 "^SHARP tree       root switch [0-9]*, 2 links up, 3 switches;" $run --ranks 64

for n in 8 64; do
    $run --ranks $n --json >"$tmp/a$n.json" 2>"$tmp/err" || { echo "FAIL json $n: exit $?"; cat "$tmp/err"; fail=1; }
    $run --ranks $n --json >"$tmp/b$n.json" 2>"$tmp/err" || { echo "FAIL json $n again"; fail=1; }
    $py -c '
import json, math, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2])); n = int(sys.argv[3])
s, x = a["bytes"], a["sharp"]
assert s == 4096000 and a["mtu_bytes"] == 4096, (s, a["mtu_bytes"])
P, H, B, d = s / 4096, x["hops_up"], x["reduction_bytes_per_s"], a["hop_latency_s"]
assert x["delivered_bytes"] == n * s and a["sent_bytes"] == n * s, x
assert x["aggregations"] == P * (n + x["switches"] - 1), x
assert a["messages"] == n and a["packets"] == n * P, (a["messages"], a["packets"])
e = (2 * H - 1) * 4096 / B + 2 * H * d
gap = a["packet_time_s"] - a["flow_time_s"]
assert abs(gap - e) <= 1e-6 * a["flow_time_s"], (gap, e)
for k in ("packet_time_s", "flow_time_s", "events", "packet_hops", "max_held_bytes"):
    assert a[k] == b[k], (k, a[k], b[k])
print("ok %d ranks: H %d, packet %.4f us, flow %.4f us, gap %.4f us = (2H-1) tau + 2H d" %
      (n, H, a["packet_time_s"] * 1e6, a["flow_time_s"] * 1e6, gap * 1e6))
' "$tmp/a$n.json" "$tmp/b$n.json" $n || { echo "FAIL sharp $n ranks"; fail=1; }
done

bad "sharp on RoCE" "--tier packet: in-network reduction is not available on this fabric" \
    "$dcsim" netbench "$ls" --tier packet --op allreduce --algo in-network
bad "sharp allgather" "--algo in-network: --tier packet runs it for --op allreduce only" \
    "$dcsim" netbench "$sp" --tier packet --op allgather --algo in-network --buffer 1MB
[ "$fail" -eq 0 ] && echo "ok: netbench --tier packet --algo in-network"
exit "$fail"
