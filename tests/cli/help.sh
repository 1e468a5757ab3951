#!/bin/sh
# help.sh DCSIM - the conventions every command keeps (docs/cli.md):
#  - COMMAND --help exits 0 and prints exactly `dcsim help COMMAND`, starting
#    "usage: dcsim COMMAND", with no literal "%%" (a printf escape left in a
#    text printed with fputs);
#  - its synopsis (the paragraphs starting "usage: dcsim" or "dcsim") names
#    every option of the command's option table (dcsim COMMAND
#    --list-options; --help, which every command takes, may be left out),
#    each in the long or the short form, and the help names both forms; and
#    the synopsis names no option the command does not accept;
#  - dcsim version, --version and -V print the same version line;
#  - dcsim help --man COMMAND is a man page groff reads without a warning.
set -u
dcsim=$1
. "$(dirname "$0")/expect.sh"

commands=$("$dcsim" help --commands | cut -f1)
n=0
# whether the text on stdin names option $1 as a word
names() {
    grep -qE -e "(^|[^A-Za-z0-9-])$1([^A-Za-z0-9-]|\$)"
}
for c in $commands; do
    n=$((n + 1))
    help=$("$dcsim" "$c" --help)
    status=$?
    [ "$status" -eq 0 ] || { echo "FAIL: $c --help: exit status $status"; fail=1; }
    [ "$help" = "$("$dcsim" help "$c")" ] ||
        { echo "FAIL: $c --help differs from dcsim help $c"; fail=1; }
    case $help in
    "usage: dcsim $c"*) ;;
    *) echo "FAIL: $c --help does not start 'usage: dcsim $c'"; fail=1 ;;
    esac
    case $help in
    *%%*) echo "FAIL: $c --help prints a literal %%:"
          printf '%s\n' "$help" | grep -F '%%'; fail=1 ;;
    esac
    synopsis=$(printf '%s\n' "$help" | awk '
        BEGIN { start = 1 }
        /^$/ { start = 1; on = 0; next }
        start { on = ($0 ~ /^(usage: )?dcsim /); start = 0 }
        on { print }')
    in_synopsis=$(printf '%s\n' "$synopsis" |
        grep -oE -e '(^|[][ |])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[][ |]//' | sort -u)
    table=$("$dcsim" "$c" --list-options)
    [ -n "$table" ] || { echo "FAIL: $c --list-options lists nothing"; fail=1; }
    while read -r long short kind rest; do
        [ "$long" = --help ] && continue
        if ! printf '%s\n' "$in_synopsis" | grep -qxF -e "$long" &&
           ! printf '%s\n' "$in_synopsis" | grep -qxF -e "$short"; then
            echo "FAIL: $c: the usage lines do not name $long"; fail=1
        fi
        for name in $long $short; do
            [ "$name" = - ] && continue
            printf '%s\n' "$help" | names "$name" ||
                { echo "FAIL: $c --help does not name $name"; fail=1; }
        done
    done <<EOF
$table
EOF
    for name in $in_synopsis; do
        printf '%s\n' "$table" | awk '{ print $1; print $2 }' | grep -qxF -e "$name" ||
            { echo "FAIL: $c: the usage lines name $name, which it does not accept"; fail=1; }
    done
    if command -v groff >/dev/null 2>&1; then
        warnings=$("$dcsim" help --man "$c" | groff -man -Tutf8 -ww -z 2>&1)
        [ -z "$warnings" ] || { echo "FAIL: dcsim-$c.1: $warnings"; fail=1; }
    fi
done
[ "$n" -ge 16 ] || { echo "FAIL: only $n commands listed"; fail=1; }

version=$("$dcsim" --version)
expect "dcsim version" 0 "^dcsim [0-9][0-9.]*$" "$dcsim" version
[ "$("$dcsim" version)" = "$version" ] || { echo "FAIL: dcsim version differs"; fail=1; }
[ "$("$dcsim" -V)" = "$version" ] || { echo "FAIL: dcsim -V differs"; fail=1; }
bad "version takes no argument" "dcsim version: error: unexpected argument 'x'" "$dcsim" version x
expect "help --man" 0 '^\.TH DCSIM 1' "$dcsim" help --man
expect "help --man run" 0 '^\.TH DCSIM-RUN 1' "$dcsim" help --man run
bad "help --man bogus" "unknown command 'bogus'" "$dcsim" help --man bogus
[ "$fail" -eq 0 ] && echo "ok: help ($n commands)"
exit "$fail"
