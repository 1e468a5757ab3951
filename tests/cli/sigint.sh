#!/bin/sh
# sigint.sh DCSIM SOURCE_DIR - `dcsim run -o` interrupted by SIGINT exits
# with status 130 and a message, and leaves nothing at the -o path (nor a
# temporary file next to it).
set -u
dcsim=$1
src=$2
dir=$(mktemp -d /tmp/dcsim-sigint-XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$dcsim" run "$src/tests/scenarios/long.xml" -o "$dir/trace.h5" >"$dir/out" 2>"$dir/err" &
pid=$!
sleep 1.5
kill -INT "$pid"
wait "$pid"
status=$?
fail=0
[ "$status" -eq 130 ] || { echo "FAIL: exit status $status, expected 130"; fail=1; }
grep -q "interrupted; no trace written" "$dir/err" || { echo "FAIL: no message on stderr:"; cat "$dir/err"; fail=1; }
left=$(ls "$dir" | grep -v -e '^out$' -e '^err$')
[ -z "$left" ] || { echo "FAIL: files left behind: $left"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: interrupted run exited 130 and left no trace"
exit "$fail"
