#!/bin/sh
# straggler_combined.sh DCSIM SRC - a slow node in a hot hour and on a degraded
# fabric (docs/failures.md "A slow node in a hot hour or on a degraded fabric")
# on tests/scenarios/straggler-combined.xml (flapping leaf uplinks, the first
# server's 8 GPUs at 80 % in hot hours, nodes turning slow at 90 %, never
# drained; the campaign's slow node is node 2, GPUs 16-23).
# With no hour hot (nodes at 90 %) and with every hour hot (nodes at 90 %,
# which the server at 80 % hides, and at 70 %), each regime (a flap down or not,
# a node slow or not) runs at the step tier's one iteration with everything
# applied: t = dcsim step --fail node=2:0.9 [--fail link=ID] [--fail
# node=0:0.8], never faster than either part alone; the speed's factors
# (fabric, throttle, straggler, each at most 1) split the compute wall time E
# of the regime into the degraded, throttle and straggler stretches, checked
# against the summary to 1e-9. A cache of one entry gives the JSON of the
# default cache byte for byte; 1 and 2 threads agree; without <stragglers> the
# run is throttle-flapping.xml's, byte for byte.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d /tmp/dcsim-straggler-combined-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
s=$src/tests/scenarios/straggler-combined.xml
for run in 100C:90 -50C:90 -50C:70; do
    above=${run%:*} speed=${run#*:}
    "$dcsim" run "$s" -q --json --set reliability/throttle/@above=$above \
        --set reliability/stragglers/@speed=$speed% -o "$tmp/$run.h5" >"$tmp/$run.json" ||
        { echo "FAIL: run $run"; fail=1; }
done
"$dcsim" run "$s" -q --set reliability/throttle/@above=-50C >"$tmp/h.txt" || fail=1
grep -q "a slow node on a degraded fabric: [1-9][0-9]* lookups, [1-9]" "$tmp/h.txt" ||
    { echo "FAIL: no slow-node line"; fail=1; }
/usr/bin/python3 - "$dcsim" "$s" "$tmp" <<'PY' || fail=1
import json, subprocess, sys
import h5py
dcsim, scenario, tmp = sys.argv[1:4]
def step(*fails):
    cmd = [dcsim, "step", scenario, "-q", "--json"]
    for f in fails:
        cmd += ["--fail", f]
    d = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return d["failure_state"]["iteration_as_built_s"], d["iteration_s"]
HOT = "node=0:0.8"
tb, th = step(HOT)
for hot, run in ((0, "100C:90"), (1, "-50C:90"), (1, "-50C:70")):
    SLOW = "node=2:0.%s" % run[-2]
    _, tn = step(SLOW)
    _, ths = step(HOT, SLOW)
    assert ths >= th and ths >= tn, (ths, th, tn)  # never faster than either alone
    s = json.load(open("%s/%s.json" % (tmp, run)))["summary"]
    f = h5py.File("%s/%s.h5" % (tmp, run), "r")
    assert s["flaps"] > 3 and s["flap_interruptions"] == 0 and s["restarts"] == 0, s
    assert s["stragglers"] > 0 and s["drains"] == 0 and s["failures"] == 0, s
    assert s["throttle_hot_s"] == (s["time_to_train_s"] if hot else 0), s
    assert abs(s["straggler_speed_frac"] - tb / tn) <= 1e-15, (s["straggler_speed_frac"], tb / tn)
    ev = f["/campaign/events"][:]
    t_slow = float(ev[ev["kind"] == 5]["time_s"].min())  # the first node turning slow
    rows = f["/campaign/parts"][:]
    down = rows[rows["action"] == 3]
    assert len(down) == s["flaps"] and (down["parts_out"] == 1).all(), len(down)
    links = sorted(set(int(x) for x in down["fabric_id"]))
    it = {}
    for link in links:
        L = "link=%d" % link
        row = {"l": step(L)[1], "ln": step(L, SLOW)[1]}
        if hot:
            row["lh"] = step(L, HOT)[1]
            row["lhs"] = step(L, HOT, SLOW)[1]
        assert row["ln"] >= row["l"] and row["ln"] >= tn, (link, row, tn)
        if hot:
            assert row["lhs"] >= row["lh"] and row["lhs"] >= ths, (link, row, ths)
        it[link] = row
    spells = f["/campaign/timeline"][:]
    spells = spells[spells["state"] == 0]
    def overlap(a, b):
        return sum(max(0.0, min(b, e) - max(a, st)) for st, e in zip(spells["start_s"], spells["end_s"]))
    # the compute wall time in each regime: (link or None, slow)
    E = {}
    for r in down:
        a, b = float(r["time_s"]), float(r["time_s"]) + 30
        key = int(r["fabric_id"])
        E[(key, 0)] = E.get((key, 0), 0.0) + overlap(a, min(b, t_slow))
        E[(key, 1)] = E.get((key, 1), 0.0) + overlap(max(a, t_slow), b)
    total = overlap(0, s["time_to_train_s"])
    before = overlap(0, t_slow)
    flap_before = sum(v for (k, sl), v in E.items() if not sl)
    flap_after = sum(v for (k, sl), v in E.items() if sl)
    E[(None, 0)] = before - flap_before
    E[(None, 1)] = total - before - flap_after
    vh = tb / th if hot else 1.0
    deg = thr = stra = work = 0.0
    for (link, slow), e in E.items():
        if link is None:
            vf, vth = 1.0, vh
            vs = (min(1.0, (tb / ths) / vh) if hot else tb / tn) if slow else 1.0
        else:
            r = it[link]
            vf = tb / r["l"]
            vth = min(1.0, (tb / r["lh"]) / vf) if hot else 1.0
            vs = min(1.0, (tb / r["lhs" if hot else "ln"]) / (vf * vth)) if slow else 1.0
        w = e * vf * vs * vth
        work += w
        deg += w / vf - w
        thr += w / (vf * vth) - w / vf
        stra += e - w / (vf * vth)
    assert abs(work - s["compute_time_s"]) <= 1e-9 * work, (work, s["compute_time_s"])
    # deg and stra are sums of differences: exactly 0 in exact arithmetic where nothing
    # slowed, a rounding residue (1e-13 s) in floating point, so the bounds are absolute
    # below 1,000 s
    assert abs(s["degraded_slowdown_s"] - deg) <= 1e-9 * max(abs(deg), 1e3), (s["degraded_slowdown_s"], deg)
    assert abs(s["throttle_slowdown_s"] - thr) <= 1e-9 * max(thr, 1e3), (s["throttle_slowdown_s"], thr)
    assert abs(s["straggler_slowdown_s"] - stra) <= 1e-9 * max(abs(stra), 1e3), (s["straggler_slowdown_s"], stra)
    L = it[links[0]]
    print("%s, %s: slowed by stragglers %.6g s, degraded %.6g s, throttled %.6g s; the node "
          "slow costs %.4f %% alone, %.4f %% with a flap down%s"
          % ("every hour hot" if hot else "no hour hot", SLOW, stra, deg, thr,
             100 * (tn / tb - 1), 100 * (L["ln"] / L["l"] - 1),
             ", %.4f %% in a hot hour, %.4f %% in a hot hour with a flap down"
             % (100 * (ths / th - 1), 100 * (L["lhs"] / L["lh"] - 1)) if hot else ""))
PY
hot="--set reliability/throttle/@above=-50C"
# cache hits = fresh simulations: one entry, every state evicting the last
"$dcsim" run "$s" -q --json $hot --set reliability/degraded/@cache=1 >"$tmp/c1.json" || fail=1
"$dcsim" run "$s" -q --json $hot >"$tmp/c16.json" || fail=1
cmp -s "$tmp/c16.json" "$tmp/c1.json" || { echo "FAIL: cache=1 differs"; fail=1; }
# 1 and 2 threads agree (hot and cool hours, flaps, slow nodes)
OMP_NUM_THREADS=1 "$dcsim" run "$s" -q --json --replicas 4 >"$tmp/one.json" || fail=1
OMP_NUM_THREADS=2 "$dcsim" run "$s" -q --json --replicas 4 >"$tmp/two.json" || fail=1
cmp -s "$tmp/one.json" "$tmp/two.json" || { echo "FAIL: 1 and 2 threads differ"; fail=1; }
# no <stragglers>: throttle-flapping.xml's run, byte for byte (its name apart)
sed -e '/<stragglers /d' -e 's/name="straggler-combined"/name="throttle-flapping"/' "$s" \
    >"$tmp/throttle-flapping.xml"
for form in "" --json; do
    (cd "$tmp" && "$dcsim" run throttle-flapping.xml -q $form $hot) >"$tmp/a" || fail=1
    (cd "$src/tests/scenarios" && "$dcsim" run throttle-flapping.xml -q $form $hot) >"$tmp/b" ||
        fail=1
    cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL: without stragglers ($form) differs"; fail=1; }
done
[ "$fail" -eq 0 ] && echo "ok: a slow node in a hot hour and on a degraded fabric"
