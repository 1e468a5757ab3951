#!/bin/sh
# serve_compare_swap.sh DCSIM SRC - the swap-preemption columns of `dcsim
# compare` and `dcsim sweep` over serving scenarios (docs/serving.md
# "Comparing and sweeping"), on tests/scenarios/serving-swap.xml at two
# rates under recompute and swap:
#   - every row of --json, --csv and -o's /compare equals `dcsim serve
#     --json --set ...` of that variant, every column (the swap ones from
#     its "swap" object, 0 under recompute, which has none), bit for bit
#     (the table to the JSON's printing);
#   - the units: swap_*_bytes in B, swap_time_s in s, the counts in 1;
#   - a sweep's /serve_sweep and --json rows, the same for
#     OMP_NUM_THREADS=1 and 2; the text has the swap block only when a
#     variant swaps.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
scn=$src/tests/scenarios/serving-swap.xml
tmp=$(mktemp -d /tmp/dcsim-serve-compare-swap-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
short="serving/arrivals/@duration=30s"
vary="--vary serving/kv/@preemption=recompute,swap --vary serving/arrivals/@rate=3/s,5/s"
# shellcheck disable=SC2086 # vary is two options
"$dcsim" compare "$scn" --json --set "$short" $vary -o "$tmp/c.h5" >"$tmp/c.json" &&
"$dcsim" compare "$scn" --csv --set "$short" $vary >"$tmp/c.csv" &&
"$dcsim" compare "$scn" --set "$short" $vary >"$tmp/c.txt" &&
"$dcsim" compare "$scn" --set "$short" --set serving/kv/@preemption=recompute \
    --vary serving/arrivals/@rate=3/s,5/s >"$tmp/rc.txt" ||
    { echo "FAIL: compare"; fail=1; }
for p in recompute swap; do
    for r in 3 5; do
        "$dcsim" serve --quiet --json "$scn" --set "$short" --set serving/kv/@preemption=$p \
            --set serving/arrivals/@rate=$r/s >"$tmp/serve_${p}_$r.json" || fail=1
    done
done
grid="--grid serving/kv/@preemption=recompute,swap --grid serving/arrivals/@rate=3/s,5/s"
# shellcheck disable=SC2086 # grid is two options
OMP_NUM_THREADS=1 "$dcsim" sweep --quiet --json "$scn" --set "$short" $grid -o "$tmp/s1.h5" \
    >"$tmp/s1.json" &&
OMP_NUM_THREADS=2 "$dcsim" sweep --quiet --json "$scn" --set "$short" $grid -o "$tmp/s2.h5" \
    >"$tmp/s2.json" || { echo "FAIL: sweep"; fail=1; }
cmp -s "$tmp/s1.json" "$tmp/s2.json" || { echo "FAIL: sweep --json differs by threads"; fail=1; }
cmp -s "$tmp/s1.h5" "$tmp/s2.h5" || { echo "FAIL: /serve_sweep differs by threads"; fail=1; }
grep -q "swaps out" "$tmp/c.txt" || { echo "FAIL: text lacks the swap block"; fail=1; }
grep -q "swaps out" "$tmp/rc.txt" && { echo "FAIL: swap block without swap"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import csv, json, sys
import h5py
tmp = sys.argv[1]
bad = []
SWAP = ("swaps_out", "swaps_in", "fallbacks", "out_bytes", "in_bytes", "time_s", "host_util_max")
UNITS = {"swap_swaps_out": "1", "swap_swaps_in": "1", "swap_fallbacks": "1",
         "swap_out_bytes": "B", "swap_in_bytes": "B", "swap_time_s": "s",
         "swap_host_util_max": "1"}


def want_of(s):
    """dcsim serve --json's figures under compare's column names"""
    w = {k: s[k] for k in ("arrived", "finished", "dropped", "preemptions", "end_s",
                           "requests_per_s", "output_tokens_per_s", "goodput_requests_per_s",
                           "slo_met_fraction", "kv_util_mean", "kv_util_max", "busy_fraction")}
    for m in ("ttft", "tpot", "e2e"):
        for q in ("p50", "p90", "p99"):
            w["%s_%s_s" % (m, q)] = s[m][q + "_s"]
    w["gpus"] = s["replicas"] * s["tp"]
    sw = s.get("swap", {})
    for k in SWAP:
        w["swap_" + k] = sw.get(k, 0)
    return w


order = [(p, r) for p in ("recompute", "swap") for r in (3, 5)]
serve = {pr: json.load(open("%s/serve_%s_%d.json" % ((tmp,) + pr))) for pr in order}
if serve[("swap", 5)]["swap"]["swaps_out"] <= 0 or "swap" in serve[("recompute", 5)]:
    bad.append("the swap run should swap and the recompute run have no swap object")
for name in ("c", "s1"):
    d = json.load(open(f"{tmp}/{name}.json"))
    v = d["variants"]
    if len(v) != 4:
        bad.append("%s: %d rows" % (name, len(v)))
        continue
    for k, u in UNITS.items():
        if d["units"].get(k) != u:
            bad.append("%s: unit of %s %r" % (name, k, d["units"].get(k)))
    for x, pr in zip(v, order):
        want = want_of(serve[pr])
        for k, w in want.items():
            if x.get(k) != w:
                bad.append("%s %s %s: compare %r, serve %r" % (name, pr, k, x.get(k), w))
        extra = set(k for k, y in x.items() if isinstance(y, (int, float))) - set(want) \
            - {"replicas", "tp"}
        if extra:
            bad.append("%s: columns not in dcsim serve --json: %r" % (name, sorted(extra)))
    h5 = f"{tmp}/c.h5" if name == "c" else f"{tmp}/s1.h5"
    with h5py.File(h5, "r") as f:
        t = f["compare" if name == "c" else "serve_sweep"][()]
        units = dict(zip(t.dtype.names[1:], [u.decode() if isinstance(u, bytes) else u for u in
                    f["compare" if name == "c" else "serve_sweep"].attrs["units"][1:]]))
    for k, u in UNITS.items():
        if units.get(k) != u:
            bad.append("%s table: unit of %s %r" % (name, k, units.get(k)))
    for i, x in enumerate(v):
        for k in UNITS:
            if abs(t[i][k] - x[k]) > 2.3e-16 * abs(x[k]):
                bad.append("%s table row %d %s: %r, json %r" % (name, i, k, t[i][k], x[k]))
rows = list(csv.DictReader(open(f"{tmp}/c.csv")))
cj = json.load(open(f"{tmp}/c.json"))["variants"]
with h5py.File(f"{tmp}/c.h5", "r") as f:
    t = f["compare"][()]
if len(rows) != 4:
    bad.append("csv: %d rows" % len(rows))
for i, (row, x) in enumerate(zip(rows, cj)):
    for k in UNITS:  # the CSV prints every bit (the table's double); the JSON to an ulp
        if float(row[k]) != t[i][k] or abs(float(row[k]) - x[k]) > 2.3e-16 * abs(x[k]):
            bad.append("csv %s %s: %r, table %r, json %r" % (row["variant"], k, row[k],
                                                            t[i][k], x[k]))
print("\n".join(bad) if bad else "ok: swap columns = dcsim serve --json (4 variants; swaps %s)"
      % ", ".join("%d" % x["swap_swaps_out"] for x in cj))
sys.exit(1 if bad else 0)
PY
[ "$fail" -eq 0 ] && echo "ok: serve_compare_swap"
exit "$fail"
