#!/bin/sh
# serve.sh DCSIM SRC - `dcsim serve` end to end (docs/serving.md): the
# example runs and prints its tables; every request is accounted for
# (arrived = finished + dropped + in flight, 0 in flight after the drain);
# Little's law holds; the same scenario gives the same bytes; more traffic
# never lowers the P99 TTFT; training commands refuse a fleet and serve
# refuses a training run, each in one line. (The arithmetic is tested in
# tests/models/test_serving.c.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/serving-llama3-70b-h100.xml
py=/usr/bin/python3
expect "serve text" 0 "^  TTFT " "$dcsim" serve --quiet "$ex"
expect "serve defaults" 0 "^defaults used: kv-fraction 90%" "$dcsim" serve --quiet "$ex"
expect "serve little" 0 "^Little " "$dcsim" serve --quiet "$ex"
expect "serve validate" 0 "" "$dcsim" validate "$ex"
out=$("$dcsim" serve --quiet --json "$ex") || { echo "FAIL: serve --json"; fail=1; }
printf '%s\n' "$out" | $py -c '
import json, math, sys
d = json.load(sys.stdin)
bad = []
if d["arrived"] != d["finished"] + d["dropped"] + d["in_flight"] or d["in_flight"] != 0:
    bad.append("requests not conserved: %r" % d)
if abs(d["little_l"] - d["little_lambda"] * d["little_w"]) > 1e-9 * d["little_l"]:
    bad.append("Little: L %g, lambda W %g" % (d["little_l"], d["little_lambda"] * d["little_w"]))
for k in ("ttft", "tpot", "e2e", "queue"):
    q = d[k]
    if not (q["p50_s"] <= q["p90_s"] <= q["p99_s"] <= q["max_s"]):
        bad.append("%s quantiles out of order: %r" % (k, q))
for k, v in d.items():
    if isinstance(v, float) and not math.isfinite(v):
        bad.append("%s not finite" % k)
if not 0 < d["kv_util_mean"] <= d["kv_util_max"] <= 1:
    bad.append("KV use %g %g" % (d["kv_util_mean"], d["kv_util_max"]))
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
' || fail=1
again=$("$dcsim" serve --quiet --json "$ex")
[ "$out" = "$again" ] || { echo "FAIL: serve is not deterministic"; fail=1; }
threads=$(OMP_NUM_THREADS=1 "$dcsim" serve --quiet --json "$ex")
[ "$out" = "$threads" ] || { echo "FAIL: serve differs with OMP_NUM_THREADS=1"; fail=1; }
p99() { "$dcsim" serve --quiet --json "$ex" --set "serving/arrivals/@rate=$1" |
        $py -c 'import json,sys; print(json.load(sys.stdin)["ttft"]["p99_s"])'; }
lo=$(p99 10/s) hi=$(p99 60/s)
$py -c "import sys; sys.exit(0 if $hi >= $lo else 1)" ||
    { echo "FAIL: P99 TTFT fell from $lo s to $hi s with 6x the traffic"; fail=1; }
# --size: the answer meets the SLO (its P99s), one replica fewer was simulated and did not
sized=$("$dcsim" serve --quiet --size --json "$ex") || { echo "FAIL: serve --size --json"; fail=1; }
printf '%s\n' "$sized" | $py -c '
import json, sys
d = json.load(sys.stdin)
n, steps = d["size"]["replicas"], d["size"]["steps"]
bad = []
if d["replicas"] != n or d["size"]["gpus"] != n * d["tp"]:
    bad.append("the run is not the answer: %r" % d["size"])
if not (d["ttft"]["p99_s"] <= 2 and d["tpot"]["p99_s"] <= 0.1):
    bad.append("the answer misses the SLO: %r %r" % (d["ttft"], d["tpot"]))
if not any(s["replicas"] == n and s["met"] for s in steps):
    bad.append("the answer was not a met step")
if n > 1 and not any(s["replicas"] == n - 1 and not s["met"] for s in steps):
    bad.append("%d replicas were not shown to miss the SLO" % (n - 1))
for s in steps:
    if s["met"] != (s["ttft_p99_s"] <= 2 and s["tpot_p99_s"] <= 0.1):
        bad.append("step %r judged wrongly" % s)
print("\n".join(bad) if bad else "ok: size %d replicas in %d steps" % (n, len(steps)))
sys.exit(1 if bad else 0)
' || fail=1
expect "serve size text" 0 "^answer     [0-9]* replicas of tp 4" "$dcsim" serve --quiet --size "$ex"
# at a site: cost, energy and CO2 per million output tokens (the closed form: test_serve_cost)
site=$src/tests/scenarios/serving-site.xml
expect "serve cost text" 0 "^per Mtok   " "$dcsim" serve --quiet "$site"
expect "serve cost basis" 0 "^cost basis 1 node.s. of 8 GPUs" "$dcsim" serve --quiet "$site"
"$dcsim" serve --quiet --json "$site" | $py -c '
import json, sys
d = json.load(sys.stdin)
k = d["cost"]
bad = []
if abs(k["output_mtok"] - 16 * 64 / 1e6) > 1e-15:
    bad.append("tokens %r" % k["output_mtok"])
if abs(k["energy_cost_per_mtok_cny"] * k["output_mtok"] - k["energy_cost_cny"]) > 1e-12 * k["energy_cost_cny"]:
    bad.append("cost per Mtok %r" % k)
if not 0 < k["co2_kg_per_mtok"] and k["kwh_per_mtok"] > 0:
    bad.append("CO2 or energy per Mtok %r" % k)
print("\n".join(bad) if bad else "ok: cost")
sys.exit(1 if bad else 0)
' || fail=1
# a diurnal rate from its peak sends more than the flat rate over a quarter period
n_flat=$("$dcsim" serve --quiet --json "$ex" --set serving/arrivals/@duration=150s |
         $py -c 'import json,sys; print(json.load(sys.stdin)["arrived"])')
n_peak=$("$dcsim" serve --quiet --json "$ex" --set serving/arrivals/@duration=150s \
         --set serving/arrivals/@diurnal-amplitude=80% --set serving/arrivals/@diurnal-period=600s |
         $py -c 'import json,sys; print(json.load(sys.stdin)["arrived"])')
[ "$n_peak" -gt "$n_flat" ] || { echo "FAIL: diurnal from the peak $n_peak <= flat $n_flat"; fail=1; }
# a trace: every row arrives and finishes, with the trace's tokens (64+16+128+1+200+50)
trace=$src/tests/scenarios/serving-trace.xml
"$dcsim" serve --quiet --json "$trace" | $py -c '
import json, sys
d = json.load(sys.stdin)
ok = d["arrived"] == 6 and d["finished"] == 6 and d["output_tokens_per_s"] * d["end_s"] > 458.99 \
     and d["output_tokens_per_s"] * d["end_s"] < 459.01 and d["end_s"] > 10
print("ok: trace" if ok else "FAIL: trace %r" % d)
sys.exit(0 if ok else 1)
' || fail=1
bad "run refuses a fleet" "has no <job>: it describes an inference fleet; run it with dcsim serve" \
    "$dcsim" run --quiet "$ex"
bad "step refuses a fleet" "run it with dcsim serve" "$dcsim" step "$ex"
bad "serve refuses training" "no <serving> section" "$dcsim" serve --quiet "$src/scenarios/examples/default.xml"
bad "serve needs a scenario" "a scenario with <serving> is needed" "$dcsim" serve
bad "serve bad router" "unknown router; use round-robin, least-loaded, most-free-kv, prefix-affinity" \
    "$dcsim" serve --quiet "$ex" --set serving/router/@policy=random
bad "serve tp over domain" "tp 16 is more than the 8 GPUs of one nvlink4 domain" \
    "$dcsim" serve --quiet "$ex" --set serving/replica/@tp=16
bad "serve tp not dividing" "tp 3 does not divide the cluster's 64 GPUs" \
    "$dcsim" serve --quiet "$ex" --set serving/replica/@tp=3
bad "serve weights too big" "leaves no memory for the KV cache" \
    "$dcsim" serve --quiet "$ex" --set serving/replica/@tp=1 --set serving/replica/@weights=bf16
bad "serve no fp8 on A100" "has no fp8 peak" \
    "$dcsim" serve --quiet "$ex" --set cluster/gpu/@type=A100-SXM-80GB
bad "serve memory guard" "request records" \
    "$dcsim" serve --quiet "$ex" --set serving/arrivals/@rate=1e9/s --set serving/arrivals/@duration=300d
[ "$fail" -eq 0 ] && echo "ok: serve"
exit "$fail"
