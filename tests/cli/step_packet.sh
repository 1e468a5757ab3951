#!/bin/sh
# step_packet.sh DCSIM SRC - `dcsim step --network packet` end to end on
# the example leaf-spine shrunk to 64 GPUs (1.7B model, TP 8, PP 2, DP 4):
# the output names the packet network and its parameters; the iteration is
# within 5 % of the concurrent flow iteration (measured +1.1 %, docs/step.md
# "Packet network") with the same bytes per tier; the same JSON twice (wall
# time apart); network="packet" in the scenario does the same; refusals: a
# job above the packet-hop budget (the full example), a packet option
# without the packet network, an unknown network.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ls=$src/scenarios/examples/concurrency-leafspine.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
small="--set cluster/gpu/@count=64 --set job/parallelism/@pp=2 --set job/parallelism/@global-batch=16 --set job/model/@ref=megatron-gpt-1.7b"

# shellcheck disable=SC2086
"$dcsim" step "$ls" $small --network packet -q >"$tmp/text" 2>"$tmp/err" ||
    { echo "FAIL text: exit $?"; cat "$tmp/err"; fail=1; }
for pat in "^iteration .* (packet network model)" "^packet network  [0-9]* plans" \
           "port buffer  1000000 B: catalog link roce-400g" "PFC xoff [0-9]* B, xon [0-9]* B: rule" \
           "not on the packet network: the flow log"; do
    grep -q -e "$pat" "$tmp/text" || { echo "FAIL text lacks '$pat'"; cat "$tmp/text"; fail=1; }
done
# shellcheck disable=SC2086
"$dcsim" step "$ls" $small --network packet --json -q >"$tmp/p1.json" 2>"$tmp/err" ||
    { echo "FAIL packet --json: exit $?"; cat "$tmp/err"; fail=1; }
sed 's|  </job>|    <step network="packet"/>\n  </job>|' "$ls" >"$tmp/packet.xml"
# shellcheck disable=SC2086
"$dcsim" step "$tmp/packet.xml" $small --json -q >"$tmp/p2.json" 2>"$tmp/err" ||
    { echo "FAIL network=packet --json: exit $?"; cat "$tmp/err"; fail=1; }
# shellcheck disable=SC2086
"$dcsim" step "$ls" $small --concurrent --json -q >"$tmp/f.json" 2>"$tmp/err" ||
    { echo "FAIL concurrent --json: exit $?"; cat "$tmp/err"; fail=1; }
$py -c '
import json, sys
p1, p2, f = (json.load(open(a)) for a in sys.argv[1:4])
for p in (p1, p2):
    del p["packet_network"]["wall_s"]
assert p1 == p2, "two packet runs differ"
tp, tf = p1["iteration_s"], f["iteration_s"]
assert abs(tp / tf - 1) < 0.05, (tp, tf)
for tier, b in f["fabric_bytes"].items():
    assert abs(p1["fabric_bytes"][tier] - b) <= 1e-6 * b + 1, (tier, p1["fabric_bytes"][tier], b)
k = p1["packet_network"]
assert k["packet_hops"] >= k["packet_hops_estimate"] > 0, k
assert k["flow_control"] == "pfc" and k["mtu_bytes"] == 4096, k
print("step --network packet: %.6g s, concurrent flow %.6g s (x %.4f), %d packet-hops"
      % (tp, tf, tp / tf, k["packet_hops"]))
' "$tmp/p1.json" "$tmp/p2.json" "$tmp/f.json" || { echo "FAIL json comparison"; fail=1; }

expect "too large a job" 2 "the packet network: this iteration's PP and DP messages take at least .* packet-hops" \
    "$dcsim" step "$ls" --network packet -q
expect "packet option alone" 2 "^dcsim step: error: --mtu is an option of --network packet" \
    "$dcsim" step "$ls" --mtu 4096 -q
expect "unknown network" 2 "^dcsim step: error: --network wire: expected flow, analytic, concurrent or packet" \
    "$dcsim" step "$ls" --network wire -q
expect "two models" 2 "^dcsim step: error: --analytic and --network: choose one network model" \
    "$dcsim" step "$ls" --analytic --network packet -q
expect "run: too large a job on packets" 2 "the packet network: this iteration.s PP and DP messages take at least" \
    "$dcsim" run "$tmp/packet.xml" --quiet
exit $fail
