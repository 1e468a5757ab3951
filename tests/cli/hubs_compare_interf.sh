#!/bin/sh
# hubs_compare_interf.sh DCSIM SRC - the interference columns of `dcsim
# compare` and `dcsim sweep` over hubs scenarios with a <cluster><fabric>
# (docs/hubs.md "Comparing and sweeping"). On tests/scenarios/
# hubs-two-fabric.xml (two hubs, each with the fabric at its size) and
# hubs-one-fabric.xml: every variant's interference_gpu_h and
# interference_gpu_h_per_hub equal `dcsim hubs --set ... --json`'s
# run.total and run.hubs[].interference_gpu_h (1e-12; the same run
# function, so exactly in practice), the per-hub values sum to the total,
# the fabric does interfere (> 0); --csv holds the JSON's values; each row
# of a sweep's /hubs_sweep (interference_gpu_h, interference_gpu_h_hub_K)
# equals dcsim hubs --json with that point's --set values; the text prints
# the table. Without a fabric the column is 0 and there is no per-hub
# member (tests/cli/hubs_compare.sh).
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/dcsim-hubs-interf-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
two=$src/tests/scenarios/hubs-two-fabric.xml
one=$src/tests/scenarios/hubs-one-fabric.xml
pols="cheapest nearest"
"$dcsim" compare "$two" --json --vary hubs/@policy=cheapest,nearest >"$tmp/two.json" ||
    { echo "FAIL: compare two"; fail=1; }
"$dcsim" compare "$two" --csv --vary hubs/@policy=cheapest,nearest >"$tmp/two.csv" ||
    { echo "FAIL: compare two --csv"; fail=1; }
"$dcsim" compare "$one" --json --vary @seed=7,8 >"$tmp/one.json" ||
    { echo "FAIL: compare one"; fail=1; }
"$dcsim" compare "$two" --vary hubs/@policy=cheapest,nearest | grep -q "^GPU-hours interference added" ||
    { echo "FAIL: the text has no interference table"; fail=1; }
"$dcsim" sweep "$two" --quiet --json --grid hubs/@policy=cheapest,nearest --grid @seed=7,8 \
    -o "$tmp/s.h5" >"$tmp/sweep.json" || { echo "FAIL: sweep two"; fail=1; }
for p in $pols; do
    "$dcsim" hubs --quiet --json "$two" --set "hubs/@policy=$p" >"$tmp/two-$p.json" ||
        { echo "FAIL: hubs two $p"; fail=1; }
    for s in 7 8; do
        "$dcsim" hubs --quiet --json "$two" --set "hubs/@policy=$p" --set "@seed=$s" \
            >"$tmp/pt-$p-$s.json" || { echo "FAIL: hubs two $p seed $s"; fail=1; }
    done
done
for s in 7 8; do
    "$dcsim" hubs --quiet --json "$one" --set "@seed=$s" >"$tmp/one-$s.json" ||
        { echo "FAIL: hubs one seed $s"; fail=1; }
done
$py - "$tmp" <<'PY' || fail=1
import csv, json, sys
import h5py
tmp = sys.argv[1]
bad = []
def close(a, b):
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b))
def check(label, v, h):
    t = h["run"]["total"]["interference_gpu_h"]
    if not close(v["interference_gpu_h"], t):
        bad.append("%s: compare %r, hubs %r" % (label, v["interference_gpu_h"], t))
    per = {x["name"]: x["interference_gpu_h"] for x in h["run"]["hubs"]}
    got = v["interference_gpu_h_per_hub"]
    if set(got) != set(per) or any(not close(got[k], per[k]) for k in per):
        bad.append("%s: per hub %r, hubs %r" % (label, got, per))
    if abs(sum(got.values()) - v["interference_gpu_h"]) > 1e-9 * v["interference_gpu_h"]:
        bad.append("%s: per hub sums to %r, not %r" % (label, sum(got.values()), v["interference_gpu_h"]))
    if not v["interference_gpu_h"] > 0:
        bad.append("%s: no interference" % label)
two = json.load(open(f"{tmp}/two.json"))["variants"]
for v, p in zip(two, ["cheapest", "nearest"]):
    check("two " + p, v, json.load(open(f"{tmp}/two-{p}.json")))
one = json.load(open(f"{tmp}/one.json"))["variants"]
for v, s in zip(one, [7, 8]):
    check("one seed %d" % s, v, json.load(open(f"{tmp}/one-{s}.json")))
if len(two) != 2 or len(one) != 2:
    bad.append("variants %d, %d" % (len(two), len(one)))
rows = list(csv.DictReader(open(f"{tmp}/two.csv")))
for r, v in zip(rows, two):
    if float(r["interference_gpu_h"]) != v["interference_gpu_h"]:
        bad.append("CSV interference_gpu_h %r, JSON %r" % (r["interference_gpu_h"], v["interference_gpu_h"]))
    for name, x in v["interference_gpu_h_per_hub"].items():
        if float(r["interference_gpu_h_per_hub_" + name]) != x:
            bad.append("CSV interference_gpu_h_per_hub_%s %r" % (name, r["interference_gpu_h_per_hub_" + name]))
sw = json.load(open(f"{tmp}/sweep.json"))["variants"]
with h5py.File(f"{tmp}/s.h5", "r") as f:
    t = f["hubs_sweep"][()]
i = 0
for p in ("cheapest", "nearest"):
    for s in (7, 8):
        h = json.load(open(f"{tmp}/pt-{p}-{s}.json"))
        check("sweep point %d" % i, sw[i], h)
        w = {"interference_gpu_h": h["run"]["total"]["interference_gpu_h"]}
        for k, hub in enumerate(h["run"]["hubs"]):
            w["interference_gpu_h_hub_%d" % (k + 1)] = hub["interference_gpu_h"]
        for k, x in w.items():
            if not close(float(t[i][k]), x):
                bad.append("point %d %s: /hubs_sweep %r, hubs %r" % (i, k, float(t[i][k]), x))
        i += 1
for b in bad[:20]:
    print("FAIL:", b)
if not bad:
    print("ok: interference columns equal dcsim hubs --json (2 + 2 variants, 4 sweep points)")
sys.exit(1 if bad else 0)
PY
exit $fail
