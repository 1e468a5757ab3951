#!/bin/sh
# xml_limits.sh DCSIM SRC - XML that expands without limit is refused quickly
# (docs/scenario.md, "Limits on XML"): an entity declaration (a 100 KB entity
# referenced 4,000 times took 43 s and 800 MB in schema validation), XInclude
# fan-out (26 files each including the next twice reached 5.7 GB), nesting,
# inclusions and included nodes over their caps. The attack files are made
# here, at test time; each command must print exactly the expected line
# first, exit 2, and finish within 20 s (timeout exits 124). Also --set
# values that are not UTF-8 text (they reach the trace and the report).
set -u
dcsim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cd "$tmp" || exit 1

check() { # DESCRIPTION EXPECTED-LINE COMMAND...
    what=$1 want=$2
    shift 2
    out=$(timeout 20 "$@" 2>&1 >/dev/null)
    status=$?
    first=$(printf '%s\n' "$out" | head -n 1)
    if [ "$status" -ne 2 ]; then
        echo "FAIL $what: exit status $status, expected 2 (124: took over 20 s)"; fail=1
    fi
    if [ "$first" != "$want" ]; then
        echo "FAIL $what"; echo "  expected: $want"; echo "  got:      $first"; fail=1
    fi
}

/usr/bin/python3 - <<'PY'
xi = 'xmlns:xi="http://www.w3.org/2001/XInclude"'
def write(name, text):
    with open(name, "w") as f:
        f.write(text)
# billion laughs, flat: one 100 KB entity referenced 4,000 times in an attribute
big = "x" * 100000
write("bomb.xml", '<?xml version="1.0"?>\n<!DOCTYPE dcsim [\n<!ENTITY big "%s">\n]>\n'
      '<dcsim version="1" name="%s"/>\n' % (big, "&big;" * 4000))
write("bomb-gpus.xml", '<!DOCTYPE gpus [\n<!ENTITY big "%s">\n]>\n<gpus name="%s"/>\n'
      % (big, "&big;" * 4000))
# nested: each entity references the previous one ten times
ents = '<!ENTITY a0 "lol">\n' + "".join(
    '<!ENTITY a%d "%s">\n' % (i, ("&a%d;" % (i - 1)) * 10) for i in range(1, 10))
write("laughs.xml", '<!DOCTYPE dcsim [\n%s]>\n<dcsim version="1" name="&a9;"/>\n' % ents)
# fan-out: f0 ... f25, each including the next twice
def fan(prefix, n):
    for i in range(n):
        inner = ('<xi:include href="%s%d.xml"/>' % (prefix, i + 1)) * 2 if i < n - 1 else ""
        write("%s%d.xml" % (prefix, i), "<gpus %s>%s</gpus>\n" % (xi, inner))
    write("%s.xml" % prefix, '<dcsim version="1" %s>\n<catalog><xi:include href="%s0.xml"/>'
          '</catalog>\n</dcsim>\n' % (xi, prefix))
fan("f", 26)
fan("g", 10)  # within the depth: 2 + 4 + ... inclusions pass 256
# a chain of 20 files, each including the next once
for i in range(20):
    write("d%d.xml" % i, '<gpus %s><xi:include href="d%d.xml"/></gpus>\n' % (xi, i + 1))
write("d20.xml", "<gpus/>\n")
write("d.xml", '<dcsim version="1" %s>\n<catalog><xi:include href="d0.xml"/></catalog>\n'
      '</dcsim>\n' % xi)
# 300,000 elements included four times: 1.2 million nodes
write("many.xml", "<gpus>%s</gpus>\n" % ("<a/>" * 300000))
write("n.xml", '<dcsim version="1" %s>\n<catalog>%s</catalog>\n</dcsim>\n'
      % (xi, '<xi:include href="many.xml"/>' * 4))
PY

refused='entity declarations are not accepted (they can expand without limit); write the text out'
check "entity in a scenario" "bomb.xml:3: error: <!ENTITY big>: $refused" "$dcsim" validate bomb.xml
check "entity, dcsim run" "bomb.xml:3: error: <!ENTITY big>: $refused" "$dcsim" run --quiet -o t.h5 bomb.xml
check "nested entities" "laughs.xml:2: error: <!ENTITY a0>: $refused" "$dcsim" validate laughs.xml
check "entity in --catalog" "bomb-gpus.xml:2: error: <!ENTITY big>: $refused" \
    "$dcsim" size llama2-70b H100-SXM --catalog bomb-gpus.xml
check "entity in --vary network=FILE.xml" "bomb-gpus.xml:2: error: <!ENTITY big>: $refused" \
    "$dcsim" compare --vary network=bomb-gpus.xml
check "XInclude fan-out" \
    'f15.xml:1: error: <xi:include href="f16.xml">: XInclude nested deeper than 16 levels' \
    "$dcsim" validate f.xml
check "XInclude nesting" \
    'd15.xml:1: error: <xi:include href="d16.xml">: XInclude nested deeper than 16 levels' \
    "$dcsim" validate d.xml
check "XInclude inclusions" \
    'g8.xml:1: error: <xi:include href="g9.xml">: more than 256 inclusions in all (each inclusion of a file counts)' \
    "$dcsim" validate g.xml
check "XInclude nodes" \
    'n.xml:2: error: <xi:include href="many.xml">: the included files bring in more than 1000000 nodes or 16 MB of text in all' \
    "$dcsim" validate n.xml
# --set values become attributes the trace and the report carry: UTF-8 text only
ff=$(printf '\377') one=$(printf '\001') tab=$(printf '\t')
check "--set invalid UTF-8" \
    '--set @name=a\xffb: error: not valid UTF-8 (byte 0xff, byte 8 of the option); write it in UTF-8' \
    "$dcsim" run --quiet -o t.h5 --set "@name=a${ff}b"
check "--set control character" \
    '--set cluster/gpu/@description=a\x01b: error: U+0001 (byte 27 of the option) is a character XML cannot hold; remove it' \
    "$dcsim" run --quiet -o t.h5 --set "cluster/gpu/@description=a${one}b"
check "--set overlong UTF-8" \
    '--set @name=\xc0\xaf: error: not valid UTF-8 (byte 0xc0, byte 7 of the option); write it in UTF-8' \
    "$dcsim" run --quiet -o t.h5 --set "@name=$(printf '\300\257')"
check "--set tab refused" \
    '--set @name=a\x09b: error: U+0009 (byte 8 of the option) is a control character; values are one line of text' \
    "$dcsim" run --quiet -o t.h5 --set "@name=a${tab}b"
check "--set newline refused" \
    '--set cluster/gpu/@description=a\x0ab: error: U+000A (byte 27 of the option) is a control character; values are one line of text' \
    "$dcsim" run --quiet -o t.h5 --set "cluster/gpu/@description=a
b"
if ls t.h5* >/dev/null 2>&1; then
    echo "FAIL a trace was left behind"; fail=1
fi
[ "$fail" -eq 0 ] && echo "ok: xml_limits"
exit "$fail"
