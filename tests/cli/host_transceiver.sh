#!/bin/sh
# host_transceiver.sh DCSIM SRC - host-side transceivers as a failure class
# (docs/failures.md "Host-side transceivers"). flapping-cable.xml and
# host-transceivers.xml: 32 H100 in 4 servers of 8 (hosts 0-31 are the GPUs'
# ports, host r's cable is links 2r, 2r+1; hosts 32-47 are the builder's
# spare ports), so with 2 ports a cage server k's cages are its ports in link
# order two by two: links 16k + {0, 2}, {4, 6}, {8, 10}, {12, 14}.
# dcsim step: a slow host cage is its two cables slow, by hand, the report
# equal line for line but the parts line (flow model and concurrent), named
# by either port; a cage down cuts its two GPUs off. The campaign
# (component="transceiver" tier="0"): 16 cages (cluster MTBF = 200 h / 16),
# each part in the trace a cage's first port; the restart waits for the
# repair, re-placing does not, shrinking runs without the two GPUs' replica;
# 1 and 2 threads agree.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d /tmp/dcsim-host-xcvr-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
s=$src/tests/scenarios/flapping-cable.xml
h=$src/tests/scenarios/host-transceivers.xml
same() { # same DESCRIPTION "ARGS A" "ARGS B": every line but the parts line equal
    "$dcsim" step $2 >"$tmp/a" 2>&1
    "$dcsim" step $3 >"$tmp/b" 2>&1
    grep -v "^failed parts" "$tmp/a" >"$tmp/a2"
    grep -v "^failed parts" "$tmp/b" >"$tmp/b2"
    if ! cmp -s "$tmp/a2" "$tmp/b2"; then
        echo "FAIL: $1: the reports differ"; diff "$tmp/a2" "$tmp/b2" | head; fail=1
    fi
    grep -q "0 directed links down, 4 slow" "$tmp/a" || { echo "FAIL: $1: not 4 slow"; cat "$tmp/a"; fail=1; }
}
c="--cage-ports 2"
same "GPU 0's cage" "$s -q $c --fail transceiver=0:0.5" "$s -q --fail link=0:0.5 --fail link=2:0.5"
same "named by its other port" "$s -q $c --fail transceiver=2:0.5" "$s -q --fail link=0:0.5 --fail link=2:0.5"
same "server 1's third cage" "$s -q $c --fail transceiver=26:0.25" "$s -q --fail link=24:0.25 --fail link=26:0.25"
same "concurrent" "$s -q --concurrent $c --fail transceiver=4:0.5" "$s -q --concurrent --fail link=4:0.5 --fail link=6:0.5"
expect "a host cage down" 2 "failed part transceiver=14 cuts GPUs 6-7 off the fabric" \
    "$dcsim" step "$s" -q $c --fail transceiver=14
"$dcsim" run "$h" -q --json -o "$tmp/r.h5" >"$tmp/restart.json" || { echo "FAIL: run"; fail=1; }
for p in replace shrink; do
    "$dcsim" run "$h" -q --json --set reliability/degraded/@policy=$p >"$tmp/$p.json" ||
        { echo "FAIL: run $p"; fail=1; }
done
OMP_NUM_THREADS=1 "$dcsim" run "$h" -q --json --replicas 4 >"$tmp/one.json" || fail=1
OMP_NUM_THREADS=2 "$dcsim" run "$h" -q --json --replicas 4 >"$tmp/two.json" || fail=1
cmp -s "$tmp/one.json" "$tmp/two.json" || { echo "FAIL: 1 and 2 threads differ"; fail=1; }
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
import h5py
tmp = sys.argv[1]
r, rep, shr = (json.load(open("%s/%s.json" % (tmp, n)))["summary"] for n in ("restart", "replace", "shrink"))
assert abs(r["cluster_mtbf_s"] - 200 * 3600 / 16) <= 1e-6, r["cluster_mtbf_s"]
assert r["parts_down"] > 0 and r["fabric_wait_s"] > 0 and r["fabric_unrunnable"] > 0, r
assert rep["fabric_wait_s"] == 0 and rep["time_to_train_s"] < r["time_to_train_s"], rep
assert shr["fabric_wait_s"] < r["fabric_wait_s"] and shr["degraded_slowdown_s"] > 0, shr
rows = h5py.File(tmp + "/r.h5", "r")["/campaign/parts"][:]
ids = set(int(x) for x in rows["fabric_id"])
assert ids and all(i % 4 == 0 and 0 <= i < 64 for i in ids), ids
print("restart %.6g s (waiting %.6g s), replace %.6g s, shrink %.6g s; cages %s"
      % (r["time_to_train_s"], r["fabric_wait_s"], rep["time_to_train_s"],
         shr["time_to_train_s"], sorted(ids)))
PY
[ "$fail" -eq 0 ] && echo "ok: host-side transceivers"
