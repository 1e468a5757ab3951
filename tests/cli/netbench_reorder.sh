#!/bin/sh
# netbench_reorder.sh DCSIM SRC - the receiving NIC and reordering on the
# packet tier end to end (docs/fabric.md "Reordering"): `--op reorder` runs
# a cross-leaf permutation under ECMP and adaptive routing, each with an
# out-of-order and an in-order NIC; `--reorder` picks the NIC for a
# pattern. Its --json holds what the model guarantees: ECMP delivers in
# order (no overtaken arrival, no NACK, no resend, the same time with both
# NICs); nothing is dropped, so every resend is spurious and ends discarded;
# the in-order NIC is never faster than the out-of-order one. A pattern
# under ECMP gives the same time with either NIC. Bad input exits 2 with
# one line.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ls=$src/scenarios/examples/concurrency-leafspine.xml
sp=$src/scenarios/examples/superpod-h100.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect "reorder table" 0 "^ *adaptive, in-order NIC " \
    "$dcsim" netbench "$ls" --tier packet --op reorder --rto 100us --bytes 256K
expect "reorder rto printed" 0 "RTO 100 us: --rto 100us (a GAP" \
    "$dcsim" netbench "$sp" --tier packet --op reorder --rto 100us --buffer 1MB --bytes 64K
expect "incast in-order" 0 "^reorder .* spurious resends" \
    "$dcsim" netbench "$ls" --tier packet --op incast --reorder in-order --rto 100us --bytes 256K

for f in "$ls" "$sp"; do
    n=$(basename "$f" .xml)
    "$dcsim" netbench "$f" --tier packet --op reorder --rto 100us --buffer 1MB --bytes 256K \
        --json >"$tmp/$n.json" 2>"$tmp/err" || { echo "FAIL $n --json: exit $?"; cat "$tmp/err"; fail=1; }
done
for nic in in-order out-of-order; do
    rto=
    [ $nic = in-order ] && rto="--rto 100us"
    # shellcheck disable=SC2086 # $rto: no option, or the option and its value
    "$dcsim" netbench "$ls" --tier packet --op alltoall --ranks 8 --bytes 64K --reorder $nic \
        $rto --json >"$tmp/a2a-$nic.json" 2>"$tmp/err" \
        || { echo "FAIL alltoall $nic: exit $?"; cat "$tmp/err"; fail=1; }
done
$py - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
for n in ("concurrency-leafspine", "superpod-h100"):
    j = json.load(open(f"{d}/{n}.json"))
    assert j["op"] == "reorder" and j["rto_s"] == 100e-6 and j["ranks"] == 16, j
    rows = {r["variant"]: r for r in j["rows"]}
    assert list(rows) == ["ecmp-out-of-order", "ecmp-in-order", "adaptive-in-order",
                          "adaptive-out-of-order"], list(rows)
    for v in ("ecmp-out-of-order", "ecmp-in-order"):
        r = rows[v]
        assert r["out_of_order"] == 0 and r["nacks"] == 0 and r["resent_packets"] == 0, r
    assert rows["ecmp-in-order"]["time_s"] == rows["ecmp-out-of-order"]["time_s"], rows
    ai, ao = rows["adaptive-in-order"], rows["adaptive-out-of-order"]
    assert ao["resent_packets"] == 0 and ao["nacks"] == 0 and ao["discarded"] == 0, ao
    assert ao["out_of_order"] > 0, ao          # adaptive routing reorders this permutation
    assert ai["nacks"] > 0 and ai["resent_packets"] >= ai["nacks"], ai
    assert ai["discarded"] == ai["resent_packets"], ai  # lossless: each resend is spurious
    assert ai["time_s"] >= ao["time_s"] >= j["ideal_s"], (ai, ao)
a = {nic: json.load(open(f"{d}/a2a-{nic}.json")) for nic in ("in-order", "out-of-order")}
assert a["in-order"]["reorder"] == "in-order" and a["out-of-order"]["reorder"] == "out-of-order"
assert a["in-order"]["packet_time_s"] == a["out-of-order"]["packet_time_s"], a
for x in a.values():
    assert x["out_of_order"] == 0 and x["resent_packets"] == 0 and x["nacks"] == 0, x
PY

bad "bad nic" "--reorder sorted: expected in-order or out-of-order" \
    "$dcsim" netbench "$ls" --tier packet --op incast --reorder sorted
bad "in-order no rto" "--reorder in-order: give the retransmission timeout with --rto TIME" \
    "$dcsim" netbench "$ls" --tier packet --op incast --reorder in-order
bad "reorder op no rto" "--op reorder: give the retransmission timeout with --rto TIME" \
    "$dcsim" netbench "$ls" --tier packet --op reorder
bad "reorder with loss" "--reorder --loss gbn: a lossy mode's receiver is the mode's" \
    "$dcsim" netbench "$ls" --tier packet --op incast --reorder in-order --loss gbn --rto 100us
bad "reorder with a phenomenon" "--reorder in-order: runs with send, incast, alltoall" \
    "$dcsim" netbench "$ls" --tier packet --op collision --reorder in-order --rto 100us
bad "reorder op ranks" "--ranks 4: --op reorder runs a fixed permutation" \
    "$dcsim" netbench "$ls" --tier packet --op reorder --rto 100us --ranks 4
bad "reorder op loss" "--loss gbn: --op reorder runs lossless flow control only" \
    "$dcsim" netbench "$ls" --tier packet --op reorder --loss gbn --rto 100us
bad "reorder on flow tier" "--reorder is an option of --tier packet" \
    "$dcsim" netbench "$ls" --reorder in-order
exit "${fail:-0}"
