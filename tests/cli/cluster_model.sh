#!/bin/sh
# cluster_model.sh DCSIM SRC - a <traffic> class given by a catalog model
# (docs/cluster.md "Traffic from the step tier"): for every job size of
# cluster-interference-model.xml the bytes per collective kind the cluster
# derived equal, exactly, `dcsim step --json`'s comm_bytes for a scenario of
# that model, layout and GPU count; the whole-cluster job's step iteration is
# `dcsim step`'s on the same fabric exactly, and the pacer's isolated
# iteration c + min(m_alone, E) is at most that and within 5 % of it; c =
# the iteration less the exposed TP, PP, DP and EP (compute + bubble +
# optimizer); the TP and PP bytes are the closed forms of workload.c; the
# run is the same bytes at 1 and 2 threads; twice the
# global batch doubles the TP bytes, keeps the DP bytes and costs less;
# a class given by hand keeps its figures when a model class sits beside it;
# with a <job> (tests/scenarios/cluster-model-job.xml) the class takes its
# framework and the training run's size is `dcsim step`'s job exactly.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/cluster-interference-model.xml
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/dcsim-cmodel-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
expect "model text" 0 "^  *96 GPUs, dp 24: step " "$dcsim" cluster --quiet "$ex"
expect "model defaults" 0 "traffic model: bf16, the framework's" "$dcsim" cluster --quiet "$ex"
OMP_NUM_THREADS=1 "$dcsim" cluster --quiet --json "$ex" >"$tmp/c1.json" ||
    { echo "FAIL: cluster run"; fail=1; }
OMP_NUM_THREADS=2 "$dcsim" cluster --quiet --json "$ex" >"$tmp/c2.json" &&
    cmp -s "$tmp/c1.json" "$tmp/c2.json" || { echo "FAIL: not the same bytes at 1 and 2 threads"; fail=1; }
# step scenarios: the model, layout and GPU count of each size (pp 2 from 32 GPUs)
for n in 8 16 32 96; do
    pp=1
    [ "$n" -ge 32 ] && pp=2
    cat >"$tmp/step$n.xml" <<XML
<dcsim version="1" seed="1" name="step$n">
  <cluster>
    <gpu type="H100-SXM" count="$n"/>
    <fabric topology="leaf-spine" link="roce-400g" radix="64" oversubscription="3:1"
            gpus-per-node="8"/>
  </cluster>
  <job>
    <model ref="megatron-gpt-1.7b"/>
    <parallelism tp="2" pp="$pp" micro-batch="1" global-batch="192"/>
    <training tokens="1T" precision="bf16"/>
  </job>
  <checkpoint interval="1h" write-time="1s"/>
</dcsim>
XML
    "$dcsim" step --quiet --json "$tmp/step$n.xml" >"$tmp/s$n.json" ||
        { echo "FAIL: dcsim step on $n GPUs"; fail=1; }
done
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
c = json.load(open(tmp + "/c1.json"))["interference"]
sizes = {e["gpus"]: e for e in c["from_step_tier"]}
bad = []
if sorted(sizes) != [8, 16, 32, 96]:
    bad.append("derived sizes %s, expected 8, 16, 32, 96" % sorted(sizes))
rows = {"tp_allreduce": ("all-reduce", "tp"), "pp_send": ("send", "pp"),
        "dp_allreduce": ("all-reduce", "dp")}
for n, e in sorted(sizes.items()):
    s = json.load(open("%s/s%d.json" % (tmp, n)))
    if e["comm_bytes"] != s["comm_bytes"]:  # exact: the same workload_build
        bad.append("%d GPUs: bytes %s, dcsim step %s" % (n, e["comm_bytes"], s["comm_bytes"]))
    if e["dp"] != n // (2 * (2 if n >= 32 else 1)):
        bad.append("%d GPUs: dp %s" % (n, e["dp"]))
    # closed forms (workload.c): bf16 activations of seq 4096 x hidden 2048 per
    # micro-batch, 2 all-reduces per layer forward and 2 backward on the
    # stage's 24 / pp layers, 192 / dp micro-batches; a pp send of one activation
    pp = 2 if n >= 32 else 1
    act, mb = 4096 * 2048 * 2, 192 // e["dp"]
    if e["comm_bytes"]["tp_allreduce"] != act * 4 * (24 // pp) * mb or \
            e["comm_bytes"]["pp_send"] != (act * mb if pp > 1 else 0):
        bad.append("%d GPUs: tp / pp bytes %s off the closed form" % (n, e["comm_bytes"]))
    parts = s["critical_stage_s"]
    exposed = parts["tp"] + parts["pp"] + parts["dp"] + parts["ep"]
    if n in (8, 96):  # one node, or the whole cluster: the same fabric as the step scenario
        if e["step_iteration_s"] != s["iteration_s"]:
            bad.append("%d GPUs: step iteration %r, dcsim step %r" %
                       (n, e["step_iteration_s"], s["iteration_s"]))
        if abs(e["exposed_comm_s"] - exposed) > 1e-12 * s["iteration_s"]:
            bad.append("%d GPUs: exposed %r, dcsim step's parts %r" %
                       (n, e["exposed_comm_s"], exposed))
        c_rest = parts["compute"] + parts["bubble"] + parts["optimizer"] + parts["cp"]
        if abs(e["compute_s"] - c_rest) > 1e-9 * s["iteration_s"]:
            bad.append("%d GPUs: c %r, compute + bubble + optimizer %r" % (n, e["compute_s"], c_rest))
    it, alone = e["step_iteration_s"], e["alone_iteration_s"]
    want = e["compute_s"] + min(e["alone_comm_s"], e["exposed_comm_s"])
    if abs(alone - want) > 1e-12 * it:
        bad.append("%d GPUs: alone %r, c + min(m, E) %r" % (n, alone, want))
    if not (alone <= it * (1 + 1e-12) and alone >= 0.95 * it):
        bad.append("%d GPUs: alone %r not within [0.95, 1] of step %r" % (n, alone, it))
    if not e["alone_comm_s"] > 0:
        bad.append("%d GPUs: no communication alone" % n)
cls = c["traffic"]
if [t.get("model") for t in cls] != ["megatron-gpt-1.7b"] * 2 or cls[1]["pp"] != 2:
    bad.append("classes %s" % cls)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# twice the global batch: twice the micro-batches, so the TP bytes double, the
# DP bytes stay, each size's iteration grows and the shared DP rings cost less
"$dcsim" cluster --quiet --json "$ex" --set cluster-jobs/traffic/@global-batch=384 \
    >"$tmp/c384.json" || { echo "FAIL: global-batch 384"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
a = json.load(open(tmp + "/c1.json"))["interference"]
b = json.load(open(tmp + "/c384.json"))["interference"]
bad = []
for x, y in zip(a["from_step_tier"], b["from_step_tier"]):
    if y["comm_bytes"]["tp_allreduce"] != 2 * x["comm_bytes"]["tp_allreduce"] or \
            y["comm_bytes"]["dp_allreduce"] != x["comm_bytes"]["dp_allreduce"]:
        bad.append("%d GPUs: bytes %s at 384, %s at 192" % (x["gpus"], y["comm_bytes"], x["comm_bytes"]))
    if not y["step_iteration_s"] > x["step_iteration_s"]:
        bad.append("%d GPUs: iteration %r at 384, %r at 192" % (x["gpus"], y["step_iteration_s"], x["step_iteration_s"]))
if not b["cost_gpu_h"] < a["cost_gpu_h"]:
    bad.append("interference %r GPU-h at 384, %r at 192" % (b["cost_gpu_h"], a["cost_gpu_h"]))
for m in bad:
    print("FAIL:", m)
sys.exit(1 if bad else 0)
PY
# with a <job>: its precision and framework (grad-reduce bf16: half the DP
# bytes), and its training run's 96 GPUs derived: that size's iteration is
# `dcsim step`'s of the job itself, exactly
job=$src/tests/scenarios/cluster-model-job.xml
"$dcsim" cluster --quiet --json "$job" >"$tmp/j.json" && "$dcsim" step --quiet --json "$job" \
    >"$tmp/js.json" || { echo "FAIL: the scenario with a <job>"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
c = {e["gpus"]: e for e in json.load(open(tmp + "/j.json"))["interference"]["from_step_tier"]}
s = json.load(open(tmp + "/js.json"))
a = {e["gpus"]: e for e in json.load(open(tmp + "/c1.json"))["interference"]["from_step_tier"]}
bad = []
if sorted(c) != [8, 32, 96]:
    bad.append("sizes %s, expected 8, 32, 96" % sorted(c))
elif c[96]["step_iteration_s"] != s["iteration_s"] or c[96]["comm_bytes"] != s["comm_bytes"]:
    bad.append("96 GPUs: %r / %s, dcsim step %r / %s" % (c[96]["step_iteration_s"],
               c[96]["comm_bytes"], s["iteration_s"], s["comm_bytes"]))
elif 2 * c[32]["comm_bytes"]["dp_allreduce"] != a[32]["comm_bytes"]["dp_allreduce"]:
    bad.append("32 GPUs: DP bytes %r with bf16 reduction, %r with fp32" %
               (c[32]["comm_bytes"]["dp_allreduce"], a[32]["comm_bytes"]["dp_allreduce"]))
for m in bad:
    print("FAIL:", m)
sys.exit(1 if bad else 0)
PY
# a class by hand under the model: its own rows, run as the layout form
expect "hand class beside a model class" 0 "from 32 GPUs: compute 0.4088 s, tp 2 pp 2 ep 1: all-reduce dp 1 GB per GPU" \
    "$dcsim" cluster --quiet "$ex" --set cluster-jobs/traffic/class/@bytes=1GB
exit $fail
