#!/bin/sh
# netbench_phenomena.sh DCSIM SRC - `dcsim netbench --tier packet --op
# incast-sweep|victim|stall|collision` end to end (docs/fabric.md
# "Phenomena"): each runs, prints its table, and its --json holds the
# closed-form relations the unit test asserts: incast goodput within the
# receiver's link and above the pipeline floor, pauses not fewer as the
# fan-in grows; the victim slowed beyond the FIFO bound by PFC and less with
# DCQCN; the stall stops flows to other receivers, pauses links that do not
# lead to the stuck host, and everything completes after it; ECMP at the
# busiest link's bound and adaptive routing within 2 % of b/B. Bad input
# exits 2 with one line.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ls=$src/scenarios/examples/concurrency-leafspine.xml
sp=$src/scenarios/examples/superpod-h100.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect "sweep header" 0 "^# dcsim netbench --tier packet: incast-sweep, N -> 1 into rank 0" \
    "$dcsim" netbench "$ls" --tier packet --op incast-sweep --ranks 9 --bytes 256K
expect "victim table" 0 "^  RoCE PFC + DCQCN " "$dcsim" netbench "$ls" --tier packet --op victim --ranks 7 --bytes 1M
expect "stall bins" 0 "stalled$" "$dcsim" netbench "$ls" --tier packet --op stall --bytes 1M
expect "collision ecmp" 0 "^ECMP .*busiest link 2 flows" "$dcsim" netbench "$ls" --tier packet --op collision --bytes 2M
expect "sweep on IB" 0 "InfiniBand credits" \
    "$dcsim" netbench "$sp" --tier packet --op incast-sweep --ranks 5 --buffer 1MB --bytes 64K

run_json() { # name args...
    name=$1
    shift
    "$dcsim" netbench "$ls" --tier packet "$@" --json >"$tmp/$name.json" 2>"$tmp/err" ||
        { echo "FAIL $name --json: exit $?"; cat "$tmp/err"; fail=1; }
}
run_json sweep --op incast-sweep --bytes 512K
run_json victim --op victim --bytes 4M
run_json stall --op stall --bytes 2M
run_json collision --op collision --bytes 8M
$py - "$tmp" <<'PY' || fail=1
import json, math, sys
d = sys.argv[1]
def load(n): return json.load(open(f"{d}/{n}.json"))
s = load("sweep")
B, mtu, lat = s["link_bytes_per_s"], s["mtu_bytes"], s["hop_latency_s"]
assert [r["fanin"] for r in s["rows"]] == [2, 4, 8, 16, 32], s["rows"]
prev = -1
for r in s["rows"]:
    nb = r["fanin"] * s["bytes"]
    assert r["efficiency"] <= 1 + 1e-12 and r["efficiency"] >= nb / (nb + 4 * mtu + 4 * lat * B), r
    assert r["max_held_bytes"] <= s["buffer_bytes"], r
    assert r["pauses"] >= prev, r
    prev = r["pauses"]
v = load("victim")
pfc, dcqcn, ib = v["variants"]
assert abs(v["solo_s"] - v["solo_closed_s"]) <= 1e-12 * v["solo_s"], v
assert pfc["victim_s"] > v["fifo_bound"] * v["solo_s"], (pfc, v["solo_s"])
assert v["solo_s"] <= dcqcn["victim_s"] < pfc["victim_s"], (dcqcn, pfc)
assert ib["pauses"] == 0 and ib["max_held_bytes"] <= v["buffer_bytes"] and ib["victim_s"] > v["solo_s"], ib
st = load("stall")
for k, var in enumerate(st["variants"]):
    assert var["incast_s"] > st["stall_end_s"] and var["victim_s"] > st["stall_end_s"], var
    assert abs(var["control_s"] - st["solo_s"]) <= 1e-9 * st["solo_s"], var
    late = [b for b in var["bins"] if st["stall_end_s"] - 4 * st["stall_start_s"] < b["end_s"] < st["stall_end_s"] * (1 - 1e-9)]
    assert late and all(b["to_others_bytes"] == 0 and b["to_stuck_bytes"] == 0 for b in late), late
assert st["variants"][0]["other_links_paused"] > 0 and st["variants"][1]["pauses"] == 0, st["variants"]
c = load("collision")
assert c["max_flows_per_link"] == 2 and c["ecmp_bound_lo_s"] <= c["ecmp_s"] <= c["ecmp_bound_hi_s"], c
assert c["ideal_s"] <= c["adaptive_s"] <= 1.02 * c["ideal_s"], c
PY

bad "stall ranks" "--ranks 4: --op stall and --op collision run a fixed set of flows" \
    "$dcsim" netbench "$ls" --tier packet --op stall --ranks 4
bad "collision ranks" "--ranks 4: --op stall and --op collision" \
    "$dcsim" netbench "$ls" --tier packet --op collision --ranks 4
bad "victim ranks" "--ranks 23: expected a whole number from 2 to 22 (--op victim" \
    "$dcsim" netbench "$ls" --tier packet --op victim --ranks 23
bad "sweep ranks" "--ranks 1: expected a whole number" \
    "$dcsim" netbench "$ls" --tier packet --op incast-sweep --ranks 1
bad "victim bytes" "--bytes 0: expected a positive size" \
    "$dcsim" netbench "$ls" --tier packet --op victim --bytes 0
bad "collision huge" "--tier packet --op collision: collision: more than 1e9 packet-hops" \
    "$dcsim" netbench "$ls" --tier packet --op collision --bytes 1TB
bad "stall algo" "--algo ring: --tier packet takes an algorithm only for a collective" \
    "$dcsim" netbench "$ls" --tier packet --op stall --algo ring
exit "${fail:-0}"
