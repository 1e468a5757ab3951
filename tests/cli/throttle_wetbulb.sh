#!/bin/sh
# throttle_wetbulb.sh DCSIM SRC - thermal throttling on the wet-bulb
# temperature (docs/failures.md "Thermal throttling", "The wet bulb") on
# tests/scenarios/throttle-small.xml moved to Gui'an (sites.xml has its
# humidity). The evaporative design throttles on the wet bulb by default (a
# default used, printed), exactly as with temperature="wet-bulb"; with
# temperature="dry-bulb" it has the air-economiser's hot hours. The wet bulb
# never exceeds the dry bulb, so at every threshold the wet-bulb hours are no
# more than the dry-bulb ones (fewer where any hour is hot), and fall as the
# threshold rises; below every hour the stretch is the dry bulb's (the whole
# run slowed); above every hour the run is the one without <throttle>.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d /tmp/dcsim-throttle-wetbulb-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
s=$src/tests/scenarios/throttle-small.xml
g="--set site/@name=guian"
evap="--set site/@cooling=evaporative"
for above in -50C 10C 15C 20C 22C 25C 100C; do
    a="--set reliability/throttle/@above=$above"
    "$dcsim" run "$s" -q --json $g $a >"$tmp/dry$above.json" || { echo "FAIL: dry $above"; fail=1; }
    "$dcsim" run "$s" -q --json $g $evap $a >"$tmp/wet$above.json" ||
        { echo "FAIL: wet $above"; fail=1; }
    "$dcsim" run "$s" -q --json $g $evap $a --set reliability/throttle/@temperature=wet-bulb \
        >"$tmp/wetx$above.json" || { echo "FAIL: wet explicit $above"; fail=1; }
    "$dcsim" run "$s" -q --json $g $evap $a --set reliability/throttle/@temperature=dry-bulb \
        >"$tmp/evdry$above.json" || { echo "FAIL: evaporative dry $above"; fail=1; }
done
sed -e '/<throttle /d' "$s" >"$tmp/none.xml"
"$dcsim" run "$tmp/none.xml" -q --json $g $evap >"$tmp/none.json" || fail=1
expect "the default is printed" 0 "throttle temperature = wet-bulb" "$dcsim" run "$s" -q $g $evap
out=$("$dcsim" run "$s" -q $g $evap --set reliability/throttle/@temperature=wet-bulb 2>&1)
printf '%s\n' "$out" | grep -q "throttle temperature" && { echo "FAIL: default printed"; fail=1; }
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
def load(name):
    return json.load(open("%s/%s.json" % (tmp, name)))
ths = ["-50C", "10C", "15C", "20C", "22C", "25C", "100C"]
dry = {a: load("dry" + a)["summary"] for a in ths}
wet = {a: load("wet" + a)["summary"] for a in ths}
last = 8761
for a in ths:
    w, d = wet[a], dry[a]
    x, e = load("wetx" + a), load("evdry" + a)["summary"]
    assert x["summary"] == w, a  # the default is temperature="wet-bulb"
    assert e["throttle_hot_hours"] == d["throttle_hot_hours"], a  # dry-bulb: the economiser's hours
    assert e["throttle_hot_s"] == d["throttle_hot_s"], a
    assert w["throttle_hot_hours"] <= d["throttle_hot_hours"], (a, w, d)
    if 0 < d["throttle_hot_hours"] < 8760:
        assert w["throttle_hot_hours"] < d["throttle_hot_hours"], (a, w["throttle_hot_hours"])
    assert w["throttle_hot_hours"] <= last, a
    last = w["throttle_hot_hours"]
    print("%5s: hot hours a year, dry bulb %4d, wet bulb %4d" % (a, d["throttle_hot_hours"],
                                                                 w["throttle_hot_hours"]))
assert wet["-50C"]["throttle_hot_hours"] == 8760 and dry["-50C"]["throttle_hot_hours"] == 8760
assert wet["-50C"]["throttle_slowdown_s"] == dry["-50C"]["throttle_slowdown_s"] > 0
assert 0 < wet["20C"]["throttle_hot_hours"] < 8760, wet["20C"]
none = load("none")
w = load("wet100C")
assert w["summary"]["throttle_hot_hours"] == 0
strip = lambda d: {k: v for k, v in d.items() if not k.startswith("throttle_")}
assert strip(w["summary"]) == none["summary"] and w["event_digest"] == none["event_digest"]
PY
[ "$fail" -eq 0 ] && echo "ok: throttling on the wet bulb"
