#!/bin/sh
# hubs_series.sh DCSIM SRC - `dcsim hubs -o`'s /hubs/series and baseline
# attributes, and CO2 hour by hour (docs/hubs.md "Over time", "Hourly
# CO2"): on the year example (monthly bins) and on one hub over 20 days
# (daily bins) each hub's bins sum to its /hubs/hubs row (1e-9 relative),
# the baseline attributes are the --json baseline's totals; a constant
# carbon profile at the flat factor gives the flat CO2 (1e-12); CO2 is
# linear in the profile (night-only + day-only = constant, per bin too); a
# cleaner night gives exactly flat - 0.5 x the night part, lower; the text
# says which basis it used.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
one=$src/tests/scenarios/hubs-one.xml
ex=$src/scenarios/examples/hubs-east-west-year.xml
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! $py -c "import h5py" 2>/dev/null; then
    echo "skip: no h5py for $py"
    exit 0
fi
"$dcsim" hubs --quiet --json "$ex" -o "$tmp/ex.h5" > "$tmp/ex.json" ||
    { echo "FAIL: hubs example -o"; fail=1; }
"$dcsim" hubs --quiet --json "$one" -o "$tmp/one.h5" > "$tmp/one.json" ||
    { echo "FAIL: hubs one -o"; fail=1; }
$py - "$tmp/ex.h5" "$tmp/ex.json" "$tmp/one.h5" "$tmp/one.json" <<'PY' || fail=1
import h5py, json, sys
bad = []
pairs = (("busy_gpu_h", "gpu_h"), ("it_energy_j", "it_energy_j"),
         ("facility_energy_j", "facility_energy_j"), ("cost", "cost"), ("co2_kg", "co2_kg"),
         ("water_l", "water_l"), ("tb_moved", "tb_moved"), ("data_cost", "data_cost"),
         ("jobs_started", "jobs"))
def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)
for h5, js, bin_s, n_bins in ((sys.argv[1], sys.argv[2], 730 * 3600.0, 13),
                              (sys.argv[3], sys.argv[4], 86400.0, None)):
    f = h5py.File(h5, "r"); d = json.load(open(js))
    g = f["hubs"]; hubs = g["hubs"][:]; s = g["series"][:]
    horizon = float(g.attrs["horizon_s"])
    if float(g.attrs["series_bin_s"]) != bin_s:
        bad.append("%s: bin %r, expected %r" % (h5, g.attrs["series_bin_s"], bin_s))
    want = n_bins or int(-(-horizon // bin_s))
    for h in range(len(hubs)):
        rows = s[s["hub"] == h]
        if len(rows) != want or list(rows["bin"]) != list(range(want)):
            bad.append("%s hub %d: %d bins, expected %d" % (h5, h, len(rows), want))
            continue
        if rows["t_end_s"][-1] != horizon or any(rows["t_start_s"][1:] != rows["t_end_s"][:-1]):
            bad.append("%s hub %d: bins do not tile [0, horizon]" % (h5, h))
        for col, hub_col in pairs:
            a, b = float(rows[col].sum()), float(hubs[hub_col][h])
            if not close(a, b, 1e-9):
                bad.append("%s hub %d %s: bins %r, /hubs/hubs %r" % (h5, h, col, a, b))
        q = rows["queue_mean"]
        if not (q >= 0).all():
            bad.append("%s hub %d: a negative queue" % (h5, h))
    b = d["baseline"]["total"]
    attrs = {"baseline_cost": b["cost"], "baseline_co2_kg": b["co2_kg"],
             "baseline_water_l": b["water_l"], "baseline_energy_cost": b["energy_cost"],
             "baseline_facility_energy_j": b["facility_energy_j"],
             "baseline_serving_rtt_mean_s": b["serving_rtt_mean_s"],
             "serving_rtt_mean_s": d["run"]["total"]["serving_rtt_mean_s"]}
    for k, v in attrs.items():
        if not close(float(g.attrs[k]), v, 1e-14):
            bad.append("%s %s: %r, JSON %r" % (h5, k, g.attrs[k], v))
    saving = float(g.attrs["baseline_cost"]) - float(hubs["cost"].sum())
    if not close(saving, d["saving"]["cost"], 1e-9):
        bad.append("%s: saving from the file %r, JSON %r" % (h5, saving, d["saving"]["cost"]))
    if g.attrs["co2_basis"] != "the flat grid factor at every hub (no hourly carbon profile)":
        bad.append("%s: co2_basis %r" % (h5, g.attrs["co2_basis"]))
print("\n".join(bad) if bad else "ok series: bins sum to /hubs/hubs, baseline attributes")
sys.exit(1 if bad else 0)
PY
# CO2 hour by hour on one hub (its factor set to 0.5 kg/kWh, synthetic profiles)
co2() {
    "$dcsim" hubs --quiet --json "$one" --set hubs/hub/@emission-factor=0.5kgCO2/kWh "$@"
}
co2 > "$tmp/flat.json" -o "$tmp/flat.h5" || { echo "FAIL: flat"; fail=1; }
for p in flat night nightonly dayonly; do
    co2 --set hubs/hub/@carbon-profile=hubs-carbon-$p.csv -o "$tmp/p-$p.h5" \
        > "$tmp/p-$p.json" || { echo "FAIL: profile $p"; fail=1; }
done
$py - "$tmp" <<'PY' || fail=1
import h5py, json, sys
t = sys.argv[1]
def co2(name):
    return json.load(open("%s/%s.json" % (t, name)))["run"]["total"]["co2_kg"]
def bins(name):
    return h5py.File("%s/%s.h5" % (t, name), "r")["hubs/series"]["co2_kg"][:]
def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)
bad = []
flat, const = co2("flat"), co2("p-flat")
night, n_only, d_only = co2("p-night"), co2("p-nightonly"), co2("p-dayonly")
if not close(flat, const, 1e-12):
    bad.append("a constant profile at the flat factor: %r, flat %r" % (const, flat))
if not close(n_only + d_only, flat, 1e-12):
    bad.append("night-only %r + day-only %r != flat %r" % (n_only, d_only, flat))
if not close(night, flat - 0.5 * n_only, 1e-12):
    bad.append("cleaner night %r, closed form flat - n/2 = %r" % (night, flat - 0.5 * n_only))
if not (0 < n_only < flat and night < flat):
    bad.append("a cleaner night does not lower CO2: %r against %r" % (night, flat))
bf, bn, bo = bins("flat"), bins("p-night"), bins("p-nightonly")
for k in range(len(bf)):
    if not close(bn[k], bf[k] - 0.5 * bo[k], 1e-12):
        bad.append("bin %d: %r, closed form %r" % (k, bn[k], bf[k] - 0.5 * bo[k]))
        break
basis = h5py.File("%s/p-night.h5" % t, "r")["hubs"].attrs["co2_basis"]
if basis != "hourly carbon profile at zhongwei":
    bad.append("co2_basis %r" % basis)
print("\n".join(bad) if bad else "ok hourly CO2: flat %.6g kg, cleaner night %.6g kg "
      "(night part %.6g kg)" % (flat, night, n_only))
sys.exit(1 if bad else 0)
PY
expect "flat CO2 said" 0 "CO2 = facility kWh x each hub's flat grid factor" \
    "$dcsim" hubs --quiet "$one"
expect "hourly CO2 said" 0 "CO2 hour by hour .* at zhongwei; the flat grid factor at the other 0" \
    "$dcsim" hubs --quiet "$one" --set hubs/hub/@carbon-profile=hubs-carbon-night.csv
exit $fail
