#!/bin/sh
# reshard_layers.sh DCSIM SRC - re-sharding keeps first-stage-layers and
# last-stage-layers (docs/failures.md "Re-sharding onto fewer pipeline
# stages") on tests/scenarios/reshard-stage-layers.xml: TP 8, PP 6 (4, 6, 6,
# 6, 6, 4 layers), DP 1 on 6 servers; a host-side cage down cuts two GPUs of
# one server, so no whole replica is left. One cage down: the job runs PP 5
# with the end stages kept (4, 8, 8, 8, 4) on the 5 servers left, the
# trace's job speed = t_built / dcsim step --set cluster/gpu/@count=40 --set
# job/parallelism/@pp=5 (to 1e-6: the step's 40-GPU fabric is built smaller
# than the degraded 48-GPU one); the even split would need PP 4 (32 / 5
# does not split), which is slower. Two cages on two servers: PP 4, where the
# even split (8 layers a stage) has a lighter heaviest stage than the ends
# kept (4, 12, 12, 4), and is faster: the even split runs.
set -u
dcsim=$1
src=$2
fail=0
s=$src/tests/scenarios/reshard-stage-layers.xml
tmp=$(mktemp -d /tmp/dcsim-reshard-layers-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for seed in 1 4; do
    "$dcsim" run -q --json "$s" --set @seed=$seed -o "$tmp/r-$seed.h5" >"$tmp/r-$seed.json" ||
        fail=1
done
"$dcsim" run -q "$s" --set @seed=1 >"$tmp/r-1.txt" || fail=1
grep -q "reshard: [1-9][0-9]* of those states had no whole replica left" "$tmp/r-1.txt" ||
    { echo "FAIL: no reshard line"; cat "$tmp/r-1.txt"; fail=1; }
"$dcsim" step -q --json "$s" >"$tmp/full.json" || fail=1
"$dcsim" step -q --json "$s" --set cluster/gpu/@count=40 --set job/parallelism/@pp=5 \
    >"$tmp/pp5.json" || fail=1
"$dcsim" step -q --json "$s" --set cluster/gpu/@count=32 --set job/parallelism/@pp=4 \
    >"$tmp/pp4.json" || fail=1
sed -e 's/ first-stage-layers="4" last-stage-layers="4"//' "$s" >"$tmp/even.xml"
"$dcsim" step -q --json "$tmp/even.xml" --set cluster/gpu/@count=32 \
    --set job/parallelism/@pp=4 >"$tmp/pp4even.json" || fail=1
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
import h5py
d = sys.argv[1]
t = {k: json.load(open(f"{d}/{k}.json"))["iteration_s"] for k in ("full", "pp5", "pp4", "pp4even")}
v5, v4, v4even = t["full"] / t["pp5"], t["full"] / t["pp4"], t["full"] / t["pp4even"]
assert v5 > v4even * 1.01, (v5, v4even)  # the ends kept beat the even split's PP 4
assert v4 < v4even, (v4, v4even)  # at PP 4 the ends kept (4, 12, 12, 4) are slower
seen = {1: 0, 2: 0}
for seed in (1, 4):
    s = json.load(open(f"{d}/r-{seed}.json"))["summary"]
    assert s["fabric_wait_s"] == 0 and s["shrunk_s"] > 0, s
    with h5py.File(f"{d}/r-{seed}.h5", "r") as f:
        rows = f["campaign/parts"][...]
    for r in rows[rows["action"] == 0]:
        n = int(r["parts_out"])
        want = {1: v5, 2: v4even}.get(n)
        if want is None:
            continue
        assert abs(r["job_speed"] - want) <= 1e-6 * want, (seed, n, r["job_speed"], want)
        seen[n] += 1
assert seen[1] >= 3 and seen[2] >= 1, seen
print("one server cut: PP 5 (4, 8, 8, 8, 4) at %.6f of full speed, the even split's PP 4 "
      "%.6f; two servers cut: PP 4 even %.6f, not (4, 12, 12, 4) %.6f" % (v5, v4even, v4even, v4))
PY
[ "$fail" -eq 0 ] && echo "ok: reshard keeps the end stages' layers"
exit $fail
