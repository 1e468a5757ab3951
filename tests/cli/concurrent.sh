#!/bin/sh
# concurrent.sh DCSIM SRC - `dcsim step --concurrent` on the shipped
# concurrency example (docs/step.md, "The concurrent iteration"): it names
# its model, changes the iteration against the isolated one, lists the links
# where PP and DP traffic overlapped (each with both > 0 and no more than
# either class alone), gives the same in JSON with the link utilisation per
# time bin (which the Perfetto trace's counters follow), is repeatable byte
# for byte, and refuses --analytic with it. The flow log: --flow-log's JSON
# "flows" are the Perfetto trace's flow events (every PP send of every
# replica, boundary, micro-batch and direction; each within the iteration
# but the hidden parameter gathers,
# a replica's forward sends starting at its forwards' ends, lanes without
# overlap), their bytes per tier the fabric's; a cap truncates and says so;
# /step/flows of `dcsim run -o --flow-log N` holds the same rows. The MoE
# example's expert all-to-alls run as flows (counted and weighed below).
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/concurrency-leafspine.xml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect "concurrent model named" 0 "^iteration *[0-9.]* s (concurrent flow network model)" \
    "$dcsim" step "$ex" --concurrent
expect "overlap table" 0 "^links where kinds of traffic overlapped" \
    "$dcsim" step "$ex" --concurrent
expect "both refused" 2 "choose one network model" "$dcsim" step "$ex" --concurrent --analytic
# SM sharing (docs/step.md "SM sharing in the schedule"): fed into the tasks
# by default, at the stage's end with --sm-stage-end or sm-sharing="stage-end";
# the fed iteration is longer here (slowed last backwards delay the stages
# below them in the cool-down) and says so
expect "SM sharing in the schedule" 0 "^  sm-contention-dp .*slowing the tasks it overlapped)" \
    "$dcsim" step "$ex" --concurrent
expect "SM sharing at the stage end" 0 "^  sm-contention-dp .*added at the stage's end)" \
    "$dcsim" step "$ex" --concurrent --sm-stage-end
sed 's|<job>|<job><step sm-sharing="stage-end"/>|' "$ex" >"$tmp/sm.xml"
"$dcsim" step "$tmp/sm.xml" --concurrent --json >"$tmp/sm-attr.json" &&
    "$dcsim" step "$ex" --concurrent --sm-stage-end --json >"$tmp/sm-flag.json" ||
    { echo "FAIL a step run with SMs at the stage end failed"; fail=$((fail + 1)); }
cmp -s "$tmp/sm-attr.json" "$tmp/sm-flag.json" ||
    { echo "FAIL sm-sharing=\"stage-end\" and --sm-stage-end differ"; fail=$((fail + 1)); }
grep -q '"dp_sm_sharing":[[:space:]]*"stage-end"' "$tmp/sm-flag.json" ||
    { echo "FAIL JSON dp_sm_sharing is not stage-end"; fail=$((fail + 1)); }
sed 's|<job>|<job><step sm-sharing="later"/>|' "$ex" >"$tmp/sm-bad.xml"
expect "sm-sharing bad value" 2 "sm-sharing" "$dcsim" validate "$tmp/sm-bad.xml"
"$dcsim" step "$ex" --concurrent --json >"$tmp/a.json" &&
    "$dcsim" step "$ex" --concurrent --json >"$tmp/b.json" &&
    "$dcsim" step "$ex" --json >"$tmp/iso.json" &&
    "$dcsim" step "$ex" --concurrent --perfetto "$tmp/trace.json" >/dev/null ||
    { echo "FAIL a step run failed"; fail=$((fail + 1)); }
cmp -s "$tmp/a.json" "$tmp/b.json" || { echo "FAIL two concurrent runs differ"; fail=$((fail + 1)); }
grep -q '"dp_sm_sharing":[[:space:]]*"schedule"' "$tmp/a.json" ||
    { echo "FAIL JSON dp_sm_sharing is not schedule by default"; fail=$((fail + 1)); }
"$dcsim" step "$ex" --concurrent --flow-log 100000 --json >"$tmp/flows.json" ||
    { echo "FAIL step --flow-log"; fail=$((fail + 1)); }
expect "flow log truncated" 0 "^flows *flow log truncated at 10 flows (of 10752;" \
    "$dcsim" step "$ex" --concurrent --flow-log 10
expect "flow log bad count" 2 "--flow-log needs a whole number" \
    "$dcsim" step "$ex" --concurrent --flow-log 1e3
"$dcsim" step "$ex" --concurrent --flow-log 10 --perfetto "$tmp/cut.json" >/dev/null \
    2>"$tmp/cut.err" || { echo "FAIL step --perfetto --flow-log 10"; fail=$((fail + 1)); }
grep -q "^dcsim step: note: flow log truncated at 10 flows" "$tmp/cut.err" ||
    { echo "FAIL no truncation note"; fail=$((fail + 1)); }
sed 's|  </job>|    <step network="concurrent"/>\n  </job>|' "$ex" >"$tmp/c.xml"
"$dcsim" run --quiet "$tmp/c.xml" -o "$tmp/c.h5" --flow-log 100000 >/dev/null ||
    { echo "FAIL run --flow-log"; fail=$((fail + 1)); }
"$dcsim" run --quiet "$tmp/c.xml" -o "$tmp/plain.h5" >/dev/null &&
    /usr/bin/python3 -c 'import h5py, sys; assert "flows" not in h5py.File(sys.argv[1])["step"]' \
        "$tmp/plain.h5" || { echo "FAIL /step/flows without --flow-log"; fail=$((fail + 1)); }
/usr/bin/python3 - "$tmp" <<'PY' || fail=$((fail + 1))
import json, sys
t = sys.argv[1]
a = json.load(open(f"{t}/a.json"))
iso = json.load(open(f"{t}/iso.json"))
assert "overlap_links" not in iso, "the isolated iteration has no overlap table"
assert a["iteration_s"] != iso["iteration_s"], "concurrency changed nothing"
links = a["overlap_links"]
assert 1 <= len(links) <= 8, len(links)
for l in links:
    assert 0 < l["both_s"] <= min(l["pp_s"], l["dp_s"]) + 1e-12, l
    assert 0 <= l["utilisation"] <= 1, l
u = a["utilisation_over_time"]
n = len(u["leaf-spine"]["peak"])
assert n * u["bin_s"] >= a["iteration_s"], (n, u["bin_s"])
assert max(u["leaf-spine"]["peak"]) > 0.5, "the DP reductions fill some uplink"
assert all(0 <= m <= p <= 1 + 1e-9 for m, p in zip(u["leaf-spine"]["mean"], u["leaf-spine"]["peak"]))
tr = json.load(open(f"{t}/trace.json"))
cs = [e for e in tr["traceEvents"] if e.get("ph") == "C" and e["name"].startswith("leaf-spine")]
assert len(cs) == n + 1, (len(cs), n)
assert [round(e["args"]["peak"], 6) for e in cs[:-1]] == [round(100 * x, 6) for x in u["leaf-spine"]["peak"]]
both = [l["both_s"] for l in links]
assert both == sorted(both, reverse=True), both
parts = sum(a["critical_stage_s"].values())
assert abs(parts - a["iteration_s"]) <= 1e-9 * a["iteration_s"], (parts, a["iteration_s"])
# the flow log
assert "flows" not in a, "flows only when asked for"
fl = json.load(open(f"{t}/flows.json"))
flows = fl["flows"]
it = fl["iteration_s"]
assert it == a["iteration_s"] and not fl["flows_truncated"] and fl["flows_total"] == len(flows)
stages = tr["otherData"]["stages"]
assert tr["otherData"]["flows"] == len(flows) and not tr["otherData"]["flows_truncated"]
tasks = [e for e in tr["traceEvents"] if e.get("cat") in ("forward", "backward")]
mb = sum(1 for e in tasks if e["pid"] == 0 and e["cat"] == "forward")
pp = [f for f in flows if f["kind"] == "pp"]
replicas = {f["replica"] for f in pp}
assert replicas == set(range(32)), sorted(replicas)  # DP 32
assert len(pp) == len(replicas) * (stages - 1) * mb * 2, (len(pp), stages, mb)
keys = {(f["replica"], f["stage"], f["microbatch"], f["backward"]) for f in pp}
assert len(keys) == len(pp), "one send per replica, boundary, micro-batch, direction"
assert {f["kind"] for f in flows} == {"pp", "dp", "gather"}
dp_end = {}
for f in flows:
    assert 0 <= f["start_s"] <= f["end_s"], f
    if f["kind"] != "gather":
        assert f["end_s"] <= it, f
    if f["kind"] == "dp":
        dp_end[f["stage"]] = max(dp_end.get(f["stage"], 0), f["end_s"])
late = 0
for f in flows:  # a stage's gathers follow its reduction and optimizer; hidden ones may end late
    if f["kind"] == "gather":
        assert f["start_s"] > dp_end[f["stage"]], f
        late += f["end_s"] > it
    assert f["bytes"] > 0 and sum(f["tier_bytes"].values()) >= f["bytes"] * (1 - 1e-12), f
assert late > 0, "overlap-param-gather hides the last gathers behind the next forward"
for tier in ("host-leaf", "leaf-spine", "spine-core/global"):  # TP stays in the node
    got = sum(f["tier_bytes"][tier] for f in flows)
    assert abs(got - fl["fabric_bytes"][tier]) <= 1e-9 * max(1, got), (tier, got)
fx = [e for e in tr["traceEvents"] if e.get("cat", "").startswith("flow-")]
assert len(fx) == len(flows), (len(fx), len(flows))
for e, f in zip(sorted(fx, key=lambda e: (e["ts"], e["pid"])), sorted(flows, key=lambda f: f["start_s"])):
    assert abs(e["ts"] - 1e6 * f["start_s"]) <= 1e-6 * max(1, e["ts"]), (e, f)
assert {e["pid"] for e in fx} == {stages + 1, stages + 2, stages + 3}
lanes = {}
for e in fx:
    lanes.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
for spans in lanes.values():
    spans.sort()
    for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
        assert s1 >= e0 - 1e-6, "a lane's flows never overlap"
# the Gantt replica's forward sends leave at its forwards' ends
fwd_end = {(e["pid"], e["args"]["microbatch"]): e["ts"] + e["dur"] for e in tasks
           if e["cat"] == "forward" and e["pid"] < stages - 1}
def follows(r):
    sends = [e for e in fx if e["cat"] == "flow-pp" and e["args"]["replica"] == r
             and not e["args"]["backward"]]
    return all(abs(e["ts"] - fwd_end[(e["args"]["stage"], e["args"]["microbatch"])]) <= 1e-3
               for e in sends)
assert any(follows(r) for r in sorted(replicas)), "no replica's sends follow the Gantt chart"
cut = json.load(open(f"{t}/cut.json"))
assert cut["otherData"]["flows"] == 10 and cut["otherData"]["flows_truncated"]
assert cut["otherData"]["flows_total"] == len(flows)
assert sum(1 for e in cut["traceEvents"] if e.get("cat", "").startswith("flow-")) == 10
import h5py
h = h5py.File(f"{t}/c.h5", "r")["step/flows"]
assert h.shape == (len(flows),) and len(h.dtype.names) == 17
assert int(h.attrs["flows_total"]) == len(flows) and int(h.attrs["truncated"]) == 0
kinds = {v: k for k, v in h5py.check_enum_dtype(h.dtype["kind"]).items()}
rows = h[()]
for r, f in zip(rows, flows):  # the run's step tier: the same to rounding
    for c in ("start_s", "end_s"):
        assert abs(r[c] - f[c]) <= 1e-12 * it, (c, r, f)
    assert r["bytes"] == f["bytes"] and r["src"] == f["src"]
    assert kinds[int(r["kind"])] == f["kind"], (r, f)
print(f"flow log: {len(pp)} PP sends, {len(flows) - len(pp)} DP and gather flows, "
      f"{late} gather flows past the iteration's end")
print(f"concurrent {a['iteration_s']:.6f} s vs isolated {iso['iteration_s']:.6f} s; "
      f"longest PP/DP overlap {both[0]:.4g} s on link {links[0]['link']}")
PY

# expert all-to-alls as flows (docs/step.md, "TP, CP and EP on the shared
# net"): the MoE example's EP groups span four nodes; every all-to-all of
# every group, segment, task and stage is in the log, with the job's bytes,
# and the Perfetto trace draws them; the contention they meet is EP's
moe=$src/scenarios/examples/moe-alltoall-leafspine.xml
expect "EP as flows" 0 "^task flows *EP collectives cross scale-up domains" \
    "$dcsim" step "$moe" --concurrent
"$dcsim" step "$moe" --concurrent --json --flow-log 300000 >"$tmp/moe.json" 2>/dev/null &&
    "$dcsim" step "$moe" --json >"$tmp/moe-iso.json" 2>/dev/null &&
    "$dcsim" step "$moe" --concurrent --flow-log 300000 --perfetto "$tmp/moe-trace.json" \
        >/dev/null 2>&1 || { echo "FAIL the MoE example's step runs"; fail=$((fail + 1)); }
/usr/bin/python3 - "$tmp" <<'PY' || fail=$((fail + 1))
import json, sys
t = sys.argv[1]
a = json.load(open(f"{t}/moe.json"))
iso = json.load(open(f"{t}/moe-iso.json"))
tr = json.load(open(f"{t}/moe-trace.json"))
assert a["collectives_as_flows"]["kinds"] == ["ep"]
assert a["collectives_as_flows"]["max_segments_per_task"] == 16
ep = [f for f in a["flows"] if f["kind"] == "ep"]
assert not a["flows_truncated"]
# the example: TP 4, PP 4, EP 8, DP 32, 16 micro-batches, 8 MoE layers a stage;
# a task's 2 x 8 all-to-alls are 16 segments of one; each all-to-all of ep
# ranks is ep coupled flows (one per sender), for each of the 4 tensor ranks
tp, pp, ep_n, dp, m = 4, 4, 8, 32, 16
assert len(ep) == (dp // ep_n) * pp * (2 * m) * 16 * tp * ep_n, len(ep)
a2a = 4096 * 2 * 4096 * 2  # tokens x top-k x hidden x 2 B, one all-to-all
want = (ep_n - 1) * a2a * (2 * 8 * 2) * m * tp * (dp // ep_n) * pp
got = sum(f["bytes"] for f in ep)
assert abs(got - want) <= 1e-9 * want, (got, want)
assert all(f["start_s"] <= f["end_s"] <= a["iteration_s"] for f in ep)
assert a["iteration_s"] > iso["iteration_s"]
assert a["critical_stage_s"]["ep"] > iso["critical_stage_s"]["ep"] * 1.01
drawn = [e for e in tr["traceEvents"] if e.get("cat") == "flow-ep"]
assert len(drawn) == len(ep)
assert any(l["tp_cp_ep_s"] > 0 and l["both_s"] > 0 for l in a["overlap_links"])
print(f"MoE example: {len(ep)} EP flows; concurrent {a['iteration_s']:.6f} s "
      f"(EP {a['critical_stage_s']['ep']:.4f} s) vs isolated {iso['iteration_s']:.6f} s "
      f"(EP {iso['critical_stage_s']['ep']:.4f} s)")
PY
[ "$fail" -eq 0 ] && echo "ok: concurrent"
exit "$fail"
