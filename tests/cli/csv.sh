#!/bin/sh
# csv.sh DCSIM - --csv of compare and sweep (docs/cli.md "Tables as CSV"):
# RFC 4180 with a header row, as many fields in every row, the numbers
# those of compare --json (to the last bit but the one cJSON rounds) and, for sweep, those of
# its text table once rounded as the table rounds them; a label holding a
# comma or a quote comes back whole through a CSV reader; --json with
# --csv is refused.
set -u
dcsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # absolute: the test changes directory
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
"$dcsim" default > 'a,"1".xml' && cp 'a,"1".xml' b.xml || exit 1

"$dcsim" compare 'a,"1".xml' b.xml --vary site=zhongwei,wuhu --csv > c.csv 2>err ||
    { echo "FAIL: compare --csv:"; cat err; fail=1; }
"$dcsim" compare 'a,"1".xml' b.xml --vary site=zhongwei,wuhu --json > c.json 2>err ||
    { echo "FAIL: compare --json:"; cat err; fail=1; }
/usr/bin/python3 - c.csv c.json <<'PYEOF' || fail=1
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1], newline='')))
doc = json.load(open(sys.argv[2]))
head, body = (rows or [[]])[0], rows[1:]
bad = []
if head[:2] != ['variant', 'site'] or len(head) != 2 + len(doc['units']):
    bad.append('header %r' % head)
if len(body) != 4 or len(body) != len(doc['variants']):
    bad.append('%d rows for %d variants' % (len(body), len(doc['variants'])))
for row, v in zip(body, doc['variants']):
    if len(row) != len(head):
        bad.append('row of %d fields: %r' % (len(row), row))
        continue
    if row[0] != v['variant'] or row[1] != v['site']:
        bad.append('label %r %r, JSON %r %r' % (row[0], row[1], v['variant'], v['site']))
    for name, text in zip(head[2:], row[2:]):
        a, b = float(text), v[name]  # cJSON prints 15 digits when they read back within
        if abs(a - b) > 2 * sys.float_info.epsilon * max(abs(a), abs(b)):  # DBL_EPSILON
            bad.append('%s: %s in CSV, %r in JSON' % (name, text, v[name]))
if not body or not body[0][0].startswith('a,"1".xml'):
    bad.append('the label with a comma and quotes: %r' % (body[0][0] if body else None))
for b in bad:
    print('FAIL: compare --csv:', b)
sys.exit(1 if bad else 0)
PYEOF
bad "compare --json --csv" "^dcsim compare: error: --json and --csv: choose one" \
    "$dcsim" compare --json --csv

"$dcsim" sweep --quiet --grid checkpoint/@interval=10min,20min --replicas 3 -o s.h5 > s.txt 2>err ||
    { echo "FAIL: sweep:"; cat err; fail=1; }
"$dcsim" sweep --quiet --grid checkpoint/@interval=10min,20min --replicas 3 -o s.h5 --csv > s.csv 2>err ||
    { echo "FAIL: sweep --csv:"; cat err; fail=1; }
/usr/bin/python3 - s.csv s.txt <<'PYEOF' || fail=1
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline='')))
table = [l.split() for l in open(sys.argv[2]) if l.strip() and not l.startswith('#')][1:]
bad = []
want = ['point', 'checkpoint/@interval', 'status', 'time_to_train_s', 'time_to_train_ci95_s',
        'ettr_frac', 'ettr_ci95_frac', 'failures']
if rows[0] != want:
    bad.append('header %r' % rows[0])
if len(rows) != 3 or len(table) != 2:
    bad.append('%d CSV rows, %d table rows' % (len(rows), len(table)))
for r, t in zip(rows[1:], table):
    got = [r[0], r[1], r[2], '%.3f' % (float(r[3]) / 86400), '%.3f' % (float(r[4]) / 86400),
           '%.5f' % float(r[5]), '%.5f' % float(r[6]), '%.1f' % float(r[7])]
    if got != t:
        bad.append('CSV %r reads %r, the table %r' % (r, got, t))
    if not float(r[4]) > 0:
        bad.append('no confidence interval over 3 replicas: %r' % r)
for b in bad:
    print('FAIL: sweep --csv:', b)
sys.exit(1 if bad else 0)
PYEOF
[ "$fail" -eq 0 ] && echo "ok: csv"
exit "$fail"
