#!/bin/sh
# hubs_compare.sh DCSIM SRC - `dcsim compare` and `dcsim sweep` over hubs
# scenarios (docs/hubs.md "Comparing and sweeping"). compare --vary
# hubs/@policy on the year example: every variant's figures equal `dcsim
# hubs --set ... --json`'s run.total, run.fallbacks, saving, the jobs of
# each hub and the digest exactly (the same run function, hubs_execute); a
# variant equal to the base (cheapest twice) gives exactly the base's
# figures and zero differences; each difference is the value minus the
# first's; what every policy must keep (all jobs, the work in reference
# GPU-hours, the TB moved and their cost, the jobs per hub summing to the
# jobs); nearest saves exactly nothing against itself; latency-bounded
# breaks no RTT bound where nearest breaks none; fixed puts every job at
# its hub. --csv holds the JSON's values. sweep: each row of /hubs_sweep
# equals `dcsim hubs --json` with that point's --set values (1e-12), the
# jobs_hub_K columns its hubs' jobs. Refusals in one line: --vary site,
# --start-month, --replicas (compare and sweep), a scenario without <hubs>
# beside one with, the scenario as the table.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
ex=$src/scenarios/examples/hubs-east-west-year.xml
small=$src/tests/scenarios/hubs-trace.xml
tmp=$(mktemp -d /tmp/dcsim-hubs-compare-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

pols="cheapest cheapest lowest-carbon nearest latency-bounded"
"$dcsim" compare "$ex" --json --vary hubs/@policy=cheapest,cheapest,lowest-carbon,nearest,latency-bounded \
    >"$tmp/cmp.json" || { echo "FAIL: compare --vary hubs/@policy"; fail=1; }
"$dcsim" compare "$ex" --csv --vary hubs/@policy=cheapest,cheapest,lowest-carbon,nearest,latency-bounded \
    >"$tmp/cmp.csv" || { echo "FAIL: compare --csv"; fail=1; }
"$dcsim" hubs --quiet --json "$ex" >"$tmp/base.json" || { echo "FAIL: hubs --json"; fail=1; }
for p in $pols; do
    "$dcsim" hubs --quiet --json "$ex" --set "hubs/@policy=$p" >"$tmp/h-$p.json" ||
        { echo "FAIL: hubs --set hubs/@policy=$p"; fail=1; }
done
$py - "$tmp" $pols <<'PY' || fail=1
import csv, json, sys
tmp, pols = sys.argv[1], sys.argv[2:]
cmp = json.load(open(f"{tmp}/cmp.json"))
bad = []
V = cmp["variants"]
if cmp["command"] != "compare" or cmp["kind"] != "hubs" or len(V) != len(pols):
    bad.append("not %d hubs variants" % len(pols))
TOTAL = ["jobs", "gpu_h", "ref_gpu_h", "utilisation", "it_energy_j", "facility_energy_j", "pue",
         "energy_cost", "data_cost", "cost", "co2_kg", "water_l", "tb_in", "tb_out",
         "transfer_s", "link_wait_s", "serving_rtt_mean_s", "slo_violation_jobs",
         "slo_violation_job_h", "deferred_s"]
def want(h):
    t = h["run"]["total"]
    w = {k: t[k] for k in TOTAL}
    w.update(wait_p50_s=t["wait_s"]["p50"], wait_p90_s=t["wait_s"]["p90"],
             wait_p99_s=t["wait_s"]["p99"], horizon_s=h["horizon_s"],
             fallbacks=h["run"]["fallbacks"], saving_cost=h["saving"]["cost"],
             saving_co2_kg=h["saving"]["co2_kg"], saving_water_l=h["saving"]["water_l"],
             interference_gpu_h=t.get("interference_gpu_h", 0))  # 0: no fabric
    return w
cols = list(cmp["units"])
if len(cols) != 29:
    bad.append("%d columns, expected 29" % len(cols))
base = json.load(open(f"{tmp}/base.json"))
for i, (v, p) in enumerate(zip(V, pols)):
    h = json.load(open(f"{tmp}/h-{p}.json"))
    w = want(h)
    if set(w) != set(cols):
        bad.append("columns %r != dcsim hubs' %r" % (sorted(cols), sorted(w)))
    for k, x in w.items():
        if v[k] != x:  # exactly: the same run function
            bad.append("variant %d (%s) %s: compare %r, hubs %r" % (i, p, k, v[k], x))
    if v["policy"] != p or v["digest"] != h["run"]["total"]["digest"]:
        bad.append("variant %d: policy %s digest %s, hubs %s" % (i, v["policy"], v["digest"],
                                                                  h["run"]["total"]["digest"]))
    if v["jobs_per_hub"] != {x["name"]: x["jobs"] for x in h["run"]["hubs"]}:
        bad.append("variant %d jobs per hub %r" % (i, v["jobs_per_hub"]))
    if sum(v["jobs_per_hub"].values()) != v["jobs"]:
        bad.append("variant %d: jobs per hub sum to %r, not %r" % (i, sum(v["jobs_per_hub"].values()), v["jobs"]))
    for k, d in v["difference"].items():  # to an ulp: JSON numbers print to 15 digits
        if abs(d - (v[k] - V[0][k])) > 4e-16 * max(abs(v[k]), abs(V[0][k])):
            bad.append("variant %d difference %s %r != %r - %r" % (i, k, d, v[k], V[0][k]))
    # what every policy keeps: the demand, its work and its data
    for k in ("jobs", "tb_in", "tb_out", "data_cost", "ref_gpu_h"):
        if abs(v[k] - V[0][k]) > 1e-12 * abs(V[0][k]):
            bad.append("variant %d (%s) %s %r != %r" % (i, p, k, v[k], V[0][k]))
# the base twice: the base's figures, exactly, and the plain dcsim hubs run's
w0 = want(base)
for k in cols:
    if V[1][k] != V[0][k] or V[0][k] != w0[k] or V[1]["difference"][k] != 0:
        bad.append("cheapest twice: %s %r, %r (dcsim hubs %r), difference %r"
                   % (k, V[0][k], V[1][k], w0[k], V[1]["difference"][k]))
if V[0]["jobs"] != 19327:
    bad.append("the example has %r jobs, not 19327" % V[0]["jobs"])
near, lb = V[3], V[4]
for k, of in (("saving_cost", "cost"), ("saving_co2_kg", "co2_kg"), ("saving_water_l", "water_l")):
    # nearest is its own baseline: zero, to the rounding of (b_e + b_d - t_e) - t_d
    if abs(near[k]) > 1e-12 * near[of]:
        bad.append("nearest saves %s %r against itself" % (k, near[k]))
if near["slo_violation_jobs"] == 0 and lb["slo_violation_jobs"] != 0:
    bad.append("latency-bounded breaks %r RTT bounds where nearest breaks none" % lb["slo_violation_jobs"])
rows = list(csv.DictReader(open(f"{tmp}/cmp.csv")))
if len(rows) != len(V):
    bad.append("%d CSV rows, %d variants" % (len(rows), len(V)))
for r, v in zip(rows, V):
    for k in cols:
        if float(r[k]) != v[k] and abs(float(r[k]) - v[k]) > 1e-15 * abs(v[k]):
            bad.append("CSV %s %s %r, JSON %r" % (v["variant"], k, r[k], v[k]))
    for name, j in v["jobs_per_hub"].items():
        if float(r["jobs_per_hub_" + name]) != j:
            bad.append("CSV %s jobs_per_hub_%s %r" % (v["variant"], name, r["jobs_per_hub_" + name]))
for b in bad[:20]:
    print("FAIL:", b)
if not bad:
    print("ok: %d hubs variants equal dcsim hubs --json, the base twice exactly, CSV = JSON" % len(V))
sys.exit(1 if bad else 0)
PY

# fixed: every job at its hub
"$dcsim" compare "$small" --json --set hubs/@policy=fixed --vary hubs/@fixed-hub=guian,shaoguan \
    >"$tmp/fixed.json" || { echo "FAIL: compare fixed"; fail=1; }
$py - "$tmp/fixed.json" <<'PY' || fail=1
import json, sys
V = json.load(open(sys.argv[1]))["variants"]
bad = []
for v, hub in zip(V, ["guian", "shaoguan"]):
    if v["jobs_per_hub"][hub] != v["jobs"] or v["jobs"] != 5:
        bad.append("fixed-hub=%s: %r of %r jobs there" % (hub, v["jobs_per_hub"][hub], v["jobs"]))
if V[1]["saving_cost"] != 0:  # every job at shaoguan, nearest's choice for all five
    bad.append("fixed at shaoguan saves %r against nearest" % V[1]["saving_cost"])
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# sweep: /hubs_sweep's rows against dcsim hubs --set (1e-12)
"$dcsim" sweep "$ex" --quiet --json --grid hubs/@policy=cheapest,lowest-carbon \
    --grid hubs/@max-wait=6h,12h -o "$tmp/s.h5" >"$tmp/sweep.json" ||
    { echo "FAIL: sweep"; fail=1; }
i=0
for p in cheapest lowest-carbon; do
    for m in 6h 12h; do
        "$dcsim" hubs --quiet --json "$ex" --set "hubs/@policy=$p" --set "hubs/@max-wait=$m" \
            >"$tmp/p$i.json" || { echo "FAIL: hubs $p $m"; fail=1; }
        i=$((i + 1))
    done
done
$py - "$tmp" <<'PY' || fail=1
import json, sys
import h5py
tmp = sys.argv[1]
sw = json.load(open(f"{tmp}/sweep.json"))
bad = []
if sw["command"] != "sweep" or sw["kind"] != "hubs" or len(sw["variants"]) != 4:
    bad.append("not a 4-point hubs sweep")
with h5py.File(f"{tmp}/s.h5", "r") as f:
    if list(f.keys()) != ["hubs_sweep"]:
        bad.append("datasets %r" % list(f.keys()))
    t = f["hubs_sweep"][()]
    names = t.dtype.names
for i in range(4):
    h = json.load(open(f"{tmp}/p{i}.json"))
    tot = h["run"]["total"]
    w = {k: tot[k] for k in ("jobs", "gpu_h", "cost", "co2_kg", "water_l", "facility_energy_j",
                             "serving_rtt_mean_s", "slo_violation_jobs", "tb_in", "deferred_s")}
    w.update(wait_p90_s=tot["wait_s"]["p90"], horizon_s=h["horizon_s"],
             fallbacks=h["run"]["fallbacks"], saving_cost=h["saving"]["cost"],
             saving_co2_kg=h["saving"]["co2_kg"])
    for k, hub in enumerate(h["run"]["hubs"]):
        w["jobs_hub_%d" % (k + 1)] = hub["jobs"]
    for k, x in w.items():
        y = float(t[i][k])
        if abs(y - x) > 1e-12 * max(abs(x), 1e-300):
            bad.append("point %d %s: /hubs_sweep %r, hubs %r" % (i, k, y, x))
        j = sw["variants"][i].get(k, y)  # the JSON prints 15 digits
        if not k.startswith("jobs_hub") and abs(j - y) > 1e-14 * abs(y):
            bad.append("point %d %s: JSON %r, file %r" % (i, k, sw["variants"][i][k], y))
if t[0]["variant"].decode() != "hubs/@policy=cheapest hubs/@max-wait=6h":
    bad.append("point 0 labelled %r" % t[0]["variant"])
for b in bad[:20]:
    print("FAIL:", b)
if not bad:
    print("ok: 4 sweep points equal dcsim hubs --set (1e-12), %d columns" % len(names))
sys.exit(1 if bad else 0)
PY

bad "--vary site" "a hubs scenario puts each hub at its own" \
    "$dcsim" compare "$ex" --vary site=zhongwei
bad "--start-month" "start-month: a hubs scenario" \
    "$dcsim" compare "$ex" --start-month 3 --vary hubs/@policy=cheapest
bad "compare --replicas" "a hubs scenario (<hubs>) is run once per variant" \
    "$dcsim" compare "$ex" --replicas 2 --vary hubs/@policy=cheapest
bad "sweep --replicas" "a hubs scenario runs once per point" \
    "$dcsim" sweep "$ex" --replicas 3 --grid hubs/@policy=cheapest -o "$tmp/r.h5"
bad "no <hubs> beside hubs" "no <hubs> section: dcsim compare compares hubs scenarios" \
    "$dcsim" compare "$small" "$src/tests/scenarios/cluster-energy.xml"
bad "unknown policy" "unknown policy 'bogus'" \
    "$dcsim" compare "$small" --vary hubs/@policy=cheapest,bogus
bad "the scenario as the table" "an input of this run" \
    "$dcsim" sweep "$small" --grid hubs/@policy=cheapest -o "$small"
exit $fail
