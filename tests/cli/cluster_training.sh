#!/bin/sh
# cluster_training.sh DCSIM SRC - the scenario's <job> as runs in a job
# stream (<cluster-jobs><training-runs>, docs/cluster.md "Training runs in
# the stream"): one run at 0 on an empty cluster of its GPUs reproduces
# `dcsim run` exactly (end = time to train, busy GPU-s = GPUs x time to
# train, no wait, the campaign's digest); behind a whole-cluster job of 10
# days under FIFO a run submitted at 1 h starts at exactly 10 days and ends
# a time to train later; the text names the runs; a <training-runs>
# without a <job> is refused in one line.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
one=$src/tests/scenarios/cluster-training.xml
behind=$src/tests/scenarios/cluster-training-trace.xml
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$dcsim" run --quiet --json "$one" > "$dir/run.json" || { echo "FAIL: dcsim run"; fail=1; }
"$dcsim" cluster --quiet --json "$one" > "$dir/a.json" || { echo "FAIL: dcsim cluster (one run)"; fail=1; }
"$dcsim" cluster --quiet --json "$behind" > "$dir/b.json" || { echo "FAIL: dcsim cluster (behind)"; fail=1; }
$py -c '
import json, sys
run, a, b = (json.load(open(f)) for f in sys.argv[1:4])
ttt = run["summary"]["time_to_train_s"]
bad = []
def eq(what, got, want):
    if got != want:
        bad.append("%s: %r, expected %r" % (what, got, want))
eq("one run: jobs", a["jobs"], 1)
eq("one run: end", a["end_s"], ttt)
eq("one run: busy GPU-s", a["busy_gpu_s"], 16384 * ttt)
eq("one run: wait P99", a["wait_s"]["p99"], 0)
t = a["training_runs"]
eq("one run: time to train", t["time_to_train_s"], ttt)
eq("one run: GPUs", t["gpus"], 16384)
eq("one run: the campaign digest", t["run_digest"], run["event_digest"].replace("0x", ""))
eq("one run: start", t["runs"][0]["start_s"], 0)
eq("one run: end of the run", t["runs"][0]["end_s"], ttt)
r = b["training_runs"]["runs"][0]
eq("behind: jobs", b["jobs"], 2)
eq("behind: submit", r["submit_s"], 3600)
eq("behind: start", r["start_s"], 864000)
eq("behind: end", r["end_s"], 864000 + ttt)
eq("behind: end of all", b["end_s"], 864000 + ttt)
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
' "$dir/run.json" "$dir/a.json" "$dir/b.json" || fail=1
expect "training text" 0 "^  run 1: submitted at 1 h, waited 239 h" "$dcsim" cluster --quiet "$behind"
expect "training header" 0 "^training runs of the <job>: 1 x 16384 GPUs" "$dcsim" cluster --quiet "$one"
exit $fail
