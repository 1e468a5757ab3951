#!/bin/sh
# golden.sh DCSIM SRC [--write] - the bytes of what dcsim prints and writes
# for every example scenario, as MD5 digests, against tests/golden/digests.txt.
#
# A refactor proves itself here: the same digests before and after. A change
# meant to alter results rewrites the file (--write) and says why in its
# commit. Covered: run --json and its HDF5 trace (its content), the text summary, step
# --json, fit, topo, goodput --json, compare --json, netbench --json, size,
# a small sweep's file, and bad input (the error line) - for the built-in
# default and every scenarios/examples/*.xml. About 15 s.
set -u
dcsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
write=${3:-}
cd "$src" || exit 1 # relative paths: outputs name the scenario as given
expected=tests/golden/digests.txt
dir=$(mktemp -d /tmp/dcsim-golden-XXXXXX)
trap 'rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=2
out="$dir/digests.txt"
: >"$out"

# unenvelope: stdout without the dcsim/1 envelope of --json (docs/json.md):
# "schema" and "command" are the same for every document of a command, and
# "dcsim_version" changes with every release; run's document had its
# dcsim_version before the envelope, so that one is kept. The digests guard
# the results, which the envelope does not hold.
unenvelope() {
    awk '
/^\t"schema":\t"dcsim\/[0-9]+",$/ { next }
/^\t"command":\t"[a-z]+",$/ { cmd = $0; next }
cmd != "" && /^\t"dcsim_version":\t"[^"]*",$/ { keep = (cmd ~ /"run"/); cmd = ""; if (!keep) next }
{ cmd = ""; sub(/^\{"schema":"dcsim\/[0-9]+","command":"[a-z]+","dcsim_version":"[^"]*",/, "{"); print }'
}
# digest NAME COMMAND...: stdout, stderr and the exit status, each digested
digest() {
    what=$1
    shift
    "$@" >"$dir/o0" 2>"$dir/e"
    status=$?
    unenvelope <"$dir/o0" >"$dir/o"
    printf '%s %s %s %s\n' "$what" "$(md5sum <"$dir/o" | cut -c1-32)" \
        "$(md5sum <"$dir/e" | cut -c1-32)" "$status" >>"$out"
}
# file NAME PATH: a written HDF5 file's content (h5digest.py: every name,
# attribute, type, shape and value; its bytes also depend on the HDF5
# library's and zlib's internals, which differ between machines)
file() {
    if [ -f "$2" ]; then
        printf '%s %s\n' "$1" "$(/usr/bin/python3 "$src/tests/golden/h5digest.py" "$2")" >>"$out"
    else
        printf '%s missing\n' "$1" >>"$out"
    fi
    rm -f "$2"
}

for scn in default scenarios/examples/*.xml; do
    case $(basename "$scn") in
    serving-*) # an inference fleet: dcsim serve, not the training commands
        name=$(basename "$scn" .xml)
        digest "$name/serve-json" "$dcsim" serve --quiet --json "$scn"
        digest "$name/serve-text" "$dcsim" serve --quiet "$scn"
        continue ;;
    cluster-*|hubs-*) # a job stream: dcsim cluster, dcsim hubs (their determinism:
        # tests/cli/cluster.sh, tests/cli/hubs.sh)
        continue ;;
    esac
    if [ "$scn" = default ]; then
        name=builtin; arg=""
    else
        name=$(basename "$scn" .xml); arg=$scn
    fi
    # shellcheck disable=SC2086 # arg is empty for the built-in default
    digest "$name/run-json" "$dcsim" run --quiet --json -o "$dir/t.h5" $arg
    file "$name/trace" "$dir/t.h5"
    # shellcheck disable=SC2086
    digest "$name/run-text" "$dcsim" run --quiet $arg
    # shellcheck disable=SC2086
    digest "$name/replicas" "$dcsim" run --quiet --json --replicas 4 $arg
    # shellcheck disable=SC2086
    digest "$name/step" "$dcsim" step --json $arg
    # shellcheck disable=SC2086
    digest "$name/fit" "$dcsim" fit $arg
    # shellcheck disable=SC2086
    digest "$name/topo" "$dcsim" topo $arg
    # shellcheck disable=SC2086
    digest "$name/goodput" "$dcsim" goodput --json --steps 5 --replicas 4 $arg
done
ex=scenarios/examples
digest compare "$dcsim" compare --json --vary site=guian,qingyang,yrd
digest compare-net "$dcsim" compare --json --vary site=guian "$ex/superpod-h100.xml" "$ex/dragonfly-16k.xml"
digest netbench "$dcsim" netbench "$ex/superpod-h100.xml" --json --ranks 64 --max 64M --factor 16
digest size "$dcsim" size llama3-405b H100-SXM --context 8192,32768,131072
# the sweep prints its file's name: give it the same one every time
(cd "$dir" && digest sweep "$dcsim" sweep --quiet --grid checkpoint/@interval=10min,30min \
    --replicas 3 -o s.h5)
file sweep-file "$dir/s.h5"
digest bad-set "$dcsim" run --set checkpoint/@interval=abc
digest bad-file "$dcsim" validate tests/bad/no_unit.xml

if [ "$write" = --write ]; then
    cp "$out" "$expected"
    echo "golden: wrote $(wc -l <"$out") digests to $expected"
    exit 0
fi
if ! diff -u "$expected" "$out" >"$dir/diff"; then
    echo "FAIL: outputs differ from tests/golden/digests.txt (results changed; if on purpose, run"
    echo "  sh tests/golden/golden.sh BUILD/dcsim . --write  and say why in the commit):"
    grep '^[-+][^-+]' "$dir/diff"
    exit 1
fi
echo "ok: $(wc -l <"$out") digests equal"
