#!/bin/sh
# cluster_phase.sh DCSIM SRC - iteration phases in `dcsim cluster`
# (docs/cluster.md "Iteration phases"), on the leaf-spine example under
# topology packing: phase="aligned" given is the default run (its digest
# and figures), "uniform" is printed (text line, interference.phase), keeps
# busy + idle = capacity, slows every job at least not below its isolated
# run and costs less interference than aligned, and gives the same bytes at
# 1 and 2 OpenMP threads. (Closed forms: tests/models/test_cluster_phase.c.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/cluster-interference-leafspine.xml
py=/usr/bin/python3
topo="cluster-jobs/placement/@policy=topology"
json() { "$dcsim" cluster --quiet --json "$ex" --set "$topo" "$@"; }
tmp=$(mktemp -d /tmp/dcsim-phase-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
expect "phase default noted" 0 "traffic phase aligned: co-located jobs start" \
    "$dcsim" cluster --quiet "$ex" --set "$topo"
expect "uniform phase text" 0 "^phase      uniform offsets" \
    "$dcsim" cluster --quiet "$ex" --set "$topo" --set cluster-jobs/traffic/@phase=uniform
json >"$tmp/default.json" &&
    json --set cluster-jobs/traffic/@phase=aligned >"$tmp/aligned.json" &&
    OMP_NUM_THREADS=1 json --set cluster-jobs/traffic/@phase=uniform >"$tmp/u1.json" &&
    OMP_NUM_THREADS=2 json --set cluster-jobs/traffic/@phase=uniform >"$tmp/u2.json" ||
    { echo "FAIL: a run failed"; fail=1; }
cmp -s "$tmp/u1.json" "$tmp/u2.json" || { echo "FAIL: not the same bytes at 1 and 2 threads"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
d, a, u = (json.load(open("%s/%s.json" % (tmp, k))) for k in ("default", "aligned", "u1"))
bad = []
if d["digest"] != a["digest"] or d["interference"]["cost_gpu_s"] != a["interference"]["cost_gpu_s"]:
    bad.append("aligned given differs from the default")
if (d["interference"]["phase"], u["interference"]["phase"]) != ("aligned", "uniform"):
    bad.append("phases %r, %r" % (d["interference"]["phase"], u["interference"]["phase"]))
if abs(u["busy_gpu_s"] + u["idle_gpu_s"] - u["capacity_gpu_s"]) > 1e-9 * u["capacity_gpu_s"]:
    bad.append("uniform: busy + idle != capacity")
if u["interference"]["run_over_isolated"]["mean"] < 1:
    bad.append("uniform: a job faster than alone")
ca, cu = a["interference"]["cost_gpu_s"], u["interference"]["cost_gpu_s"]
if not 0 < cu < ca:
    bad.append("uniform interference %r GPU-s, aligned %r" % (cu, ca))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
[ "$fail" -eq 0 ] && echo "ok: cluster_phase"
exit "$fail"
