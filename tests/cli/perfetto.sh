#!/bin/sh
# perfetto.sh DCSIM SRC - `dcsim step --perfetto FILE.json`: valid JSON whose
# forward/backward events are the /step/tasks rows of `dcsim run -o` on the
# same scenario (same count, order, stage, chunk, micro-batch, start and end
# to 1e-9), every stage named, DP and optimizer spans ending at /step/stages'
# end_s, the tier counters equal to /step's link utilisation; the same bytes
# on every run and thread count; a full disk and bad targets refused in one
# line, exit 2, nothing written or replaced (docs/step.md).
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
sp=$src/scenarios/examples/superpod-h100.xml
dir=$(mktemp -d /tmp/dcsim-perfetto-XXXXXX)
trap 'rm -rf "$dir"' EXIT

one_line() { # what want status file-of-stderr got-status
    n=$(wc -l <"$4")
    [ "$n" -eq 1 ] || { echo "FAIL: $1: $n lines on stderr, expected 1:"; cat "$4"; fail=1; }
    [ "$(cat "$4")" = "$2" ] || { echo "FAIL: $1:"; echo "  expected: $2"; echo "  got:      $(head -n 3 "$4")"; fail=1; }
    [ "$5" -eq "$3" ] || { echo "FAIL: $1: exit status $5, expected $3"; fail=1; }
}

"$dcsim" step "$sp" --json --perfetto "$dir/p.json" >"$dir/step.json" ||
    { echo "FAIL: step --perfetto"; fail=1; }
"$dcsim" run --quiet "$sp" -o "$dir/run.h5" >/dev/null || { echo "FAIL: run -o"; fail=1; }
if ! /usr/bin/python3 - "$dir/p.json" "$dir/run.h5" "$dir/step.json" <<'EOF'
import json, math, sys
import h5py, numpy as np

def bad_constant(name):
    raise ValueError("not a JSON number: " + name)

with open(sys.argv[1]) as f:
    doc = json.load(f, parse_constant=bad_constant)
step_json = json.load(open(sys.argv[3]))
g = h5py.File(sys.argv[2], "r")["step"]
raw = g["tasks"][()]   # as a matrix: stage, chunk, microbatch, backward, start_s, end_s
assert list(raw.dtype.names) == ["stage", "chunk", "microbatch", "backward", "start_s", "end_s"]
tasks = [tuple(float(x) for x in r) for r in raw]
stages = g["stages"][()]
n_stages = stages.shape[0]
iteration = float(g.attrs["iteration_s"])
ev = doc["traceEvents"]

def close(a, b, what):
    assert abs(a - b) <= 1e-9 * max(abs(b), iteration * 1e-6), (what, a, b)

def walk(x):  # every number finite (json.load above refuses NaN and Infinity)
    if isinstance(x, dict):
        for v in x.values(): walk(v)
    elif isinstance(x, list):
        for v in x: walk(v)
    elif isinstance(x, float):
        assert math.isfinite(x), x
walk(doc)
close(doc["otherData"]["iteration_s"], iteration, "iteration")
assert step_json["iteration_s"] == doc["otherData"]["iteration_s"]
assert doc["otherData"]["stages"] == n_stages

# every stage: a process named "stage N" with a compute and a DP thread
meta = {(e["pid"], e["tid"], e["name"]): e["args"] for e in ev if e["ph"] == "M"}
for s in range(n_stages):
    assert meta[(s, 0, "process_name")] == {"name": "stage %d" % s}, s
    assert meta[(s, 0, "process_sort_index")] == {"sort_index": s}, s
    assert meta[(s, 0, "thread_name")] == {"name": "compute"}, s
    assert meta[(s, 1, "thread_name")] == {"name": "DP + optimizer"}, s
assert meta[(n_stages, 0, "process_name")] == {"name": "fabric"}

# the forward and backward events are the /step/tasks rows, in order
xs = [e for e in ev if e["ph"] == "X"]
for e in xs:
    assert e["dur"] >= 0 and e["ts"] >= 0, e
work = [e for e in xs if e["cat"] in ("forward", "backward")]
assert len(work) == len(tasks) > 0, (len(work), len(tasks))
for e, r in zip(work, tasks):
    stage, chunk, mb, bwd = (int(x) for x in r[:4])
    assert e["pid"] == stage and e["tid"] == 0, e
    assert e["name"] == "%s mb%d c%d" % ("B" if bwd else "F", mb, chunk), (e, r)
    assert e["cat"] == ("backward" if bwd else "forward"), e
    assert e["args"] == {"stage": stage, "chunk": chunk, "microbatch": mb}, e
    close(e["ts"] / 1e6, r[4], "start")
    close((e["ts"] + e["dur"]) / 1e6, r[5], "end")
# one compute thread per stage: its tasks never overlap
for s in range(n_stages):
    mine = sorted((e["ts"], e["ts"] + e["dur"]) for e in work if e["pid"] == s)
    assert all(a[1] <= b[0] * (1 + 1e-12) for a, b in zip(mine, mine[1:])), s

# DP then optimizer: the optimizer ends at the stage's end_s and lasts optimizer_s;
# the reduction ends where the optimizer starts and starts no later than the
# stage's last task ends (it overlaps the backwards)
for s in range(n_stages):
    end, opt, dp = (stages[s][c] for c in ("end_s", "optimizer_s", "dp_s"))
    last = max(r[5] for r in tasks if int(r[0]) == s)
    o = [e for e in xs if e["pid"] == s and e["name"] == "optimizer"]
    d = [e for e in xs if e["pid"] == s and e["name"] == "DP reduction"]
    assert len(o) == 1 and len(d) == 1, (s, o, d)
    o, d = o[0], d[0]
    assert o["tid"] == 1 and d["tid"] == 1
    close((o["ts"] + o["dur"]) / 1e6, end, "optimizer end")
    close(o["dur"] / 1e6, opt, "optimizer")
    close((d["ts"] + d["dur"]) / 1e6, o["ts"] / 1e6, "DP end")
    assert d["ts"] / 1e6 <= last * (1 + 1e-12), (s, d, last)
    close(d["args"]["exposed_s"], dp, "DP exposed")

# counters: per tier with traffic, peak and mean link utilisation in percent
# from 0 to the iteration's end
tiers = list(g.attrs["tiers"])
lt, lu, tb = g["link_tier"][()], g["link_utilisation"][()], g["tier_bytes"][()]
peak = g["tier_peak_utilisation"][()]
cs = [e for e in ev if e["ph"] == "C"]
want = [t for t in range(len(tiers)) if tb[t] > 0]
assert len(want) >= 2 and len(cs) == 2 * len(want), (want, len(cs))
for t in want:
    c = [e for e in cs if e["name"] == tiers[t] + " link utilisation %"]
    assert len(c) == 2 and c[0]["ts"] == 0, c
    close(c[1]["ts"] / 1e6, iteration, "counter end")
    for e in c:
        assert e["pid"] == n_stages
        close(e["args"]["peak"], 100 * peak[t], "peak")
        close(e["args"]["mean"], 100 * lu[lt == t].mean(), "mean")
print("ok:", len(work), "tasks,", n_stages, "stages,", len(want), "tiers")
EOF
then
    echo "FAIL: the Perfetto file does not match the trace"
    fail=1
fi

# the same bytes on every run, for any thread count
OMP_NUM_THREADS=1 "$dcsim" step "$sp" --perfetto "$dir/p1.json" >/dev/null
OMP_NUM_THREADS=3 "$dcsim" step "$sp" --perfetto "$dir/p3.json" >/dev/null
cmp -s "$dir/p.json" "$dir/p1.json" && cmp -s "$dir/p.json" "$dir/p3.json" ||
    { echo "FAIL: --perfetto is not deterministic"; fail=1; }
ls "$dir"/*.tmp.* >/dev/null 2>&1 && { echo "FAIL: temporaries left: $(ls "$dir"/*.tmp.*)"; fail=1; }

# a full disk (ulimit -f; dcsim ignores SIGXFSZ): one line, exit 2, the previous file intact
cp "$dir/p.json" "$dir/old.json"
(ulimit -f 40; exec "$dcsim" step "$sp" --perfetto "$dir/p.json") >"$dir/out" 2>"$dir/err"
one_line "--perfetto over ulimit -f" "$dir/p.json: error: cannot write the Perfetto trace: File too large" 2 "$dir/err" $?
cmp -s "$dir/p.json" "$dir/old.json" || { echo "FAIL: --perfetto over ulimit -f changed the previous file"; fail=1; }
[ -s "$dir/out" ] && { echo "FAIL: --perfetto over ulimit -f printed a profile"; fail=1; }

# bad targets: one line, exit 2, nothing replaced, no simulation output
what="cannot write the Perfetto trace"
mkdir "$dir/d"
"$dcsim" step "$sp" --perfetto "$dir/d" >"$dir/out" 2>"$dir/err"
one_line "--perfetto a directory" "$dir/d: error: $what: it is a directory" 2 "$dir/err" $?
[ -s "$dir/out" ] && { echo "FAIL: --perfetto a directory printed a profile"; fail=1; }
cp "$sp" "$dir/s.xml"
ln -s s.xml "$dir/link.xml"
"$dcsim" step "$dir/s.xml" --perfetto "$dir/s.xml" >/dev/null 2>"$dir/err"
one_line "--perfetto the scenario" "$dir/s.xml: error: $what: it is $dir/s.xml, an input of this run; choose another name" 2 "$dir/err" $?
"$dcsim" step "$dir/link.xml" --perfetto "$dir/s.xml" >/dev/null 2>"$dir/err"
one_line "--perfetto the scenario by another name" "$dir/s.xml: error: $what: it is $dir/link.xml, an input of this run; choose another name" 2 "$dir/err" $?
cmp -s "$dir/s.xml" "$sp" || { echo "FAIL: the scenario was changed"; fail=1; }
mkdir "$dir/xi"
cp "$src"/tests/scenarios/xinclude/main.xml "$src"/tests/scenarios/xinclude/lab-gpus.xml "$dir/xi/"
"$dcsim" step "$dir/xi/main.xml" --perfetto "$dir/xi/lab-gpus.xml" >/dev/null 2>"$dir/err"
one_line "--perfetto an XInclude'd file" "$dir/xi/lab-gpus.xml: error: $what: it is $dir/xi/lab-gpus.xml, an input of this run; choose another name" 2 "$dir/err" $?
cmp -s "$dir/xi/lab-gpus.xml" "$src/tests/scenarios/xinclude/lab-gpus.xml" || { echo "FAIL: the XInclude'd file was changed"; fail=1; }
mkfifo "$dir/fifo"
notreg="$what: it exists and is not a regular file (a device, pipe or socket); dcsim replaces only regular files"
"$dcsim" step "$sp" --perfetto "$dir/fifo" >/dev/null 2>"$dir/err"
one_line "--perfetto a FIFO" "$dir/fifo: error: $notreg" 2 "$dir/err" $?
[ -p "$dir/fifo" ] || { echo "FAIL: the FIFO was replaced"; fail=1; }
"$dcsim" step "$sp" --perfetto /dev/null >/dev/null 2>"$dir/err"
one_line "--perfetto /dev/null" "/dev/null: error: $notreg" 2 "$dir/err" $?
[ -c /dev/null ] || { echo "FAIL: /dev/null was replaced"; fail=1; }
"$dcsim" step "$sp" --perfetto "$dir/none/p.json" >/dev/null 2>"$dir/err"
one_line "--perfetto in a missing folder" "$dir/none/p.json: error: $what: No such file or directory" 2 "$dir/err" $?
"$dcsim" step "$sp" --perfetto >/dev/null 2>"$dir/err"
one_line "--perfetto without a name" "dcsim step: error: --perfetto needs a file name (see: dcsim help step)" 2 "$dir/err" $?
ls "$dir"/*.tmp.* "$dir"/d/*.tmp.* >/dev/null 2>&1 && { echo "FAIL: temporaries left"; fail=1; }
expect "help step lists --perfetto" 0 "^  --perfetto FILE.json" "$dcsim" help step

[ "$fail" -eq 0 ] && echo "ok: perfetto"
exit "$fail"
