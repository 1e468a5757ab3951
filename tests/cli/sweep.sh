#!/bin/sh
# sweep.sh DCSIM SRC - `dcsim sweep` end to end: one row per grid point in
# point order (first grid slowest), identical tables for 1 and 2 threads, a
# point equals `dcsim run --set ... --replicas N`, a rerun takes every
# point from the file, a different sweep on the same file is refused, a bad
# grid value or points-file line is one error line with exit 2, and
# <reliability scale> multiplies the failure rate. Kill-and-resume is
# sweep_resume.sh, MPI sweep_mpi.sh.
# The grid, rerun and bad-input cases run tests/scenarios/no-fabric.xml (the
# default's job with its MFU given): none of them depends on how the
# iteration is timed, and the default's step tier (a 16,384-GPU iteration
# at every point) made this script the slowest of the suite under ASan. The
# step tier keeps its case below: the Guian SuperPOD sweep equals dcsim run.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
nf="$src/tests/scenarios/no-fabric.xml"

grid="--grid checkpoint/@interval=10min,20min,40min --grid reliability/@scale=1,2,0.5"
OMP_NUM_THREADS=1 "$dcsim" sweep "$nf" --quiet $grid --replicas 6 -o "$tmp/t1.h5" >"$tmp/out1" 2>&1 ||
    { echo "FAIL sweep on 1 thread"; cat "$tmp/out1"; fail=1; }
OMP_NUM_THREADS=2 "$dcsim" sweep "$nf" --quiet $grid --replicas 6 -o "$tmp/t2.h5" >"$tmp/out2" 2>&1 ||
    { echo "FAIL sweep on 2 threads"; cat "$tmp/out2"; fail=1; }
grep -q "^# 9 points (9 run now, 0 from the file), written to" "$tmp/out1" ||
    { echo "FAIL sweep summary line"; cat "$tmp/out1"; fail=1; }
# point 5 is (20min, 0.5): the same numbers as dcsim run with those overrides
"$dcsim" run "$nf" --quiet --json --replicas 6 --set checkpoint/@interval=20min \
    --set reliability/@scale=0.5 >"$tmp/run.json" || { echo "FAIL dcsim run"; fail=1; }
if ! "$py" - "$tmp/t1.h5" "$tmp/t2.h5" "$tmp/run.json" <<'EOF'
import json, sys
import h5py, numpy as np; same = lambda a, b: a.dtype == b.dtype and a.shape == b.shape and all(np.array_equal(a[n], b[n], equal_nan=a.dtype[n].kind == 'f') for n in a.dtype.names)
a, b = h5py.File(sys.argv[1], "r")["sweep"], h5py.File(sys.argv[2], "r")["sweep"]
p, r = a["points"][:], a["replicas"][:]
assert p.shape == (9,) and r.shape == (54,), (p.shape, r.shape)
assert same(p, b["points"][:]), "points differ between 1 and 2 threads"
assert same(r, b["replicas"][:]), "replicas differ between 1 and 2 threads"
assert list(p["point"]) == list(range(9))
assert [x.decode() for x in p["checkpoint/@interval"]] == ["10min"] * 3 + ["20min"] * 3 + ["40min"] * 3
assert [x.decode() for x in p["reliability/@scale"]] == ["1", "2", "0.5"] * 3
assert all(p["status"] == 1) and all(p["replicas"] == 6)
assert list(r["point"]) == [i for i in range(9) for _ in range(6)]
assert list(r["replica"]) == list(range(6)) * 9
assert list(a.attrs["parameters"]) == ["checkpoint/@interval", "reliability/@scale"]
assert a.attrs["replicas"] == 6 and a.attrs["points_finished"] == 9 and a.attrs["seed"] == 42
# common random numbers: replica r has the same seed at every point, its own across replicas
assert len(set(r["event_digest"][:6])) == 6
# a point is `dcsim run --set ... --replicas 6`: bit-identical means and CIs
j = json.load(open(sys.argv[3]))["replicas"]
for name in ("time_to_train_s", "ettr_frac", "failures", "rework_s", "restart_time_s",
             "checkpoint_time_s"):
    assert p[5][name + "_mean"] == j[name]["mean"], (name, p[5][name + "_mean"], j[name])
    assert p[5][name + "_ci95"] == j[name]["ci95"], (name, p[5][name + "_ci95"], j[name])
# <reliability scale="2">: the cluster MTBF halves exactly, failures per day double
for base, scaled in ((0, 1), (3, 4), (6, 7)):
    assert abs(p[scaled]["cluster_mtbf_s"] / p[base]["cluster_mtbf_s"] - 0.5) < 1e-12
    rate = lambda i: p[i]["failures_mean"] / p[i]["time_to_train_s_mean"]
    assert 1.85 < rate(scaled) / rate(base) < 2.15, rate(scaled) / rate(base)
    assert 0.45 < rate(base + 2) / rate(base) < 0.55
EOF
then
    echo "FAIL sweep tables"
    fail=1
fi
# the same command again: every point from the file, the same tables
OMP_NUM_THREADS=2 "$dcsim" sweep "$nf" --quiet $grid --replicas 6 -o "$tmp/t1.h5" >"$tmp/out3" 2>&1
grep -q "^# 9 points (0 run now, 9 from the file)" "$tmp/out3" ||
    { echo "FAIL rerun did not take the points from the file"; cat "$tmp/out3"; fail=1; }
"$py" -c "
import sys, h5py, numpy as np; same = lambda a, b: a.dtype == b.dtype and a.shape == b.shape and all(np.array_equal(a[n], b[n], equal_nan=a.dtype[n].kind == 'f') for n in a.dtype.names)
a, b = h5py.File(sys.argv[1])['sweep'], h5py.File(sys.argv[2])['sweep']
assert same(a['points'][:], b['points'][:]) and same(a['replicas'][:], b['replicas'][:])
" "$tmp/t1.h5" "$tmp/t2.h5" || { echo "FAIL rerun changed the tables"; fail=1; }
# another sweep on that file: refused, unless --force
expect "different sweep refused" 2 "t1.h5: error: the file holds a different sweep" \
    "$dcsim" sweep "$nf" --quiet $grid --replicas 7 -o "$tmp/t1.h5"
expect "different seed refused" 2 "holds a different sweep" \
    "$dcsim" sweep "$nf" --quiet $grid --replicas 6 --seed 7 -o "$tmp/t1.h5"
expect "--force starts over" 0 "^# 9 points (9 run now, 0 from the file)" \
    "$dcsim" sweep "$nf" --quiet $grid --replicas 7 --force -o "$tmp/t1.h5"
echo "not hdf5" >"$tmp/text.h5"
expect "not a sweep file" 2 "text.h5: error: the file exists and is not a dcsim sweep file" \
    "$dcsim" sweep "$nf" --quiet $grid -o "$tmp/text.h5"
# bad input: one line naming the grid (or file line), the path and the value; nothing written
expect "bad grid value" 2 "^dcsim sweep: error: --grid checkpoint/@interval: value 'abc': <checkpoint interval=\"abc\">: 'abc' does not start with a number" \
    "$dcsim" sweep "$nf" --quiet --grid checkpoint/@interval=10min,abc -o "$tmp/bad.h5"
expect "bad scale" 2 "^dcsim sweep: error: --grid reliability/@scale: value '-1': <reliability scale=\"-1\">: scale must be positive" \
    "$dcsim" sweep "$nf" --quiet --grid reliability/@scale=1,-1 -o "$tmp/bad.h5"
expect "bad grid path" 2 "^dcsim sweep: error: --grid checkpoint/@bogus: value '1': <checkpoint bogus=\"1\">" \
    "$dcsim" sweep "$nf" --quiet --grid checkpoint/@bogus=1 -o "$tmp/bad.h5"
expect "empty grid value" 2 "^dcsim sweep: error: --grid needs PATH=V1,V2" \
    "$dcsim" sweep "$nf" --quiet --grid checkpoint/@interval=10min,,20min -o "$tmp/bad.h5"
expect "no output" 2 "^dcsim sweep: error: no result file" "$dcsim" sweep --grid reliability/@scale=1
[ -e "$tmp/bad.h5" ] && { echo "FAIL a bad sweep wrote a file"; fail=1; }
# --points: one point per line, comments, columns in order of appearance
printf '# a points file\ncheckpoint/@interval=10min  reliability/@scale=2\n\nreliability/@scale=0.5 # half\n' >"$tmp/p.txt"
expect "points file" 0 "^# 2 points (2 run now" \
    "$dcsim" sweep "$nf" --quiet --points "$tmp/p.txt" --replicas 2 -o "$tmp/p.h5"
"$py" -c "
import sys, h5py
p = h5py.File(sys.argv[1])['sweep/points'][:]
assert p.dtype.names[1:3] == ('checkpoint/@interval', 'reliability/@scale'), p.dtype.names
assert [tuple(x.decode() for x in (q[1], q[2])) for q in p] == [('10min', '2'), ('', '0.5')]
" "$tmp/p.h5" || { echo "FAIL points-file columns"; fail=1; }
printf 'reliability/@scale=2\n\nreliability/@scale=x\n' >"$tmp/pbad.txt"
expect "bad points-file value" 2 "pbad.txt:3: error: reliability/@scale=x: <reliability scale=\"x\">: 'x' does not start with a number" \
    "$dcsim" sweep "$nf" --quiet --points "$tmp/pbad.txt" -o "$tmp/bad.h5"
printf 'reliability/@scale=2 interval\n' >"$tmp/pbad2.txt"
expect "points-file token" 2 "pbad2.txt:1: error: 'interval': expected PATH=VALUE" \
    "$dcsim" sweep "$nf" --quiet --points "$tmp/pbad2.txt" -o "$tmp/bad.h5"
# at a <site>: energy, cost and CO2 per point, equal to dcsim run's, also
# when the step tier times the iteration (its compute fraction sets the power).
# That case is this script's one sweep on the step tier and stays for it, on
# 2,048 of the Guian SuperPOD's GPUs: ZeRO 3 (the 405B job does not fit in
# 80 GB with ZeRO 2 at DP 16) and a global batch of 256 (16 micro-batches
# per replica, as at 16,384 GPUs) keep the job's shape at an eighth the cost.
small="--set cluster/gpu/@count=2048 --set job/parallelism/@zero=3 --set job/parallelism/@global-batch=256"
"$dcsim" sweep "$src/tests/scenarios/site.xml" --quiet --grid site/@name=zhongwei,wuhu \
    --replicas 1 -o "$tmp/site.h5" >/dev/null || { echo "FAIL site sweep"; fail=1; }
# shellcheck disable=SC2086 # $small is six words
"$dcsim" sweep "$src/scenarios/examples/superpod-guian.xml" $small --quiet \
    --grid site/@name=guian --replicas 1 -o "$tmp/step-site.h5" >/dev/null ||
    { echo "FAIL step-tier site sweep"; fail=1; }
for s in zhongwei wuhu; do
    "$dcsim" run "$src/tests/scenarios/site.xml" --quiet --json --set "site/@name=$s" \
        >"$tmp/site-$s.json" || fail=1
done
# shellcheck disable=SC2086
"$dcsim" run "$src/scenarios/examples/superpod-guian.xml" $small --quiet --json >"$tmp/step-site.json" ||
    fail=1
"$dcsim" sweep "$nf" --quiet --grid checkpoint/@interval=15min \
    --replicas 1 -o "$tmp/no-site.h5" >/dev/null || { echo "FAIL sweep without a site"; fail=1; }
if ! "$py" - "$tmp" <<'EOF2'
import json, sys
import h5py, numpy as np; same = lambda a, b: a.dtype == b.dtype and a.shape == b.shape and all(np.array_equal(a[n], b[n], equal_nan=a.dtype[n].kind == 'f') for n in a.dtype.names)
d = sys.argv[1]
metrics = ("it_energy_j", "facility_energy_j", "pue_frac", "energy_cost_cny", "co2_kg")
pts = h5py.File(f"{d}/site.h5", "r")["sweep/points"][()]
runs = [json.load(open(f"{d}/site-{s}.json"))["summary"] for s in ("zhongwei", "wuhu")]
pts2 = h5py.File(f"{d}/step-site.h5", "r")["sweep/points"][()]
runs.append(json.load(open(f"{d}/step-site.json"))["summary"])
for row, run in zip(list(pts) + list(pts2), runs):
    for m in metrics:
        assert row[m + "_mean"] == run[m], (m, row[m + "_mean"], run[m])
assert pts["energy_cost_cny_mean"][1] > pts["energy_cost_cny_mean"][0]   # wuhu dearer
# the step tier's point is dcsim run's also in time (the grid above has no step tier)
for m in ("time_to_train_s", "ettr_frac", "failures", "rework_s"):
    assert pts2[0][m + "_mean"] == runs[2][m], (m, pts2[0][m + "_mean"], runs[2][m])
# without a site the energy columns are NaN
plain = h5py.File(f"{d}/no-site.h5", "r")["sweep/points"][()]
assert np.all(np.isnan(plain["it_energy_j_mean"]))
EOF2
then
    echo "FAIL sweep energy differs from dcsim run"
    fail=1
fi
expect "sweep help" 0 "^usage: dcsim sweep" "$dcsim" help sweep
[ "$fail" -eq 0 ] && echo "ok: sweep"
exit "$fail"
