#!/bin/sh
# netbench_lossy.sh DCSIM SRC - lossy RoCE on the packet tier end to end
# (docs/fabric.md "Lossy RoCE"): `--op lossy` runs the incast sweep under
# PFC, go-back-N and selective retransmission on the same fabric; `--loss`
# puts one lossy mode on a pattern or the sweep. Its --json holds what the
# model guarantees: PFC never drops, the lossy modes never pause, every
# dropped packet is sent again at least once, a lossy mode's goodput stays
# within the receiver's link, and go-back-N resends at least what selective
# does at the largest fan-in. Bad input exits 2 with one line.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ls=$src/scenarios/examples/concurrency-leafspine.xml
sp=$src/scenarios/examples/superpod-h100.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect "lossy table" 0 "^ *8  selective " \
    "$dcsim" netbench "$ls" --tier packet --op lossy --rto 100us --ranks 9 --bytes 256K
expect "lossy rto printed" 0 "RTO 100 us: --rto 100us (a GAP" \
    "$dcsim" netbench "$ls" --tier packet --op lossy --rto 100us --ranks 5 --bytes 64K
expect "incast gbn" 0 "^drops .* resent" \
    "$dcsim" netbench "$ls" --tier packet --op incast --loss gbn --rto 100us --bytes 256K
expect "allreduce gbn" 0 "^drops .* resent" \
    "$dcsim" netbench "$ls" --tier packet --op allreduce --ranks 4 --loss gbn --rto 100us --bytes 1M
expect "sweep selective" 0 "RoCE selective retransmission, no PFC" \
    "$dcsim" netbench "$ls" --tier packet --op incast-sweep --ranks 9 --loss selective --rto 50us --bytes 128K

"$dcsim" netbench "$ls" --tier packet --op lossy --rto 100us --bytes 1M --json >"$tmp/lossy.json" \
    2>"$tmp/err" || { echo "FAIL lossy --json: exit $?"; cat "$tmp/err"; fail=1; }
"$dcsim" netbench "$ls" --tier packet --op incast --loss selective --rto 100us --json \
    >"$tmp/incast.json" 2>"$tmp/err" || { echo "FAIL incast --json: exit $?"; cat "$tmp/err"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
j = json.load(open(f"{d}/lossy.json"))
assert j["rto_s"] == 100e-6, j["rto_s"]
assert [r["fanin"] for r in j["rows"]] == [2, 4, 8, 16, 32], j["rows"]
for r in j["rows"]:
    pfc, gbn, sel = r["modes"]
    assert [m["mode"] for m in r["modes"]] == ["pfc", "gbn", "selective"], r
    assert pfc["drops"] == 0 and pfc["resent_packets"] == 0 and pfc["timeouts"] == 0, pfc
    for m in (gbn, sel):
        assert m["pauses"] == 0, m
        assert m["resent_packets"] >= m["drops"], m
        assert m["max_held_bytes"] <= j["buffer_bytes"], m
        assert 0 < m["efficiency"] <= 1 + 1e-12, m
        assert (m["drops"] == 0) == (m["resent_packets"] == 0 and m["nacks"] == 0), m
top = j["rows"][-1]["modes"]
assert top[1]["drops"] > 0 and top[2]["drops"] > 0, top
assert top[1]["resent_packets"] >= top[2]["resent_packets"], top
i = json.load(open(f"{d}/incast.json"))
assert i["loss"] == "selective" and i["rto_s"] == 100e-6 and i["pauses"] == 0, i
assert i["flow_control"] == "selective" and "xoff_bytes" not in i, i
assert i["resent_packets"] >= i["drops"] > 0, i
assert i["packets"] == i["messages"] * i["bytes"] / i["mtu_bytes"], i
PY

bad "loss on IB" "--loss: the fabric link ib-ndr is InfiniBand" \
    "$dcsim" netbench "$sp" --tier packet --op incast --buffer 1MB --loss gbn --rto 100us
bad "lossy op on IB" "--op lossy: the fabric link ib-ndr is InfiniBand" \
    "$dcsim" netbench "$sp" --tier packet --op lossy --buffer 1MB --rto 100us
bad "no rto" "--op lossy: give the retransmission timeout with --rto TIME" \
    "$dcsim" netbench "$ls" --tier packet --op lossy
bad "rto zero" "--rto 0s: expected a time above 0" \
    "$dcsim" netbench "$ls" --tier packet --op incast --loss selective --rto 0s
bad "rto huge" "--rto 2s: expected a time above 0 and at most 1s" \
    "$dcsim" netbench "$ls" --tier packet --op incast --loss gbn --rto 2s
bad "loss with victim" "--loss gbn: --op victim, stall and collision run lossless" \
    "$dcsim" netbench "$ls" --tier packet --op victim --loss gbn --rto 100us
bad "loss with lossy" "--loss gbn: --op lossy runs PFC, go-back-N and selective" \
    "$dcsim" netbench "$ls" --tier packet --op lossy --loss gbn --rto 100us
bad "loss on flow tier" "--loss is an option of --tier packet" \
    "$dcsim" netbench "$ls" --loss gbn
exit "${fail:-0}"
