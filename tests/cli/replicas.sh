#!/bin/sh
# replicas.sh DCSIM SRC - `dcsim run --replicas N` end to end: the summary's
# confidence intervals, identical numbers for 1 and 2 threads, replica 0 is
# the plain run, /replicas in the trace (the statistics themselves are
# tested in tests/models/test_montecarlo.c).
# The replica, checkpoint, restart, maintenance and goodput cases run
# tests/scenarios/no-fabric.xml, the default's job with its MFU given: their
# assertions do not depend on how the iteration is timed, and the default's
# step tier (a 16,384-GPU iteration per run) made this script one of the
# slowest of the suite under ASan. The step tier keeps its elastic and
# straggler cases at the end, on 2,048 GPUs.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nf="$src/tests/scenarios/no-fabric.xml"
expect "replicas table" 0 "^  over 8 replicas" "$dcsim" run "$nf" --quiet --replicas 8
expect "replicas ETTR row" 0 "^  ETTR  *0\.8[0-9]*  *0\.00" "$dcsim" run "$nf" --quiet --replicas 8
a=$(OMP_NUM_THREADS=1 "$dcsim" run "$nf" --quiet --replicas 12 --json)
b=$(OMP_NUM_THREADS=2 "$dcsim" run "$nf" --quiet --replicas 12 --json)
[ "$a" = "$b" ] || { echo "FAIL replicas differ between 1 and 2 threads"; fail=$((fail + 1)); }
plain=$("$dcsim" run "$nf" --quiet --json | grep '"event_digest"')
first=$(printf '%s\n' "$a" | grep '"event_digest"')
[ "$plain" = "$first" ] || { echo "FAIL replica 0 is not the plain run"; fail=$((fail + 1)); }
expect "replicas trace" 0 "" "$dcsim" run "$nf" --quiet --replicas 5 -o "$tmp/r.h5"
if ! /usr/bin/python3 -c "
import sys, h5py
f = h5py.File(sys.argv[1], 'r')
r = f['replicas']
assert r.shape == (5,) and len(r.dtype.names) == 8, (r.shape, r.dtype)
assert r.dtype.names[1] == 'ettr_frac' and r.dtype['failures'].kind == 'u'
assert len(set(f['replica_digests'][:])) == 5
assert r[0]['time_to_train_s'] == f['summary/time_to_train_s'][()]
" "$tmp/r.h5"; then
    echo "FAIL replicas trace: /replicas missing or inconsistent"
    fail=$((fail + 1))
fi
# interval="auto": Daly's optimum, to the nearest whole iteration
if ! "$dcsim" run "$nf" --quiet --json --set checkpoint/@interval=auto | /usr/bin/python3 -c "
import json, sys
s = json.load(sys.stdin)['summary']
assert s['daly_interval_s'] > 0
assert abs(s['checkpoint_interval_s'] - s['daly_interval_s']) <= s['iteration_time_s'] / 2, s
"; then
    echo "FAIL auto interval is not Daly's"
    fail=$((fail + 1))
fi
# every="150" iterations is no-fabric.xml's 15 minutes (900 s / 6.00 s, rounded;
# dcsim run prints "checkpoint every 150"): the same run
sed 's|<checkpoint interval="15min" write-time="33s"/>|<checkpoint every="150" write-time="33s"/>|' \
    "$nf" > "$tmp/every.xml"
d1=$("$dcsim" run "$nf" --quiet --json | grep '"event_digest"')
d2=$("$dcsim" run --quiet --json "$tmp/every.xml" | grep '"event_digest"')
[ "$d1" = "$d2" ] || { echo "FAIL checkpoint every 150 iterations differs from 15 min"; fail=$((fail + 1)); }
# a restart by its parts: 2 + 1 + 3 min + 15 s x 16.384 = 605.76 s each (a failure
# during a restart starts it over, so the mean per completed restart is a little more)
sed 's|<restart time="10min"/>|<restart detection="2min" teardown="1min" launch="3min" launch-per-1000-gpus="15s"/>|' \
    "$nf" > "$tmp/parts.xml"
if ! "$dcsim" run --quiet --json "$tmp/parts.xml" | /usr/bin/python3 -c "
import json, sys
s = json.load(sys.stdin)['summary']
per = s['restart_time_s'] / s['restarts']
assert 605.76 <= per <= 605.76 * 1.05, per
"; then
    echo "FAIL restart parts"
    fail=$((fail + 1))
fi
# planned maintenance: 2 h every 27.6 h, one window per period elapsed
sed 's|<restart time="10min"/>|<restart time="10min"/><maintenance every="27.6h" duration="2h"/>|' \
    "$nf" > "$tmp/maint.xml"
if ! "$dcsim" run --quiet --json "$tmp/maint.xml" | /usr/bin/python3 -c "
import json, math, sys
s = json.load(sys.stdin)['summary']
w = s['maintenance_windows']
assert w == math.floor(s['time_to_train_s'] / (27.6 * 3600)), s
assert abs(s['maintenance_time_s'] - w * 7200) < 1e-6, s
"; then
    echo "FAIL maintenance windows"
    fail=$((fail + 1))
fi
# the goodput curve peaks within 10 % of Daly's interval
if ! "$dcsim" goodput "$nf" --replicas 8 --steps 9 --json | /usr/bin/python3 -c "
import json, sys
g = json.load(sys.stdin)
assert abs(g['best_interval_s'] / g['daly_interval_s'] - 1) <= 0.10, g
e = [row['ettr_mean'] for row in g['curve']]
best = e.index(max(e))
assert all(e[i] <= e[i + 1] for i in range(best)) and all(e[i] >= e[i + 1] for i in range(best, len(e) - 1)), e
"; then
    echo "FAIL goodput: the curve does not peak at Daly's interval"
    fail=$((fail + 1))
fi
expect "goodput table" 0 "^best .*Daly" "$dcsim" goodput "$nf" --replicas 4 --steps 5
# The cases below run llama3-failures.xml (the Llama 3 failure inventory)
# with its MFU given ($mfu: the step tier is not what they test) or the H100
# SuperPOD on the step tier, on 2,048 of its GPUs ($small: ZeRO 3, since the
# 405B job does not fit in 80 GB with ZeRO 2 at DP 16, and a global batch of
# 256, 16 micro-batches per replica as at 16,384 GPUs).
mfu="--set job/training/@mfu=42%"
small="--set cluster/gpu/@count=2048 --set job/parallelism/@zero=3 --set job/parallelism/@global-batch=256"
# a spare pool: more spares, less waiting for repaired nodes
for n in 16 64; do
    sed "s|<restart time=\"10min\"/>|<restart time=\"10min\"/><spares nodes=\"$n\" swap-time=\"30min\" repair-time=\"48h\"/>|" \
        "$src/scenarios/examples/llama3-failures.xml" > "$tmp/spares$n.xml"
done
# shellcheck disable=SC2086 # $mfu is two words
wait_of() { "$dcsim" run --quiet --json $mfu "$1" | /usr/bin/python3 -c "import json, sys; print(json.load(sys.stdin)['summary']['spare_wait_s'])"; }
w16=$(wait_of "$tmp/spares16.xml")
w64=$(wait_of "$tmp/spares64.xml")
if ! /usr/bin/python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if a > 86400 and b < a else 1)" "$w16" "$w64"; then
    echo "FAIL spares: waits $w16 s (16 spares) and $w64 s (64 spares)"
    fail=$((fail + 1))
fi
# elastic continuation with no spares: on with fewer replicas, never waiting;
# time conserved with the stretch term. With an MFU (the compute share) and
# on the step tier (the smaller jobs' profiles).
elastic='<spares nodes="0" swap-time="30min" repair-time="48h" elastic="true"/>'
sed "s|<restart time=\"10min\"/>|<restart time=\"10min\"/>$elastic|" \
    "$src/scenarios/examples/llama3-failures.xml" > "$tmp/elastic.xml"
sed "s| mfu=\"42%\"||; s|<restart time=\"10min\"/>|<restart time=\"10min\"/>$elastic|" \
    "$src/scenarios/examples/superpod-h100.xml" > "$tmp/elastic-step.xml"
for f in elastic elastic-step; do
    opts=$small
    [ "$f" = elastic ] && opts=$mfu
    # shellcheck disable=SC2086 # $opts is two or six words
    if ! "$dcsim" run --quiet --json $opts "$tmp/$f.xml" | /usr/bin/python3 -c "
import json, sys
s = json.load(sys.stdin)['summary']
assert s['elastic_restarts'] > 0 and s['elastic_slowdown_s'] > 0, s
assert s['spare_wait_s'] == 0, s
total = sum(s[k] for k in ('compute_time_s', 'rework_s', 'checkpoint_time_s',
                           'checkpoint_aborted_s', 'restart_time_s', 'elastic_slowdown_s'))
assert abs(total / s['time_to_train_s'] - 1) < 1e-9, (total, s['time_to_train_s'])
"; then
        echo "FAIL $f: elastic continuation"
        fail=$((fail + 1))
    fi
done
# stragglers: a node turns slow, the job slows (with an MFU given: by the node's
# speed; on the step tier: by the slow node's compute share, so less than the
# node itself) until drained
slow='<stragglers rate="1e-4/h" speed="80%" drain-after="2h"/>'
sed "s|<restart time=\"10min\"/>|<restart time=\"10min\"/>$slow|" \
    "$src/scenarios/examples/llama3-failures.xml" > "$tmp/slow.xml"
sed "s| mfu=\"42%\"||; s|<restart time=\"10min\"/>|<restart time=\"10min\"/>$slow|" \
    "$src/scenarios/examples/superpod-h100.xml" > "$tmp/slow-step.xml"
for f in slow slow-step; do
    opts=$small
    [ "$f" = slow ] && opts=$mfu
    # shellcheck disable=SC2086 # $opts is two or six words
    if ! "$dcsim" run --quiet --json $opts "$tmp/$f.xml" | /usr/bin/python3 -c "
import json, sys
s = json.load(sys.stdin)['summary']
speed = s['straggler_speed_frac']
assert (speed == 0.8) if sys.argv[1] == 'slow' else (0.8 < speed < 1), speed
assert s['stragglers'] > 0 and s['drains'] > 0 and s['straggler_slowdown_s'] > 0, s
total = sum(s[k] for k in ('compute_time_s', 'rework_s', 'checkpoint_time_s',
                           'checkpoint_aborted_s', 'restart_time_s', 'straggler_slowdown_s'))
assert abs(total / s['time_to_train_s'] - 1) < 1e-9, (total, s['time_to_train_s'])
" "$f"; then
        echo "FAIL $f: stragglers"
        fail=$((fail + 1))
    fi
done
[ "$fail" -eq 0 ] && echo "ok: replicas"
exit "$fail"
