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
#  - by-tier states run and say which parts stood for which in the docs;
#  - NICs (tests/scenarios/nic-failures.xml): a NIC down cuts its GPU off, so
#    restart waits for repairs and replace does not; time conserved;
#  - the trace's /campaign/parts: one row per part down, slow or repaired
#    (the summary's counts), the parts out replayed from the rows, the
#    fabric ids in the cause's class (spines, host ports), job speed 0 while
#    a GPU is cut off, 1 with nothing out.
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
nic=$src/tests/scenarios/nic-failures.xml
"$dcsim" run --quiet --json "$nic" -o "$tmp/nic.h5" >"$tmp/nic.json" || fail=1
"$dcsim" run --quiet --json "$nic" --set reliability/degraded/@policy=replace \
    >"$tmp/nic-replace.json" || fail=1
run -o "$tmp/leafspine.h5" >"$tmp/leafspine.json" || fail=1
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
import h5py
d = sys.argv[1]
nic_doc = json.load(open(f"{d}/nic.json"))
assert [c["unit"] for c in nic_doc["causes"]] == ["NIC"], nic_doc["causes"]
nic = nic_doc["summary"]
rep = json.load(open(f"{d}/nic-replace.json"))["summary"]
assert nic["parts_down"] > 20 and nic["fabric_wait_s"] > 0 and nic["fabric_unrunnable"] > 0, nic
assert rep["fabric_wait_s"] == 0 and rep["parts_down"] > 20 and rep["fabric_unrunnable"] == 0, rep
assert nic["time_to_train_s"] > rep["time_to_train_s"]
for s in (nic, rep):
    parts = ("compute_time_s", "rework_s", "checkpoint_time_s", "checkpoint_aborted_s",
             "restart_time_s", "degraded_slowdown_s")
    assert abs(sum(s[k] for k in parts) - s["time_to_train_s"]) <= 1e-9 * s["time_to_train_s"]

def check(name, summary, ids_ok):
    with h5py.File(f"{d}/{name}.h5", "r") as f:
        rows = f["campaign/parts"][...]
        actions = dict(f["campaign/parts"].dtype["action"].metadata["enum"])
    down, slow, rep = (actions[k] for k in ("down", "slow", "repaired"))
    assert (rows["action"] == down).sum() == summary["parts_down"]
    assert (rows["action"] == slow).sum() == summary["parts_slow"]
    assert (rows["action"] == rep).sum() == summary["parts_repaired"]
    out, last = set(), 0.0
    for r in rows:
        assert r["time_s"] >= last
        last = r["time_s"]
        key = (int(r["cause"]), int(r["part"]))
        if r["action"] == rep:
            out.discard(key)
            assert r["speed"] == 1
        else:
            out.add(key)
        assert r["parts_out"] == len(out), (r, out)
        assert ids_ok(int(r["cause"]), int(r["fabric_id"])), r
        assert 0 <= r["job_speed"] <= 1
        if not out:
            assert r["job_speed"] == 1, r
    return rows, down

rows, down = check("nic", nic, lambda c, i: 0 <= i < 2048)
assert all(r["job_speed"] == 0 for r in rows if r["action"] == down)
ls = json.load(open(f"{d}/leafspine.json"))["summary"]
# causes: gpu rate (unnamed), cable, switch: spines are nodes 2107-2122,
# cables are directed link ids 2C (even)
rows, _ = check("leafspine", ls,
                lambda c, i: 2107 <= i <= 2122 if c == 1 else i % 2 == 0)
assert len(rows) > 0
PY
exit $fail
