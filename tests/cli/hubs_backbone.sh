#!/bin/sh
# hubs_backbone.sh DCSIM SRC - a shared backbone (docs/hubs.md "A shared
# backbone"). hubs-backbone-private.xml is hubs-trace.xml with one link from
# each demand centre to each hub: at 10 Tb/s no two transfers overlap and
# the run and baseline equal hubs-trace.xml's exactly (every member of
# --json but the backbone's, which reports no sharing); at 10 Gb/s they
# overlap on the hubs' FIFO links and the two differ, the backbone's waits
# are the link waits. Bits are conserved (one hop per route: the links' TB
# sum to the TB moved). On the year example's backbone variant: each link's
# utilisation is its TB x 8e12 / (bandwidth x horizon), the busiest is their
# most, two runs are byte-identical. A link's own cost per TB: the data
# cost rises by exactly its TB x that (two links priced), the link's `cost`
# says so, and the monthly series' data cost sums to each hub's.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/dcsim-hubs-backbone-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
sc=$src/tests/scenarios
ex=$src/scenarios/examples/hubs-east-west-backbone.xml
for bw in 10Tbps 10Gbps; do
    for f in hubs-trace hubs-backbone-private; do
        "$dcsim" hubs --quiet --json "$sc/$f.xml" --set "hubs/@bandwidth=$bw" >"$tmp/$f-$bw.json" ||
            { echo "FAIL: hubs $f.xml at $bw"; fail=1; }
    done
done
"$dcsim" hubs --quiet --json "$sc/hubs-backbone-private.xml" --set 'hubs/backbone/link[4]/@cost-per-tb=2.5' \
    --set 'hubs/backbone/link[6]/@cost-per-tb=5' >"$tmp/priced.json" ||
    { echo "FAIL: hubs with priced links"; fail=1; }
"$dcsim" hubs --quiet --json "$ex" >"$tmp/ex1.json" || { echo "FAIL: hubs $ex"; fail=1; }
"$dcsim" hubs --quiet --json "$ex" >"$tmp/ex2.json" || { echo "FAIL: hubs $ex again"; fail=1; }
cmp -s "$tmp/ex1.json" "$tmp/ex2.json" || { echo "FAIL: two runs of the backbone example differ"; fail=1; }
"$dcsim" hubs --quiet "$ex" | grep -q '^links      busiest ' ||
    { echo "FAIL: the text has no busiest link"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
bad = []
for bw in ("10Tbps", "10Gbps"):
    a = json.load(open(f"{tmp}/hubs-trace-{bw}.json"))
    b = json.load(open(f"{tmp}/hubs-backbone-private-{bw}.json"))
    if "backbone" in a["run"] or "backbone" in a["baseline"]:
        bad.append("a backbone member without <backbone>")
    for part in ("run", "baseline"):
        bb = b[part].pop("backbone")
        t = b[part]["total"]
        share = bb["sharing_wait_in_s"] + bb["sharing_wait_out_s"]
        if abs(share - t["link_wait_s"]) > 1e-9 * max(1, t["link_wait_s"]):
            bad.append(f"{bw} {part}: sharing {share} != link waits {t['link_wait_s']}")
        moved = sum(l["tb_ab"] + l["tb_ba"] for l in bb["links"])
        if abs(moved - (t["tb_in"] + t["tb_out"])) > 1e-9 * moved:
            bad.append(f"{bw} {part}: links moved {moved} TB, the jobs {t['tb_in'] + t['tb_out']}")
        if len(bb["links"]) != 6:
            bad.append(f"{bw} {part}: {len(bb['links'])} links")
        if bw == "10Tbps" and (share != 0 or b[part] != a[part]):
            bad.append(f"10Tbps {part}: not exactly hubs-trace.xml's (sharing {share})")
        if bw == "10Gbps" and (share <= 0 or b[part] == a[part]):
            bad.append(f"10Gbps {part}: no overlap seen (sharing {share})")
    if bw == "10Gbps" and not a["run"]["total"]["link_wait_s"] > 0:
        bad.append("10Gbps: the FIFO links never queued")
p = json.load(open(f"{tmp}/priced.json"))
a = json.load(open(f"{tmp}/hubs-trace-10Gbps.json"))
for part in ("run", "baseline"):
    L = p[part]["backbone"]["links"]
    extra = sum((l["tb_ab"] + l["tb_ba"]) * l["cost_per_tb"] for l in L)
    if [l["cost_per_tb"] for l in L] != [0, 0, 0, 2.5, 0, 5] or (part == "run" and not extra > 0):
        bad.append(f"priced {part}: links {[l['cost_per_tb'] for l in L]}, extra {extra}")
    got = p[part]["total"]["data_cost"] - a[part]["total"]["data_cost"]
    tol = 1e-9 * max(extra, 1)
    if abs(got - extra) > tol or abs(sum(l["cost"] for l in L) - extra) > tol:
        bad.append(f"priced {part}: data cost rose {got}, the links say {extra}")
    hubs = p[part]["hubs"]
    if abs(sum(h["data_cost"] for h in hubs) - p[part]["total"]["data_cost"]) > tol:
        bad.append(f"priced {part}: hubs' data cost does not sum to the total")
for k, h in enumerate(p["run"]["hubs"]):
    s = sum(b["data_cost"] for b in p["run"]["series"] if b["hub"] == k)
    if abs(s - h["data_cost"]) > 1e-9 * max(1, h["data_cost"]):
        bad.append(f"priced: hub {k}'s series data cost {s}, the hub's {h['data_cost']}")
e = json.load(open(f"{tmp}/ex1.json"))
for part in ("run", "baseline"):
    bb = e[part]["backbone"]
    H = e["horizon_s"]
    most = 0
    for l in bb["links"]:
        for d in ("ab", "ba"):
            u = l["tb_" + d] * 8e12 / (l["bandwidth_bps"] * H)
            if abs(u - l["utilisation_" + d]) > 1e-12 * max(u, 1e-300):
                bad.append(f"{part} {l['a']}-{l['b']} {d}: utilisation {l['utilisation_' + d]} != {u}")
            most = max(most, l["utilisation_" + d])
    if bb["busiest_utilisation"] != most or len(bb["links"]) != 14:
        bad.append(f"{part}: busiest {bb['busiest_utilisation']} != {most}")
    if not (0 < most < 1):
        bad.append(f"{part}: busiest utilisation {most}")
for b_ in bad:
    print("FAIL:", b_)
sys.exit(1 if bad else 0)
PY
exit $fail
