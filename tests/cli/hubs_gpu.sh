#!/bin/sh
# hubs_gpu.sh DCSIM SRC - per-hub GPU types (<hub gpu speed>, docs/hubs.md
# "Per-hub GPU types"): a hub with the scenario's GPU named explicitly is
# the default bit for bit (the trace case and the year example); on the
# five-job trace at one hub (fixed), an A100 hub runs every training job
# exactly (H100 bf16 peak x gemm-efficiency) / (A100's) = 819.2232 / 274.56
# times as long as the H100 hub does, and speed="0.5" exactly twice as long,
# while its two serving jobs of 8 GPUs run their duration on ceil(8 x the
# HBM bandwidth ratio 3.35 / 2.039) = 14 GPUs each (/hubs/jobs hub_gpus; at
# speed 0.5, which covers serving too, 16); the busy GPU-hours are those,
# the work (ref_gpu_h) does not change; the energy keys' factor is the time
# scale (serving: the serving scale) x the power tier's busy-GPU rise
# ratio; serving-speed="0.25" sets the serving GPUs alone (32);
# the text says the rules under "defaults used".
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
tr=$src/tests/scenarios/hubs-trace.xml
ex=$src/scenarios/examples/hubs-east-west-year.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$dcsim" hubs --quiet --json "$tr" > "$tmp/a.json" || { echo "FAIL: trace"; fail=1; }
"$dcsim" hubs --quiet --json "$tr" --set "hubs/hub[2]/@gpu=H100-SXM" > "$tmp/b.json" ||
    { echo "FAIL: trace gpu=H100-SXM"; fail=1; }
cmp -s "$tmp/a.json" "$tmp/b.json" || { echo "FAIL: gpu=H100-SXM differs from the default"; fail=1; }
"$dcsim" hubs --quiet --json "$ex" > "$tmp/c.json" || { echo "FAIL: example"; fail=1; }
"$dcsim" hubs --quiet --json "$ex" --set "hubs/hub[8]/@gpu=H100-SXM" \
    --set "hubs/hub[5]/@gpu=H100-SXM" > "$tmp/d.json" || { echo "FAIL: example gpu"; fail=1; }
cmp -s "$tmp/c.json" "$tmp/d.json" || { echo "FAIL: example: gpu=H100-SXM differs"; fail=1; }
fixed="--set hubs/@policy=fixed --set hubs/@fixed-hub=guian"
# shellcheck disable=SC2086 # fixed is a list of options
for v in h100:H100-SXM a100:A100-SXM-80GB; do
    "$dcsim" hubs --quiet --json "$tr" $fixed --set "hubs/hub[2]/@gpu=${v#*:}" \
        -o "$tmp/${v%%:*}.h5" > "$tmp/${v%%:*}.json" || { echo "FAIL: ${v#*:}"; fail=1; }
done
# shellcheck disable=SC2086
"$dcsim" hubs --quiet --json "$tr" $fixed --set "hubs/hub[2]/@speed=0.5" -o "$tmp/half.h5" \
    > "$tmp/half.json" || { echo "FAIL: speed 0.5"; fail=1; }
# shellcheck disable=SC2086
"$dcsim" hubs --quiet --json "$tr" $fixed --set "hubs/hub[2]/@gpu=A100-SXM-80GB" \
    --set "hubs/hub[2]/@serving-speed=0.25" -o "$tmp/quarter.h5" > "$tmp/quarter.json" ||
    { echo "FAIL: serving-speed 0.25"; fail=1; }
# shellcheck disable=SC2086
"$dcsim" hubs --quiet "$tr" $fixed --set "hubs/hub[2]/@gpu=A100-SXM-80GB" > "$tmp/a100.txt" ||
    { echo "FAIL: A100 text"; fail=1; }
grep -q "^defaults used  hub speed: a job's duration (on H100-SXM) x the hub's time scale" \
    "$tmp/a100.txt" || { echo "FAIL: the speed rule is not under defaults used"; fail=1; }
grep -q "^defaults used  guian: A100-SXM-80GB 312 TFLOP/s x 0.880 against H100-SXM 989.4 x 0.828" \
    "$tmp/a100.txt" || { echo "FAIL: guian's rule"; cat "$tmp/a100.txt"; fail=1; }
grep -q "^defaults used  guian: serving on A100-SXM-80GB, HBM 2.039 TB/s against H100-SXM 3.35 TB/s: x 1.64296 the GPUs$" \
    "$tmp/a100.txt" || { echo "FAIL: guian's serving rule"; fail=1; }
grep -q "^defaults used  guian: energy x 2.0247 a training job, x 1.11487 a serving job$" \
    "$tmp/a100.txt" || { echo "FAIL: guian's energy scale"; fail=1; }
if $py -c "import h5py" 2>/dev/null; then
$py - "$tmp" <<'PY' || fail=1
import h5py, json, math, sys
t = sys.argv[1]
bad = []
scale = (989.4e12 * 0.828) / (312e12 * 0.880)
hbm = 3.35e12 / 2.039e12  # the serving rule: HBM bandwidths (gpus.xml)
runs = ("h100", "a100", "half", "quarter")
jobs = {k: h5py.File("%s/%s.h5" % (t, k), "r")["hubs/jobs"][:] for k in runs}
doc = {k: json.load(open("%s/%s.json" % (t, k))) for k in runs}
base = jobs["h100"]
serve_scale = {"a100": hbm, "half": 2.0, "quarter": 4.0}
for k, want in (("a100", scale), ("half", 2.0), ("quarter", scale)):
    j = jobs[k]
    if len(j) != 5 or list(j["hub"]) != [1] * 5:
        bad.append("%s: not every job at guian: %r" % (k, list(j["hub"])))
        continue
    busy = 0.0
    for i in range(5):
        ran, ref = j["end_s"][i] - j["start_s"][i], base["end_s"][i] - base["start_s"][i]
        if abs(ref - j["duration_s"][i]) > 1e-9 * ref:
            bad.append("h100 job %d ran %r, duration %r" % (i, ref, j["duration_s"][i]))
        # training: the same GPUs, want x as long; serving (kind 1): its
        # duration on ceil(gpus x want) GPUs
        serving = j["kind"][i] == 1
        gpus = math.ceil(j["gpus"][i] * serve_scale[k] - 1e-9) if serving else j["gpus"][i]
        long = ref if serving else want * ref
        if abs(ran - long) > 1e-12 * ran:
            bad.append("%s job %d ran %r s, expected %r" % (k, i, ran, long))
        if j["hub_gpus"][i] != gpus or base["hub_gpus"][i] != base["gpus"][i]:
            bad.append("%s job %d took %r GPUs, expected %r" % (k, i, j["hub_gpus"][i], gpus))
        busy += gpus * long / 3600
    if sum(j["kind"] == 1) != 2:
        bad.append("%s: the trace should hold two serving jobs" % k)
    hub = doc[k]["run"]["hubs"][1]
    work = sum(float(g) * float(d) for g, d in zip(j["gpus"], j["duration_s"])) / 3600
    if abs(hub["time_scale"] - want) > 1e-15 * want:
        bad.append("%s: time_scale %r, expected %r" % (k, hub["time_scale"], want))
    if abs(hub["serving_scale"] - serve_scale[k]) > 1e-15 * serve_scale[k]:
        bad.append("%s: serving_scale %r, expected %r" % (k, hub["serving_scale"],
                                                          serve_scale[k]))
    if abs(hub["gpu_h"] - busy) > 1e-12 * hub["gpu_h"]:
        bad.append("%s: gpu_h %r, expected %r" % (k, hub["gpu_h"], busy))
    for run in ("run", "baseline"):
        if abs(doc[k][run]["total"]["ref_gpu_h"] - work) > 1e-12 * work:
            bad.append("%s %s: ref_gpu_h %r, work %r" % (k, run, doc[k][run]["total"]["ref_gpu_h"],
                                                          work))
    if doc[k]["baseline"]["total"]["gpu_h"] == doc["h100"]["baseline"]["total"]["gpu_h"] and \
            any(x["name"] == "guian" and x["jobs"] for x in doc[k]["baseline"]["hubs"]):
        bad.append("%s: the baseline's jobs at guian did not slow" % k)
a, h = doc["a100"]["run"]["hubs"][1], doc["h100"]["run"]["hubs"][1]
if a["gpu"] != "A100-SXM-80GB" or h["gpu"] != "H100-SXM":
    bad.append("gpu members %r %r" % (a["gpu"], h["gpu"]))
if not a["it_energy_j"] != h["it_energy_j"]:
    bad.append("the A100 hub's IT energy is the H100's")
# the energy keys' factor: the time scale x a busy GPU's rise over an idle
# one (power tier defaults, models/power.c: busy 0.90, idle 0.15 of TDP,
# host 2,900 - 1,500 W over 8 GPUs) against the H100's: 475 W over 700 W
rise = lambda tdp: 0.90 * tdp - 0.15 * tdp + (2900.0 - 1500.0) / 8
for k, want, serve in (("h100", 1.0, 1.0), ("a100", scale * rise(400) / rise(700),
                                             hbm * rise(400) / rise(700)), ("half", 2.0, 2.0)):
    got = doc[k]["run"]["hubs"][1]["energy_scale"]
    if abs(got - want) > 1e-12 * want:
        bad.append("%s: energy_scale %r, expected %r" % (k, got, want))
    got = doc[k]["run"]["hubs"][1]["serving_energy_scale"]
    if abs(got - serve) > 1e-12 * serve:
        bad.append("%s: serving_energy_scale %r, expected %r" % (k, got, serve))
if any(x["energy_scale"] != 1 for x in doc["a100"]["run"]["hubs"] if x["name"] != "guian"):
    bad.append("a hub with the scenario's GPU has an energy scale other than 1")
print("\n".join(bad) if bad else "ok A100 x%.6g the time, x%.6g the serving GPUs; speed 0.5 x2 on "
      "every job; work conserved" % (scale, hbm))
sys.exit(1 if bad else 0)
PY
else
    echo "skip: no h5py for $py"
fi
exit $fail
