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
"$dcsim" cluster --quiet --json "$one" > "$tmp/c.json" || { echo "FAIL: cluster one"; fail=1; }
"$dcsim" hubs --quiet --json "$one" > "$tmp/h.json" || { echo "FAIL: hubs one"; fail=1; }
$py - "$tmp/c.json" "$tmp/h.json" <<'PY' || fail=1
import json, sys
c = json.load(open(sys.argv[1])); h = json.load(open(sys.argv[2]))
hub = h["run"]["hubs"][0]
bad = []
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
print("\n".join(bad) if bad else "ok one hub = cluster")
sys.exit(1 if bad else 0)
PY
json() { "$dcsim" hubs --quiet --json "$ex" "$@"; }
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
