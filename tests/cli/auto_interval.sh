#!/bin/sh
# auto_interval.sh DCSIM SRC - <checkpoint interval="auto"> is Daly's optimum
# (2006, eq. 37) of the total failure rate of every cause (GPU, node, rack,
# Weibull by its mean, silent; an inventory's), the rate the summary's
# cluster MTBF is the inverse of; computed here by hand.
set -u
dcsim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cat >"$tmp/causes.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<dcsim version="1" seed="3" name="auto-causes">
  <cluster><gpu type="H100-SXM" count="1024"/></cluster>
  <job>
    <model name="m" parameters="70B"/>
    <training tokens="1T" tokens-per-iteration="4M" precision="bf16" mfu="40%"/>
  </job>
  <reliability nodes-per-rack="4">
    <failure component="gpu" distribution="exponential" rate="1e-12/h"/>
    <failure component="node" cause="Host" distribution="exponential" rate="1e-4/h"/>
    <failure component="rack" cause="PDU" distribution="exponential" rate="2e-4/h"/>
    <failure component="node" cause="Wear" distribution="weibull" shape="2" mtbf="50000h"/>
    <failure component="gpu" cause="SDC" distribution="exponential" rate="1e-6/h" detection="1h"/>
    <restart time="10min"/>
  </reliability>
  <checkpoint interval="auto" write-time="30s"/>
</dcsim>
XML
cat >"$tmp/inventory.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<dcsim version="1" seed="3" name="auto-inventory">
  <cluster><gpu type="H100-SXM" count="16384"/></cluster>
  <job>
    <model name="m" parameters="70B"/>
    <training tokens="2T" tokens-per-iteration="16M" precision="bf16" mfu="40%"/>
  </job>
  <reliability inventory="llama3-54d"><restart time="10min"/></reliability>
  <checkpoint interval="auto" write-time="30s"/>
</dcsim>
XML
for name in causes inventory; do
    if ! "$dcsim" run --quiet --json "$tmp/$name.xml" >"$tmp/$name.json" 2>"$tmp/$name.err"; then
        echo "FAIL $name: dcsim run failed:"; cat "$tmp/$name.err"; fail=1
    fi
done
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import json, math, sys
d = sys.argv[1]
def daly(w, m):
    if w >= 2 * m:
        return m
    x = w / (2 * m)
    return math.sqrt(2 * w * m) * (1 + math.sqrt(x) / 3 + x / 9) - w
h = 3600.0
# 1024 GPUs, 128 nodes of 8, 32 racks of 4 nodes
rates = {
    "causes": 1024 * 1e-12 / h + 128 * 1e-4 / h + 32 * 2e-4 / h + 128 / (50000 * h)
              + 1024 * 1e-6 / h,
    # every cause of the 54-day, 16,384-GPU, 2,048-node inventory on the same cluster
    "inventory": 419 / (54 * 86400.0),
}
bad = 0
for name, rate in rates.items():
    s = json.load(open(f"{d}/{name}.json"))["summary"]
    t_it = s["iteration_time_s"]
    want = daly(30, 1 / rate)
    every = max(1, round(want / t_it))
    checks = [("cluster_mtbf_s", s["cluster_mtbf_s"], 1 / rate),
              ("daly_interval_s", s["daly_interval_s"], want),
              ("young_interval_s", s["young_interval_s"], math.sqrt(2 * 30 / rate)),
              ("checkpoint_every_iterations", s["checkpoint_every_iterations"], every),
              ("checkpoint_interval_s", s["checkpoint_interval_s"], every * t_it)]
    for key, got, exp in checks:
        if abs(got - exp) > 1e-9 * exp:
            print(f"FAIL {name}: {key} = {got!r}, by hand {exp!r}")
            bad = 1
sys.exit(bad)
PY
exit $fail
