#!/bin/sh
# hubs_fabric_kinds.sh DCSIM SRC - a fabric of its own at a hub (<hub><fabric>,
# docs/hubs.md "A fabric of its own at a hub"). One hub with all the demand
# and its own fat-tree (hubs-one-fabric.xml, whose <cluster><fabric> is a
# 3:1 leaf-spine) is `dcsim cluster` of the same stream with that fat-tree as
# its <cluster><fabric>, bit for bit (digest, end, waits, interference
# GPU-h, flow simulations, flows); a hub's own <fabric> equal to the
# <cluster><fabric> gives the document without it exactly; on
# hubs-two-fabric-kinds.xml each hub's run.hubs[].fabric names its kind, the
# text lists them, and keys="interfered" moves work from the leaf-spine hub
# (Gui'an: its measured slowdown above 1) to the fat-tree one.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/dcsim-hubs-kinds-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
one=$src/tests/scenarios/hubs-one-fabric.xml
kinds=$src/tests/scenarios/hubs-two-fabric-kinds.xml
ft='<fabric topology="fat-tree" link="roce-400g" k="16" gpus-per-node="8"/>'
ls='<fabric topology="leaf-spine" link="roce-400g" radix="64" oversubscription="3:1" gpus-per-node="8"/>'
hub='<hub name="zhongwei" gpus="768" start-month="3" cooling="direct-liquid"/>'
open_hub='<hub name="zhongwei" gpus="768" start-month="3" cooling="direct-liquid">'
sed "s#$hub#$open_hub$ft</hub>#" "$one" >"$tmp/hub-ft.xml"
sed "s#$hub#$open_hub$ls</hub>#" "$one" >"$tmp/hub-same.xml"
$py - "$one" "$tmp/cl-ft.xml" "$ft" <<'PY' || fail=1
import re, sys
s = open(sys.argv[1]).read()
t, n = re.subn(r'<fabric topology="leaf-spine"[^>]*/>', sys.argv[3], s, flags=re.S)
open(sys.argv[2], "w").write(t)
sys.exit(0 if n == 1 else 1)
PY
for f in hub-ft hub-same; do
    grep -q "</hub>" "$tmp/$f.xml" || { echo "FAIL: $f: the hub has no fabric"; fail=1; }
    "$dcsim" hubs --quiet --json "$tmp/$f.xml" >"$tmp/$f.json" || { echo "FAIL: hubs $f"; fail=1; }
done
"$dcsim" hubs --quiet --json "$one" >"$tmp/plain.json" || { echo "FAIL: hubs plain"; fail=1; }
"$dcsim" cluster --quiet --json "$tmp/cl-ft.xml" >"$tmp/cl-ft.json" || { echo "FAIL: cluster"; fail=1; }
for k in isolated interfered; do
    "$dcsim" hubs --quiet --json "$kinds" --set "hubs/@keys=$k" >"$tmp/kinds-$k.json" ||
        { echo "FAIL: kinds $k"; fail=1; }
done
expect "the text lists the kinds" 0 \
    "^fabrics    zhongwei fat-tree (its own <fabric>), guian leaf-spine (the <cluster><fabric>)$" \
    "$dcsim" hubs --quiet "$kinds"
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
bad = []
load = lambda n: json.load(open("%s/%s.json" % (tmp, n)))
h, c = load("hub-ft")["run"]["hubs"][0], load("cl-ft")
i = c["interference"]
if h["fabric"] != "fat-tree":
    bad.append("the hub's fabric is %r" % h["fabric"])
if not i["cost_gpu_h"] > 0:
    bad.append("the fat-tree interferes nowhere: the test needs some")
pairs = [("digest", h["digest"], c["digest"]), ("end_s", h["end_s"], c["end_s"]),
         ("wait p90", h["wait_s"]["p90"], c["wait_s"]["p90"]),
         ("interference GPU-h", h["interference_gpu_h"], i["cost_gpu_h"]),
         ("simulations", h["interference_simulations"], i["simulations"]),
         ("flows", h["interference_flows"], i["flows"])]
for what, a, b in pairs:
    if a != b:
        bad.append("%s: hubs %r, cluster %r" % (what, a, b))
same, plain = load("hub-same"), load("plain")
if same != plain:
    bad.append("a hub's own fabric equal to the cluster's changed the document")
iso, inter = load("kinds-isolated"), load("kinds-interfered")
kinds = [x["fabric"] for x in iso["run"]["hubs"]]
if kinds != ["fat-tree", "leaf-spine"]:
    bad.append("kinds %r" % kinds)
jobs = lambda d: [x["jobs"] for x in d["run"]["hubs"]]
sc = [x["interference_key_scale"] for x in inter["run"]["hubs"]]
if not (sc[1] > 1 and jobs(inter)[1] < jobs(iso)[1] and jobs(inter)[0] > jobs(iso)[0]):
    bad.append("interfered keys: scales %r, jobs %r against %r" % (sc, jobs(inter), jobs(iso)))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
exit $fail
