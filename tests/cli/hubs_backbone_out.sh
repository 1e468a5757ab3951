#!/bin/sh
# hubs_backbone_out.sh DCSIM SRC - the shared backbone's figures wherever a
# user reads hub results (docs/hubs.md "A shared backbone"). On the
# backbone example, every row of `dcsim compare --json` and `--csv`
# (cheapest, nearest) and of a sweep's /hubs_sweep has backbone_wait_s,
# backbone_busiest_utilisation and backbone_link_tb equal to `dcsim hubs
# --json`'s run.backbone sharing_wait_s (the datasets' and results' waits
# added), busiest_utilisation and link_tb (the links' TB summed) with those
# --set values; the text has the backbone table. On hubs-backbone-private.xml
# at 10 Gb/s (transfers share links): `dcsim hubs --csv` has a "run link" row
# per link and a "run backbone" row equal to the JSON's; -o writes
# /hubs/links (per directed link: TB, busy time, peak and mean utilisation
# equal to the JSON's) and /hubs/transfers (per job: the waits sum to the
# JSON's sharing waits) and the backbone's /hubs attributes; a compare of
# it with hubs-trace.xml (no backbone) has the columns only for the former
# (NaN in the table). Without a backbone there is no backbone member,
# column, row or table (every such output byte-identical:
# tests/cli/hubs_compare.sh, hubs_csv.sh, hubs.sh).
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/dcsim-hubs-bbout-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
ex=$src/scenarios/examples/hubs-east-west-backbone.xml
pv=$src/tests/scenarios/hubs-backbone-private.xml
tr=$src/tests/scenarios/hubs-trace.xml
"$dcsim" compare "$ex" --json --vary hubs/@policy=cheapest,nearest >"$tmp/cmp.json" ||
    { echo "FAIL: compare --json"; fail=1; }
"$dcsim" compare "$ex" --csv --vary hubs/@policy=cheapest,nearest >"$tmp/cmp.csv" ||
    { echo "FAIL: compare --csv"; fail=1; }
"$dcsim" sweep "$ex" --quiet --json --grid hubs/@policy=cheapest,nearest -o "$tmp/s.h5" \
    >"$tmp/sweep.json" || { echo "FAIL: sweep"; fail=1; }
for p in cheapest nearest; do
    "$dcsim" hubs --quiet --json "$ex" --set "hubs/@policy=$p" >"$tmp/ex-$p.json" ||
        { echo "FAIL: hubs $p"; fail=1; }
done
"$dcsim" compare "$pv" --vary hubs/@policy=cheapest,nearest | grep -q "^shared backbone: " ||
    { echo "FAIL: the compare text has no backbone table"; fail=1; }
set -- --quiet "$pv" --set hubs/@bandwidth=10Gbps
"$dcsim" hubs "$@" --json >"$tmp/pv.json" || { echo "FAIL: hubs private --json"; fail=1; }
"$dcsim" hubs "$@" --csv >"$tmp/pv.csv" || { echo "FAIL: hubs private --csv"; fail=1; }
"$dcsim" hubs "$@" -o "$tmp/pv.h5" >/dev/null || { echo "FAIL: hubs private -o"; fail=1; }
"$dcsim" hubs --quiet "$tr" -o "$tmp/tr.h5" >/dev/null || { echo "FAIL: hubs trace -o"; fail=1; }
"$dcsim" compare "$pv" "$tr" --json --set hubs/@bandwidth=10Gbps -o "$tmp/mix.h5" >"$tmp/mix.json" ||
    { echo "FAIL: compare private trace"; fail=1; }
"$dcsim" compare "$tr" --json --vary hubs/@policy=cheapest,nearest >"$tmp/tr.json" ||
    { echo "FAIL: compare trace"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import csv, json, math, sys
import h5py
tmp = sys.argv[1]
bad = []
cols = ("backbone_wait_s", "backbone_busiest_utilisation", "backbone_link_tb")
def close(a, b, tol=1e-12):
    return abs(a - b) <= tol * max(abs(a), abs(b), 1e-300)
def want(h):
    b = h["run"]["backbone"]
    if not close(b["sharing_wait_s"], b["sharing_wait_in_s"] + b["sharing_wait_out_s"]):
        bad.append("sharing_wait_s is not in + out")
    tb = sum(l["tb_ab"] + l["tb_ba"] for l in b["links"])
    if not close(b["link_tb"], tb, 1e-9):
        bad.append("link_tb %r, the links sum to %r" % (b["link_tb"], tb))
    return dict(zip(cols, (b["sharing_wait_s"], b["busiest_utilisation"], b["link_tb"])))
cmp = json.load(open(f"{tmp}/cmp.json"))
sw = json.load(open(f"{tmp}/sweep.json"))["variants"]
rows = list(csv.DictReader(open(f"{tmp}/cmp.csv")))
with h5py.File(f"{tmp}/s.h5", "r") as f:
    t = f["hubs_sweep"][()]
if [cmp["units"][c] for c in cols] != ["s", "1", "TB"]:
    bad.append("units %r" % [cmp["units"].get(c) for c in cols])
for i, p in enumerate(("cheapest", "nearest")):
    w = want(json.load(open(f"{tmp}/ex-{p}.json")))
    if not w["backbone_wait_s"] > 0 or not w["backbone_link_tb"] > 0:
        bad.append("%s: no sharing or no TB (%r)" % (p, w))
    for c, x in w.items():
        for label, got in (("compare", cmp["variants"][i][c]), ("sweep", sw[i][c]),
                           ("csv", float(rows[i][c])), ("/hubs_sweep", float(t[i][c]))):
            if not close(got, x):
                bad.append("%s %s %s: %r, dcsim hubs %r" % (label, p, c, got, x))
    d = cmp["variants"][i]["difference"]["backbone_wait_s"]
    if not close(d, cmp["variants"][i]["backbone_wait_s"] - cmp["variants"][0]["backbone_wait_s"]):
        bad.append("difference %r" % d)
# dcsim hubs --csv against --json
pv = json.load(open(f"{tmp}/pv.json"))
crow = list(csv.DictReader(open(f"{tmp}/pv.csv")))
for part in ("run", "baseline"):
    bb = pv[part]["backbone"]
    links = [r for r in crow if r["table"] == part + " link"]
    if len(links) != len(bb["links"]) or len(links) != 6:
        bad.append("%s: %d link rows" % (part, len(links)))
    for r, l in zip(links, bb["links"]):
        for k, v in l.items():
            if (str(v) != r[k]) if isinstance(v, str) else not close(float(r[k]), v, 4.5e-16):
                bad.append("%s link %s: CSV %r, JSON %r" % (part, k, r[k], v))
    one = [r for r in crow if r["table"] == part + " backbone"]
    for k, v in ({} if len(one) != 1 else bb).items():
        if k != "links" and ((str(v) != one[0][k]) if isinstance(v, str)
                             else not close(float(one[0][k]), v, 4.5e-16)):
            bad.append("%s backbone %s: CSV %r, JSON %r" % (part, k, one[0][k], v))
bb = pv["run"]["backbone"]
if not bb["sharing_wait_in_s"] > 0:
    bad.append("private at 10 Gb/s: no sharing")
with h5py.File(f"{tmp}/pv.h5", "r") as f:
    L, T, a = f["hubs/links"][()], f["hubs/transfers"][()], f["hubs"].attrs
    if len(L) != 2 * len(bb["links"]):
        bad.append("/hubs/links has %d rows" % len(L))
    for r in L:
        l, d = bb["links"][r["link"]], "ab" if r["id"] % 2 == 0 else "ba"
        for k, j in (("tb", "tb_" + d), ("busy_s", "busy_%s_s" % d),
                     ("peak_utilisation", "peak_utilisation_" + d),
                     ("mean_utilisation", "utilisation_" + d)):
            if not close(float(r[k]), l[j]):
                bad.append("/hubs/links %d %s %r, JSON %r" % (r["id"], k, float(r[k]), l[j]))
        if r["busy_s"] > 0 and not r["tb"] * 8e12 <= r["bandwidth_bps"] * r["busy_s"] * (1 + 1e-9):
            bad.append("/hubs/links %d: more TB than its bandwidth over its busy time" % r["id"])
    if len(T) != pv["jobs"]:
        bad.append("/hubs/transfers has %d rows" % len(T))
    for k, j in (("dataset_wait_s", "sharing_wait_in_s"), ("result_wait_s", "sharing_wait_out_s")):
        if not close(float(T[k].sum()), bb[j], 1e-9):
            bad.append("/hubs/transfers %s sums to %r, JSON %r" % (k, float(T[k].sum()), bb[j]))
    for k, j in (("backbone_wait_s", "sharing_wait_s"),
                 ("backbone_busiest_utilisation", "busiest_utilisation"),
                 ("backbone_link_tb", "link_tb")):
        if not close(float(a[k]), bb[j]):
            bad.append("/hubs %s %r, JSON %r" % (k, float(a[k]), bb[j]))
    if not close(float(a["baseline_backbone_wait_s"]), pv["baseline"]["backbone"]["sharing_wait_s"]):
        bad.append("baseline_backbone_wait_s")
with h5py.File(f"{tmp}/tr.h5", "r") as f:
    if "links" in f["hubs"] or "transfers" in f["hubs"] or "backbone_wait_s" in f["hubs"].attrs:
        bad.append("a backbone table without <backbone>")
# a compare of a backbone scenario with one without
mix = json.load(open(f"{tmp}/mix.json"))["variants"]
with h5py.File(f"{tmp}/mix.h5", "r") as f:
    t = f[list(f.keys())[0]][()]
for c in cols:
    if c not in mix[0] or c in mix[1] or c in mix[1]["difference"]:
        bad.append("mixed compare: %s where it should not be" % c)
    elif not close(mix[0][c], want(pv)[c]) or not close(float(t[0][c]), mix[0][c]) or not math.isnan(t[1][c]):
        bad.append("mixed compare %s: %r, table %r %r" % (c, mix[0][c], t[0][c], t[1][c]))
tr = json.load(open(f"{tmp}/tr.json"))
if any(c in tr["units"] or c in v for c in cols for v in tr["variants"]):
    bad.append("backbone columns without <backbone>")
for b in bad[:20]:
    print("FAIL:", b)
if not bad:
    print("ok: backbone figures in compare (2), sweep (2), --csv, -o equal dcsim hubs --json")
sys.exit(1 if bad else 0)
PY
exit $fail
