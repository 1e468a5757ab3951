#!/bin/sh
# hubs_keys_size.sh DCSIM SRC - keys="interfered-size-load" (docs/hubs.md
# "Interference by job size and load") on tests/scenarios/hubs-two-fabric.xml:
# the tables come from the run placed with the isolated keys (its jobs per
# hub are the cells' jobs; the cells' isolated GPU-h x measured slowdown sum
# to that run's busy GPU-h, and their isolated GPU-h to its busy less the
# interference, 1e-9); each table is closed upwards (a bigger job at a busier
# load never expects less than a smaller one at a lighter: every pair of
# cells), at least the measured, at least 1, and some cell above 1; jobs and
# reference GPU-h are conserved, the baseline is the isolated run's member
# for member; one hub (hubs-one-fabric.xml) places and runs as with the
# isolated keys. Deterministic: two runs byte for byte.
set -u
dcsim=$1
src=$2
fail=0
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/dcsim-hubs-keys-size-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
sc="$src/tests/scenarios"
run() {
    n=$1
    shift
    "$dcsim" hubs --quiet --json "$@" >"$tmp/$n.json" 2>"$tmp/$n.err" ||
        { echo "FAIL: dcsim hubs $*: $(cat "$tmp/$n.err")"; fail=1; }
}
run iso "$sc/hubs-two-fabric.xml"
run sl "$sc/hubs-two-fabric.xml" --set hubs/@keys=interfered-size-load
run sl2 "$sc/hubs-two-fabric.xml" --set hubs/@keys=interfered-size-load
run one_iso "$sc/hubs-one-fabric.xml"
run one_sl "$sc/hubs-one-fabric.xml" --set hubs/@keys=interfered-size-load
[ $fail = 0 ] || exit 1
cmp -s "$tmp/sl.json" "$tmp/sl2.json" || { echo "FAIL: two runs differ"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
load = lambda n: json.load(open("%s/%s.json" % (tmp, n)))
iso, sl = load("iso"), load("sl")
bad = []
rel = lambda a, b, e=1e-9: abs(a - b) <= e * max(1.0, abs(a), abs(b))
if sl["keys"] != "interfered-size-load":
    bad.append("keys %r" % sl["keys"])
above = 0
for hi, hs in zip(iso["run"]["hubs"], sl["run"]["hubs"]):
    t = hs["interference_key_table"]
    name = hs["name"]
    if sum(c["jobs"] for c in t) != hi["jobs"]:
        bad.append("%s: the cells hold %d jobs, the isolated run %d" % (name, sum(c["jobs"] for c in t), hi["jobs"]))
    held = sum(c["isolated_gpu_h"] * c["measured"] for c in t)
    if not rel(held, hi["gpu_h"]):
        bad.append("%s: cells' busy GPU-h %r, isolated run's %r" % (name, held, hi["gpu_h"]))
    alone = sum(c["isolated_gpu_h"] for c in t)
    if not rel(alone, hi["gpu_h"] - hi["interference_gpu_h"]):
        bad.append("%s: cells' isolated GPU-h %r, run's %r" % (name, alone, hi["gpu_h"] - hi["interference_gpu_h"]))
    for a in t:
        if not (a["scale"] >= a["measured"] >= 1) or (a["jobs"] == 0 and a["measured"] != 1):
            bad.append("%s: a bad cell %r" % (name, a))
        above += a["scale"] > 1
        for b in t:  # b bigger (or as big) and busier (or as busy) than a
            if b["gpus_from"] >= a["gpus_from"] and b["load_from"] >= a["load_from"] \
                    and b["scale"] < a["scale"]:
                bad.append("%s: %d+ GPUs at load %g expects %r < %d+ GPUs at %g: %r" % (
                    name, b["gpus_from"], b["load_from"], b["scale"], a["gpus_from"],
                    a["load_from"], a["scale"]))
    # the closure: each cell the most of its measured and the cells below it
    cell = {(c["gpus_from"], c["load_from"]): c for c in t}
    for c in t:
        want = c["measured"]
        for k, v in cell.items():
            if k[0] <= c["gpus_from"] and k[1] <= c["load_from"]:
                want = max(want, v["measured"])
        if not rel(want, c["scale"], 1e-15):
            bad.append("%s: cell %r: scale %r, the closure %r" % (name, (c["gpus_from"], c["load_from"]), c["scale"], want))
if not above:
    bad.append("no cell above 1: the test needs interference")
for k in ("jobs", "ref_gpu_h"):
    if not rel(sl["run"]["total"][k], iso["run"]["total"][k]):
        bad.append("total %s %r against %r" % (k, sl["run"]["total"][k], iso["run"]["total"][k]))
if sl["baseline"] != iso["baseline"]:
    bad.append("the baseline moved")
# one hub: its placement cannot change, so its run is the isolated keys' run
o_iso, o_sl = load("one_iso")["run"], load("one_sl")["run"]
for h in o_sl["hubs"]:
    h.pop("interference_key_table", None)
if o_iso != o_sl:
    bad.append("one hub: the run differs from the isolated keys'")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
[ $fail = 0 ] && echo "ok: hubs keys by size and load"
exit $fail
