#!/bin/sh
# readme_figures.sh [DCSIM] [OUTDIR] - draw the figures the README shows
# (docs/figures/ by default) from fresh runs: the built-in default scenario
# (time breakdown, campaign timeline, goodput over the checkpoint interval
# at three failure rates from a dcsim sweep, energy, cost and CO2 at six
# hubs), and the same job on the SuperPOD fabric at Gui'an,
# scenarios/examples/superpod-guian.xml (its iteration stage by stage,
# fabric load by tier, power and PUE over the run). DCSIM is the dcsim
# binary (default ./build/dcsim); run from the repository root. Takes
# about 10 s; the PNGs are 150 dpi.
set -eu
dcsim=${1:-./build/dcsim}
out=${2:-docs/figures}
python=${DCSIM_PYTHON:-/usr/bin/python3}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$dcsim" run --quiet -o "$tmp/default.h5" >/dev/null
"$dcsim" run "$here/../scenarios/examples/superpod-guian.xml" --quiet -o "$tmp/superpod.h5" >/dev/null
"$dcsim" sweep --quiet --grid 'checkpoint/@interval=5min,10min,15min,20min,30min,45min,60min' \
    --grid 'reliability/@scale=0.5,1,2' --replicas 16 -o "$tmp/sweep.h5" >/dev/null
"$dcsim" compare --vary site=zhangjiakou,yrd,wuhu,tianfu,guian,zhongwei \
    --start-month 7 -o "$tmp/sites.h5" >/dev/null
mkdir -p "$out"
"$python" "$here/dcsim_figures.py" "$tmp/default.h5" "$tmp/superpod.h5" -o "$out" \
    --format png --dpi 150 --goodput "$tmp/sweep.h5" --compare "$tmp/sites.h5"
