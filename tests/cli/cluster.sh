#!/bin/sh
# cluster.sh DCSIM SRC - `dcsim cluster` end to end (docs/cluster.md): both
# examples run and print their tables; busy + idle GPU-hours = capacity;
# the same scenario gives the same bytes (and digest) at any thread count,
# another seed another digest; on the synthetic stream EASY backfill starts
# jobs early (backfilled > 0) and its median wait is at most FIFO's;
# topology packing spans fewer extra leaves than first-fit; training
# commands refuse a job stream and cluster refuses a training run, each in
# one line. Power and energy: the two-site example gives the same schedule
# and IT energy at a western and an eastern hub, and the western one a lower
# PUE, cost and CO2; without a <site> IT energy only; a lower compute
# fraction never more energy; the bins integrate to the busy GPU-seconds;
# the CDF points rise to the maximum; -o gives the same bytes twice and
# leaves no temporary; a <fabric> adds its switches and optics. (The
# arithmetic is tested in tests/models/test_cluster.c and
# tests/app/test_cluster_energy.c.)
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
fabric_case 'topology="rail-optimized" link="ib-ndr" radix="64" nodes-per-su="32"'
fw=$(json "$tmp/f.xml" | field '["power"]["fixed_w"]')
$py -c "import sys; sys.exit(0 if $fw > 0 else 1)" ||
    { echo "FAIL: a rail-optimised fabric draws $fw W"; fail=1; }
# power, energy, cost and CO2 at two hubs
two=$src/scenarios/examples/cluster-two-sites-month.xml
expect "two sites text" 0 "^energy     IT .* MWh; facility .* at zhongwei" \
    "$dcsim" cluster --quiet "$two"
expect "no site: IT only" 0 "no <site>: IT energy only" "$dcsim" cluster --quiet "$ex"
expect "bins text" 0 "^over time  bins of 4 h" "$dcsim" cluster --quiet "$ex"
west=$(json "$two")
east=$(json "$two" --set site/@name=wuhu)
half=$(json "$two" --set cluster-jobs/power/@compute-fraction=50%)
nosite=$(json "$ex")
printf '%s\n%s\n%s\n%s\n' "$west" "$east" "$half" "$nosite" | $py -c '
import json, sys
w, e, h, n = (json.loads(line) for line in sys.stdin)
bad = []
if w["digest"] != e["digest"] or w["energy"]["it_energy_j"] != e["energy"]["it_energy_j"]:
    bad.append("the site changed the schedule or the IT energy")
for k in ("pue", "cost", "co2_kg", "energy_cost_per_gpu_h"):
    if not w["energy"][k] < e["energy"][k]:
        bad.append("west %s %r not below east %r" % (k, w["energy"][k], e["energy"][k]))
if not h["energy"]["it_energy_j"] < w["energy"]["it_energy_j"]:
    bad.append("compute fraction 50%% gave no less energy")
if n["energy"]["has_site"] or "facility_energy_j" in n["energy"] or "cost" in n["energy"]:
    bad.append("no site, yet a facility energy or a cost: %r" % n["energy"])
for d in (w, n):
    b = d["bins"]
    T, width = d["end_s"], b["width_s"]
    area = sum(x * (min(T, width * (k + 1)) - width * k) for k, x in enumerate(b["busy_gpus"]))
    if abs(area - d["busy_gpu_s"]) > 1e-9 * d["busy_gpu_s"]:
        bad.append("bins integrate to %r busy GPU-s, not %r" % (area, d["busy_gpu_s"]))
    if not (b["count"] <= 100 and width % 3600 == 0 and (b["count"] - 1) * width < T):
        bad.append("bins %r" % b)
    c = d["cdf"]
    for k in ("wait_s", "slowdown"):
        if c[k] != sorted(c[k]) or c[k][-1] != d[k]["max"] or c[k][9] != d[k]["p50"]:
            bad.append("cdf %s %r" % (k, c[k]))
    p = d["power"]
    if abs(p["it_mean_w"] * d["end_s"] - d["energy"]["it_energy_j"]) > 1e-9 * d["energy"]["it_energy_j"]:
        bad.append("mean power x T != energy")
    if not p["idle_w"] < p["it_mean_w"] < p["busy_w"]:
        bad.append("mean power outside idle..busy %r" % p)
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
' || fail=1
"$dcsim" cluster --quiet "$two" -o "$tmp/a.h5" >/dev/null && cp "$tmp/a.h5" "$tmp/b.h5" &&
    "$dcsim" cluster --quiet "$two" -o "$tmp/a.h5" >/dev/null &&
    cmp -s "$tmp/a.h5" "$tmp/b.h5" || { echo "FAIL: cluster -o: not the same bytes"; fail=1; }
ls "$tmp" | grep -q "tmp\." && { echo "FAIL: cluster -o left a temporary"; fail=1; }
# -o over the scenario's CSV trace: refused, the trace untouched
mkdir -p "$tmp/examples" "$tmp/traces"
cp "$tr" "$tmp/examples/" && cp "$src/scenarios/traces/cluster-synthetic.csv" "$tmp/traces/"
bad "cluster -o over its trace" "an input of this run; choose another name" \
    "$dcsim" cluster --quiet "$tmp/examples/cluster-trace-h100.xml" -o "$tmp/traces/cluster-synthetic.csv"
cmp -s "$tmp/traces/cluster-synthetic.csv" "$src/scenarios/traces/cluster-synthetic.csv" ||
    { echo "FAIL: cluster -o changed its trace"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: cluster"
exit "$fail"
