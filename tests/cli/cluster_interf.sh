#!/bin/sh
# cluster_interf.sh DCSIM SRC - interference on the shared fabric in
# `dcsim cluster` (docs/cluster.md "Interference"): without a <fabric> the
# two-site example keeps the schedule docs/cluster.md recorded before
# interference existed (digest e0ab4a90fc51a8d5) and prints no interference;
# on the leaf-spine example every job runs at least its stated duration,
# the interference cost is sum of GPUs x (run - isolated) from the job
# table, busy + idle = capacity, topology packing costs less than first-fit
# (and shares fewer leaf uplinks), a comm-share profile works, the same
# bytes at 1 and 2 OpenMP threads; -o's jobs table has isolated_run_s (the
# stated duration) and run_s = end - start. (Closed forms and the cache's
# bit-identity: tests/models/test_cluster_interf.c.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/cluster-interference-leafspine.xml
two=$src/scenarios/examples/cluster-two-sites-month.xml
py=/usr/bin/python3
json() { "$dcsim" cluster --quiet --json "$@"; }
field() { $py -c "import json,sys; print(json.load(sys.stdin)$1)"; }
expect "no fabric: no interference" 0 "^note       no <fabric>: every job runs its stated" \
    "$dcsim" cluster --quiet "$two"
d=$(json "$two" | field '["digest"]')
[ "$d" = "e0ab4a90fc51a8d5" ] || { echo "FAIL: without a fabric the digest is $d"; fail=1; }
json "$two" | $py -c 'import json,sys; sys.exit("interference" in json.load(sys.stdin))' ||
    { echo "FAIL: interference reported without a fabric"; fail=1; }
expect "interference text" 0 "^  run/isolated " "$dcsim" cluster --quiet "$ex"
expect "interference defaults" 0 "traffic compute 0.409 s per iteration (A" \
    "$dcsim" cluster --quiet "$ex"
tmp=$(mktemp -d /tmp/dcsim-interf-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
json "$ex" -o "$tmp/ff.h5" >"$tmp/ff.json" || { echo "FAIL: first-fit run"; fail=1; }
json "$ex" --set cluster-jobs/placement/@policy=topology >"$tmp/topo.json" ||
    { echo "FAIL: topology run"; fail=1; }
json "$ex" --set cluster-jobs/traffic/@comm-share=30% >"$tmp/share.json" ||
    { echo "FAIL: comm-share run"; fail=1; }
OMP_NUM_THREADS=1 json "$ex" >"$tmp/t1.json" && OMP_NUM_THREADS=2 json "$ex" >"$tmp/t2.json" &&
    cmp -s "$tmp/t1.json" "$tmp/t2.json" && cmp -s "$tmp/t1.json" "$tmp/ff.json" ||
    { echo "FAIL: not the same bytes at 1 and 2 threads"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
ff, topo, share = (json.load(open("%s/%s.json" % (tmp, k))) for k in ("ff", "topo", "share"))
bad = []
for name, d in (("first-fit", ff), ("topology", topo), ("comm-share", share)):
    i = d["interference"]
    q = i["run_over_isolated"]
    if not (1 <= q["p50"] <= q["p90"] <= q["p99"] <= q["max"]) or q["mean"] < 1:
        bad.append("%s: run/isolated %r" % (name, q))
    if abs(d["busy_gpu_s"] + d["idle_gpu_s"] - d["capacity_gpu_s"]) > 1e-9 * d["capacity_gpu_s"]:
        bad.append("%s: busy + idle != capacity" % name)
    if not (i["cost_gpu_s"] > 0 and 0 < i["cache_hit_rate"] < 1):
        bad.append("%s: cost %r, hit rate %r" % (name, i["cost_gpu_s"], i["cache_hit_rate"]))
    if i["cache_misses"] != i["simulations"]:
        bad.append("%s: %r misses, %r simulations" % (name, i["cache_misses"], i["simulations"]))
if not topo["interference"]["cost_gpu_s"] < ff["interference"]["cost_gpu_s"]:
    bad.append("topology packing costs no less than first-fit")
up = lambda d: [e["shared"] for e in d["interference"]["shared_links"]
                if (e["from_tier"], e["to_tier"]) == (1, 2)][0]
if not up(topo) < up(ff):
    bad.append("topology shares no fewer leaf uplinks (%r, %r)" % (up(topo), up(ff)))
try:
    import h5py
    with h5py.File("%s/ff.h5" % tmp, "r") as f:
        jobs = f["cluster/jobs"][()]
        version = f["cluster"].attrs["layout_version"]
    cost = sum(float(j["gpus"]) * (j["run_s"] - j["isolated_run_s"]) for j in jobs)
    if abs(cost - ff["interference"]["cost_gpu_s"]) > 1e-6 * cost:
        bad.append("table cost %r, reported %r" % (cost, ff["interference"]["cost_gpu_s"]))
    if any(j["run_s"] != j["end_s"] - j["start_s"] or j["run_s"] < j["isolated_run_s"] * (1 - 1e-12)
           for j in jobs):
        bad.append("a row's run_s is not end - start, or below its isolated run")
    if (version.decode() if isinstance(version, bytes) else str(version)) != "5":
        bad.append("layout_version %r" % version)
except ImportError:
    pass
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
[ "$fail" -eq 0 ] && echo "ok: cluster_interf"
exit "$fail"
