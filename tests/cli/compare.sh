#!/bin/sh
# compare.sh DCSIM SRC - `dcsim compare` end to end: the default job (its
# MFU given: tests/scenarios/no-fabric.xml, since the hub table does not
# depend on how the iteration is timed and the default's step tier, a
# 16,384-GPU iteration per variant, made this script one of the slowest of
# the suite under ASan) at all ten East-Data-West-Computing hubs. The
# ranking by energy cost is the one the site data implies: the IT energy is
# the same everywhere, so the cost goes as price x PUE, with the prices read
# here straight from scenarios/catalog/sites.xml (first quote; the
# clusters' mean where a site has none, docs/energy.md). The table is the same for 1 and 2 threads; -o
# writes /compare; a variant without a site, or an unknown site, is refused.
# The network cases are about the step tier and run the default on 2,048 of
# its GPUs ($small below).
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nf="$src/tests/scenarios/no-fabric.xml"
hubs=zhangjiakou,yrd,wuhu,shaoguan,tianfu,chongqing,horinger,guian,qingyang,zhongwei
OMP_NUM_THREADS=1 "$dcsim" compare "$nf" --vary site=$hubs --start-month 7 --json > "$tmp/a.json"
OMP_NUM_THREADS=2 "$dcsim" compare "$nf" --vary site=$hubs --start-month 7 --json -o "$tmp/c.h5" > "$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || { echo "FAIL compare differs between 1 and 2 threads"; fail=$((fail + 1)); }
if ! /usr/bin/python3 - "$tmp/a.json" "$src/scenarios/catalog/sites.xml" "$tmp/c.h5" <<'PY'
import json, sys, xml.etree.ElementTree as ET
import h5py
rows = json.load(open(sys.argv[1]))['variants']
assert len(rows) == 10, len(rows)
root = ET.parse(sys.argv[2]).getroot()
def number(text):
    i = 0
    while i < len(text) and (text[i].isdigit() or text[i] in '.-+eE'):
        i += 1
    return float(text[:i])
quotes = {}
for site in root.findall('site'):
    price = site.find('price')
    for q in (price.findall('quote') if price is not None else []):
        if q.get('value'):
            quotes[site.get('name')] = (number(q.get('value')), site.get('kind')); break
        if q.get('min') and q.get('max'):
            quotes[site.get('name')] = ((number(q.get('min')) + number(q.get('max'))) / 2, site.get('kind')); break
clusters = [p for p, kind in quotes.values() if kind == 'cluster']
default = sum(clusters) / len(clusters)
it = rows[0]['it_energy_j']
for r in rows:
    price = quotes.get(r['site'], (default, None))[0]
    assert abs(r['price_cny_per_kwh'] - price) < 1e-12, (r['site'], r['price_cny_per_kwh'], price)
    assert r['it_energy_j'] == it                      # the same job everywhere
    assert abs(r['facility_energy_j'] / (it * r['pue_frac']) - 1) < 1e-12
    assert abs(r['co2_kg'] / (r['facility_energy_j'] / 3.6e6 * r['emission_kg_per_kwh']) - 1) < 1e-12
    assert 1 < r['pue_annual_frac'] < 1.25
implied = sorted(rows, key=lambda r: quotes.get(r['site'], (default, None))[0] * r['pue_frac'])
ranked = sorted(rows, key=lambda r: r['energy_cost_cny'])
assert [r['site'] for r in implied] == [r['site'] for r in ranked], ([r['site'] for r in implied], [r['site'] for r in ranked])
print('cheapest', ranked[0]['site'], 'dearest', ranked[-1]['site'])
t = h5py.File(sys.argv[3], 'r')['compare']
assert t.shape == (10,) and len(t.dtype.names) == 15, (t.shape, t.dtype.names)
assert t.dtype.names[0] == 'variant' and t.dtype.names[8] == 'energy_cost_cny', t.dtype.names
assert t[9]['energy_cost_cny'] == rows[9]['energy_cost_cny']
assert t[9]['variant'].decode() == 'site=' + rows[9]['site'], t[9]['variant']
PY
then
    echo "FAIL compare: table inconsistent with the site data"
    fail=$((fail + 1))
fi
expect "compare table" 0 "^site=zhongwei " "$dcsim" compare "$nf" --vary site=zhongwei,wuhu
expect "compare without a site" 2 "no site" "$dcsim" compare "$src/tests/scenarios/long.xml"
expect "compare unknown site" 2 "unknown site 'atlantis'; known: zhangjiakou" "$dcsim" compare --vary site=atlantis
# /energy/hourly integrates to the summary's IT and facility energy
"$dcsim" run --quiet "$src/tests/scenarios/site.xml" -o "$tmp/e.h5" > /dev/null
if ! /usr/bin/python3 - "$tmp/e.h5" <<'PY'
import sys
import h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
x, s = f['energy/hourly'][:], f['summary']
length = np.minimum(3600.0, s['time_to_train_s'][()] - x['hour_start_s'])
assert abs((x['it_power_w'] * length).sum() / s['it_energy_j'][()] - 1) < 1e-9
assert abs((x['facility_power_w'] * length).sum() / s['facility_energy_j'][()] - 1) < 1e-9
assert (x['pue'] >= 1).all()
PY
then
    echo "FAIL /energy/hourly does not add up to the summary"
    fail=$((fail + 1))
fi
# seeded weather noise: the same twice, not the same as none
n1=$("$dcsim" run --quiet --json "$src/tests/scenarios/site.xml" --set site/@weather-noise=2K | grep '"facility_energy_j"')
n2=$("$dcsim" run --quiet --json "$src/tests/scenarios/site.xml" --set site/@weather-noise=2K | grep '"facility_energy_j"')
n0=$("$dcsim" run --quiet --json "$src/tests/scenarios/site.xml" | grep '"facility_energy_j"')
{ [ "$n1" = "$n2" ] && [ "$n1" != "$n0" ]; } || { echo "FAIL weather noise: $n1 / $n2 / $n0"; fail=$((fail + 1)); }
# a network from a file: its <fabric> attributes replace the scenario's
echo '<fabric link="roce-400g" routing="ecmp"/>' > "$tmp/roce.xml"
expect "compare network file" 0 "network=$tmp/roce.xml" "$dcsim" compare "$src/tests/scenarios/site.xml" --vary network=ib-ndr,"$tmp/roce.xml"
expect "compare capex" 0 "capital cost" "$dcsim" compare "$src/tests/scenarios/site.xml" --vary site=zhongwei,wuhu
# the default's network decides its time (issue 17): RoCE with its ECMP
# routing is slower than InfiniBand with adaptive routing on the same
# Clos, and the gap is the routing: RoCE routed adaptively times as IB.
# On 2,048 of the default's GPUs (128 leaves of its Clos): ZeRO 3, since the
# 405B job does not fit in 80 GB with ZeRO 2 at DP 16, and a global batch of
# 256, 16 micro-batches per replica as at 16,384 GPUs; RoCE is 13 % slower
# there (6.17 s vs 5.48 s per iteration), 20 % at 16,384 GPUs (6.72 s vs 5.60 s).
small="--set cluster/gpu/@count=2048 --set job/parallelism/@zero=3 --set job/parallelism/@global-batch=256"
# shellcheck disable=SC2086 # $small is six words
if ! "$dcsim" compare --vary network=ib-ndr,roce-400g $small --json > "$tmp/net.json" ||
   ! /usr/bin/python3 - "$tmp/net.json" <<'PY'
import json, sys
ib, roce = json.load(open(sys.argv[1]))['variants']
assert roce['time_to_train_s'] > 1.05 * ib['time_to_train_s'], (ib['time_to_train_s'], roce['time_to_train_s'])
assert roce['mfu_frac'] < ib['mfu_frac']
# why they differ (sim/app/compare_why.h): RoCE rerun with one mechanism of
# IB's at a time. Routing alone closes the whole gap (the check below with
# --set routing=adaptive says the same); latency does not move it (NCCL's
# 14 us step latency is above both wire latencies), SHARP does not (the step
# tier's collectives do not reduce in the network), efficiency and rate are
# the same (RoCE's efficiency is IB's by the default rule). With every
# mechanism set to IB's, RoCE must time exactly as IB: nothing that tells
# the technologies apart in the flow tier is left out of the list.
(w,) = json.load(open(sys.argv[1]))['why_networks']
assert w['variant'] == 'network=roce-400g' and w['baseline'] == 'network=ib-ndr', w
m = {r['mechanism']: r for r in w['mechanisms']}
assert set(m) == {'routing', 'latency', 'efficiency', 'in-network reduction', 'rate'}, m
assert w['variant_iteration_s'] > w['baseline_iteration_s']
assert not m['routing']['same'] and m['routing']['iteration_s'] == w['baseline_iteration_s'], m['routing']
assert m['routing']['variant_value'].startswith('ecmp') and m['routing']['baseline_value'].startswith('adaptive')
assert not m['latency']['same'] and m['latency']['iteration_s'] == w['variant_iteration_s'], m['latency']
assert m['efficiency']['same'] and m['rate']['same']
assert w['all_iteration_s'] == w['baseline_iteration_s'], w
assert w['all_time_to_train_s'] == ib['time_to_train_s'], (w, ib)
PY
then
    echo "FAIL compare --vary network on the default: no difference"
    fail=$((fail + 1))
fi
# shellcheck disable=SC2086
expect "compare says why the networks differ" 0 "^  routing  *ecmp, minimal paths, 1 QP  *adaptive, minimal paths, 1 QP .*(100 % of the gap)" \
    "$dcsim" compare --vary network=ib-ndr,roce-400g $small
# shellcheck disable=SC2086
a=$("$dcsim" step --json $small --set cluster/fabric/@link=ib-ndr | grep '"iteration_s"')
# shellcheck disable=SC2086
b=$("$dcsim" step --json $small --set cluster/fabric/@routing=adaptive | grep '"iteration_s"')
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL RoCE adaptive vs IB: $a / $b"; fail=$((fail + 1)); }
# defaults every variant shares are listed once, a variant's own under its name:
# Zhangjiakou has no price quote (the mean of the others fills it), Wuhu's is an
# unverified estimate (U), Zhongwei has a sourced one
# shellcheck disable=SC2086
"$dcsim" compare --vary site=zhangjiakou,zhongwei,wuhu $small >"$tmp/defaults.txt" 2>&1 || fail=$((fail + 1))
[ "$(grep -c 'roce-400g efficiency = 94%' "$tmp/defaults.txt")" -eq 1 ] &&
    grep -q '^  every variant: defaults used: ' "$tmp/defaults.txt" &&
    grep -q '^  site=zhangjiakou: defaults used: site zhangjiakou price' "$tmp/defaults.txt" &&
    grep -q '^  site=wuhu: defaults used: site wuhu price = 0.65 CNY/kWh (.*confidence U' "$tmp/defaults.txt" &&
    ! grep -q '^  site=zhongwei: defaults used' "$tmp/defaults.txt" ||
    { echo "FAIL compare defaults used:"; cat "$tmp/defaults.txt"; fail=$((fail + 1)); }
# a switch's power is its technology's (links.xml switch-power, else a rule
# printed under "defaults used"): ib-ndr has none in the catalog (Quantum-2
# system power is a GAP) and gets 750 W by the rule; a scenario's own link
# with 1 kW raises the network power by 250 W per switch, optics unchanged
sed -e 's|<dcsim version="1" seed="7" name="energy-test">|&<catalog><link name="lab-ib" kind="infiniband" rate="400Gb/s" efficiency="94%" switch-latency="100ns" routing="adaptive" in-network-reduction="true" switch-power="1kW" confidence="A" source="a datasheet"/></catalog>|' \
    -e 's|link="ib-ndr"|link="lab-ib"|' "$src/tests/scenarios/site.xml" > "$tmp/lab.xml"
"$dcsim" run --quiet --json "$src/tests/scenarios/site.xml" > "$tmp/ib.json" 2>/dev/null
"$dcsim" run --quiet --json "$tmp/lab.xml" > "$tmp/lab.json" 2>/dev/null
if ! /usr/bin/python3 - "$tmp/ib.json" "$tmp/lab.json" <<'PY'
import json, sys
ib, lab = (json.load(open(p)) for p in sys.argv[1:3])
def power(r): return r['summary']['network_power_w'] if 'summary' in r else r['network_power_w']
def defaults(r): return [d['what'] for d in r.get('defaults_used', [])]
p_ib, p_lab = power(ib), power(lab)
switches = (p_lab - p_ib) / 250
assert switches > 0 and switches == int(switches), (p_ib, p_lab)
optics = (p_ib - 750 * switches) / 17      # the 17 W twin-port modules (docs/power.md)
assert optics >= 0 and optics == int(optics), (p_ib, switches, optics)
assert 'switch-power' in defaults(ib) and 'switch-power' not in defaults(lab), (defaults(ib), defaults(lab))
print('switches', int(switches), 'modules', int(optics))
PY
then
    echo "FAIL switch-power: the network power does not follow the technology's switch power"
    fail=$((fail + 1))
fi
# told the answer: an MFU with a fabric warns that the fabric changes nothing
expect "mfu with a fabric warns" 0 "warning: <training mfu=\"42%\"> fixes the iteration time" \
    "$dcsim" run --quiet --set job/training/@mfu=42%
# --replicas N: replica 0 is the plain run (its columns unchanged), the
# replicas' statistics equal `dcsim run --replicas N` of each variant (the
# same seeds), the same for 1 and 2 threads, 21 columns in -o; --replicas 1
# is the plain compare byte for byte; bad counts and job streams refused
OMP_NUM_THREADS=1 "$dcsim" compare "$nf" --vary site=zhongwei,wuhu --json > "$tmp/plain.json"
OMP_NUM_THREADS=1 "$dcsim" compare "$nf" --vary site=zhongwei,wuhu --json --replicas 1 > "$tmp/one.json"
cmp -s "$tmp/plain.json" "$tmp/one.json" || { echo "FAIL compare --replicas 1 differs from the plain compare"; fail=$((fail + 1)); }
OMP_NUM_THREADS=1 "$dcsim" compare "$nf" --vary site=zhongwei,wuhu --json --replicas 6 > "$tmp/r1.json"
OMP_NUM_THREADS=2 "$dcsim" compare "$nf" --vary site=zhongwei,wuhu --json --replicas 6 -o "$tmp/r.h5" > "$tmp/r2.json"
cmp -s "$tmp/r1.json" "$tmp/r2.json" || { echo "FAIL compare --replicas differs between 1 and 2 threads"; fail=$((fail + 1)); }
# the campaign does not depend on the site: both variants' replicas are the plain run's
"$dcsim" run "$nf" --quiet --replicas 6 --json > "$tmp/run-zhongwei.json" || fail=$((fail + 1))
cp "$tmp/run-zhongwei.json" "$tmp/run-wuhu.json"
if ! /usr/bin/python3 - "$tmp/plain.json" "$tmp/r1.json" "$tmp/run-zhongwei.json" "$tmp/run-wuhu.json" "$tmp/r.h5" "$src" <<'PY'
import json, sys
import h5py
plain = json.load(open(sys.argv[1]))['variants']
reps = json.load(open(sys.argv[2]))
runs = [json.load(open(p))['replicas'] for p in sys.argv[3:5]]
for p, r, run in zip(plain, reps['variants'], runs):
    for k, v in p.items():                      # the plain run's columns, unchanged
        assert r[k] == v, (k, r[k], v)
    assert r['replicas'] == 6 == run['count']
    for k in ('time_to_train_s', 'ettr_frac', 'failures'):
        assert r[k + '_mean'] == run[k]['mean'], (k, r[k + '_mean'], run[k]['mean'])
        assert r[k + '_ci95'] == run[k]['ci95'], k
        assert run[k]['ci95'] > 0, k
assert reps['units']['time_to_train_s_ci95'] == 's'
t = h5py.File(sys.argv[5], 'r')['compare']
assert t.shape == (2,) and len(t.dtype.names) == 22, (t.shape, t.dtype.names)
cols = list(t.dtype.names)[1:]
assert cols[14:] == ['replicas', 'time_to_train_s_mean', 'time_to_train_s_ci95', 'ettr_frac_mean',
                     'ettr_frac_ci95', 'failures_mean', 'failures_ci95'], cols
assert t[0]['time_to_train_s_mean'] == reps['variants'][0]['time_to_train_s_mean']
# the report's ranking reads the replicas' mean and interval (analysis/dcsim_brief.py)
sys.path.insert(0, sys.argv[6] + '/analysis')
from dcsim_brief import from_compare
from dcsim_trace import read_compare
for v, r in zip(from_compare(read_compare(sys.argv[5])), reps['variants']):
    assert v.get('time_to_train_s') == r['time_to_train_s_mean']
    assert v.ci('time_to_train_s') == r['time_to_train_s_ci95'] > 0
    assert v.ci('ettr_frac') == r['ettr_frac_ci95'] and v.ci('mfu_frac') is None
PY
then
    echo "FAIL compare --replicas: statistics differ from dcsim run --replicas"; fail=$((fail + 1))
fi
expect "compare --replicas text" 0 "^site=zhongwei  *[0-9.]* ± " \
    "$dcsim" compare "$nf" --vary site=zhongwei --replicas 3
expect "compare --replicas 0" 2 "--replicas 0: expected a whole number from 1 to 10000" \
    "$dcsim" compare "$nf" --replicas 0
expect "compare --replicas x" 2 "--replicas 2x: expected a whole number" \
    "$dcsim" compare "$nf" --replicas 2x
expect "compare --replicas stream" 2 "a job stream (<cluster-jobs>) is run once per variant" \
    "$dcsim" compare "$src/scenarios/examples/cluster-two-sites-month.xml" --replicas 4

[ "$fail" -eq 0 ] && echo "ok: compare"
exit "$fail"
