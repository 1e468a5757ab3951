#!/bin/sh
# serve_compare.sh DCSIM SRC - `dcsim compare` and `dcsim sweep` over serving
# scenarios (docs/serving.md "Comparing and sweeping"): a compare of one
# variant holds the figures `dcsim serve --json` prints, bit for bit (the
# same functions, sim/app/compare_serve.c), with and without a <site>; each
# --vary value's variant equals `dcsim serve --set` of it and its
# differences are against the first; --vary site= adds the cost columns;
# a rate sweep of the example: the achieved throughput rises with the rate
# up to saturation and the P99 TTFT never falls; /serve_sweep holds the
# --json rows; OMP_NUM_THREADS=1 and 2 give the same bytes (stdout and the
# table); --replicas, a training scenario among serving ones, an unknown
# site and the scenario as the -o target are refused in one line.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
ex=$src/scenarios/examples/serving-llama3-70b-h100.xml
site=$src/tests/scenarios/serving-site.xml
tmp=$(mktemp -d /tmp/dcsim-serve-compare-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
short="serving/arrivals/@duration=120s" # a fifth of the example's traffic

# one variant = dcsim serve, figure for figure
"$dcsim" compare "$site" --json >"$tmp/one_site.json" || { echo "FAIL: compare site"; fail=1; }
"$dcsim" serve --quiet --json "$site" >"$tmp/serve_site.json" || fail=1
"$dcsim" compare "$ex" --json --set "$short" --vary serving/arrivals/@rate=20/s,60/s \
    >"$tmp/rates.json" || { echo "FAIL: compare rates"; fail=1; }
for r in 20 60; do
    "$dcsim" serve --quiet --json "$ex" --set "$short" --set serving/arrivals/@rate=$r/s \
        >"$tmp/serve_$r.json" || fail=1
done
"$dcsim" compare "$ex" --json --set "$short" --vary site=horinger,wuhu \
    >"$tmp/sites.json" || { echo "FAIL: compare sites"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
bad = []
COST = ("facility_energy_j", "energy_cost_cny", "co2_kg", "kwh_per_mtok",
        "energy_cost_per_mtok_cny", "co2_kg_per_mtok")
SWAP = ("swaps_out", "swaps_in", "fallbacks", "out_bytes", "in_bytes", "time_s", "host_util_max")


def want_of(s):
    """dcsim serve --json's figures under compare's column names"""
    w = {k: s[k] for k in ("arrived", "finished", "dropped", "preemptions", "end_s",
                           "requests_per_s", "output_tokens_per_s", "goodput_requests_per_s",
                           "slo_met_fraction", "kv_util_mean", "kv_util_max", "busy_fraction")}
    for m in ("ttft", "tpot", "e2e"):
        for q in ("p50", "p90", "p99"):
            w["%s_%s_s" % (m, q)] = s[m][q + "_s"]
    if "cost" in s:
        c = s["cost"]
        w["gpus"] = c["gpus"]
        w.update({"facility_energy_j": c["facility_energy_j"],
                  "energy_cost_cny": c["energy_cost_cny"], "co2_kg": c["co2_kg"],
                  "kwh_per_mtok": c["kwh_per_mtok"],
                  "energy_cost_per_mtok_cny": c["energy_cost_per_mtok_cny"],
                  "co2_kg_per_mtok": c["co2_kg_per_mtok"]})
    else:
        w["gpus"] = s["replicas"] * s["tp"]
    sw = s.get("swap", {})  # swap preemption's; 0 under recompute (no "swap" object)
    for k in SWAP:
        w["swap_" + k] = sw.get(k, 0)
    return w


def check(name, v, s, first):
    want = want_of(s)
    for k, x in want.items():
        if v.get(k) != x:  # bit for bit: the same doubles through the same printer
            bad.append("%s %s: compare %r, serve %r" % (name, k, v.get(k), x))
    extra = set(k for k, x in v.items() if isinstance(x, (int, float))) - set(want) \
        - {"replicas", "tp"}
    if extra:
        bad.append("%s: columns not in dcsim serve --json: %r" % (name, sorted(extra)))
    if (v["model"], v["gpu"], v["replicas"], v["tp"]) != (s["model"], s["gpu"], s["replicas"],
                                                          s["tp"]):
        bad.append("%s: fleet %r" % (name, v))
    for k, d in v["difference"].items():  # to an ulp: JSON numbers print to 15 digits
        if abs(d - (v[k] - first[k])) > 4e-16 * max(abs(v[k]), abs(first[k])):
            bad.append("%s difference %s %r != %r - %r" % (name, k, d, v[k], first[k]))


one = json.load(open(f"{tmp}/one_site.json"))
if one["command"] != "compare" or one["kind"] != "serve" or len(one["variants"]) != 1:
    bad.append("not one serve variant: %r" % one)
v0 = one["variants"][0]
check("site", v0, json.load(open(f"{tmp}/serve_site.json")), v0)
if any(d != 0 for d in v0["difference"].values()) or not all(k in v0 for k in COST):
    bad.append("one variant: %r" % v0)
rates = json.load(open(f"{tmp}/rates.json"))["variants"]
if [v["variant"] for v in rates] != ["serving/arrivals/@rate=20/s", "serving/arrivals/@rate=60/s"]:
    bad.append("labels %r" % [v["variant"] for v in rates])
for v, r in zip(rates, (20, 60)):
    check("rate %d" % r, v, json.load(open(f"{tmp}/serve_%d.json" % r)), rates[0])
    if any(k in v for k in COST) or v["site"] != "":
        bad.append("rate %d: cost columns without a <site>" % r)
if not rates[1]["requests_per_s"] > rates[0]["requests_per_s"]:
    bad.append("60/s served fewer requests/s than 20/s")
w, e = json.load(open(f"{tmp}/sites.json"))["variants"]
if (w["site"], e["site"]) != ("horinger", "wuhu"):
    bad.append("sites %s, %s" % (w["site"], e["site"]))
for k in ("ttft_p99_s", "output_tokens_per_s", "kv_util_mean"):
    if w[k] != e[k] or e["difference"][k] != 0:
        bad.append("the site changed %s" % k)
for k in COST:
    if k not in w or k not in e["difference"]:
        bad.append("no %s at a --vary site" % k)
print("\n".join(bad) if bad else "ok: compare = dcsim serve (3 scenarios, 5 variants)")
sys.exit(1 if bad else 0)
PY

# a rate sweep of the example on 8 GPUs (2 replicas; 64 GPUs would not
# saturate below about 100 requests/s): throughput up to saturation, P99
# TTFT monotone
rates="4/s,8/s,12/s,16/s,20/s,24/s,32/s,48/s"
small="cluster/gpu/@count=8"
OMP_NUM_THREADS=1 "$dcsim" sweep --quiet --json "$ex" --set "$short" --set "$small" \
    --grid "serving/arrivals/@rate=$rates" -o "$tmp/sw1.h5" >"$tmp/sw1.json" ||
    { echo "FAIL: sweep rates"; fail=1; }
OMP_NUM_THREADS=2 "$dcsim" sweep --quiet --json "$ex" --set "$short" --set "$small" \
    --grid "serving/arrivals/@rate=$rates" -o "$tmp/sw2.h5" >"$tmp/sw2.json" || fail=1
cmp -s "$tmp/sw1.json" "$tmp/sw2.json" || { echo "FAIL: sweep --json differs by threads"; fail=1; }
cmp -s "$tmp/sw1.h5" "$tmp/sw2.h5" || { echo "FAIL: /serve_sweep differs by threads"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, sys
import h5py
tmp = sys.argv[1]
bad = []
d = json.load(open(f"{tmp}/sw1.json"))
v = d["variants"]
if d["command"] != "sweep" or d["kind"] != "serve" or len(v) != 8:
    bad.append("not 8 serve points: %r" % d)
tput = [x["requests_per_s"] for x in v]
ttft = [x["ttft_p99_s"] for x in v]
# up to saturation (the achieved rate stops following the offered rate)
# throughput rises; past it it stays within 5 % of its peak
peak = max(tput)
sat = next(i for i, t in enumerate(tput) if t >= 0.95 * peak)
if not all(tput[i] < tput[i + 1] for i in range(sat)):
    bad.append("throughput does not rise up to saturation: %r" % tput)
if sat == 0 or sat == len(tput) - 1 or not tput[-1] < 0.9 * 48:
    bad.append("the sweep does not reach saturation inside its range: %r" % tput)
if not all(a <= b for a, b in zip(ttft, ttft[1:])):
    bad.append("P99 TTFT falls with the rate: %r" % ttft)
with h5py.File(f"{tmp}/sw1.h5", "r") as f:
    t = f["serve_sweep"][()]
    cols = list(t.dtype.names)[1:]   # after the variant's name
    rows = [r.decode() if isinstance(r, bytes) else r for r in t["variant"]]
if rows != [x["variant"] for x in v] or list(d["units"]) != cols:
    bad.append("/serve_sweep rows %r, columns %r" % (rows, cols))
for i, x in enumerate(v):
    for j, c in enumerate(cols):
        if c in x and abs(t[i][c] - x[c]) > 2.3e-16 * abs(x[c]):  # the JSON's printing
            bad.append("point %d %s: table %r, json %r" % (i, c, t[i][c], x[c]))
        if c not in x and t[i][c] == t[i][c]:
            bad.append("point %d %s: %r without a <site>, not NaN" % (i, c, t[i][c]))
print("\n".join(bad) if bad else "ok: rate sweep, throughput %s req/s, P99 TTFT %s s" % (
    ", ".join("%.4g" % x for x in tput), ", ".join("%.4g" % x for x in ttft)))
sys.exit(1 if bad else 0)
PY

# text and -o for compare; the same command gives the same bytes
expect "compare text" 0 "^dcsim compare: 2 variants of a serving fleet" \
    "$dcsim" compare "$ex" --set "$short" --vary serving/arrivals/@rate=20/s,30/s
expect "compare -o" 0 "table written to" \
    "$dcsim" compare "$ex" --set "$short" --vary serving/arrivals/@rate=20/s -o "$tmp/c.h5"
"$dcsim" compare "$ex" --set "$short" --vary serving/arrivals/@rate=20/s -o "$tmp/c2.h5" \
    >/dev/null || fail=1
cmp -s "$tmp/c.h5" "$tmp/c2.h5" || { echo "FAIL: compare -o differs between runs"; fail=1; }
expect "compare csv" 0 "^variant,model,gpu" \
    "$dcsim" compare "$ex" --csv --set "$short" --vary cluster/gpu/@type=H100-SXM,H200-SXM

# refused in one line
bad "sweep --replicas" "runs once per point" \
    "$dcsim" sweep --quiet "$ex" --grid serving/arrivals/@rate=10/s --replicas 2 -o "$tmp/r.h5"
bad "compare mixed" "not one with another" \
    "$dcsim" compare "$ex" "$src/scenarios/examples/cluster-synthetic-h100.xml"
bad "compare site" "site" "$dcsim" compare "$ex" --vary site=atlantis
bad "sweep onto its scenario" "" \
    "$dcsim" sweep --quiet "$ex" --grid serving/arrivals/@rate=10/s -o "$ex"
[ -f "$tmp/r.h5" ] && { echo "FAIL: a refused sweep wrote its file"; fail=1; }
exit $fail
