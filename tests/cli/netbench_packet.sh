#!/bin/sh
# netbench_packet.sh DCSIM SRC - `dcsim netbench --tier packet` end to end:
# finite figures for an incast on a RoCE fabric (catalog buffer, PFC rule),
# a single send no faster than on the flow tier (the packet tier adds the
# store-and-forward pipeline), JSON that parses, ring all-reduce and
# all-gather plans within the flow-vs-packet bound with every byte moved, InfiniBand refused without
# a buffer (a GAP in the catalog) and taken with --buffer, bad options exit 2
# with one line.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ls=$src/scenarios/examples/concurrency-leafspine.xml
sp=$src/scenarios/examples/superpod-h100.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect "incast header" 0 "^# dcsim netbench --tier packet: incast, 16 ranks (one per node: GPUs 0, 8, ...), 15 messages" \
    "$dcsim" netbench "$ls" --tier packet --op incast --bytes 256K
expect "incast pfc rule" 0 "^#   PFC xoff [0-9]* B, xon [0-9]* B: rule: xoff = buffer - (2 BDP + 2 MTU)" \
    "$dcsim" netbench "$ls" --tier packet --op incast --bytes 256K
expect "incast buffer from catalog" 0 "^# port buffer  1000000 B: catalog link roce-400g" \
    "$dcsim" netbench "$ls" --tier packet --op incast --bytes 256K
out=$("$dcsim" netbench "$ls" --tier packet --op incast --bytes 256K)
for key in "packet time" "flow time" "packet / flow" "goodput" "max queue held" "PFC pauses" "packets" "events"; do
    line=$(printf '%s\n' "$out" | grep "^$key ")
    if [ -z "$line" ] || printf '%s\n' "$line" | grep -qi -e "nan" -e "inf"; then
        echo "FAIL incast: '$key' missing or not finite: $line"; fail=1
    fi
done

# JSON parses; a single send: packet time >= flow time x (1 - 1e-9)
"$dcsim" netbench "$ls" --tier packet --op send --bytes 1M --json >"$tmp/send.json" 2>"$tmp/err" ||
    { echo "FAIL send --json: exit $?"; cat "$tmp/err"; fail=1; }
$py -c '
import json, math, sys
o = json.load(open(sys.argv[1]))
p, f = o["packet_time_s"], o["flow_time_s"]
assert math.isfinite(p) and math.isfinite(f) and f > 0, (p, f)
assert p >= f * (1 - 1e-9), ("packet faster than flow", p, f)
assert o["messages"] == 1 and o["receivers"] == 1 and o["packet_hops"] > 0, o
' "$tmp/send.json" || { echo "FAIL send: JSON or packet >= flow"; cat "$tmp/send.json"; fail=1; }
"$dcsim" netbench "$ls" --tier packet --op incast --ranks 12 --bytes 64K --json >"$tmp/incast.json" &&
    $py -c '
import json, math, sys
o = json.load(open(sys.argv[1]))
assert o["messages"] == 11 and o["packets"] == 11 * 16, o
for k in ("packet_time_s", "flow_time_s", "goodput_min_bytes_per_s", "max_held_bytes"):
    assert math.isfinite(o[k]) and o[k] > 0, k
assert o["max_held_bytes"] <= o["buffer_bytes"], o
' "$tmp/incast.json" || { echo "FAIL incast --json"; cat "$tmp/incast.json"; fail=1; }

# InfiniBand: the Quantum-2 buffer is a GAP: refused, then given
expect "ib no buffer" 2 "no port-buffer for link ib-ndr.*--buffer 1MB" \
    "$dcsim" netbench "$sp" --tier packet --op incast
expect "ib with buffer" 0 "^packet / flow " \
    "$dcsim" netbench "$sp" --tier packet --op incast --buffer 1MB --bytes 64K

# collectives: the plan on both tiers. Ring all-reduce, 8 nodes, 16M: the
# packet tier is never faster (the fullest link carries W b bytes either
# way) and exceeds the flow tier by at most (h + W - 1) MTU/B + h d (a few
# us; docs/fabric.md "Collectives on the packet tier"), under 1% of the
# ~600 us transfer; every byte of the plan is sent and delivered.
expect "allreduce header" 0 "^# dcsim netbench --tier packet: allreduce, algorithm ring, 16 ranks (one per node: GPUs 0, 8, ...), 1048576 B, 1 phase, 16 messages" \
    "$dcsim" netbench "$ls" --tier packet --op allreduce
expect "allreduce phase latency" 0 "^#   phase latency 428.4 us over 1 phase: the plan's" \
    "$dcsim" netbench "$ls" --tier packet --op allreduce
out=$("$dcsim" netbench "$ls" --tier packet --op allgather --ranks 8 --bytes 256K)
for key in "packet time" "flow time" "packet / flow" "algbw" "busbw" "max queue" "PFC pauses" "bytes" "packets" "events"; do
    line=$(printf '%s\n' "$out" | grep "^$key ")
    if [ -z "$line" ] || printf '%s\n' "$line" | grep -qi -e "nan" -e "inf"; then
        echo "FAIL allgather: '$key' missing or not finite: $line"; fail=1
    fi
done
"$dcsim" netbench "$ls" --tier packet --op allreduce --ranks 8 --bytes 16M --json >"$tmp/ar.json" 2>"$tmp/err" ||
    { echo "FAIL allreduce --json: exit $?"; cat "$tmp/err"; fail=1; }
$py -c '
import json, math, sys
o = json.load(open(sys.argv[1]))
p, f = o["packet_time_s"], o["flow_time_s"]
assert math.isfinite(p) and math.isfinite(f) and f > 0, (p, f)
assert f * (1 - 1e-9) <= p <= f * 1.01, ("packet vs flow", p, f)
assert o["op"] == "allreduce" and o["algo"] == "ring" and o["messages"] == 8, o
assert o["plan_bytes"] == o["sent_bytes"] == o["delivered_bytes"] == 8 * 2 * 7 / 8 * 16 * 2**20, o
assert abs(o["busbw_bytes_per_s"] - o["algbw_bytes_per_s"] * 2 * 7 / 8) <= 1e-9 * o["busbw_bytes_per_s"], o
assert o["max_held_bytes"] <= o["buffer_bytes"] and o["packet_hops"] > 0, o
' "$tmp/ar.json" || { echo "FAIL allreduce: JSON, bounds or conservation"; cat "$tmp/ar.json"; fail=1; }
expect "tree allreduce" 0 "^# dcsim netbench --tier packet: allreduce, algorithm tree, 8 ranks" \
    "$dcsim" netbench "$ls" --tier packet --op allreduce --algo tree --ranks 8 --bytes 64K

# bad input: one line, exit 2
# every packet of a run may be queued at once (32 B each): a run whose
# packets would not fit what the process may use is refused before it
# starts, a pattern (16 x 15 messages of 256 MiB: 15.7 M packets of 40 B, 629 MB)
# and a collective (ring all-reduce of 1 GiB on 16 ranks, 315 MB) alike
bad "packet memory, pattern" "this run needs an estimated 656 MB of memory (packets queued at once 629 MB), more than the 200 MB this process may use (DCSIM_MEMORY_LIMIT)" \
    env DCSIM_MEMORY_LIMIT=200MB "$dcsim" netbench "$ls" --tier packet --op alltoall --ranks 16 --bytes 256M
bad "packet memory, collective" "(packets queued at once 315 MB), more than the 200 MB" \
    env DCSIM_MEMORY_LIMIT=200MB "$dcsim" netbench "$ls" --tier packet --op allreduce --ranks 16 --bytes 1G
bad "bad op" "--op broadcast: --tier packet runs send, incast, alltoall, allreduce, allgather, reducescatter, incast-sweep, victim, stall, collision, lossy, reorder or fidelity" \
    "$dcsim" netbench "$ls" --tier packet --op broadcast
bad "coll in-network on RoCE" "--tier packet: in-network reduction is not available on this fabric (no reduction bandwidth for the link technology)" \
    "$dcsim" netbench "$ls" --tier packet --op allreduce --algo in-network
bad "coll auto" "--algo auto: --tier packet runs ring" "$dcsim" netbench "$ls" --tier packet --op allreduce --algo auto
bad "coll algo junk" "--algo spray: --tier packet runs ring" "$dcsim" netbench "$ls" --tier packet --op allgather --algo spray
bad "algo on a pattern" "--algo ring: --tier packet takes an algorithm only for a collective" \
    "$dcsim" netbench "$ls" --tier packet --op incast --algo ring
bad "coll hd ranks" "--tier packet: halving-doubling needs a power-of-two number of ranks, got 12" \
    "$dcsim" netbench "$ls" --tier packet --op allreduce --algo hd --ranks 12
bad "coll too big" "--ranks 256: allreduce of 8589934592 B would take at least" \
    "$dcsim" netbench "$ls" --tier packet --op allreduce --ranks 256 --bytes 8G
bad "bad tier" "--tier cell: expected flow (default) or packet" "$dcsim" netbench "$ls" --tier cell
bad "ranks too many" "--ranks 5000: expected a whole number from 2 to 256 (the cluster's nodes" \
    "$dcsim" netbench "$ls" --tier packet --ranks 5000
bad "ranks one" "--ranks 1: expected a whole number" "$dcsim" netbench "$ls" --tier packet --ranks 1
bad "bytes zero" "--bytes 0: expected a positive size" "$dcsim" netbench "$ls" --tier packet --bytes 0
bad "bytes negative" "--bytes -5: expected a positive size" "$dcsim" netbench "$ls" --tier packet --bytes -5
bad "mtu zero" "--mtu 0: expected a positive size" "$dcsim" netbench "$ls" --tier packet --mtu 0
bad "buffer junk" "--buffer lots: expected a positive size" "$dcsim" netbench "$ls" --tier packet --buffer lots
bad "buffer below mtu" "--buffer 1K: a port's buffer must hold one MTU" \
    "$dcsim" netbench "$ls" --tier packet --buffer 1K
bad "buffer huge" "--buffer 1e308: expected at most 1 TiB" \
    "$dcsim" netbench "$ls" --tier packet --buffer 1e308
bad "mtu huge" "--mtu 1e308: expected at most 64K" "$dcsim" netbench "$ls" --tier packet --mtu 1e308
bad "bytes huge" "--bytes 1e308: expected at most 1 TiB" "$dcsim" netbench "$ls" --tier packet --bytes 1e308
bad "buffer no pfc room" "leaves no room for PFC" "$dcsim" netbench "$ls" --tier packet --buffer 20K
bad "flow option" "--min is an option of the flow tier" "$dcsim" netbench "$ls" --tier packet --min 8
bad "packet option" "--bytes is an option of --tier packet" "$dcsim" netbench "$ls" --bytes 8
bad "too big" "packet-hops" "$dcsim" netbench "$ls" --tier packet --op alltoall --ranks 256 --bytes 1G
[ "$fail" -eq 0 ] && echo "ok: netbench --tier packet"
exit "$fail"
