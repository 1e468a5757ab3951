#!/bin/sh
# serve_fetch.sh DCSIM SRC - remote KV fetch in `dcsim serve` (docs/serving.md
# "Remote KV fetch"), on tests/scenarios/serving-fetch.xml (chat sessions on
# 4 TP4 replicas over 2 nodes, least-loaded):
#   - remote="off" is the scenario without <kv>, text and --json byte for
#     byte (the option off changes nothing);
#   - the fetch run is the same bytes for OMP_NUM_THREADS=1 and 4;
#   - it conserves requests (arrived = finished + dropped, none in flight)
#     and Little's law, fetches (bytes = tokens x KV bytes per token), and
#     leaves more context tokens not prefilled and a lower follow-up P99
#     TTFT than off; the sessions are the same;
#   - the text's setup and figures lines; prefix-affinity, which sends
#     every follow-up to its context, fetches nothing and gives the run
#     without the fetch figure for figure.
# (The closed forms are in tests/models/test_serving_fetch.c; the refusals
# in tests/bad/serve_fetch_*.case.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
scn=$src/tests/scenarios/serving-fetch.xml
py=/usr/bin/python3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
sed '/<kv remote/d' "$scn" > "$tmp/nokv.xml"
for form in "" "--json"; do
    "$dcsim" serve --quiet $form "$scn" --set serving/kv/@remote=off > "$tmp/off$form.out" &&
    "$dcsim" serve --quiet $form "$tmp/nokv.xml" > "$tmp/nokv$form.out" ||
        { echo "FAIL: serve $form"; fail=1; }
    cmp -s "$tmp/off$form.out" "$tmp/nokv$form.out" ||
        { echo "FAIL: remote=off differs from no <kv> ($form)"; fail=1; }
done
OMP_NUM_THREADS=1 "$dcsim" serve --quiet --json "$scn" > "$tmp/fetch1.json" &&
OMP_NUM_THREADS=4 "$dcsim" serve --quiet --json "$scn" > "$tmp/fetch4.json" &&
"$dcsim" serve --quiet --json "$scn" --set serving/router/@policy=prefix-affinity \
    > "$tmp/affinity.json" &&
"$dcsim" serve --quiet --json "$scn" --set serving/router/@policy=prefix-affinity \
    --set serving/kv/@remote=off > "$tmp/affinity_off.json" ||
    { echo "FAIL: serve --json"; fail=1; }
cmp -s "$tmp/fetch1.json" "$tmp/fetch4.json" || { echo "FAIL: OMP threads change the run"; fail=1; }
expect "setup line" 0 "^remote KV  a replica missing a cached context .* over nvlink4, ib-ndr" \
    "$dcsim" serve --quiet "$scn"
expect "figures line" 0 "^remote     [1-9][0-9]* requests fetched cached KV" \
    "$dcsim" serve --quiet "$scn"
$py - "$tmp" <<'PY' || fail=1
import json, os, sys
t = sys.argv[1]
load = lambda n: json.load(open(os.path.join(t, n)))
on, off = load("fetch1.json"), load("off--json.out")
aff, aff_off = load("affinity.json"), load("affinity_off.json")
bad = []
for name, d in (("fetch", on), ("off", off), ("affinity", aff)):
    if d["arrived"] != d["finished"] + d["dropped"] or d["in_flight"] != 0:
        bad.append("%s: requests not conserved" % name)
    if abs(d["little_l"] - d["little_lambda"] * d["little_w"]) > 1e-9 * d["little_l"]:
        bad.append("%s: Little's law" % name)
f = on["remote_fetch"]
if "remote_fetch" in off:
    bad.append("remote_fetch reported when off")
if not f["fetches"] > 100:
    bad.append("too few fetches: %r" % f)
if abs(f["bytes"] - f["tokens"] * on["kv_bytes_per_token"]) > 1e-9 * f["bytes"]:
    bad.append("bytes %r != tokens x %r" % (f, on["kv_bytes_per_token"]))
if not 0 < f["mean_s"] <= f["max_s"]:
    bad.append("fetch times %r" % f)
s_on, s_off = on["sessions"], off["sessions"]
if s_on["sessions"] != s_off["sessions"]:
    bad.append("sessions differ: %r %r" % (s_on["sessions"], s_off["sessions"]))
if not s_on["hit_tokens_share"] > s_off["hit_tokens_share"]:
    bad.append("hit share %r <= %r" % (s_on["hit_tokens_share"], s_off["hit_tokens_share"]))
if not s_on["ttft_followup_p99_s"] < s_off["ttft_followup_p99_s"]:
    bad.append("follow-up P99 TTFT %r >= %r" % (s_on["ttft_followup_p99_s"],
                                                s_off["ttft_followup_p99_s"]))
if aff["remote_fetch"]["fetches"] != 0:
    bad.append("prefix-affinity fetched: %r" % aff["remote_fetch"])
for k in ("ttft", "tpot", "e2e", "end_s", "finished", "sessions"):
    if aff[k] != aff_off[k]:
        bad.append("prefix-affinity with and without the fetch differ in %s" % k)
print("\n".join(bad) if bad else
      "ok: %d fetches, %.3g GB, follow-up P99 TTFT %.4g ms against %.4g ms off" %
      (f["fetches"], f["bytes"] / 1e9, s_on["ttft_followup_p99_s"] * 1e3,
       s_off["ttft_followup_p99_s"] * 1e3))
sys.exit(1 if bad else 0)
PY
[ "$fail" -eq 0 ] && echo "ok: serve_fetch"
exit "$fail"
