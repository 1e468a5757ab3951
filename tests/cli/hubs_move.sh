#!/bin/sh
# hubs_move.sh DCSIM SRC - moving running jobs between hubs (docs/hubs.md
# "Moving running jobs").
# 1. Closed form (tests/scenarios/hubs-move.xml): exactly one move; the
#    second job checkpoints at Shaoguan when the first ends at Gui'an
#    (36,000 s), arrives after its dataset + result (1.5 TB at 10 Gb/s,
#    1,200 s) + the catalog's Shaoguan-Gui'an RTT, and ends there after the
#    600 s restart and the work it had left (72,000 s less what it did
#    since its dataset reached Shaoguan: 800 s + the Guangzhou-Shaoguan RTT).
#    Its result leaves from Gui'an, where it ended, on Gui'an's link.
# 2. Conservation on a stream of deferrable training over three hubs
#    (hubs-move-stream.xml): jobs, reference GPU-h, TB in and out equal the
#    run without moves; busy GPU-h = reference + restarts (one GPU type);
#    the hubs' GPU-h, energy, CO2, moves, move TB sum to the totals; data
#    cost = (TB in + out + moved) x cost per TB; at most max-moves a job,
#    every move to a hub of a lower price x PUE.
# 3. Determinism: the same run twice, byte for byte. move="none" gives
#    exactly the output without the move attributes.
set -u
dcsim=$1
src=$2
fail=0
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/dcsim-hubs-move-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
sc="$src/tests/scenarios"
run() { # name, then dcsim hubs' arguments
    n=$1
    shift
    "$dcsim" hubs --quiet --json "$@" >"$tmp/$n.json" 2>"$tmp/$n.err" ||
        { echo "FAIL: dcsim hubs $*: $(cat "$tmp/$n.err")"; fail=1; }
}
run one "$sc/hubs-move.xml"
run stream "$sc/hubs-move-stream.xml"
run stream2 "$sc/hubs-move-stream.xml"
run off "$sc/hubs-move-stream.xml" --set hubs/@move=none
# the same scenario without the move attributes (beside it: the same folder)
sed -e 's/ move="checkpoint"//' -e 's/ max-moves="[0-9]*"//' -e 's/ restart="[0-9a-z]*"//' \
    "$sc/hubs-move-stream.xml" >"$tmp/plain.xml"
grep -q 'restart=' "$tmp/plain.xml" && { echo "FAIL: the attributes were not dropped"; fail=1; }
run plain "$tmp/plain.xml"
[ $fail = 0 ] || exit 1
cmp -s "$tmp/stream.json" "$tmp/stream2.json" || { echo "FAIL: two runs differ"; fail=1; }
# the scenario's name and the file's folder are the only other differences
$py - "$tmp" "$src" <<'PY' || fail=1
import json, sys, xml.etree.ElementTree as ET
tmp, src = sys.argv[1], sys.argv[2]
load = lambda n: json.load(open("%s/%s.json" % (tmp, n)))
bad = []
rtt = {}
for site in ET.parse(src + "/scenarios/catalog/sites.xml").getroot().iter("site"):
    for r in site.iter("rtt"):
        rtt[(site.get("name"), r.get("to"))] = float(r.get("value").rstrip("ms")) / 1e3
# 1. the closed form
one = load("one")["run"]
mv = one["moves"]
if len(mv) != 1:
    bad.append("closed form: %d moves, expected 1" % len(mv))
else:
    m = mv[0]
    carry = 1.5e12 * 8 / 10e9 + rtt[("shaoguan", "guian")]
    s1 = 1e12 * 8 / 10e9 + rtt[("shaoguan", "guangzhou")]
    want = {"job": 1, "from": "shaoguan", "to": "guian", "checkpoint_s": 36000,
            "arrive_s": 36000 + carry, "start_s": 36000 + carry,
            "end_s": 36000 + carry + 600 + 72000 - (36000 - s1),
            "done_fraction": (36000 - s1) / 72000, "tb": 1.5}
    for k, v in want.items():
        if isinstance(v, str) or k == "job":
            ok = m[k] == v
        else:
            ok = abs(m[k] - v) <= 1e-9 * max(1, abs(v))
        if not ok:
            bad.append("closed form: %s %r, expected %r" % (k, m[k], v))
    t = one["total"]
    if t["moves_in"] != 1 or abs(t["restart_gpu_h"] - 8 * 600 / 3600) > 1e-12:
        bad.append("closed form: moves_in %r restart_gpu_h %r" % (t["moves_in"], t["restart_gpu_h"]))
    want_gpu_h = 8 * (36000 + 72000 + 600) / 3600
    if abs(t["gpu_h"] - want_gpu_h) > 1e-9 * want_gpu_h:
        bad.append("closed form: gpu_h %r, expected %r" % (t["gpu_h"], want_gpu_h))
    if abs(t["data_cost"] - 20 * (1 + 0.5 + 1.5)) > 1e-9:
        bad.append("closed form: data cost %r, expected 60" % t["data_cost"])
    # the dataset came in at Shaoguan; the result leaves Gui'an, where the job
    # ended: 0.5 TB at 10 Gb/s + the Gui'an-Guangzhou RTT on Gui'an's link
    hub = {h["name"]: h for h in one["hubs"]}
    got = [(hub[n]["tb_in"], hub[n]["tb_out"], hub[n]["transfer_s"]) for n in ("shaoguan", "guian")]
    want_t = [(1, 0, s1), (0, 0.5, 0.5e12 * 8 / 10e9 + rtt[("guian", "guangzhou")])]
    for n, g, w in zip(("shaoguan", "guian"), got, want_t):
        if g[:2] != w[:2] or abs(g[2] - w[2]) > 1e-9 * w[2]:
            bad.append("closed form: %s TB in, out, transfer s %r, expected %r" % (n, g, w))
# 2. conservation
doc, off = load("stream"), load("off")
r, o = doc["run"], off["run"]
t = r["total"]
n_moves = len(r["moves"])
if n_moves < 2:
    bad.append("stream: %d moves; the test needs several" % n_moves)
rel = lambda a, b: abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
for k in ("jobs", "ref_gpu_h", "tb_in", "tb_out"):
    if not rel(t[k], o["total"][k]):
        bad.append("stream: total %s %r, without moves %r" % (k, t[k], o["total"][k]))
if not rel(t["gpu_h"], t["ref_gpu_h"] + t["restart_gpu_h"]):
    bad.append("stream: gpu_h %r != ref %r + restarts %r" % (t["gpu_h"], t["ref_gpu_h"], t["restart_gpu_h"]))
for k in ("jobs", "gpu_h", "ref_gpu_h", "it_energy_j", "facility_energy_j", "co2_kg",
          "water_l", "moves_in", "move_tb", "restart_gpu_h", "data_cost", "tb_in", "tb_out"):
    s = sum(h[k] for h in r["hubs"])
    if not rel(s, t[k]):
        bad.append("stream: the hubs' %s sum to %r, total %r" % (k, s, t[k]))
if t["moves_in"] != n_moves or not rel(t["move_tb"], sum(m["tb"] for m in r["moves"])):
    bad.append("stream: moves_in %r / move_tb %r against the moves" % (t["moves_in"], t["move_tb"]))
if not rel(t["data_cost"], 20 * (t["tb_in"] + t["tb_out"] + t["move_tb"])):
    bad.append("stream: data cost %r" % t["data_cost"])
per_job = {}
for m in r["moves"]:
    per_job[m["job"]] = per_job.get(m["job"], 0) + 1
    if not m["checkpoint_s"] <= m["arrive_s"] <= m["start_s"] < m["end_s"]:
        bad.append("stream: a move out of order: %r" % m)
if per_job and max(per_job.values()) > doc["max_moves"]:
    bad.append("stream: a job moved %d times, max-moves %d" % (max(per_job.values()), doc["max_moves"]))
ck = [m["checkpoint_s"] for m in r["moves"]]
if ck != sorted(ck):
    bad.append("stream: the moves' checkpoints are not in time order")
# the baseline (nearest) never moves
if doc["baseline"]["moves"] or doc["baseline"]["total"]["moves_in"]:
    bad.append("stream: the baseline moved")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# move="none" is the run without the attributes, byte for byte but for the
# scenario's folder (the trace path is not printed in --json)
cmp -s "$tmp/off.json" "$tmp/plain.json" || {
    echo "FAIL: move=\"none\" differs from the run without the attributes"
    diff "$tmp/off.json" "$tmp/plain.json" | head -5
    fail=1
}
[ $fail = 0 ] && echo "ok: hubs moves"
exit $fail
