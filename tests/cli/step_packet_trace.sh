#!/bin/sh
# step_packet_trace.sh DCSIM SRC - `dcsim step --network packet -o FILE.h5`
# and `dcsim run -o` with <step network="packet"/> (issue 19): the file has
# /packet, /packet/links (only the links that carried traffic, ascending)
# and /packet/series; per link the bins sum to its end counters exactly,
# and over the links to the step's packet totals (packet-hops, PAUSE
# frames); the same run writes the same bytes; -o changes no figure of the
# step; refusals (onto the scenario, a directory, -o without the packet
# network, --bin without -o, odd --bins) are one line and leave no
# temporary; the run trace holds the same series and `dcsim report` draws
# its packet section.
set -u
dcsim=$1
src=$(cd "$2" && pwd)
case $dcsim in /*) ;; *) dcsim=$(pwd)/$dcsim ;; esac
. "$(dirname "$0")/expect.sh"
ls=$src/scenarios/examples/concurrency-leafspine.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! $py -c "import h5py, numpy" 2>/dev/null; then
    echo "skip: step_packet_trace needs /usr/bin/python3 with h5py"; exit 0
fi
# 16 GPUs, 2 stages, 4 samples: 65,536 packet-hops, under a second
tiny="--set cluster/gpu/@count=16 --set job/parallelism/@pp=2 --set job/parallelism/@global-batch=4 --set job/model/@ref=megatron-gpt-1.7b"
mkdir "$tmp/a" "$tmp/b"
(cd "$tmp/a" && "$dcsim" step "$ls" $tiny --network packet --bins 64 --json -q -o t.h5 >p.json) ||
    { echo "FAIL step -o: exit $?"; fail=1; }
(cd "$tmp/b" && "$dcsim" step "$ls" $tiny --network packet --bins 64 --json -q -o t.h5 >p.json) ||
    { echo "FAIL step -o again: exit $?"; fail=1; }
cmp -s "$tmp/a/t.h5" "$tmp/b/t.h5" || { echo "FAIL: the same step gave different files"; fail=1; }
"$dcsim" step "$ls" $tiny --network packet --json -q >"$tmp/p0.json" ||
    { echo "FAIL step: exit $?"; fail=1; }
sed 's|  </job>|    <step network="packet"/>\n  </job>|' "$ls" >"$tmp/packet.xml"
"$dcsim" run "$tmp/packet.xml" $tiny -q -o "$tmp/run.h5" >/dev/null 2>"$tmp/err" ||
    { echo "FAIL run -o: exit $?"; cat "$tmp/err"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, sys
import h5py, numpy as np
tmp = sys.argv[1]
o = json.load(open(f"{tmp}/a/p.json"))
k = o["packet_network"]
base = json.load(open(f"{tmp}/p0.json"))["packet_network"]
for key in ("packet_hops", "events", "pauses", "packets", "max_held_bytes"):
    assert k[key] == base[key], (key, k[key], base[key])   # -o changes nothing
assert o["iteration_s"] == json.load(open(f"{tmp}/p0.json"))["iteration_s"]

def check(path, bins_most):
    with h5py.File(path, "r") as f:
        g = f["packet"]
        links, s = g["links"][()], g["series"]
        nb, nl = int(g.attrs["bins"]), int(g.attrs["links"])
        assert g.attrs["op"] in (b"step", "step")
        assert nb <= bins_most and nl == len(links) and 0 < nl < int(g.attrs["fabric_links"])
        assert np.all(np.diff(links["link"].astype(np.int64)) > 0)
        assert np.all(links["packets_sent"] > 0)
        v = {c: s[c][()] for c in ("sent_bytes", "packets", "pauses", "ecn_marks",
                                   "queue_max_bytes", "held_max_bytes", "queue_end_bytes")}
        for c, a in v.items():
            assert a.shape == (nb, nl), (c, a.shape)
        # per link: the bins sum to its end counters exactly
        assert np.array_equal(v["sent_bytes"].sum(axis=0), links["bytes_sent"])
        assert np.array_equal(v["packets"].sum(axis=0), links["packets_sent"])
        assert np.array_equal(v["pauses"].sum(axis=0), links["pauses"])
        assert np.array_equal(v["ecn_marks"].sum(axis=0), links["ecn_marks"])
        assert np.array_equal(v["queue_max_bytes"].max(axis=0), links["max_queued_bytes"])
        assert np.array_equal(v["held_max_bytes"].max(axis=0), links["max_held_bytes"])
        assert not v["queue_end_bytes"][-1].any()
        # over the links: the step's totals (every packet-hop is a packet a link sent)
        assert int(v["packets"].sum()) == k["packet_hops"], (v["packets"].sum(), k)
        assert int(v["pauses"].sum()) == k["pauses"]
        edges = s["t_edges_s"][()]
        assert edges.shape == (nb + 1,) and edges[0] == 0 and edges[-1] >= g.attrs["end_s"]
        return {c: a.copy() for c, a in v.items()}, links.copy()

step_v, step_links = check(f"{tmp}/a/t.h5", 64)
assert o["packet_network"]["trace"]["links"] == len(step_links)
run_v, run_links = check(f"{tmp}/run.h5", 256)
with h5py.File(f"{tmp}/run.h5", "r") as f:
    assert "summary" in f and "step" in f      # the run trace's own groups stay
# the same iteration: the same links and per-link totals as the step's file
assert np.array_equal(run_links, step_links)
PY

cp "$ls" "$tmp/s.xml"
bad "onto the scenario" "an input of this run; choose another name" \
    "$dcsim" step "$tmp/s.xml" $tiny --network packet -q -o "$tmp/s.xml"
mkdir "$tmp/dir"
bad "onto a directory" "cannot write the trace: it is a directory" \
    "$dcsim" step "$ls" $tiny --network packet -q -o "$tmp/dir"
bad "-o on the flow net" "-o is an option of --network packet" \
    "$dcsim" step "$ls" $tiny --concurrent -o "$tmp/x.h5"
bad "--bin without -o" "--bin: needs -o FILE.h5" \
    "$dcsim" step "$ls" $tiny --network packet --bin 1us
bad "odd bins" "--bins 3: expected an even whole number from 2 to 1048576" \
    "$dcsim" step "$ls" $tiny --network packet -o "$tmp/x.h5" --bins 3
left=$(find "$tmp" -name "*.tmp.*" | wc -l)
[ "$left" -eq 0 ] || { echo "FAIL: $left temporaries left after errors"; fail=1; }
[ -e "$tmp/x.h5" ] && { echo "FAIL: a refused step wrote $tmp/x.h5"; fail=1; }

if $py -c "import matplotlib" 2>/dev/null; then
    "$dcsim" report "$tmp/run.h5" -o "$tmp/r.html" >"$tmp/r.txt" 2>"$tmp/err" ||
        { echo "FAIL report: exit $?"; cat "$tmp/err"; fail=1; }
    for want in 'id="packet-section-0"' 'data-figure="packet_series"' 'id="packet-links-0"'; do
        grep -q "$want" "$tmp/r.html" || { echo "FAIL report: no $want"; fail=1; }
    done
    grep -q "step on the packet tier" "$tmp/r.txt" || { echo "FAIL report text"; fail=1; }
fi
[ "$fail" -eq 0 ] && echo "ok: step --network packet -o, run -o"
exit "$fail"
