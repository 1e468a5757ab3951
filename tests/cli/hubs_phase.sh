#!/bin/sh
# hubs_phase.sh DCSIM SRC - `dcsim hubs` says how co-located jobs'
# iterations line up at each hub's fabric (<cluster-jobs><traffic phase>,
# docs/cluster.md "Iteration phases"): the fabric line and the JSON's
# "phase" name the mode, aligned by default and uniform when set; uniform
# offsets cost less interference than aligned (each job's collectives meet a
# neighbour's only in its communication window) and keep the same job count;
# a run without a fabric at its hubs has no "phase".
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
ex=$src/tests/scenarios/hubs-fabric-layout.xml
uni="cluster-jobs/traffic/@phase=uniform"
tmp=$(mktemp -d /tmp/dcsim-hubs-phase-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
expect "aligned named" 0 "^fabric .*iteration phases aligned" "$dcsim" hubs --quiet "$ex"
expect "uniform named" 0 "^fabric .*iteration phases uniform" "$dcsim" hubs --quiet "$ex" --set "$uni"
"$dcsim" hubs --quiet --json "$ex" >"$tmp/a.json" &&
    "$dcsim" hubs --quiet --json "$ex" --set "$uni" >"$tmp/u.json" &&
    "$dcsim" hubs --quiet --json "$src/tests/scenarios/hubs-move.xml" >"$tmp/none.json" ||
    { echo "FAIL: a run failed"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
a, u, none = (json.load(open("%s/%s.json" % (tmp, k))) for k in ("a", "u", "none"))
bad = []
if (a.get("phase"), u.get("phase")) != ("aligned", "uniform"):
    bad.append("phases %r, %r" % (a.get("phase"), u.get("phase")))
if "phase" in none:
    bad.append("a run without fabrics has a phase")
ia, iu = a["run"]["total"]["interference_gpu_h"], u["run"]["total"]["interference_gpu_h"]
if not 0 < iu < ia:
    bad.append("interference uniform %r GPU-h, aligned %r" % (iu, ia))
if a["run"]["total"]["jobs"] != u["run"]["total"]["jobs"]:
    bad.append("job counts differ")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
[ "$fail" -eq 0 ] && echo "ok: hubs_phase"
exit "$fail"
