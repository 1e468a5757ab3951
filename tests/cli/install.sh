#!/bin/sh
# install.sh BUILD SRC - `cmake --install BUILD --prefix P` into a temporary
# prefix (docs/cli.md "Install"): every file in its place, a man page per
# command, an installed dcsim that names neither the source nor the build
# tree and runs from another directory on an installed example and on the
# built-in default, man pages that man (or groff) renders, and a bash
# completion that registers and completes (zsh's is checked by zsh -n where
# zsh is installed).
set -u
build=$1 src=$2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
if ! cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
    echo "FAIL: cmake --install:"; cat "$tmp/install.log"; exit 1
fi
dcsim=$prefix/bin/dcsim
for f in bin/dcsim share/man/man1/dcsim.1 share/bash-completion/completions/dcsim \
         share/zsh/site-functions/_dcsim share/doc/dcsim/README.md share/doc/dcsim/LICENSE \
         share/doc/dcsim/docs/cli.md share/doc/dcsim/docs/scenario.md \
         share/dcsim/examples/default.xml share/dcsim/examples/llama3-failures.xml; do
    [ -f "$prefix/$f" ] || { echo "FAIL: $f not installed"; fail=1; }
done
[ -x "$dcsim" ] || { echo "FAIL: bin/dcsim is not executable"; exit 1; }
n_examples=$(ls "$src"/scenarios/examples/*.xml | wc -l)
n_installed=$(ls "$prefix"/share/dcsim/examples/*.xml | wc -l)
[ "$n_examples" -eq "$n_installed" ] ||
    { echo "FAIL: $n_installed of $n_examples examples installed"; fail=1; }
commands=$("$dcsim" help --commands | cut -f1)
for c in $commands; do
    page=$prefix/share/man/man1/dcsim-$c.1
    [ -f "$page" ] || { echo "FAIL: no man page dcsim-$c.1"; fail=1; continue; }
    "$dcsim" help --man "$c" | cmp -s - "$page" ||
        { echo "FAIL: dcsim-$c.1 is not dcsim help --man $c"; fail=1; }
done

# nothing relative to the source or build tree: the binary holds no such path
# (a Release build: Debug and sanitizer builds embed source file names in
# their diagnostics, assert() and the sanitizers' metadata, which dcsim never
# opens; the run from another directory below still holds for them)
dirs=""
grep -q "^CMAKE_BUILD_TYPE:STRING=Release$" "$build/CMakeCache.txt" 2>/dev/null &&
    dirs="$src $build $(cd "$src" && pwd -P) $(cd "$build" && pwd -P)"
[ -n "$dirs" ] || echo "install: not a Release build: the path check is skipped"
for dir in $dirs; do
    if grep -qaF -e "$dir/" "$dcsim"; then
        echo "FAIL: the installed dcsim names $dir:"
        grep -aoF -e "$dir/" "$dcsim" | head -3; fail=1
    fi
done

# from another directory: an installed example, the built-in default
mkdir "$tmp/elsewhere" && cd "$tmp/elsewhere" || exit 1
out=$("$dcsim" validate "$prefix/share/dcsim/examples/superpod-h100.xml" 2>&1) ||
    { echo "FAIL: validate an installed example: $out"; fail=1; }
out=$("$dcsim" run --quiet "$prefix/share/dcsim/examples/llama3-failures.xml" 2>&1)
{ [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q "^  time to train "; } ||
    { echo "FAIL: run an installed example:"; printf '%s\n' "$out"; fail=1; }
out=$("$dcsim" run --quiet 2>&1)
{ [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q "scenario llama3-405b-16k-h100 (default.xml)"; } ||
    { echo "FAIL: run the built-in default:"; printf '%s\n' "$out" | head; fail=1; }
"$dcsim" default | cmp -s - "$src/scenarios/examples/default.xml" ||
    { echo "FAIL: dcsim default is not scenarios/examples/default.xml"; fail=1; }
[ -z "$(ls -A "$tmp/elsewhere")" ] || { echo "FAIL: dcsim left files in the directory"; fail=1; }

# the man pages render
if command -v man >/dev/null 2>&1; then
    out=$(MANPAGER=cat MANWIDTH=80 man -l "$prefix/share/man/man1/dcsim-run.1" 2>&1)
    printf '%s\n' "$out" | grep -q "dcsim run \[SCENARIO.xml\]" ||
        { echo "FAIL: man -l dcsim-run.1:"; printf '%s\n' "$out" | head; fail=1; }
    out=$(MANPATH=$prefix/share/man MANPAGER=cat MANWIDTH=80 man dcsim 2>&1)
    printf '%s\n' "$out" | grep -q "dcsim-sweep(1)" ||
        { echo "FAIL: man dcsim from the prefix:"; printf '%s\n' "$out" | head; fail=1; }
else # no man: the roff has its sections
    for s in '^\.TH DCSIM-RUN 1' '^\.SH NAME' '^\.SH SYNOPSIS' '^\.SH DESCRIPTION' '^\.SH SEE ALSO'; do
        grep -q "$s" "$prefix/share/man/man1/dcsim-run.1" || { echo "FAIL: dcsim-run.1 lacks $s"; fail=1; }
    done
fi

# bash completion: it registers, and completes commands, options and values
completion=$prefix/share/bash-completion/completions/dcsim
complete_at() { # WORDS...: the completions of the last word
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _dcsim
             [ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"' \
        _ "$completion" "$@" | sort | tr '\n' ' '
}
out=$(bash -c '. "$1" && complete -p dcsim' _ "$completion" 2>&1)
[ "$out" = "complete -o default -F _dcsim dcsim" ] || { echo "FAIL: complete -p dcsim: $out"; fail=1; }
check() { # WANT WORDS...
    want=$1; shift
    got=$(complete_at "$@")
    [ "$got" = "$want" ] || { echo "FAIL: completing '$*': '$got', expected '$want'"; fail=1; }
}
check "run " dcsim ru
check "validate version " dcsim v
check "--seed --set " dcsim run --se
check "--output " dcsim sweep --outp
check "" dcsim run -o ""
check "" dcsim run -- --s
check "netbench " dcsim help netb
check "--commands " dcsim help --co
if command -v zsh >/dev/null 2>&1; then
    zsh -n "$prefix/share/zsh/site-functions/_dcsim" || { echo "FAIL: zsh -n _dcsim"; fail=1; }
fi
head -1 "$prefix/share/zsh/site-functions/_dcsim" | grep -qx "#compdef dcsim" ||
    { echo "FAIL: _dcsim lacks #compdef dcsim"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: install into $prefix"
exit "$fail"
