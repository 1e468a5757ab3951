#!/bin/sh
# serve_fabric.sh DCSIM SRC - the KV transfers over a <fabric> in `dcsim
# serve` (docs/serving.md "KV transfers over the fabric"), on
# tests/scenarios/serving-disagg-fabric.xml (serving-disagg.xml's pools on a
# leaf-spine, one leaf a node) and serving-fetch-fabric.xml
# (serving-fetch.xml's fetches on the same fabric):
#   - on a non-blocking fabric (oversubscription 1:1, adaptive routing) the
#     transfers and fetches take the times of the scenario without the
#     fabric (the replicas' links: serving-disagg.xml, serving-fetch.xml),
#     to 1e-9, and the latencies are the same;
#   - at 4:1 (2 uplinks for a leaf of 8 GPUs) a transfer alone takes twice
#     as long over the uplinks, so the mean transfer and fetch grow;
#   - what the transfers crossed and what it cost them (docs/serving.md
#     "What the transfers crossed"): without the fabric the medium is the
#     replicas' links and no route term; at 1:1 and 6/s (no two transfers
#     overlap) route and sharing are 0; at 4:1 a TP4 transfer alone puts
#     weight 1/2 on each of its leaf's 2 uplinks (rate 2 x the link's, cap
#     4 x), so the route term is bytes / (4 x rate) summed, exactly
#     transfer_bytes / (4 x inter_bytes_per_s), and mean x transfers = the
#     time alone on the links + route + shared;
#   - the same bytes for OMP_NUM_THREADS=1 and 4; conservation, Little;
#   - the text names the fabric; link beside a fabric and the queued
#     contention are refused in one line each.
# (The closed forms are in tests/models/test_serving_fabric.c.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
d=$src/tests/scenarios
py=/usr/bin/python3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
one="--set cluster/fabric/@oversubscription=1:1"
for f in disagg fetch; do
    OMP_NUM_THREADS=1 "$dcsim" serve --quiet --json "$d/serving-$f-fabric.xml" \
        > "$tmp/$f.json" &&
    OMP_NUM_THREADS=4 "$dcsim" serve --quiet --json "$d/serving-$f-fabric.xml" \
        > "$tmp/${f}4.json" &&
    "$dcsim" serve --quiet --json "$d/serving-$f-fabric.xml" $one > "$tmp/${f}1.json" &&
    "$dcsim" serve --quiet --json "$d/serving-$f.xml" > "$tmp/${f}_links.json" ||
        { echo "FAIL: serve $f"; fail=1; }
    cmp -s "$tmp/$f.json" "$tmp/${f}4.json" || { echo "FAIL: $f: OMP threads change the run"
                                                  fail=1; }
done
$py - "$tmp" <<'PY' || fail=1
import json, sys
t = sys.argv[1]
def load(n):
    with open("%s/%s.json" % (t, n)) as f:
        return json.load(f)
bad = []
def close(a, b, what):
    if abs(a - b) > 1e-9 * max(abs(a), abs(b)):
        bad.append("%s: %r != %r" % (what, a, b))
for f, key, fields in (("disagg", "disaggregated",
                        ("transfers", "transfer_bytes", "transfer_mean_s", "transfer_p99_s",
                         "transfer_max_s")),
                       ("fetch", "remote_fetch", ("fetches", "bytes", "mean_s", "max_s"))):
    over, one, links = load(f), load(f + "1"), load(f + "_links")
    for k in fields:
        close(one[key][k], links[key][k], "%s 1:1 %s" % (f, k))
    for m in ("ttft", "tpot", "e2e"):
        for q in ("mean_s", "p50_s", "p99_s", "max_s"):
            close(one[m][q], links[m][q], "%s 1:1 %s %s" % (f, m, q))
    mean = "transfer_mean_s" if f == "disagg" else "mean_s"
    if not over[key][mean] > 1.5 * links[key][mean]:
        bad.append("%s 4:1: mean %r not above 1.5 x %r" % (f, over[key][mean], links[key][mean]))
    if over["arrived"] != over["finished"] + over["dropped"] or over["in_flight"] != 0:
        bad.append("%s: requests not conserved" % f)
    close(over["little_l"], over["little_lambda"] * over["little_w"], f + " Little")
d, o, l = load("disagg"), load("disagg1"), load("disagg_links")
dd, od, ld = d["disaggregated"], o["disaggregated"], l["disaggregated"]
if (dd["medium"], od["medium"], ld["medium"]) != ("fabric", "fabric", "links"):
    bad.append("media %r %r %r" % (dd["medium"], od["medium"], ld["medium"]))
fab = {k: dd.get("fabric_" + k) for k in ("topology", "link", "oversubscription",
                                          "spine_oversubscription", "routing")}
if fab != {"topology": "leaf-spine", "link": "ib-ndr", "oversubscription": "4:1",
           "spine_oversubscription": "1:1", "routing": "adaptive"}:
    bad.append("fabric %r" % fab)
if "fabric_topology" in ld or ld["inter_link"] != "ib-ndr" or ld["transfer_route_s"] != 0:
    bad.append("links: %r" % ld)
for x, what in ((od, "1:1"), (ld, "links")):
    if x["transfer_route_s"] != 0 or x["transfer_shared_s"] != 0:
        bad.append("%s at 6/s: route %r shared %r" % (what, x["transfer_route_s"],
                                                      x["transfer_shared_s"]))
close(dd["transfer_route_s"], dd["transfer_bytes"] / (4 * dd["inter_bytes_per_s"]), "4:1 route")
links_alone = dd["transfers"] * dd["inter_latency_s"] + dd["transfer_bytes"] / (4 * dd["inter_bytes_per_s"])
total = dd["transfer_mean_s"] * dd["transfers"]
if abs(total - (links_alone + dd["transfer_route_s"] + dd["transfer_shared_s"])) > 1e-9 * total:
    bad.append("4:1: %r != %r + %r + %r" % (total, links_alone, dd["transfer_route_s"],
                                            dd["transfer_shared_s"]))
if not (dd["transfer_p50_s"] <= dd["transfer_p99_s"] <= dd["transfer_max_s"]) or \
        dd["transfers_in_flight_max"] < 1:
    bad.append("4:1 quantiles or in flight: %r" % dd)
print("\n".join(bad) if bad else
      "ok: transfers mean %.4g ms at 4:1, %.4g ms on the replicas' links" %
      (d["disaggregated"]["transfer_mean_s"] * 1e3, l["disaggregated"]["transfer_mean_s"] * 1e3))
sys.exit(1 if bad else 0)
PY
expect "text names the fabric" 0 "KV sent over nvlink4, ib-ndr on the routes of the leaf-spine fabric" \
    "$dcsim" serve --quiet "$d/serving-disagg-fabric.xml"
expect "text: shared on the fabric" 0 "share every link of the fabric on their routes" \
    "$dcsim" serve --quiet "$d/serving-disagg-fabric.xml"
expect "text: the transfers' medium" 0 "over the leaf-spine fabric (ib-ndr links, oversubscription 4:1, adaptive routing; nvlink4 inside a node)" \
    "$dcsim" serve --quiet "$d/serving-disagg-fabric.xml"
expect "text: the medium without a fabric" 0 "over the replicas' links (nvlink4 inside a node, ib-ndr between nodes)" \
    "$dcsim" serve --quiet "$d/serving-disagg.xml"
bad "queued beside a fabric" "with a <fabric> the KV transfers share its links" \
    "$dcsim" serve --quiet "$d/serving-disagg-fabric.xml" \
    --set serving/disaggregated/@contention=queued
[ "$fail" -eq 0 ] && echo "ok: serve_fabric"
exit "$fail"
