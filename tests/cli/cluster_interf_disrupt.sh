#!/bin/sh
# cluster_interf_disrupt.sh DCSIM SRC - interference on a <fabric> together
# with failures, spares, a maintenance window and elastic resizes in `dcsim
# cluster` (docs/cluster.md "Interference with disruption"): with a fabric
# and no disruption the leaf-spine example keeps the digest it had before
# disruption was allowed with a fabric (169acd09e1e728bb); on
# cluster-interference-failures.xml nodes fail, jobs are slowed, busy + idle
# + down = capacity and busy = useful + lost + interference (work
# conservation: busy (1 - goodput) = lost + interference), the same bytes at
# 1 and 2 OpenMP threads; the -o job table's interference_s adds up to the
# cost and per job held = duration + rework + checkpoint + restart +
# interference; with elastic jobs on it the same sums hold and jobs resize. (The closed form by hand and the stream with preemption:
# tests/models/test_cluster_interf_disrupt.c.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
leaf=$src/scenarios/examples/cluster-interference-leafspine.xml
ex=$src/scenarios/examples/cluster-interference-failures.xml
py=/usr/bin/python3
json() { "$dcsim" cluster --quiet --json "$@"; }
field() { $py -c "import json,sys; print(json.load(sys.stdin)$1)"; }
d=$(json "$leaf" | field '["digest"]')
[ "$d" = "169acd09e1e728bb" ] || { echo "FAIL: a fabric without disruption: digest $d"; fail=1; }
tmp=$(mktemp -d /tmp/dcsim-interf-disrupt-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
OMP_NUM_THREADS=1 json "$ex" -o "$tmp/t1.h5" >"$tmp/t1.json" ||
    { echo "FAIL: the failures example"; fail=1; }
OMP_NUM_THREADS=2 json "$ex" >"$tmp/t2.json" && cmp -s "$tmp/t1.json" "$tmp/t2.json" ||
    { echo "FAIL: not the same bytes at 1 and 2 threads"; fail=1; }
json "$ex" --set cluster-jobs/sizes/@elastic-share=30% --set cluster-jobs/sizes/@elastic-min=50% \
    >"$tmp/el.json" || { echo "FAIL: elastic jobs with a fabric"; fail=1; }
for f in t1 el; do
    $py - "$tmp/$f.json" "$f" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
x, i = d["disruption"], d["interference"]
bad = []
cap = d["busy_gpu_s"] + d["idle_gpu_s"] + x["down_gpu_s"]
if abs(cap - d["capacity_gpu_s"]) > 1e-9 * d["capacity_gpu_s"]:
    bad.append("busy + idle + down %r != capacity %r" % (cap, d["capacity_gpu_s"]))
spent = d["busy_gpu_s"] * (1 - x["goodput"])
if abs(spent - (x["lost_gpu_s"] + i["cost_gpu_s"])) > 1e-6 * d["busy_gpu_s"]:
    bad.append("busy - useful %r != lost + interference %r" % (spent, x["lost_gpu_s"] + i["cost_gpu_s"]))
if not (x["failures"] > 0 and x["interruptions"] > 0 and x["down_gpu_s"] > 0):
    bad.append("no failure, interruption or down time")
if not (i["cost_gpu_s"] > 0 and i["retimes"] > 0):
    bad.append("no interference")
if sys.argv[2] == "el" and not d["elastic"]["resizes"] > 0:
    bad.append("no resize")
if sys.argv[2] == "t1":  # the job table: the model's per-job figures (rigid jobs)
    try:
        import h5py
        with h5py.File(sys.argv[1][:-5] + ".h5", "r") as f:
            j = f["cluster/jobs"][()]
        cost = float(sum(float(r["gpus"]) * r["interference_s"] for r in j))
        if abs(cost - i["cost_gpu_s"]) > 1e-9 * i["cost_gpu_s"]:
            bad.append("table interference %r != %r" % (cost, i["cost_gpu_s"]))
        top = max(float(r["run_over_isolated"]) for r in j)
        if abs(top - i["run_over_isolated"]["max"]) > 1e-14 * top:  # JSON: 15 digits
            bad.append("table run/isolated max != the reported max")
        work = j["held_s"] - j["checkpoint_s"] - j["restart_s"]
        if (abs(j["held_s"] - (j["isolated_run_s"] + j["rework_s"] + j["checkpoint_s"]
                               + j["restart_s"] + j["interference_s"]))
                > 1e-9 * j["held_s"]).any() or (work < 0).any():
            bad.append("held != duration + rework + checkpoint + restart + interference")
    except ImportError:
        pass
for b in bad:
    print("FAIL: %s: %s" % (sys.argv[2], b))
sys.exit(1 if bad else 0)
PY
done
exit $fail
