#!/bin/sh
# bench_sweep.sh DCSIM [MPIEXEC] [--smoke] - `dcsim sweep` throughput: a
# 1,000-point campaign sweep of the default's job with its MFU given
# (tests/scenarios/no-fabric.xml; checkpoint interval 40 values x reliability
# scale 25 values, 1 replica each; the full sweep: scenario load and
# validation, campaign, HDF5 file) on 1 and 2 threads and on 2 MPI ranks of
# 1 thread, and the speed-ups. The built-in default would time each point's
# iteration with the step tier on 16,384 GPUs (about 1.5 s a point in
# Release, ten times that under ASan), which is not the sweep machinery this
# measures. One line per metric:
#   bench_sweep points=1000 threads=1 ranks=1 wall_s=... cpu_s=... points_per_s=...
# cpu_s is the user + system time of the sweep's processes: on a shared
# machine, wall_s shows the scaling only when the cores were free.
# --smoke: 8 points, for ctest (never fails on a slow machine). Without
# MPIEXEC (or an MPI build) the ranks line is left out.
set -u
dcsim=$1
mpiexec=${2:-}
smoke=0
[ "${3:-}" = "--smoke" ] || [ "${2:-}" = "--smoke" ] && smoke=1
[ "$mpiexec" = "--smoke" ] && mpiexec=
scenario=$(dirname "$0")/../scenarios/no-fabric.xml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$smoke" -eq 1 ]; then
    iv=10min,20min,40min,80min
    sc=1,2
else
    iv=$(seq -s, 5 2 83 | sed 's/,/min,/g')min                 # 5min .. 83min: 40 values
    sc=$(seq -s, 50 10 290 | sed 's/\([0-9]*\)\([0-9][0-9]\)/\1.\2/g') # 0.50 .. 2.90: 25 values
fi
n=$(( $(echo "$iv" | tr , '\n' | wc -l) * $(echo "$sc" | tr , '\n' | wc -l) ))
now() { date +%s.%N; }
run() { # LABEL THREADS RANKS COMMAND...
    label=$1 threads=$2 ranks=$3
    shift 3
    t0=$(now)
    if ! /usr/bin/time -f "%U %S" -o "$tmp/cpu" env OMP_NUM_THREADS="$threads" "$@" sweep \
        "$scenario" --quiet --grid "checkpoint/@interval=$iv" --grid "reliability/@scale=$sc" \
        -o "$tmp/$label.h5" >/dev/null; then
        echo "bench_sweep: the $label sweep failed" >&2
        exit 1
    fi
    t1=$(now)
    awk -v n="$n" -v th="$threads" -v r="$ranks" -v a="$t0" -v b="$t1" -v cpu="$(cat "$tmp/cpu")" 'BEGIN {
        split(cpu, c, " ")
        printf "bench_sweep points=%d threads=%d ranks=%d wall_s=%.3f cpu_s=%.3f points_per_s=%.1f\n",
               n, th, r, b - a, c[1] + c[2], n / (b - a) }' | tee -a "$tmp/lines"
}
run t1 1 1 "$dcsim"
run t2 2 1 "$dcsim"
if [ -n "$mpiexec" ] && command -v "$mpiexec" >/dev/null 2>&1 &&
    "$dcsim" help sweep | grep -q "MPI: built in"; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    run r2 1 2 "$mpiexec" --oversubscribe -n 2 -x OMP_NUM_THREADS=1 "$dcsim"
fi
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
       key = v["threads"] "x" v["ranks"]; pps[key] = v["points_per_s"] }
     END { if (pps["1x1"] > 0) {
               printf "bench_sweep speedup threads=2 ranks=1 vs_1=%.2f\n", pps["2x1"] / pps["1x1"]
               if (pps["1x2"] > 0)
                   printf "bench_sweep speedup threads=1 ranks=2 vs_1=%.2f\n", pps["1x2"] / pps["1x1"] } }' \
    "$tmp/lines"
