#!/bin/sh
# flap.sh DCSIM SRC - flapping cables in the campaign (docs/failures.md
# "Flapping links") on tests/scenarios/flapping-cable.xml: leaf uplinks that
# flap 3 times (down 30 s, up 5 min) per failure, repaired too late to cut
# an episode short. The closed form: flaps = 3 x episodes, the time down by
# flaps = flaps x 30 s, no interruption (an uplink down cuts no GPU off),
# every flap down's job speed = the iteration as built / dcsim step --fail
# link=ID's (the trace's rows against the step, to 1e-12), and the stretch
# = flaps x 30 s x (1 - that speed) (every down during compute: no
# restart). flaps="0" is the scenario without flapping, byte for byte (text
# and JSON); 1 and 2 threads agree; flapping host cables interrupt at every
# flap of a GPU's cable (each cuts the GPU off) and each restart waits out
# the 30 s down.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d /tmp/dcsim-flap-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
s=$src/tests/scenarios/flapping-cable.xml
"$dcsim" run "$s" -q --json -o "$tmp/f.h5" >"$tmp/f.json" || { echo "FAIL: run"; fail=1; }
/usr/bin/python3 - "$dcsim" "$s" "$tmp/f.json" "$tmp/f.h5" <<'PY' || fail=1
import json, subprocess, sys
import h5py
dcsim, scenario, js, h5 = sys.argv[1:5]
s = json.load(open(js))["summary"]
assert s["flap_episodes"] > 3, s
assert s["flaps"] == 3 * s["flap_episodes"], s
assert s["flap_down_s"] == s["flaps"] * 30 or abs(s["flap_down_s"] / (s["flaps"] * 30) - 1) < 1e-12, s
assert s["flap_interruptions"] == 0 and s["restarts"] == 0, s
rows = h5py.File(h5, "r")["/campaign/parts"][:]
down = rows[rows["action"] == 3]
up = rows[rows["action"] == 4]
assert len(down) == s["flaps"] and len(up) == s["flaps"], (len(down), len(up))
assert (up["speed"] == 1).all() and (down["speed"] == 0).all()
speeds = {}
for link in sorted(set(int(x) for x in down["fabric_id"])):
    out = subprocess.run([dcsim, "step", scenario, "-q", "--json", "--fail", "link=%d" % link],
                         check=True, capture_output=True, text=True).stdout
    d = json.loads(out)  # the profile is the failed one; failure_state has the built one
    speeds[link] = d["failure_state"]["iteration_as_built_s"] / d["iteration_s"]
    assert speeds[link] < 1, speeds
lone = down[down["parts_out"] == 1]
assert len(lone) > 0
for r in lone:
    v = speeds[int(r["fabric_id"])]
    assert abs(r["job_speed"] - v) <= 1e-12 * v, (r, v)
v = speeds[int(lone[0]["fabric_id"])]
assert len(set(speeds.values())) == 1, speeds  # every leaf uplink alike
want = s["flaps"] * 30 * (1 - v)
assert abs(s["degraded_slowdown_s"] - want) <= 1e-9 * want, (s["degraded_slowdown_s"], want)
PY
# flaps="0": no flapping, byte for byte (the scenario's name is in the output)
sed -e 's/ flaps="3" flap-down="30s" flap-up="5min"//' "$s" >"$tmp/none.xml"
grep -q 'repair="100000h"/>' "$tmp/none.xml" || { echo "FAIL: no-flap scenario"; fail=1; }
cp "$s" "$tmp/zero.xml"
for form in "--json" ""; do
    "$dcsim" run "$tmp/none.xml" -q $form | sed 's/none\.xml/X/' >"$tmp/a"
    "$dcsim" run "$tmp/zero.xml" -q $form --set reliability/failure/@flaps=0 | sed 's/zero\.xml/X/' >"$tmp/b"
    cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL: flaps=0 $form differs"; diff "$tmp/a" "$tmp/b" | head; fail=1; }
done
grep -q "parts_down" "$tmp/a" || true
OMP_NUM_THREADS=1 "$dcsim" run "$s" -q --json --replicas 4 >"$tmp/r1"
OMP_NUM_THREADS=2 "$dcsim" run "$s" -q --json --replicas 4 >"$tmp/r2"
cmp -s "$tmp/r1" "$tmp/r2" || { echo "FAIL: 1 and 2 threads differ"; fail=1; }
grep -q '"flaps":' "$tmp/r1" || { echo "FAIL: no flaps in the replicas' JSON"; fail=1; }
# the replicas' flap rows: every flap down 30 s, so the mean time down by
# flaps is 30 s x the mean flap count, and the sd and CI scale alike (no
# replica ends inside a flap here); the text table has both rows
/usr/bin/python3 - "$tmp/r1" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))["replicas"]
assert r["flaps"]["mean"] > 0, r["flaps"]
for k in ("mean", "sd", "ci95"):
    assert abs(r["flap_down_s"][k] - 30 * r["flaps"][k]) <= 1e-9 * r["flap_down_s"][k], (k, r)
PY
"$dcsim" run "$s" -q --replicas 4 >"$tmp/r1.txt"
for row in "  flaps " "  down by flaps "; do
    grep -q "^$row" "$tmp/r1.txt" || { echo "FAIL: no '$row' row in the replicas' table"; fail=1; }
done
# host cables flap: each down cuts its GPU off, interrupts, and the restart waits
"$dcsim" run "$s" -q --json --set reliability/failure/@tier=0 --set reliability/failure/@mtbf=500h \
    >"$tmp/h.json" || { echo "FAIL: host cables"; fail=1; }
python3 - "$tmp/h.json" <<'PY' || fail=1
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
# hosts 32-47 are spare ports (32 GPUs on 48): their cables cut no GPU off
assert 0 < s["flap_interruptions"] <= s["flaps"], s
assert s["flap_interruptions"] % 3 == 0, s  # all three downs of an episode, or none
# each interruption comes at a flap down and its restart waits out the 30 s
assert abs(s["fabric_wait_s"] - 30 * s["flap_interruptions"]) < 1e-6, s
assert s["fabric_unrunnable"] >= s["flap_interruptions"], s
PY
# flap-law="fixed" is the default, byte for byte (text and JSON)
for form in "--json" ""; do
    "$dcsim" run "$s" -q $form >"$tmp/a"
    "$dcsim" run "$s" -q $form --set reliability/failure/@flap-law=fixed >"$tmp/b"
    cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL: flap-law=fixed $form differs"; fail=1; }
done
# flap-law="exponential": each down and up drawn with the means 30 s and
# 5 min; over many flaps (uplinks failing every 2 h each) the sample means
# lie within 4 standard errors (sd = mean for the exponential) of them, the
# durations spread as an exponential's (coefficient of variation 1 +- 0.15),
# every down's trace time equals the summary's total, and 1 and 2 threads agree
exp="--set reliability/failure/@flap-law=exponential --set reliability/failure/@mtbf=2h"
"$dcsim" run "$s" -q --json -o "$tmp/e.h5" $exp >"$tmp/e.json" || { echo "FAIL: exponential"; fail=1; }
/usr/bin/python3 - "$tmp/e.json" "$tmp/e.h5" <<'PY' || fail=1
import json, math, sys
import h5py
s = json.load(open(sys.argv[1]))["summary"]
rows = h5py.File(sys.argv[2], "r")["/campaign/parts"][:]
rows = rows[(rows["action"] == 3) | (rows["action"] == 4)]
downs, ups, last, count = [], [], {}, {}
for r in rows:  # episodes of exactly 3 flaps (no repair cuts one short)
    key, act, t = (int(r["cause"]), int(r["part"])), int(r["action"]), float(r["time_s"])
    if act == 4 and key in last:
        downs.append(t - last[key][1])
    elif act == 3 and key in last and count[key] % 3:  # an up inside an episode
        ups.append(t - last[key][1])
    count[key] = count.get(key, 0) + (act == 3)
    last[key] = (act, t)
n = len(downs)
assert n > 1000 and len(ups) > 500, (n, len(ups))
assert abs(sum(downs) - s["flap_down_s"]) <= 1e-6 * s["flap_down_s"], (sum(downs), s["flap_down_s"])
for xs, mean in ((downs, 30.0), (ups, 300.0)):
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    assert abs(m - mean) <= 4 * mean / math.sqrt(len(xs)), (m, mean, len(xs))
    assert 0.85 < sd / m < 1.15, (sd / m, mean)
PY
OMP_NUM_THREADS=1 "$dcsim" run "$s" -q --json --replicas 4 $exp >"$tmp/r1"
OMP_NUM_THREADS=2 "$dcsim" run "$s" -q --json --replicas 4 $exp >"$tmp/r2"
cmp -s "$tmp/r1" "$tmp/r2" || { echo "FAIL: exponential flaps, 1 and 2 threads differ"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: flapping cables"
exit "$fail"
