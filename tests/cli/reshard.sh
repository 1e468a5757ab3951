#!/bin/sh
# reshard.sh DCSIM SRC - <degraded policy="shrink" reshard="true">
# (docs/failures.md "Shrinking", "Re-sharding onto fewer pipeline stages") on
# tests/scenarios/shrink-two-leaves.xml at PP 2 (TP 8, DP 2, Megatron's
# order: stage 0 of both replicas on leaf 0, stage 1 on leaf 1, so a leaf
# down leaves no whole replica):
#  - without reshard the job waits for the repair (shrink.sh); with it, it
#    restarts with the pipeline over 1 stage, DP 2, on the 16 GPUs of the
#    other leaf: the trace's job speed = t_built / the iteration of TP 8 PP 1
#    DP 2 with the same global batch on 16 GPUs (dcsim step), to 1e-12; the
#    degraded stretch = the time run shrunk x (1 - speed) and the idle
#    GPU-hours that time x 16, to 1e-9; no wait;
#  - a layout the memory model refuses (Llama 3 70B on H200s: PP 2 fits,
#    PP 1 does not) waits as without reshard, and the text says why;
#  - reshard="false" is the scenario without it byte for byte; 1 and 2
#    threads agree; reshard without policy="shrink" is refused (tests/bad).
set -u
dcsim=$1
src=$2
fail=0
two=$src/tests/scenarios/shrink-two-leaves.xml
tmp=$(mktemp -d /tmp/dcsim-reshard-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pp="--set job/parallelism/@pp=2"
rs="--set reliability/degraded/@reshard=true"
for seed in 1 2; do
    "$dcsim" run -q --json "$two" --set @seed=$seed $pp $rs -o "$tmp/r-$seed.h5" \
        >"$tmp/r-$seed.json" || fail=1
done
"$dcsim" run -q "$two" --set @seed=1 $pp $rs >"$tmp/r-1.txt" || fail=1
grep -q "reshard: 1 of those states had no whole replica left" "$tmp/r-1.txt" ||
    { echo "FAIL: no reshard line"; cat "$tmp/r-1.txt"; fail=1; }
"$dcsim" step -q --json "$two" $pp >"$tmp/full.json" || fail=1
"$dcsim" step -q --json "$two" --set cluster/gpu/@count=16 >"$tmp/pp1.json" || fail=1
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
import h5py
d = sys.argv[1]
t_full = json.load(open(f"{d}/full.json"))["iteration_s"]
t_pp1 = json.load(open(f"{d}/pp1.json"))["iteration_s"]
v = t_full / t_pp1
assert 0 < v < 1, v
rel = lambda a, b: abs(a - b) <= 1e-9 * max(abs(a), abs(b))
seen = set()
for seed in (1, 2):
    s = json.load(open(f"{d}/r-{seed}.json"))["summary"]
    # the run derives its iteration from the step tier by another sum: equal to 1e-12
    assert rel(s["iteration_time_s"], t_full) and abs(s["iteration_time_s"] - t_full) <= 1e-12 * t_full, (s["iteration_time_s"], t_full)
    assert s["parts_down"] == 1 and s["shrink_restarts"] == 1, (seed, s)
    assert s["fabric_wait_s"] == 0 and s["shrunk_s"] > 0 and s["fabric_unrunnable"] == 0, s
    assert rel(s["degraded_slowdown_s"], s["shrunk_s"] * (1 - v)), (seed, s, v)
    assert rel(s["shrunk_idle_gpu_h"], s["shrunk_s"] * 16 / 3600), (seed, s)
    with h5py.File(f"{d}/r-{seed}.h5", "r") as f:
        rows = f["campaign/parts"][...]
    down = [r for r in rows if r["action"] == 0]
    assert len(down) == 1, rows
    assert abs(down[0]["job_speed"] - v) <= 1e-12, (seed, down[0], v)
    seen.add(int(down[0]["fabric_id"]))
assert seen == {32, 33}, seen  # either leaf: the other leaf's 16 GPUs
PY
# memory: Llama 3 70B TP 8 on H200s fits at PP 2, not at PP 1
big="--set cluster/gpu/@type=H200-SXM --set job/model/@ref=llama3-70b"
"$dcsim" run -q "$two" --set @seed=1 $pp $rs $big >"$tmp/big.txt" || fail=1
grep -q "[1-9] left none that runs (the job waited for repairs there): shrink with failed parts switch=.*re-sharded to pp 1 dp [12]: dp [12] does not fit" "$tmp/big.txt" ||
    { echo "FAIL: the memory refusal does not say so"; cat "$tmp/big.txt"; fail=1; }
"$dcsim" run -q --json "$two" --set @seed=1 $pp $rs $big >"$tmp/big.json" || fail=1
"$dcsim" run -q --json "$two" --set @seed=1 $pp $big >"$tmp/big-no.json" || fail=1
cmp -s "$tmp/big.json" "$tmp/big-no.json" || { echo "FAIL: a refused re-shard differs"; fail=1; }
# reshard="false" = no reshard, byte for byte
for form in "" --json; do
    "$dcsim" run -q $form "$two" --set @seed=1 $pp >"$tmp/a" || fail=1
    "$dcsim" run -q $form "$two" --set @seed=1 $pp --set reliability/degraded/@reshard=false \
        >"$tmp/b" || fail=1
    cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL: reshard=false $form differs"; fail=1; }
done
# threads
OMP_NUM_THREADS=1 "$dcsim" run -q --json "$two" $pp $rs --replicas 8 >"$tmp/t1.json" || fail=1
OMP_NUM_THREADS=2 "$dcsim" run -q --json "$two" $pp $rs --replicas 8 >"$tmp/t2.json" || fail=1
cmp -s "$tmp/t1.json" "$tmp/t2.json" || { echo "FAIL: 1 and 2 threads differ"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: reshard"
exit $fail
