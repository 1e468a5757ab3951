#!/bin/sh
# cluster_model_layout.sh DCSIM SRC - the layout options of a <traffic>
# class given by a model (docs/cluster.md "Traffic from the step tier"):
# for each of vpp, cp, sequence-parallel, recompute (full, selective), zero
# and ep (with and without zero) the bytes per collective kind the cluster
# derives for a 32-GPU job equal, exactly, `dcsim step --json`'s comm_bytes
# for a scenario of that model with the same <parallelism>; the experts'
# gradients of mixtral-8x7b at tp 2 ep 4 are printed as their closed form
# (32 layers x 8 / 4 experts x 3 x 4096 x 14336 / 2 parameters x 4 B:
# 22.55 GB) reduced in the edp-groups; cp 2 makes the cp rows of the
# K/V exchange; the options are refused on a class by hand, and a cp that
# does not divide a job's GPUs names tp x cp x pp.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/dcsim-cmlayout-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fabric='<fabric topology="leaf-spine" link="roce-400g" radix="64" oversubscription="3:1" gpus-per-node="8"/>'
# case NAME MODEL "tp pp attributes" "extra traffic attributes": a cluster
# scenario of 96 GPUs (2 leaves of 48) with one job size, 32 GPUs, and the
# step scenario of its layout on 32 GPUs (H200: mixtral's stage fits)
case_pair() {
    name=$1 model=$2 par=$3 extra=$4
    cat >"$tmp/c-$name.xml" <<XML
<dcsim version="1" seed="3" name="c-$name">
  <cluster>
    <gpu type="H200-SXM" count="96"/>
    $fabric
  </cluster>
  <cluster-jobs>
    <arrivals process="poisson" rate="1/h" duration="4h"/>
    <sizes><size gpus="32" weight="1"/></sizes>
    <duration distribution="fixed" value="1h"/>
    <scheduler policy="fifo"/>
    <placement policy="first-fit"/>
    <traffic model="$model" micro-batch="1" global-batch="192" $par $extra/>
  </cluster-jobs>
</dcsim>
XML
    cat >"$tmp/s-$name.xml" <<XML
<dcsim version="1" seed="1" name="s-$name">
  <cluster>
    <gpu type="H200-SXM" count="32"/>
    $fabric
  </cluster>
  <job>
    <model ref="$model"/>
    <parallelism micro-batch="1" global-batch="192" $par $extra/>
    <training tokens="1T" precision="bf16"/>
  </job>
  <checkpoint interval="1h" write-time="1s"/>
</dcsim>
XML
    "$dcsim" cluster --quiet --json "$tmp/c-$name.xml" >"$tmp/c-$name.json" ||
        { echo "FAIL: dcsim cluster $name"; fail=1; }
    "$dcsim" step --quiet --json "$tmp/s-$name.xml" >"$tmp/s-$name.json" ||
        { echo "FAIL: dcsim step $name"; fail=1; }
}
gpt=megatron-gpt-1.7b
case_pair plain $gpt 'tp="2"' ''
case_pair vpp $gpt 'tp="2" pp="2"' 'vpp="2"'
case_pair cp $gpt 'tp="2"' 'cp="2"'
case_pair sp $gpt 'tp="2"' 'sequence-parallel="true"'
case_pair full $gpt 'tp="2"' 'recompute="full"'
case_pair selective $gpt 'tp="2"' 'recompute="selective"'
case_pair zero $gpt 'tp="2"' 'zero="1"'
case_pair moe mixtral-8x7b 'tp="2" ep="4"' ''
case_pair moezero mixtral-8x7b 'tp="2" ep="4"' 'zero="1"'
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
bad = []
def load(name):
    c = json.load(open("%s/c-%s.json" % (tmp, name)))["interference"]["from_step_tier"]
    s = json.load(open("%s/s-%s.json" % (tmp, name)))
    return c, s
got = {}
for name in ("plain", "vpp", "cp", "sp", "full", "selective", "zero", "moe", "moezero"):
    c, s = load(name)
    if len(c) != 1 or c[0]["gpus"] != 32:
        bad.append("%s: derived sizes %s" % (name, [e["gpus"] for e in c]))
        continue
    if c[0]["comm_bytes"] != s["comm_bytes"]:  # exact: the same workload_build
        bad.append("%s: bytes %s, dcsim step %s" % (name, c[0]["comm_bytes"], s["comm_bytes"]))
    got[name] = c[0]
# each option changes what it should (so the equalities above test something)
p = got.get("plain", {}).get("comm_bytes", {})
def differs(name, kind):
    if got.get(name, {}).get("comm_bytes", {}).get(kind) == p.get(kind):
        bad.append("%s: %s as without the option (%s)" % (name, kind, p.get(kind)))
differs("vpp", "pp_send")
differs("cp", "cp_sendrecv")
differs("sp", "tp_allreduce")
differs("full", "tp_allreduce")
differs("zero", "dp_allreduce")
if got.get("cp", {}).get("dp") != 8 or got.get("vpp", {}).get("dp") != 8:
    bad.append("dp of cp 2 / pp 2 at tp 2 on 32 GPUs: %s, %s, expected 8" %
               (got.get("cp", {}).get("dp"), got.get("vpp", {}).get("dp")))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# the experts' part of the DP all-reduce, in the edp-groups (closed form above)
expect "experts in edp" 0 "dp_allreduce [0-9.]* GB (experts' 22.55 GB of it in the edp-groups)" \
    "$dcsim" cluster --quiet "$tmp/c-moe.xml"
expect "experts zero" 0 "dp_reduce_scatter [0-9.]* GB (experts' 22.55 GB of it in the edp-groups)" \
    "$dcsim" cluster --quiet "$tmp/c-moezero.xml"
expect "options in the class line" 0 "tp 2 pp 1 ep 1, cp 2, from the step tier" \
    "$dcsim" cluster --quiet "$tmp/c-cp.xml"
# refused: an option on a class by hand; a cp that does not divide the job
bad "vpp by hand" "<traffic vpp=\"2\">: vpp lays out a class given by a model" \
    "$dcsim" cluster --quiet "$src/scenarios/examples/cluster-interference-layout.xml" \
    --set cluster-jobs/traffic/@vpp=2
bad "cp not dividing" "not a whole number of tp x cp x pp = 2 x 3 x 1" \
    "$dcsim" cluster --quiet "$tmp/c-cp.xml" --set cluster-jobs/traffic/@cp=3
exit $fail
