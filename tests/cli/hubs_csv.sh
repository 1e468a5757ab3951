#!/bin/sh
# hubs_csv.sh DCSIM SRC - `dcsim hubs --csv` and `--json`'s run.series
# (docs/hubs.md "Outputs", docs/json.md "CSV"): on the year example with a
# water limit at one hub, the CSV has a row per hub and a total row of the
# run and of the baseline and a saving row, every row as wide as the header,
# and every field equals the --json member it comes from (value by value, to
# cJSON's 15-digit rounding: 2 DBL_EPSILON, as tests/cli/csv.sh);
# the JSON's series tile [0, horizon] per hub and, summed over the bins,
# each column equals the hub's figure (1e-9 relative); --json with --csv is
# refused.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/hubs-east-west-year.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
set -- --quiet "$ex" --set "hubs/hub[5]/@water-limit=2000m3"
"$dcsim" hubs "$@" --csv > "$tmp/h.csv" || { echo "FAIL: hubs --csv"; fail=1; }
"$dcsim" hubs "$@" --json > "$tmp/h.json" || { echo "FAIL: hubs --json"; fail=1; }
$py - "$tmp/h.csv" "$tmp/h.json" <<'PY' || fail=1
import csv, json, sys
bad = []
rows = list(csv.reader(open(sys.argv[1], newline="")))
d = json.load(open(sys.argv[2]))
head, body = rows[0], rows[1:]
if head[:3] != ["table", "policy", "name"]:
    bad.append("header starts %r" % head[:3])
want = []
for t in ("run", "baseline"):
    want += [(t, d[t]["policy"], h) for h in d[t]["hubs"]] + [(t, d[t]["policy"], d[t]["total"])]
want.append(("saving", d["run"]["policy"], d["saving"]))
if len(body) != len(want) or len(want) != 2 * (len(d["run"]["hubs"]) + 1) + 1:
    bad.append("%d rows, expected %d" % (len(body), len(want)))
def flat(o, pre=""):
    out = {}
    for k, v in o.items():
        if isinstance(v, dict):
            out.update(flat(v, pre + k + "_"))
        elif not isinstance(v, list):
            out[pre + k] = v
    return out
checked = 0
for row, (table, policy, obj) in zip(body, want):
    if len(row) != len(head):
        bad.append("a row of %d fields, header %d" % (len(row), len(head)))
        continue
    got = dict(zip(head, row))
    if got["table"] != table or got["policy"] != policy:
        bad.append("row %r/%r, expected %r/%r" % (got["table"], got["policy"], table, policy))
    f = flat(obj)
    for k in head[2:]:
        if k not in f:
            if got[k] != "":
                bad.append("%s %s: %r where the JSON has none" % (table, k, got[k]))
            continue
        v = f[k]
        checked += 1
        if isinstance(v, bool):
            ok = got[k] == ("true" if v else "false")
        elif isinstance(v, (int, float)):
            a = float(got[k])  # cJSON prints 15 digits when they read back within
            ok = abs(a - v) <= 2 * sys.float_info.epsilon * max(abs(a), abs(v))  # DBL_EPSILON
        else:
            ok = got[k] == v
        if not ok:
            bad.append("%s %s %s: CSV %r, JSON %r" % (table, f.get("name", ""), k, got[k], v))
    missing = [k for k in f if k not in head]
    if missing:
        bad.append("%s: JSON members not in the CSV: %r" % (table, missing))
limited = [h for h in d["run"]["hubs"] if "water_limit_l" in h]
if [h["name"] for h in limited] != ["tianfu"] or limited[0]["water_limit_l"] != 2e6:
    bad.append("the water limit's members: %r" % [h["name"] for h in limited])
# the series: tile [0, horizon], sum to the hubs' figures
run = d["run"]
s, horizon, bin_s = run.get("series", []), d["horizon_s"], run.get("series_bin_s", 0)
if bin_s != 730 * 3600.0:
    bad.append("series_bin_s %r" % bin_s)
if "series" in d["baseline"]:
    bad.append("the baseline has a series")
pairs = (("busy_gpu_h", "gpu_h"), ("it_energy_j", "it_energy_j"),
         ("facility_energy_j", "facility_energy_j"), ("energy_cost", "energy_cost"),
         ("data_cost", "data_cost"), ("cost", "cost"), ("co2_kg", "co2_kg"),
         ("water_l", "water_l"), ("jobs_started", "jobs"))
sums = 0
for i, h in enumerate(run["hubs"]):
    b = [x for x in s if x["hub"] == i]
    if [x["bin"] for x in b] != list(range(13)):
        bad.append("%s: bins %r" % (h["name"], [x["bin"] for x in b]))
        continue
    if b[0]["t_start_s"] != 0 or b[-1]["t_end_s"] != horizon or \
            any(b[k]["t_start_s"] != b[k - 1]["t_end_s"] for k in range(1, len(b))):
        bad.append("%s: the bins do not tile [0, horizon]" % h["name"])
    cols = pairs + (("tb_moved", None),)
    for col, hub_col in cols:
        a = sum(x[col] for x in b)
        want_v = h["tb_in"] + h["tb_out"] if hub_col is None else h[hub_col]
        sums += 1
        if abs(a - want_v) > 1e-9 * max(abs(a), abs(want_v), 1e-300):
            bad.append("%s %s: bins %r, hub %r" % (h["name"], col, a, want_v))
print("\n".join(bad) if bad else
      "ok %d CSV rows, %d fields equal to the JSON; %d series sums equal" % (len(body), checked, sums))
sys.exit(1 if bad else 0)
PY
expect "json and csv" 2 "choose one" "$dcsim" hubs --json --csv "$ex"
exit $fail
