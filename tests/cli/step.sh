#!/bin/sh
# step.sh DCSIM SRC - `dcsim step` and `dcsim run` through the step tier, end
# to end: what they print, JSON, the trace's /step group, determinism (the
# model itself is tested in tests/app/test_step.c).
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
sp=$src/scenarios/examples/superpod-h100.xml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect "step iteration" 0 "^iteration *[0-9.]* s (flow network model)" "$dcsim" step "$sp"
expect "step analytic" 0 "(analytic network model)" "$dcsim" step "$sp" --analytic
expect "step parts" 0 "^  bubble " "$dcsim" step "$sp"
expect "step json" 0 '"critical_stage_s"' "$dcsim" step "$sp" --json
# the example's pipeline is interleaved (8 chunks); with 96 layers, 16 stages
# x 2 chunks against plain 1F1B: interleaving shrinks the bubble
sed 's/ vpp="8"/ vpp="2"/; s/ first-stage-layers="7" last-stage-layers="7"//' \
    "$sp" > "$tmp/interleaved.xml"
sed 's/ schedule="1f1b-interleaved" vpp="8"//; s/ first-stage-layers="7" last-stage-layers="7"//' \
    "$sp" > "$tmp/plain.xml"
expect "step interleaved" 0 "^iteration" "$dcsim" step "$tmp/interleaved.xml" \
    --set job/model/@layers=96
a=$("$dcsim" step "$tmp/interleaved.xml" --set job/model/@layers=96 --json | grep '"bubble"' | head -1)
b=$("$dcsim" step "$tmp/plain.xml" --set job/model/@layers=96 --json | grep '"bubble"' | head -1)
[ -n "$a" ] && [ "$a" != "$b" ] || { echo "FAIL interleaving changed no bubble"; fail=$((fail + 1)); }
# the example has no MFU: it runs on the step tier's iteration
cp "$sp" "$tmp/nomfu.xml"
sed 's|</parallelism>|</parallelism>|; s|<training |<step><straggler gpu="777" speed="90%"/></step>\n    <training |' \
    "$tmp/nomfu.xml" > "$tmp/straggler.xml"
expect "step straggler named" 0 "^stragglers *slowest GPU 777 at 90.0 % speed" \
    "$dcsim" step "$tmp/straggler.xml"
expect "run via step" 0 "^iteration  the step tier (dcsim step)" "$dcsim" run --quiet "$tmp/nomfu.xml"
expect "run trace" 0 "" "$dcsim" run --quiet "$tmp/nomfu.xml" -o "$tmp/run.h5"
if ! /usr/bin/python3 -c "
import sys, h5py
f = h5py.File(sys.argv[1], 'r')
g = f['step']
assert g['stages'].shape == (16,) and len(g['stages'].dtype.names) == 11, g['stages'].dtype
row = g['stages'][int(g.attrs['critical_stage'])]
assert abs(sum(row[c] for c in row.dtype.names[:8]) - g.attrs['iteration_s']) < 1e-9 * g.attrs['iteration_s']
assert g['link_bytes'].shape[0] > 0 and g['tier_bytes'][0] > 0
" "$tmp/run.h5"; then
    echo "FAIL run trace: /step is missing or inconsistent"
    fail=$((fail + 1))
fi
a=$("$dcsim" step "$sp" --json)
b=$("$dcsim" step "$sp" --json)
[ "$a" = "$b" ] || { echo "FAIL step is not deterministic"; fail=$((fail + 1)); }
[ "$fail" -eq 0 ] && echo "ok: step"
exit "$fail"
