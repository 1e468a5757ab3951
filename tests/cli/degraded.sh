#!/bin/sh
# degraded.sh DCSIM SRC - the campaign on a degraded fabric (docs/failures.md,
# "The campaign on a degraded fabric") on scenarios/examples/
# fabric-failures-leafspine.xml:
#  - cache hits are fresh simulations: a cache of one state (nearly every
#    state simulated again) gives the JSON of the default cache, byte for byte;
#  - replicas give the same JSON on 1 and 2 threads;
#  - policy replace gives the run without repair times (times, failures,
#    rework: the down parts never change the job's speed);
#  - restart loses less than wait on the same failures, and its degraded
#    stretch and waits add up in the summary (conservation);
#  - by-tier states run and say which parts stood for which in the docs.
set -u
dcsim=$1
src=$2
fail=0
ex=$src/scenarios/examples/fabric-failures-leafspine.xml
tmp=$(mktemp -d /tmp/dcsim-degraded-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
run() { "$dcsim" run --quiet --json "$ex" "$@"; }

OMP_NUM_THREADS=2 run --replicas 8 >"$tmp/default.json" || fail=1
OMP_NUM_THREADS=2 run --replicas 8 --set reliability/degraded/@cache=1 >"$tmp/cache1.json" || fail=1
cmp -s "$tmp/default.json" "$tmp/cache1.json" || {
    echo "FAIL: a cache of one state changed the results"; fail=1; }
OMP_NUM_THREADS=1 run --replicas 8 >"$tmp/one.json" || fail=1
cmp -s "$tmp/default.json" "$tmp/one.json" || {
    echo "FAIL: 1 and 2 threads differ"; fail=1; }

# replace = no repair times: strip the repair attributes from a copy
sed -e 's/ repair="4h"//' -e 's|<degraded policy="restart" cache="64"/>||' "$ex" >"$tmp/plain.xml"
run --set reliability/degraded/@policy=replace >"$tmp/replace.json" || fail=1
"$dcsim" run --quiet --json "$tmp/plain.xml" >"$tmp/plain.json" || fail=1
run --set reliability/degraded/@policy=wait >"$tmp/wait.json" || fail=1
run >"$tmp/restart.json" || fail=1
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
def summary(name):
    return json.load(open(f"{d}/{name}.json"))["summary"]
rep, plain, wait, restart = (summary(n) for n in ("replace", "plain", "wait", "restart"))
for key in ("time_to_train_s", "failures", "rework_s", "restart_time_s", "checkpoint_time_s"):
    assert rep[key] == plain[key], (key, rep[key], plain[key])
assert rep["degraded_slowdown_s"] == 0 and rep["fabric_wait_s"] == 0, rep
assert rep["parts_down"] > 0, rep
assert wait["fabric_wait_s"] > 0 and wait["degraded_slowdown_s"] == 0, wait
assert restart["degraded_slowdown_s"] > 0, restart
for s in (rep, wait, restart):
    assert s["fabric_wait_s"] <= s["restart_time_s"], s
    parts = ("compute_time_s", "rework_s", "checkpoint_time_s", "checkpoint_aborted_s",
             "restart_time_s", "degraded_slowdown_s")
    total = sum(s[k] for k in parts)
    assert abs(total - s["time_to_train_s"]) <= 1e-9 * s["time_to_train_s"], (total, s)
assert wait["time_to_train_s"] > rep["time_to_train_s"], (wait, rep)
rj = json.load(open(f"{d}/default.json"))["replicas"]
for key in ("interruption_s", "degraded_slowdown_s", "fabric_wait_s"):
    assert rj[key]["mean"] >= 0 and rj[key]["ci95"] >= 0, rj[key]
PY
run --set reliability/degraded/@states=by-tier >"$tmp/bytier.json" || {
    echo "FAIL: states=by-tier"; fail=1; }
"$dcsim" run --quiet "$ex" | grep -q "^  slowed by the degraded fabric " || {
    echo "FAIL: the text summary has no degraded line"; fail=1; }
exit $fail
