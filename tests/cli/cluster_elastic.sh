#!/bin/sh
# cluster_elastic.sh DCSIM SRC - elastic jobs in `dcsim cluster` end to end
# (docs/cluster.md "Elastic jobs") on scenarios/examples/cluster-synthetic-h100.xml
# with an elastic share: the text line; elastic="false" is the run without
# elastic jobs (same digest); mean wait falls with elastic on (the direction
# asserted, the figures printed); the -o table's elastic columns (layout 4,
# busy GPU-s = sum of held_s x gpus_mean, min <= gpus_mean <= gpus); the same
# bytes twice.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/cluster-synthetic-h100.xml
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/dcsim-cluster-elastic-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
el="--set cluster-jobs/sizes/@elastic-share=50% --set cluster-jobs/sizes/@elastic-min=25%"
expect "elastic text" 0 "^elastic .* resizes" "$dcsim" cluster --quiet "$ex" $el
expect "elastic defaults" 0 "scale linearly" "$dcsim" cluster --quiet "$ex" $el
"$dcsim" cluster --quiet --json "$ex" >"$tmp/base.json" || { echo "FAIL: base"; fail=1; }
"$dcsim" cluster --quiet --json "$ex" $el --set cluster-jobs/scheduler/@elastic=false \
    >"$tmp/rigid.json" || { echo "FAIL: rigid"; fail=1; }
"$dcsim" cluster --quiet --json -o "$tmp/e.h5" "$ex" $el >"$tmp/e.json" ||
    { echo "FAIL: elastic -o"; fail=1; }
"$dcsim" cluster --quiet --json "$ex" $el >"$tmp/e2.json"
cmp -s "$tmp/e.json" "$tmp/e2.json" || { echo "FAIL: two elastic runs differ"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, sys
import h5py
t = sys.argv[1]
base, rigid, e = (json.load(open(t + "/%s.json" % n)) for n in ("base", "rigid", "e"))
bad = []
if rigid["digest"] != base["digest"]:
    bad.append("elastic=false is not the run without elastic jobs")
if "elastic" in base or rigid["elastic"]["resizes"] != 0 or rigid["elastic"]["resized"]:
    bad.append("elastic object: base %r, rigid %r" % (base.get("elastic"), rigid["elastic"]))
x = e["elastic"]
if not (x["jobs"] > 0 and x["resizes"] > 0 and x["grown_gpu_s"] > 0):
    bad.append("no resize on the example: %r" % x)
print("wait mean/P90 (h): rigid %.3f/%.3f elastic %.3f/%.3f; utilisation %.4f -> %.4f"
      % (rigid["wait_s"]["mean"] / 3600, rigid["wait_s"]["p90"] / 3600,
         e["wait_s"]["mean"] / 3600, e["wait_s"]["p90"] / 3600,
         rigid["utilisation"], e["utilisation"]))
if not e["wait_s"]["mean"] < rigid["wait_s"]["mean"]:
    bad.append("elastic did not lower the mean wait")
if abs(e["busy_gpu_s"] + e["idle_gpu_s"] - e["capacity_gpu_s"]) > 1e-9 * e["capacity_gpu_s"]:
    bad.append("busy + idle != capacity")
with h5py.File(t + "/e.h5", "r") as f:
    g = f["cluster"]
    if g.attrs["layout_version"] not in (b"5", "5"):
        bad.append("layout_version %r" % g.attrs["layout_version"])
    j = g["jobs"][:]
    held = sum(float(r["held_s"]) * float(r["gpus_mean"]) for r in j)
    if abs(held - e["busy_gpu_s"]) > 1e-6 * e["busy_gpu_s"]:
        bad.append("sum held x gpus_mean %r != busy %r" % (held, e["busy_gpu_s"]))
    for r in j:
        lo = r["min_gpus"] if r["min_gpus"] else r["gpus"]
        if not (lo - 1e-9 <= r["gpus_mean"] <= r["gpus"] + 1e-9):
            bad.append("job %d holds %g GPUs on average" % (r["id"], r["gpus_mean"]))
            break
    if int((j["min_gpus"] > 0).sum()) != x["jobs"] or int(j["resizes"].sum()) != x["resizes"]:
        bad.append("the table's elastic jobs or resizes differ from the totals")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
exit $fail
