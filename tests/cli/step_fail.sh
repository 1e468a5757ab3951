#!/bin/sh
# step_fail.sh DCSIM SRC - `dcsim step --fail` (docs/failures.md) on the
# shipped 3:1 leaf-spine: the iteration as built in the comparison is the
# plain step's to the last printed digit; a part failed then repaired is
# the empty state (digest and iteration unchanged, no link changed); the
# digest does not depend on the order of the parts; a spine down under
# adaptive routing never speeds the iteration up, takes its 2 x 43 cables'
# directions down and empties them, in text and JSON; a slow link counts as
# slow, not down; gpu=ID:SPEED names the straggler.
# <step><fail> in the scenario prints exactly what the same --fail words do
# (text and JSON, byte for byte), and --fail adds to it. --fail-classes: one
# row per class the fabric has (names unique), finite values where the job
# runs, the leaf and host cable refused as cutting GPUs off; a spine or
# leaf uplink down never speeds the iteration up under adaptive routing and
# spraying (symmetric traffic); on a small Dragonfly the classes are router,
# global and local link, and a global link down is routed around by UGAL
# and Valiant (the detour avoids group pairs left without a link) and
# refused by minimal routing (its one global hop is gone).
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/concurrency-leafspine.xml
spine=2107 # leaves are nodes 2064-2106, spines 2107-2122 (dcsim topo: 43 + 16 switches)
plain=$("$dcsim" step "$ex" -q | sed -n 's/^iteration *\([0-9.]*\) s.*/\1/p')
built=$("$dcsim" step "$ex" -q --fail switch=$spine | sed -n 's/^ *iteration \([0-9.]*\) s as built.*/\1/p')
[ -n "$plain" ] && [ "$plain" = "$built" ] || {
    echo "FAIL: as built in the comparison ($built) is not the plain step's ($plain)"; fail=1; }
expect "repaired: no part" 0 "^failed parts    none (digest" \
    "$dcsim" step "$ex" -q --fail switch=$spine --fail switch=$spine:1
expect "repaired: no change" 0 "iteration $plain s as built -> $plain s (+0.000 %)" \
    "$dcsim" step "$ex" -q --fail link=4128 --fail link=4128:1
expect "repaired: no link changed" 0 "no link's bytes per iteration changed" \
    "$dcsim" step "$ex" -q --fail link=4128 --fail link=4128:1
d1=$("$dcsim" step "$ex" -q --fail link=4128:0.5 --fail switch=$spine | grep "^failed parts")
d2=$("$dcsim" step "$ex" -q --fail switch=$spine --fail link=4128:0.5 | grep "^failed parts")
[ -n "$d1" ] && [ "$d1" = "$d2" ] || { echo "FAIL: order changed the state: $d1 / $d2"; fail=1; }
out=$("$dcsim" step "$ex" -q --set cluster/fabric/@routing=adaptive --fail switch=$spine --json)
printf '%s\n' "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)
f = o["failure_state"]
assert f["parts"] == [{"class": "switch", "id": 2107, "speed": 0}], f["parts"]
assert f["links_down"] == 86 and f["links_slow"] == 0, f
assert o["iteration_s"] >= f["iteration_as_built_s"], (o["iteration_s"], f)
assert len(f["link_changes"]) == 8 and len(f["digest"]) == 16
for c in f["link_changes"]:
    if c["speed"] == 0:
        assert c["bytes_failed"] == 0 and (c["from"] == 2107 or c["to"] == 2107), c
' || { echo "FAIL: --json failure_state"; fail=1; }
expect "slow link" 0 "0 directed links down, 2 slow" "$dcsim" step "$ex" -q --fail link=4128:0.5
expect "gpu speed is the straggler" 0 "^stragglers      slowest GPU 5 at 90.0 % speed" \
    "$dcsim" step "$ex" -q --fail gpu=5:0.9
expect "concurrent" 0 "^failed parts    switch=2107" "$dcsim" step "$ex" -q --concurrent \
    --fail switch=$spine
expect "analytic" 0 "^failed parts    switch=2107" "$dcsim" step "$ex" -q --analytic \
    --fail switch=$spine

# <step><fail> = --fail, byte for byte; --fail adds to the scenario's parts
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's#^    <training tokens="1T" precision="bf16"/>#&<step><fail part="switch" id="2107"/><fail part="link" id="4128" speed="50%"/></step>#' \
    "$ex" >"$tmp/el.xml"
grep -q '<fail part="switch"' "$tmp/el.xml" || { echo "FAIL: no <fail> inserted"; fail=1; }
for opt in "" --json --concurrent; do
    # shellcheck disable=SC2086 # opt is one word or none
    a=$("$dcsim" step "$tmp/el.xml" -q $opt) && \
        b=$("$dcsim" step "$ex" -q $opt --fail switch=$spine --fail link=4128:0.5) &&
        [ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: <step><fail> is not --fail ($opt)"; fail=1; }
done
a=$("$dcsim" step "$tmp/el.xml" -q --fail gpu=3:0.9 | grep "^failed parts")
b=$("$dcsim" step "$ex" -q --fail switch=$spine --fail link=4128:0.5 --fail gpu=3:0.9 | grep "^failed parts")
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: --fail does not add to <step><fail>: $a / $b"; fail=1; }
expect "--fail repairs a scenario part" 0 "^failed parts    link=4128:0.5 (digest" \
    "$dcsim" step "$tmp/el.xml" -q --fail switch=$spine:1

# --fail-classes: the classes table
check_classes() { # label python-assertions args...
    label=$1
    asserts=$2
    shift 2
    "$dcsim" step "$@" -q --fail-classes --json >"$tmp/c.json" &&
        python3 -c '
import json, math, sys
o = json.load(open(sys.argv[1]))
rows = {r["class"]: r for r in o["classes"]}
assert len(rows) == len(o["classes"]), "a class twice"
assert math.isfinite(o["iteration_as_built_s"]) and o["iteration_as_built_s"] > 0
for r in o["classes"]:
    if r["runnable"]:
        assert math.isfinite(r["iteration_s"]) and r["iteration_s"] > 0, r
        assert math.isfinite(r["change_pct"]), r
        u = r["busiest_failed"]["utilisation"]
        assert math.isfinite(u) and u >= 0, r
    else:
        assert r["refusal"], r
'"$asserts" "$tmp/c.json" || { echo "FAIL: --fail-classes $label"; fail=1; }
}
check_classes "leaf-spine" '
assert sorted(rows) == ["GPU port, slow", "GPU, slow", "host link", "leaf switch",
                        "leaf uplink", "spine switch"], sorted(rows)
assert rows["spine switch"]["id"] == 2107 and rows["leaf uplink"]["id"] == 4128
assert "cuts GPUs 0-47 off" in rows["leaf switch"]["refusal"]
assert "cuts GPU 0 off" in rows["host link"]["refusal"]
assert rows["GPU, slow"]["speed"] == 0.5 and rows["GPU, slow"]["change_pct"] > 0
' "$ex"
for r in adaptive spray; do
    check_classes "never faster ($r)" '
assert rows["spine switch"]["change_pct"] >= 0 and rows["leaf uplink"]["change_pct"] >= 0, rows
' "$ex" --set cluster/fabric/@routing=$r
done
check_classes "--fail-slow" '
assert rows["GPU, slow"]["speed"] == 0.25 and rows["GPU port, slow"]["speed"] == 0.25
assert o["slow_speed_from"] == "--fail-slow"
' "$ex" --fail-slow 25%
t=$("$dcsim" step "$ex" -q --fail-classes)
[ "$(printf '%s\n' "$t" | grep -c '^  [a-zA-Z]')" -ge 6 ] &&
    printf '%s\n' "$t" | grep -q "^  spine switch   switch=2107 " ||
    { echo "FAIL: --fail-classes text table"; fail=1; }

# a small Dragonfly: router, global link, local link
df=$src/tests/scenarios/dragonfly-small.xml
for p in ugal valiant; do
    check_classes "Dragonfly $p" '
assert sorted(rows) == ["GPU port, slow", "GPU, slow", "global link", "host link",
                        "local link", "router"], sorted(rows)
assert rows["global link"]["runnable"] and rows["local link"]["runnable"], rows
assert "cuts GPUs 0-3 off" in rows["router"]["refusal"]
' "$df" --set cluster/fabric/@paths=$p
done
check_classes "Dragonfly minimal" '
assert not rows["global link"]["runnable"] and "no route" in rows["global link"]["refusal"]
assert rows["local link"]["runnable"]
' "$df" --set cluster/fabric/@paths=minimal
exit $fail
