#!/bin/sh
# determinism.sh DCSIM - same scenario and seed give byte-identical summaries
# and traces, for OMP_NUM_THREADS=1 and 2; another seed gives another digest.
# OMP_NUM_THREADS=100000 (once a crash inside libgomp) is capped at 1024
# threads and gives the same summary, with one replica and with three.
set -u
dcsim=$1
dir=$(mktemp -d /tmp/dcsim-determinism-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail=0
OMP_NUM_THREADS=1 "$dcsim" run --json -o "$dir/t1.h5" >"$dir/s1.json" || fail=1
OMP_NUM_THREADS=2 "$dcsim" run --json -o "$dir/t2.h5" >"$dir/s2.json" || fail=1
OMP_NUM_THREADS=2 "$dcsim" run --json -o "$dir/t3.h5" >"$dir/s3.json" || fail=1
"$dcsim" run --json --seed 43 >"$dir/s4.json" || fail=1
OMP_NUM_THREADS=100000 "$dcsim" run --json >"$dir/s5.json" || { echo "FAIL: OMP_NUM_THREADS=100000: exit status $?"; fail=1; }
cmp -s "$dir/s1.json" "$dir/s5.json" || { echo "FAIL: summaries differ between 1 and 100000 threads"; fail=1; }
OMP_NUM_THREADS=1 "$dcsim" run --json --replicas 3 >"$dir/r1.json" || fail=1
OMP_NUM_THREADS=100000 "$dcsim" run --json --replicas 3 >"$dir/r2.json" || { echo "FAIL: OMP_NUM_THREADS=100000 --replicas 3: exit status $?"; fail=1; }
cmp -s "$dir/r1.json" "$dir/r2.json" || { echo "FAIL: replica summaries differ between 1 and 100000 threads"; fail=1; }
cmp -s "$dir/s1.json" "$dir/s2.json" || { echo "FAIL: summaries differ between 1 and 2 threads"; fail=1; }
cmp -s "$dir/s2.json" "$dir/s3.json" || { echo "FAIL: summaries differ between two runs"; fail=1; }
cmp -s "$dir/t1.h5" "$dir/t2.h5" || { echo "FAIL: traces differ between 1 and 2 threads"; fail=1; }
cmp -s "$dir/t2.h5" "$dir/t3.h5" || { echo "FAIL: traces differ between two runs"; fail=1; }
d1=$(grep '"event_digest"' "$dir/s1.json")
d4=$(grep '"event_digest"' "$dir/s4.json")
[ -n "$d1" ] || { echo "FAIL: no event digest in the JSON summary"; fail=1; }
[ "$d1" != "$d4" ] || { echo "FAIL: seed 43 gives the same digest as seed 42"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: identical for 1 and 2 threads and across runs; $d1"
exit "$fail"
