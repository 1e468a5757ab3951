#!/bin/sh
# cluster_compare.sh DCSIM SRC - `dcsim compare` over job-stream scenarios
# (docs/cluster.md "Comparing policies and sites"): every variant's figures
# equal the `dcsim cluster --set ...` run's --json exactly (the same run
# function, sim/app/clusterrun.c); each difference is the variant's value
# minus the first variant's, so the first's are all zero; a site what-if
# keeps the schedule and the IT energy and changes the facility energy, cost
# and CO2; --vary site= puts a scenario without a <site> at a hub (from July,
# --start-month: in January both hubs' PUE is the economiser's floor); the same
# command gives the same bytes; --csv has a row per variant; bad --vary
# paths, an unknown site, -o and a training scenario mixed with a job stream
# give one-line errors. `dcsim sweep` over a job stream: its points are
# compare's variants, /cluster_sweep holds their figures (NaN for the site
# columns without a <site>); --replicas, a bad value and the scenario as
# the target are refused in one line.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
site=$src/tests/scenarios/cluster-energy-site.xml
nosite=$src/tests/scenarios/cluster-energy.xml
interf=$src/scenarios/examples/cluster-interference-leafspine.xml
tmp=$(mktemp -d /tmp/dcsim-cluster-compare-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# check SCENARIO PATH V1 V2 ...: compare --vary PATH=V1,V2,... against one
# `dcsim cluster --set PATH=Vi` per value (PATH "site" for the catalog's
# sites: dcsim cluster takes site/@name on a scenario with a <site>)
check() {
    scn=$1 path=$2
    shift 2
    list=$(printf '%s,' "$@")
    "$dcsim" compare "$scn" --json --vary "$path=${list%,}" >"$tmp/cmp.json" ||
        { echo "FAIL: compare --vary $path"; fail=1; return; }
    i=0
    for v in "$@"; do
        set_path=$path
        [ "$path" = site ] && set_path=site/@name
        "$dcsim" cluster --quiet --json "$scn" --set "$set_path=$v" >"$tmp/c$i.json" ||
            { echo "FAIL: cluster --set $set_path=$v"; fail=1; return; }
        i=$((i + 1))
    done
    $py - "$tmp" "$i" "$path" <<'PY' || fail=1
import json, sys
tmp, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cmp = json.load(open(f"{tmp}/cmp.json"))
bad = []
if cmp["command"] != "compare" or cmp["kind"] != "cluster" or len(cmp["variants"]) != n:
    bad.append("not %d cluster variants: %r" % (n, cmp))
first = cmp["variants"][0]
for i, v in enumerate(cmp["variants"]):
    c = json.load(open(f"{tmp}/c{i}.json"))
    e = c["energy"]
    want = {"jobs": c["jobs"], "end_s": c["end_s"], "utilisation_frac": c["utilisation"],
            "queue_mean": c["queue_mean"], "wait_p50_s": c["wait_s"]["p50"],
            "wait_p90_s": c["wait_s"]["p90"], "wait_p99_s": c["wait_s"]["p99"],
            "slowdown_mean": c["slowdown"]["mean"], "slowdown_p99": c["slowdown"]["p99"],
            "interference_gpu_h": c["interference"]["cost_gpu_h"] if "interference" in c else 0,
            "busy_gpu_h": e["busy_gpu_h"], "jobs_over_leaves": c["jobs_over_leaves"],
            "it_energy_j": e["it_energy_j"]}
    if e["has_site"]:
        want.update({"facility_energy_j": e["facility_energy_j"], "energy_cost_cny": e["cost"],
                     "co2_kg": e["co2_kg"], "energy_cost_per_gpu_h_cny":
                     e["energy_cost_per_gpu_h"]})
    if v["scheduler"] != c["scheduler"] or v["placement"] != c["placement"]:
        bad.append("variant %d: policy %s/%s, cluster %s/%s" % (
            i, v["scheduler"], v["placement"], c["scheduler"], c["placement"]))
    for k, x in want.items():
        if v.get(k) != x:  # exactly: the same run function
            bad.append("variant %d %s: compare %r, cluster %r" % (i, k, v.get(k), x))
    for k in ("facility_energy_j", "energy_cost_cny", "co2_kg"):
        if (k in v) != e["has_site"]:
            bad.append("variant %d: %s %s without a site" % (i, k, "given" if k in v else "missing"))
    for k, d in v["difference"].items():  # to an ulp: JSON numbers print to 15 digits
        if abs(d - (v[k] - first[k])) > 4e-16 * max(abs(v[k]), abs(first[k])):
            bad.append("variant %d difference %s %r != %r - %r" % (i, k, d, v[k], first[k]))
    if i == 0 and any(d != 0 for d in v["difference"].values()):
        bad.append("the first variant's differences are not zero: %r" % v["difference"])
    if set(v["difference"]) != set(want):
        bad.append("variant %d differences of %r" % (i, sorted(v["difference"])))
for v in cmp["variants"]:
    for k, x in v.items():
        if isinstance(x, (int, float)) and k not in cmp["units"]:
            bad.append("no unit for %s" % k)
print("\n".join(bad) if bad else "ok: %s, %d variants" % (path, n))
sys.exit(1 if bad else 0)
PY
}
check "$site" cluster-jobs/scheduler/@policy fifo easy-backfill
check "$site" cluster-jobs/placement/@policy first-fit topology
check "$site" site/@name zhongwei wuhu
check "$nosite" cluster-jobs/scheduler/@policy easy-backfill fifo
check "$interf" cluster-jobs/placement/@policy first-fit topology

# the site what-if: the same schedule and IT energy, another PUE, price and factor
"$dcsim" compare "$site" --json --vary site=zhongwei,wuhu >"$tmp/sites.json" || fail=1
"$dcsim" compare "$nosite" --json --vary site=zhongwei,wuhu --start-month 7 \
    >"$tmp/nosite.json" || fail=1
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
bad = []
for name in ("sites", "nosite"):
    w, e = json.load(open(f"{tmp}/{name}.json"))["variants"]
    if (w["site"], e["site"]) != ("zhongwei", "wuhu"):
        bad.append("%s: sites %s, %s" % (name, w["site"], e["site"]))
    for k in ("utilisation_frac", "wait_p99_s", "it_energy_j", "busy_gpu_h"):
        if w[k] != e[k] or e["difference"][k] != 0:
            bad.append("%s: the site changed %s" % (name, k))
    for k in ("facility_energy_j", "energy_cost_cny", "co2_kg", "energy_cost_per_gpu_h_cny"):
        if not (w[k] < e[k] and e["difference"][k] > 0):
            bad.append("%s: %s at zhongwei %r not below wuhu %r" % (name, k, w[k], e[k]))
s = json.load(open(f"{tmp}/sites.json"))["variants"]
n = json.load(open(f"{tmp}/nosite.json"))["variants"]
if s[0]["it_energy_j"] != n[0]["it_energy_j"]:
    bad.append("--vary site= on the scenario without a <site> changed the IT energy")
print("\n".join(bad) if bad else "ok: site what-ifs")
sys.exit(1 if bad else 0)
PY

# text and CSV, the same bytes twice
expect "text table" 0 "^difference against cluster-jobs/scheduler/@policy=fifo" \
    "$dcsim" compare "$site" --vary cluster-jobs/scheduler/@policy=fifo,easy-backfill
a=$("$dcsim" compare "$site" --csv --vary cluster-jobs/scheduler/@policy=fifo,easy-backfill)
b=$("$dcsim" compare "$site" --csv --vary cluster-jobs/scheduler/@policy=fifo,easy-backfill)
[ "$a" = "$b" ] || { echo "FAIL: compare --csv differs between two runs"; fail=1; }
printf '%s\n' "$a" | $py -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
bad = []
if len(rows) != 2 or rows[1]["variant"] != "cluster-jobs/scheduler/@policy=easy-backfill":
    bad.append("rows %r" % rows)
for k in ("utilisation_frac", "wait_p50_s", "energy_cost_cny", "difference_utilisation_frac"):
    if k not in rows[0]:
        bad.append("no column %s" % k)
if rows and float(rows[0]["difference_wait_p99_s"]) != 0:
    bad.append("the first row differs from itself")
print("\n".join(bad) if bad else "ok: csv")
sys.exit(1 if bad else 0)
' || fail=1

# bad input: one line each
bad "unknown scheduler" "unknown scheduler; use fifo, easy-backfill" \
    "$dcsim" compare "$site" --vary cluster-jobs/scheduler/@policy=fifo,sjf
bad "no such element" "no element <nosuch> in <dcsim>" \
    "$dcsim" compare "$site" --vary nosuch/@x=1,2
bad "unknown site" "--vary site: " \
    "$dcsim" compare "$site" --vary site=zhongwei,atlantis
bad "no -o for job streams" "-o writes the table of training variants" \
    "$dcsim" compare "$site" --vary site=zhongwei,wuhu -o "$tmp/t.h5"
bad "a training run among job streams" "a training <job>: dcsim compare compares job streams" \
    "$dcsim" compare "$site" "$src/scenarios/examples/default.xml"
[ ! -e "$tmp/t.h5" ] || { echo "FAIL: -o left a file"; fail=1; }

# dcsim sweep over a job stream: the grid's points are compare's variants
# (the first list varying slowest in both), and /cluster_sweep holds them
"$dcsim" sweep "$site" --json --grid cluster-jobs/scheduler/@policy=fifo,easy-backfill \
    --grid site/@name=zhongwei,wuhu -o "$tmp/sw.h5" >"$tmp/sw.json" || fail=1
"$dcsim" compare "$site" --json --vary cluster-jobs/scheduler/@policy=fifo,easy-backfill \
    --vary site/@name=zhongwei,wuhu >"$tmp/cv.json" || fail=1
"$dcsim" sweep "$nosite" --csv --grid cluster-jobs/placement/@policy=first-fit,topology \
    -o "$tmp/ns.h5" >"$tmp/ns.csv" || fail=1
$py - "$tmp" <<'PY' || fail=1
import csv, json, math, sys
import h5py
tmp = sys.argv[1]
sw, cv = json.load(open(f"{tmp}/sw.json")), json.load(open(f"{tmp}/cv.json"))
bad = []
if sw["command"] != "sweep" or sw["kind"] != "cluster" or len(sw["variants"]) != 4:
    bad.append("sweep --json: %r" % {k: sw[k] for k in ("command", "kind")})
for p, v in zip(sw["variants"], cv["variants"]):
    if p["variant"] != v["variant"]:
        bad.append("point %s, variant %s" % (p["variant"], v["variant"]))
    for k in sw["units"]:
        if p.get(k) != v.get(k):
            bad.append("%s %s: sweep %r, compare %r" % (p["variant"], k, p.get(k), v.get(k)))
with h5py.File(f"{tmp}/sw.h5", "r") as f:
    table = f["cluster_sweep"][()]
    cols = list(table.dtype.names)[1:]   # after the variant's name
    rows = [r.decode() if isinstance(r, bytes) else str(r) for r in table["variant"]]
if rows != [p["variant"] for p in sw["variants"]] or cols != list(sw["units"]):
    bad.append("/cluster_sweep rows %r, columns %r" % (rows, cols))
for i, p in enumerate(sw["variants"]):
    for j, c in enumerate(cols):
        if abs(table[i][c] - p[c]) > 2.3e-16 * abs(p[c]):  # the JSON prints 15 digits
            bad.append("/cluster_sweep[%d] %s %r, JSON %r" % (i, c, table[i][c], p[c]))
with h5py.File(f"{tmp}/ns.h5", "r") as f:
    ns = f["cluster_sweep"][()]
if not all(math.isnan(ns[i]["energy_cost_cny"]) for i in range(2)):
    bad.append("no site, yet a cost in /cluster_sweep")
rows = list(csv.DictReader(open(f"{tmp}/ns.csv")))
if len(rows) != 2 or rows[0].get("energy_cost_cny", "") != "" or float(rows[1]["interference_gpu_h"]) != 0:
    bad.append("sweep --csv without a site: %r" % rows)
print("\n".join(bad) if bad else "ok: sweep over a job stream")
sys.exit(1 if bad else 0)
PY
bad "sweep: no replicas for a job stream" "--replicas: a job stream runs once per point" \
    "$dcsim" sweep "$site" --grid site/@name=zhongwei,wuhu --replicas 2 -o "$tmp/r.h5"
bad "sweep: bad grid value" "unknown scheduler; use fifo, easy-backfill" \
    "$dcsim" sweep "$site" --grid cluster-jobs/scheduler/@policy=fifo,sjf -o "$tmp/r.h5"
bad "sweep: never over the scenario" "the sweep file" \
    "$dcsim" sweep "$site" --grid site/@name=zhongwei,wuhu -o "$site"
[ ! -e "$tmp/r.h5" ] || { echo "FAIL: a refused sweep left a file"; fail=1; }
exit $fail
