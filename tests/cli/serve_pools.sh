#!/bin/sh
# serve_pools.sh DCSIM SRC - `dcsim serve` with prefix caching and with
# disaggregated prefill/decode pools (docs/serving.md): the runs print
# their lines; a prefix share of 0 % gives the JSON of the same scenario
# without <prefix> (every shared key equal); requests are conserved and
# Little's law holds on both; a link whose efficiency the catalog filled by
# a rule is listed under "defaults used"; pools that span nodes without an
# inter-node link are refused. (The arithmetic is in
# tests/models/test_serving_pools.c.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
pre=$src/tests/scenarios/serving-prefix.xml
dis=$src/tests/scenarios/serving-disagg.xml
py=/usr/bin/python3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
expect "prefix line" 0 "^prefix     .*(hit rate" "$dcsim" serve --quiet "$pre"
expect "prefix defaults" 0 "^prefixes   8 shared prefixes of 2000 tokens" "$dcsim" serve --quiet "$pre"
expect "pools line" 0 "^pools      prefill 2 x tp 4" "$dcsim" serve --quiet "$dis"
expect "transfer line" 0 "^transfer   [0-9]* KV transfers" "$dcsim" serve --quiet "$dis"
expect "link defaulted" 0 "^defaults used:.*KV transfer link roce-400g efficiency" \
    "$dcsim" serve --quiet "$dis" --set serving/disaggregated/@link=roce-400g
grep -v "<prefix " "$pre" > "$tmp/noprefix.xml"
"$dcsim" serve --quiet --json "$pre" --set serving/prefix/@share=0% > "$tmp/zero.json" &&
"$dcsim" serve --quiet --json "$tmp/noprefix.xml" > "$tmp/none.json" &&
"$dcsim" serve --quiet --json "$pre" > "$tmp/pre.json" &&
"$dcsim" serve --quiet --json "$dis" > "$tmp/dis.json" || { echo "FAIL: serve --json"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, os, sys
t = sys.argv[1]
load = lambda n: json.load(open(os.path.join(t, n)))
zero, none, pre, dis = load("zero.json"), load("none.json"), load("pre.json"), load("dis.json")
bad = []
for k, v in none.items():
    if k not in ("defaults_used",) and zero.get(k) != v:
        bad.append("share 0%%: %s %r != %r" % (k, zero.get(k), v))
if zero["prefix"]["requests"] != 0:
    bad.append("share 0%: prefix requests %r" % zero["prefix"])
for name, d in (("prefix", pre), ("disaggregated", dis)):
    if d["arrived"] != d["finished"] + d["dropped"] or d["in_flight"] != 0:
        bad.append("%s: requests not conserved" % name)
    if abs(d["little_l"] - d["little_lambda"] * d["little_w"]) > 1e-9 * d["little_l"]:
        bad.append("%s: Little's law" % name)
p = pre["prefix"]
if not (0 < p["hits"] <= p["requests"] and p["ttft_hit_mean_s"] < p["ttft_miss_mean_s"]):
    bad.append("prefix: %r" % p)
x = dis["disaggregated"]
if not (0 < x["transfers"] <= dis["finished"] and x["transfer_p99_s"] >= x["transfer_mean_s"] > 0):
    bad.append("disaggregated: %r" % x)
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
bad "pools span nodes without a link" "the pools span nodes: the KV transfer needs an inter-node link" \
    "$dcsim" serve --quiet "$src/tests/scenarios/serving-disagg-nolink.xml"
[ "$fail" -eq 0 ] && echo "ok: serve_pools"
exit "$fail"
