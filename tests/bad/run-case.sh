#!/bin/sh
# run-case.sh DCSIM CASE - one bad-input case: dcsim must exit with status 2 (or a .case's status:)
# and print exactly the expected error line first on stderr, and must not
# leave a trace behind.
#   NAME.xml   expected line in a leading <!-- expect: ... --> comment; checked
#              with both `dcsim validate NAME.xml` and `dcsim run NAME.xml`
#   NAME.case  "args: ..." (the dcsim arguments) and "expect: ..." lines, and
#              optionally "env: NAME=VALUE" (one variable set for the run) and
#              "status: N" (the expected exit status when it is not 2)
set -u
dcsim=$1
case_file=$2
cd "$(dirname "$case_file")" || exit 1
name=$(basename "$case_file")
failed=0
want_status=2

check() { # args...
    if [ -n "${case_env:-}" ]; then
        out=$(env "$case_env" "$dcsim" "$@" 2>&1 >/dev/null)
    else
        out=$("$dcsim" "$@" 2>&1 >/dev/null)
    fi
    status=$?
    first=$(printf '%s\n' "$out" | head -n 1)
    if [ "$status" -ne "$want_status" ]; then
        echo "FAIL $name: dcsim $*: exit status $status, expected $want_status"
        failed=1
    fi
    if [ "$first" != "$expect" ]; then
        echo "FAIL $name: dcsim $*"
        echo "  expected: $expect"
        echo "  got:      $first"
        failed=1
    fi
}

case "$name" in
*.xml)
    expect=$(sed -n 's/^<!-- expect: \(.*\) -->$/\1/p' "$name" | head -n 1)
    [ -n "$expect" ] || { echo "FAIL $name: no <!-- expect: ... --> line"; exit 1; }
    check validate "$name"
    check run --quiet -o "$name.h5" "$name"
    if ls "$name".h5* >/dev/null 2>&1; then
        echo "FAIL $name: a trace file was left behind"
        rm -f "$name".h5*
        failed=1
    fi
    ;;
*.case)
    expect=$(sed -n 's/^expect: //p' "$name")
    args=$(sed -n 's/^args: //p' "$name")
    case_env=$(sed -n 's/^env: //p' "$name")
    want_status=$(sed -n 's/^status: //p' "$name")
    want_status=${want_status:-2}
    [ -n "$expect" ] && [ -n "$args" ] || { echo "FAIL $name: needs args: and expect: lines"; exit 1; }
    # shellcheck disable=SC2086 # args are word-split on purpose
    check $args
    ;;
esac
[ "$failed" -eq 0 ] && echo "ok $name"
exit "$failed"
