#!/bin/sh
# commands.sh DCSIM - --help, --version, help COMMAND, and usage errors.
set -u
dcsim=$1
. "$(dirname "$0")/expect.sh"
expect "--help" 0 "usage: dcsim COMMAND" "$dcsim" --help
expect "--version" 0 "^dcsim [0-9][0-9.]*$" "$dcsim" --version
expect "help run" 0 "usage: dcsim run" "$dcsim" help run
expect "run --help" 0 "--set PATH=VALUE" "$dcsim" run --help
expect "help validate" 0 "usage: dcsim validate" "$dcsim" help validate
expect "help default" 0 "usage: dcsim default" "$dcsim" help default
expect "help fit" 0 "usage: dcsim fit" "$dcsim" help fit
expect "help size" 0 "usage: dcsim size" "$dcsim" help size
expect "help calibrate" 0 "usage: dcsim calibrate" "$dcsim" help calibrate
expect "help bogus" 2 "unknown command 'bogus'" "$dcsim" help bogus
expect "bogus command" 2 "unknown command 'frob'" "$dcsim" frob
expect "no command" 2 "usage: dcsim COMMAND" "$dcsim"
expect "validate without file" 2 "no scenario given" "$dcsim" validate
expect "two scenarios" 2 "more than one scenario" "$dcsim" run a.xml b.xml
expect "run prints where the iteration comes from" 0 "^iteration  the step tier (dcsim step)" "$dcsim" run
expect "run with an MFU prints the rule" 0 "6\*N\*T / (GPUs \* peak \* MFU)" "$dcsim" run --set job/training/@mfu=42%
expect "run --json" 0 '"time_to_train_s"' "$dcsim" run --json
[ "$fail" -eq 0 ] && echo "ok: commands"
exit "$fail"
