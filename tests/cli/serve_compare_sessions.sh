#!/bin/sh
# serve_compare_sessions.sh DCSIM SRC - the session columns of `dcsim
# compare` and `dcsim sweep` over serving scenarios and of `dcsim serve -o`
# (docs/serving.md "Multi-turn sessions"), on
# tests/scenarios/serving-sessions.xml (Llama 3 70B, window 8,192 tokens)
# with turns 1 (no sessions) and 8 under truncate refuse and oldest:
#   - every row of compare's --json, --csv and -o's /compare, and of a
#     sweep's --json and /serve_sweep, equals `dcsim serve --json --set
#     ...` of that variant in every column (the sessions_* ones from its
#     "sessions" object, 0 for turns 1, which has none), bit for bit;
#   - a compare of variants without sessions has no sessions_* column and
#     no sessions block in the text, one with them has both;
#   - 8 turns cross the window: refuse refuses some turns and truncates
#     none, oldest the reverse; sessions = finished + cut;
#   - serve -o's /serve/requests: a row per turn with its session and turn,
#     the refusals, truncated tokens, context hits and follow-ups counted
#     as --json counts them, turn k of a session carrying k - 1 turns of
#     context (as far as it fits), the TTFT of first turns and follow-ups
#     at P50/P90/P99 by nearest rank equal to --json's (to the ulp the
#     JSON prints).
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
scn=$src/tests/scenarios/serving-sessions.xml
tmp=$(mktemp -d /tmp/dcsim-serve-compare-sessions-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
short="serving/arrivals/@duration=30s"
vary="--vary serving/sessions/@truncate=refuse,oldest --vary serving/sessions/@turns=1,8"
# shellcheck disable=SC2086 # vary is two options
"$dcsim" compare "$scn" --json --set "$short" $vary -o "$tmp/c.h5" >"$tmp/c.json" &&
"$dcsim" compare "$scn" --csv --set "$short" $vary >"$tmp/c.csv" &&
"$dcsim" compare "$scn" --set "$short" $vary >"$tmp/c.txt" &&
"$dcsim" compare "$scn" --json --set "$short" --set serving/sessions/@turns=1 \
    --vary serving/arrivals/@rate=1/s,2/s >"$tmp/none.json" &&
"$dcsim" compare "$scn" --set "$short" --set serving/sessions/@turns=1 \
    --vary serving/arrivals/@rate=1/s,2/s >"$tmp/none.txt" ||
    { echo "FAIL: compare"; fail=1; }
for t in refuse oldest; do
    for n in 1 8; do
        "$dcsim" serve --quiet --json "$scn" --set "$short" --set serving/sessions/@truncate=$t \
            --set serving/sessions/@turns=$n >"$tmp/serve_${t}_$n.json" || fail=1
    done
    "$dcsim" serve --quiet --json "$scn" --set "$short" --set serving/sessions/@truncate=$t \
        --set serving/sessions/@turns=8 -o "$tmp/r_$t.h5" >"$tmp/r_$t.json" || fail=1
done
grid="--grid serving/sessions/@truncate=refuse,oldest --grid serving/sessions/@turns=1,8"
# shellcheck disable=SC2086 # grid is two options
"$dcsim" sweep --quiet --json "$scn" --set "$short" $grid -o "$tmp/s.h5" >"$tmp/s.json" ||
    { echo "FAIL: sweep"; fail=1; }
grep -q "TTFT fup" "$tmp/c.txt" || { echo "FAIL: text lacks the sessions block"; fail=1; }
grep -q "TTFT fup" "$tmp/none.txt" && { echo "FAIL: sessions block without sessions"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import csv, json, math, sys
import h5py
tmp = sys.argv[1]
bad = []
NAMES = ["sessions", "followups", "followups_admitted", "followup_hits",
         "followup_context_tokens", "followup_hit_tokens", "sessions_finished", "sessions_cut",
         "turns_mean", "hit_tokens_share", "turns_truncated", "truncated_tokens",
         "turns_refused"] + ["ttft_%s_%s_s" % (g, q) for g in ("first", "followup")
                             for q in ("mean", "p50", "p90", "p99")]
COLS = ["sessions_" + n for n in NAMES]


def want_of(s):
    """dcsim serve --json's figures under compare's column names"""
    w = {k: s[k] for k in ("arrived", "finished", "dropped", "preemptions", "end_s",
                           "requests_per_s", "output_tokens_per_s", "kv_util_mean")}
    for m in ("ttft", "tpot", "e2e"):
        for q in ("p50", "p90", "p99"):
            w["%s_%s_s" % (m, q)] = s[m][q + "_s"]
    se = s.get("sessions", {})
    for n in NAMES:
        w["sessions_" + n] = se.get(n, 0)
    return w


order = [(t, n) for t in ("refuse", "oldest") for n in (1, 8)]
serve = {tn: json.load(open("%s/serve_%s_%d.json" % ((tmp,) + tn))) for tn in order}
ref, old = serve[("refuse", 8)]["sessions"], serve[("oldest", 8)]["sessions"]
if "sessions" in serve[("refuse", 1)]:
    bad.append("turns 1 has a sessions object")
if not (ref["turns_refused"] > 0 and ref["turns_truncated"] == 0):
    bad.append("refuse: %d refused, %d truncated" % (ref["turns_refused"], ref["turns_truncated"]))
if not (old["turns_truncated"] > 0 and old["turns_refused"] == 0):
    bad.append("oldest: %d refused, %d truncated" % (old["turns_refused"], old["turns_truncated"]))
for s in (ref, old):
    if s["sessions"] != s["sessions_finished"] + s["sessions_cut"]:
        bad.append("sessions %d != finished + cut" % s["sessions"])
for name in ("c", "s"):
    d = json.load(open(f"{tmp}/{name}.json"))
    v = d["variants"]
    if len(v) != 4:
        bad.append("%s: %d rows" % (name, len(v)))
        continue
    for k in COLS:
        want_u = "s" if k.endswith("_s") else "1"
        if d["units"].get(k) != want_u:
            bad.append("%s: unit of %s %r" % (name, k, d["units"].get(k)))
    for x, tn in zip(v, order):
        for k, w in want_of(serve[tn]).items():
            if x.get(k) != w:
                bad.append("%s %s %s: compare %r, serve %r" % (name, tn, k, x.get(k), w))
    path, ds = (f"{tmp}/c.h5", "compare") if name == "c" else (f"{tmp}/s.h5", "serve_sweep")
    with h5py.File(path, "r") as f:
        t = f[ds][()]
    for i, x in enumerate(v):
        for k in COLS:
            if abs(t[i][k] - x[k]) > 2.3e-16 * abs(x[k]):
                bad.append("%s table row %d %s: %r, json %r" % (name, i, k, t[i][k], x[k]))
rows = list(csv.DictReader(open(f"{tmp}/c.csv")))
cj = json.load(open(f"{tmp}/c.json"))["variants"]
for row, x in zip(rows, cj):
    for k in COLS:
        if abs(float(row[k]) - x[k]) > 2.3e-16 * abs(x[k]):
            bad.append("csv %s %s: %r, json %r" % (row["variant"], k, row[k], x[k]))
none = json.load(open(f"{tmp}/none.json"))
if any(k.startswith("sessions_") for k in none["units"]):
    bad.append("a compare without sessions has sessions_* columns")


def nearest(v, p):
    v = sorted(v)
    return v[max(1, math.ceil(p * len(v))) - 1]


for t in ("refuse", "oldest"):
    d = json.load(open(f"{tmp}/r_{t}.json"))
    s = d["sessions"]
    with h5py.File(f"{tmp}/r_{t}.h5", "r") as f:
        r = f["serve/requests"][()]
        attrs = dict(f["serve"].attrs)
    if len(r) != d["arrived"]:
        bad.append("%s: %d rows, %d arrived" % (t, len(r), d["arrived"]))
    first = [x["first_token_s"] - x["arrival_s"] for x in r if not x["dropped"] and x["turn"] == 1]
    fup = [x["first_token_s"] - x["arrival_s"] for x in r if not x["dropped"] and x["turn"] > 1]
    for g, vals in (("first", first), ("followup", fup)):
        for q, p in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
            got = s["ttft_%s_%s_s" % (g, q)]  # the JSON prints to an ulp
            if abs(nearest(vals, p) - got) > 2.3e-16 * abs(got):
                bad.append("%s: ttft_%s_%s_s %r, rows %r" % (t, g, q,
                           s["ttft_%s_%s_s" % (g, q)], nearest(vals, p)))
    counts = {"turns_refused": int(r["refused"].sum()),
              "turns_truncated": int(((r["truncated_tokens"] > 0) & (r["refused"] == 0)).sum()),
              "followups": int((r["turn"] > 1).sum()),
              "sessions": len(set(r["session"].tolist())),
              "followup_hits": int(((r["turn"] > 1) & (r["context_hit"] == 1)).sum())}
    cut = float(r["truncated_tokens"][r["refused"] == 0].sum())
    if cut != s["truncated_tokens"] or attrs["truncated_tokens"] != cut:
        bad.append("%s: truncated tokens rows %r, json %r" % (t, cut, s["truncated_tokens"]))
    for k, n in counts.items():
        if n != s[k] or (k in attrs and attrs[k] != n):
            bad.append("%s: %s rows %d, json %r" % (t, k, n, s[k]))
    # a session's turns are 1, 2, ... in arrival order; an untruncated turn k
    # carries the previous turn's prompt and output
    last = {}
    for x in r:
        k = int(x["session"])
        if int(x["turn"]) != last.get(k, (0, 0, 0))[0] + 1:
            bad.append("%s: session %d turn %d after %d" % (t, k, x["turn"], last[k][0]))
        if x["turn"] > 1 and not x["refused"] and not x["truncated_tokens"] and \
                x["context_tokens"] != last[k][1] + last[k][2]:
            bad.append("%s: session %d turn %d context %d" % (t, k, x["turn"],
                                                             x["context_tokens"]))
        if x["prompt"] + x["output"] > 8192 and x["turn"] > 1 and not x["refused"]:
            bad.append("%s: a follow-up over the window" % t)
        last[k] = (int(x["turn"]), int(x["prompt"]), int(x["output"]))
print("\n".join(bad) if bad else
      "ok: session columns = dcsim serve --json (refuse: %d refused; oldest: %d truncated, "
      "%.0f tokens cut); rows = totals" % (ref["turns_refused"], old["turns_truncated"],
                                          old["truncated_tokens"]))
sys.exit(1 if bad else 0)
PY
[ "$fail" -eq 0 ] && echo "ok: serve_compare_sessions"
exit "$fail"
