#!/bin/sh
# progress.sh DCSIM SOURCE_DIR - a long run (dcsim run, and dcsim step's
# concurrent iteration) shows progress on a terminal, and nothing with
# --quiet or when stderr is not a terminal. `script` gives
# the run a pseudo-terminal.
set -u
dcsim=$1
src=$2
if ! command -v script >/dev/null 2>&1; then
    echo "FAIL: the script command (bsdutils) is needed for this test"; exit 1
fi
dir=$(mktemp -d /tmp/dcsim-progress-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail=0
long="$src/tests/scenarios/long.xml"
script -qec "timeout -s INT 10 '$dcsim' run '$long'" /dev/null >"$dir/tty" 2>&1
grep -q "simulating:" "$dir/tty" || { echo "FAIL: no progress on a terminal"; fail=1; }
script -qec "timeout -s INT 3 '$dcsim' run --quiet '$long'" /dev/null >"$dir/quiet" 2>&1
grep -q "simulating:" "$dir/quiet" && { echo "FAIL: progress shown with --quiet"; fail=1; }
timeout -s INT 3 "$dcsim" run "$long" >/dev/null 2>"$dir/pipe"
grep -q "simulating:" "$dir/pipe" && { echo "FAIL: progress shown when stderr is not a terminal"; fail=1; }
# dcsim step: the concurrent iteration of a 4,096-GPU Dragonfly (about 12 s
# alone) shows its simulated time and events after a second. The terminal
# cases get 10-15 s before the interrupt: on a loaded 2-core CI machine the
# set-up before the iteration alone took over 3 s, and the line never came.
df="'$src/scenarios/examples/dragonfly-16k.xml' --concurrent --set cluster/gpu/@count=4096 --set job/parallelism/@global-batch=512"
script -qec "timeout -s INT 15 '$dcsim' step $df" /dev/null >"$dir/step-tty" 2>&1
grep -q "concurrent iteration: .* s simulated, .*M events" "$dir/step-tty" ||
    { echo "FAIL: no step progress on a terminal"; fail=1; }
script -qec "timeout -s INT 3 '$dcsim' step -q $df" /dev/null >"$dir/step-quiet" 2>&1
grep -q "concurrent iteration:" "$dir/step-quiet" && { echo "FAIL: step progress with -q"; fail=1; }
eval "timeout -s INT 3 '$dcsim' step $df" >/dev/null 2>"$dir/step-pipe"
grep -q "concurrent iteration:" "$dir/step-pipe" &&
    { echo "FAIL: step progress when stderr is not a terminal"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: progress on a terminal only, and not with --quiet"
exit "$fail"
