#!/bin/sh
# hubs_model.sh DCSIM SRC - a <traffic> class given by a model at the hubs
# (docs/hubs.md "Traffic from the step tier at a hub"): each hub derives
# the profiles of its jobs' sizes on its own fabric, as `dcsim cluster`
# does on the cluster's. One hub with all the demand (hubs-one-fabric.xml)
# and the 1.7B GPT of cluster-interference-model.xml is `dcsim cluster` of
# the same stream and traffic: digest, end, wait P90, flow simulations
# and flows bit for bit, interference GPU-h to 1e-12 (summed in another
# order). Before, `dcsim hubs`
# refused such a class at its first job. The same with
# keys="interfered-size-load" (the slowdown by job size and load, docs/hubs.md
# "Interference by job size and load"): one hub's placement cannot change.
set -u
dcsim=$1
src=$2
fail=0
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/dcsim-hubs-model-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
traffic='<traffic model="megatron-gpt-1.7b" micro-batch="1" global-batch="192" tp="2"><class from-gpus="32" pp="2"/></traffic>'
sed "s#</cluster-jobs>#$traffic</cluster-jobs>#" "$src/tests/scenarios/hubs-one-fabric.xml" \
    >"$tmp/model.xml"
grep -q 'traffic model=' "$tmp/model.xml" || { echo "FAIL: no traffic inserted"; exit 1; }
"$dcsim" hubs --quiet --json "$tmp/model.xml" >"$tmp/hubs.json" 2>"$tmp/hubs.err" ||
    { echo "FAIL: dcsim hubs: $(cat "$tmp/hubs.err")"; fail=1; }
"$dcsim" cluster --quiet --json "$tmp/model.xml" >"$tmp/cluster.json" 2>"$tmp/cluster.err" ||
    { echo "FAIL: dcsim cluster: $(cat "$tmp/cluster.err")"; fail=1; }
"$dcsim" hubs --quiet --json "$tmp/model.xml" --set hubs/@keys=interfered-size-load \
    >"$tmp/hubs_sl.json" 2>"$tmp/hubs_sl.err" ||
    { echo "FAIL: dcsim hubs keys=interfered-size-load: $(cat "$tmp/hubs_sl.err")"; fail=1; }
[ $fail = 0 ] || exit 1
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
load = lambda n: json.load(open("%s/%s.json" % (tmp, n)))
c = load("cluster")
i = c["interference"]
bad = []
for run in ("hubs", "hubs_sl"):
    h = load(run)["run"]["hubs"][0]
    if run == "hubs_sl" and not h.get("interference_key_table"):
        bad.append("keys=interfered-size-load: no table")
    if not i.get("from_step_tier"):
        bad.append(run + ": dcsim cluster derived no profile: the test needs the model class")
    if not i["cost_gpu_h"] > 0:
        bad.append(run + ": no interference: the test needs some")
    # the same terms summed in another order (the hubs by end time, the cluster
    # tier by job): equal to rounding, not to the bit
    a, b = h["interference_gpu_h"], i["cost_gpu_h"]
    if not abs(a - b) <= 1e-12 * abs(b):
        bad.append(run + ": interference GPU-h: hubs %r, cluster %r" % (a, b))
    pairs = [("digest", h["digest"], c["digest"]), ("end_s", h["end_s"], c["end_s"]),
             ("wait p90", h["wait_s"]["p90"], c["wait_s"]["p90"]),
             ("simulations", h["interference_simulations"], i["simulations"]),
             ("flows", h["interference_flows"], i["flows"])]
    for what, a, b in pairs:
        if a != b:
            bad.append("%s: %s: hubs %r, cluster %r" % (run, what, a, b))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
exit $fail
