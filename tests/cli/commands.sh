#!/bin/sh
# commands.sh DCSIM - --help, --version, help COMMAND, and usage errors.
set -u
dcsim=$1
fail=0
expect() { # description, expected status, pattern, command...
    what=$1 want=$2 pattern=$3
    shift 3
    out=$("$@" 2>&1)
    status=$?
    if [ "$status" -ne "$want" ]; then
        echo "FAIL: $what: exit status $status, expected $want"; fail=1
    fi
    if ! printf '%s\n' "$out" | grep -q -e "$pattern"; then
        echo "FAIL: $what: output lacks '$pattern':"; printf '%s\n' "$out"; fail=1
    fi
}
expect "--help" 0 "usage: dcsim COMMAND" "$dcsim" --help
expect "--version" 0 "^dcsim [0-9][0-9.]*$" "$dcsim" --version
expect "help run" 0 "usage: dcsim run" "$dcsim" help run
expect "run --help" 0 "--set PATH=VALUE" "$dcsim" run --help
expect "help validate" 0 "usage: dcsim validate" "$dcsim" help validate
expect "help default" 0 "usage: dcsim default" "$dcsim" help default
expect "help bogus" 2 "unknown command 'bogus'" "$dcsim" help bogus
expect "bogus command" 2 "unknown command 'frob'" "$dcsim" frob
expect "no command" 2 "usage: dcsim COMMAND" "$dcsim"
expect "validate without file" 2 "no scenario given" "$dcsim" validate
expect "two scenarios" 2 "more than one scenario" "$dcsim" run a.xml b.xml
expect "run prints the rule" 0 "6\*N\*T / (GPUs \* peak \* MFU)" "$dcsim" run
expect "run --json" 0 '"time_to_train_s"' "$dcsim" run --json
[ "$fail" -eq 0 ] && echo "ok: commands"
exit "$fail"
