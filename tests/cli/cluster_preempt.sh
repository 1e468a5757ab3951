#!/bin/sh
# cluster_preempt.sh DCSIM SRC - preemption, maintenance and failures in
# `dcsim cluster` end to end (docs/cluster.md "Preemption, maintenance and
# failures"), on scenarios/examples/cluster-preempt-h100.xml: the text block;
# busy + idle + down = capacity; lost = busy - the stated GPU-seconds (from
# the -o table); evictions only with preempt on, none off, never of a job
# of the top priority; the same bytes at 1 and 2 threads.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/cluster-preempt-h100.xml
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/dcsim-cluster-preempt-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
expect "preempt text" 0 "^events .* preemptions" "$dcsim" cluster --quiet "$ex"
expect "preempt policy" 0 "checkpoint-then-preempt" "$dcsim" cluster --quiet "$ex"
expect "preempt down" 0 "+ down 1024 GPU-h" "$dcsim" cluster --quiet "$ex"
OMP_NUM_THREADS=1 "$dcsim" cluster --quiet --json -o "$tmp/a.h5" "$ex" >"$tmp/a.json" ||
    { echo "FAIL: cluster --json -o"; fail=1; }
OMP_NUM_THREADS=2 "$dcsim" cluster --quiet --json "$ex" >"$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || { echo "FAIL: 1 and 2 threads differ"; fail=1; }
"$dcsim" cluster --quiet --json "$ex" --set cluster-jobs/scheduler/@preempt=false >"$tmp/c.json"
$py - "$tmp" <<'PY' || fail=1
import json, sys
import h5py
t = sys.argv[1]
a = json.load(open(t + "/a.json"))
c = json.load(open(t + "/c.json"))
bad = []
x = a["disruption"]
if abs(a["busy_gpu_s"] + a["idle_gpu_s"] + x["down_gpu_s"] - a["capacity_gpu_s"]) > 1e-9 * a["capacity_gpu_s"]:
    bad.append("busy + idle + down != capacity")
if x["down_gpu_s"] != 256 * 4 * 3600.0:
    bad.append("down %r, expected one SU for 4 h" % x["down_gpu_s"])
if not x["preemptions"] > 0 or not x["lost_gpu_s"] > 0:
    bad.append("no preemption on the example")
if c["disruption"]["preemptions"] != 0:
    bad.append("preempt=false evicted")
with h5py.File(t + "/a.h5", "r") as f:
    j = f["cluster/jobs"][()]
held = float((j["gpus"] * j["held_s"]).sum())
useful = float((j["gpus"] * j["isolated_run_s"]).sum())
lost = float((j["gpus"] * (j["rework_s"] + j["checkpoint_s"] + j["restart_s"])).sum())
if abs(held / a["busy_gpu_s"] - 1) > 1e-12:
    bad.append("sum gpus x held_s %r != busy %r" % (held, a["busy_gpu_s"]))
if abs(lost - x["lost_gpu_s"]) > 1e-6 * held or abs(held - useful - lost) > 1e-6 * held:
    bad.append("lost %r, held - stated %r" % (lost, held - useful))
if int(j["preemptions"].sum()) != x["preemptions"]:
    bad.append("preemptions per job do not add up")
if ((j["preemptions"] > 0) & (j["priority"] > 0)).any():
    bad.append("a job of the top priority was evicted")
for m in bad:
    print("FAIL: " + m)
sys.exit(1 if bad else 0)
PY
exit $fail
