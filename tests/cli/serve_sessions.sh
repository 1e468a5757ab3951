#!/bin/sh
# serve_sessions.sh DCSIM SRC - multi-turn sessions in `dcsim serve`
# (docs/serving.md "Multi-turn sessions") on tests/scenarios/serving-sessions.xml:
#   - the run is the same bytes for OMP_NUM_THREADS=1 and 2 (--json, --csv);
#   - <sessions turns="1"> gives the same bytes as no <sessions> at all
#     (text, --json, --csv);
#   - --json's sessions object: 3 turns a session, so follow-ups = 2 x
#     sessions and requests = 3 x sessions (nothing dropped), requests and
#     Little's law conserved; under prefix-affinity every follow-up finds
#     its context (the cache holds them all), under round-robin some do not
#     and the hit tokens fall, and with cache="off" none does;
#   - text and --csv carry the figures; -o's /serve/requests has 3 x
#     sessions rows and /serve's attributes the --json totals.
# (The closed forms are in tests/models/test_serving_session.c.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
scn=$src/tests/scenarios/serving-sessions.xml
py=/usr/bin/python3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
OMP_NUM_THREADS=1 "$dcsim" serve --quiet --json "$scn" > "$tmp/s1.json" &&
OMP_NUM_THREADS=2 "$dcsim" serve --quiet --json "$scn" > "$tmp/s2.json" &&
OMP_NUM_THREADS=1 "$dcsim" serve --quiet --csv "$scn" > "$tmp/s1.csv" &&
OMP_NUM_THREADS=2 "$dcsim" serve --quiet --csv "$scn" > "$tmp/s2.csv" &&
"$dcsim" serve --quiet --json "$scn" --set serving/router/@policy=round-robin > "$tmp/rr.json" &&
"$dcsim" serve --quiet --json "$scn" --set serving/sessions/@cache=off > "$tmp/off.json" &&
"$dcsim" serve --quiet "$scn" -o "$tmp/s.h5" > "$tmp/s.txt" ||
    { echo "FAIL: serve"; fail=1; }
cmp -s "$tmp/s1.json" "$tmp/s2.json" || { echo "FAIL: OMP threads change --json"; fail=1; }
cmp -s "$tmp/s1.csv" "$tmp/s2.csv" || { echo "FAIL: OMP threads change --csv"; fail=1; }
grep -v '<sessions ' "$scn" > "$tmp/none.xml"
for form in "" --json --csv; do
    # shellcheck disable=SC2086 # form is empty for the text
    "$dcsim" serve --quiet $form "$tmp/none.xml" > "$tmp/none.out" &&
    "$dcsim" serve --quiet $form "$scn" --set serving/sessions/@turns=1 > "$tmp/one.out" ||
        { echo "FAIL: serve ${form:-text}"; fail=1; }
    cmp -s "$tmp/none.out" "$tmp/one.out" ||
        { echo "FAIL: turns=1 differs from no <sessions> (${form:-text})"; fail=1; }
done
grep -q '^sessions  *[0-9]* sessions, [0-9]* follow-up turns' "$tmp/s.txt" ||
    { echo "FAIL: text lacks the sessions line"; fail=1; }
head -1 "$tmp/s1.csv" | grep -q 'sessions_followup_hit_tokens' ||
    { echo "FAIL: --csv lacks sessions_followup_hit_tokens"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, os, sys
import h5py
t = sys.argv[1]
load = lambda n: json.load(open(os.path.join(t, n)))
pa, rr, off = load("s1.json"), load("rr.json"), load("off.json")
bad = []
for name, d in (("prefix-affinity", pa), ("round-robin", rr), ("cache off", off)):
    s = d["sessions"]
    if d["arrived"] != d["finished"] + d["dropped"] or d["in_flight"] != 0:
        bad.append("%s: requests not conserved" % name)
    if abs(d["little_l"] - d["little_lambda"] * d["little_w"]) > 1e-9 * d["little_l"]:
        bad.append("%s: Little's law" % name)
    if d["dropped"] or s["followups"] != 2 * s["sessions"] or d["arrived"] != 3 * s["sessions"]:
        bad.append("%s: %d requests, %r" % (name, d["arrived"], s))
    if s["followups_admitted"] != s["followups"] or s["turns"] != 3:
        bad.append("%s: follow-ups %r" % (name, s))
s, r, o = pa["sessions"], rr["sessions"], off["sessions"]
if s["followup_hits"] != s["followups"] or not s["followup_hit_tokens"] > 0.95 * s["followup_context_tokens"]:
    bad.append("prefix-affinity should hit every follow-up: %r" % s)
if not (0 < r["followup_hits"] < r["followups"]) or not r["followup_hit_tokens"] < s["followup_hit_tokens"]:
    bad.append("round-robin should miss some: %r" % r)
if o["followup_hits"] != 0 or o["followup_hit_tokens"] != 0 or o["cache"] != 0:
    bad.append("cache off should never hit: %r" % o)
if not pa["ttft"]["p50_s"] < off["ttft"]["p50_s"]:
    bad.append("cached contexts should cut the P50 TTFT: %g vs %g"
               % (pa["ttft"]["p50_s"], off["ttft"]["p50_s"]))
with h5py.File(os.path.join(t, "s.h5"), "r") as h:
    req = h["serve"]["requests"]
    if len(req) != pa["arrived"]:
        bad.append("/serve/requests has %d rows, %d requests" % (len(req), pa["arrived"]))
    a = h["serve"].attrs
    for k in ("sessions", "followups", "followups_admitted", "followup_hits",
              "followup_context_tokens", "followup_hit_tokens"):
        if a[k] != s[k]:
            bad.append("/serve attribute %s %r, --json %r" % (k, a[k], s[k]))
print("\n".join(bad) if bad else "ok: %d sessions, hits %d/%d (round-robin %d, off 0); P50 TTFT "
      "%.4g ms, off %.4g ms" % (s["sessions"], s["followup_hits"], s["followups"],
                                r["followup_hits"], 1e3 * pa["ttft"]["p50_s"],
                                1e3 * off["ttft"]["p50_s"]))
sys.exit(1 if bad else 0)
PY
[ "$fail" -eq 0 ] && echo "ok: serve_sessions"
exit "$fail"
