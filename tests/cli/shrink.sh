#!/bin/sh
# shrink.sh DCSIM SRC - the shrink policy (docs/failures.md "Shrinking:
# restart without the GPUs a failure cut off"):
#  - closed form on tests/scenarios/shrink-two-leaves.xml (2 leaves, DP 4,
#    two replicas a leaf; seed 1: exactly one leaf down, repaired once): the
#    job speed the trace records while shrunk is t_built / t_half, t_half
#    the step tier's iteration of the same job at DP 2 with the same global
#    batch (dcsim step on the 16 GPUs it keeps); the degraded stretch is
#    exactly the time run shrunk x (1 - speed), the idle GPU-hours that time
#    x 16 GPUs, and time to train = compute at full speed + rework +
#    checkpoints + restarts + the shrunk stretch; either leaf down gives the
#    same speed (the remapped replicas on leaf 1 price as those on leaf 0);
#  - PP 2 with DP outermost: the replica kept on leaf 1 (its data rank
#    remapped to its GPUs) runs as the DP 1 job on 16 GPUs, to 1e-12;
#  - a shape that cannot run (PP 2 puts every replica on both leaves) waits
#    for the repair as restart does, and the text says why;
#  - no part that cuts GPUs off (spines only): shrink is restart bit for bit;
#  - OMP_NUM_THREADS 1 and 2 give the same JSON;
#  - tests/scenarios/nic-failures.xml: shrink loses less than restart
#    (which waits 4 h per NIC; shrink runs on half the replicas meanwhile),
#    CIs apart, and replace (spare capacity assumed) less than both.
set -u
dcsim=$1
src=$2
fail=0
two=$src/tests/scenarios/shrink-two-leaves.xml
nic=$src/tests/scenarios/nic-failures.xml
ex=$src/scenarios/examples/fabric-failures-leafspine.xml
tmp=$(mktemp -d /tmp/dcsim-shrink-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

for seed in 1 2 3 5; do
    "$dcsim" run --quiet --json "$two" --set @seed=$seed -o "$tmp/two-$seed.h5" \
        >"$tmp/two-$seed.json" || fail=1
done
"$dcsim" step --quiet --json "$two" >"$tmp/full.json" || fail=1
"$dcsim" step --quiet --json "$two" --set cluster/gpu/@count=16 >"$tmp/half.json" || fail=1
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
import h5py
d = sys.argv[1]
t_full = json.load(open(f"{d}/full.json"))["iteration_s"]
t_half = json.load(open(f"{d}/half.json"))["iteration_s"]
v = t_full / t_half
assert 0.5 < v < 1, v  # half the GPUs, the same batch, less DP traffic
speeds = {}
for seed in (1, 2, 3, 5):
    s = json.load(open(f"{d}/two-{seed}.json"))["summary"]
    assert s["iteration_time_s"] == t_full, (s["iteration_time_s"], t_full)
    assert s["failures"] == 1 and s["parts_down"] == 1 and s["parts_repaired"] == 1, (seed, s)
    assert s["shrink_restarts"] == 1 and s["grow_restarts"] == 1, (seed, s)
    assert s["fabric_wait_s"] == 0 and s["shrunk_s"] > 0, (seed, s)
    rel = lambda a, b: abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    assert rel(s["degraded_slowdown_s"], s["shrunk_s"] * (1 - v)), (seed, s, v)
    assert rel(s["shrunk_idle_gpu_h"], s["shrunk_s"] * 16 / 3600), (seed, s)
    total = (s["compute_time_s"] + s["rework_s"] + s["checkpoint_time_s"] +
             s["checkpoint_aborted_s"] + s["restart_time_s"] + s["shrunk_s"] * (1 - v))
    assert rel(total, s["time_to_train_s"]), (seed, total, s)
    with h5py.File(f"{d}/two-{seed}.h5", "r") as f:
        rows = f["campaign/parts"][...]
        actions = dict(f["campaign/parts"].dtype["action"].metadata["enum"])
    down = [r for r in rows if r["action"] == actions["down"]]
    rep = [r for r in rows if r["action"] == actions["repaired"]]
    assert len(down) == 1 and len(rep) == 1, rows
    assert abs(down[0]["job_speed"] - v) <= 1e-12, (down[0], v)
    # repaired, the job keeps its shape until the next checkpoint
    assert rep[0]["job_speed"] == down[0]["job_speed"], rep
    speeds.setdefault(int(down[0]["fabric_id"]), down[0]["job_speed"])
assert sorted(speeds) == [32, 33], speeds  # both leaves went down in these seeds
assert speeds[32] == speeds[33], speeds
PY

# PP 2 with DP outermost (order tp-cp-pp-dp): a replica per leaf, its two
# stages talking over the leaf; leaf 32 down keeps replica 1 on GPUs 16-31
# (data rank 0 remapped), leaf 33 down replica 0: both run at t_built / the
# iteration of the same job at DP 1 on 16 GPUs
pp="--set job/parallelism/@pp=2 --set job/parallelism/@order=tp-cp-pp-dp"
for seed in 1 2; do
    "$dcsim" run --quiet --json "$two" --set @seed=$seed $pp -o "$tmp/pp-$seed.h5" \
        >/dev/null || fail=1
done
"$dcsim" step --quiet --json "$two" $pp >"$tmp/pp-full.json" || fail=1
"$dcsim" step --quiet --json "$two" $pp --set cluster/gpu/@count=16 >"$tmp/pp-half.json" || fail=1
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
import h5py
d = sys.argv[1]
v = (json.load(open(f"{d}/pp-full.json"))["iteration_s"] /
     json.load(open(f"{d}/pp-half.json"))["iteration_s"])
seen = set()
for seed in (1, 2):
    with h5py.File(f"{d}/pp-{seed}.h5", "r") as f:
        rows = f["campaign/parts"][...]
    down = [r for r in rows if r["action"] == 0]
    assert len(down) == 1, rows
    assert abs(down[0]["job_speed"] - v) <= 1e-12, (seed, down[0], v)
    seen.add(int(down[0]["fabric_id"]))
assert seen == {32, 33}, seen
PY

# PP 2: each replica has a stage on each leaf, so a leaf down leaves none
"$dcsim" run --quiet "$two" --set @seed=1 --set job/parallelism/@pp=2 >"$tmp/pp2.txt" || fail=1
grep -q "1 left none that runs (the job waited for repairs there): shrink with failed parts switch=.*no data-parallel replica keeps all its GPUs" "$tmp/pp2.txt" || {
    echo "FAIL: an unrunnable shape does not say so"; cat "$tmp/pp2.txt"; fail=1; }
"$dcsim" run --quiet --json "$two" --set @seed=1 --set job/parallelism/@pp=2 >"$tmp/pp2.json" || fail=1
"$dcsim" run --quiet --json "$two" --set @seed=1 --set job/parallelism/@pp=2 \
    --set reliability/degraded/@policy=restart >"$tmp/pp2-restart.json" || fail=1

# spines only: nothing cuts GPUs off
sed -e '/<failure component="cable"/d' "$ex" >"$tmp/spines.xml"
grep -q 'component="cable"' "$tmp/spines.xml" && { echo "FAIL: sed kept the cables"; fail=1; }
sp() { OMP_NUM_THREADS=2 "$dcsim" run --quiet --json "$tmp/spines.xml" --replicas 4 "$@"; }
sp >"$tmp/sp-restart.json" || fail=1
sp --set reliability/degraded/@policy=shrink >"$tmp/sp-shrink.json" || fail=1

# threads
OMP_NUM_THREADS=1 "$dcsim" run --quiet --json "$two" --replicas 16 >"$tmp/t1.json" || fail=1
OMP_NUM_THREADS=2 "$dcsim" run --quiet --json "$two" --replicas 16 >"$tmp/t2.json" || fail=1
cmp -s "$tmp/t1.json" "$tmp/t2.json" || { echo "FAIL: 1 and 2 threads differ"; fail=1; }

# restart waits, shrink runs half, replace assumes spares
for p in restart shrink replace; do
    OMP_NUM_THREADS=2 "$dcsim" run --quiet --json "$nic" --replicas 8 \
        --set reliability/degraded/@policy=$p >"$tmp/nic-$p.json" || fail=1
done
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, math, sys
d = sys.argv[1]
load = lambda n: json.load(open(f"{d}/{n}.json"))
a, b = load("pp2")["summary"], load("pp2-restart")["summary"]
for k in ("time_to_train_s", "fabric_wait_s", "rework_s", "restart_time_s"):
    assert a[k] == b[k], (k, a[k], b[k])
assert a["fabric_wait_s"] > 0 and a["shrunk_s"] == 0 and a["fabric_unrunnable"] == 1, a

r, s = load("sp-restart"), load("sp-shrink")
assert s["summary"]["shrunk_s"] == 0 and s["summary"]["shrink_restarts"] == 0, s["summary"]
assert "shrunk_s" not in r["summary"] and "shrunk_s" in s["replicas"]
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items()
                if not k.startswith(("shrunk_", "shrink_", "grow_"))}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
diff = [k for k in r if strip(r[k]) != strip(s.get(k))]
assert diff == [], (diff, [(r[k], s.get(k)) for k in diff][:2])
assert r["summary"]["parts_down"] > 0 and r["summary"]["degraded_slowdown_s"] > 0

m = {p: load(f"nic-{p}")["replicas"] for p in ("restart", "shrink", "replace")}
for p, x in m.items():
    for k, st in x.items():
        if isinstance(st, dict) and "mean" in st:
            assert math.isfinite(st["mean"]) and math.isfinite(st["ci95"]), (p, k, st)
tt = {p: m[p]["time_to_train_s"] for p in m}
assert tt["shrink"]["mean"] + tt["shrink"]["ci95"] < tt["restart"]["mean"] - tt["restart"]["ci95"], tt
assert tt["replace"]["mean"] < tt["shrink"]["mean"], tt
assert m["shrink"]["fabric_wait_s"]["mean"] == 0 and m["shrink"]["shrunk_s"]["mean"] > 0
assert m["restart"]["fabric_wait_s"]["mean"] > 0
PY
exit $fail
