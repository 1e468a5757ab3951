#!/bin/sh
# serve_kv.sh DCSIM SRC - the KV transfers' contention and the sizing of
# disaggregated pools in `dcsim serve` (docs/serving.md "Disaggregated
# prefill and decode", "GPUs needed: --size"):
#   - contention="shared" is the default and says so in --json; "queued"
#     gives the model without the decode side's contention; both conserve
#     requests; the shared run is the same bytes for OMP_NUM_THREADS=1 and 4;
#     an unknown value is refused;
#   - --size on the pools: the answer was met, every pair of fewer GPUs was
#     run and missed ((p - 1, d) and (p, d - 1) among them), and a plain run
#     of the answer's pools gives the answer's P99s.
# (The closed forms are in tests/models/test_serving_kv.c.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
dis=$src/tests/scenarios/serving-disagg.xml
py=/usr/bin/python3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
expect "pools line says shared" 0 "^pools .*the transfers in flight share the replicas' links" \
    "$dcsim" serve --quiet "$dis"
OMP_NUM_THREADS=1 "$dcsim" serve --quiet --json "$dis" > "$tmp/shared1.json" &&
OMP_NUM_THREADS=4 "$dcsim" serve --quiet --json "$dis" > "$tmp/shared4.json" &&
"$dcsim" serve --quiet --json "$dis" --set serving/disaggregated/@contention=queued \
    > "$tmp/queued.json" || { echo "FAIL: serve --json"; fail=1; }
cmp -s "$tmp/shared1.json" "$tmp/shared4.json" || { echo "FAIL: OMP threads change the run"; fail=1; }
"$dcsim" serve --quiet --json --size "$dis" --set serving/arrivals/@rate=60/s > "$tmp/size.json" ||
    { echo "FAIL: --size"; fail=1; }
$py - "$tmp" "$dcsim" "$dis" <<'PY' || fail=1
import json, os, subprocess, sys
t, dcsim, dis = sys.argv[1:4]
load = lambda n: json.load(open(os.path.join(t, n)))
shared, queued, size = load("shared1.json"), load("queued.json"), load("size.json")
bad = []
if shared["disaggregated"]["contention"] != "shared" or queued["disaggregated"]["contention"] != "queued":
    bad.append("contention names %r %r" % (shared["disaggregated"], queued["disaggregated"]))
for name, d in (("shared", shared), ("queued", queued)):
    if d["arrived"] != d["finished"] + d["dropped"] or d["in_flight"] != 0:
        bad.append("%s: requests not conserved" % name)
    if abs(d["little_l"] - d["little_lambda"] * d["little_w"]) > 1e-9 * d["little_l"]:
        bad.append("%s: Little's law" % name)
if shared["disaggregated"]["transfers"] != queued["disaggregated"]["transfers"]:
    bad.append("transfers differ")
s = size["size"]
steps = s["steps"]
ans = (s["prefill_replicas"], s["replicas"])
if not steps[-1]["met"] or (steps[-1]["prefill_replicas"], steps[-1]["replicas"]) != ans:
    bad.append("the last step is not the answer: %r" % steps[-1])
if any(x["met"] for x in steps[:-1]):
    bad.append("a step before the answer met the SLO")
gpus = [x["gpus"] for x in steps]
if gpus != sorted(gpus) or steps[-1]["gpus"] != s["gpus"] or s["gpus"] != 4 * sum(ans):
    bad.append("steps not by GPUs: %r" % gpus)
tried = {(x["prefill_replicas"], x["replicas"]) for x in steps}
for p in range(1, 64):               # every pair with fewer GPUs (tp 4 both)
    for d in range(1, 64):
        if 4 * (p + d) < s["gpus"] and (p, d) not in tried:
            bad.append("pair %r not tried" % ((p, d),))
if sum(ans) < 4:
    bad.append("the search ended too soon to test it: %r" % (ans,))
for fewer in ((ans[0] - 1, ans[1]), (ans[0], ans[1] - 1)):
    if min(fewer) >= 1 and not any((x["prefill_replicas"], x["replicas"]) == fewer and not x["met"]
                                   for x in steps):
        bad.append("%r not run and missed" % (fewer,))
run = json.loads(subprocess.run(
    [dcsim, "serve", "--quiet", "--json", dis, "--set", "serving/arrivals/@rate=60/s",
     "--set", "cluster/gpu/@count=%d" % s["gpus"],
     "--set", "serving/disaggregated/@prefill-replicas=%d" % ans[0],
     "--set", "serving/disaggregated/@decode-replicas=%d" % ans[1]],
    check=True, capture_output=True, text=True).stdout)
if run["ttft"]["p99_s"] != steps[-1]["ttft_p99_s"] or run["tpot"]["p99_s"] != steps[-1]["tpot_p99_s"]:
    bad.append("the answer's plain run differs: %r %r" % (run["ttft"], steps[-1]))
if not (run["ttft"]["p99_s"] <= 2 and run["tpot"]["p99_s"] <= 0.1):
    bad.append("the answer misses the SLO: %r %r" % (run["ttft"], run["tpot"]))
print("\n".join(bad) if bad else "ok: pools %d + %d after %d runs" % (ans[0], ans[1], len(steps)))
sys.exit(1 if bad else 0)
PY
bad "unknown contention" "contention" "$dcsim" serve --quiet "$dis" \
    --set serving/disaggregated/@contention=fifo
[ "$fail" -eq 0 ] && echo "ok: serve_kv"
exit "$fail"
