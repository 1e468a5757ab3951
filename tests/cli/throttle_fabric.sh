#!/bin/sh
# throttle_fabric.sh DCSIM SRC - thermal throttling on a degraded fabric
# (docs/failures.md "Thermal throttling") on tests/scenarios/throttle-flapping.xml
# (flapping leaf uplinks, the first server's 8 GPUs at 80 % in hot hours).
# Every hour hot (above -50 C): each flap down is priced by one step-tier
# iteration with both applied, t_both = dcsim step --fail node=0:0.8 --fail
# link=ID, never faster than either alone; with W the productive compute,
# D the compute wall time under a flap (the timeline's compute spells), v =
# t_built / t_x:
#   degraded stretch = D v_both (1/v_link - 1)
#   throttle stretch = D (1 - v_both/v_link) + (W - D v_both) (1/v_node - 1)
# to 1e-9 (the multiplied speeds would give W (1/v_node - 1) + D (1 - v_link)
# in all). A cache of one entry (hot and cool states evicting each other)
# gives the JSON of the default cache byte for byte; 1 and 2 threads agree;
# hot hours with no network part out are the scenario without failures (the
# combined states never asked); no hot hour is the scenario without <throttle>.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d /tmp/dcsim-throttle-fabric-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
s=$src/tests/scenarios/throttle-flapping.xml
hot="--set reliability/throttle/@above=-50C"
"$dcsim" run "$s" -q --json $hot -o "$tmp/h.h5" >"$tmp/h.json" || { echo "FAIL: run"; fail=1; }
"$dcsim" run "$s" -q $hot >"$tmp/h.txt" || { echo "FAIL: run text"; fail=1; }
grep -q "throttling on a degraded fabric: [1-9][0-9]* lookups of hot states, [1-9]" "$tmp/h.txt" ||
    { echo "FAIL: no combined-state line"; fail=1; }
/usr/bin/python3 - "$dcsim" "$s" "$tmp/h.json" "$tmp/h.h5" <<'PY' || fail=1
import json, subprocess, sys
import h5py
dcsim, scenario, js, h5 = sys.argv[1:5]
s = json.load(open(js))["summary"]
assert s["flaps"] > 3 and s["flap_interruptions"] == 0 and s["restarts"] == 0, s
assert s["throttle_hot_s"] == s["time_to_train_s"], s
rows = h5py.File(h5, "r")["/campaign/parts"][:]
down = rows[rows["action"] == 3]
assert len(down) == s["flaps"] and (down["parts_out"] == 1).all(), len(down)
links = sorted(set(int(x) for x in down["fabric_id"]))
def step(*fails):
    cmd = [dcsim, "step", scenario, "-q", "--json"]
    for f in fails:
        cmd += ["--fail", f]
    d = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return d["failure_state"]["iteration_as_built_s"], d["iteration_s"]
tb, tn = step("node=0:0.8")
both = {}
for link in links:
    tb2, tl = step("link=%d" % link)
    tb3, tc = step("node=0:0.8", "link=%d" % link)
    assert tb == tb2 == tb3, (tb, tb2, tb3)
    assert tc >= tl and tc >= tn, (link, tc, tl, tn)  # never faster than either alone
    both[link] = (tl, tc)
assert len(set(both.values())) == 1, both  # every leaf uplink alike
tl, tc = both[links[0]]
for r in down:  # the trace's job speed stays the fabric's alone
    assert abs(r["job_speed"] - tb / tl) <= 1e-12, (r["job_speed"], tb / tl)
vn, vl, vc = tb / tn, tb / tl, tb / tc
# D: the compute wall time under a flap down (a down over a checkpoint
# write slows nothing), from the timeline's compute spells
spells = h5py.File(h5, "r")["/campaign/timeline"][:]
spells = spells[spells["state"] == 0]
D = 0.0
for r in down:
    a, b = r["time_s"], r["time_s"] + 30
    D += sum(max(0.0, min(b, e) - max(a, st)) for st, e in zip(spells["start_s"], spells["end_s"]))
assert 0 < D <= s["flaps"] * 30.0 + 1e-6, D
W = s["compute_time_s"]
deg = D * vc * (1 / vl - 1)
thr = D * (1 - vc / vl) + (W - D * vc) * (1 / vn - 1)
assert abs(s["degraded_slowdown_s"] - deg) <= 1e-9 * deg, (s["degraded_slowdown_s"], deg)
assert abs(s["throttle_slowdown_s"] - thr) <= 1e-9 * thr, (s["throttle_slowdown_s"], thr)
mult = W * (1 / vn - 1) + D * (1 - vl)
print("combined %.6g s of stretch, multiplied %.6g s, per flap %.6g s against %.6g s"
      % (deg + thr, mult, 30 * (1 - vc / vn), 30 * (1 - vl)))
PY
# cache hits = fresh simulations: one entry, hot and cool states evict each other
"$dcsim" run "$s" -q --json $hot --set reliability/degraded/@cache=1 >"$tmp/c1.json" || fail=1
cmp -s "$tmp/h.json" "$tmp/c1.json" || { echo "FAIL: cache=1 differs"; fail=1; }
# 1 and 2 threads agree (hot and cool hours, flaps)
OMP_NUM_THREADS=1 "$dcsim" run "$s" -q --json --replicas 4 >"$tmp/one.json" || fail=1
OMP_NUM_THREADS=2 "$dcsim" run "$s" -q --json --replicas 4 >"$tmp/two.json" || fail=1
cmp -s "$tmp/one.json" "$tmp/two.json" || { echo "FAIL: 1 and 2 threads differ"; fail=1; }
# hot hours, no network part ever out: the scenario without failures, byte for byte
sed -e '/<failure /,/flap-up/d' -e '/<degraded /d' "$s" >"$tmp/nofail.xml"
grep -q '<failure' "$tmp/nofail.xml" && { echo "FAIL: no-failure scenario"; fail=1; }
for form in "" --json; do
    "$dcsim" run "$tmp/nofail.xml" -q $form | sed 's/nofail\.xml/X/' >"$tmp/a" || fail=1
    sed -e 's|mtbf="100h"|mtbf="1e12h"|' "$s" >"$tmp/never.xml"
    "$dcsim" run "$tmp/never.xml" -q $form | sed 's/never\.xml/X/' >"$tmp/b" || fail=1
    grep -q "throttling on a degraded" "$tmp/b" && { echo "FAIL: combined states asked"; fail=1; }
done
/usr/bin/python3 - "$tmp/a" "$tmp/b" <<'PY' || fail=1
import json, sys
a, b = (json.load(open(p))["summary"] for p in sys.argv[1:3])
assert a["throttle_hot_hours"] > 0 and a["throttle_slowdown_s"] > 0, a
for k in ("time_to_train_s", "throttle_slowdown_s", "throttle_hot_s", "compute_time_s"):
    assert a[k] == b[k], (k, a[k], b[k])
PY
[ "$fail" -eq 0 ] && echo "ok: throttling on a degraded fabric"
