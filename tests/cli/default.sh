#!/bin/sh
# default.sh DCSIM SOURCE_DIR - the built-in default scenario is
# scenarios/examples/default.xml, byte for byte, and running with no
# scenario gives the same results as running that file.
set -u
dcsim=$1
src=$2
dir=$(mktemp -d /tmp/dcsim-default-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail=0
"$dcsim" default >"$dir/default.xml" || fail=1
cmp -s "$dir/default.xml" "$src/scenarios/examples/default.xml" ||
    { echo "FAIL: dcsim default differs from scenarios/examples/default.xml"; fail=1; }
"$dcsim" run --json | grep -v '"source"' >"$dir/a.json" || fail=1
"$dcsim" run --json "$src/scenarios/examples/default.xml" | grep -v '"source"' >"$dir/b.json" || fail=1
cmp -s "$dir/a.json" "$dir/b.json" ||
    { echo "FAIL: dcsim run and dcsim run scenarios/examples/default.xml differ"; diff "$dir/a.json" "$dir/b.json"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: built-in default = scenarios/examples/default.xml"
exit "$fail"
