#!/bin/sh
# hubs_keys.sh DCSIM SRC - interference in the placement keys (<hubs
# keys="interfered">, docs/hubs.md "Interference in the keys"). On
# tests/scenarios/hubs-two-fabric.xml (cheapest, two hubs each with the
# 3:1 leaf-spine at its size): each hub's key scale is the isolated run's
# busy GPU-h over those without interference (run.hubs[].gpu_h /
# (gpu_h - interference_gpu_h) of `--json` with the isolated keys, 1e-12);
# the scales move work away from the hub of the larger scale (its jobs fall)
# while jobs and reference GPU-h are conserved; the baseline (nearest) is
# the isolated command's exactly; the text names the scales. One hub
# (hubs-one-fabric.xml, fixed and cheapest) runs exactly as with the
# isolated keys (the digest, the waits, the interference). keys="interfered"
# without a fabric is refused in one line (tests/bad/hubs_keys_no_fabric.case).
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/dcsim-hubs-keys-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
two=$src/tests/scenarios/hubs-two-fabric.xml
one=$src/tests/scenarios/hubs-one-fabric.xml
"$dcsim" hubs --quiet --json "$two" >"$tmp/iso.json" || { echo "FAIL: isolated"; fail=1; }
"$dcsim" hubs --quiet --json "$two" --set hubs/@keys=interfered >"$tmp/int.json" ||
    { echo "FAIL: interfered"; fail=1; }
for p in fixed cheapest; do
    "$dcsim" hubs --quiet --json "$one" --set "hubs/@policy=$p" >"$tmp/one-iso-$p.json" ||
        { echo "FAIL: one isolated $p"; fail=1; }
    "$dcsim" hubs --quiet --json "$one" --set "hubs/@policy=$p" --set hubs/@keys=interfered \
        >"$tmp/one-int-$p.json" || { echo "FAIL: one interfered $p"; fail=1; }
done
expect "the text names the scales" 0 "^keys       interfered .*: zhongwei [0-9.]*, guian [0-9.]*$" \
    "$dcsim" hubs --quiet "$two" --set hubs/@keys=interfered
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
bad = []
def load(name):
    return json.load(open("%s/%s.json" % (tmp, name)))
def close(a, b, tol=1e-12):
    return abs(a - b) <= tol * max(abs(a), abs(b))
iso, inter = load("iso"), load("int")
if iso["keys"] != "isolated" or inter["keys"] != "interfered":
    bad.append("keys members %r %r" % (iso["keys"], inter["keys"]))
scale = {}
for h in iso["run"]["hubs"]:
    if "interference_key_scale" in h:
        bad.append("isolated run has a key scale at %s" % h["name"])
    if not h["interference_gpu_h"] > 0:
        bad.append("no interference at %s: the test needs some" % h["name"])
    scale[h["name"]] = h["gpu_h"] / (h["gpu_h"] - h["interference_gpu_h"])
for h in inter["run"]["hubs"]:
    if not close(h["interference_key_scale"], scale[h["name"]]):
        bad.append("%s: key scale %r, the isolated run's %r" % (h["name"],
                   h["interference_key_scale"], scale[h["name"]]))
    if not h["interference_key_scale"] > 1:
        bad.append("%s: key scale %r not above 1" % (h["name"], h["interference_key_scale"]))
worst = max(scale, key=scale.get)
jobs = lambda d: {h["name"]: h["jobs"] for h in d["run"]["hubs"]}
if not jobs(inter)[worst] < jobs(iso)[worst]:
    bad.append("the hub of the larger scale (%s) kept its jobs: %r against %r"
               % (worst, jobs(inter), jobs(iso)))
for k in ("jobs",):
    if inter["run"]["total"][k] != iso["run"]["total"][k]:
        bad.append("total %s differs" % k)
if not close(inter["run"]["total"]["ref_gpu_h"], iso["run"]["total"]["ref_gpu_h"]):
    bad.append("reference GPU-h not conserved")
if inter["baseline"] != iso["baseline"]:
    bad.append("the baseline moved with the keys")
for p in ("fixed", "cheapest"):
    a, b = load("one-iso-" + p), load("one-int-" + p)
    b_hub = b["run"]["hubs"][0]
    if not b_hub["interference_key_scale"] > 1:
        bad.append("one hub %s: no scale" % p)
    del b_hub["interference_key_scale"]
    b["keys"] = "isolated"
    if a["run"]["hubs"] != b["run"]["hubs"] or a["run"]["total"] != b["run"]["total"]:
        bad.append("one hub %s: the run differs from the isolated keys'" % p)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
exit $fail
