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
bad "run refuses a fleet" "has no <job>: it describes an inference fleet; run it with dcsim serve" \
    "$dcsim" run --quiet "$ex"
bad "step refuses a fleet" "run it with dcsim serve" "$dcsim" step "$ex"
bad "serve refuses training" "no <serving> section" "$dcsim" serve --quiet "$src/scenarios/examples/default.xml"
bad "serve needs a scenario" "a scenario with <serving> is needed" "$dcsim" serve
bad "serve bad router" "unknown router; use round-robin, least-loaded, most-free-kv" \
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
