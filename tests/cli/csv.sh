#!/bin/sh
# csv.sh DCSIM SRC - --csv of compare and sweep (docs/cli.md "Tables as CSV"):
# RFC 4180 with a header row, as many fields in every row, the numbers
# those of compare --json (to the last bit but the one cJSON rounds) and, for sweep, those of
# its text table once rounded as the table rounds them; a label holding a
# comma or a quote comes back whole through a CSV reader; --json with
# --csv is refused.
set -u
dcsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # absolute: the test changes directory
src=$(cd "$2" && pwd)
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
# every other command with a table: --csv against its --json (docs/json.md
# "CSV"): a header of snake_case names, every row as wide, the named columns
# there, each field equal to the JSON member it comes from
ex=$src/scenarios/examples
sp=$ex/superpod-h100.xml
# both NAME TABLE COLUMNS ROWS ARGS...: --csv and --json of dcsim ARGS; TABLE the
# member holding the rows (- for the document itself), COLUMNS some names the
# header must hold, ROWS the rows expected (- for any)
both() {
    name=$1 table=$2 cols=$3 nrows=$4
    shift 4
    "$dcsim" "$@" --csv > "$name.csv" 2>err; st1=$?
    "$dcsim" "$@" --json > "$name.json" 2>err2; st2=$?
    if [ "$st1" != "$st2" ] || [ "$st1" -gt 1 ]; then
        echo "FAIL: $name: --csv exit $st1, --json exit $st2:"; cat err err2; fail=1; return
    fi
    /usr/bin/python3 - "$name" "$table" "$cols" "$nrows" <<'PYEOF' || fail=1
import csv, json, re, sys
name, table, cols, nrows = sys.argv[1:5]
rows = list(csv.reader(open(name + '.csv', newline='')))
doc = json.load(open(name + '.json'))
head, body = rows[0], rows[1:]
bad = []
if table == '-':
    src = [doc]
elif isinstance(doc[table], list):
    src = doc[table]
else:
    src = [doc[table]]
for c in head:
    if not re.fullmatch(r'[a-z][a-z0-9_]*', c):
        bad.append('column name %r is not snake_case' % c)
for c in cols.split():
    if c not in head:
        bad.append('no column %r in %r' % (c, head))
if len(body) != len(src) or (nrows != '-' and len(body) != int(nrows)):
    bad.append('%d rows, the JSON %d, expected %s' % (len(body), len(src), nrows))
def member(obj, col):
    if col in obj and not isinstance(obj[col], (dict, list)):
        return obj[col]
    for k, v in obj.items():
        if isinstance(v, dict) and col.startswith(k + '_') and col[len(k) + 1:] in v:
            return v[col[len(k) + 1:]]
    return None
for i, (row, obj) in enumerate(zip(body, src)):
    if len(row) != len(head):
        bad.append('row %d has %d fields, the header %d' % (i, len(row), len(head)))
        continue
    for c, text in zip(head, row):
        if c == 'stage' and table == 'stages' and 'stage' not in obj:
            v = i  # the row number step adds
        else:
            v = member(obj, c)
        if v is None:
            if text != '':
                bad.append('row %d %s: %r, none in the JSON' % (i, c, text))
        elif isinstance(v, bool):
            if text != ('true' if v else 'false'):
                bad.append('row %d %s: %r, JSON %r' % (i, c, text, v))
        elif isinstance(v, (int, float)):
            a = float(text)
            if abs(a - v) > 2 * sys.float_info.epsilon * max(abs(a), abs(v)):
                bad.append('row %d %s: %r, JSON %r' % (i, c, text, v))
        elif text != v:
            bad.append('row %d %s: %r, JSON %r' % (i, c, text, v))
for b in bad[:10]:
    print('FAIL: %s --csv: %s' % (name, b))
sys.exit(1 if bad else 0)
PYEOF
}
both run summary "time_to_train_s ettr_frac iteration_time_s" 1 run --quiet
both step stages "stage compute bubble end_s" 16 step "$sp"
both netbench rows "bytes time_s algbw_bytes_per_s busbw_bytes_per_s" 5 \
    netbench "$sp" --quiet --ranks 16 --max 1M --factor 16
both goodput curve "interval_s ettr_mean time_to_train_mean_s" 3 goodput --steps 3 --replicas 2
both topo - "gpus switches links bisection_bytes_per_s" 1 topo "$sp"
both fit stages "stage layers weights_bytes total_bytes fits" - fit "$sp"
both size contexts "percentile context_tokens kv_bytes gpus_per_replica" 3 \
    size llama3-405b H100-SXM --context 8192,32768,131072
both serve - "replicas ttft_p99_s tpot_p99_s output_tokens_per_s" 1 \
    serve --quiet "$ex/serving-llama3-70b-h100.xml"
both cluster - "jobs utilisation wait_s_p99 slowdown_p50" 1 \
    cluster --quiet "$ex/cluster-synthetic-h100.xml"
# calibrate --csv: every measured point of a quick sweep (times differ from
# run to run, so the shape is checked against --json's, and each row's error
# against its own measured and predicted times)
# On a loaded machine a quick sweep's all-reduce times can come out not
# growing with size, which calibrate refuses to fit ("times do not grow with
# size"): each command gets three tries; the CSV is checked on the first
# that measures cleanly.
calibrate_to() { # FORMAT FILE
    for try in 1 2 3; do
        "$dcsim" calibrate --quick --threads 2 "$1" > "$2" 2> cal.err && return 0
        grep -q "times do not grow with size" cal.err || break
    done
    echo "FAIL: calibrate $1: $(cat cal.err)"
    return 1
}
calibrate_to --csv cal.csv || fail=1
calibrate_to --json cal.json || fail=1
/usr/bin/python3 - cal.csv cal.json <<'PYEOF' || fail=1
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='')))
doc = json.load(open(sys.argv[2]))
head = list(rows[0].keys())
assert head == ['family', 'm', 'n', 'k', 'bytes', 'tier', 'measured_s', 'predicted_s',
                'error_pct', 'bound'], head
gemm = [r for r in rows if r['family'] == 'gemm']
assert len(gemm) == len(doc['gemm']['points']), (len(gemm), len(doc['gemm']['points']))
for a in doc['allreduce']:
    mine = [r for r in rows if r['family'] == 'allreduce_' + a['algorithm']]
    assert [float(r['bytes']) for r in mine] == [p['bytes'] for p in a['points']], a['algorithm']
assert len(rows) == len(gemm) + sum(len(a['points']) for a in doc['allreduce'])
for r in rows:
    meas, pred = float(r['measured_s']), float(r['predicted_s'])
    assert meas > 0 and pred > 0, r
    assert abs(float(r['error_pct']) - 100 * (pred - meas) / meas) < 1e-9 * max(1, abs(float(r['error_pct']))), r
    assert (r['bound'] in ('launch', 'memory', 'compute')) == (r['family'] == 'gemm'), r
PYEOF
for c in run step netbench goodput topo fit size serve cluster calibrate; do
    bad "$c --json --csv" "^dcsim $c: error: --json and --csv: choose one" "$dcsim" $c --json --csv
done
# netbench --tier packet --csv: the --json document's tables as one
# (docs/json.md "CSV"), rebuilt here from the JSON by the documented rule:
# a row per element of each top-level table (lossy's modes and stall's bins
# a row each), `table` first, the document's scalars on every row
ls=$src/scenarios/examples/concurrency-leafspine.xml
i=0
for op in "send --bytes 1M" "allreduce --ranks 4 --bytes 1M" "incast-sweep --ranks 5 --bytes 64K" \
          "victim --bytes 1M" "stall --bytes 1M" "lossy --rto 100us --ranks 5 --bytes 64K"; do
    i=$((i + 1))
    "$dcsim" netbench "$ls" --tier packet --op $op --json > "pk$i.json" &&
        "$dcsim" netbench "$ls" --tier packet --op $op --csv > "pk$i.csv" ||
        { echo "FAIL: netbench --tier packet --op $op --csv: exit $?"; fail=1; continue; }
    /usr/bin/python3 - "pk$i.csv" "pk$i.json" "$op" <<'PYEOF' || fail=1
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1], newline='')))
head, body = rows[0], rows[1:]
doc = json.load(open(sys.argv[2]))
envelope = ('schema', 'command', 'dcsim_version')
def flat(obj, into, prefix):
    keys = into.setdefault(None, set())    # the members taken, before flattening
    for k, v in obj.items():
        if isinstance(v, list):
            continue
        key = k if k not in keys else prefix + '_' + k
        keys.add(key)
        if isinstance(v, dict):
            for kk, vv in v.items():
                if not isinstance(vv, (list, dict)):
                    into[key + '_' + kk] = vv
        else:
            into[key] = v
want = []
for name, t in doc.items():
    if not (isinstance(t, list) and t and isinstance(t[0], dict)):
        continue
    for e in t:
        inner = next((m for m in e.values() if isinstance(m, list) and m and isinstance(m[0], dict)), None)
        inner_name = next((k for k, m in e.items() if m is inner), None)
        for c in inner if inner else [None]:
            r = {'table': name}
            flat(e, r, name)
            if c is not None:
                flat(c, r, inner_name)
            flat({k: v for k, v in doc.items() if k not in envelope}, r, 'run')
            want.append(r)
if not want:
    want = [{}]
    flat({k: v for k, v in doc.items() if k not in envelope}, want[0], 'run')
bad = []
if len(body) != len(want):
    bad.append('%d rows, expected %d' % (len(body), len(want)))
for i, (row, w) in enumerate(zip(body, want)):
    got = dict(zip(head, row))
    for k, v in w.items():
        if k is None or k == 'run_wall_s' or k == 'wall_s':
            continue               # the wall clock differs between the two runs
        text = got.get(k)
        if text is None:
            bad.append('row %d: no column %s' % (i, k))
        elif isinstance(v, bool):
            bad.append('row %d %s' % (i, k)) if text != ('true' if v else 'false') else None
        elif isinstance(v, (int, float)):
            if abs(float(text) - v) > 2 * sys.float_info.epsilon * max(abs(float(text)), abs(v)):
                bad.append('row %d %s: %r, JSON %r' % (i, k, text, v))
        elif text != v:
            bad.append('row %d %s: %r, JSON %r' % (i, k, text, v))
    if len(row) != len(head):
        bad.append('row %d has %d fields, the header %d' % (i, len(row), len(head)))
if want[0].get('table') and head[0] != 'table':
    bad.append('first column %r, not table' % head[0])
for b in bad[:10]:
    print('FAIL: netbench --tier packet --op %s --csv: %s' % (sys.argv[3], b))
sys.exit(1 if bad else 0)
PYEOF
done

[ "$fail" -eq 0 ] && echo "ok: csv"
exit "$fail"
