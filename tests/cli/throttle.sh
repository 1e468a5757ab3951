#!/bin/sh
# throttle.sh DCSIM SRC - thermal throttling by the site's hourly temperature
# (docs/failures.md "Thermal throttling") on tests/scenarios/throttle-small.xml
# (32 H100 at Guangzhou from June, the first server's 8 GPUs at 80 % in the
# hours above 30 C). A threshold above the year's hottest hour is the run
# without <throttle>, bit for bit (the JSON but the throttle rows, the event
# digest); one below the coldest hour is the whole run at the step tier's
# iteration with those GPUs slow (dcsim step --fail node=0:0.8): the stretch
# = productive compute x (t_slow / t_built - 1), to 1e-9, and the time to
# train = the unthrottled one + it; a lower threshold never shortens the run;
# 1 and 2 threads agree (replicas with failures); a cool hub (Gui'an) has
# fewer hot hours than Guangzhou at the same threshold; the <throttle> for the
# site's cooling is the one used; the refusals.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d /tmp/dcsim-throttle-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
s=$src/tests/scenarios/throttle-small.xml
sed -e '/<throttle /d' "$s" >"$tmp/none.xml"
grep -q '<throttle' "$tmp/none.xml" && { echo "FAIL: no-throttle scenario"; fail=1; }
"$dcsim" run "$tmp/none.xml" -q --json >"$tmp/none.json" || { echo "FAIL: run none"; fail=1; }
for above in 100C 45C 35C 30C 25C 20C 10C -50C; do
    "$dcsim" run "$s" -q --json --set "reliability/throttle/@above=$above" >"$tmp/t$above.json" ||
        { echo "FAIL: run above=$above"; fail=1; }
done
"$dcsim" step "$s" -q --json --fail node=0:0.8 >"$tmp/step.json" || { echo "FAIL: step"; fail=1; }
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
def load(name):
    return json.load(open("%s/%s.json" % (tmp, name)))
none = load("none")
hot = ["100C", "45C", "35C", "30C", "25C", "20C", "10C", "-50C"]
runs = {a: load("t" + a) for a in hot}
# above the hottest hour: today's run, every figure and the event digest
cold = runs["100C"]
assert cold["summary"]["throttle_hot_hours"] == 0 and cold["summary"]["throttle_slowdown_s"] == 0
strip = lambda d: {k: v for k, v in d.items() if not k.startswith("throttle_")}
assert strip(cold["summary"]) == none["summary"], "above every hour differs from no throttle"
assert cold["event_digest"] == none["event_digest"]
# below the coldest hour: the whole run at the step tier's slowed iteration
step = json.load(open(tmp + "/step.json"))
t_slow, t_built = step["iteration_s"], step["failure_state"]["iteration_as_built_s"]
assert t_slow > t_built, (t_slow, t_built)
allhot = runs["-50C"]["summary"]
assert allhot["throttle_hot_hours"] == 8760 and allhot["throttle_changes"] == 0
assert allhot["throttle_hot_s"] == allhot["time_to_train_s"]
assert abs(allhot["throttle_speed_frac"] - t_built / t_slow) <= 1e-12
want = allhot["compute_time_s"] * (t_slow / t_built - 1)
assert abs(allhot["throttle_slowdown_s"] - want) <= 1e-9 * want, (allhot["throttle_slowdown_s"], want)
ttt = none["summary"]["time_to_train_s"] + want
assert abs(allhot["time_to_train_s"] - ttt) <= 1e-9 * ttt, (allhot["time_to_train_s"], ttt)
# monotone: a lower threshold never shortens the run, never fewer hot hours
prev = None
for a in hot:
    x = runs[a]["summary"]
    if prev is not None:
        assert x["time_to_train_s"] >= prev["time_to_train_s"], (a, x["time_to_train_s"])
        assert x["throttle_hot_hours"] >= prev["throttle_hot_hours"], a
        assert x["throttle_slowdown_s"] >= prev["throttle_slowdown_s"], a
    prev = x
mid = runs["30C"]["summary"]  # the scenario's: some hours hot, some not
assert 0 < mid["throttle_hot_hours"] < 8760 and mid["throttle_changes"] > 0, mid
assert 0 < mid["throttle_slowdown_s"] < allhot["throttle_slowdown_s"], mid
# conservation: no failure, so the stretch is the whole difference
d = mid["time_to_train_s"] - none["summary"]["time_to_train_s"]
assert abs(d - mid["throttle_slowdown_s"]) <= 1e-9 * d, (d, mid["throttle_slowdown_s"])
PY
# 1 and 2 threads agree, with failures interrupting hot and cool spells
sed -e 's|<throttle |<failure component="gpu" distribution="exponential" rate="2e-3/h"/><restart time="10min"/><throttle |' \
    "$s" >"$tmp/fail.xml"
OMP_NUM_THREADS=1 "$dcsim" run "$tmp/fail.xml" -q --json --replicas 6 >"$tmp/one.json" || fail=1
OMP_NUM_THREADS=2 "$dcsim" run "$tmp/fail.xml" -q --json --replicas 6 >"$tmp/two.json" || fail=1
cmp -s "$tmp/one.json" "$tmp/two.json" || { echo "FAIL: 1 and 2 threads differ"; fail=1; }
/usr/bin/python3 - "$tmp/one.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
s, r = d["summary"], d["replicas"]
assert s["failures"] > 0 and s["throttle_slowdown_s"] > 0, s
assert r["throttle_slowdown_s"]["mean"] > 0, r
PY
# a cool hub: fewer hot hours than Guangzhou at the same threshold
for site in guangzhou guian; do
    "$dcsim" run "$s" -q --json --set "site/@name=$site" >"$tmp/$site.json" || fail=1
done
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
g = json.load(open(sys.argv[1] + "/guangzhou.json"))["summary"]
k = json.load(open(sys.argv[1] + "/guian.json"))["summary"]
assert k["throttle_hot_hours"] < g["throttle_hot_hours"], (k["throttle_hot_hours"], g["throttle_hot_hours"])
assert k["time_to_train_s"] < g["time_to_train_s"]
PY
# one <throttle> per cooling design: the site's is the one used
sed -e 's|<throttle above="30C"|<throttle cooling="direct-liquid" above="-50C" speed="80%" gpus="8"/><throttle cooling="air-economiser" above="30C"|' \
    "$s" >"$tmp/designs.xml"
"$dcsim" run "$tmp/designs.xml" -q --json >"$tmp/d1.json" || fail=1
"$dcsim" run "$s" -q --json >"$tmp/d0.json" || fail=1
"$dcsim" run "$tmp/designs.xml" -q --json --set site/@cooling=direct-liquid >"$tmp/d2.json" || fail=1
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
d0, d1, d2 = (json.load(open("%s/d%d.json" % (sys.argv[1], i))) for i in range(3))
assert d0["summary"] == d1["summary"] and d0["event_digest"] == d1["event_digest"]
assert d2["summary"]["throttle_hot_hours"] == 8760
PY
# refusals
sed -e '/<site /d' "$s" >"$tmp/nosite.xml"
bad "without a site" "thermal throttling needs a <site>" "$dcsim" validate "$tmp/nosite.xml"
sed -e 's|precision="bf16"|precision="bf16" mfu="40%"|' "$s" >"$tmp/mfu.xml"
bad "with mfu" "needs the step tier" "$dcsim" validate "$tmp/mfu.xml"
bad "above without unit" 'expected a temperature' "$dcsim" validate "$s" --set reliability/throttle/@above=30
bad "speed 100%" 'a throttled GPU runs at above 0% and below 100%' "$dcsim" validate "$s" --set reliability/throttle/@speed=100%
bad "gpus 0" 'expected "all" or a whole number' "$dcsim" validate "$s" --set reliability/throttle/@gpus=0
bad "gpus beyond" 'expected "all" or a whole number' "$dcsim" validate "$s" --set reliability/throttle/@gpus=33
bad "other design only" 'no <throttle> for the site' "$dcsim" validate "$s" --set reliability/throttle/@cooling=direct-liquid
sed -e 's|<throttle above="30C"|<throttle above="20C" speed="80%" gpus="8"/><throttle above="30C"|' "$s" >"$tmp/twice.xml"
bad "twice" 'a second <throttle>' "$dcsim" validate "$tmp/twice.xml"
exit $fail
