#!/bin/sh
# netbench_packet_trace.sh DCSIM SRC - `dcsim netbench --tier packet -o
# FILE.h5` end to end: the file has /packet, /packet/links and
# /packet/series with the documented shapes and root attributes (only the
# links that carried traffic are stored, ascending); the
# series' sums equal the run's JSON totals and /packet/links' end counters
# exactly (an incast that pauses, and a ring all-reduce); -o changes no
# figure of the run; the same run writes the same bytes; -o onto the
# scenario, onto a directory, for a phenomenon, with bad --bin/--bins or
# with more bins than memory allows is refused with one line and leaves no
# temporary; `dcsim report` draws the packet section.
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
    echo "skip: netbench_packet_trace needs /usr/bin/python3 with h5py"; exit 0
fi

# a 200K port buffer makes the 15 -> 1 incast of 256K pause (PFC rule)
inc="--tier packet --op incast --bytes 256K --buffer 200K"
small="--bins 32"
"$dcsim" netbench "$ls" $inc --bins 64 --json -o "$tmp/inc.h5" >"$tmp/inc.json" 2>"$tmp/err" ||
    { echo "FAIL incast -o: exit $?"; cat "$tmp/err"; fail=1; }
"$dcsim" netbench "$ls" $inc --json >"$tmp/inc0.json" 2>"$tmp/err" ||
    { echo "FAIL incast: exit $?"; cat "$tmp/err"; fail=1; }
"$dcsim" netbench "$ls" --tier packet --op allreduce --bytes 1M --bins 32 --json -o "$tmp/ar.h5" \
    >"$tmp/ar.json" 2>"$tmp/err" || { echo "FAIL allreduce -o: exit $?"; cat "$tmp/err"; fail=1; }
$py - "$tmp" <<'EOF' || fail=1
import json, sys
import h5py, numpy as np
tmp = sys.argv[1]

def check(name, want_pauses):
    o = json.load(open(f"{tmp}/{name}.json"))
    with h5py.File(f"{tmp}/{name}.h5", "r") as f:
        for a in ("format_version", "dcsim_version", "seed", "event_digest", "events_fired",
                  "scenario_name", "command"):
            assert a in f.attrs, (name, a)
        assert "netbench" in f.attrs["command"] and f.attrs["format_version"] == 1
        g = f["packet"]
        links = g["links"][()]
        s = g["series"]
        nb, nl = int(g.attrs["bins"]), int(g.attrs["links"])
        assert nb == o["trace"]["bins"] and nl == len(links) == o["trace"]["links"], (nb, nl)
        assert nb <= o["trace"]["max_bins"]
        edges = s["t_edges_s"][()]
        assert edges.shape == (nb + 1,) and np.all(np.diff(edges) > 0)
        assert edges[-1] >= o["packet_time_s"] > edges[-2], (edges[-2:], o["packet_time_s"])
        cols = ("sent_bytes", "packets", "pauses", "ecn_marks", "queue_end_bytes",
                "queue_max_bytes", "held_end_bytes", "held_max_bytes")
        v = {c: s[c][()] for c in cols}
        for c in cols:
            assert v[c].shape == (nb, nl), (c, v[c].shape)
            assert "units" in s[c].attrs, c
        # exact sums: the JSON's totals and every link's end counters
        assert int(v["packets"].sum()) == o["packet_hops"], (v["packets"].sum(), o["packet_hops"])
        assert int(v["pauses"].sum()) == o["pauses"], (v["pauses"].sum(), o["pauses"])
        assert (v["pauses"].sum() > 0) == want_pauses, name
        assert np.array_equal(v["packets"].sum(axis=0), links["packets_sent"])
        assert np.array_equal(v["pauses"].sum(axis=0), links["pauses"])
        assert np.array_equal(v["ecn_marks"].sum(axis=0), links["ecn_marks"])
        assert np.array_equal(v["sent_bytes"].sum(axis=0), links["bytes_sent"])
        assert np.array_equal(v["queue_max_bytes"].max(axis=0), links["max_queued_bytes"])
        assert np.array_equal(v["held_max_bytes"].max(axis=0), links["max_held_bytes"])
        assert v["held_max_bytes"].max() == o["max_held_bytes"]
        assert np.all(v["queue_end_bytes"] <= v["queue_max_bytes"])
        assert not v["queue_end_bytes"][-1].any() and not v["held_end_bytes"][-1].any()
        # only the links that carried traffic, ascending (layout 2): every one
        # sent a packet, and the run's packet-hops are all theirs
        assert g.attrs["layout_version"] == b"2" or g.attrs["layout_version"] == "2"
        assert int(g.attrs["fabric_links"]) == o["trace"]["fabric_links"] == 9632
        assert 0 < nl < 9632 and np.all(np.diff(links["link"].astype(np.int64)) > 0)
        assert np.all(links["link"] < 9632) and np.all(links["packets_sent"] > 0)
    return o

inc = check("inc", True)
check("ar", False)
base = json.load(open(f"{tmp}/inc0.json"))
for k in ("packet_time_s", "events", "pauses", "packet_hops", "max_held_bytes"):
    assert inc[k] == base[k], (k, inc[k], base[k])   # -o changes nothing
EOF

# the same run, the same bytes (run from two folders: the command names the file)
mkdir "$tmp/a" "$tmp/b"
(cd "$tmp/a" && "$dcsim" netbench "$ls" $inc $small -o t.h5 >/dev/null) &&
    (cd "$tmp/b" && "$dcsim" netbench "$ls" $inc $small -o t.h5 >/dev/null) &&
    cmp -s "$tmp/a/t.h5" "$tmp/b/t.h5" || { echo "FAIL: the same run gave different files"; fail=1; }
expect "text names the file" 0 "^# time series  [0-9]* bins of .* -> $tmp/a/t.h5" \
    "$dcsim" netbench "$ls" $inc $small -o "$tmp/a/t.h5"

cp "$ls" "$tmp/s.xml"
sum=$(cksum <"$tmp/s.xml")
bad "onto the scenario" "an input of this run; choose another name" \
    "$dcsim" netbench "$tmp/s.xml" --tier packet --op send -o "$tmp/s.xml"
[ "$(cksum <"$tmp/s.xml")" = "$sum" ] || { echo "FAIL: the scenario was changed"; fail=1; }
mkdir "$tmp/dir"
bad "onto a directory" "cannot write the trace: it is a directory" \
    "$dcsim" netbench "$ls" --tier packet --op send -o "$tmp/dir"
bad "a phenomenon" "-o $tmp/x.h5: --op incast-sweep, victim, stall and collision run several nets" \
    "$dcsim" netbench "$ls" --tier packet --op stall -o "$tmp/x.h5"
bad "odd bins" "--bins 3: expected an even whole number from 2 to 1048576" \
    "$dcsim" netbench "$ls" --tier packet -o "$tmp/x.h5" --bins 3
bad "bin zero" "--bin 0s: expected a time from 1ps to 1s" \
    "$dcsim" netbench "$ls" --tier packet -o "$tmp/x.h5" --bin 0s
bad "bin without -o" "--bin: needs -o FILE.h5" "$dcsim" netbench "$ls" --tier packet --bin 1us
bad "-o on the flow tier" "-o is an option of --tier packet" "$dcsim" netbench "$ls" -o "$tmp/x.h5"
bad "bins beyond memory" "-o $tmp/x.h5: 9632 links x 1048576 bins: .*more than the 200 MB this process may use" \
    env DCSIM_MEMORY_LIMIT=200MB "$dcsim" netbench "$ls" --tier packet -o "$tmp/x.h5" --bins 1048576
left=$(find "$tmp" -name "*.tmp.*" | wc -l)
[ "$left" -eq 0 ] || { echo "FAIL: $left temporaries left after errors"; fail=1; }
[ -e "$tmp/x.h5" ] && { echo "FAIL: a refused run wrote $tmp/x.h5"; fail=1; }

# dcsim report draws the packet section: the figure and the busiest links
if $py -c "import matplotlib" 2>/dev/null; then
    "$dcsim" report "$tmp/inc.h5" -o "$tmp/r.html" >"$tmp/r.txt" 2>"$tmp/err" ||
        { echo "FAIL report: exit $?"; cat "$tmp/err"; fail=1; }
    for want in 'id="packet-section-0"' 'data-figure="packet_series"' 'id="packet-links-0"' \
                'data-metric="max_queued_bytes"'; do
        grep -q "$want" "$tmp/r.html" || { echo "FAIL report: no $want"; fail=1; }
    done
    grep -q "incast on the packet tier" "$tmp/r.txt" || { echo "FAIL report text"; fail=1; }
fi
[ "$fail" -eq 0 ] && echo "ok: netbench --tier packet -o"
exit "$fail"
