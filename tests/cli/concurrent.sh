#!/bin/sh
# concurrent.sh DCSIM SRC - `dcsim step --concurrent` on the shipped
# concurrency example (docs/step.md, "The concurrent iteration"): it names
# its model, changes the iteration against the isolated one, lists the links
# where PP and DP traffic overlapped (each with both > 0 and no more than
# either class alone), gives the same in JSON with the link utilisation per
# time bin (which the Perfetto trace's counters follow), is repeatable byte
# for byte, and refuses --analytic with it.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/concurrency-leafspine.xml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect "concurrent model named" 0 "^iteration *[0-9.]* s (concurrent flow network model)" \
    "$dcsim" step "$ex" --concurrent
expect "overlap table" 0 "^links where PP sends and DP traffic overlapped" \
    "$dcsim" step "$ex" --concurrent
expect "both refused" 2 "choose one network model" "$dcsim" step "$ex" --concurrent --analytic
"$dcsim" step "$ex" --concurrent --json >"$tmp/a.json" &&
    "$dcsim" step "$ex" --concurrent --json >"$tmp/b.json" &&
    "$dcsim" step "$ex" --json >"$tmp/iso.json" &&
    "$dcsim" step "$ex" --concurrent --perfetto "$tmp/trace.json" >/dev/null ||
    { echo "FAIL a step run failed"; fail=$((fail + 1)); }
cmp -s "$tmp/a.json" "$tmp/b.json" || { echo "FAIL two concurrent runs differ"; fail=$((fail + 1)); }
/usr/bin/python3 - "$tmp" <<'PY' || fail=$((fail + 1))
import json, sys
t = sys.argv[1]
a = json.load(open(f"{t}/a.json"))
iso = json.load(open(f"{t}/iso.json"))
assert "overlap_links" not in iso, "the isolated iteration has no overlap table"
assert a["iteration_s"] != iso["iteration_s"], "concurrency changed nothing"
links = a["overlap_links"]
assert 1 <= len(links) <= 8, len(links)
for l in links:
    assert 0 < l["both_s"] <= min(l["pp_s"], l["dp_s"]) + 1e-12, l
    assert 0 <= l["utilisation"] <= 1, l
u = a["utilisation_over_time"]
n = len(u["leaf-spine"]["peak"])
assert n * u["bin_s"] >= a["iteration_s"], (n, u["bin_s"])
assert max(u["leaf-spine"]["peak"]) > 0.5, "the DP reductions fill some uplink"
assert all(0 <= m <= p <= 1 + 1e-9 for m, p in zip(u["leaf-spine"]["mean"], u["leaf-spine"]["peak"]))
tr = json.load(open(f"{t}/trace.json"))
cs = [e for e in tr["traceEvents"] if e.get("ph") == "C" and e["name"].startswith("leaf-spine")]
assert len(cs) == n + 1, (len(cs), n)
assert [round(e["args"]["peak"], 6) for e in cs[:-1]] == [round(100 * x, 6) for x in u["leaf-spine"]["peak"]]
both = [l["both_s"] for l in links]
assert both == sorted(both, reverse=True), both
parts = sum(a["critical_stage_s"].values())
assert abs(parts - a["iteration_s"]) <= 1e-9 * a["iteration_s"], (parts, a["iteration_s"])
print(f"concurrent {a['iteration_s']:.6f} s vs isolated {iso['iteration_s']:.6f} s; "
      f"longest PP/DP overlap {both[0]:.4g} s on link {links[0]['link']}")
PY
[ "$fail" -eq 0 ] && echo "ok: concurrent"
exit "$fail"
