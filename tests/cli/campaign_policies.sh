#!/bin/sh
# campaign_policies.sh DCSIM SRC - two campaign policies of docs/failures.md:
#  - <checkpoint interval="adaptive">: with a memory so long the estimate
#    never leaves the prior, the run is interval="auto" byte for byte (the
#    JSON summary); with the default memory, the summary gains the adapted
#    intervals (shortest <= first <= longest) and "defaults used" names the
#    default memory; set for an MTBF four times too optimistic, adapting
#    trains faster than the fixed interval set for it (llama3-failures.xml);
#  - <spares per="su">: an SU as large as the job is the single pool byte for
#    byte; the same 128 spares split into 128 SUs of 16 nodes wait more than
#    one pool, and 2 per SU less than 1 (tests/scenarios/spares-per-su.xml);
#  - a run of nothing but compute has ETTR exactly 1.
set -u
dcsim=$1
src=$2
fail=0
ex=$src/scenarios/examples/llama3-failures.xml
sp=$src/tests/scenarios/spares-per-su.xml
tmp=$(mktemp -d /tmp/dcsim-policies-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
run() { "$dcsim" run --quiet --json "$@"; }

# the run's own summary without the lines adaptive adds (and the default's)
strip() {
    /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("checkpoint_interval_min_s", "checkpoint_interval_max_s", "checkpoint_adaptations"):
    d["summary"].pop(k, None)
d.pop("defaults_used", None)
print(json.dumps(d["summary"], sort_keys=True))' "$1"
}
run "$ex" --set checkpoint/@interval=auto >"$tmp/auto.json" || fail=1
run "$ex" --set checkpoint/@interval=adaptive --set checkpoint/@adapt-window=1e15s \
    >"$tmp/frozen.json" || fail=1
[ "$(strip "$tmp/auto.json")" = "$(strip "$tmp/frozen.json")" ] || {
    echo "FAIL: adaptive with an estimate that never moves differs from auto"; fail=1; }

run "$ex" --set checkpoint/@interval=adaptive >"$tmp/adaptive.json" || fail=1
run "$ex" --replicas 8 --set checkpoint/@interval=1642.8s >"$tmp/wrong.json" || fail=1
run "$ex" --replicas 8 --set checkpoint/@interval=adaptive \
    --set checkpoint/@prior-mtbf=11.664h >"$tmp/recovered.json" || fail=1
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
a = json.load(open(f"{d}/adaptive.json"))
s = a["summary"]
assert s["checkpoint_interval_min_s"] <= s["checkpoint_interval_s"] <= s["checkpoint_interval_max_s"], s
assert s["checkpoint_interval_min_s"] < s["checkpoint_interval_max_s"] and s["checkpoint_adaptations"] > 0, s
assert any(x["what"] == "adapt-window" for x in a["defaults_used"]), a["defaults_used"]
# Daly's interval for 11.664 h (four times the cluster's 2.916 h MTBF) at a 33 s write
wrong = json.load(open(f"{d}/wrong.json"))["replicas"]["time_to_train_s"]
good = json.load(open(f"{d}/recovered.json"))["replicas"]["time_to_train_s"]
assert good["mean"] + good["ci95"] < wrong["mean"] - wrong["ci95"], (good, wrong)
PY

# spare pools per SU
run "$sp" --replicas 4 >"$tmp/pool.json" || fail=1
run "$sp" --replicas 4 --set reliability/spares/@per=su --set reliability/spares/@su-nodes=2048 \
    >"$tmp/one_su.json" || fail=1
[ "$(strip "$tmp/pool.json")" = "$(strip "$tmp/one_su.json")" ] || {
    echo "FAIL: one SU as large as the job differs from the single pool"; fail=1; }
run "$sp" --replicas 4 --set reliability/spares/@per=su --set reliability/spares/@su-nodes=16 \
    --set reliability/spares/@nodes=1 >"$tmp/su1.json" || fail=1
run "$sp" --replicas 4 --set reliability/spares/@per=su --set reliability/spares/@su-nodes=16 \
    --set reliability/spares/@nodes=2 >"$tmp/su2.json" || fail=1
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
def wait(name):
    return json.load(open(f"{d}/{name}.json"))["summary"]["spare_wait_s"]
def ttt(name):
    return json.load(open(f"{d}/{name}.json"))["replicas"]["time_to_train_s"]["mean"]
assert wait("su1") > wait("su2") > wait("pool"), (wait("pool"), wait("su1"), wait("su2"))
assert ttt("su1") > ttt("su2") > ttt("pool"), (ttt("pool"), ttt("su1"), ttt("su2"))
PY
# a run of nothing but compute (no failures, free checkpoints): ETTR exactly 1,
# not a rounding above it refused by the summary's range check
"$dcsim" run --quiet --json "$src/scenarios/examples/moe-alltoall-leafspine.xml" \
    --set checkpoint/@write-time=0s 2>/dev/null >"$tmp/free.json" || {
    echo "FAIL: free checkpoints on the MoE example"; fail=1; }
/usr/bin/python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["summary"]["ettr_frac"] == 1' "$tmp/free.json" || fail=1
exit $fail
