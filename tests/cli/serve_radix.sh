#!/bin/sh
# serve_radix.sh DCSIM SRC - `dcsim serve` with nested <prefix> levels and
# the prefix-affinity router (docs/serving.md "Prefix caching"): the text
# prints a line per level and the prompt tokens' balance; --json gives
# prefix.levelN_* whose level-1 figures are prefix.requests and .hits, whose
# hits never exceed the level above's, and prefilled + cached = admitted
# prompt tokens (no preemption on this scenario); prefix-affinity reaches a
# higher level-2 hit rate and a lower mean TTFT than least-loaded on the same
# requests; --csv carries the levels; the margin is listed under "defaults
# used". (The closed forms are in tests/models/test_serving_radix.c.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
rdx=$src/tests/scenarios/serving-radix.xml
py=/usr/bin/python3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
aff="--set serving/router/@policy=prefix-affinity"
expect "level line" 0 "^           level 2: [0-9]* of [0-9]* found their chain cached" \
    "$dcsim" serve --quiet "$rdx"
expect "levels described" 0 "^           level 2: 32 under each level-1 prefix, 3000 tokens" \
    "$dcsim" serve --quiet "$rdx"
expect "balance line" 0 "^           prompt tokens admitted" "$dcsim" serve --quiet "$rdx"
expect "margin default" 0 "^defaults used:.*router margin 32 requests" \
    "$dcsim" serve --quiet "$rdx" $aff
expect "csv levels" 0 "prefix_level2_hit_rate" "$dcsim" serve --quiet --csv "$rdx"
"$dcsim" serve --quiet --json "$rdx" > "$tmp/ll.json" &&
"$dcsim" serve --quiet --json "$rdx" $aff > "$tmp/aff.json" || { echo "FAIL: serve --json"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, os, sys
t = sys.argv[1]
ll, aff = (json.load(open(os.path.join(t, n))) for n in ("ll.json", "aff.json"))
bad = []
for name, d in (("least-loaded", ll), ("prefix-affinity", aff)):
    p = d["prefix"]
    lv = [{k: p["level%d_%s" % (n, k)] for k in ("requests", "hits", "hit_rate")}
          for n in range(1, p["levels"] + 1)]
    if len(lv) != 2 or lv[0]["requests"] != p["requests"] or lv[0]["hits"] != p["hits"]:
        bad.append("%s: levels %r" % (name, lv))
    if not (lv[1]["hits"] <= lv[0]["hits"] and lv[1]["requests"] < lv[0]["requests"]):
        bad.append("%s: level 2 above level 1: %r" % (name, lv))
    if d["preemptions"] == 0 and \
            p["prefill_tokens_computed"] + p["prefill_tokens_saved"] != p["prompt_tokens_admitted"]:
        bad.append("%s: prompt tokens %r" % (name, p))
    if d["arrived"] != d["finished"] + d["dropped"]:
        bad.append("%s: conservation" % name)
    print("%s: level 2 hit rate %.4f, TTFT P50 %.4g ms, P99 %.4g ms" % (
        name, lv[1]["hit_rate"], d["ttft"]["p50_s"] * 1e3, d["ttft"]["p99_s"] * 1e3))
if ll["arrived"] != aff["arrived"]:
    bad.append("not the same requests")
if not aff["prefix"]["level2_hit_rate"] > ll["prefix"]["level2_hit_rate"]:
    bad.append("affinity does not raise the level-2 hit rate")
if not aff["ttft"]["mean_s"] < ll["ttft"]["mean_s"]:
    bad.append("affinity does not lower the mean TTFT")
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
[ "$fail" -eq 0 ] && echo "ok: serve_radix"
exit "$fail"
