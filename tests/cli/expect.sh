# expect.sh - sourced by the CLI test scripts.
# expect DESCRIPTION STATUS PATTERN COMMAND...: run COMMAND, check its exit
# status and that its output (stdout and stderr) has a line matching the
# grep PATTERN; on a mismatch print why and set fail=1.
fail=0
expect() {
    what=$1 want=$2 pattern=$3
    shift 3
    out=$("$@" 2>&1)
    status=$?
    if [ "$status" -ne "$want" ]; then
        echo "FAIL: $what: exit status $status, expected $want"; printf '%s\n' "$out"; fail=1
    fi
    if ! printf '%s\n' "$out" | grep -q -e "$pattern"; then
        echo "FAIL: $what: output lacks '$pattern':"; printf '%s\n' "$out"; fail=1
    fi
}

# bad DESCRIPTION PATTERN COMMAND...: bad input: exit status 2, a line
# matching PATTERN, and nothing but that one line.
bad() {
    what=$1 pattern=$2
    shift 2
    expect "$what" 2 "$pattern" "$@"
    lines=$("$@" 2>&1 | wc -l)
    [ "$lines" -eq 1 ] || { echo "FAIL: $what: $lines lines of error, expected 1"; fail=1; }
}
