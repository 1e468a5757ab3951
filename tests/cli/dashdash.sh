#!/bin/sh
# dashdash.sh DCSIM - "--" ends a command's options: every argument after it
# is a positional one, even one that starts with "-" (a scenario named
# -x.xml), and "--" itself is never one. Without "--" such a name is an
# unknown option.
set -u
dcsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # absolute: the test changes directory
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$dcsim" default > "$tmp/-x.xml" || exit 1
cd "$tmp" || exit 1
bad "validate -x.xml: an option" "^dcsim validate: error: unknown option '-x.xml'" "$dcsim" validate -x.xml
expect "validate -- -x.xml" 0 "^-x.xml: ok (16384 x H100-SXM" "$dcsim" validate -- -x.xml
expect "options before --" 0 "^-x.xml: ok (8192 x H100-SXM" \
    "$dcsim" validate --set cluster/gpu/@count=8192 --set job/parallelism/@recompute=full -- -x.xml
bad "after --, an option's name is an argument" \
    "^dcsim run: error: more than one scenario given ('--json')" "$dcsim" run -- -x.xml --json
bad "after --, -h is an argument" "^dcsim fit: error: more than one scenario given ('-h')" \
    "$dcsim" fit -- -x.xml -h
expect "fit -- -x.xml" 0 "fits" "$dcsim" fit -- -x.xml
expect "topo -- -x.xml" 0 "switches" "$dcsim" topo -- -x.xml
expect "run -- -x.xml" 0 "^  time to train " "$dcsim" run --quiet -- -x.xml
# the same run as the file given plainly: -- changes nothing else
plain=$(cp -- -x.xml plain.xml && "$dcsim" run --quiet --json plain.xml | sed 's/plain\.xml/F/g')
dashed=$("$dcsim" run --quiet --json -- -x.xml | sed 's/-x\.xml/F/g')
[ -n "$plain" ] && [ "$plain" = "$dashed" ] || { echo "FAIL: run -- -x.xml differs from run plain.xml"; fail=1; }
expect "help -- run" 0 "^usage: dcsim run" "$dcsim" help -- run
bad "a lone - is a file name, not an option" "^-: error: cannot read the scenario" "$dcsim" validate -
[ "$fail" -eq 0 ] && echo "ok: dashdash"
exit "$fail"
