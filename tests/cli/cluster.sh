#!/bin/sh
# cluster.sh DCSIM SRC - `dcsim cluster` end to end (docs/cluster.md): both
# examples run and print their tables; busy + idle GPU-hours = capacity;
# the same scenario gives the same bytes (and digest) at any thread count,
# another seed another digest; on the synthetic stream EASY backfill starts
# jobs early (backfilled > 0) and its median wait is at most FIFO's;
# topology packing spans fewer extra leaves than first-fit; training
# commands refuse a job stream and cluster refuses a training run, each in
# one line. (The arithmetic is tested in tests/models/test_cluster.c.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/cluster-synthetic-h100.xml
tr=$src/scenarios/examples/cluster-trace-h100.xml
py=/usr/bin/python3
expect "cluster text" 0 "^  wait (h) " "$dcsim" cluster --quiet "$ex"
expect "cluster defaults" 0 "^defaults used: gpus-per-node 8" "$dcsim" cluster --quiet "$ex"
expect "cluster trace" 0 "trace .*cluster-synthetic.csv, 60 jobs" "$dcsim" cluster --quiet "$tr"
expect "cluster validate" 0 "ok (1024 x H100-SXM" "$dcsim" validate "$ex"
expect "cluster help" 0 "usage: dcsim cluster" "$dcsim" help cluster
json() { "$dcsim" cluster --quiet --json "$@"; }
field() { $py -c "import json,sys; print(json.load(sys.stdin)$1)"; }
out=$(json "$ex") || { echo "FAIL: cluster --json"; fail=1; }
printf '%s\n' "$out" | $py -c '
import json, math, sys
d = json.load(sys.stdin)
bad = []
if abs(d["busy_gpu_s"] + d["idle_gpu_s"] - d["capacity_gpu_s"]) > 1e-9 * d["capacity_gpu_s"]:
    bad.append("busy + idle != capacity: %r" % d)
for k in ("wait_s", "slowdown"):
    q = d[k]
    if not (q["p50"] <= q["p90"] <= q["p99"] <= q["max"]):
        bad.append("%s quantiles out of order: %r" % (k, q))
if d["slowdown"]["p50"] < 1:
    bad.append("slowdown below 1")
for k, v in d.items():
    if isinstance(v, float) and not math.isfinite(v):
        bad.append("%s not finite" % k)
if not 0.5 < d["utilisation"] < 1:
    bad.append("utilisation %g" % d["utilisation"])
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
' || fail=1
again=$(json "$ex")
[ "$out" = "$again" ] || { echo "FAIL: cluster is not deterministic"; fail=1; }
threads=$(OMP_NUM_THREADS=1 json "$ex")
[ "$out" = "$threads" ] || { echo "FAIL: cluster differs with OMP_NUM_THREADS=1"; fail=1; }
d1=$(printf '%s\n' "$out" | field '["digest"]')
d2=$(json "$ex" --set @seed=22 | field '["digest"]')
[ "$d1" != "$d2" ] || { echo "FAIL: another seed, the same digest $d1"; fail=1; }
fifo=$(json "$ex" --set cluster-jobs/scheduler/@policy=fifo)
bf=$(printf '%s\n' "$out" | field '["backfilled"]')
[ "$bf" -gt 0 ] || { echo "FAIL: EASY backfilled $bf jobs"; fail=1; }
w_easy=$(printf '%s\n' "$out" | field '["wait_s"]["p50"]')
w_fifo=$(printf '%s\n' "$fifo" | field '["wait_s"]["p50"]')
$py -c "import sys; sys.exit(0 if $w_easy <= $w_fifo else 1)" ||
    { echo "FAIL: EASY's median wait $w_easy s above FIFO's $w_fifo s"; fail=1; }
ff=$(json "$ex" --set cluster-jobs/placement/@policy=first-fit | field '["excess_leaves_mean"]')
tp=$(printf '%s\n' "$out" | field '["excess_leaves_mean"]')
$py -c "import sys; sys.exit(0 if $tp < $ff else 1)" ||
    { echo "FAIL: topology packing $tp extra leaves per job, first-fit $ff"; fail=1; }
bad "run refuses a job stream" "has no <job>: it describes a job stream; run it with dcsim cluster" \
    "$dcsim" run --quiet "$ex"
bad "cluster refuses training" "no <cluster-jobs> section" \
    "$dcsim" cluster --quiet "$src/scenarios/examples/default.xml"
bad "cluster needs a scenario" "a scenario with <cluster-jobs> is needed" "$dcsim" cluster
bad "cluster bad scheduler" "unknown scheduler; use fifo, easy-backfill" \
    "$dcsim" cluster --quiet "$ex" --set cluster-jobs/scheduler/@policy=sjf
bad "cluster bad placement" "unknown placement; use first-fit, topology" \
    "$dcsim" cluster --quiet "$ex" --set cluster-jobs/placement/@policy=random
bad "cluster job too big" "gpus must be from 1 to 1024 GPUs" \
    "$dcsim" cluster --quiet "$ex" --set "cluster-jobs/sizes/size[7]/@gpus=2048"
# the leaf read from the <fabric> when the placement omits gpus-per-leaf
tmp=$(mktemp -d /tmp/dcsim-cluster-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fabric_case() { # FABRIC-ATTRIBUTES: a scenario on 1,024 H100 with that fabric
    cat >"$tmp/f.xml" <<XML
<dcsim version="1" seed="3" name="fabric-leaf">
  <cluster><gpu type="H100-SXM" count="1024"/><fabric $1/></cluster>
  <cluster-jobs>
    <arrivals process="poisson" rate="4/h" duration="1d"/>
    <sizes><size gpus="8" weight="1"/><size gpus="64" weight="1"/></sizes>
    <duration distribution="fixed" value="2h"/>
    <scheduler policy="fifo"/>
    <placement policy="topology"/>
  </cluster-jobs>
</dcsim>
XML
}
fabric_case 'topology="rail-optimized" link="ib-ndr" radix="64" nodes-per-su="32"'
expect "leaf of a rail-optimised fabric: its SU" 0 "gpus-per-leaf 256 (the rail-optimized" \
    "$dcsim" cluster --quiet "$tmp/f.xml"
fabric_case 'topology="fat-tree" link="ib-ndr" k="16"'
expect "leaf of a k=16 fat-tree: k/2 hosts" 0 "nodes of 8, leaves of 8," \
    "$dcsim" cluster --quiet "$tmp/f.xml"
fabric_case 'topology="leaf-spine" link="roce-400g" radix="64" oversubscription="3:1"'
bad "leaf-spine leaf of 48 GPUs" "not a whole number of leaves of 48 GPUs" \
    "$dcsim" cluster --quiet "$tmp/f.xml"
[ "$fail" -eq 0 ] && echo "ok: cluster"
exit "$fail"
