#!/bin/sh
# run.sh - build the libFuzzer targets with clang (build-fuzz/) and fuzz each
# one in turn for a time budget, or replay the saved inputs.
#   tests/fuzz/run.sh [SECONDS]        fuzz each target SECONDS (default 1800)
#   tests/fuzz/run.sh --smoke          each target 20 s (CI)
#   tests/fuzz/run.sh --replay         every regression and corpus file once
#   FUZZ_TARGETS="fuzz_units" ...      only these targets
# Each target runs with -timeout=10 (a hang), -rss_limit_mb=2048 and leak
# detection; new corpus entries go to build-fuzz/corpus/TARGET (seeded from
# tests/fuzz/corpus/TARGET and regressions/TARGET), crash, timeout, leak and
# oom artifacts to build-fuzz/artifacts/TARGET-DATE-TIME/. One summary line
# per target:
#   fuzz target=fuzz_units seconds=1800 execs=... execs_per_s=... cov=... ft=... corpus=...
#        new_inputs=... crashes=0
# (corpus: inputs libFuzzer keeps at the end; new_inputs: those it added to
# build-fuzz/corpus/TARGET over all runs so far)
# Exit status 1 when any target left an artifact (or a replay failed).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
mode=fuzz
seconds=1800
case "${1:-}" in
--smoke) seconds=20 ;;
--replay) mode=replay ;;
--help | -h) sed -n '2,15p' "$0"; exit 0 ;;
'') ;;
*[!0-9]*) echo "usage: $0 [--smoke | --replay | SECONDS]" >&2; exit 2 ;;
*) seconds=$1 ;;
esac
targets=${FUZZ_TARGETS:-fuzz_units fuzz_set fuzz_scenario fuzz_run fuzz_trace}
jobs=${FUZZ_BUILD_JOBS:-2}

if ! command -v clang >/dev/null 2>&1; then
    echo "run.sh: clang is not installed (Debian: clang libclang-rt-dev libomp-dev)" >&2
    exit 2
fi
mkdir -p "$build"
CC=clang cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDCSIM_FUZZ=ON \
    -DDCSIM_MPI=OFF >"$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; exit 2; }
# shellcheck disable=SC2086 # one word per target
cmake --build "$build" -j "$jobs" --target $targets >"$build/build.log" 2>&1 ||
    { tail -n 40 "$build/build.log" >&2; exit 2; }

# leaks are failures; UBSan reports abort (-fno-sanitize-recover)
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS UBSAN_OPTIONS

failed=0
for t in $targets; do
    bin=$build/fuzz/$t
    if [ "$mode" = replay ]; then
        # libFuzzer runs each file given once (no fuzzing)
        files=$(find "$here/regressions/$t" "$here/corpus/$t" -type f ! -name '.*' | sort)
        # shellcheck disable=SC2086 # file names have no spaces (checked in by us)
        if "$bin" -rss_limit_mb=2048 -timeout=10 $files >"$build/$t.replay.log" 2>&1; then
            echo "fuzz target=$t replay=ok inputs=$(echo "$files" | wc -l)"
        else
            echo "fuzz target=$t replay=FAILED (see $build/$t.replay.log)"
            tail -n 30 "$build/$t.replay.log" >&2
            failed=1
        fi
        continue
    fi
    corpus=$build/corpus/$t
    artifacts=$build/artifacts/$t-$(date +%Y%m%d-%H%M%S) # this run's only
    mkdir -p "$corpus" "$artifacts"
    dict=""
    [ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
    # max_len: longer than any real input of its kind, a bound on each run's
    # cost; the slow loader targets (~20 exec/s) try long inputs from the start
    len_control=100
    case $t in
    fuzz_units) max_len=256 ;;
    fuzz_set) max_len=512 len_control=0 ;;
    *) max_len=16384 ;;
    esac
    log=$build/$t.log
    start=$(date +%s)
    # one process (not -fork): it stops at the first crash, hang or leak, and
    # its artifact makes the run fail below
    # shellcheck disable=SC2086 # dict is empty or one word
    "$bin" "$corpus" "$here/corpus/$t" "$here/regressions/$t" $dict -max_total_time="$seconds" -max_len="$max_len" -len_control="$len_control" -timeout=10 \
        -rss_limit_mb=2048 -detect_leaks=1 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" >"$log" 2>&1 || true
    took=$(( $(date +%s) - start ))
    # figures from libFuzzer's last status line and its final stats
    last=$(grep -aE '^#[0-9]+' "$log" | tail -n 1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
    ncorpus=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
    new=$(find "$corpus" -type f | wc -l)
    crashes=$(find "$artifacts" -type f | wc -l)
    echo "fuzz target=$t seconds=$took execs=${execs:-?} execs_per_s=${rate:-?} cov=${cov:-?} ft=${ft:-?} corpus=${ncorpus:-?} new_inputs=$new crashes=$crashes"
    if [ "$crashes" -ne 0 ] || ! grep -aq '^stat::number_of_executed_units' "$log"; then
        echo "run.sh: $t failed; artifacts in $artifacts, log $log" >&2
        grep -aE 'ERROR|SUMMARY|Test unit written' "$log" | head -n 10 >&2 || true
        failed=1
    fi
done
exit "$failed"
