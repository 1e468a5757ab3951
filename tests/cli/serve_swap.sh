#!/bin/sh
# serve_swap.sh DCSIM SRC - swap preemption in `dcsim serve` (docs/serving.md
# "Swap preemption") on tests/scenarios/serving-swap.xml:
#   - the run is the same bytes for OMP_NUM_THREADS=1 and 2 (--json, --csv);
#   - <kv preemption="recompute"> gives the same bytes as no <kv> at all;
#   - --json's swap object: swaps out = in = the preemptions (no fallback
#     with the default host pool), bytes equal both ways, requests and
#     Little's law conserved, the recompute run recomputes and preempts more
#     (the same requests); text and --csv carry the figures;
#   - a host pool of 0.5 MB per GPU holds no block (0.66 MB a block per GPU): every preemption falls
#     back, and the run is the recompute run, figure for figure;
#   - -o: /serve/series has swaps_out and swaps_in summing to the totals.
# (The closed forms are in tests/models/test_serving_swap.c.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
scn=$src/tests/scenarios/serving-swap.xml
py=/usr/bin/python3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
OMP_NUM_THREADS=1 "$dcsim" serve --quiet --json "$scn" > "$tmp/swap1.json" &&
OMP_NUM_THREADS=2 "$dcsim" serve --quiet --json "$scn" > "$tmp/swap2.json" &&
OMP_NUM_THREADS=1 "$dcsim" serve --quiet --csv "$scn" > "$tmp/swap1.csv" &&
OMP_NUM_THREADS=2 "$dcsim" serve --quiet --csv "$scn" > "$tmp/swap2.csv" &&
"$dcsim" serve --quiet --json "$scn" --set serving/kv/@preemption=recompute > "$tmp/rc.json" &&
"$dcsim" serve --quiet --json "$scn" --set serving/kv/@host-memory=0.5MB > "$tmp/full.json" &&
"$dcsim" serve --quiet "$scn" -o "$tmp/swap.h5" --bin 5s > "$tmp/swap.txt" ||
    { echo "FAIL: serve"; fail=1; }
cmp -s "$tmp/swap1.json" "$tmp/swap2.json" || { echo "FAIL: OMP threads change --json"; fail=1; }
cmp -s "$tmp/swap1.csv" "$tmp/swap2.csv" || { echo "FAIL: OMP threads change --csv"; fail=1; }
grep -v '<kv ' "$scn" > "$tmp/none.xml"
"$dcsim" serve --quiet --json "$tmp/none.xml" > "$tmp/none.json" || { echo "FAIL: no <kv>"; fail=1; }
cmp -s "$tmp/rc.json" "$tmp/none.json" || { echo "FAIL: recompute differs from no <kv>"; fail=1; }
grep -q '^swap  *[0-9]* swapped out, [0-9]* back in, 0 fallbacks' "$tmp/swap.txt" ||
    { echo "FAIL: text lacks the swap line"; fail=1; }
head -1 "$tmp/swap1.csv" | grep -q 'swap_swaps_out' || { echo "FAIL: --csv lacks swap_swaps_out"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, os, sys
import h5py
t = sys.argv[1]
load = lambda n: json.load(open(os.path.join(t, n)))
sw, rc, full = load("swap1.json"), load("rc.json"), load("full.json")
bad = []
s = sw["swap"]
if "swap" in rc:
    bad.append("recompute run has a swap object")
if not (s["swaps_out"] > 0 and s["swaps_out"] == s["swaps_in"] == sw["preemptions"]):
    bad.append("swaps %r vs %d preemptions" % (s, sw["preemptions"]))
if s["fallbacks"] != 0 or s["out_bytes"] != s["in_bytes"] or not s["time_s"] > 0:
    bad.append("swap figures %r" % s)
for name, d in (("swap", sw), ("recompute", rc), ("full", full)):
    if d["arrived"] != d["finished"] + d["dropped"] or d["in_flight"] != 0:
        bad.append("%s: requests not conserved" % name)
    if abs(d["little_l"] - d["little_lambda"] * d["little_w"]) > 1e-9 * d["little_l"]:
        bad.append("%s: Little's law" % name)
if sw["arrived"] != rc["arrived"] or not rc["preemptions"] > sw["preemptions"]:
    bad.append("recompute should preempt more: %d vs %d" % (rc["preemptions"], sw["preemptions"]))
f = full["swap"]
if f["swaps_out"] != 0 or f["fallbacks"] != full["preemptions"] or f["host_blocks_per_replica"] != 0:
    bad.append("0.5 MB pool: %r" % f)
for k in ("preemptions", "iterations", "end_s", "ttft", "tpot", "e2e", "kv_util_mean"):
    if full[k] != rc[k]:
        bad.append("0.5 MB pool differs from recompute in %s" % k)
with h5py.File(os.path.join(t, "swap.h5"), "r") as h:
    g = h["serve"]
    ser = g["series"]
    if int(ser["swaps_out"].sum()) != s["swaps_out"] or int(ser["swaps_in"].sum()) != s["swaps_in"]:
        bad.append("series swaps %d %d" % (ser["swaps_out"].sum(), ser["swaps_in"].sum()))
    if g.attrs["preemption"] != "swap" or int(g.attrs["swaps_out"]) != s["swaps_out"]:
        bad.append("/serve attributes")
print("\n".join(bad) if bad else "ok: %d swaps, %.4g s copying; recompute %d preemptions"
      % (s["swaps_out"], s["time_s"], rc["preemptions"]))
sys.exit(1 if bad else 0)
PY
[ "$fail" -eq 0 ] && echo "ok: serve_swap"
exit "$fail"
