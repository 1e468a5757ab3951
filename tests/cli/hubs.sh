#!/bin/sh
# hubs.sh DCSIM SRC - `dcsim hubs` end to end (docs/hubs.md): one hub with
# all the demand and nothing to move reproduces `dcsim cluster` of the same
# stream at that site bit for bit (digest, jobs, waits, energy, cost, CO2);
# on the year example the hubs add up to the total (jobs, GPU-hours,
# energy, cost, CO2, water, TB) in the policy's run and the baseline's;
# latency-bounded places no serving job beyond its bound while cheapest
# does (counted); follow-the-renewables without a profile says it shifts
# nothing; the same bytes at any OMP_NUM_THREADS; -o writes /hubs/hubs and
# /hubs/jobs; no <hubs> is one line.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
one=$src/tests/scenarios/hubs-one.xml
ex=$src/scenarios/examples/hubs-east-west-year.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect "hubs help" 0 "usage: dcsim hubs" "$dcsim" help hubs
bad "hubs without <hubs>" "no <hubs> section" "$dcsim" hubs --quiet \
    "$src/scenarios/examples/cluster-synthetic-h100.xml"
# one hub, without and with a fabric at it (docs/hubs.md "A fabric at each hub"):
# the cluster tier's run of the same stream, bit for bit, interference included
for scn in "$src/tests/scenarios/hubs-one-fabric.xml" "$one"; do  # h.json: hubs-one.xml after
"$dcsim" cluster --quiet --json "$scn" > "$tmp/c.json" || { echo "FAIL: cluster $scn"; fail=1; }
"$dcsim" hubs --quiet --json "$scn" > "$tmp/h.json" || { echo "FAIL: hubs $scn"; fail=1; }
$py - "$tmp/c.json" "$tmp/h.json" <<'PY' || fail=1
import json, sys
c = json.load(open(sys.argv[1])); h = json.load(open(sys.argv[2]))
hub = h["run"]["hubs"][0]
bad = []
if "interference" in c:  # the fabric: the same cost, simulations and flows
    i = c["interference"]
    if abs(i["cost_gpu_h"] - hub["interference_gpu_h"]) > 1e-12 * i["cost_gpu_h"] or \
            not i["cost_gpu_h"] > 0:
        bad.append("interference GPU-h: cluster %r, hubs %r" % (i["cost_gpu_h"],
                                                                hub["interference_gpu_h"]))
    if (i["simulations"], i["flows"]) != (hub["interference_simulations"],
                                         hub["interference_flows"]):
        bad.append("interference simulations/flows differ")
    if h["run"]["total"]["interference_gpu_h"] != hub["interference_gpu_h"]:
        bad.append("the total's interference is not the one hub's")
elif "interference_gpu_h" in hub:
    bad.append("interference reported without a fabric")
pairs = [("digest", c["digest"], hub["digest"]), ("jobs", c["jobs"], hub["jobs"]),
         ("IT energy", c["energy"]["it_energy_j"], hub["it_energy_j"]),
         ("facility energy", c["energy"]["facility_energy_j"], hub["facility_energy_j"]),
         ("cost", c["energy"]["cost"], hub["energy_cost"]),
         ("CO2", c["energy"]["co2_kg"], hub["co2_kg"]), ("end", c["end_s"], hub["end_s"])]
pairs += [("wait " + k, c["wait_s"][k], hub["wait_s"][k]) for k in ("p50", "p90", "p99", "max")]
for name, a, b in pairs:
    if a != b:
        bad.append("%s: cluster %r, hubs %r" % (name, a, b))
if h["run"]["total"]["tb_in"] != 0 or h["baseline"]["hubs"][0]["digest"] != hub["digest"]:
    bad.append("one hub: data moved or another baseline schedule")
if abs(c["energy"]["busy_gpu_h"] - hub["gpu_h"]) > 1e-12 * hub["gpu_h"]:  # summed in another order
    bad.append("busy GPU-h: cluster %r, hubs %r" % (c["energy"]["busy_gpu_h"], hub["gpu_h"]))
print("\n".join(bad) if bad else "ok one hub = cluster" + (" (fabric)" if "interference" in c
                                                          else ""))
sys.exit(1 if bad else 0)
PY
done
json() { "$dcsim" hubs --quiet --json "$ex" "$@"; }
field() { $py -c "import json,sys; print(json.load(sys.stdin)$1)"; }
json > "$tmp/cheap.json" || { echo "FAIL: hubs example"; fail=1; }
json --set hubs/@policy=latency-bounded > "$tmp/lat.json" || { echo "FAIL: latency"; fail=1; }
$py - "$tmp/cheap.json" "$tmp/lat.json" <<'PY' || fail=1
import json, sys
bad = []
docs = [json.load(open(p)) for p in sys.argv[1:]]
keys = ("jobs", "gpu_h", "it_energy_j", "facility_energy_j", "energy_cost", "co2_kg",
        "water_l", "tb_in", "tb_out", "data_cost", "slo_violation_jobs")
for d in docs:
    for part in ("run", "baseline"):
        r = d[part]
        for k in keys:
            s = sum(x[k] for x in r["hubs"])
            if abs(s - r["total"][k]) > 1e-9 * max(1, abs(s)):
                bad.append("%s %s: sum of hubs %r, total %r" % (part, k, s, r["total"][k]))
        if r["total"]["jobs"] != d["jobs"]:
            bad.append("%s: %r jobs of %r" % (part, r["total"]["jobs"], d["jobs"]))
cheap, lat = docs
if lat["run"]["total"]["slo_violation_jobs"] != 0:
    bad.append("latency-bounded: %r serving jobs beyond the bound"
               % lat["run"]["total"]["slo_violation_jobs"])
if cheap["run"]["total"]["slo_violation_jobs"] == 0:
    bad.append("cheapest placed no serving job beyond its bound")
if cheap["baseline"]["total"]["digest"] != lat["baseline"]["total"]["digest"]:
    bad.append("the baseline depends on the policy")
if not cheap["saving"]["cost"] > 0:
    bad.append("cheapest saves no cost against nearest: %r" % cheap["saving"])
print("\n".join(bad) if bad else "ok conservation, bounds")
sys.exit(1 if bad else 0)
PY
t1=$(OMP_NUM_THREADS=1 json --set hubs/@policy=lowest-carbon | md5sum)
t4=$(OMP_NUM_THREADS=4 json --set hubs/@policy=lowest-carbon | md5sum)
[ "$t1" = "$t4" ] || { echo "FAIL: hubs differ with the thread count"; fail=1; }
expect "renewables without a profile" 0 "shifts nothing: no hub has an hourly carbon profile" \
    "$dcsim" hubs --quiet "$one" --set hubs/@policy=follow-the-renewables
# a synthetic day's profile (low from 10:00 to 15:59) and 12 h of slack:
# every job deferred to the next low hour, at most 12 h, in whole hours
"$dcsim" hubs --quiet --json "$one" --set hubs/@policy=follow-the-renewables \
    --set hubs/hub/@carbon-profile=hubs-profile.csv --set hubs/demand/@slack=12h \
    -o "$tmp/r.h5" > "$tmp/r.json" || { echo "FAIL: renewables with a profile"; fail=1; }
if $py -c "import h5py" 2>/dev/null; then
    $py - "$tmp/r.h5" "$tmp/r.json" <<'PY' || fail=1
import h5py, json, math, sys
jobs = h5py.File(sys.argv[1], "r")["/hubs/jobs"][:]
d = json.load(open(sys.argv[2]))
bad = []
if d["run"]["shifts_nothing"] or not d["run"]["total"]["deferred_s"] > 0:
    bad.append("nothing deferred with a profile")
for j in jobs:
    a, k = j["arrival_s"], j["defer_s"] / 3600
    hour = int(math.floor(a / 3600)) % 24
    want = 0 if 10 <= hour <= 15 else ((10 - hour) % 24 if (10 - hour) % 24 <= 12 else 0)
    if k != want or j["submit_s"] != a + j["defer_s"]:
        bad.append("job %d: arrival hour %d deferred %g h, expected %d" % (j["id"], hour, k, want))
        break
print("\n".join(bad) if bad else "ok renewables: %d jobs deferred to the low hours" % len(jobs))
sys.exit(1 if bad else 0)
PY
fi
# a CSV trace: 5 jobs, 19.9 TB; the shanghai serving job has no hub within
# 10 ms (shaoguan 15.5, guian 22.5): the least RTT, counted; the guangzhou
# one is within (shaoguan 2.8 ms)
out=$("$dcsim" hubs --quiet --json "$src/tests/scenarios/hubs-trace.xml" | field '["run"]["total"]')
exp="5 1 19.9"
got=$(printf '%s\n' "$out" | $py -c "import ast,sys; t=ast.literal_eval(sys.stdin.read()); \
print(t['jobs'], t['slo_violation_jobs'], round(t['tb_in'] + t['tb_out'], 9))")
[ "$got" = "$exp" ] || { echo "FAIL: trace: jobs, SLO, TB '$got', expected '$exp'"; fail=1; }
"$dcsim" hubs --quiet "$one" -o "$tmp/h.h5" > /dev/null || { echo "FAIL: hubs -o"; fail=1; }
if $py -c "import h5py" 2>/dev/null; then
    $py - "$tmp/h.h5" "$tmp/h.json" <<'PY' || fail=1
import h5py, json, sys
f = h5py.File(sys.argv[1], "r"); d = json.load(open(sys.argv[2]))
hubs, jobs = f["/hubs/hubs"][:], f["/hubs/jobs"][:]
ok = len(hubs) == 1 and len(jobs) == d["jobs"] and hubs["jobs"][0] == d["jobs"]
ok = ok and abs(hubs["it_energy_j"][0] - d["run"]["hubs"][0]["it_energy_j"]) < 1e-6
print("ok h5" if ok else "FAIL: /hubs tables %r" % (hubs,))
sys.exit(0 if ok else 1)
PY
fi
exit $fail
